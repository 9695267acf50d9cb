"""Baseline keys of distinct files never coincide: two conda packages of one variant in a channel
(the key names the package), two site-packages of one prefix (the site's directories kept when
several), an input whose name holds the separator (``:`` escaped in a label): a finding accepted
in one does not hide the same finding new in the other. Older keys still accept where they name
one file (``check`` says once to write the baseline again)."""

from __future__ import annotations

import io
import itertools
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from linkaudit.config.baseline import keyed_file

from .test_baseline_targets import CLEAN, LEAK, _live


def _conda(path: Path, name: str, library: Path) -> None:
    """``path/NAME-1.0-py312_0.tar.bz2`` holding ``lib/libz9.so``, that library."""
    path.mkdir(parents=True, exist_ok=True)
    index = {"name": name, "version": "1.0", "build": "py312_0", "build_number": 0, "subdir": "linux-64"}
    with tarfile.open(path / f"{name}-1.0-py312_0.tar.bz2", "w:bz2") as tar:
        for member, data in (("info/index.json", json.dumps(index).encode()), ("lib/libz9.so", library.read_bytes())):
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _rpath_files(path: Path) -> set[str]:
    return {e["file"] for e in json.loads(path.read_text())["findings"] if e["rule"] == "rpath-leak"}


def test_two_conda_packages_of_one_variant_key_apart(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """A channel audited package by package (``--each``)."""
    each = ["--each"]
    monkeypatch.chdir(tmp_path)
    _conda(tmp_path / "linux-64", "foo", LEAK)
    _conda(tmp_path / "linux-64", "bar", CLEAN)
    assert (
        run_cli("check", "--no-config", "--no-loader", *each, "--write-baseline", "bl.json", "linux-64").exit_code == 0
    )
    assert _rpath_files(tmp_path / "bl.json") == {"linux-64/foo-py312:lib/libz9.so"}
    _conda(tmp_path / "linux-64", "bar", LEAK)
    r = run_cli("check", "--no-config", "--no-loader", *each, "--format", "json", "--baseline", "bl.json", "linux-64")
    assert r.exit_code == 1, r.stdout
    assert _live(r.stdout) == {("rpath-leak", "linux-64/bar-1.0-py312_0.tar.bz2!lib/libz9.so")}


def test_a_key_without_the_package_name_accepts_only_where_one_package_has_it(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _conda(tmp_path / "linux-64", "foo", LEAK)
    assert (
        run_cli("check", "--no-config", "--no-loader", "--each", "--write-baseline", "bl.json", "linux-64").exit_code
        == 0
    )
    text = (tmp_path / "bl.json").read_text()
    assert "linux-64/foo-py312:lib/libz9.so" in text
    (tmp_path / "old.json").write_text(text.replace("/foo-py312:", "/py312:"))  # as written before
    r = run_cli(
        "check", "--no-config", "--no-loader", "--each", "--format", "json", "--baseline", "old.json", "linux-64"
    )
    assert r.exit_code == 0 and not _live(r.stdout), r.stdout  # one package has it: accepted
    assert "old.json predates per-target keys" in r.stderr
    _conda(tmp_path / "linux-64", "bar", LEAK)
    r = run_cli(
        "check", "--no-config", "--no-loader", "--each", "--format", "json", "--baseline", "old.json", "linux-64"
    )
    assert r.exit_code == 1  # foo's or bar's: not told, neither accepted
    assert _live(r.stdout) == {("rpath-leak", f"linux-64/{n}-1.0-py312_0.tar.bz2!lib/libz9.so") for n in ("foo", "bar")}


def test_two_site_packages_of_one_prefix_key_apart(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    for python, library in (("3.11", LEAK), ("3.12", CLEAN)):
        (tmp_path / f"v/lib/python{python}/site-packages/pkg").mkdir(parents=True)
        shutil.copy(library, tmp_path / f"v/lib/python{python}/site-packages/pkg/libx.so")
    (tmp_path / "v/pyvenv.cfg").write_text("home = /usr/bin\n")
    assert run_cli("check", "--no-config", "--no-loader", "--write-baseline", "bl.json", "v").exit_code == 0
    assert _rpath_files(tmp_path / "bl.json") == {"lib/python3.11/site-packages/pkg/libx.so"}
    shutil.copy(LEAK, tmp_path / "v/lib/python3.12/site-packages/pkg/libx.so")
    r = run_cli("check", "--no-config", "--no-loader", "--format", "json", "--baseline", "bl.json", "v")
    assert r.exit_code == 1, r.stdout
    assert _live(r.stdout) == {("rpath-leak", "v/lib/python3.12/site-packages/pkg/libx.so")}


def test_an_input_named_with_a_colon_keys_apart(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    for path, library in (("x:y/lib/libbad.so", LEAK), ("x/y:lib/libbad.so", CLEAN)):
        (tmp_path / path).parent.mkdir(parents=True)
        shutil.copy(library, tmp_path / path)
    assert run_cli("check", "--no-config", "--no-loader", "--write-baseline", "bl.json", "x:y", "x").exit_code == 0
    assert _rpath_files(tmp_path / "bl.json") == {"x%3Ay:lib/libbad.so"}
    shutil.copy(LEAK, tmp_path / "x/y:lib/libbad.so")
    r = run_cli("check", "--no-config", "--no-loader", "--format", "json", "--baseline", "bl.json", "x:y", "x")
    assert r.exit_code == 1, r.stdout
    assert _live(r.stdout) == {("rpath-leak", "x/y:lib/libbad.so")}
    doc = json.loads((tmp_path / "bl.json").read_text())  # as written before labels were escaped
    (tmp_path / "old.json").write_text(json.dumps(doc).replace("x%3Ay:", "x:y:"))
    shutil.copy(CLEAN, tmp_path / "x/y:lib/libbad.so")
    r = run_cli("check", "--no-config", "--no-loader", "--format", "json", "--baseline", "old.json", "x:y", "x")
    assert r.exit_code == 1  # x:y:lib/libbad.so may be x's y:lib/libbad.so: not accepted
    shutil.copytree(tmp_path / "x", tmp_path / "z")
    r = run_cli("check", "--no-config", "--no-loader", "--format", "json", "--baseline", "old.json", "x:y", "z")
    assert r.exit_code == 0 and not _live(r.stdout), r.stdout  # no other input's label is x or x:y:...
    assert "old.json predates per-target keys" in r.stderr


#: Names that a separator, an escape or a site-packages could make ambiguous.
_NAMES = ("x", "x:y", "y", "y:z", "x%3Ay", "%", "a:", ":b", "lib")
_PATHS = (
    "lib/libbad.so",
    "y:lib/libbad.so",
    "z:lib/libbad.so",
    "3Ay:lib/libbad.so",
    "pkg/libx.so",
    "lib/python3.11/site-packages/pkg/libx.so",
    "lib/python3.12/site-packages/pkg/libx.so",
    "lib64/python3.12/site-packages/pkg/libx.so",
)


#: Conda packages of one variant beside each other (the name tells them apart), one named with ``:``.
_PACKAGES = ("linux-64/foo-1.0-py312_0.conda", "linux-64/bar-1.0-py312_0.conda", "linux-64/a:b-1.0-py312_0.conda")


@pytest.mark.parametrize("count", [2, 3])
def test_no_two_files_of_one_run_share_a_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
    """Every choice of ``count`` inputs among ``_NAMES``, each holding every path of ``_PATHS`` and
    the member ``lib/libz9.so`` of every package of ``_PACKAGES``: distinct (input, path) pairs
    have distinct keys, in every key form a run writes."""
    monkeypatch.chdir(tmp_path)
    for name, path in itertools.product(_NAMES, _PATHS + _PACKAGES):
        (tmp_path / name / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name / path).write_bytes(b"")
    for inputs in itertools.combinations(_NAMES, count):
        packages = frozenset(f"{name}/{p}" for name in inputs for p in _PACKAGES)
        files = [*_PATHS, *(f"{p}!lib/libz9.so" for p in _PACKAGES)]
        for form in ("keyed", "named"):
            keys: dict[str, tuple[str, str]] = {}
            for name, path in itertools.product(inputs, files):
                key = keyed_file(f"{name}/{path}", inputs, packages, form)
                assert keys.setdefault(key, (name, path)) == (name, path), (inputs, key)
