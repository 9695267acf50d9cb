"""``show`` of several packages lists every binary of every package given, each under its own
``PACKAGE!member`` label: two wheels of one project (two targets, two versions) or two packages
installing one path no longer hide the second copy (before: they were staged into one
``site-packages`` or prefix, the first copy kept and the second silently left out, exit 0)."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
LIB = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
OTHER = (SAMPLES / "misc/libweak.so").read_bytes()


def _wheel(path: Path, tag: str, members: dict[str, bytes]) -> str:
    info = {
        "p-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: p\nVersion: 1.0\n",
        "p-1.0.dist-info/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(),
    }
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in {**members, **info}.items():
            zf.writestr(name, data)
    return path.name


def _conda(path: Path, members: dict[str, bytes]) -> str:
    with tarfile.open(path, "w:bz2") as tf:
        for name, data in {**members, "info/index.json": b'{"name": "x", "version": "1", "build": "0"}'}.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path.name


def _inputs(kind: str, tmp: Path) -> tuple[list[str], set[str]]:
    """The operands and the labels ``show`` must list."""
    if kind == "targets":  # a cibuildwheel dist/: the same member path in each wheel
        a = _wheel(
            tmp / "p-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
            "cp311-cp311-manylinux_2_17_x86_64",
            {"p/lib/libfoo.so": LIB},
        )
        b = _wheel(
            tmp / "p-1.0-cp312-cp312-manylinux_2_17_x86_64.whl",
            "cp312-cp312-manylinux_2_17_x86_64",
            {"p/lib/libfoo.so": OTHER},
        )
        return [a, b], {f"{a}!p/lib/libfoo.so", f"{b}!p/lib/libfoo.so"}
    if kind == "versions":
        a = _wheel(tmp / "p-1.0-py3-none-linux_x86_64.whl", "py3-none-linux_x86_64", {"p/a.so": LIB})
        b = _wheel(tmp / "p-1.1-py3-none-linux_x86_64.whl", "py3-none-linux_x86_64", {"p/a.so": OTHER, "p/b.so": LIB})
        return [a, b], {f"{a}!p/a.so", f"{b}!p/a.so", f"{b}!p/b.so"}
    if kind == "conda":  # two conda packages writing one path (a file-clash for check)
        a, b = (
            _conda(tmp / "foo-1.0-0.tar.bz2", {"lib/libfoo.so": LIB}),
            _conda(tmp / "bar-1.0-0.tar.bz2", {"lib/libfoo.so": OTHER}),
        )
        return [a, b], {f"{a}!lib/libfoo.so", f"{b}!lib/libfoo.so"}
    # a directory of wheels beside a plain file, and a member given by its path
    (tmp / "dist").mkdir()
    a = _wheel(
        tmp / "dist/p-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        "cp311-cp311-manylinux_2_17_x86_64",
        {"p/x.so": LIB, "p/y.so": LIB},
    )
    b = _wheel(
        tmp / "dist/p-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", "cp312-cp312-manylinux_2_17_x86_64", {"p/x.so": OTHER}
    )
    (tmp / "loose.so").write_bytes(OTHER)
    return ["dist", "loose.so", f"dist/{a}!p/y.so"], {
        f"dist/{a}!p/x.so",
        f"dist/{a}!p/y.so",
        f"dist/{b}!p/x.so",
        "loose.so",
    }


@pytest.mark.parametrize("kind", ["targets", "versions", "conda", "directory"])
def test_show_lists_every_binary_of_every_package(run_cli, tmp_path: Path, monkeypatch, kind: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    operands, expected = _inputs(kind, tmp_path)
    r = run_cli("show", *operands)
    assert r.exit_code == 0, r.stderr
    assert {line for line in r.stdout.splitlines() if line and not line[0].isspace()} == expected
    j = run_cli("show", "--format", "json", *operands)
    assert j.exit_code == 0, j.stderr
    paths = [b["path"] for b in json.loads(j.stdout)["binaries"]]
    assert sorted(paths) == sorted(expected)


def test_show_of_members_of_several_packages_shows_those_members(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    a = _wheel(tmp_path / "p-1.0-py3-none-linux_x86_64.whl", "py3-none-linux_x86_64", {"p/a.so": LIB, "p/b.so": LIB})
    b = _wheel(tmp_path / "p-1.1-py3-none-linux_x86_64.whl", "py3-none-linux_x86_64", {"p/a.so": OTHER, "p/b.so": LIB})
    r = run_cli("show", f"{a}!p/a.so", f"{b}!p/a.so")
    assert r.exit_code == 0, r.stderr
    assert {line for line in r.stdout.splitlines() if line and not line[0].isspace()} == {f"{a}!p/a.so", f"{b}!p/a.so"}
    c = _wheel(tmp_path / "q-1.0-py3-none-linux_x86_64.whl", "py3-none-linux_x86_64", {"p/a.so": LIB})
    r = run_cli("show", f"{a}!p/a.so", f"{c}!p/nope.so")
    assert r.exit_code == 2
    assert [line for line in r.stdout.splitlines() if line and not line[0].isspace()] == [f"{a}!p/a.so"]
    assert f"{c}!p/nope.so: no such binary member" in r.stderr
