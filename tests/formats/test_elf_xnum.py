"""Extended program header numbering (gABI, "ELF Header"): ``e_phnum == PN_XNUM`` (0xffff) says the
real count of program headers is ``sh_info`` of section header 0, as ``e_shnum == 0`` puts the
section count in its ``sh_size``.  A valid such file was refused ("program header table (3669960
bytes ...) extends past the end of the file"): 0xffff was taken for the count.  pyelftools does not
read PN_XNUM, so these files are checked against the same file without it, not against pyelftools.
"""

from __future__ import annotations

import dataclasses
import struct
from pathlib import Path

import pytest

from linkaudit import InputError, read
from linkaudit.model import Binary, Symbol, SymbolTable

from .elfbuild import DT_NEEDED, build, section_header_offset, sym

DYNSTR = b"\0libc.so.6\0printf\0"
E_SHOFF, E_PHNUM = 0x28, 0x38
SH_INFO = 44  # the offset of sh_info in an Elf64_Shdr
NO_SYMBOLS = SymbolTable.from_symbols([])


def _plain() -> bytes:
    return build(DYNSTR, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(11), interpreter="/lib64/ld-linux-x86-64.so.2")


def _xnum(data: bytes, count: int) -> bytes:
    """``data`` with e_phnum = PN_XNUM and ``count`` in section header 0's sh_info."""
    out = bytearray(data)
    struct.pack_into("<H", out, E_PHNUM, 0xFFFF)
    struct.pack_into("<I", out, section_header_offset(data) + SH_INFO, count)
    return bytes(out)


def _read(tmp_path: Path, data: bytes, name: str) -> tuple[Binary, list[Symbol]]:
    """The file's ``Binary`` (its path and symbol table set aside: a table compares by identity)
    and its symbols."""
    path = tmp_path / name
    path.write_bytes(data)
    (binary,) = read(str(path))
    return dataclasses.replace(binary, path="lib.so", symbols=NO_SYMBOLS), list(binary.symbols)


def test_a_pn_xnum_file_reads_as_the_same_file_without_it(tmp_path: Path) -> None:
    plain = _plain()
    phnum = struct.unpack_from("<H", plain, E_PHNUM)[0]
    assert phnum == 3  # PT_LOAD, PT_DYNAMIC, PT_INTERP
    extended, symbols = _read(tmp_path, _xnum(plain, phnum), "xnum.so")
    assert (extended, symbols) == _read(tmp_path, plain, "plain.so")
    assert extended.interpreter == "/lib64/ld-linux-x86-64.so.2"
    assert [n.name for n in extended.needed] == ["libc.so.6"]
    assert [s.name for s in symbols] == ["printf"]


def _reason(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "bad.so"
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        read(str(path))
    return info.value.reason


def test_a_pn_xnum_count_the_file_cannot_hold_is_refused_with_its_source(tmp_path: Path) -> None:
    reason = _reason(tmp_path, _xnum(_plain(), 0xFFFFFFFF))
    assert reason.startswith("extended program header count 4294967295 (section 0 sh_info) is more than the file")


def test_pn_xnum_without_section_headers_is_refused(tmp_path: Path) -> None:
    data = bytearray(_xnum(_plain(), 3))
    struct.pack_into("<Q", data, E_SHOFF, 0)  # no section header table: nowhere for the count
    assert "no section header 0 to hold the program header count" in _reason(tmp_path, bytes(data))
