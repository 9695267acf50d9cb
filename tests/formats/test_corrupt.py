"""Malformed input: every fault is one ``InputError`` naming the file (and offset), never another exception.

Besides the committed corrupt samples, each test here covers a whole kind of
fault by generating it: every truncation length of a good library, every
single-byte patch of its ELF header, program and section headers, random bytes
after an ELF magic, and tables whose sizes or offsets lie.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from linkaudit import InputError, read

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
GOOD = SAMPLES / "fixed/libtorch_cuda.so"


def _read_or_error(path: Path) -> InputError | None:
    """Read; return the InputError if one is raised. Any other exception fails the test."""
    try:
        read(str(path))
    except InputError as exc:
        assert exc.path == str(path)
        assert str(path) in str(exc)
        assert exc.reason
        return exc
    return None


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("empty.so", "empty file"),
        ("truncated.so", "past the end of the file"),
        ("badclass.so", "invalid ELF class 7"),
        ("garbage_after_magic.so", "invalid ELF"),
        ("lying_dynsym.so", ".dynsym"),
        ("lying_phdr.so", "program header table"),
        ("lying_dynamic.so", "dynamic section"),
        ("looping_verneed.so", ".gnu.version_r"),
        ("not_elf.txt", "not a binary"),
    ],
)
def test_committed_corrupt_samples(name: str, fragment: str) -> None:
    exc = _read_or_error(SAMPLES / "corrupt" / name)
    assert exc is not None, f"{name} was accepted"
    assert fragment in exc.reason


def test_huge_verneed_count_is_bounded() -> None:
    """DT_VERNEEDNUM of 2**31-1: the chain's vn_next == 0 ends the walk, as in glibc."""
    (b,) = read(str(SAMPLES / "corrupt/huge_verneednum.so"))
    assert [n.file for n in b.version_needs] == ["libnvrtc.so.12", "libc.so.6"]


def test_every_truncation_is_an_input_error(tmp_path: Path) -> None:
    data = GOOD.read_bytes()
    target = tmp_path / "cut.so"
    errors = 0
    for length in range(1, len(data), 13):
        target.write_bytes(data[:length])
        if _read_or_error(target) is not None:
            errors += 1
    assert errors > 0


def test_every_header_byte_patch_is_handled(tmp_path: Path) -> None:
    """Patch each byte of the ELF, program and section headers to 0x00, 0xff and 0x7f."""
    data = GOOD.read_bytes()
    e_phoff, e_shoff = struct.unpack_from("<QQ", data, 0x20)
    phnum, shnum = struct.unpack_from("<H", data, 0x38)[0], struct.unpack_from("<H", data, 0x3C)[0]
    ranges = [range(0, 64), range(e_phoff, e_phoff + 56 * phnum), range(e_shoff, min(len(data), e_shoff + 64 * shnum))]
    target = tmp_path / "patched.so"
    for rng in ranges:
        for offset in rng:
            for value in (0x00, 0xFF, 0x7F):
                if data[offset] == value:
                    continue
                patched = bytearray(data)
                patched[offset] = value
                target.write_bytes(bytes(patched))
                _read_or_error(target)


def test_random_bytes_after_magic(tmp_path: Path) -> None:
    rng = random.Random(20261129)
    target = tmp_path / "noise.so"
    for size in (5, 16, 17, 52, 64, 200, 4096):
        for _ in range(20):
            target.write_bytes(b"\x7fELF" + bytes(rng.getrandbits(8) for _ in range(size)))
            _read_or_error(target)


def test_random_bytes_after_a_valid_header(tmp_path: Path) -> None:
    """A valid ELF header followed by noise: the tables it points to are garbage."""
    header = GOOD.read_bytes()[:64]
    rng = random.Random(7)
    target = tmp_path / "noise2.so"
    for _ in range(200):
        target.write_bytes(header + bytes(rng.getrandbits(8) for _ in range(rng.randrange(0, 12000))))
        _read_or_error(target)


def _patch_section(data: bytes, sh_type: int, field_offset: int, value: int) -> bytes:
    e_shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shnum = struct.unpack_from("<H", data, 0x3C)[0]
    out = bytearray(data)
    for i in range(shnum):
        base = e_shoff + 64 * i
        if struct.unpack_from("<I", data, base + 4)[0] == sh_type:
            struct.pack_into("<Q", out, base + field_offset, value)
            return bytes(out)
    raise AssertionError("section not found")


@pytest.mark.parametrize("sh_type", [6, 11, 0x6FFFFFFF, 0x6FFFFFFE, 0x6FFFFFFD, 3])
@pytest.mark.parametrize(("field", "value"), [(0x18, 2**62), (0x20, 2**40), (0x18, 0xFFFFFFF0), (0x20, 0)])
def test_lying_section_sizes_and_offsets(tmp_path: Path, sh_type: int, field: int, value: int) -> None:
    """sh_offset / sh_size of .dynamic, .dynsym, .gnu.version*, .dynstr pointing far away: no huge allocation."""
    data = GOOD.read_bytes() if sh_type != 0x6FFFFFFD else (SAMPLES / "fixed/libnvrtc.so.12").read_bytes()
    try:
        patched = _patch_section(data, sh_type, field, value)
    except AssertionError:
        pytest.skip("no such section in this sample")
    target = tmp_path / "lying.so"
    target.write_bytes(patched)
    _read_or_error(target)


def test_error_carries_offset() -> None:
    exc = _read_or_error(SAMPLES / "corrupt/lying_phdr.so")
    assert exc is not None and exc.offset is not None
    assert f"{exc.offset:#x}" in str(exc)


def test_every_truncation_and_header_patch_of_an_archive_is_handled(tmp_path: Path) -> None:
    """Static archives: each cut and each byte patch of the member headers is read or an InputError."""
    data = (SAMPLES / "objects/archive_one/libone.a").read_bytes()
    target = tmp_path / "cut.a"
    for length in range(1, len(data), 7):
        target.write_bytes(data[:length])
        _read_or_error(target)
    for offset in range(0, min(len(data), 400)):
        for value in (0x00, 0x20, 0x39, 0xFF):
            patched = bytearray(data)
            patched[offset] = value
            target.write_bytes(bytes(patched))
            _read_or_error(target)


def test_every_truncation_of_a_relocatable_object_is_handled(tmp_path: Path) -> None:
    data = (SAMPLES / "objects/cpp_comdat/spec_a.o").read_bytes()
    target = tmp_path / "cut.o"
    for length in range(1, len(data), 11):
        target.write_bytes(data[:length])
        _read_or_error(target)


def _shared_aux(records: int, aux: int, verdef: bool) -> bytes:
    """``records`` Verneed (or Verdef) records whose aux links all lead into one shared chain of
    ``aux`` Vernaux (Verdaux) records: records x aux entries from (records + aux) x 16 bytes."""
    import struct

    from tests.formats.elfbuild import DT_NEEDED, build, section_header_offset

    if not verdef:
        recs = b"".join(
            struct.pack("<HHIII", 1, aux, 1, (records - i) * 16, 16 if i + 1 < records else 0) for i in range(records)
        )
        chain = b"".join(struct.pack("<IHHII", 0x09691A75, 0, 2, 11, 16 if j + 1 < aux else 0) for j in range(aux))
        return build(b"\0libc.so.6\0GLIBC_2.2.5\0", [(DT_NEEDED, 1)], verneed_blob=recs + chain)
    size = records * 20
    recs = b"".join(
        struct.pack("<HHHHIII", 1, 0, 2 + i, aux, 0, size - i * 20, 20 if i + 1 < records else 0)
        for i in range(records)
    )
    chain = b"".join(struct.pack("<II", 11, 8 if j + 1 < aux else 0) for j in range(aux))
    data = bytearray(build(b"\0libc.so.6\0V1\0", [(DT_NEEDED, 1)], verneed_blob=recs + chain))
    data = data.replace(struct.pack("<q", 0x6FFFFFFE), struct.pack("<q", 0x6FFFFFFC))  # DT_VERNEED -> DT_VERDEF
    data = data.replace(struct.pack("<q", 0x6FFFFFFF), struct.pack("<q", 0x6FFFFFFD))  # ...NUM
    shoff, shnum = section_header_offset(data), struct.unpack_from("<H", data, 0x3C)[0]
    for i in range(shnum):
        if struct.unpack_from("<I", data, shoff + 64 * i + 4)[0] == 0x6FFFFFFE:
            struct.pack_into("<I", data, shoff + 64 * i + 4, 0x6FFFFFFD)  # SHT_GNU_verneed -> verdef
    return bytes(data)


@pytest.mark.parametrize("verdef", [False, True], ids=["verneed", "verdef"])
def test_version_aux_chains_shared_between_records_count_each_visit(tmp_path: Path, verdef: bool) -> None:
    """Records sharing one aux chain: every aux record read counts against MAX_VERSION_RECORDS, so a
    64 KB file no longer builds records x aux entries (2,000 x 2,000: 9.9 s and 433 MB; 4,000 x 4,000:
    MemoryError, exit 3; stop 27's hostile round 2); small shared chains still read."""
    from linkaudit.errors import InputError

    big = tmp_path / "big.so"
    big.write_bytes(_shared_aux(300, 300, verdef))  # 90,000 entries from 9.6 KB
    with pytest.raises(InputError, match="more than 65536 symbol-version records"):
        read(str(big))
    small = tmp_path / "small.so"
    small.write_bytes(_shared_aux(3, 4, verdef))
    (b,) = read(str(small))
    entries = b.version_definitions if verdef else b.version_needs
    assert len(entries) == 3


def test_an_ar_long_name_without_its_end_is_refused_not_repeated(tmp_path: Path) -> None:
    """A ``//`` table of 100 KB with no terminator and 50 members all named ``/0``: every member's
    name was the whole table, kept in each ``Binary`` (400 members of a 1 MB table: 1.2 GB, and
    MemoryError, exit 3, past that; stop 27's hostile round 3). A name runs at most 4096 bytes; a
    well-formed table's names still read, each offset once."""
    from linkaudit.errors import InputError
    from tests.formats.arbuild import header

    def archive(table: bytes, names: list[bytes]) -> bytes:
        out = b"!<arch>\n" + header(b"//", len(table)) + table + (b"\n" if len(table) % 2 else b"")
        for name in names:
            out += header(name, 0)
        return out

    bad = tmp_path / "bad.a"
    bad.write_bytes(archive(b"A" * 100_000, [b"/0"] * 50))
    with pytest.raises(InputError, match="has no end within 4096 bytes"):
        read(str(bad))
    good = tmp_path / "good.a"
    good.write_bytes(archive(b"a_long_member_name_one.o/\nanother_long_member_name.o/\n", [b"/0", b"/26", b"/0"]))
    from linkaudit.formats.archive import iter_members

    data = good.read_bytes()
    assert [m[0] for m in iter_members(str(good), data, len(data))] == [
        "a_long_member_name_one.o",
        "another_long_member_name.o",
        "a_long_member_name_one.o",
    ]
