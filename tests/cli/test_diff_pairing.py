"""``linkaudit diff``: how files of two builds pair when their keys are ambiguous (two wheels of one
project and target in one wheelhouse), and members given as ``PACKAGE!member``."""

from __future__ import annotations

import json
import zipfile
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from tests.loader.dagbuild import Lib, elf_bytes

TAG = "cp311-cp311-manylinux_2_17_x86_64"
GOOD = Lib("libp.so", soname="libp.so.1", needed=("libmissing.so.7",), exports=("f_0", "f_1", "f_2"))
BAD = Lib("libp.so", soname="libp.so.2", needed=("libmissing.so.7",), exports=("f_0",))


def _wheel(path: Path, lib: Lib) -> Path:
    """A wheel at ``path`` (``pkg-VERSION-TAG.whl``) holding ``lib`` as ``pkg/libp.so``."""
    version = path.name.split("-")[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/libp.so", elf_bytes(lib))
        zf.writestr(f"pkg-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: pkg\nVersion: {version}\n")
        zf.writestr(f"pkg-{version}.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {TAG}\n")
        zf.writestr(f"pkg-{version}.dist-info/RECORD", "")
    return path


def _house(root: Path, **versions: Lib) -> Path:
    """A wheelhouse ``root`` of one wheel per version (``v1_0=GOOD``: ``pkg-1.0-TAG.whl``)."""
    for version, lib in versions.items():
        _wheel(root / f"pkg-{version[1:].replace('_', '.')}-{TAG}.whl", lib)
    return root


def _valid(stdout: str) -> dict[str, Any]:
    doc = json.loads(stdout)
    schema = resources.files("linkaudit.output").joinpath("schema/diff.schema.json").read_text("utf-8")
    jsonschema.validate(doc, json.loads(schema))
    return doc  # type: ignore[no-any-return]


def _accounted(doc: dict[str, Any]) -> set[str]:
    """Every file the JSON document names on either side, by key: added, removed, or in an
    ambiguity entry's pairs (unchanged pairs appear nowhere else)."""
    keys = set(doc["files_added"]) | set(doc["files_removed"]) | {d["file"] for d in doc["changed"]}
    for entry in doc["ambiguous"]:
        keys |= {f["key"] for f in entry["old"]} | {f["key"] for f in entry["new"]}
    return keys


def test_two_wheels_of_one_target_pair_by_version_none_dropped(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """new/ holds pkg-0.9 (a new SONAME, exports removed) and pkg-1.0 (unchanged) for the target of
    old/'s pkg-1.0: one of the two was dropped without a word and the unchanged pair went
    uncompared (keyed two ways), "1 added, 1 removed, 0 ABI breaks". Now 1.0 pairs with 1.0 (its
    finding neither new nor gone), 0.9 stays apart, and the report names the ambiguity."""
    old = _house(tmp_path / "old", v1_0=GOOD)
    new = _house(tmp_path / "new", v0_9=BAD, v1_0=GOOD)
    r = run_cli("diff", "--no-config", "--format", "json", str(old), str(new))
    doc = _valid(r.stdout)
    assert doc["changed"] == [] and doc["files_removed"] == []
    assert doc["files_added"] == [f"pkg-0.9-{TAG}.whl!pkg/libp.so"]
    [entry] = doc["ambiguous"]
    assert entry["key"] == "cp311-cp311-manylinux_x86_64:pkg/libp.so"
    assert [f["key"] for f in entry["old"]] == [f"pkg-1.0-{TAG}.whl!pkg/libp.so"]
    assert sorted(f["file"] for f in entry["new"]) == [
        f"pkg-0.9-{TAG}.whl!pkg/libp.so",
        f"pkg-1.0-{TAG}.whl!pkg/libp.so",
    ]
    assert {f["paired"] for f in entry["new"]} == {True, False}
    # the findings of pkg-1.0's library (libmissing.so.7 not found...) are in both: only 0.9's are new
    assert "library-not-found" in {f["rule"] for f in doc["findings_new"]}
    assert {f["key"] for f in doc["findings_new"]} == {f"pkg-0.9-{TAG}.whl!pkg/libp.so"}
    assert doc["findings_gone"] == []
    text = run_cli("diff", "--no-config", str(old), str(new)).stdout
    assert "? ambiguous cp311-cp311-manylinux_x86_64:pkg/libp.so" in text
    assert f"= pkg-1.0-{TAG}.whl!pkg/libp.so" in text and f"+ pkg-0.9-{TAG}.whl!pkg/libp.so" in text
    assert "1 key ambiguous" in text.splitlines()[-1]


def test_the_pair_that_matches_by_version_shows_its_abi_break(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Both builds hold pkg-0.9 and pkg-1.0 for one target; 1.0's library changed its SONAME and
    lost exports: the break is reported under 1.0's key, exit 1."""
    old = _house(tmp_path / "old", v0_9=GOOD, v1_0=GOOD)
    new = _house(tmp_path / "new", v0_9=GOOD, v1_0=BAD)
    r = run_cli("diff", "--no-config", "--format", "json", str(old), str(new))
    assert r.exit_code == 1, r.stdout
    doc = _valid(r.stdout)
    [changed] = doc["changed"]
    assert changed["file"] == f"pkg-1.0-{TAG}.whl!pkg/libp.so"
    assert changed["soname"] == {"old": "libp.so.1", "new": "libp.so.2"}
    assert changed["exports_removed"] == ["f_1", "f_2"]
    assert doc["files_added"] == [] and doc["files_removed"] == []


def test_no_version_in_common_keeps_every_file_apart(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """old/ holds pkg-1.0; new/ pkg-1.1 and pkg-1.2 for the same target: no pair can be chosen, so
    each file is kept under its wheel's name — one removed, two added, none dropped."""
    old = _house(tmp_path / "old", v1_0=GOOD)
    new = _house(tmp_path / "new", v1_1=GOOD, v1_2=BAD)
    r = run_cli("diff", "--no-config", "--format", "json", str(old), str(new))
    doc = _valid(r.stdout)
    assert doc["files_removed"] == [f"pkg-1.0-{TAG}.whl!pkg/libp.so"]
    assert doc["files_added"] == [f"pkg-1.1-{TAG}.whl!pkg/libp.so", f"pkg-1.2-{TAG}.whl!pkg/libp.so"]
    assert len(_accounted(doc)) == 3
    [entry] = doc["ambiguous"]
    assert not any(f["paired"] for f in entry["old"] + entry["new"])


def test_members_given_as_package_bang_member_are_diffed(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``diff A.whl!pkg/libp.so B.whl!pkg/libp.so`` said "no such file or directory" for members
    that exist and printed an empty diff: now those two members are compared (of wheels of other
    platforms, as two files given are, by base name), their packages' other members left out; a
    member the package lacks is named on standard error, exit 2."""
    a = _wheel(tmp_path / f"pkg-1.0-{TAG}.whl", GOOD)
    b = tmp_path / "pkg-1.1-cp311-cp311-musllinux_1_2_x86_64.whl"
    with zipfile.ZipFile(b, "w") as zf:
        zf.writestr("pkg/libp.so", elf_bytes(BAD))
        zf.writestr("pkg/other.so", elf_bytes(Lib("other.so", soname="other.so", needed=("libgone.so.3",))))
    r = run_cli("diff", "--no-config", "--format", "json", f"{a}!pkg/libp.so", f"{b}!pkg/libp.so")
    assert r.exit_code == 1, r.stderr
    doc = _valid(r.stdout)
    [changed] = doc["changed"]
    assert changed["file"] == "libp.so" and changed["soname"] == {"old": "libp.so.1", "new": "libp.so.2"}
    assert doc["files_added"] == [] and doc["files_removed"] == []
    assert all(f["file"] == "pkg/libp.so" for f in doc["findings_new"] + doc["findings_gone"])
    r = run_cli("diff", "--no-config", f"{a}!pkg/libp.so", f"{b}!pkg/none.so")
    assert r.exit_code == 2
    assert f"{b}!pkg/none.so: no such binary member" in r.stderr
    assert "no such file or directory" not in r.stderr
