"""gzip streams inflated by ISA-L (``packages.inflate``) give what CPython's gzip gives: the same bytes
for every good stream, an error for every bad one, of the kinds the package stage reports as a
corrupt input (``staging.CORRUPT``) — ISA-L's own ``IsalError`` is not one of them, and leaked as a
traceback before it was raised as ``zlib.error``."""

from __future__ import annotations

import copy
import gzip
import io
import random
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

from linkaudit.packages.inflate import gzip_stream, isal_available, open_zip_member
from linkaudit.packages.staging import CORRUPT

from .test_packages import HELPER, _tar

needs_isal = pytest.mark.skipif(not isal_available(), reason="needs python-isal (pip install isal)")


def _inflate(data: bytes, use_isal: bool) -> bytes | str:
    """What ``gzip_stream`` reads from ``data`` in 4 KiB reads, or the kind of error (one of CORRUPT)."""
    stream = gzip_stream(io.BytesIO(data), use_isal=use_isal)
    out = []
    try:
        while chunk := stream.read(4096):
            out.append(chunk)
    except CORRUPT as exc:
        return f"error: {type(exc).__name__}"
    return b"".join(out)


def _streams() -> list[tuple[str, bytes]]:
    """Good and bad gzip streams: members back to back, zeros or garbage after them, truncations,
    a wrong CRC-32 or length, a bad method, and bytes flipped anywhere (seeded)."""
    rnd = random.Random(20261205)
    body = b"".join(rnd.randbytes(rnd.randrange(1, 300)) * rnd.randrange(1, 40) for _ in range(40))
    one = gzip.compress(body)
    cases = [
        ("one member", one),
        ("two members", one + gzip.compress(body[:999])),
        ("zeros after", one + b"\0" * 600),
        ("garbage after", one + b"garbage!"),
        ("empty", b""),
        ("magic only", b"\x1f\x8b"),
        ("wrong CRC-32", one[:-8] + b"\0\0\0\0" + one[-4:]),
        ("wrong length", one[:-4] + b"\0\0\0\0"),
        ("not deflate", one[:2] + b"\x09" + one[3:]),
        ("corrupt deflate", one[:30] + bytes(b ^ 0xFF for b in one[30:60]) + one[60:]),
    ]
    cases += [(f"cut at {n}", one[:n]) for n in sorted(rnd.sample(range(1, len(one)), 40))]
    for k in range(120):
        flipped = bytearray(one)
        for at in rnd.sample(range(10, len(one)), rnd.randrange(1, 4)):
            flipped[at] ^= 1 << rnd.randrange(8)
        cases.append((f"flipped {k}", bytes(flipped)))
    return cases


@needs_isal
def test_isal_inflates_what_gzip_inflates_and_fails_where_it_fails() -> None:
    """Each stream: the same bytes from both, or an error from both (of the kinds reported as
    corrupt, never another exception); the corrupt deflate data among them is ISA-L's IsalError."""
    kinds = set()
    for what, data in _streams():
        ours, theirs = _inflate(data, True), _inflate(data, False)
        if isinstance(theirs, bytes):
            assert ours == theirs, what
        else:
            assert isinstance(ours, str), f"{what}: gzip says {theirs}, ISA-L read {len(ours)} bytes"
            kinds.add(ours)
    assert "error: error" in kinds  # zlib.error, raised for ISA-L's own


@needs_isal
def test_a_corrupt_tar_gz_is_named_and_the_other_inputs_still_audited(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A .tar.gz whose deflate data is corrupt: exit 2 with the file named and why, no traceback;
    a good .tar.gz beside it is audited."""
    good = _tar([("lib/libhelper.so", HELPER)], "w:gz")
    (tmp_path / "good.tar.gz").write_bytes(good)
    bad = bytearray(good)
    for at in range(30, min(len(bad) - 8, 400)):
        bad[at] ^= 0x55
    (tmp_path / "bad.tar.gz").write_bytes(bytes(bad))
    assert isinstance(_inflate(bytes(bad), True), str) and "error" in str(_inflate(bytes(bad), True))
    done = run_cli("check", "--no-config", str(tmp_path / "bad.tar.gz"), str(tmp_path / "good.tar.gz"))
    assert done.exit_code == 2, done.stdout
    assert "Traceback" not in done.stdout + done.stderr
    assert "bad.tar.gz" in done.stdout
    assert "good.tar.gz!lib/libhelper.so" in done.stdout and "1 audited, 1 unreadable" in done.stdout


def test_without_isal_gzip_inflates() -> None:
    """``use_isal=False`` (and python-isal absent) is CPython's gzip."""
    data = gzip.compress(b"x" * 100_000)
    assert _inflate(data, False) == b"x" * 100_000
    assert isinstance(gzip_stream(io.BytesIO(data), use_isal=False), gzip.GzipFile)
    assert zlib.error in CORRUPT


def _zip(rnd: random.Random) -> bytes:
    """A zip of deflated members (empty, small, repetitive, random; two levels), a stored one and a
    UTF-8 name: what wheels hold."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i in range(rnd.randrange(2, 6)):
            size = rnd.choice([0, 1, 100, 5000, 70_000, 300_000])
            data = (rnd.randbytes(rnd.randrange(1, 64)) * (size // 8 + 1))[:size]
            if rnd.random() < 0.3:
                data = rnd.randbytes(size)
            level = rnd.choice([1, 6, 9])
            zf.writestr(f"pkg/lib{i}.so", data, zipfile.ZIP_DEFLATED, level)
        zf.writestr("pkg/stored.txt", b"stored" * 50, zipfile.ZIP_STORED)
        zf.writestr("pkg/é.so", b"\x7fELF" * 3000, zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, ours: bool, sizes: list[int], used: list[str]) -> bytes | str:
    """The member read in reads of ``sizes`` (cycled; -1: the rest), or the kind of error; the
    type of stream read appended to ``used``."""
    out = []
    try:
        with open_zip_member(zf, info) if ours else zf.open(info) as src:
            used.append(type(src).__name__)
            for k in range(10_000):
                n = sizes[k % len(sizes)]
                chunk = src.read(n)
                out.append(chunk)
                if not chunk or n < 0:
                    break
    except (*CORRUPT, NotImplementedError) as exc:
        return f"error: {type(exc).__name__}"
    return b"".join(out)


def _mutants(rnd: random.Random, data: bytes) -> list[tuple[str, bytes]]:
    """``data`` as written, then bytes flipped anywhere (local headers, deflate data, the central
    directory), cut short, and entries lying about sizes and CRC-32 in the central directory."""
    out = [("as written", data)]
    for k in range(25):
        flipped = bytearray(data)
        for at in rnd.sample(range(len(data)), rnd.randrange(1, 4)):
            flipped[at] ^= 1 << rnd.randrange(8)
        out.append((f"flipped {k}", bytes(flipped)))
    return out


def _lying(zf_bytes: bytes, rnd: random.Random) -> list[zipfile.ZipInfo]:
    """Central-directory entries of ``zf_bytes`` with their compressed size, size or CRC-32 changed."""
    infos = []
    for info in zipfile.ZipFile(io.BytesIO(zf_bytes)).infolist():
        for field, value in (
            ("compress_size", info.compress_size + rnd.choice([-7, -1, 1, 40])),
            ("file_size", info.file_size + rnd.choice([-3, -1, 1, 1000])),
            ("CRC", info.CRC ^ 1),
        ):
            lie = copy.copy(info)
            setattr(lie, field, max(value, 0))
            infos.append(lie)
    return infos


@needs_isal
@pytest.mark.parametrize("seed", range(6))
def test_isal_reads_zip_members_as_zipfile_reads_them(tmp_path: Path, seed: int) -> None:
    """Every member of good and mutated zips, in reads of random sizes: the same bytes from
    ``open_zip_member`` as from ``zipfile``'s own ``open``, or an error from both (of the kinds
    reported as a corrupt member); entries lying about their sizes and CRC-32 too."""
    rnd = random.Random(seed)
    data = _zip(rnd)
    used: list[str] = []
    for what, mutant in _mutants(rnd, data):
        path = tmp_path / f"{seed}.zip"
        path.write_bytes(mutant)
        try:
            zf = zipfile.ZipFile(path)
        except (*CORRUPT, zipfile.LargeZipFile):
            continue
        with zf:
            infos = zf.infolist() + (_lying(data, rnd) if what == "as written" else [])
            for info in infos:
                sizes = [rnd.choice([1, 7, 4096, 65536, 1 << 20]) for _ in range(3)] + [rnd.choice([4096, -1])]
                theirs, ours = _member(zf, info, False, sizes, []), _member(zf, info, True, sizes, used)
                assert ours == theirs, f"{what}: {info.filename} ({info.compress_size}, {info.file_size})"
    assert "_ZipInflater" in used  # ISA-L read members, not zipfile only


def test_without_isal_a_wheel_and_a_tarball_are_read_by_the_standard_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """python-isal absent (a platform it has no wheel for): ``zipfile`` and ``gzip`` inflate, the
    same bytes."""
    data = _zip(random.Random(3))
    path = tmp_path / "w.zip"
    path.write_bytes(data)
    monkeypatch.setitem(sys.modules, "isal", None)  # import isal -> ImportError
    assert not isal_available()
    with zipfile.ZipFile(path) as zf:
        for info in zf.infolist():
            with open_zip_member(zf, info) as src:
                assert isinstance(src, zipfile.ZipExtFile)
                assert src.read() == zf.read(info)
    blob = gzip.compress(b"y" * 5000)
    assert isinstance(gzip_stream(io.BytesIO(blob)), gzip.GzipFile)
