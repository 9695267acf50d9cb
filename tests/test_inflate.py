"""gzip streams inflated by ISA-L (``packages.inflate``) give what CPython's gzip gives: the same bytes
for every good stream, an error for every bad one, of the kinds the package stage reports as a
corrupt input (``staging.CORRUPT``) — ISA-L's own ``IsalError`` is not one of them, and leaked as a
traceback before it was raised as ``zlib.error``."""

from __future__ import annotations

import gzip
import io
import random
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from linkaudit.packages.inflate import gzip_stream, isal_available
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
def test_a_corrupt_tar_gz_is_named_and_the_other_inputs_still_audited(tmp_path: Path) -> None:
    """A .tar.gz whose deflate data is corrupt: exit 2 with the file named and why, no traceback;
    a good .tar.gz beside it is audited."""
    good = _tar([("lib/libhelper.so", HELPER)], "w:gz")
    (tmp_path / "good.tar.gz").write_bytes(good)
    bad = bytearray(good)
    for at in range(30, min(len(bad) - 8, 400)):
        bad[at] ^= 0x55
    (tmp_path / "bad.tar.gz").write_bytes(bytes(bad))
    assert isinstance(_inflate(bytes(bad), True), str) and "error" in str(_inflate(bytes(bad), True))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "linkaudit",
            "check",
            "--no-config",
            str(tmp_path / "bad.tar.gz"),
            str(tmp_path / "good.tar.gz"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "bad.tar.gz" in done.stdout + done.stderr
    assert "good.tar.gz!lib/libhelper.so" in done.stdout and "1 audited, 1 unreadable" in done.stdout


def test_without_isal_gzip_inflates() -> None:
    """``use_isal=False`` (and python-isal absent) is CPython's gzip."""
    data = gzip.compress(b"x" * 100_000)
    assert _inflate(data, False) == b"x" * 100_000
    assert isinstance(gzip_stream(io.BytesIO(data), use_isal=False), gzip.GzipFile)
    assert zlib.error in CORRUPT
