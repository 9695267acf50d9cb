"""``PACKAGE!member`` paths that name a directory of the package, and member names holding a NUL."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
WHEEL = "p-1.0-cp311-cp311-linux_x86_64.whl"
INFO = {
    "p-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: p\nVersion: 1.0\n",
    "p-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n",
    "p-1.0.dist-info/RECORD": b"",
}


def _wheel(path: Path, members: dict[str, bytes], patch: tuple[bytes, bytes] = (b"", b"")) -> None:
    """A wheel of ``members`` (and ``INFO``); ``patch``: bytes of the zip replaced after writing
    (a member name zipfile will not write, one holding a NUL)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data in {**members, **INFO}.items():
            z.writestr(name, data)
    path.write_bytes(buf.getvalue().replace(*patch) if patch[0] else buf.getvalue())


@pytest.fixture
def wheel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``p-1.0-…whl`` holding pkg/sub/a.so, pkg/sub/deeper/b.so, pkg/other.so and pkg/data/x.txt."""
    monkeypatch.chdir(tmp_path)
    lib = (SAMPLES / "misc/libexecstack.so").read_bytes()
    members = {"pkg/sub/a.so": lib, "pkg/sub/deeper/b.so": lib, "pkg/other.so": lib, "pkg/data/x.txt": b"text\n"}
    _wheel(tmp_path / WHEEL, members)
    return WHEEL


@pytest.mark.parametrize("directory", ["pkg/sub/", "pkg/sub", "pkg/sub/deeper/.."])
def test_show_of_a_directory_member_shows_every_binary_below_it(run_cli, wheel: str, directory: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", f"{wheel}!{directory}")
    assert r.exit_code == 0, r.stderr
    assert f"{wheel}!pkg/sub/a.so\n" in r.stdout and f"{wheel}!pkg/sub/deeper/b.so\n" in r.stdout
    assert "other.so" not in r.stdout
    doc = json.loads(run_cli("show", "--format", "json", f"{wheel}!{directory}").stdout)
    assert sorted(b["path"] for b in doc["binaries"]) == [f"{wheel}!pkg/sub/a.so", f"{wheel}!pkg/sub/deeper/b.so"]


def test_show_of_a_directory_member_without_binaries_says_so(run_cli, wheel: str) -> None:  # type: ignore[no-untyped-def]
    """As ``show DIR`` of a plain directory holding no binary: a note naming it, exit 0."""
    r = run_cli("show", f"{wheel}!pkg/data/")
    assert r.exit_code == 0, r.stderr
    assert r.stdout == "" and f"{wheel}!pkg/data/: holds no binary" in r.stderr
    both = run_cli("show", f"{wheel}!pkg/data/", f"{wheel}!pkg/other.so")
    assert both.exit_code == 0 and f"{wheel}!pkg/other.so\n" in both.stdout and "holds no binary" in both.stderr


def test_a_member_name_holding_nul_is_refused_by_its_whole_name(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    lib = (SAMPLES / "misc/libexecstack.so").read_bytes()
    _wheel(tmp_path / WHEEL, {"pkg/nulX.so": lib, "pkg/ok.so": lib}, (b"pkg/nulX.so", b"pkg/nul\0.so"))
    r = run_cli("show", WHEEL)
    assert r.exit_code == 2
    assert f"{WHEEL}!pkg/ok.so\n" in r.stdout and f"{WHEEL}!pkg/nul\n" not in r.stdout
    assert f"{WHEEL}!pkg/nul\\x00.so: " in r.stderr and "NUL" in r.stderr
    doc = json.loads(run_cli("check", "--no-config", "--no-loader", "--format", "json", WHEEL).stdout)
    unreadable = [f["file"] for f in doc["findings"] if f["rule"] == "unreadable-input"]
    assert unreadable == [f"{WHEEL}!pkg/nul\0.so"]
    assert not any(f["path"].endswith("!pkg/nul") for f in doc["files"])


def test_a_member_of_a_package_whose_path_holds_a_bang(run_cli, wheel: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a!b").mkdir()
    (tmp_path / wheel).rename(tmp_path / "a!b" / wheel)
    r = run_cli("show", f"a!b/{wheel}!pkg/sub/a.so")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"a!b/{wheel}!pkg/sub/a.so\n") and "other.so" not in r.stdout
