"""Generators of package bombs and member floods for the amplification tests: small files that
expand (or list) far more than they hold.  Streams are compressed chunk by chunk, so building a
bomb never holds what it expands to.  Deterministic: fixed names, times and modes."""

from __future__ import annotations

import io
import struct
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import zstandard

_CHUNK = 1 << 20


def _zeros(size: int) -> Iterator[bytes]:
    chunk = bytes(_CHUNK)
    for start in range(0, size, _CHUNK):
        yield chunk[: min(_CHUNK, size - start)]


def _tar_header(name: str, size: int) -> bytes:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = size, 0o755, 0
    return info.tobuf(format=tarfile.USTAR_FORMAT)


def _tar_of_zeros(name: str, size: int) -> Iterator[bytes]:
    """An uncompressed tar, in pieces: one member of ``size`` bytes (``\\x7fELF`` and zeros)."""
    yield _tar_header(name, size)
    first = True
    for piece in _zeros(size):
        yield (b"\x7fELF" + piece[4:]) if first else piece
        first = False
    yield bytes(-size % 512) + bytes(1024)


def lying_deflate_wheel(path: Path, size: int, declared: int = 4096, extra: dict[str, bytes] | None = None) -> Path:
    """A wheel whose member ``lib/bomb.so`` inflates to ``size`` bytes while its local and central
    headers declare ``declared`` (the declared size comes from the attacker); ``extra`` members
    stored beside it (name -> bytes)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = b"".join(comp.compress(p) for p in _zeros(size)) + comp.flush()
    out = io.BytesIO()
    central = []
    members = [(name, data, 0, len(data), zlib.crc32(data), data) for name, data in (extra or {}).items()]
    members.append(("lib/bomb.so", body, 8, declared, 0, body))
    for name, _data, method, usize, crc, stored in members:
        raw = name.encode()
        offset = out.tell()
        fields = (20, 0, method, 0, 0x21, crc, len(stored), usize, len(raw), 0)
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields) + raw + stored)
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0o755 << 16, offset) + raw)
    start = out.tell()
    directory = b"".join(central)
    out.write(
        directory + struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), len(directory), start, 0)
    )
    path.write_bytes(out.getvalue())
    return path


def gzip_tar_bomb(path: Path, size: int) -> Path:
    """A ``.tar.gz`` holding one member of ``size`` bytes of zeros (1 GiB: about 1 MB)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip wrapper, mtime 0
    with open(path, "wb") as fh:
        for piece in _tar_of_zeros("lib/bomb.so", size):
            fh.write(comp.compress(piece))
        fh.write(comp.flush())
    return path


def zstd_conda_bomb(path: Path, size: int) -> Path:
    """A ``.conda`` whose ``pkg-*.tar.zst`` holds one member of ``size`` bytes of zeros."""
    import zipfile

    comp = zstandard.ZstdCompressor(level=3).compressobj()
    stream = b"".join(comp.compress(p) for p in _tar_of_zeros("lib/bomb.so", size)) + comp.flush()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("metadata.json", (1980, 1, 1, 0, 0, 0)), b'{"conda_pkg_format_version": 2}')
        zf.writestr(zipfile.ZipInfo("pkg-bomb-1.0-0.tar.zst", (1980, 1, 1, 0, 0, 0)), stream)
    return path


def many_members_tar(path: Path, count: int, member: bytes) -> Path:
    """A plain tarball of ``count`` members, each ``member`` (a tiny file: not a binary, so only
    the walk and the member bookkeeping are exercised, never ``count`` audits)."""
    with open(path, "wb") as fh:
        pad = bytes(-len(member) % 512)
        for i in range(count):
            fh.write(_tar_header(f"d{i % 64}/m{i}.txt", len(member)) + member + pad)
        fh.write(bytes(1024))
    return path


def many_members_ar(count: int) -> bytes:
    """A GNU ``ar`` archive of ``count`` two-byte members (60-byte headers: 200,000 in 12 MB)."""
    from .arbuild import header

    return b"!<arch>\n" + b"".join(header(b"m%d.o/" % (i % 100_000), 2) + b"x\n" for i in range(count))
