"""``check PACKAGE!member`` — the path ``check`` itself prints for a member — audits the package
as a whole (the loader finds the member's siblings) and reports that member alone: its files and
findings, not its siblings'.  Before: "unreadable-input … no such file or directory", exit 2,
though ``show``, ``tree``, ``why`` and ``diff`` take the same path."""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
MOD = (SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so").read_bytes()  # RUNPATH $ORIGIN/lib
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
BROKEN = (SAMPLES / "broken/libtorch_cuda.so").read_bytes()  # errors of its own
MEMBERS = {
    "pkg/mod.cpython-311-x86_64-linux-gnu.so": MOD,
    "pkg/lib/libhelper.so": HELPER,
    "pkg/bad/libtorch_cuda.so": BROKEN,
}
WHEEL = "pkg-1.0-cp311-cp311-linux_x86_64.whl"
CONDA = "pkg-1.0-0.tar.bz2"


def _package(tmp: Path, name: str) -> str:
    if name.endswith(".whl"):
        info = {
            "pkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
            "pkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n",
        }
        with zipfile.ZipFile(tmp / name, "w") as zf:
            for member, data in {**MEMBERS, **info}.items():
                zf.writestr(member, data)
        return name
    with tarfile.open(tmp / name, "w:bz2") as tf:
        index = b'{"name": "pkg", "version": "1.0", "build": "0", "subdir": "linux-64", "depends": []}'
        for member, data in {**MEMBERS, "info/index.json": index}.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return name


@pytest.mark.parametrize("name", [WHEEL, CONDA])
def test_check_of_a_member_audits_it_within_its_package(run_cli, tmp_path: Path, monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, name)
    mod = f"{package}!pkg/mod.cpython-311-x86_64-linux-gnu.so"
    whole = json.loads(run_cli("check", "--no-config", "--format", "json", package).stdout)
    assert any(f["file"] == f"{package}!pkg/bad/libtorch_cuda.so" for f in whole["findings"])
    r = run_cli("check", "--no-config", "--format", "json", mod)
    assert r.exit_code == 0, r.stdout + r.stderr  # the sibling's errors are not this member's
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == [mod]
    assert {f["file"] for f in doc["findings"]} <= {mod}
    assert not any(f["rule"] in ("library-not-found", "unreadable-input") for f in doc["findings"])  # siblings found
    text = run_cli("check", "--no-config", mod)
    assert text.exit_code == 0 and "1 file: 1 audited" in text.stdout and "no such file" not in text.stdout
    bad = run_cli("check", "--no-config", "--format", "json", f"{package}!pkg/bad/libtorch_cuda.so")
    assert bad.exit_code == 1
    assert {f["file"] for f in json.loads(bad.stdout)["findings"]} == {f"{package}!pkg/bad/libtorch_cuda.so"}


def test_check_of_a_member_beside_other_inputs(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A member of one package, another package whole and a plain file: only the member is cut."""
    monkeypatch.chdir(tmp_path)
    wheel, conda = _package(tmp_path, WHEEL), _package(tmp_path, CONDA)
    (tmp_path / "plain.so").write_bytes(HELPER)
    r = run_cli("check", "--no-config", "--format", "json", f"{wheel}!pkg/lib/libhelper.so", conda, "plain.so")
    files = json.loads(r.stdout)["files"]
    assert {f["path"] for f in files} == {
        f"{wheel}!pkg/lib/libhelper.so",
        "plain.so",
        *(f"{conda}!{m}" for m in MEMBERS),
    }
    assert {f["status"] for f in files} == {"audited"}
    assert r.exit_code == 1  # the conda package's libtorch_cuda.so, given whole


def test_check_of_a_member_the_package_lacks_names_it(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, WHEEL)
    r = run_cli("check", "--no-config", f"{package}!pkg/none.so", f"{package}!pkg/lib/libhelper.so")
    assert r.exit_code == 2
    assert f"{package}!pkg/none.so: no such binary member in the package" in r.stdout
    assert "libtorch_cuda" not in r.stdout and "no such file or directory" not in r.stdout


@pytest.mark.parametrize("spread", [[], ["--each"]])
def test_streamed_check_of_a_member_streams_its_findings_only(
    run_cli, tmp_path: Path, monkeypatch, spread: list[str]
) -> None:  # type: ignore[no-untyped-def]
    """``--format jsonl`` writes findings as each installation ends: those of the members asked for only."""
    monkeypatch.chdir(tmp_path)
    package = _package(tmp_path, WHEEL)
    mod = f"{package}!pkg/mod.cpython-311-x86_64-linux-gnu.so"
    r = run_cli("check", "--no-config", "--format", "jsonl", *spread, mod)
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    assert r.exit_code == 0, r.stdout
    assert not [x for x in lines if "libtorch_cuda" in json.dumps(x)]
