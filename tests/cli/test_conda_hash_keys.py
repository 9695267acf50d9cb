"""A conda-forge build string carries conda-build's hash of the variant's pinned dependencies
(``py312h1a2b3c4_0``: ``h`` and 7 hex digits), which changes from one release to the next: a
conda package's member is keyed by its variant without it (``linux-64/py312:lib/libfoo.so``), so
``diff`` pairs two releases and a baseline of one release matches the next, as a vendored
library's repair hash is left out; a baseline written with the hash still accepts."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from linkaudit.config.baseline import conda_variant, load
from tests.loader.dagbuild import Lib, elf_bytes

from .test_baseline_targets import LEAK, _live


@pytest.mark.parametrize(
    ("package", "variant"),
    [
        ("linux-64/foo-1.0-py312h1a2b3c4_0.conda", "linux-64/py312"),
        ("foo-1.0-py312h1a2b3c4_0.tar.bz2", "py312"),
        ("noarch/foo-1.0-pyhd8ed1ab_0.conda", "noarch/py"),
        ("foo-2.5-cuda126_mkl_py312_h30b5a27_300.conda", "cuda126_mkl_py312"),
        ("foo-1.0-np2py312h0123abc_1.conda", "np2py312"),
        ("linux-64/foo-1.0-h4bc722e_1.conda", None),  # the hash alone: no variant, as a bare build number
        ("foo-1.0-py312_0.conda", "py312"),  # no hash: as before
        ("foo-1.0-py312hello_0.conda", "py312hello"),  # not 7 hex digits
        ("foo-1.0-py312h1a2b3c4d_0.conda", "py312h1a2b3c4d"),  # 8: not conda-build's
    ],
)
def test_variant_leaves_the_hash_out(package: str, variant: str | None) -> None:
    assert conda_variant(package) == variant


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("linux-64/py312h1a2b3c4:lib/libfoo.so", "linux-64/py312:lib/libfoo.so"),
        ("py312h1a2b3c4:lib/libfoo.so", "py312:lib/libfoo.so"),
        ("cpu:linux-64/py312h1a2b3c4:lib/libfoo.so", "cpu:linux-64/py312:lib/libfoo.so"),
        ("linux-64/h4bc722e:lib/libfoo.so", "lib/libfoo.so"),
        ("lib/libfoo.so", "lib/libfoo.so"),
        ("cp311-cp311-manylinux_x86_64:pkg/libp.so", "cp311-cp311-manylinux_x86_64:pkg/libp.so"),
    ],
)
def test_a_baseline_written_with_the_hash_is_read_without_it(tmp_path: Path, written: str, read: str) -> None:
    doc = {"schema": "linkaudit-baseline/1", "findings": [{"rule": "rpath-leak", "file": written, "subject": "x"}]}
    (tmp_path / "b.json").write_text(json.dumps(doc))
    assert {file for _, file, _ in load(str(tmp_path / "b.json"))} == {read}


def _conda(directory: Path, version: str, build: str, library: bytes) -> Path:
    """``directory/foo-VERSION-BUILD.tar.bz2`` holding ``lib/libfoo.so.1``."""
    directory.mkdir(parents=True, exist_ok=True)
    index = {"name": "foo", "version": version, "build": build, "build_number": 0, "subdir": "linux-64"}
    path = directory / f"foo-{version}-{build}.tar.bz2"
    with tarfile.open(path, "w:bz2") as tar:
        for name, data in (("info/index.json", json.dumps(index).encode()), ("lib/libfoo.so.1", library)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_diff_pairs_two_releases_of_one_hashed_variant(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """py312h1a2b3c4 -> py312h5d6e7f8: every library was added and removed, the export removed
    (an ABI break) missed, exit 0."""
    _conda(tmp_path / "old/linux-64", "1.0", "py312h1a2b3c4_0", elf_bytes(Lib("libfoo.so.1", exports=("foo", "bar"))))
    _conda(tmp_path / "new/linux-64", "1.1", "py312h5d6e7f8_0", elf_bytes(Lib("libfoo.so.1", exports=("foo",))))
    r = run_cli("diff", "--no-config", "--no-cache", "--no-loader", "--format", "json", str(tmp_path / "old"), str(tmp_path / "new"))  # fmt: skip
    doc = json.loads(r.stdout)
    assert r.exit_code == 1, doc
    assert doc["files_added"] == [] and doc["files_removed"] == []
    assert [(c["file"], c["exports_removed"]) for c in doc["changed"]] == [
        ("linux-64/foo-py312:lib/libfoo.so.1", ["bar"])
    ]


def test_a_baseline_of_one_release_matches_the_next(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """The leak accepted for py312h1a2b3c4 was new again in py312h5d6e7f8 (exit 1); a baseline
    written before, holding the hashed variant, accepts it too."""
    monkeypatch.chdir(tmp_path)
    _conda(tmp_path / "v1/linux-64", "1.0", "py312h1a2b3c4_0", LEAK.read_bytes())
    _conda(tmp_path / "v2/linux-64", "1.1", "py312h5d6e7f8_0", LEAK.read_bytes())
    assert run_cli("check", "--no-config", "--no-cache", "--write-baseline", "bl.json", "v1").exit_code == 0
    doc = json.loads((tmp_path / "bl.json").read_text())
    assert {e["file"] for e in doc["findings"] if e["rule"] == "rpath-leak"} == {"linux-64/foo-py312:lib/libfoo.so.1"}
    r = run_cli("check", "--no-config", "--no-cache", "--format", "json", "--baseline", "bl.json", "v2")
    assert r.exit_code == 0 and not _live(r.stdout), r.stdout
    for entry in doc["findings"]:
        entry["file"] = entry["file"].replace("foo-py312:", "py312h1a2b3c4:")  # as written before the hash was left out
    (tmp_path / "old.json").write_text(json.dumps(doc))
    r = run_cli("check", "--no-config", "--no-cache", "--format", "json", "--baseline", "old.json", "v2")
    assert r.exit_code == 0 and not _live(r.stdout), r.stdout
