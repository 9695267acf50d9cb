"""COFF reader: Windows object files (``.obj``) and the short import members of import libraries.

What the Windows linker reads, in the PE/COFF specification's own terms (Microsoft, "PE Format":
"COFF File Header (Object and Image)", "Section Table (Section Headers)", "COFF Symbol Table",
"Auxiliary Symbol Records", "COMDAT Sections (Object Only)", "The .drectve Section (Object Only)",
"Import Library Format"; ``ANON_OBJECT_HEADER_BIGOBJ`` from ``winnt.h``):

* the file header — the regular 20-byte ``IMAGE_FILE_HEADER`` or, for ``/bigobj`` objects, the
  56-byte ``ANON_OBJECT_HEADER_BIGOBJ`` (``Sig1`` 0, ``Sig2`` 0xFFFF, ``Version`` >= 2, the class
  id below), whose symbol records are 20 bytes with a 32-bit section number;
* the section table, with each COMDAT section's selection from its section-definition aux record;
* the symbol table: external definitions, references (section 0, value 0), common symbols
  (section 0, value > 0: the size), weak externals (``IMAGE_SYM_CLASS_WEAK_EXTERNAL``: the
  alternate symbol and the search characteristics of their aux record);
* the ``.drectve`` section's linker directives (``/DEFAULTLIB``, ``/INCLUDE``, ``/EXPORT``...);
* for x86, each external name undecorated (``_name``, ``_name@N``, ``@name@N``, ``name@@N``).

A short import member (``IMPORT_OBJECT_HEADER``: ``Sig1`` 0, ``Sig2`` 0xFFFF, ``Version`` 0) is
read by ``read_import_member``: the symbol, the DLL, the import type and name type.

Every fault is an ``InputError`` naming the file and the offset; counts are held to budgets.
"""

from __future__ import annotations

import enum
import struct
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import replace

from ..errors import InputError, shown
from ..model import (
    NOT_ELF,
    Binary,
    Binding,
    ComdatSection,
    Endian,
    Format,
    Kind,
    Symbol,
    SymbolTable,
    SymbolType,
    Visibility,
    WeakExternal,
    linked_symbol,
)
from ..records import dataclass
from .filebytes import Buffer

#: IMAGE_FILE_HEADER.Machine -> name (PE format specification, "Machine Types"; names as ``pe.py``'s).
MACHINES = {
    0x14C: "i386",
    0x8664: "x86-64",
    0xAA64: "aarch64",
    0xA641: "arm64ec",
    0xA64E: "arm64x",
    0x1C4: "arm",
}
_BITS = {0x14C: 32, 0x1C4: 32}
#: ``ANON_OBJECT_HEADER_BIGOBJ.ClassID`` (winnt.h), as stored (a GUID in its little-endian layout).
BIGOBJ_CLASS_ID = bytes.fromhex("c7a1bad1eebaa94baf20faf66aa4dcb8")
FILE_HEADER = 20
BIGOBJ_HEADER = 56
SECTION_HEADER = 40
IMPORT_HEADER = 20
#: Budgets: no real object comes near them (a /bigobj of a large C++ unit has ~10^5 sections).
MAX_SECTIONS = 1 << 22
MAX_SYMBOLS = 1 << 24
MAX_NAME = 1 << 16
MAX_DIRECTIVES = 1 << 16
MAX_RELOCATIONS = 1 << 24
#: ... and, all sections together, at most one relocation record per ``RELOCATION`` bytes of the file
#: (at least ``RELOCATION_FLOOR``): a record (``IMAGE_RELOCATION``) takes 10 bytes of its own,
#: while 1,000 section headers sharing one block of 6,000 records spelled 6 million from 100 KB
#: (634 MB; 3,000 x 20,000 from 320 KB ran out of memory).
RELOCATION = 10
RELOCATION_FLOOR = 65_536
#: ... and the string-table names of the section headers and symbol records together, at most
#: ``NAME_SLACK`` + ``NAME_RATIO`` bytes per byte of the file: in a real object a name serves at
#: most a few records (a section header, its section symbol, a function named by its tail), while
#: 2,000 symbol records naming one 65,000-byte string spelled 130 MB from 101 KB (407 MB).
NAME_SLACK = 1 << 20
NAME_RATIO = 4

#: Section characteristics (PE format specification, "Section Flags").
IMAGE_SCN_LNK_INFO = 0x200
IMAGE_SCN_LNK_REMOVE = 0x800
IMAGE_SCN_LNK_COMDAT = 0x1000
IMAGE_SCN_LNK_NRELOC_OVFL = 0x01000000
#: Special section numbers of a symbol.
IMAGE_SYM_UNDEFINED, IMAGE_SYM_ABSOLUTE, IMAGE_SYM_DEBUG = 0, -1, -2


class StorageClass(enum.IntEnum):
    """``IMAGE_SYM_CLASS_*`` values a link depends on (the others are kept as raw ints)."""

    EXTERNAL = 2
    STATIC = 3
    LABEL = 6
    FUNCTION = 101
    FILE = 103
    SECTION = 104
    WEAK_EXTERNAL = 105


class ComdatSelection(enum.IntEnum):
    """``IMAGE_COMDAT_SELECT_*``: what the linker does with several COMDAT sections of one symbol."""

    NODUPLICATES = 1
    ANY = 2
    SAME_SIZE = 3
    EXACT_MATCH = 4
    ASSOCIATIVE = 5
    LARGEST = 6


class WeakSearch(enum.IntEnum):
    """A weak external's aux ``Characteristics`` (``IMAGE_WEAK_EXTERN_*``; 4 is an anti-dependency)."""

    NOLIBRARY = 1
    LIBRARY = 2
    ALIAS = 3
    ANTI_DEPENDENCY = 4


class ImportType(enum.IntEnum):
    """``IMPORT_OBJECT_HEADER.Type``: ``IMPORT_OBJECT_CODE`` / ``_DATA`` / ``_CONST``."""

    CODE = 0
    DATA = 1
    CONST = 2


class ImportNameType(enum.IntEnum):
    """``IMPORT_OBJECT_HEADER.NameType``: how the name in the DLL follows from the symbol."""

    ORDINAL = 0
    NAME = 1
    NAME_NOPREFIX = 2
    NAME_UNDECORATE = 3
    NAME_EXPORTAS = 4


@dataclass(frozen=True, slots=True)
class CoffSection:
    """One section header of an object (1-based ``number``, as symbols name it).

    Attributes:
        number: the section number (1 for the first header).
        name: the name (``/N`` long names resolved through the string table).
        characteristics: ``Characteristics`` flags.
        size: ``SizeOfRawData``, bytes.
        offset: ``PointerToRawData``, a file offset (0 for uninitialised data).
        comdat: the COMDAT selection when the section is a COMDAT (``IMAGE_SCN_LNK_COMDAT``) and its
            section-definition aux record says one, else ``None``.
        associated: for ``ASSOCIATIVE``, the number of the section it goes with; else 0.
        relocations: ``(offset in the section, symbol index)`` of each relocation, in order.
        checksum: a COMDAT's aux ``CheckSum`` (the CRC of its data; ``EXACT_MATCH`` compares it), else 0.
    """

    number: int
    name: str
    characteristics: int
    size: int
    offset: int
    comdat: ComdatSelection | int | None = None
    associated: int = 0
    relocations: tuple[tuple[int, int], ...] = ()
    checksum: int = 0


@dataclass(frozen=True, slots=True)
class CoffSymbol:
    """One symbol record (aux records folded in).

    Attributes:
        index: its index in the symbol table (aux records count), as relocations name it.
        name: the name as stored (decorated).
        value: ``Value`` (an offset in its section; a common symbol's size).
        section: ``SectionNumber`` (0 undefined, -1 absolute, -2 debug, else 1-based).
        storage_class: ``StorageClass``, or the raw value.
        type: ``Type`` (0x20: a function).
        undecorated: the name without x86 decoration (the name itself elsewhere).
        alternate: a weak external's alternate symbol (its aux ``TagIndex``), else ``None``.
        search: a weak external's aux characteristics, else ``None``.
    """

    index: int
    name: str
    value: int
    section: int
    storage_class: StorageClass | int
    type: int
    undecorated: str
    alternate: str | None = None
    search: WeakSearch | int | None = None

    @property
    def external(self) -> bool:
        """True for ``EXTERNAL`` and ``WEAK_EXTERNAL`` symbols (the ones a link resolves)."""
        return self.storage_class in (StorageClass.EXTERNAL, StorageClass.WEAK_EXTERNAL)

    @property
    def undefined(self) -> bool:
        """An external reference: section 0, value 0, class ``EXTERNAL`` (weak externals too)."""
        return self.external and self.section == IMAGE_SYM_UNDEFINED and (self.value == 0 or self.weak)

    @property
    def common(self) -> bool:
        """A common symbol: ``EXTERNAL``, section 0, value > 0 (the size the linker allocates)."""
        return self.storage_class == StorageClass.EXTERNAL and self.section == 0 and self.value > 0

    @property
    def weak(self) -> bool:
        """``IMAGE_SYM_CLASS_WEAK_EXTERNAL``."""
        return self.storage_class == StorageClass.WEAK_EXTERNAL


@dataclass(frozen=True, slots=True)
class Directive:
    """One linker directive of ``.drectve``: ``/DEFAULTLIB:foo.lib`` is ``("DEFAULTLIB", "foo.lib")``.

    Attributes:
        option: the option name, upper-cased, without its ``/`` or ``-``.
        argument: what follows the first ``:`` (quotes removed), ``""`` when nothing does.
    """

    option: str
    argument: str


@dataclass(frozen=True, slots=True)
class CoffObject:
    """One COFF object file as read.

    Attributes:
        machine: the machine's name (``"x86-64"``), ``"unknown(0x...)"`` for an unlisted one.
        machine_id: the raw ``Machine`` value.
        bigobj: True for the ``ANON_OBJECT_HEADER_BIGOBJ`` layout.
        sections: the section headers in order.
        symbols: every symbol record (aux records folded in), in table order.
        directives: the ``.drectve`` directives in order.
        idata_dll: the DLL an import-descriptor tail names: the NUL-ended string of its ``.idata$7``
            section when a symbol defined there ends ``_iname`` (GNU ``dlltool``'s long import
            format); else ``None``.
    """

    machine: str
    machine_id: int
    bigobj: bool
    sections: tuple[CoffSection, ...]
    symbols: tuple[CoffSymbol, ...]
    directives: tuple[Directive, ...]
    idata_dll: str | None = None

    def iter_externals(self) -> Iterator[CoffSymbol]:
        """Yield the external symbols (definitions, references, common and weak ones), in order."""
        return (s for s in self.symbols if s.external)

    def references(self) -> tuple[tuple[str, str], ...]:
        """``(symbol, function)`` for each external reference a relocation makes from inside a function
        (the function symbol — ``Type`` 0x20 — of the relocated section at the highest value not past
        the relocation), each pair once, in section order: what link.exe's LNK2019 calls "referenced in
        function".  References from outside any function (data, vtables) are left out.  Each
        relocation's function is found by binary search: time ``R log F`` for ``R`` relocations and
        ``F`` functions in a section (a scan per relocation took 11 s for 20,000 of each)."""
        by_index = {s.index: s for s in self.symbols}
        functions: dict[int, list[CoffSymbol]] = {}
        for s in self.symbols:
            if s.section > 0 and s.type >> 4 == 2:
                functions.setdefault(s.section, []).append(s)
        out: dict[tuple[str, str], None] = {}
        for section in self.sections:
            candidates = sorted(functions.get(section.number, []), key=lambda f: f.value)
            values = [f.value for f in candidates]
            for offset, index in section.relocations:
                target = by_index.get(index)
                if target is None or not (target.undefined or target.common):
                    continue
                before = bisect_right(values, offset)  # functions at or below the offset
                if before:
                    out[(target.name, candidates[before - 1].name)] = None
        return tuple(out)


def is_coff_object(head: bytes) -> bool:
    """True when ``head`` (at least 4 bytes) starts a COFF object or an import member: a known
    ``Machine`` with a section count below 0xFFFF, or ``Sig1`` 0 / ``Sig2`` 0xFFFF."""
    if len(head) < 4:
        return False
    machine, second = struct.unpack_from("<HH", head)
    if machine == 0 and second == 0xFFFF:
        return True
    return machine in MACHINES and second != 0xFFFF


def is_import_member(head: bytes) -> bool:
    """True when ``head`` starts an ``IMPORT_OBJECT_HEADER`` (``Sig1`` 0, ``Sig2`` 0xFFFF, ``Version`` 0)."""
    return len(head) >= 6 and struct.unpack_from("<HHH", head) == (0, 0xFFFF, 0)


def undecorate(name: str, machine_id: int) -> str:
    """The C name behind an x86 decorated name (Microsoft "Argument Passing and Naming Conventions").

    i386: ``_name`` (cdecl) and ``_name@N`` (stdcall) -> ``name``; ``@name@N`` (fastcall) -> ``name``;
    every machine: ``name@@N`` (vectorcall) -> ``name``.  An ``__imp_`` prefix is kept in front of the
    undecorated rest; C++ names (``?...``) are returned as they are.
    """
    prefix = ""
    if name.startswith("__imp_"):
        prefix, name = "__imp_", name[6:]
    if name.startswith("?"):
        return prefix + name
    head, sep, tail = name.rpartition("@@")
    if sep and head and tail.isdigit():
        return prefix + head
    if machine_id != 0x14C:
        return prefix + name
    if name.startswith(("_", "@")):
        core = name[1:]
        head, sep, tail = core.rpartition("@")
        if sep and head and tail.isdigit():
            return prefix + head
        if name[0] == "_":
            return prefix + core
    return prefix + name


def read_coff(path: str, buf: Buffer, size: int) -> CoffObject:
    """Parse one COFF object (regular or ``/bigobj``).

    Args:
        path: the path to report.
        buf: the object's bytes (``bytes`` or ``FileBytes``).
        size: its size, bytes.

    Raises:
        InputError: a header, section table, symbol table, string table or ``.drectve`` outside the
            file, a name past the string table, an aux record count past the table's end, a count
            over its budget (sections, symbols, relocation records, bytes of names: see the budgets
            above), an optional header (an image, not an object).
    """
    reader = _Reader(path, buf, size)
    return reader.read()


class _Reader:
    """The state of one object's reading: the file, the header fields, the string table."""

    def __init__(self, path: str, buf: Buffer, size: int) -> None:
        self.path, self.buf, self.size = path, buf, size
        self.strtab = b""
        self.relocated = 0  # relocation records read so far, all sections together
        self.spelled = 0  # bytes of string-table names read so far, every use counted

    def bytes_at(self, offset: int, length: int, what: str) -> bytes:
        """``length`` bytes at ``offset``; an ``InputError`` naming ``what`` when they leave the file."""
        if offset < 0 or length < 0 or offset + length > self.size:
            raise InputError(self.path, f"{what} ({length} bytes) runs past the end of the file", offset)
        return bytes(self.buf[offset : offset + length])

    def header(self) -> tuple[int, bool, int, int, int, int]:
        """``(machine, bigobj, sections, symtab offset, symbols, section table offset)``."""
        head = self.bytes_at(0, FILE_HEADER, "COFF file header")
        sig1, sig2, version = struct.unpack_from("<HHH", head)
        if sig1 == 0 and sig2 == 0xFFFF:
            big = self.bytes_at(0, BIGOBJ_HEADER, "ANON_OBJECT_HEADER_BIGOBJ")
            if version < 2 or big[12:28] != BIGOBJ_CLASS_ID:
                raise InputError(self.path, f"anonymous COFF object (version {version}) is not a /bigobj object", 0)
            machine = struct.unpack_from("<H", big, 6)[0]
            nsections, symtab, nsymbols = struct.unpack_from("<III", big, 44)
            return machine, True, nsections, symtab, nsymbols, BIGOBJ_HEADER
        machine, nsections, _stamp, symtab, nsymbols, optional, _chars = struct.unpack_from("<HHIIIHH", head)
        if optional:
            raise InputError(self.path, f"COFF object with a {optional}-byte optional header (an image?)", 16)
        return machine, False, nsections, symtab, nsymbols, FILE_HEADER

    def read(self) -> CoffObject:
        """The whole object (see ``read_coff``)."""
        machine_id, bigobj, nsections, symtab, nsymbols, table = self.header()
        if nsections > MAX_SECTIONS:
            raise InputError(self.path, f"{nsections} sections: more than {MAX_SECTIONS}", 2)
        if nsymbols > MAX_SYMBOLS:
            raise InputError(self.path, f"{nsymbols} symbols: more than {MAX_SYMBOLS}", 12)
        record = 20 if bigobj else 18
        symbols_raw = b""
        if symtab:
            symbols_raw = self.bytes_at(symtab, nsymbols * record, f"symbol table of {nsymbols} records")
            self.strtab = self.string_table(symtab + nsymbols * record)
        sections = self.sections(table, nsections)
        symbols, aux = self.symbols(symbols_raw, record, machine_id, nsymbols, symtab)
        sections = _with_comdat(sections, aux)
        machine = MACHINES.get(machine_id, f"unknown({machine_id:#x})")
        directives = parse_directives(self.path, self.drectve(sections, table))
        return CoffObject(machine, machine_id, bigobj, sections, symbols, directives, self.idata_dll(sections, symbols))

    def drectve(self, sections: tuple[CoffSection, ...], table: int) -> bytes:
        """The bytes of the ``.drectve`` sections (``IMAGE_SCN_LNK_INFO``), in order (Microsoft PE/COFF,
        "The .drectve Section (Object Only)"); ``table``: the section table's file offset.

        Raises:
            InputError: a section outside the file, or the sections together longer than the file
                (each one's data is its own: section headers sharing one block of directives).
        """
        parts, total = [], 0
        for s in sections:
            if s.name == ".drectve" and s.characteristics & IMAGE_SCN_LNK_INFO:
                total += s.size
                if total > self.size:
                    where = table + (s.number - 1) * SECTION_HEADER
                    raise InputError(
                        self.path,
                        f"the .drectve sections add up to more than the file's {self.size} bytes "
                        "(section headers sharing one block of directives?)",
                        where,
                    )
                parts.append(self.bytes_at(s.offset, s.size, ".drectve section"))
        return b"".join(parts)

    def idata_dll(self, sections: tuple[CoffSection, ...], symbols: tuple[CoffSymbol, ...]) -> str | None:
        """The DLL name of a GNU import library's tail object (see ``CoffObject.idata_dll``)."""
        tails = {s.section for s in symbols if s.external and s.section > 0 and s.name.endswith("_iname")}
        for section in sections:
            if section.number in tails and section.name == ".idata$7" and section.offset:
                data = self.bytes_at(section.offset, min(section.size, MAX_NAME), ".idata$7 section")
                return data.split(b"\0", 1)[0].decode("utf-8", "surrogateescape") or None
        return None

    def string_table(self, offset: int) -> bytes:
        """The string table after the symbol table (its first 4 bytes count themselves); may be absent."""
        if offset + 4 > self.size:
            return b""
        length = struct.unpack("<I", self.bytes_at(offset, 4, "string table size"))[0]
        if length < 4:
            return b""
        return self.bytes_at(offset, length, "string table")

    def string(self, offset: int, where: int) -> str:
        """The NUL-terminated name at string-table ``offset`` (``where``: the referring file offset).

        Every name read counts against the file's names budget: ``NAME_SLACK`` + ``NAME_RATIO``
        bytes per byte of the file (Microsoft PE/COFF, "COFF String Table": a name longer than 8
        bytes is stored there and named by its offset, so records can share one).

        Raises:
            InputError: the offset outside the string table, a name over ``MAX_NAME`` bytes, or the
                names read so far spelling out more than the budget (records naming one long string).
        """
        if offset < 4 or offset >= len(self.strtab):
            raise InputError(self.path, f"name at string-table offset {offset} lies outside the string table", where)
        end = self.strtab.find(b"\0", offset, offset + MAX_NAME + 1)
        if end < 0:
            end = len(self.strtab)
        if end - offset > MAX_NAME:
            raise InputError(self.path, f"a name longer than {MAX_NAME} bytes", where)
        self.spelled += end - offset
        limit = NAME_SLACK + NAME_RATIO * self.size
        if self.spelled > limit:
            raise InputError(
                self.path,
                f"the names of the sections and symbols spell out more than {limit} bytes from {self.size}, "
                "more than any real object's (records naming one long string of the string table?)",
                where,
            )
        return self.strtab[offset:end].decode("utf-8", "surrogateescape")

    def sections(self, table: int, count: int) -> tuple[CoffSection, ...]:
        """The section headers at ``table``."""
        raw = self.bytes_at(table, count * SECTION_HEADER, f"section table of {count} headers")
        out = []
        for i in range(count):
            at = i * SECTION_HEADER
            short = raw[at : at + 8].rstrip(b"\0")
            size, offset, relocs_at = struct.unpack_from("<III", raw, at + 16)
            nrelocs = struct.unpack_from("<H", raw, at + 32)[0]
            characteristics = struct.unpack_from("<I", raw, at + 36)[0]
            name = self.section_name(short, table + at)
            relocations = self.relocations(relocs_at, nrelocs, characteristics, table + at)
            out.append(CoffSection(i + 1, name, characteristics, size, offset, relocations=relocations))
        return tuple(out)

    def relocations(self, offset: int, count: int, characteristics: int, where: int) -> tuple[tuple[int, int], ...]:
        """``(offset, symbol index)`` of a section's relocation records (10 bytes each); with
        ``IMAGE_SCN_LNK_NRELOC_OVFL`` the count is the first record's ``VirtualAddress`` (that record
        counts itself).  Microsoft PE/COFF, "COFF Relocations (Object Only)".

        Raises:
            InputError: the records leave the file, more than ``MAX_RELOCATIONS`` of them, or the
                sections' records together more than one per ``RELOCATION`` bytes of the file (at
                least ``RELOCATION_FLOOR``: section headers sharing one block of records).
        """
        if not count:
            return ()
        if characteristics & IMAGE_SCN_LNK_NRELOC_OVFL and count == 0xFFFF:
            count = struct.unpack("<I", self.bytes_at(offset, 4, "relocation count"))[0]
        if count > MAX_RELOCATIONS:
            raise InputError(self.path, f"{count} relocations in one section: more than {MAX_RELOCATIONS}", where)
        self.relocated += count
        limit = max(RELOCATION_FLOOR, self.size // RELOCATION)
        if self.relocated > limit:
            raise InputError(
                self.path,
                f"the sections' relocation records add up to more than {limit} in {self.size} bytes (a record "
                f"takes {RELOCATION} bytes of its own: section headers sharing one block of records?)",
                where,
            )
        raw = self.bytes_at(offset, count * 10, f"{count} relocation records")
        return tuple((at, index) for at, index, _type in struct.iter_unpack("<IIH", raw))

    def section_name(self, short: bytes, where: int) -> str:
        """A section header's name: inline, ``/N`` (decimal) or ``//B`` (base 64) into the string table."""
        if short.startswith(b"//"):
            value = 0
            for c in short[2:].decode("ascii", "replace"):
                digit = _BASE64.find(c)
                if digit < 0:
                    raise InputError(self.path, f"section name {shown(short.decode('latin-1'))} is not base 64", where)
                value = value * 64 + digit
            return self.string(value, where)
        if short.startswith(b"/") and short[1:].isdigit():
            return self.string(int(short[1:]), where)
        return short.decode("utf-8", "surrogateescape")

    def symbols(
        self, raw: bytes, record: int, machine_id: int, count: int, symtab: int
    ) -> tuple[tuple[CoffSymbol, ...], dict[int, tuple[int, int, int, int]]]:
        """The symbol records of ``raw`` and the section-definition aux records by section number
        (``(selection, associated section, length, checksum)``)."""
        # a regular object's SectionNumber is 16 bits: 1..0xFEFF a section (MSVC's limit, 65,279),
        # 0xFFFF absolute (-1), 0xFFFE debug (-2); /bigobj's is 32 bits, signed (PE/COFF spec)
        section_format = "<i" if record == 20 else "<H"
        out: list[CoffSymbol] = []
        weak_tags: list[tuple[int, int, int]] = []  # (position in out, tag index, characteristics)
        section_aux: dict[int, tuple[int, int, int, int]] = {}
        names: dict[int, str] = {}
        i = 0
        while i < count:
            at = i * record
            where = symtab + at
            name = self.symbol_name(raw[at : at + 8], where)
            value = struct.unpack_from("<I", raw, at + 8)[0]
            section = struct.unpack_from(section_format, raw, at + 12)[0]
            if record == 18 and section >= 0xFFFE:
                section -= 0x10000
            rest = at + (16 if record == 20 else 14)
            sym_type, storage, naux = struct.unpack_from("<HBB", raw, rest)
            if naux and i + naux >= count:
                raise InputError(self.path, f"symbol {i} claims {naux} aux records past the table's end", where)
            aux = raw[at + record : at + record + 18] if naux else b""
            klass: StorageClass | int = _CLASSES.get(storage, storage)
            if klass == StorageClass.WEAK_EXTERNAL and naux:
                tag, chars = struct.unpack_from("<II", aux)
                weak_tags.append((len(out), tag, chars))
            elif klass == StorageClass.STATIC and naux and section > 0 and value == 0:
                length, _relocs, _lines, checksum, number, selection = struct.unpack_from("<IHHIHB", aux)
                high = struct.unpack_from("<H", aux, 15)[0] if record == 20 else 0
                section_aux.setdefault(section, (selection, number | high << 16, length, checksum))
            names[i] = name
            out.append(CoffSymbol(i, name, value, section, klass, sym_type, undecorate(name, machine_id)))
            i += 1 + naux
        for position, tag, chars in weak_tags:
            symbol = out[position]
            if tag not in names:
                raise InputError(
                    self.path, f"weak external {shown(symbol.name)} names symbol {tag}, not a symbol", symtab
                )
            out[position] = _replace_weak(symbol, names[tag], _SEARCH.get(chars, chars))
        return tuple(out), section_aux

    def symbol_name(self, short: bytes, where: int) -> str:
        """A symbol's name: inline (8 bytes, NUL-padded) or, when its first 4 bytes are 0, in the string table."""
        if short[:4] == b"\0\0\0\0":
            return self.string(struct.unpack_from("<I", short, 4)[0], where)
        return short.rstrip(b"\0").decode("utf-8", "surrogateescape")


_BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_CLASSES = {c.value: c for c in StorageClass}
_SEARCH = {c.value: c for c in WeakSearch}
_SELECTIONS = {c.value: c for c in ComdatSelection}


def _replace_weak(symbol: CoffSymbol, alternate: str, search: WeakSearch | int) -> CoffSymbol:
    return CoffSymbol(
        symbol.index, symbol.name, symbol.value, symbol.section, symbol.storage_class, symbol.type,
        symbol.undecorated, alternate, search,
    )  # fmt: skip


def _with_comdat(
    sections: tuple[CoffSection, ...], aux: dict[int, tuple[int, int, int, int]]
) -> tuple[CoffSection, ...]:
    """``sections`` with the COMDAT selection (associated section, checksum) of their definition aux records."""
    out = []
    for s in sections:
        found = aux.get(s.number)
        if s.characteristics & IMAGE_SCN_LNK_COMDAT and found is not None:
            selection, number, _length, checksum = found
            associated = number if selection == ComdatSelection.ASSOCIATIVE else 0
            s = CoffSection(
                s.number,
                s.name,
                s.characteristics,
                s.size,
                s.offset,
                _SELECTIONS.get(selection, selection),
                associated,
                s.relocations,
                checksum,
            )
        out.append(s)
    return tuple(out)


def parse_directives(path: str, data: bytes) -> tuple[Directive, ...]:
    """The directives of a ``.drectve`` section: options separated by blanks, each ``/NAME`` or
    ``-NAME`` with an optional ``:argument``; double quotes group blanks into one argument
    (``/DEFAULTLIB:"my lib.lib"``).  A UTF-8 byte-order mark and NUL padding are skipped.

    Raises:
        InputError: more than ``MAX_DIRECTIVES`` directives.
    """
    text = data.decode("utf-8", "surrogateescape").lstrip("\ufeff").replace("\0", " ")
    out: list[Directive] = []
    for token in _tokens(text):
        if len(out) >= MAX_DIRECTIVES:
            raise InputError(path, f".drectve holds more than {MAX_DIRECTIVES} directives")
        body = token[1:] if token[:1] in ("/", "-") else token
        option, _sep, argument = body.partition(":")
        out.append(Directive(option.upper(), argument))
    return tuple(out)


def _tokens(text: str) -> Iterator[str]:
    """Blank-separated tokens of ``text``, double quotes grouping (and removed)."""
    current: list[str] = []
    quoted = False
    started = False
    for c in text:
        if c == '"':
            quoted = not quoted
            started = True
        elif c in " \t\r\n" and not quoted:
            if started:
                yield "".join(current)
            current, started = [], False
        else:
            current.append(c)
            started = True
    if started:
        yield "".join(current)


@dataclass(frozen=True, slots=True)
class ImportMember:
    """One short import member of an import library (``IMPORT_OBJECT_HEADER`` and its two or three names).

    Attributes:
        machine: the machine's name; ``machine_id`` its raw value.
        symbol: the public symbol the member defines (decorated, as the objects reference it).
        dll: the DLL that exports it.
        type: code, data or const.
        name_type: how the name in the DLL is derived (``import_name``).
        hint: ``OrdinalHint``: the ordinal for ``ORDINAL``, else the hint.
        export_as: the third name, for ``NAME_EXPORTAS``; else ``None``.
    """

    machine: str
    machine_id: int
    symbol: str
    dll: str
    type: ImportType | int
    name_type: ImportNameType | int
    hint: int
    export_as: str | None = None

    @property
    def import_name(self) -> str:
        """The name looked up in the DLL's export table, or ``#N`` for an import by ordinal
        (Microsoft's "Import Name Type": NOPREFIX drops a leading ``?``, ``@`` or ``_``;
        UNDECORATE also cuts at the first ``@``)."""
        if self.name_type == ImportNameType.ORDINAL:
            return f"#{self.hint}"
        if self.name_type == ImportNameType.NAME_EXPORTAS and self.export_as is not None:
            return self.export_as
        name = self.symbol
        if self.name_type in (ImportNameType.NAME_NOPREFIX, ImportNameType.NAME_UNDECORATE) and name[:1] in "?@_":
            name = name[1:]
        if self.name_type == ImportNameType.NAME_UNDECORATE:
            name = name.partition("@")[0]
        return name

    @property
    def defines(self) -> tuple[str, ...]:
        """The symbols a link can resolve to this member: ``__imp_`` + symbol always; the symbol
        itself (the jump thunk, or the constant) for code and const imports."""
        imp = "__imp_" + self.symbol
        return (imp,) if self.type == ImportType.DATA else (self.symbol, imp)


_IMPORT_TYPES = {t.value: t for t in ImportType}
_NAME_TYPES = {t.value: t for t in ImportNameType}


def read_import_member(path: str, data: bytes) -> ImportMember:
    """Parse a short import member (the whole member's ``data``).

    Raises:
        InputError: shorter than its header, a ``SizeOfData`` past the member, names that are not
            NUL-terminated inside it, a name over ``MAX_NAME`` bytes.
    """
    if len(data) < IMPORT_HEADER:
        raise InputError(path, f"import member of {len(data)} bytes is shorter than its header", 0)
    _s1, _s2, _version, machine_id, _stamp, size, hint, bits = struct.unpack_from("<HHHHIIHH", data)
    if IMPORT_HEADER + size > len(data):
        raise InputError(path, f"import member's SizeOfData {size} runs past the member", 12)
    names = data[IMPORT_HEADER : IMPORT_HEADER + size].split(b"\0")
    if len(names) < 3:
        raise InputError(path, "import member does not hold a NUL-terminated symbol and DLL name", IMPORT_HEADER)
    if any(len(n) > MAX_NAME for n in names):
        raise InputError(path, f"import member name longer than {MAX_NAME} bytes", IMPORT_HEADER)
    symbol, dll = (n.decode("utf-8", "surrogateescape") for n in names[:2])
    name_type = (bits >> 2) & 7
    export_as = names[2].decode("utf-8", "surrogateescape") if name_type == 4 and len(names) > 3 else None
    return ImportMember(
        MACHINES.get(machine_id, f"unknown({machine_id:#x})"),
        machine_id,
        symbol,
        dll,
        _IMPORT_TYPES.get(bits & 3, bits & 3),
        _NAME_TYPES.get(name_type, name_type),
        hint,
        export_as,
    )


def object_binary(path: str, obj: CoffObject, size: int) -> Binary:
    """The format-neutral record of a COFF object: ``Kind.RELOCATABLE``, its external symbols
    (definitions in their section, common symbols as ``SymbolType.COMMON`` in ELF's ``SHN_COMMON``,
    absolute ones in ``SHN_ABS``, references undefined, weak externals ``Binding.WEAK``), its section
    names and COMDAT sections (``NODUPLICATES`` ones excepted: a second copy is an error) with
    every COMDAT's selection (``comdats``), its weak externals with their alternate and search
    characteristics, its ``.drectve`` directives as ``/OPTION:argument``, which function refers
    to which external (``CoffObject.references``), and as ``soname`` the DLL an import-descriptor
    tail names (``CoffObject.idata_dll``)."""
    symbols = [_model_symbol(s) for s in obj.iter_externals()]
    comdat = frozenset(s.number for s in obj.sections if s.comdat is not None and s.comdat != 1)
    return Binary(
        **NOT_ELF,
        path=path,
        format=Format.COFF,
        machine=obj.machine,
        bits=_BITS.get(obj.machine_id, 64),
        endian=Endian.LITTLE,
        os_abi="Windows",
        kind=Kind.RELOCATABLE,
        soname=obj.idata_dll,
        needed=(),
        rpath=(),
        symbols=SymbolTable.from_symbols(symbols),
        file_size=size,
        section_names=("", *(s.name for s in obj.sections)),
        comdat_sections=comdat,
        link_directives=tuple(f"/{d.option}:{d.argument}" if d.argument else f"/{d.option}" for d in obj.directives),
        referenced_from=obj.references(),
        comdats=tuple(
            ComdatSection(s.number, int(s.comdat), s.size, s.checksum, s.associated)
            for s in obj.sections
            if s.comdat is not None
        ),
        weak_externals=tuple(
            WeakExternal(s.name, s.alternate, int(s.search or 0)) for s in obj.iter_externals() if s.alternate
        ),
    )


def _model_symbol(s: CoffSymbol) -> Symbol:
    if s.common:
        return Symbol(
            s.name, True, Binding.GLOBAL, SymbolType.COMMON, Visibility.DEFAULT, 0, s.value, None, False, 0xFFF2
        )
    kind = SymbolType.FUNC if s.type >> 4 == 2 else SymbolType.NOTYPE  # IMAGE_SYM_DTYPE_FUNCTION
    binding = Binding.WEAK if s.weak else Binding.GLOBAL
    if s.undefined:
        return Symbol(s.name, False, binding, kind, Visibility.DEFAULT, 0, 0, None, False, 0)
    # the model keeps ELF's 16-bit st_shndx: a /bigobj section past 0xFEFF (65,279) is said as 0xFEFF
    section = 0xFFF1 if s.section == IMAGE_SYM_ABSOLUTE else min(s.section, 0xFEFF)
    return Symbol(s.name, True, binding, kind, Visibility.DEFAULT, s.value, 0, None, False, section)


def import_binary(path: str, members: Sequence[ImportMember], size: int) -> Binary:
    """The format-neutral record of the short import members of one DLL (one member read alone,
    or every member of an import library naming that DLL, folded: torch_cpu.lib holds 60,255):
    ``Kind.IMPORT_LIBRARY``, the symbols they define (``ImportMember.defines``, in member order),
    each carrying the DLL as its version's file (as an import of a PE image does), the DLL as its
    ``soname``; ``size``: the members' bytes together.  ``members`` is not empty and names one DLL."""
    first = members[0]
    symbols = [linked_symbol(name, True, first.dll) for member in members for name in member.defines]
    return Binary(
        **NOT_ELF,
        path=path,
        format=Format.COFF,
        machine=first.machine,
        bits=_BITS.get(first.machine_id, 64),
        endian=Endian.LITTLE,
        os_abi="Windows",
        kind=Kind.IMPORT_LIBRARY,
        soname=first.dll,
        needed=(),
        rpath=(),
        symbols=SymbolTable.from_symbols(symbols),
        file_size=size,
    )


def name_gnu_import_dlls(members: list[Binary]) -> list[Binary]:
    """The members of a GNU (``dlltool``) import library, each symbol's object given the DLL as its
    ``soname``: it references the library's ``_head_*`` symbol, whose object references the tail's
    ``*_iname``, whose ``.idata$7`` names the DLL (binutils ``dlltool.c``, "long import format").
    Other libraries' members come back as they are."""
    inames = {s.name: b.soname for b in members if b.soname for s in b.symbols if s.defined}
    if not inames:
        return members
    heads: dict[str, str] = {}
    for b in members:
        dll = next((inames[s.name] for s in b.symbols if not s.defined and s.name in inames), None)
        if dll is not None:
            heads.update((s.name, dll) for s in b.symbols if s.defined)
    out = []
    for b in members:
        dll = next((heads[s.name] for s in b.symbols if not s.defined and s.name in heads), None)
        out.append(replace(b, soname=dll) if dll is not None and b.soname is None else b)
    return out


def read_coff_binary(path: str, buf: Buffer, size: int) -> Binary:
    """Read a COFF object or short import member at ``path`` into its ``Binary``.

    Raises:
        InputError: see ``read_coff`` and ``read_import_member``.
    """
    head = bytes(buf[0:6])
    if is_import_member(head):
        return import_binary(path, [read_import_member(path, bytes(buf[0:size]))], size)
    return object_binary(path, read_coff(path, buf, size), size)
