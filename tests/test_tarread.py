"""Our tar reader (``packages.tarread``) against Python's ``tarfile`` and GNU tar: every format
they write reads member for member alike (names, links, types, sizes, times, offsets, bytes);
what is corrupt, truncated or hostile is a ``TarError`` naming the byte, never another exception."""

from __future__ import annotations

import io
import os
import random
import subprocess
import tarfile
from pathlib import Path

import pytest

from linkaudit.packages import tarread
from linkaudit.packages.tarread import TarError, TarReader

from .tools import find_tool, needs

HELPER = (Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()


class Trickle:
    """A stream handing out at most ``step`` bytes a read (decompressors return short reads)."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.pos, self.step = data, 0, step

    def read(self, n: int = -1) -> bytes:
        n = self.step if n < 0 else min(n, self.step)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out


def ours(data: bytes, step: int = 1 << 30) -> list[tuple[object, ...]]:
    """Every member as (name, linkname, type, size, mtime, offset, bytes read)."""
    reader = TarReader(Trickle(data, step))
    out = []
    for m in reader:
        body = b""
        if m.isfile():
            src = reader.data()
            while chunk := src.read(7000):
                body += chunk
        out.append((m.name, m.linkname, m.type, m.size, m.mtime, m.offset, body))
    return out


def theirs(data: bytes) -> list[tuple[object, ...]]:
    """The same, as ``tarfile`` reads it (``r|``: a stream)."""
    out = []
    with tarfile.open(fileobj=io.BytesIO(data), mode="r|") as tf:
        for m in tf:
            f = tf.extractfile(m) if m.isfile() else None
            body = f.read() if f is not None else b""
            out.append((m.name, m.linkname, m.type, m.size, int(m.mtime), m.offset, body))
    return out


def _members(fmt: int, big: bool = True) -> bytes:
    """An archive in ``fmt`` of every kind of member a package holds, long and odd names included."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tf:

        def add(name: str, data: bytes = b"", **kw: object) -> None:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), 1_700_000_000
            for k, v in kw.items():
                setattr(info, k, v)
            tf.addfile(info, io.BytesIO(data) if data else None)

        add("lib", type=tarfile.DIRTYPE)
        add("lib/libhelper.so", HELPER)
        add("lib/empty.so")
        add("lib/" + "long-" * 30 + ".so", HELPER[:700])  # past ustar's 100 bytes: prefix, L or pax path
        add("lib/libhelper.so.1", type=tarfile.SYMTYPE, linkname="libhelper.so")
        add("lib/hard.so", type=tarfile.LNKTYPE, linkname="lib/libhelper.so")
        add("lib/to-long.so", type=tarfile.SYMTYPE, linkname="x/" * 80 + "target.so")  # K or pax linkpath
        add("lib/fifo", type=tarfile.FIFOTYPE)
        add("lib/null", type=tarfile.CHRTYPE)
        if big:
            add("lib/big.bin", os.urandom(3 << 20))  # larger than the reader's buffer
        add("lib/ünïcode.so", HELPER[:100])
        add("lib/" + "d" * 120 + "/" + "f" * 120 + ".so", b"x" * 513)
    return buf.getvalue()


@pytest.mark.parametrize(
    "fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT], ids=["ustar", "gnu", "pax"]
)
@pytest.mark.parametrize("step", [1 << 30, 4096, 511])
def test_every_format_reads_as_tarfile_reads_it(fmt: int, step: int) -> None:
    data = _ustar_only() if fmt == tarfile.USTAR_FORMAT else _members(fmt)  # ustar holds no long names
    got, want = ours(data, step), theirs(data)
    assert [g[:6] for g in got] == [w[:6] for w in want]
    assert got == want


def _ustar_only() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name in ("lib/libhelper.so", "p" * 90 + "/" + "q" * 90 + ".so"):  # the second needs the prefix
            info = tarfile.TarInfo(name)
            info.size = len(HELPER)
            tf.addfile(info, io.BytesIO(HELPER))
    return buf.getvalue()


def test_undecodable_names_keep_their_bytes_as_tarfile_does() -> None:
    header = tarfile.TarInfo("lib/x.so")
    header.size = 3
    raw = bytearray(header.tobuf(tarfile.GNU_FORMAT))
    raw[4:8] = b"\xff\xfe.s"  # name bytes that are not UTF-8
    raw[148:156] = b"        "
    raw[148:155] = b"%06o\0" % (sum(raw) & 0o777777)
    data = bytes(raw) + b"abc".ljust(512, b"\0") + bytes(1024)
    assert ours(data) == theirs(data)
    assert ours(data)[0][0] == "lib/\udcff\udcfe.s"


@needs("gnu-tar")
@pytest.mark.parametrize("fmt", ["gnu", "posix", "oldgnu", "pax-0.0", "pax-0.1"])
def test_gnu_tar_archives_sparse_files_included(tmp_path: Path, fmt: str) -> None:
    """GNU tar's own archives with sparse files (``-S``), in every sparse format (old GNU, pax 0.0,
    0.1 and 1.0): each file is rebuilt with its holes, byte for byte as on disk and as tarfile
    extracts it, the members after it read whole, and a sparse library is audited (was refused:
    "a GNU sparse file: its holes are not read")."""
    tree = tmp_path / "tree"
    (tree / "lib").mkdir(parents=True)
    (tree / "lib/libhelper.so").write_bytes(HELPER)
    with open(tree / "lib/holes.bin", "wb") as fh:
        fh.write(b"start")
        fh.seek(3 << 20)
        fh.write(b"middle")
        fh.seek(5 << 20)
        fh.write(b"end")
    with open(tree / "lib/libsparse.so", "wb") as fh:  # an ELF library ending in a hole
        fh.write(HELPER)
        fh.truncate(len(HELPER) + (2 << 20))
    (tree / "lib/zz-after.so").write_bytes(HELPER)
    (tree / "lib/link.so").symlink_to("libhelper.so")
    archive = tmp_path / "a.tar"
    tar = find_tool("gnu-tar").path
    assert tar is not None
    options = [f"--sparse-version={fmt[4:]}", "--format=posix"] if fmt.startswith("pax-") else [f"--format={fmt}"]
    subprocess.run([tar, "-S", *options, "-cf", archive, "-C", tree, "lib"], check=True)
    data = archive.read_bytes()
    got = {m.name: m for m in TarReader(io.BytesIO(data))}
    assert got["lib/holes.bin"].sparse and not got["lib/libhelper.so"].sparse
    assert got["lib/link.so"].issym() and got["lib/link.so"].linkname == "libhelper.so"
    bodies = {g[0]: g[6] for g in ours(data, 4096)}
    for name in ("holes.bin", "libsparse.so", "libhelper.so", "zz-after.so"):
        assert bodies[f"lib/{name}"] == (tree / "lib" / name).read_bytes(), name
    assert bodies == {t[0]: t[6] for t in theirs(data)}
    from linkaudit import audit

    report = audit([str(archive)])
    assert not [f for f in report.findings if f.rule == "unreadable-input"], report.findings
    assert f"{archive}!lib/libsparse.so" in [f.path for f in report.files]


def _one(name: str = "lib/x.so", size: bytes = b"00000000003", body: bytes = b"abc", type_: bytes = b"0") -> bytes:
    """One ustar header with fields given raw (a valid checksum), its data and the end blocks."""
    h = bytearray(512)
    h[0 : len(name)] = name.encode()
    h[100:108] = b"0000644\0"
    h[124 : 124 + len(size)] = size
    h[136:148] = b"00000000000\0"
    h[156:157] = type_
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[148:156] = b" " * 8
    h[148:155] = b"%06o\0" % sum(h)
    pad = -len(body) % 512
    return bytes(h) + body + bytes(pad) + bytes(1024)


@pytest.mark.parametrize(
    ("data", "said"),
    [
        (b"", "empty"),
        (b"x" * 512, "no tar header at its start"),
        (_one()[:300], "ends inside the member header at byte 0"),
        (_one()[:513], "ends inside a member's data"),
        (_one(size=b"-0000000003"), "size that is not a number"),
        (_one(size=b"0_3"), "size that is not a number"),
        (_one(size=b"\xff" + b"\xff" * 10 + b"\xfd"), "negative size"),
        (_one() + b"junk", "data after the end of the archive"),
        (_one(type_=b"x", size=b"00000000007", body=b"bad\n\n\n\n"), "malformed record"),
        (_one(type_=b"x", size=b"00000000013", body=b"11 size=-1\n")[:-1024] + _one(), "size that is not a number"),
        (_one(type_=b"x", size=b"00000000012", body=b"10 path=a\n"), "followed by no member"),
        (_one(type_=b"L", size=b"77777777777", body=b""), "declares"),
    ],
    ids=[
        "empty",
        "not-tar",
        "cut-header",
        "cut-data",
        "signed-size",
        "underscore",
        "negative-256",
        "trailing",
        "pax-garbage",
        "pax-size",
        "pax-alone",
        "huge-longname",
    ],
)
def test_corrupt_archives_are_tar_errors_naming_what(data: bytes, said: str) -> None:
    with pytest.raises(TarError) as caught:
        ours(data)
    assert said in caught.value.reason


def test_base256_sizes_and_the_first_extension_header_wins() -> None:
    """GNU's base-256 numbers (sizes past 8 GiB) read as numbers; a pax ``path`` before a GNU
    ``L`` name wins over it (the outer header, as tarfile applies them)."""
    size = b"\x80" + (3).to_bytes(11, "big")
    assert ours(_one(size=size))[0][3] == 3
    pax = b"17 path=from-pax\n"
    pax_block = _one(type_=b"x", size=b"%011o" % len(pax), body=pax)[:-1024]
    longname = _one(type_=b"L", size=b"00000000011", body=b"from-gnu\0")[:-1024]
    assert ours(pax_block + longname + _one())[0][0] == "from-pax"
    assert ours(longname + pax_block + _one())[0][0] == "from-gnu"


def test_mutated_archives_raise_only_tar_errors() -> None:
    """A few thousand random corruptions of a real archive: each reads, or fails as ``TarError``."""
    base = _members(tarfile.PAX_FORMAT, big=False)
    rng = random.Random(14)
    outcomes = {"read": 0, "refused": 0}
    for _ in range(2000):
        data = bytearray(base)
        for _ in range(rng.randint(1, 8)):
            at = rng.randrange(len(data) if rng.random() < 0.3 else 4096)
            data[at] = rng.randrange(256)
        cut = len(data) if rng.random() < 0.8 else rng.randrange(len(data))
        try:
            ours(bytes(data[:cut]), rng.choice([511, 4096, 1 << 30]))
            outcomes["read"] += 1
        except TarError:
            outcomes["refused"] += 1
    assert outcomes["read"] > 100 and outcomes["refused"] > 100, outcomes


def test_extension_headers_are_held_only_up_to_the_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    pax = b"5011 path=" + b"x" * 5000 + b"\n"
    assert len(pax) == 5011
    data = _one(type_=b"x", size=b"%011o" % len(pax), body=pax)[:-1024] + _one()
    assert ours(data)[0][0] == "x" * 5000
    monkeypatch.setattr(tarread, "MAX_EXTENDED", 4096)
    with pytest.raises(TarError, match="declares 5011 bytes"):
        ours(data)


def test_old_tars_signed_checksums_are_accepted() -> None:
    """Some old tars summed the header as signed bytes: a name byte of 0xFF then counts -1."""
    raw = bytearray(_one())
    raw[4:6] = b"\xff\xfe"
    raw[148:156] = b" " * 8
    signed = sum(b - 256 if b > 127 else b for b in raw[:512])
    raw[148:155] = b"%06o\0" % signed
    assert ours(bytes(raw))[0][0] == "lib/\udcff\udcfeso"
    raw[148:155] = b"%06o\0" % (signed + 1)
    with pytest.raises(TarError, match="checksum"):
        ours(bytes(raw))


@needs("gnu-tar")
def test_a_pre_posix_v7_tar_is_recognised_and_read(tmp_path: Path) -> None:
    """``tar --format=v7`` writes no magic: its header's checksum tells it (was "not a binary")."""
    from linkaudit import audit

    (tmp_path / "lib").mkdir()
    (tmp_path / "lib/libhelper.so").write_bytes(HELPER)
    archive = tmp_path / "t-v7.tar"
    tar = find_tool("gnu-tar").path
    assert tar is not None
    subprocess.run([tar, "--format=v7", "-cf", archive, "-C", tmp_path, "lib"], check=True)
    assert archive.read_bytes()[257:262] != b"ustar"
    report = audit([str(archive)])
    assert [f.path for f in report.files] == [f"{archive}!lib/libhelper.so"]
    assert not report.findings


@pytest.mark.parametrize(
    ("numbers", "real", "stored", "said"),
    [
        ([0, 10, 5, 10], 100, 20, "out of order"),  # overlapping
        ([90, 20], 100, 20, "past the file's 100 bytes"),
        ([0, 10], 100, 11, "of 10 bytes for 11 stored"),
        ([0, 10, 3], 100, 10, "not pairs"),
    ],
)
def test_a_sparse_map_that_cannot_make_its_file_is_refused(
    numbers: list[int], real: int, stored: int, said: str
) -> None:
    from linkaudit.packages import tarsparse

    with pytest.raises(ValueError, match=said):
        tarsparse.checked(tarsparse.map_from_pairs(numbers), real, stored)


def test_a_sparse_files_holes_count_as_the_bytes_they_make(tmp_path: Path) -> None:
    """A sparse member's file is handed out whole, zeros included, so every cap on bytes written
    applies to it: an old GNU map saying 8 GiB from a few stored bytes is a decompression bomb."""
    from linkaudit.packages import tarsparse

    data = tarsparse.SparseData(io.BytesIO(b"abc").read, tarsparse.map_from_pairs([8 << 30, 3]), (8 << 30) + 3)
    first = data.read(1 << 22)
    assert first == bytes(1 << 22)  # zeros, handed out as the caller reads them: nothing held


@pytest.mark.parametrize(
    ("records", "said"),
    [
        ({"GNU.sparse.map": "0,10,5,10", "GNU.sparse.size": "100"}, "out of order"),
        ({"GNU.sparse.map": "0,x", "GNU.sparse.size": "100"}, "not a number"),
        ({"GNU.sparse.map": "0,20"}, "give no size of its file"),
        ({"GNU.sparse.map": "0,20", "GNU.sparse.size": "1_000"}, "size is not a number: '1_000'"),
    ],
)
def test_a_sparse_member_whose_map_cannot_make_its_file_is_refused_alone(
    tmp_path: Path, records: dict[str, str], said: str
) -> None:
    """Its size still frames the archive, so the members after it are read (the whole tarball was
    "not a readable tar archive", and ``int()`` let ``1_000`` through)."""
    from linkaudit import audit

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        bad = tarfile.TarInfo("lib/libbad.so")
        bad.size = 20
        bad.pax_headers = {"GNU.sparse.major": "0", "GNU.sparse.minor": "1", **records}
        tf.addfile(bad, io.BytesIO(bytes(20)))
        good = tarfile.TarInfo("lib/libgood.so")
        good.size = len(HELPER)
        tf.addfile(good, io.BytesIO(HELPER))
    archive = tmp_path / "sparse.tar"
    archive.write_bytes(buf.getvalue())
    report = audit([str(archive)])
    (refused,) = [f for f in report.findings if f.rule == "unreadable-input"]
    assert refused.file == f"{archive}!lib/libbad.so" and said in refused.message
    assert [f.path for f in report.files if f.status.value == "audited"] == [f"{archive}!lib/libgood.so"]


def test_a_block_byte_sum_is_told_exactly() -> None:
    """``_byte_sum_is`` (two residues in C instead of ``sum`` in Python) agrees with ``sum`` on
    random and on crafted blocks, totals off by the moduli included (65,521 and 255)."""
    import os
    import random

    from linkaudit.packages.tarread import _byte_sum_is

    rng = random.Random(3)
    blocks = [os.urandom(512) for _ in range(300)]
    blocks += [bytes([b]) * 512 for b in (0, 1, 32, 48, 255)]
    blocks += [bytes(rng.choice([0, 32, 48, 255]) for _ in range(512)) for _ in range(100)]
    for block in blocks:
        s = sum(block)
        for total in (s, s + 65521, s - 65521, s + 255, s - 255, s + 1, s - 1, s + 255 * 65521, -1, 130561):
            assert _byte_sum_is(block, total) == (total == s), (s, total)
