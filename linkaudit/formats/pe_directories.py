"""Our own readers of a PE image's import, delay-load import and export directories.

pefile reads the headers and the section table well, but its directory parsers stop without a
word at fixed caps — 8,192 exports (``max_symbol_exports``), a total of imported symbols after
which the remaining DLLs of the import table are dropped (torch 2.9.1's ``torch_python.dll``: 3
of its 19 DLLs) — and build an object per entry.  These readers take the file's bytes and the
section table, check every RVA against the file, and return plain tuples.

Sources: Microsoft's PE format specification: "The .idata Section" (import directory table,
import lookup table: ordinal flag, hint/name table), "Delay-Load Import Tables" (the delay-load
directory; attributes 0 = the pre-VC7 layout with virtual addresses), "The .edata Section" (export
directory table, export address table, name pointer table, ordinal table; an export RVA inside
the export directory is a forwarder string).

Every function raises ``MalformedDirectory`` (a ``ValueError``, which ``formats.read_path`` reports
as "malformed PE file: ...") for an RVA outside the file, an unterminated table, or counts beyond
``MAX_ENTRIES`` or one per ``ENTRY_BYTES`` bytes of the file.
"""

from __future__ import annotations

import heapq
import struct
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from ..errors import shown
from .filebytes import Buffer

#: Imports and exports of one image beyond which it is refused (torch_cpu.dll: 60,252 exports;
#: cublasLt64_13.dll about 3,000).
MAX_ENTRIES = 1_000_000
#: ... and, below that, one entry per ``ENTRY_BYTES`` bytes of the file (at least ``ENTRY_FLOOR``):
#: an entry of a linker's tables takes at least a 4-byte slot of its own (a lookup or address
#: table entry), while descriptors sharing one lookup table spelled a million imports from 550 KB
#: (495 MB for check, 2.74 GB for show --symbols).
ENTRY_BYTES = 4
ENTRY_FLOOR = 65_536
#: DLLs one image may import from (the model numbers them in 15 bits; real images: tens).
MAX_DLLS = 16_384
#: The longest DLL or function name read (bytes); a longer one is cut there.
MAX_NAME = 4096
#: Bytes of names one image may spell out: entries that all point at one long name would
#: otherwise cost gigabytes for a megabyte file.
MAX_NAME_BYTES = 64 * 1024 * 1024


class MalformedDirectory(ValueError):
    """A PE data directory that cannot be read as the specification lays it out."""


class Section(NamedTuple):
    """One section header's mapping: ``rva`` and ``virtual_size`` in the image, ``offset`` and
    ``raw_size`` in the file (bytes)."""

    rva: int
    virtual_size: int
    offset: int
    raw_size: int


class Imports(NamedTuple):
    """One DLL of an import table: its name and its functions (names, ``#N`` by ordinal)."""

    dll: str
    functions: tuple[str, ...]


class Export(NamedTuple):
    """One export: ``name`` (``#N`` when exported by ordinal only), its ``rva`` (0 for a
    forwarder), and ``forwarder`` (``"DLL.function"``) or ``None``."""

    name: str
    rva: int
    forwarder: str | None


def _where(rva: int) -> str:
    """An RVA for messages: ``RVA 0x1f00``; one below zero (a virtual address below the image base,
    read where the table promised an RVA) as the distance below the base, never ``-0x...``."""
    return f"RVA {rva:#x}" if rva >= 0 else f"the address {-rva:#x} bytes below the image base"


def section_owners(sections: Sequence[Section]) -> tuple[list[int], list[int]]:
    """The RVA space cut where the section table's answer changes: ``starts`` (ascending RVAs)
    and ``owners``, where ``owners[i]`` is the index in the table of the
    first section, in table order, whose RVA range (``max(virtual_size, raw_size)`` bytes, as
    ``Image.offset`` reads it) holds every RVA of ``[starts[i], starts[i + 1])`` — or ``-1`` for
    none (as below ``starts[0]``).  Overlapping, empty and out-of-order sections keep the answer a walk of the table in
    order gives; built in O(n log n) for n sections (a sweep over their ends with a heap of
    the sections open, smallest table index first).  Raises nothing.
    """
    spans = sorted((s.rva, s.rva + max(s.virtual_size, s.raw_size), i) for i, s in enumerate(sections))
    spans = [span for span in spans if span[1] > span[0]]
    points = sorted({p for first, end, _ in spans for p in (first, end)})
    starts: list[int] = []
    owners: list[int] = []
    open_: list[tuple[int, int]] = []  # (table index, end of its range)
    taken = 0
    for point in points:
        while taken < len(spans) and spans[taken][0] == point:
            heapq.heappush(open_, (spans[taken][2], spans[taken][1]))
            taken += 1
        while open_ and open_[0][1] <= point:
            heapq.heappop(open_)
        owner = open_[0][0] if open_ else -1
        if owner != (owners[-1] if owners else -1):
            starts.append(point)
            owners.append(owner)
    return starts, owners


class Image:
    """The bytes of one PE image and its RVA-to-offset mapping.

    Args:
        buf: the file's bytes; sections: the section table; headers_size: ``SizeOfHeaders``
            (RVAs below it map to the same file offset); is64: PE32+ (8-byte lookup entries).
    """

    def __init__(self, buf: Buffer, sections: Sequence[Section], headers_size: int, is64: bool) -> None:
        self.buf, self.sections, self.headers_size, self.is64 = buf, sections, headers_size, is64
        self.entries = 0  # imports and exports read so far, against ``limit``
        self.limit = min(MAX_ENTRIES, max(ENTRY_FLOOR, len(buf) // ENTRY_BYTES))
        self.spelled = 0  # bytes of names used so far, against MAX_NAME_BYTES
        self._names: dict[int, str] = {}  # RVA -> name: names shared by many entries are read once
        #: the file-backed RVA range of the section hit last, and its RVA-to-offset delta: names
        #: and tables sit together, so most lookups hit it
        self._last = (0, 0, 0)
        #: ``section_owners`` of the section table, built at the first lookup the cache misses
        self._starts: list[int] | None = None
        self._owners: list[int] = []

    def offset(self, rva: int, what: str) -> int:
        """The file offset of ``rva`` (bytes): in the first section, in section table order, whose
        RVA range (``max(VirtualSize, SizeOfRawData)`` bytes) holds it, when that section's bytes
        in the file reach it; else, when no section holds it, in the headers (below
        ``SizeOfHeaders``, same offset).  The section is found through ``_owners`` by bisection —
        O(log sections) a lookup, not a walk of the section table.

        Raises:
            MalformedDirectory: no section maps ``rva`` into the file (``what`` names the item).
        """
        start, end, delta = self._last
        if start <= rva < end:
            return rva + delta
        if self._starts is None:
            self._starts, self._owners = section_owners(self.sections)
        at = bisect_right(self._starts, rva) - 1
        owner = self._owners[at] if at >= 0 else -1
        if owner >= 0:
            s = self.sections[owner]
            backed = min(s.raw_size, len(self.buf) - s.offset)  # bytes of the section in the file
            if rva - s.rva < backed:
                self._last = (s.rva, s.rva + backed, s.offset - s.rva)
                return rva - s.rva + s.offset
        elif 0 <= rva < min(self.headers_size, len(self.buf)):
            return rva
        raise MalformedDirectory(f"{what} at {_where(rva)} lies outside the file")

    def cstring(self, rva: int, what: str) -> str:
        """The NUL-terminated name at ``rva`` (cut at ``MAX_NAME`` bytes), read once per RVA."""
        name = self._names.get(rva)
        if name is None:
            start = self.offset(rva, what)
            raw = self.buf[start : start + 256]  # most names end in the first read
            end = raw.find(b"\0")
            if end < 0:
                raw = self.buf[start : start + MAX_NAME]
                end = raw.find(b"\0")
            raw = raw[:end] if end >= 0 else raw
            name = self._names[rva] = raw.decode("utf-8", "surrogateescape")
        self.spelled += len(name)  # every use counts: the model stores each entry's name
        if self.spelled > MAX_NAME_BYTES:
            raise MalformedDirectory(f"names spell out more than {MAX_NAME_BYTES} bytes")
        return name

    def _count(self, n: int = 1) -> None:
        self.entries += n
        if self.entries > self.limit:
            raise MalformedDirectory(
                f"more than {self.limit} imports and exports in {len(self.buf)} bytes (an entry of a linker's "
                f"tables takes {ENTRY_BYTES} bytes of its own: import descriptors sharing one lookup table?)"
            )

    def _lookup_table(self, rva: int, image_base: int, dll: str) -> tuple[str, ...]:
        """An import lookup (name) table: entries up to the zero one."""
        width, flag = (8, 1 << 63) if self.is64 else (4, 1 << 31)
        fmt = "<Q" if self.is64 else "<I"
        at = self.offset(rva, f"the import lookup table of {shown(dll)}")
        out: list[str] = []
        while True:
            if at + width > len(self.buf):
                raise MalformedDirectory(f"the import lookup table of {shown(dll)} runs past the end of the file")
            (entry,) = struct.unpack(fmt, self.buf[at : at + width])
            if entry == 0:
                return tuple(out)
            if entry & flag:
                out.append(f"#{entry & 0xFFFF}")
            else:  # a hint/name entry: a 2-byte hint, then the name (a virtual address when image_base)
                hint_name = entry - image_base if image_base else entry & 0x7FFFFFFF
                out.append(self.cstring(hint_name + 2, f"an import name of {shown(dll)}"))
            self._count()
            at += width

    def _rows(self, rva: int, size: int, fmt: str, what: str) -> Iterator[tuple[int, ...]]:
        """The fixed-size rows of a descriptor table at ``rva`` (``fmt``: one row's ``struct``
        format), until the caller stops at its null row; none when the directory is absent."""
        if rva == 0 or size == 0:
            return
        width = struct.calcsize(fmt)
        at = self.offset(rva, what)
        while True:
            if at + width > len(self.buf):
                raise MalformedDirectory(f"{what} runs past the end of the file")
            yield struct.unpack(fmt, self.buf[at : at + width])
            at += width

    def imports(self, rva: int, size: int) -> list[Imports]:
        """The import directory table at ``rva``: one ``Imports`` per descriptor, in table order."""
        out: list[Imports] = []
        for lookup, _stamp, _chain, name_rva, iat in self._rows(rva, size, "<5I", "the import directory"):
            if lookup == 0 and name_rva == 0 and iat == 0:
                break
            dll = self._dll_name(name_rva, len(out), "import")
            out.append(Imports(dll, self._lookup_table(lookup or iat, 0, dll)))
        return out

    def delay_imports(self, rva: int, size: int, image_base: int) -> list[Imports]:
        """The delay-load directory table at ``rva`` (attributes bit 0 clear: virtual addresses)."""
        out: list[Imports] = []
        rows = self._rows(rva, size, "<8I", "the delay-load import directory")
        for attributes, name, _handle, iat, names, _bound, _unload, _stamp in rows:
            if name == 0 and iat == 0 and names == 0:
                break
            base = 0 if attributes & 1 else image_base
            dll = self._dll_name(name - base, len(out), "delay-load import")
            out.append(Imports(dll, self._lookup_table(names - base, base, dll) if names else ()))
        return out

    def exports(self, rva: int, size: int) -> tuple[str | None, list[Export]]:
        """The export directory at ``rva``: the DLL name it records, and every export — named ones
        in name-table order, then those exported by ordinal only (``#N``, N = base + index)."""
        if rva == 0 or size == 0:
            return None, []
        at = self.offset(rva, "the export directory")
        if at + 40 > len(self.buf):
            raise MalformedDirectory("the export directory runs past the end of the file")
        name_rva, base, n_functions, n_names, functions_rva, names_rva, ordinals_rva = struct.unpack(
            "<7I", self.buf[at + 12 : at + 40]
        )
        if n_functions > MAX_ENTRIES or n_names > MAX_ENTRIES:
            raise MalformedDirectory(f"the export directory counts more than {MAX_ENTRIES} exports")
        dll = self.cstring(name_rva, "the exporting DLL's name") if name_rva else None
        functions = self._array(functions_rva, n_functions, "I", "the export address table")
        names = self._array(names_rva, n_names, "I", "the export name pointer table")
        ordinals = self._array(ordinals_rva, n_names, "H", "the export ordinal table")
        self._count(n_names)
        out: list[Export] = []
        named: set[int] = set()
        for name_at, index in zip(names, ordinals, strict=True):
            if index >= n_functions:
                raise MalformedDirectory(f"export ordinal index {index} is past the {n_functions} functions")
            named.add(index)
            out.append(self._export(self.cstring(name_at, "an export name"), functions[index], rva, size))
        for index, function in enumerate(functions):
            if index not in named and function:
                out.append(self._export(f"#{base + index}", function, rva, size))
        self._count(len(out) - n_names)  # those exported by ordinal only: every entry counts once
        return dll, out

    def _dll_name(self, rva: int, index: int, table: str) -> str:
        """The name of the ``index``-th DLL of an import ``table``: refused when empty, or past ``MAX_DLLS``."""
        if index >= MAX_DLLS:
            raise MalformedDirectory(f"the {table} directory names more than {MAX_DLLS} DLLs")
        dll = self.cstring(rva, f"an imported DLL's name ({table} directory entry {index})")
        if not dll:
            raise MalformedDirectory(f"{table} directory entry {index} names no DLL (an empty name)")
        return dll

    def _export(self, name: str, function: int, rva: int, size: int) -> Export:
        if rva <= function < rva + size:
            return Export(name, 0, self.cstring(function, f"the forwarder of {shown(name)}"))
        return Export(name, function, None)

    def _array(self, rva: int, count: int, code: str, what: str) -> tuple[int, ...]:
        if count == 0:
            return ()
        start = self.offset(rva, what)
        end = start + count * struct.calcsize(code)
        if end > len(self.buf):
            raise MalformedDirectory(f"{what} ({count} entries) runs past the end of the file")
        return struct.unpack(f"<{count}{code}", self.buf[start:end])
