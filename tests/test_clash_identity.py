"""Two packages installing one path are "identical contents: harmless" only when the two copies
hold the same bytes.  Before: conda members and wheel members were judged by CRC-32 and size,
and a different library with 4 bytes appended (its CRC-32 forced to the other's, solved over
GF(2)) was called identical — a note, its copy never audited, exit 0."""

from __future__ import annotations

import json
import zipfile
import zlib
from pathlib import Path

import pytest

from linkaudit.packages import staged_inputs
from tests.condabuild import conda_package

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bins"
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
OTHER = (SAMPLES / "misc/libweak.so").read_bytes()


def forged(data: bytes, crc: int) -> bytes:
    """``data`` with 4 bytes appended making its CRC-32 ``crc`` (CRC is linear over GF(2))."""
    base = zlib.crc32(data + bytes(4))
    basis: dict[int, tuple[int, int]] = {}
    for b in range(32):
        v, m = zlib.crc32(data + (1 << b).to_bytes(4, "little")) ^ base, 1 << b
        for bit in range(31, -1, -1):
            if (v >> bit) & 1:
                if bit not in basis:
                    basis[bit] = (v, m)
                    break
                v, m = v ^ basis[bit][0], m ^ basis[bit][1]
    want, x = crc ^ base, 0
    for bit in range(31, -1, -1):
        if (want >> bit) & 1:
            want, x = want ^ basis[bit][0], x ^ basis[bit][1]
    assert want == 0
    return data + x.to_bytes(4, "little")


SIZE = max(len(HELPER), len(OTHER)) + 64
GOOD = HELPER + bytes(SIZE - len(HELPER))
BAD = forged(OTHER + bytes(SIZE - 4 - len(OTHER)), zlib.crc32(GOOD))


def test_the_forgery_matches_crc_and_size() -> None:
    assert len(GOOD) == len(BAD) and zlib.crc32(GOOD) == zlib.crc32(BAD) and GOOD != BAD


def _wheel(directory: Path, name: str, members: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> str:
    path = directory / f"{name}-1.0-cp311-cp311-linux_x86_64.whl"
    meta = {
        f"{name}-1.0.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n".encode(),
        f"{name}-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n",
    }
    with zipfile.ZipFile(path, "w", method) as zf:
        for member, data in {**members, **meta}.items():
            zf.writestr(member, data)
    return str(path)


@pytest.mark.parametrize("suffix", [".conda", ".tar.bz2"])
@pytest.mark.parametrize("hold", [False, True])
def test_conda_copies_of_equal_crc_and_size_but_other_bytes_differ(tmp_path: Path, suffix: str, hold: bool) -> None:
    a = conda_package(tmp_path, "aaa", suffix, {"lib/libfoo.so": GOOD, "share/x.txt": GOOD[:100] + b"A"})
    b = conda_package(tmp_path, "bbb", suffix, {"lib/libfoo.so": BAD, "share/x.txt": GOOD[:100] + b"A"})
    c = conda_package(tmp_path, "ccc", suffix, {"lib/libfoo.so": GOOD})
    with staged_inputs([a, b, c], hold=hold) as staged:
        got = {(k.path, k.second, k.identical) for k in staged.clashes}
    assert got == {("lib/libfoo.so", b, False), ("share/x.txt", b, True), ("lib/libfoo.so", c, True)}


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED])
def test_wheel_copies_of_equal_crc_and_size_but_other_bytes_differ(tmp_path: Path, method: int) -> None:
    a = _wheel(tmp_path, "aaa", {"pkg/libfoo.so": GOOD, "pkg/same.so": HELPER}, method)
    b = _wheel(tmp_path, "bbb", {"pkg/libfoo.so": BAD, "pkg/same.so": HELPER}, method)
    with staged_inputs([a, b]) as staged:
        got = {(k.path, k.identical) for k in staged.clashes if not k.path.endswith(".dist-info/METADATA")}
    assert ("pkg/libfoo.so", False) in got and ("pkg/same.so", True) in got


def test_forged_conda_copy_is_audited_and_fails_check(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = conda_package(tmp_path, "aaa", ".conda", {"lib/libfoo.so": GOOD})
    b = conda_package(tmp_path, "zzz", ".conda", {"lib/libfoo.so": BAD})
    r = run_cli("check", "--no-config", "--no-cache", "--format", "json", a, b)
    clash = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "file-clash"]
    assert r.exit_code == 1 and clash and clash[0]["severity"] == "error" and clash[0]["evidence"]["identical"] is False
