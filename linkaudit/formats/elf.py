"""ELF reader: bytes of one ELF file -> one ``Binary``.

This is linkaudit's hot path.  It reads only what a linkage audit needs — the
ELF header, program and section headers, the dynamic section, ``.dynsym`` with
its string table, and the GNU version sections (``.gnu.version``,
``.gnu.version_r``, ``.gnu.version_d``) — with ``pread`` (``filebytes``), in bulk:
symbol columns are strided slices of ``array`` views over ``.dynsym``, and no
name is decoded until someone asks for it.  On the PyTorch CUDA wheel that is
about 1.3% of the bytes.

Sources: the ELF gABI (System V ABI, chapters 4 and 5: header, sections,
symbol table, dynamic section, hash table), the GNU extensions as glibc's
``elf.h`` defines them (DT_GNU_HASH, symbol versioning: ``Verneed``/``Vernaux``,
``Verdef``/``Verdaux``, ``.gnu.version`` hidden bit 0x8000), and the Linux
Standard Base's "Symbol Versioning" chapter.

Files without section headers (stripped by ``sstrip``, or whose section headers
lie) are read from the dynamic segment alone: DT_STRTAB/DT_STRSZ, DT_SYMTAB with
its count from DT_HASH's ``nchain`` or by walking DT_GNU_HASH, DT_VERSYM,
DT_VERNEED/DT_VERNEEDNUM and DT_VERDEF/DT_VERDEFNUM — as ld.so itself does.

Every offset and size read from the file is checked against the file size
before it is used, and every chain walk is bounded by the bytes it could
occupy, so a hostile file cannot make the reader allocate or loop without
bound; every fault raises ``InputError`` with the path and the offset.

Beyond the file size, counts and sizes that no real binary needs are refused
before anything is allocated (``MAX_*`` below: a sparse 4 GiB file passes every
file-size check), strings are read from the file one at a time (only those
used, each decoded once per string-table offset, at most ``MAX_STRING`` bytes),
and of the string table ``.dynsym`` names index into only the prefix the names
use is copied.
"""

from __future__ import annotations

import array
import bisect
import re
import struct
import sys
from collections.abc import Iterator, Sequence
from itertools import compress, repeat
from types import MappingProxyType
from typing import NamedTuple

from ..errors import InputError
from ..model import (
    DF_1_NOW,
    DF_1_PIE,
    DF_BIND_NOW,
    Binary,
    ElfHashTable,
    Endian,
    Format,
    Kind,
    Libc,
    NeededLibrary,
    SymbolTable,
    SymbolVersion,
    VersionDefinition,
    VersionNeed,
    VersionNeedEntry,
)
from .filebytes import Buffer

ELF_MAGIC = b"\x7fELF"

# e_type (gABI)
ET_REL, ET_EXEC, ET_DYN, ET_CORE = 1, 2, 3, 4
# p_type
PT_LOAD, PT_DYNAMIC, PT_INTERP = 1, 2, 3
PT_GNU_STACK = 0x6474E551
PT_NOTE, PT_GNU_PROPERTY = 4, 0x6474E553
EM_386, EM_X86_64 = 3, 62
#: The GNU property note: owner "GNU", type NT_GNU_PROPERTY_TYPE_0 (the x86-64 psABI, "Program Property").
NT_GNU_PROPERTY_TYPE_0 = 5
#: pr_type of the x86 micro-architecture levels a file needs (binutils' ``-z x86-64-v2``; glibc's dl-prop.h).
GNU_PROPERTY_X86_ISA_1_NEEDED = 0xC0008002
#: Bytes of notes read at the most, per file (real files carry well under 1 KiB of them).
MAX_NOTE_BYTES = 64 * 1024
PF_X = 1
DT_TEXTREL = 22
DF_TEXTREL = 0x4
# sh_type
SHT_SYMTAB, SHT_DYNAMIC, SHT_NOBITS, SHT_DYNSYM, SHT_GROUP = 2, 6, 8, 11, 17
GRP_COMDAT = 0x1
SHT_GNU_VERDEF, SHT_GNU_VERNEED, SHT_GNU_VERSYM = 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF
SHN_XINDEX = 0xFFFF
#: e_phnum of a file with 0xffff or more program headers (gABI, "ELF Header"): the real count is
#: sh_info of section header 0.
PN_XNUM = 0xFFFF
# d_tag
DT_NULL, DT_NEEDED, DT_HASH, DT_STRTAB, DT_SYMTAB = 0, 1, 4, 5, 6
DT_STRSZ, DT_SYMENT, DT_SONAME, DT_RPATH = 10, 11, 14, 15
DT_BIND_NOW, DT_RUNPATH, DT_FLAGS = 24, 29, 30
DT_GNU_HASH = 0x6FFFFEF5
DT_VERSYM = 0x6FFFFFF0
DT_FLAGS_1 = 0x6FFFFFFB
DT_VERDEF, DT_VERDEFNUM = 0x6FFFFFFC, 0x6FFFFFFD
DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFFE, 0x6FFFFFFF

# Most e_machine values seen in packaging, spelled as the field spells them.
MACHINES: dict[int, str] = {
    2: "sparc",
    3: "x86",
    8: "mips",
    18: "sparc32plus",
    20: "ppc",
    21: "ppc64",
    22: "s390",
    40: "arm",
    42: "sh",
    43: "sparcv9",
    50: "ia64",
    62: "x86-64",
    183: "aarch64",
    243: "riscv",
    247: "bpf",
    258: "loongarch",
}
OS_ABIS: dict[int, str] = {
    0: "SYSV",
    1: "HP-UX",
    2: "NetBSD",
    3: "GNU",
    6: "Solaris",
    7: "AIX",
    8: "IRIX",
    9: "FreeBSD",
    10: "Tru64",
    11: "Modesto",
    12: "OpenBSD",
    64: "ARM-EABI",
    97: "ARM",
    255: "Standalone",
}

# Limits: far above any real binary, far below what would exhaust memory or time.
#: Longest string decoded (a name, a DT_RUNPATH list, PT_INTERP), bytes.
MAX_STRING = 64 * 1024
#: Largest string table read (DT_STRSZ or the section's sh_size), bytes; the
#: largest real one we know, libtorch_cpu.so's ``.dynstr``, is about 5 MB.
MAX_STRTAB = 256 * 1024 * 1024
#: Most section headers read (extended numbering allows 2**32; a linked
#: library has a few dozen, an object file built with -ffunction-sections some
#: tens of thousands).
MAX_SECTIONS = 1 << 20
#: Most dynamic-section entries read before DT_NULL (real binaries: tens to hundreds).
MAX_DYNAMIC = 1 << 20
#: Most ``.dynsym`` entries (and DT_HASH / DT_GNU_HASH sizes): the largest
#: libraries of the torch wheel have about 100,000.
MAX_SYMBOLS = 1 << 22
#: Most Verneed/Vernaux/Verdef/Verdaux records walked in one file (real: tens to hundreds).
MAX_VERSION_RECORDS = 1 << 16
#: Bytes the names of one file may spell out, each distinct string-table offset counted once
#: (DT_NEEDED, DT_SONAME, DT_RPATH/RUNPATH, version names, symbol names): names that point into
#: the middle of one long string would otherwise spell gigabytes from a file of a few hundred KB.
#: At most ``MAX_NAME_BYTES``, and at most ``NAME_SLACK`` + ``NAME_RATIO`` times the bytes of the
#: string tables they come from: real names spell about their table's size once (a linker's tail
#: merging adds a few; libtorch_cpu.so's 75,765 names spell 5.1 MB of its 5.2 MB ``.dynstr``).
MAX_NAME_BYTES = 64 * 1024 * 1024
NAME_SLACK = 1024 * 1024
NAME_RATIO = 2
#: Of those, the bytes the dynamic section's own names (DT_NEEDED, DT_SONAME, DT_RPATH,
#: DT_RUNPATH) may spell: each is searched for, joined to paths and quoted in findings (a byte of
#: them costs a hundred downstream); at most ``MAX_DYNAMIC_NAME_BYTES``, and at most
#: ``DYNAMIC_NAME_SLACK`` + ``NAME_RATIO`` times the dynamic string table.  Real ones spell less
#: than their table, a few KB at most (long Nix or conda RPATHs).
MAX_DYNAMIC_NAME_BYTES = 1024 * 1024
DYNAMIC_NAME_SLACK = 16 * 1024

_HOST_LITTLE = sys.byteorder == "little"
PYEXT_SUFFIX = re.compile(r"\.(?:cpython-[^.]+|abi3|pypy[^.]*)\.so$")


class _Layout(NamedTuple):
    """struct formats of one (class, byte order) combination."""

    ehdr: struct.Struct
    phdr: struct.Struct
    shdr: struct.Struct
    dyn: struct.Struct
    word: struct.Struct
    verneed: struct.Struct
    vernaux: struct.Struct
    verdef: struct.Struct
    verdaux: struct.Struct
    sym_size: int
    bits: int
    little: bool


def _layout(bits: int, little: bool) -> _Layout:
    e = "<" if little else ">"
    if bits == 64:
        return _Layout(
            ehdr=struct.Struct(e + "HHIQQQIHHHHHH"),
            phdr=struct.Struct(e + "IIQQQQQQ"),
            shdr=struct.Struct(e + "IIQQQQIIQQ"),
            dyn=struct.Struct(e + "qQ"),
            word=struct.Struct(e + "I"),
            verneed=struct.Struct(e + "HHIII"),
            vernaux=struct.Struct(e + "IHHII"),
            verdef=struct.Struct(e + "HHHHIII"),
            verdaux=struct.Struct(e + "II"),
            sym_size=24,
            bits=64,
            little=little,
        )
    return _Layout(
        ehdr=struct.Struct(e + "HHIIIIIHHHHHH"),
        phdr=struct.Struct(e + "IIIIIIII"),
        shdr=struct.Struct(e + "IIIIIIIIII"),
        dyn=struct.Struct(e + "iI"),
        word=struct.Struct(e + "I"),
        verneed=struct.Struct(e + "HHIII"),
        vernaux=struct.Struct(e + "IHHII"),
        verdef=struct.Struct(e + "HHHHIII"),
        verdaux=struct.Struct(e + "II"),
        sym_size=16,
        bits=32,
        little=little,
    )


_LAYOUTS = {(b, le): _layout(b, le) for b in (32, 64) for le in (True, False)}


class _Segment(NamedTuple):
    type: int
    offset: int
    vaddr: int
    filesz: int
    memsz: int
    flags: int = 0
    align: int = 0


class _Section(NamedTuple):
    type: int
    offset: int
    size: int
    link: int
    info: int
    entsize: int
    number: int


class _Reader:
    """State of one ELF parse: the buffer, its size, and bounds-checked accessors."""

    __slots__ = ("L", "buf", "path", "size", "spelled", "tables")

    def __init__(self, path: str, buf: Buffer, size: int, layout: _Layout):
        self.path = path
        self.buf = buf
        self.size = size
        self.L = layout
        self.spelled = 0  # bytes of names decoded so far, against name_budget()
        self.tables: dict[int, int] = {}  # file offset -> size of each string table names come from

    def name_budget(self) -> int:
        """Bytes the file's names may spell: ``NAME_SLACK`` + ``NAME_RATIO`` x its string tables, at most ``MAX_NAME_BYTES``."""
        return min(MAX_NAME_BYTES, NAME_SLACK + NAME_RATIO * sum(self.tables.values()))

    def spend(self, length: int, what: str, budget: int | None = None) -> None:
        """Count ``length`` more bytes of names against ``budget`` (``name_budget()`` unless told).

        Raises:
            InputError: the file's names now spell out more than the budget.
        """
        self.spelled += length
        limit = self.name_budget() if budget is None else budget
        if self.spelled > limit:
            raise self.fail(
                f"{what}: the file's names spell out more than {limit} bytes, more than any real file's "
                "(names pointing into the middle of one long string?)"
            )

    def fail(self, reason: str, offset: int | None = None) -> InputError:
        return InputError(self.path, reason, offset)

    def check(self, offset: int, length: int, what: str) -> None:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise self.fail(
                f"{what} ({length} bytes at offset {offset:#x}) extends past the end of the file ({self.size} bytes)",
                offset,
            )

    def unpack(self, st: struct.Struct, offset: int, what: str) -> tuple[int, ...]:
        self.check(offset, st.size, what)
        return st.unpack(self.buf[offset : offset + st.size])

    def at(self, st: struct.Struct, offset: int) -> tuple[int, ...]:
        """One ``st`` record at ``offset``, whose bounds the caller checked (``struct.error`` when short)."""
        return st.unpack(self.buf[offset : offset + st.size])


class _Sections:
    """The section header table, read lazily: a header is unpacked only when asked for.

    ``first(sh_type)`` finds the first section of a type by scanning only the
    ``sh_type`` column (strided slices of the map, C speed); ``[i]`` reads one
    header.  An empty table (no section headers) has ``len() == 0``.
    """

    __slots__ = ("_cache", "_count", "_entsize", "_offset", "_r", "_types")

    def __init__(self, r: _Reader, offset: int, entsize: int, count: int) -> None:
        self._r = r
        self._offset = offset
        self._entsize = entsize
        self._count = count
        self._cache: dict[int, _Section] = {}
        self._types: dict[int, int | None] = {}

    def __len__(self) -> int:
        return self._count

    def __bool__(self) -> bool:
        return self._count > 0

    def __getitem__(self, index: int) -> _Section:
        if not 0 <= index < self._count:
            raise IndexError(index)
        sec = self._cache.get(index)
        if sec is None:
            _n, sh_type, _fl, _addr, sh_offset, sh_size, sh_link, sh_info, _al, sh_entsize = self._r.at(
                self._r.L.shdr, self._offset + index * self._entsize
            )
            sec = _Section(sh_type, sh_offset, sh_size, sh_link, sh_info, sh_entsize, index)
            self._cache[index] = sec
        return sec

    def header_offset(self, index: int) -> int:
        """File offset of section header ``index``."""
        return self._offset + index * self._entsize

    def first(self, sh_type: int) -> _Section | None:
        """The first section of type ``sh_type``, or ``None``."""
        if sh_type not in self._types:
            self._types[sh_type] = self._find(sh_type)
        index = self._types[sh_type]
        return None if index is None else self[index]

    def _find(self, sh_type: int) -> int | None:
        if not self._count:
            return None
        # The byte of sh_type (at offset 4 of every header) that varies most, one per header.
        lane = 4 + (0 if self._r.L.little else 3)
        want = sh_type & 0xFF
        # A megabyte of headers per read: e_shentsize is the file's word, not a header's size.
        step = max(1, (1 << 20) // self._entsize)
        for first in range(0, self._count, step):
            n = min(step, self._count - first)
            start = self._offset + first * self._entsize + lane
            column = self._r.buf[start : start + (n - 1) * self._entsize + 1 : self._entsize]
            i = column.find(want)
            while i >= 0:
                if self[first + i].type == sh_type:
                    return first + i
                i = column.find(want, i + 1)
        return None


class _Strings:
    """One string table of the file, read through the buffer: only the strings asked for, each decoded once.

    Attributes:
        offset: file offset of the table; size: its length in bytes; what: its name for messages.
    """

    __slots__ = ("_memo", "offset", "r", "size", "what")

    def __init__(self, r: _Reader, offset: int, size: int, what: str) -> None:
        r.check(offset, size, what)
        if size > MAX_STRTAB:
            raise r.fail(
                f"{what} is {size} bytes, larger than linkaudit reads ({MAX_STRTAB // (1 << 20)} MiB; "
                "the largest real ones are a few MB)",
                offset,
            )
        self.r = r
        self.offset = offset
        self.size = size
        self.what = what
        self._memo: dict[int, str] = {}
        r.tables[offset] = max(size, r.tables.get(offset, 0))

    def end_of(self, index: int, what: str) -> int:
        """Table offset of the NUL ending the string at ``index``.

        Raises:
            InputError: ``index`` lies outside the table, or the string has no NUL
                before the table's end or is longer than ``MAX_STRING`` bytes.
        """
        if index >= self.size:
            raise self.r.fail(f"{what} string offset {index:#x} lies outside its string table ({self.size} bytes)")
        start = self.offset + index
        limit = min(start + MAX_STRING + 1, self.offset + self.size)
        end = self.r.buf.find(b"\0", start, limit)
        if end < 0:
            if limit < self.offset + self.size:
                raise self.r.fail(
                    f"{what} string at string-table offset {index:#x} is longer than {MAX_STRING} bytes", start
                )
            raise self.r.fail(f"{what} string at string-table offset {index:#x} is not NUL-terminated", start)
        return end - self.offset

    def get(self, index: int, what: str, budget: int | None = None) -> str:
        """The string at table offset ``index`` (UTF-8; undecodable bytes as surrogate escapes).

        Its first decoding counts against the file's names budget (``_Reader.spend``; ``budget``,
        when given, the bytes the file's names may spell by then).

        Raises:
            InputError: see ``end_of``; or the names budget is spent.
        """
        s = self._memo.get(index)
        if s is None:
            end = self.end_of(index, what)
            self.r.spend(end - index, what, budget)
            s = self.r.buf[self.offset + index : self.offset + end].decode("utf-8", "surrogateescape")
            self._memo[index] = s
        return s

    def prefix(self, length: int) -> bytes:
        """The first ``length`` bytes of the table, copied."""
        return bytes(self.r.buf[self.offset : self.offset + length])


class _Header:
    """What ``read_elf`` keeps of the ELF header: e_ident's EI_OSABI and the Elf32/Elf64_Ehdr fields.
    A plain slotted class: a ``NamedTuple`` cost ~3 M instructions more, made at import (callgrind)."""

    __slots__ = (
        "e_machine",
        "e_phentsize",
        "e_phnum",
        "e_phoff",
        "e_shentsize",
        "e_shnum",
        "e_shoff",
        "e_shstrndx",
        "e_type",
        "os_abi",
    )

    def __init__(self, os_abi: int, ehdr: tuple[int, ...]) -> None:
        self.os_abi = os_abi
        self.e_type, self.e_machine, _ver, _entry, self.e_phoff, self.e_shoff, _flags, _ehsize, *rest = ehdr
        self.e_phentsize, self.e_phnum, self.e_shentsize, self.e_shnum, self.e_shstrndx = rest


def _read_header(path: str, buf: Buffer, size: int) -> tuple[_Reader, _Header]:
    """The reader of the file's class and byte order (e_ident's EI_CLASS, EI_DATA) and its header.

    Raises:
        InputError: shorter than e_ident, bad magic, class or data encoding, or a truncated header.
    """
    if size < 16:
        raise InputError(path, f"truncated ELF file: {size} bytes, shorter than e_ident (16 bytes)", 0)
    ident = bytes(buf[0:16])
    if ident[:4] != ELF_MAGIC:
        raise InputError(path, "not an ELF file (bad magic)", 0)
    ei_class, ei_data, os_abi = ident[4], ident[5], ident[7]
    if ei_class not in (1, 2):
        raise InputError(path, f"invalid ELF class {ei_class} in e_ident[EI_CLASS] (expected 1 or 2)", 4)
    if ei_data not in (1, 2):
        raise InputError(path, f"invalid ELF data encoding {ei_data} in e_ident[EI_DATA] (expected 1 or 2)", 5)
    layout = _LAYOUTS[(32 if ei_class == 1 else 64, ei_data == 1)]
    r = _Reader(path, buf, size, layout)
    return r, _Header(os_abi, r.unpack(layout.ehdr, 16, "ELF header"))


def _read_symbol_tables(
    r: _Reader, h: _Header, dyn: _Dynamic, segments: Sequence[_Segment], sections: _Sections, dynstr: _Strings
) -> tuple[
    SymbolTable,
    tuple[VersionNeed, ...],
    tuple[VersionDefinition, ...],
    tuple[tuple[str, ...], frozenset[int]],
]:
    """The symbols (.dynsym; .symtab for a relocatable object), the version needs and definitions,
    and a relocatable object's section names and COMDAT sections (``_object_sections``)."""
    object_info: tuple[tuple[str, ...], frozenset[int]] = ((), frozenset())
    if h.e_type == ET_REL:
        # A relocatable object has no dynamic symbols: its link-time symbols are in .symtab.
        symtab, symstr = _locate_symtab(r, sections, dynstr)
        object_info = _object_sections(r, sections, h.e_shstrndx)
    else:
        symtab, symstr = _locate_dynsym(r, dyn, segments, sections, dynstr)
    version_needs, need_map = _read_verneed(r, dyn, segments, sections, dynstr)
    version_defs, def_map = _read_verdef(r, dyn, segments, sections, dynstr)
    # versym 0 (VER_NDX_LOCAL) and 1 (VER_NDX_GLOBAL, also the base definition's
    # index) mean "unversioned" for a symbol.
    versions = {k: v for k, v in {**def_map, **need_map}.items() if k > 1}
    symbols = _read_symbols(r, symtab, symstr, dyn, segments, sections, versions)
    return symbols, version_needs, version_defs, object_info


def _find_interpreter(r: _Reader, segments: Sequence[_Segment]) -> str | None:
    """The program interpreter named by the first PT_INTERP segment, ``None`` without one."""
    for seg in segments:
        if seg.type == PT_INTERP:
            return _interpreter(r, seg)
    return None


def read_elf(path: str, buf: Buffer, size: int, soft_dependencies: bool = True) -> Binary:
    """Parse one ELF file.

    Args:
        path: the path to report (as the user gave it).
        buf: the file's bytes: ``FileBytes`` (read on demand) or ``bytes``.
        size: length of ``buf`` in bytes.
        soft_dependencies: scan ``.rodata`` for library names (``Binary.dlopen_names``);
            the loader emulation, which reads every library of a closure, skips it.

    Returns:
        One ``Binary`` with format ``Format.ELF``.

    Raises:
        InputError: the file is truncated or malformed (bad class or byte order,
            headers, tables or strings outside the file, inconsistent entry sizes,
            version chains that loop).
    """
    r, h = _read_header(path, buf, size)
    e_type, e_machine, layout = h.e_type, h.e_machine, r.L
    segments = _read_segments(r, h.e_phoff, h.e_phentsize, _program_header_count(r, h))
    sections = _read_sections(r, h.e_shoff, h.e_shentsize, h.e_shnum)
    interpreter = _find_interpreter(r, segments)
    dyn = _read_dynamic(r, segments, sections)
    dynstr = _dynamic_strtab(r, dyn, segments, sections)
    needed, soname, rpath, runpath = _dynamic_names(dyn, dynstr)

    symbols, version_needs, version_defs, object_info = _read_symbol_tables(r, h, dyn, segments, sections, dynstr)
    bind_now = dyn.bind_now or bool(dyn.flags & DF_BIND_NOW) or bool(dyn.flags_1 & DF_1_NOW)
    kind = _kind(path, e_type, interpreter, soname, dyn.flags_1, symbols.strtab)
    return Binary(
        path=path,
        format=Format.ELF,
        machine=_machine_name(e_machine, layout),
        bits=layout.bits,
        endian=Endian.LITTLE if layout.little else Endian.BIG,
        os_abi=OS_ABIS.get(h.os_abi, f"unknown({h.os_abi})"),
        interpreter=interpreter,
        libc=_libc(interpreter, needed, soname),
        kind=kind,
        soname=soname,
        needed=needed,
        rpath=rpath,
        runpath=runpath,
        flags=dyn.flags,
        flags_1=dyn.flags_1,
        bind_now=bind_now,
        version_needs=version_needs,
        version_definitions=version_defs,
        symbols=symbols,
        file_size=size,
        dlopen_names=_dlopen_names(r, sections, h.e_shstrndx) if soft_dependencies and e_type != ET_REL else (),
        section_names=object_info[0],
        comdat_sections=object_info[1],
        gnu_stack=_gnu_stack(segments),
        text_relocations=dyn.textrel or bool(dyn.flags & DF_TEXTREL),
        x86_isa_needed=_x86_isa_needed(r, segments) if e_machine in (EM_386, EM_X86_64) else 0,
    )


# --- stack and text relocations --------------------------------------------------


def _gnu_stack(segments: Sequence[_Segment]) -> str | None:
    """``"rwx"`` or ``"rw"`` from PT_GNU_STACK's p_flags (PF_X = 1), ``None`` without one (gABI GNU extension)."""
    for seg in segments:
        if seg.type == PT_GNU_STACK:
            return "rwx" if seg.flags & PF_X else "rw"
    return None


# --- the GNU property note: x86 ISA levels --------------------------------------------


def _x86_isa_needed(r: _Reader, segments: Sequence[_Segment]) -> int:
    """``GNU_PROPERTY_X86_ISA_1_NEEDED``'s bits from the file's GNU property note, 0 without one.

    As glibc's loader finds it (``elf/dl-load.c`` and ``sysdeps/x86/dl-prop.h``; the x86-64 psABI's
    "Program Property"): the PT_GNU_PROPERTY segment, else the PT_NOTE segments aligned to the
    class's word (8 bytes for ELFCLASS64, 4 for ELFCLASS32; glibc passes over the others); in each
    note of owner ``"GNU"`` and type NT_GNU_PROPERTY_TYPE_0, properties ``(pr_type, pr_datasz,
    data)`` padded to that alignment.  At most ``MAX_NOTE_BYTES`` are read.

    Raises:
        InputError: a note segment extends past the end of the file.
    """
    align = r.L.bits // 8
    chosen = [s for s in segments if s.type == PT_GNU_PROPERTY] or [
        s for s in segments if s.type == PT_NOTE and s.align == align
    ]
    budget = MAX_NOTE_BYTES
    for seg in chosen:
        length = min(seg.filesz, budget)
        budget -= length
        r.check(seg.offset, length, "note segment")
        bits = _isa_in_notes(bytes(r.buf[seg.offset : seg.offset + length]), r.L.little, align)
        if bits is not None:
            return bits
    return 0


def _isa_in_notes(data: bytes, little: bool, align: int) -> int | None:
    """The ISA-needed bits of the first GNU property note in ``data`` (a note segment's bytes, its
    notes padded to ``align``) that has them; ``None`` when none does.  A note running past ``data``
    ends the walk (glibc's ``ELF_NOTE_DESC_OFFSET`` / ``ELF_NOTE_NEXT_OFFSET``)."""
    order = "<" if little else ">"
    pos = 0
    while pos + 12 <= len(data):
        namesz, descsz, note_type = struct.unpack_from(order + "III", data, pos)
        desc_at = (pos + 12 + namesz + align - 1) & ~(align - 1)
        if desc_at + descsz > len(data):
            return None
        if note_type == NT_GNU_PROPERTY_TYPE_0 and data[pos + 12 : pos + 12 + namesz] == b"GNU\0":
            bits = _isa_in_properties(data[desc_at : desc_at + descsz], order, align)
            if bits is not None:
                return bits
        pos = (desc_at + descsz + align - 1) & ~(align - 1)
    return None


def _isa_in_properties(desc: bytes, order: str, align: int) -> int | None:
    """``GNU_PROPERTY_X86_ISA_1_NEEDED``'s 4-byte value among the properties of one note's
    descriptor, ``None`` when it has none (or it is shorter than 4 bytes)."""
    pos = 0
    while pos + 8 <= len(desc):
        pr_type, datasz = struct.unpack_from(order + "II", desc, pos)
        if pr_type == GNU_PROPERTY_X86_ISA_1_NEEDED and datasz >= 4 and pos + 12 <= len(desc):
            return int(struct.unpack_from(order + "I", desc, pos + 8)[0])
        pos += 8 + ((datasz + align - 1) & ~(align - 1))
    return None


# --- soft dependencies: library names in .rodata -----------------------------------

_SO_TAIL = re.compile(rb"\.so(?:\.[0-9]+)*\x00")
_LIBRARY_NAME = re.compile(r"(?:[A-Za-z0-9_+.@-]+/)*lib[A-Za-z0-9_+.-]*\.so(?:\.[0-9]+)*")
#: .rodata larger than this is not scanned for names (libtorch_cuda.so's is 9.5 MB).
MAX_RODATA = 64 * 1024 * 1024
#: .rodata is scanned this many bytes at a time.
_RODATA_CHUNK = 4 * 1024 * 1024


def _dlopen_names(r: _Reader, sections: _Sections, shstrndx: int) -> tuple[str, ...]:
    """Library names in ``.rodata``: the candidates a ``dlopen`` call may be given.

    Only ``.rodata`` is read (never the whole file: ``libtorch_cuda.so`` has 9.5 MB of
    ``.rodata`` but 333 MB of ``.nv_fatbin``), 4 MiB at a time; a name
    is a NUL-terminated printable string ending in ``.so`` or ``.so.N...`` whose file
    name starts with ``lib``.  A file without section headers gives none.
    """
    if not sections:
        return ()
    if shstrndx == SHN_XINDEX:
        shstrndx = sections[0].link
    if not 0 < shstrndx < len(sections):
        return ()
    names_sec = sections[shstrndx]
    try:
        names = _Strings(r, names_sec.offset, names_sec.size, "section name table (.shstrtab)")
    except InputError:
        return ()
    rodata = None
    for index in range(1, min(len(sections), 4096)):
        sec = sections[index]
        if sec.type == SHT_NOBITS or not sec.size:
            continue
        name_offset = r.at(r.L.word, sections.header_offset(index))[0]
        try:
            if names.get(name_offset, "section name") == ".rodata":
                rodata = sec
                break
        except InputError:
            continue
    if rodata is None or rodata.size > MAX_RODATA:
        return ()
    r.check(rodata.offset, rodata.size, ".rodata section")
    found: dict[str, None] = {}
    start, end = rodata.offset, rodata.offset + rodata.size
    for first in range(start, end, _RODATA_CHUNK):
        # Each chunk is read with the 255 bytes before it (a name's head) and a page after (its tail).
        low = max(start, first - 255)
        data = r.buf[low : min(end, first + _RODATA_CHUNK + 4096)]
        _scan_names(data, first - low, min(end, first + _RODATA_CHUNK) - low, low == start, found)
    return tuple(found)


def _scan_names(data: bytes, begin: int, stop: int, at_start: bool, found: dict[str, None]) -> None:
    """Add to ``found`` the library names of ``data`` whose ``.so`` tail starts in ``[begin, stop)``.

    ``at_start``: ``data`` starts where ``.rodata`` does (a name may begin there without a NUL before it).
    """
    for m in _SO_TAIL.finditer(data, begin):
        if m.start() >= stop:
            break
        low = max(0, m.start() - 255)
        nul = data.rfind(b"\0", low, m.start())
        if nul < 0 and (low > 0 or not at_start):
            continue  # longer than any library name
        head = nul + 1 if nul >= 0 else low
        try:
            text = data[head : m.end() - 1].decode("ascii")
        except UnicodeDecodeError:
            continue
        if _LIBRARY_NAME.fullmatch(text):
            found.setdefault(text, None)


# --- headers ---------------------------------------------------------------


def _program_header_count(r: _Reader, h: _Header) -> int:
    """The number of program headers: ``e_phnum``, or — extended numbering, ``e_phnum`` is
    ``PN_XNUM`` (0xffff) — ``sh_info`` of section header 0 (gABI, "ELF Header" and "Sections",
    as ``e_shnum == 0`` puts the section count in its ``sh_size``).

    Raises:
        InputError: ``PN_XNUM`` without a section header 0 to hold the count (no section header
            table, ``e_shentsize`` too small, the header outside the file), or a count of
            program headers the file cannot hold.
    """
    if h.e_phnum != PN_XNUM:
        return h.e_phnum
    st = r.L.shdr
    if h.e_shoff == 0 or h.e_shentsize < st.size:
        raise r.fail(
            "e_phnum is PN_XNUM (0xffff) but the file has no section header 0 to hold the program header count",
            0,
        )
    phnum = r.unpack(st, h.e_shoff, "section header 0")[7]
    if h.e_phoff and h.e_phentsize and phnum > max(0, r.size - h.e_phoff) // h.e_phentsize:
        raise r.fail(
            f"extended program header count {phnum} (section 0 sh_info) is more than the file can hold "
            f"({r.size} bytes, {h.e_phentsize}-byte headers from offset {h.e_phoff:#x})",
            h.e_shoff,
        )
    return int(phnum)


def _read_segments(r: _Reader, phoff: int, phentsize: int, phnum: int) -> tuple[_Segment, ...]:
    if phoff == 0 or phnum == 0:
        return ()
    st = r.L.phdr
    if phentsize < st.size:
        raise r.fail(f"e_phentsize {phentsize} is smaller than a program header ({st.size} bytes)", 0)
    r.check(phoff, phentsize * phnum, "program header table")
    out = []
    for i in range(phnum):
        f = r.at(st, phoff + i * phentsize)
        if r.L.bits == 64:
            p_type, p_flags, p_offset, p_vaddr, _pa, p_filesz, p_memsz, p_align = f
        else:
            p_type, p_offset, p_vaddr, _pa, p_filesz, p_memsz, p_flags, p_align = f
        out.append(_Segment(p_type, p_offset, p_vaddr, p_filesz, p_memsz, p_flags, p_align))
    return tuple(out)


def _read_sections(r: _Reader, shoff: int, shentsize: int, shnum: int) -> _Sections:
    """The section header table (read lazily); empty when the file has none.

    Raises:
        InputError: e_shentsize too small, the table outside the file, or more
            than ``MAX_SECTIONS`` headers (extended numbering's count included).
    """
    if shoff == 0:
        return _Sections(r, 0, 0, 0)
    st = r.L.shdr
    if shentsize < st.size:
        if shnum == 0 and shentsize == 0:
            return _Sections(r, 0, 0, 0)
        raise r.fail(f"e_shentsize {shentsize} is smaller than a section header ({st.size} bytes)", 0)
    if shnum == 0:
        # Extended numbering (gABI): the real count is sh_size of section 0.
        first = r.unpack(st, shoff, "section header 0")
        shnum = first[5]
        if shnum > (r.size - shoff) // shentsize:
            raise r.fail(
                f"extended section count {shnum} (section 0 sh_size) is more than the file can hold "
                f"({r.size} bytes, {shentsize}-byte headers from offset {shoff:#x})",
                shoff,
            )
    if shnum > MAX_SECTIONS:
        raise r.fail(f"{shnum} section headers: more than linkaudit reads ({MAX_SECTIONS})", shoff)
    r.check(shoff, shentsize * shnum, "section header table")
    return _Sections(r, shoff, shentsize, shnum)


def _vaddr_to_offset(r: _Reader, segments: Sequence[_Segment], vaddr: int, what: str) -> int:
    """Translate a virtual address to a file offset through the PT_LOAD segments."""
    for seg in segments:
        if seg.type == PT_LOAD and seg.vaddr <= vaddr < seg.vaddr + seg.filesz:
            return vaddr - seg.vaddr + seg.offset
    raise r.fail(f"{what} address {vaddr:#x} lies in no PT_LOAD segment's file image")


# --- dynamic section ---------------------------------------------------------


class _Dynamic:
    """The dynamic-section values a linkage audit needs (string offsets and addresses as read)."""

    __slots__ = (
        "bind_now",
        "flags",
        "flags_1",
        "gnu_hash",
        "hash",
        "link",
        "needed",
        "rpath",
        "runpath",
        "soname",
        "strsz",
        "strtab",
        "syment",
        "symtab",
        "textrel",
        "verdef",
        "verdefnum",
        "verneed",
        "verneednum",
        "versym",
    )

    def __init__(self) -> None:
        self.needed: list[int] = []
        self.soname: int | None = None
        self.rpath: int | None = None
        self.runpath: int | None = None
        self.strtab: int | None = None
        self.strsz: int | None = None
        self.symtab: int | None = None
        self.syment: int | None = None
        self.hash: int | None = None
        self.gnu_hash: int | None = None
        self.versym: int | None = None
        self.verneed: int | None = None
        self.verneednum: int | None = None
        self.verdef: int | None = None
        self.verdefnum: int | None = None
        self.flags = 0
        self.flags_1 = 0
        self.bind_now = False
        self.textrel = False
        self.link: int | None = None  # sh_link of the SHT_DYNAMIC section, when known


def _dynamic_extent(segments: Sequence[_Segment], sections: _Sections) -> tuple[int | None, int | None, int | None]:
    """``(offset, length, sh_link)`` of the dynamic table: PT_DYNAMIC's extent, else the SHT_DYNAMIC
    section's; the section's sh_link (its string table) when there is one; ``None`` for what is absent."""
    sec = sections.first(SHT_DYNAMIC)
    offset = length = None
    for seg in segments:
        if seg.type == PT_DYNAMIC:
            offset, length = seg.offset, seg.filesz
            break
    if offset is None and sec is not None:
        offset, length = sec.offset, sec.size
    return offset, length, sec.link if sec is not None else None


def _read_dynamic(r: _Reader, segments: Sequence[_Segment], sections: _Sections) -> _Dynamic:
    """The dynamic table's entries the audit reads, up to DT_NULL; InputError past the file or MAX_DYNAMIC."""
    dyn = _Dynamic()
    offset, length, link = _dynamic_extent(segments, sections)
    if link is not None:
        dyn.link = link
    if offset is None or length is None:
        return dyn
    r.check(offset, length, "dynamic section")
    st = r.L.dyn
    count = length // st.size
    for i, (tag, val) in enumerate(_iter_entries(r.buf, st, offset, count)):
        if tag == DT_NULL:
            break
        if i >= MAX_DYNAMIC:
            raise r.fail(
                f"dynamic section has more than {MAX_DYNAMIC} entries before DT_NULL (real ones have hundreds)",
                offset,
            )
        if tag == DT_NEEDED:
            dyn.needed.append(val)
        elif tag == DT_SONAME:
            dyn.soname = val
        elif tag == DT_RPATH:
            dyn.rpath = val
        elif tag == DT_RUNPATH:
            dyn.runpath = val
        elif tag == DT_STRTAB:
            dyn.strtab = val
        elif tag == DT_STRSZ:
            dyn.strsz = val
        elif tag == DT_SYMTAB:
            dyn.symtab = val
        elif tag == DT_SYMENT:
            dyn.syment = val
        elif tag == DT_HASH:
            dyn.hash = val
        elif tag == DT_GNU_HASH:
            dyn.gnu_hash = val
        elif tag == DT_VERSYM:
            dyn.versym = val
        elif tag == DT_VERNEED:
            dyn.verneed = val
        elif tag == DT_VERNEEDNUM:
            dyn.verneednum = val
        elif tag == DT_VERDEF:
            dyn.verdef = val
        elif tag == DT_VERDEFNUM:
            dyn.verdefnum = val
        elif tag == DT_FLAGS:
            dyn.flags = val
        elif tag == DT_FLAGS_1:
            dyn.flags_1 = val
        elif tag == DT_BIND_NOW:
            dyn.bind_now = True
        elif tag == DT_TEXTREL:
            dyn.textrel = True
    return dyn


def _iter_entries(buf: Buffer, st: struct.Struct, offset: int, count: int) -> Iterator[tuple[int, ...]]:
    """Unpack ``count`` consecutive ``st`` records from ``offset``, 4096 at a time (never the whole table at once)."""
    chunk = 4096
    for first in range(0, count, chunk):
        n = min(chunk, count - first)
        start = offset + first * st.size
        yield from st.iter_unpack(buf[start : start + n * st.size])


def _interpreter(r: _Reader, seg: _Segment) -> str:
    """The PT_INTERP path: the segment's bytes up to the first NUL (at most ``MAX_STRING`` bytes read)."""
    r.check(seg.offset, seg.filesz, "PT_INTERP segment")
    length = min(seg.filesz, MAX_STRING + 1)
    raw = bytes(r.buf[seg.offset : seg.offset + length])
    end = raw.find(b"\0")
    if end < 0:
        if seg.filesz > MAX_STRING:
            raise r.fail(f"PT_INTERP path is longer than {MAX_STRING} bytes", seg.offset)
        end = len(raw)
    return raw[:end].decode("utf-8", "surrogateescape")


def _dynamic_strtab(r: _Reader, dyn: _Dynamic, segments: Sequence[_Segment], sections: _Sections) -> _Strings:
    """The string table DT_NEEDED, DT_SONAME, DT_RPATH/RUNPATH and versions index into."""
    if dyn.link is not None and 0 < dyn.link < len(sections):
        sec = sections[dyn.link]
        if sec.type != SHT_NOBITS:
            return _Strings(r, sec.offset, sec.size, "dynamic string table (.dynstr)")
    if dyn.strtab is None:
        if dyn.needed or dyn.soname is not None or dyn.rpath is not None or dyn.runpath is not None:
            raise r.fail("dynamic section names strings but has no DT_STRTAB")
        return _Strings(r, 0, 0, "dynamic string table")
    if dyn.strsz is None:
        raise r.fail("dynamic section has DT_STRTAB but no DT_STRSZ")
    off = _vaddr_to_offset(r, segments, dyn.strtab, "DT_STRTAB")
    return _Strings(r, off, dyn.strsz, "dynamic string table (DT_STRTAB/DT_STRSZ)")


def _dynamic_names(
    dyn: _Dynamic, dynstr: _Strings
) -> tuple[tuple[NeededLibrary, ...], str | None, tuple[str, ...], tuple[str, ...]]:
    """DT_NEEDED (in order), DT_SONAME, DT_RPATH and DT_RUNPATH (split), decoded.

    The first names a file's reading decodes, within their own budget (``MAX_DYNAMIC_NAME_BYTES``,
    ``DYNAMIC_NAME_SLACK`` + ``NAME_RATIO`` x the table).
    One ``NeededLibrary`` per distinct string offset: duplicates stay in the model (they are what
    the file says) but share one decoded record.

    Raises:
        InputError: a string outside the table or unterminated, or the budget spent.
    """

    budget = min(MAX_DYNAMIC_NAME_BYTES, DYNAMIC_NAME_SLACK + NAME_RATIO * dynstr.size)

    def get(offset: int, what: str) -> str:
        return dynstr.get(offset, what, budget)

    by_offset: dict[int, NeededLibrary] = {}
    needed = tuple(
        by_offset.get(off) or by_offset.setdefault(off, NeededLibrary(get(off, "DT_NEEDED"))) for off in dyn.needed
    )
    soname = get(dyn.soname, "DT_SONAME") if dyn.soname is not None else None
    rpath = _split_path(get(dyn.rpath, "DT_RPATH")) if dyn.rpath is not None else ()
    runpath = _split_path(get(dyn.runpath, "DT_RUNPATH")) if dyn.runpath is not None else ()
    return needed, soname, rpath, runpath


def _split_path(value: str) -> tuple[str, ...]:
    """Split a DT_RPATH/DT_RUNPATH value on ':' as ld.so does (empty entries kept: they mean the CWD)."""
    return tuple(value.split(":")) if value else ()


# --- symbols ------------------------------------------------------------------


class _Table(NamedTuple):
    offset: int
    entries: int  # the null entry 0 included


def _locate_symtab(r: _Reader, sections: _Sections, fallback: _Strings) -> tuple[_Table | None, _Strings]:
    """Find .symtab (SHT_SYMTAB) of a relocatable object and its string table (sh_link).

    Raises:
        InputError: inconsistent entry size, the table outside the file, too many entries.
    """
    ent = r.L.sym_size
    sec = sections.first(SHT_SYMTAB)
    if sec is None or sec.type == SHT_NOBITS:
        return None, fallback
    if sec.entsize not in (0, ent) or sec.size % ent:
        raise r.fail(f".symtab entries are not {ent} bytes (sh_entsize {sec.entsize}, size {sec.size})", sec.offset)
    r.check(sec.offset, sec.size, ".symtab section")
    _check_symbol_count(r, sec.size // ent, sec.offset)
    if not 0 < sec.link < len(sections):
        raise r.fail(f".symtab sh_link {sec.link} names no section", sec.offset)
    link = sections[sec.link]
    return _Table(sec.offset, sec.size // ent), _Strings(r, link.offset, link.size, ".strtab")


def _object_sections(r: _Reader, sections: _Sections, shstrndx: int) -> tuple[tuple[str, ...], frozenset[int]]:
    """Section names (by index) and the indices of sections in COMDAT groups, of a relocatable object.

    COMDAT groups (SHT_GROUP with GRP_COMDAT, gABI "Section Groups"): the linker keeps one copy
    of each group by signature, so a symbol defined in one is not a duplicate definition.

    Raises:
        InputError: a group table outside the file.
    """
    if not sections:
        return (), frozenset()
    if shstrndx == SHN_XINDEX:
        shstrndx = sections[0].link
    names: list[str] = []
    table = None
    if 0 < shstrndx < len(sections):
        sec = sections[shstrndx]
        table = _Strings(r, sec.offset, sec.size, ".shstrtab")
    for index in range(len(sections)):
        name_offset = r.at(r.L.word, sections.header_offset(index))[0]
        try:
            names.append(table.get(name_offset, "section name") if table is not None else "")
        except InputError:
            names.append("")
    comdat: set[int] = set()
    word = r.L.word
    for index in range(len(sections)):
        sec = sections[index]
        if sec.type != SHT_GROUP or sec.size < 4:
            continue
        r.check(sec.offset, sec.size, "section group (SHT_GROUP)")
        group = r.buf[sec.offset : sec.offset + sec.size // 4 * 4]
        entries = word.iter_unpack(group)
        (flags,) = next(entries)
        if not flags & GRP_COMDAT:
            continue
        comdat.update(member for (member,) in entries if 0 < member < len(sections))
    return tuple(names), frozenset(comdat)


def _locate_dynsym(
    r: _Reader,
    dyn: _Dynamic,
    segments: Sequence[_Segment],
    sections: _Sections,
    dynstr: _Strings,
) -> tuple[_Table | None, _Strings]:
    """Find .dynsym (offset, count) and the string table its names index into.

    Raises:
        InputError: inconsistent entry size, the table outside the file, or more
            than ``MAX_SYMBOLS`` entries.
    """
    ent = r.L.sym_size
    sec = sections.first(SHT_DYNSYM)
    if sec is not None and sec.type != SHT_NOBITS:
        if sec.entsize not in (0, ent):
            raise r.fail(f".dynsym sh_entsize {sec.entsize} is not {ent} bytes", sec.offset)
        if sec.size % ent:
            raise r.fail(f".dynsym size {sec.size} is not a multiple of {ent} bytes", sec.offset)
        r.check(sec.offset, sec.size, ".dynsym section")
        _check_symbol_count(r, sec.size // ent, sec.offset)
        strtab = dynstr
        if 0 < sec.link < len(sections) and sections[sec.link].type != SHT_NOBITS:
            link = sections[sec.link]
            if dyn.link != sec.link:
                strtab = _Strings(r, link.offset, link.size, ".dynsym string table")
        return _Table(sec.offset, sec.size // ent), strtab
    if dyn.symtab is None:
        return None, dynstr
    if dyn.syment not in (None, ent):
        raise r.fail(f"DT_SYMENT {dyn.syment} is not {ent} bytes")
    offset = _vaddr_to_offset(r, segments, dyn.symtab, "DT_SYMTAB")
    count = _count_from_hash(r, dyn, segments)
    if count is None:
        raise r.fail("no section headers and neither DT_HASH nor DT_GNU_HASH: cannot size DT_SYMTAB")
    r.check(offset, count * ent, "dynamic symbol table (DT_SYMTAB)")
    _check_symbol_count(r, count, offset)
    return _Table(offset, count), dynstr


def _check_symbol_count(r: _Reader, count: int, offset: int, what: str = "dynamic symbol table") -> None:
    if count > MAX_SYMBOLS:
        raise r.fail(f"{what} has {count} entries: more than linkaudit reads ({MAX_SYMBOLS})", offset)


def _count_from_hash(r: _Reader, dyn: _Dynamic, segments: Sequence[_Segment]) -> int | None:
    """Number of DT_SYMTAB entries, from DT_HASH's nchain or by walking DT_GNU_HASH (gABI; glibc dl-lookup.c)."""
    word = r.L.word
    if dyn.hash is not None:
        off = _vaddr_to_offset(r, segments, dyn.hash, "DT_HASH")
        _nbucket, nchain = r.unpack(word, off, "DT_HASH header")[0], r.unpack(word, off + 4, "DT_HASH header")[0]
        _check_symbol_count(r, nchain, off, "DT_HASH (nchain)")
        return int(nchain)
    if dyn.gnu_hash is None:
        return None
    off = _vaddr_to_offset(r, segments, dyn.gnu_hash, "DT_GNU_HASH")
    e = "<" if r.L.little else ">"
    nbuckets, symoffset, bloom_size, _shift = r.unpack(struct.Struct(e + "IIII"), off, "DT_GNU_HASH header")
    _check_symbol_count(r, nbuckets, off, "DT_GNU_HASH (nbuckets)")
    _check_symbol_count(r, symoffset, off, "DT_GNU_HASH (symoffset)")
    bloom_word = r.L.bits // 8
    buckets_off = off + 16 + bloom_size * bloom_word
    r.check(buckets_off, nbuckets * 4, "DT_GNU_HASH buckets")
    buckets = array.array("I")
    buckets.frombytes(bytes(r.buf[buckets_off : buckets_off + nbuckets * 4]))
    if r.L.little != _HOST_LITTLE:
        buckets.byteswap()
    last = max(buckets, default=0)
    if last < symoffset:
        return symoffset
    chains_off = buckets_off + nbuckets * 4
    # Walk the last bucket's chain until the entry with the stop bit; bounded by
    # the file size and by MAX_SYMBOLS.
    limit = min((r.size - chains_off) // 4, MAX_SYMBOLS - symoffset)
    i = last - symoffset
    while i < limit:
        n = min(1024, limit - i)  # chain words read a page or so at a time
        for k, (h,) in enumerate(word.iter_unpack(r.buf[chains_off + i * 4 : chains_off + (i + n) * 4])):
            if h & 1:
                return symoffset + i + k + 1
        i += n
    raise r.fail("DT_GNU_HASH chain runs past the end of the file or past the symbol limit", chains_off + i * 4)


def _read_symbols(
    r: _Reader,
    table: _Table | None,
    strings: _Strings,
    dyn: _Dynamic,
    segments: Sequence[_Segment],
    sections: _Sections,
    versions: dict[int, SymbolVersion],
) -> SymbolTable:
    if table is None or table.entries <= 1:
        return SymbolTable()
    ent = r.L.sym_size
    n = table.entries
    raw = bytes(r.buf[table.offset : table.offset + n * ent])
    swap = r.L.little != _HOST_LITTLE
    w32 = array.array("I")
    w32.frombytes(raw)
    w16 = array.array("H")
    w16.frombytes(raw)
    if swap:
        w32.byteswap()
        w16.byteswap()
    if ent == 24:
        # Elf64_Sym: st_name u32, st_info u8, st_other u8, st_shndx u16, st_value u64, st_size u64
        w64 = array.array("Q")
        w64.frombytes(raw)
        if swap:
            w64.byteswap()
        names = w32[6::6]
        info = array.array("B", raw[24 + 4 :: 24])
        other = array.array("B", raw[24 + 5 :: 24])
        shndx = w16[12 + 3 :: 12]
        values = w64[3 + 1 :: 3]
        sizes = w64[3 + 2 :: 3]
    else:
        # Elf32_Sym: st_name u32, st_value u32, st_size u32, st_info u8, st_other u8, st_shndx u16
        names = w32[4::4]
        values = array.array("Q", w32[4 + 1 :: 4])
        sizes = array.array("Q", w32[4 + 2 :: 4])
        info = array.array("B", raw[16 + 12 :: 16])
        other = array.array("B", raw[16 + 13 :: 16])
        shndx = w16[8 + 7 :: 8]
    strtab = _symbol_strtab(r, table, names, strings)
    _spend_symbol_names(r, table, names, strtab)
    versym = _read_versym(r, dyn, segments, sections, n) if versions else array.array("H")
    hash_table = _read_hash_table(r, dyn, segments, n)
    return SymbolTable(
        strtab=strtab,
        name_offsets=names,
        info=info,
        other=other,
        section=shndx,
        values=values,
        sizes=sizes,
        versym=versym,
        versions=MappingProxyType(versions),
        hash_table=hash_table,
    )


def _words(r: _Reader, offset: int, count: int) -> array.array[int] | None:
    """``count`` 32-bit words at ``offset`` in the file's byte order, or ``None`` past the end."""
    if offset < 0 or count < 0 or offset + count * 4 > r.size:
        return None
    words = array.array("I")
    words.frombytes(bytes(r.buf[offset : offset + count * 4]))
    if r.L.little != _HOST_LITTLE:
        words.byteswap()
    return words


def _gnu_chain_words(
    r: _Reader, offset: int, buckets: array.array[int], symoffset: int, count: int
) -> array.array[int] | None:
    """The ``DT_GNU_HASH`` chain words a lookup can reach: from ``symoffset`` to the end of the last
    bucket's run (its word with bit 0 set), as glibc walks them (``elf/dl-lookup.c``,
    ``do_lookup_x``); empty when every bucket is empty.  The table's size is written nowhere, and
    linkers leave the words past the last run out (a library exporting nothing has a bare header
    and buckets, ``.dynsym`` right after), so no more is read.  ``None`` when a bucket starts below
    ``symoffset`` or the last run does not end inside ``.dynsym``."""
    last = max(buckets)
    if last == 0:
        return array.array("I")
    if min(b for b in buckets if b) < symoffset:
        return None
    for index in range(last, count):
        word = _words(r, offset + (index - symoffset) * 4, 1)
        if word is None:
            return None
        if word[0] & 1:
            return _words(r, offset, index - symoffset + 1)
    return None


def _read_hash_table(r: _Reader, dyn: _Dynamic, segments: Sequence[_Segment], count: int) -> ElfHashTable | None:
    """The ``DT_GNU_HASH`` table over the ``count`` ``.dynsym`` entries, else the ``DT_HASH`` one.

    glibc's loader looks names up through ``DT_GNU_HASH`` when present (``elf/dl-lookup.c``,
    ``_dl_setup_hash``), else the gABI's ``DT_HASH``.  A table that does not fit the file or
    does not index the symbol table consistently (a bucket or chain outside ``.dynsym``, an
    ``nchain`` other than the symbol count) is left out: binding then uses the bulk name map.
    """
    try:
        if dyn.gnu_hash is not None:
            off = _vaddr_to_offset(r, segments, dyn.gnu_hash, "DT_GNU_HASH")
            header = _words(r, off, 4)
            if header is not None:
                nbuckets, symoffset, bloom_size, _shift = header
                buckets_off = off + 16 + bloom_size * (r.L.bits // 8)
                buckets = _words(r, buckets_off, nbuckets)
                if buckets is not None and nbuckets and max(buckets) < count and symoffset <= count:
                    chain = _gnu_chain_words(r, buckets_off + nbuckets * 4, buckets, symoffset, count)
                    if chain is not None:
                        return ElfHashTable(True, buckets, chain, symoffset)
        if dyn.hash is not None and r.L.word.size == 4:
            off = _vaddr_to_offset(r, segments, dyn.hash, "DT_HASH")
            header = _words(r, off, 2)
            if header is not None and header[0] and header[1] == count:
                words = _words(r, off + 8, header[0] + header[1])
                if words is not None and max(words) < count:
                    return ElfHashTable(False, words[: header[0]], words[header[0] :])
    except InputError:
        return None  # an address outside every PT_LOAD: no table to look names up in
    return None


def _symbol_strtab(r: _Reader, table: _Table, names: array.array[int], strings: _Strings) -> bytes:
    """The prefix of the string table that the symbol names use, copied (the model keeps it).

    Every name must start inside the table, end with a NUL inside it, and be at
    most ``MAX_STRING`` bytes long.

    Raises:
        InputError: a name offset outside the table, a name without its NUL, or
            a name longer than ``MAX_STRING`` bytes (the symbol and its offset named).
    """
    ent = r.L.sym_size
    if not names:
        return b""
    top = max(names)
    if top >= strings.size:
        bad = next(i for i, o in enumerate(names) if o >= strings.size)
        raise r.fail(
            f"symbol {bad + 1} name offset {names[bad]:#x} lies outside the dynamic string table ({strings.size} bytes)",
            table.offset + (bad + 1) * ent,
        )
    try:
        end = strings.end_of(top, f"symbol {names.index(top) + 1} name")
    except InputError as exc:
        exc.offset = table.offset + (names.index(top) + 1) * ent
        raise
    # Every name before the last one ends at a NUL no later than the last one's.
    blob = strings.prefix(end + 1)
    # A string longer than MAX_STRING covers a whole aligned block of MAX_STRING // 2
    # bytes: only a block without a NUL sends us down the exact (slow) path.
    half = MAX_STRING // 2
    find = blob.find
    if any(find(b"\0", k, k + half) < 0 for k in range(0, len(blob) - half + 1, half)):
        _check_name_lengths(r, table, names, blob)
    return blob


def _spend_symbol_names(r: _Reader, table: _Table, names: array.array[int], blob: bytes) -> None:
    """Count the symbol names against the file's names budget, each distinct offset once.

    Names that start a string of ``blob`` (the byte before them a NUL) spell at most ``blob``'s
    length together; only names into the middle of a string (a linker's tail merging; or 60,000
    suffixes of one 64 KiB string) are measured one by one.  Bulk operations throughout (the
    torch wheel's tables cost milliseconds).

    Raises:
        InputError: the names spell out more than the file's names budget (``_Reader.name_budget``) (with what was spent before).
    """
    if not names:
        return
    before = bytes(map((b"\0" + blob).__getitem__, names))  # the byte before each name
    inner = set(compress(names, before))
    what = f"{table.entries - 1} symbol names"
    left = r.name_budget() - r.spelled
    spent = _spelled(blob, inner, left, r, what)
    if spent + len(blob) > left:  # the bound on whole strings is not enough: measure them too
        spent += _spelled(blob, set(names) - inner, left - spent, r, what)
    else:
        spent += len(blob)
    r.spend(spent, what)


def _spelled(blob: bytes, offsets: set[int], limit: int, r: _Reader, what: str) -> int:
    """Bytes the names at ``offsets`` of ``blob`` spell, measured in slices; fails past ``limit``."""
    find, total, batch = blob.find, 0, sorted(offsets)
    for first in range(0, len(batch), 512):
        part = batch[first : first + 512]
        total += sum(map(find, repeat(b"\0"), part)) - sum(part)
        if total > limit:
            r.spend(total, what)  # past the budget: raises
    return total


def _check_name_lengths(r: _Reader, table: _Table, names: array.array[int], blob: bytes) -> None:
    """Fail on the first symbol whose name is longer than ``MAX_STRING`` bytes (the slow path: only when the table holds such a string)."""
    spans: list[tuple[int, int]] = []  # (start, end) of each string longer than MAX_STRING
    start = 0
    for part in blob.split(b"\0"):
        if len(part) > MAX_STRING:
            spans.append((start, start + len(part)))
        start += len(part) + 1
    starts = [s for s, _e in spans]
    for i, offset in enumerate(names):
        k = bisect.bisect_right(starts, offset) - 1
        if k >= 0 and spans[k][1] - offset > MAX_STRING:
            raise r.fail(
                f"symbol {i + 1} name at string-table offset {offset:#x} is longer than {MAX_STRING} bytes",
                table.offset + (i + 1) * r.L.sym_size,
            )


def _read_versym(
    r: _Reader, dyn: _Dynamic, segments: Sequence[_Segment], sections: _Sections, n: int
) -> array.array[int]:
    """The ``.gnu.version`` entries of symbols 1..n-1 (one per ``.dynsym`` entry).

    Raises:
        InputError: the table is shorter than ``.dynsym`` (its own section size
            when section headers exist, else the file) .
    """
    sec = sections.first(SHT_GNU_VERSYM)
    if sec is not None and sec.type != SHT_NOBITS:
        offset = sec.offset
        if sec.size < n * 2:
            raise r.fail(
                f".gnu.version holds {sec.size // 2} of the {n} entries .dynsym needs (one per symbol)", offset
            )
    elif dyn.versym is not None:
        offset = _vaddr_to_offset(r, segments, dyn.versym, "DT_VERSYM")
    else:
        return array.array("H")
    r.check(offset, n * 2, ".gnu.version (one entry per .dynsym symbol)")
    vs = array.array("H")
    vs.frombytes(r.buf[offset + 2 : offset + n * 2])
    if r.L.little != _HOST_LITTLE:
        vs.byteswap()
    return vs


# --- symbol versioning ----------------------------------------------------------


def _version_area(
    r: _Reader,
    sections: _Sections,
    segments: Sequence[_Segment],
    sh_type: int,
    addr: int | None,
    num: int | None,
    what: str,
) -> tuple[int, int, int] | None:
    """(offset, record count, byte limit) of .gnu.version_r / .gnu.version_d."""
    sec = sections.first(sh_type)
    if sec is not None and sec.type != SHT_NOBITS:
        r.check(sec.offset, sec.size, what)
        count = sec.info if sec.info else (num or 0)
        return sec.offset, count, sec.offset + sec.size
    if addr is None:
        return None
    offset = _vaddr_to_offset(r, segments, addr, what)
    return offset, num or 0, r.size


def _read_verneed(
    r: _Reader, dyn: _Dynamic, segments: Sequence[_Segment], sections: _Sections, strtab: _Strings
) -> tuple[tuple[VersionNeed, ...], dict[int, SymbolVersion]]:
    area = _version_area(r, sections, segments, SHT_GNU_VERNEED, dyn.verneed, dyn.verneednum, ".gnu.version_r")
    if area is None:
        return (), {}
    offset, count, limit = area
    vn, va = r.L.verneed, r.L.vernaux
    needs: list[VersionNeed] = []
    index: dict[int, SymbolVersion] = {}
    seen: set[int] = set()  # a chain that revisits a record loops
    visits = 0  # aux records read, over every record: chains shared between records count each time
    pos = came_from = offset
    # Follow vn_next until 0, as glibc's _dl_check_map_versions does (the record
    # count is not trusted); bounded because every record must be new and in the area,
    # and every aux record read counts against MAX_VERSION_RECORDS.
    while count:
        if pos in seen or pos < offset or pos + vn.size > limit:
            raise r.fail(_chain_escapes(".gnu.version_r record", pos), came_from)
        seen.add(pos)
        _count_record(r, len(seen), pos)
        _ver, cnt, vn_file, vn_aux, vn_next = r.unpack(vn, pos, "Verneed record")
        file = strtab.get(vn_file, "Verneed vn_file")
        entries: list[VersionNeedEntry] = []
        apos, aux_from = pos + vn_aux, pos
        aux_seen: set[int] = set()
        for _j in range(cnt):
            if apos in aux_seen or apos < offset or apos + va.size > limit:
                raise r.fail(_chain_escapes(".gnu.version_r Vernaux", apos), aux_from)
            aux_seen.add(apos)
            visits += 1
            _count_record(r, len(seen) + visits, apos)
            vna_hash, vna_flags, vna_other, vna_name, vna_next = r.unpack(va, apos, "Vernaux record")
            name = strtab.get(vna_name, "Vernaux vna_name")
            entries.append(VersionNeedEntry(name, vna_flags, vna_other, vna_hash))
            index[vna_other & 0x7FFF] = SymbolVersion(name, file)
            if vna_next == 0:
                break
            aux_from, apos = apos, apos + vna_next
        needs.append(VersionNeed(file, tuple(entries)))
        if vn_next == 0:
            break
        came_from, pos = pos, pos + vn_next
    return tuple(needs), index


def _chain_escapes(what: str, target: int) -> str:
    """The reason for a version chain that leaves its section or loops; the error's offset is the
    record whose link points at ``target`` (a link may point past the end of the file)."""
    return f"{what} chain runs outside its section or loops (a link points at 0x{target:x})"


def _count_record(r: _Reader, count: int, offset: int) -> None:
    if count > MAX_VERSION_RECORDS:
        raise r.fail(f"more than {MAX_VERSION_RECORDS} symbol-version records (real binaries have hundreds)", offset)


def _read_verdef(
    r: _Reader, dyn: _Dynamic, segments: Sequence[_Segment], sections: _Sections, strtab: _Strings
) -> tuple[tuple[VersionDefinition, ...], dict[int, SymbolVersion]]:
    area = _version_area(r, sections, segments, SHT_GNU_VERDEF, dyn.verdef, dyn.verdefnum, ".gnu.version_d")
    if area is None:
        return (), {}
    offset, count, limit = area
    vd, vda = r.L.verdef, r.L.verdaux
    defs: list[VersionDefinition] = []
    index: dict[int, SymbolVersion] = {}
    seen: set[int] = set()
    visits = 0  # aux records read, over every record (see _read_verneed)
    pos = came_from = offset
    while count:
        if pos in seen or pos < offset or pos + vd.size > limit:
            raise r.fail(_chain_escapes(".gnu.version_d record", pos), came_from)
        seen.add(pos)
        _count_record(r, len(seen), pos)
        _ver, flags, ndx, cnt, _hash, vd_aux, vd_next = r.unpack(vd, pos, "Verdef record")
        names: list[str] = []
        apos, aux_from = pos + vd_aux, pos
        aux_seen: set[int] = set()
        for _j in range(cnt):
            if apos in aux_seen or apos < offset or apos + vda.size > limit:
                raise r.fail(_chain_escapes(".gnu.version_d Verdaux", apos), aux_from)
            aux_seen.add(apos)
            visits += 1
            _count_record(r, len(seen) + visits, apos)
            vda_name, vda_next = r.unpack(vda, apos, "Verdaux record")
            names.append(strtab.get(vda_name, "Verdaux vda_name"))
            if vda_next == 0:
                break
            aux_from, apos = apos, apos + vda_next
        if names:
            defs.append(VersionDefinition(names[0], ndx, flags, tuple(names[1:])))
            index[ndx & 0x7FFF] = SymbolVersion(names[0], None)
        if vd_next == 0:
            break
        came_from, pos = pos, pos + vd_next
    return tuple(defs), index


# --- classification -------------------------------------------------------------


def _machine_name(e_machine: int, layout: _Layout) -> str:
    name = MACHINES.get(e_machine)
    if name is None:
        return f"unknown({e_machine})"
    if name == "ppc64" and layout.little:
        return "ppc64le"
    if name == "s390" and layout.bits == 64:
        return "s390x"
    if name == "mips" and layout.bits == 64:
        return "mips64el" if layout.little else "mips64"
    if name == "mips" and layout.little:
        return "mipsel"
    if name == "riscv":
        return f"riscv{layout.bits}"
    if name == "loongarch":
        return f"loongarch{layout.bits}"
    return name


def _libc(interpreter: str | None, needed: Sequence[NeededLibrary], soname: str | None = None) -> Libc:
    """The C library from PT_INTERP, else from the file's own SONAME (ld.so and libc.so.6 themselves), else DT_NEEDED."""
    if interpreter:
        base = interpreter.rsplit("/", 1)[-1]
        if base.startswith("ld-musl"):
            return Libc.MUSL
        if base.startswith(("ld-linux", "ld64.so", "ld.so")):
            return Libc.GLIBC
    if soname:
        if soname.startswith("ld-musl") or soname.startswith("libc.musl-"):
            return Libc.MUSL
        if soname.startswith(("ld-linux", "ld64.so.")) or soname == "libc.so.6":
            return Libc.GLIBC
    for n in needed:
        if n.name == "libc.so.6":
            return Libc.GLIBC
        if n.name.startswith("libc.musl-") or n.name == "libc.so":
            return Libc.MUSL
    return Libc.UNKNOWN


def _kind(path: str, e_type: int, interpreter: str | None, soname: str | None, flags_1: int, symstr: bytes) -> Kind:
    if e_type == ET_REL:
        return Kind.RELOCATABLE
    if e_type == ET_EXEC:
        return Kind.EXECUTABLE
    if e_type == ET_CORE:
        return Kind.CORE
    if e_type != ET_DYN:
        return Kind.OTHER
    base = path.rsplit("/", 1)[-1]
    module = base.split(".", 1)[0]
    if PYEXT_SUFFIX.search(base) or (
        module and b"\0PyInit_" + module.encode("utf-8", "surrogateescape") + b"\0" in symstr
    ):
        return Kind.PYTHON_EXTENSION
    if flags_1 & DF_1_PIE or (interpreter is not None and soname is None):
        return Kind.PIE_EXECUTABLE
    return Kind.SHARED_LIBRARY
