"""Hostile ELF input: sizes, counts and strings no real binary has are refused early, cheaply, with a reason.

Files come from ``elfbuild`` (tiny ELF64 objects written on the fly); limits are
lowered with ``monkeypatch`` where a real test file would be gigabytes.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from linkaudit import InputError, read
from linkaudit.formats import elf
from linkaudit.model import Libc

from .elfbuild import DT_NEEDED, build, section_header_offset, sym, verneed

DYNSTR = b"\0libc.so.6\0GLIBC_2.17\0printf\0"  # offsets 1, 11, 22


def write(tmp_path: Path, data: bytes, name: str = "lib.so") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def error(path: str) -> InputError:
    with pytest.raises(InputError) as info:
        read(path)
    assert info.value.path == path and info.value.reason
    return info.value


def test_good_file_reads(tmp_path: Path) -> None:
    data = build(
        DYNSTR,
        [(DT_NEEDED, 1)],
        dynsym=sym(0, 0) + sym(22),
        versym=struct.pack("<HH", 0, 2),
        verneed_blob=verneed(1, [(11, 2)]),
    )
    (b,) = read(write(tmp_path, data))
    assert b.needed_names == ("libc.so.6",)
    assert [s.display_name() for s in b.symbols] == ["printf@GLIBC_2.17"]


def test_duplicate_needed_entries_are_kept_and_decoded_once(tmp_path: Path) -> None:
    (b,) = read(write(tmp_path, build(DYNSTR, [(DT_NEEDED, 1)] * 5000)))
    assert len(b.needed) == 5000 and set(b.needed_names) == {"libc.so.6"}
    assert all(n is b.needed[0] for n in b.needed)  # one record, one decoded string


def test_needed_string_longer_than_the_cap(tmp_path: Path) -> None:
    dynstr = b"\0" + b"A" * (elf.MAX_STRING + 10) + b"\0"
    exc = error(write(tmp_path, build(dynstr, [(DT_NEEDED, 1)] * 100)))
    assert f"longer than {elf.MAX_STRING} bytes" in exc.reason and "DT_NEEDED" in exc.reason


def test_symbol_name_without_nul(tmp_path: Path) -> None:
    dynstr = b"\0libc.so.6\0pr"  # "pr" runs off the end of the table
    exc = error(write(tmp_path, build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(11))))
    assert "not NUL-terminated" in exc.reason and "symbol 1" in exc.reason
    assert exc.offset is not None


def test_symbol_name_longer_than_the_cap(tmp_path: Path) -> None:
    dynstr = b"\0libc.so.6\0" + b"B" * (elf.MAX_STRING + 1) + b"\0x\0"
    long_name, short = 11, 11 + elf.MAX_STRING + 2
    data = build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(long_name) + sym(short))
    exc = error(write(tmp_path, data))
    assert "symbol 1 name" in exc.reason and f"longer than {elf.MAX_STRING}" in exc.reason


def test_long_strings_nobody_uses_are_fine(tmp_path: Path) -> None:
    dynstr = b"\0libc.so.6\0" + b"C" * (elf.MAX_STRING + 1) + b"\0printf\0"
    printf = 11 + elf.MAX_STRING + 2
    (b,) = read(write(tmp_path, build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(printf))))
    assert [s.name for s in b.symbols] == ["printf"]
    assert len(b.symbols.strtab) == len(dynstr)  # the prefix the names use


def test_versym_shorter_than_dynsym_with_sections(tmp_path: Path) -> None:
    """.gnu.version of 1 entry for 3 symbols: the section's own size says so (no reading into the next section)."""
    data = build(
        DYNSTR,
        [(DT_NEEDED, 1)],
        dynsym=sym(0, 0) + sym(22) + sym(22),
        versym=b"\0\0",
        verneed_blob=verneed(1, [(11, 2)]),
    )
    exc = error(write(tmp_path, data))
    assert ".gnu.version" in exc.reason and "3" in exc.reason


def test_extended_section_count_larger_than_the_file(tmp_path: Path) -> None:
    data = bytearray(build(DYNSTR, [(DT_NEEDED, 1)]))
    shoff = section_header_offset(bytes(data))
    struct.pack_into("<H", data, 0x3C, 0)  # e_shnum = 0: the count is section 0's sh_size
    struct.pack_into("<Q", data, shoff + 32, 1 << 40)
    exc = error(write(tmp_path, bytes(data)))
    assert "extended section count" in exc.reason


def test_extended_section_count_over_the_limit_on_a_sparse_file(tmp_path: Path) -> None:
    """A 256 MiB sparse file whose headers all fit: refused by count, before anything is read."""
    data = bytearray(build(DYNSTR, [(DT_NEEDED, 1)]))
    shoff = section_header_offset(bytes(data))
    size = 256 << 20
    struct.pack_into("<H", data, 0x3C, 0)
    struct.pack_into("<Q", data, shoff + 32, (size - shoff) // 64)
    path = tmp_path / "sparse.so"
    with open(path, "wb") as fh:
        fh.write(data)
        fh.truncate(size)
    exc = error(str(path))
    assert f"more than linkaudit reads ({elf.MAX_SECTIONS})" in exc.reason


def test_string_table_over_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elf, "MAX_STRTAB", 16)
    exc = error(write(tmp_path, build(DYNSTR, [(DT_NEEDED, 1)])))
    assert "larger than linkaudit reads" in exc.reason


def test_dynamic_section_entries_over_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elf, "MAX_DYNAMIC", 10)
    exc = error(write(tmp_path, build(DYNSTR, [(DT_NEEDED, 1)] * 20)))
    assert "more than 10 entries" in exc.reason


def test_symbol_count_over_the_cap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elf, "MAX_SYMBOLS", 2)
    exc = error(write(tmp_path, build(DYNSTR, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(22) * 3)))
    assert "more than linkaudit reads (2)" in exc.reason


def test_sections_are_found_among_many(tmp_path: Path) -> None:
    """The lazy section table finds .dynsym and .gnu.version by type whatever the headers around them."""
    data = build(
        DYNSTR,
        [(DT_NEEDED, 1)],
        dynsym=sym(0, 0) + sym(22),
        versym=struct.pack("<HH", 0, 2),
        verneed_blob=verneed(1, [(11, 2)]),
    )
    (b,) = read(write(tmp_path, data))
    assert b.symbols[0].version is not None and b.symbols[0].version.name == "GLIBC_2.17"


def test_memory_error_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import linkaudit.formats as formats

    def boom(*args: object) -> None:
        raise MemoryError()

    monkeypatch.setattr(formats, "read_elf", boom)
    exc = error(write(tmp_path, build(DYNSTR, [(DT_NEEDED, 1)])))
    assert exc.reason.startswith("too large to read")


def test_libc_of_the_dynamic_loader_itself() -> None:
    assert elf._libc(None, (), "ld-linux-x86-64.so.2") is Libc.GLIBC
    assert elf._libc(None, (), "ld-linux-aarch64.so.1") is Libc.GLIBC
    assert elf._libc(None, (), "libc.so.6") is Libc.GLIBC
    assert elf._libc(None, (), "ld-musl-x86_64.so.1") is Libc.MUSL
    for path in ("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6"):
        if os.path.exists(path):
            (b,) = read(os.path.realpath(path))
            assert b.libc is Libc.GLIBC, path


@pytest.mark.parametrize(("vn_next", "vna_next"), [(0xFFFFFFF0, 0), (0, 0xFFFFFFF0)])
def test_a_version_chain_leaving_the_file_names_an_offset_inside_it(
    tmp_path: Path, vn_next: int, vna_next: int
) -> None:
    """A vn_next or vna_next pointing 4 GiB away: the error's offset is the record whose link points
    there (inside the file), and the reason says where it points — not an offset past the end (the
    hostile tester saw "at byte offset 0x100000128" for a file under 1 KiB)."""
    blob = struct.pack("<HHIII", 1, 2, 1, 16, vn_next) + struct.pack(
        "<IHHII", 0, 0, 2, 11, 16 if vna_next == 0 else vna_next
    )
    blob += struct.pack("<IHHII", 0, 0, 3, 11, 0)
    data = build(
        DYNSTR, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(22), versym=struct.pack("<HH", 0, 2), verneed_blob=blob
    )
    path = write(tmp_path, data)
    e = error(path)
    assert "chain runs outside its section or loops (a link points at 0x" in e.reason
    assert e.offset is not None and 0 <= e.offset < len(data), (hex(e.offset), len(data))


@pytest.mark.parametrize("nfat", [0, 45, 200, 0xFFFFFFFF])
def test_a_fat_header_with_an_implausible_slice_count_is_said(tmp_path: Path, nfat: int) -> None:
    """The universal (fat) Mach-O magic with ``nfat_arch`` 0 or 45 and more (a Java class file's
    version sits there) is not read as Mach-O; the error said "no ... magic number" although the
    file has one (the hostile tester's D4): it names the magic and the count."""
    path = tmp_path / "fat"
    path.write_bytes(b"\xca\xfe\xba\xbe" + struct.pack(">I", nfat) + bytes(64))
    with pytest.raises(InputError) as caught:
        read(str(path))
    assert f"fat) Mach-O magic 0xcafebabe with nfat_arch {nfat}," in str(caught.value)
    assert caught.value.path == str(path)
