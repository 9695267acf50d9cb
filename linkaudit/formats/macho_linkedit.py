"""Our own readers of a Mach-O slice's ``__LINKEDIT`` tables: the symbol table, the chained-fixups
imports and the export trie.

macholib reads fat headers and load commands well but reads neither chained fixups nor the export
trie, and its symbol-table reader builds a Python object per ``nlist`` entry (10 s on a 200 MB
``libtorch_cpu.dylib`` whose table holds 487,455 entries, 450,932 of them local).  These readers
take the file's bytes (``FileBytes``, read on demand, or ``bytes``) and the offsets of the load
commands, read only the ranges they need (each table once, in bulk), and check every offset against the buffer first.  All offsets are from the
start of the slice (``base``, non-zero in a fat file).

Sources: Apple's ``mach-o/nlist.h`` (``nlist``/``nlist_64``, ``N_STAB``, ``N_EXT``, ``N_TYPE``,
``GET_LIBRARY_ORDINAL``), ``mach-o/loader.h`` (``symtab_command``, ``dysymtab_command``,
``dyld_info_command``, ``linkedit_data_command``, ``EXPORT_SYMBOL_FLAGS_*`` and the trie's layout)
and ``mach-o/fixup-chains.h`` (``dyld_chained_fixups_header``, ``DYLD_CHAINED_IMPORT``,
``DYLD_CHAINED_IMPORT_ADDEND``, ``DYLD_CHAINED_IMPORT_ADDEND64``).

Every function raises ``MalformedLinkedit`` (a ``ValueError``, which ``formats.read_path`` reports
as "malformed Mach-O file: ...") for a table that runs past the end of the file, a trie that
loops, or a count beyond the caps below.
"""

from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

from .filebytes import Buffer

N_STAB, N_TYPE, N_EXT, N_UNDF = 0xE0, 0x0E, 0x01, 0x0
N_WEAK_REF, N_WEAK_DEF = 0x0040, 0x0080

#: Special library ordinals (two-level ``n_desc`` high byte, chained imports' ``lib_ordinal``),
#: as the unsigned 8-bit values; ``normal_ordinal`` folds the 16-bit forms onto these.
SELF_LIBRARY_ORDINAL, WEAK_LOOKUP_ORDINAL, DYNAMIC_LOOKUP_ORDINAL, EXECUTABLE_ORDINAL = 0x00, 0xFD, 0xFE, 0xFF

EXPORT_KIND_MASK, EXPORT_WEAK_DEFINITION, EXPORT_REEXPORT, EXPORT_STUB_AND_RESOLVER = 0x03, 0x04, 0x08, 0x10

#: Caps against hostile files: entries in one table (libtorch_cpu.dylib: 36,523 external
#: symbols), chained imports (each one a Python object), and the length of one name.
MAX_ENTRIES = 5_000_000
MAX_CHAINED_IMPORTS = 1_000_000
#: The bytes of names one table may spell out (``names_budget``): ``NAME_SLACK`` plus a multiple of
#: the bytes they are spelled from, at most ``MAX_TRIE_NAME_BYTES`` (also the most a compressed
#: chained-fixups pool may inflate to), as ELF's names budget.  Measured on every real Mach-O file
#: at hand (torch 2.9.1, cryptography 48.0.1 and orjson 3.13.0 macOS wheels, sample_bins): the
#: export trie's reader spells at most 1.57 times the trie (libc10.dylib; libtorch_cpu.dylib 1.55:
#: 3.4 MB from 2.2 MB; the exports' own names 1.26 times), the string table's external names
#: 0.94 times it and the chained imports' names 0.95 times their pool, so ``TRIE_NAME_RATIO`` 8
#: and ``POOL_NAME_RATIO`` 4 leave real files four times the room they take.  A chain of terminal
#: nodes (``a``, ``aa``, ``aaa``, ...) spells the square of its depth: under the flat 64 MiB a
#: 99 KB trie held 60 MB of names and 266 MB of memory.
MAX_TRIE_NAME_BYTES = 64 * 1024 * 1024
NAME_SLACK = 1024 * 1024
TRIE_NAME_RATIO = 8
POOL_NAME_RATIO = 4
MAX_NAME = 64 * 1024
#: Bytes of a file per ``nlist`` entry decoded (``EntryBudget``): the smallest entry (12 bytes),
#: read at most twice.
NLIST_BUDGET_BYTES = 6


class MalformedLinkedit(ValueError):
    """A ``__LINKEDIT`` table that cannot be read as its load command describes."""


def names_budget(source: int, ratio: int) -> int:
    """The bytes of names a table may spell out from ``source`` bytes (an export trie, a string
    table, a chained-fixups symbol pool): ``NAME_SLACK`` plus ``ratio`` times them, at most
    ``MAX_TRIE_NAME_BYTES``.  A name is spelled from bytes of the file (dyld's ``ExportTrie`` builds
    each from its edges' labels, ``mach-o/loader.h``; ``nlist`` and ``dyld_chained_import`` point into
    a pool), so a real table spells about its own size; a hostile one, the square of it."""
    return min(MAX_TRIE_NAME_BYTES, NAME_SLACK + ratio * source)


def _overspent(table: str, budget: int, ratio: int, source: int) -> MalformedLinkedit:
    """The error for a ``table`` of ``source`` bytes whose names spell out more than ``budget``."""
    return MalformedLinkedit(
        f"{table}: names spell out more than {budget} bytes ({ratio} times its {source} bytes, "
        f"plus {NAME_SLACK >> 20} MiB, at most {MAX_TRIE_NAME_BYTES >> 20} MiB)"
    )


class Entry(NamedTuple):
    """One external symbol of a slice, as a reader found it.

    Attributes:
        name: the name as stored (``b"_nvrtcCreateProgram"``, leading underscore included).
        defined: an export (True) or an import (False).
        ordinal: for an import, the library ordinal (1-based index into the dylib load commands,
            or one of the special ordinals above); 0 for an export.
        weak: a weak import (may be missing) or a weak definition.
        value: an export's address (bytes from the image's base); 0 for an import or a re-export.
        reexport: for a re-exported symbol (trie ``EXPORT_SYMBOL_FLAGS_REEXPORT``), the name in the
            library of ``ordinal`` it stands for; ``None`` otherwise.
    """

    name: bytes
    defined: bool
    ordinal: int = 0
    weak: bool = False
    value: int = 0
    reexport: bytes | None = None


def _region(buf: Buffer, base: int, end: int | None, offset: int, size: int, what: str) -> tuple[int, int]:
    """``(start, stop)`` in ``buf`` of ``size`` bytes at ``offset`` from the slice at ``base``, which
    ends at ``end`` (``None``: the end of the file).  A slice of a fat file is an image of its own
    (``mach-o/fat.h``; dyld maps only the slice): its tables lie within it."""
    start = base + offset
    limit = len(buf) if end is None else min(end, len(buf))
    if offset < 0 or size < 0 or start + size > limit:
        where = "the end of the file" if limit == len(buf) else f"the end of its slice ({limit - base} bytes)"
        raise MalformedLinkedit(f"{what} ({size} bytes at offset {offset}) runs past {where}")
    return start, start + size


class EntryBudget:
    """The ``nlist`` entries one file may have decoded, all its slices together: one per
    ``NLIST_BUDGET_BYTES`` bytes of the file.  An entry takes at least 12 bytes of the file
    (``struct nlist``, ``mach-o/nlist.h``) and ``LC_DYSYMTAB``'s two external ranges read it at most
    twice, so a table within its slice never reaches the budget; tables shared by many slices, or
    read again and again, do.

    Attributes:
        file_size: bytes; limit: entries allowed; decoded: entries decoded so far.
    """

    def __init__(self, file_size: int) -> None:
        self.file_size = file_size
        self.limit = file_size // NLIST_BUDGET_BYTES
        self.decoded = 0

    def take(self, count: int) -> None:
        """Count ``count`` more entries decoded; ``MalformedLinkedit`` past ``limit``."""
        self.decoded += count
        if self.decoded > self.limit:
            raise MalformedLinkedit(
                f"more than {self.limit} symbol table entries decoded from a {self.file_size}-byte file "
                f"(one per {NLIST_BUDGET_BYTES} bytes: symbol tables shared, or read again and again?)"
            )


def normal_ordinal(ordinal: int, bits: int) -> int:
    """Fold a ``bits``-wide library ordinal whose top values are the special ones (``-1`` main
    executable, ``-2`` flat lookup, ``-3`` weak lookup) onto the 8-bit constants above."""
    top = (1 << bits) - 1
    return 0x100 - (top + 1 - ordinal) if ordinal > top - 3 else ordinal


def _external_ranges(nsyms: int, dysymtab: tuple[int, int, int, int] | None) -> list[tuple[int, int]]:
    """The ``(first, count)`` ranges of the symbol table that ``read_nlist`` reads: the whole table,
    or ``LC_DYSYMTAB``'s defined and undefined external ranges; ``MalformedLinkedit`` for a range
    past the ``nsyms`` entries."""
    if dysymtab is None:
        return [(0, nsyms)]
    iext, next_, iundef, nundef = dysymtab
    ranges = [(iext, next_), (iundef, nundef)]
    for first, count in ranges:
        if first + count > nsyms:
            raise MalformedLinkedit(f"LC_DYSYMTAB range {first}+{count} lies outside the {nsyms} symbols")
    return ranges


def read_nlist(
    buf: Buffer,
    base: int,
    is64: bool,
    little: bool,
    symtab: tuple[int, int, int, int],
    dysymtab: tuple[int, int, int, int] | None,
    end: int | None = None,
    entry_budget: EntryBudget | None = None,
) -> list[Entry]:
    """The external symbols of ``LC_SYMTAB``: imports (``N_UNDF``, library ordinal from ``n_desc``)
    and exports (defined ``N_EXT``, not ``N_STAB``), in table order.

    Args:
        buf: the file's bytes; base: the slice's offset in them.
        is64, little: ``nlist_64`` (16 bytes) or ``nlist`` (12 bytes), byte order.
        symtab: ``(symoff, nsyms, stroff, strsize)``.
        dysymtab: ``(iextdefsym, nextdefsym, iundefsym, nundefsym)`` when ``LC_DYSYMTAB`` is present:
            only those ranges are read (locals, often nine tenths of the table, are skipped).
        end: where the slice ends in ``buf`` (``None``: the end of the file); both tables lie before.
        entry_budget: the file's ``EntryBudget``, charged with every entry decoded (``None``: one of this
            call alone, for ``len(buf)`` bytes).

    Raises:
        MalformedLinkedit: a table past the end of its slice, a range outside the table, a name
            outside the string table or too long, or more entries or name bytes than the caps allow.
    """
    symoff, nsyms, stroff, strsize = symtab
    fmt = ("<" if little else ">") + ("IBBHQ" if is64 else "IBBHI")
    width = struct.calcsize(fmt)
    if nsyms > MAX_ENTRIES:
        raise MalformedLinkedit(f"LC_SYMTAB holds {nsyms} symbols, more than {MAX_ENTRIES}")
    table_start, _ = _region(buf, base, end, symoff, nsyms * width, "the LC_SYMTAB symbol table")
    str_start, str_end = _region(buf, base, end, stroff, strsize, "the LC_SYMTAB string table")
    entry_budget = entry_budget or EntryBudget(len(buf))
    out: list[Entry] = []
    spelled, budget = 0, names_budget(strsize, POOL_NAME_RATIO)
    strings = buf[str_start:str_end]
    for first, count in _external_ranges(nsyms, dysymtab):
        entry_budget.take(count)
        start = table_start + first * width
        for strx, n_type, _sect, desc, value in struct.iter_unpack(fmt, buf[start : start + count * width]):
            if n_type & N_STAB or not n_type & N_EXT:
                continue
            if strx >= strsize:
                raise MalformedLinkedit(f"symbol name offset {strx} lies outside the {strsize}-byte string table")
            stop = strings.find(b"\0", strx, strx + MAX_NAME + 1)
            if stop < 0:
                if strx + MAX_NAME < strsize:
                    raise MalformedLinkedit(f"a symbol name at string offset {strx} is longer than {MAX_NAME} bytes")
                stop = strsize
            name = strings[strx:stop]
            spelled += len(name)
            if spelled > budget:  # entries sharing one long name would spell gigabytes
                raise _overspent("LC_SYMTAB string table", budget, POOL_NAME_RATIO, strsize)
            if (n_type & N_TYPE) == N_UNDF and value == 0:
                out.append(Entry(name, False, (desc >> 8) & 0xFF, bool(desc & N_WEAK_REF)))
            elif (n_type & N_TYPE) != N_UNDF:
                out.append(Entry(name, True, 0, bool(desc & N_WEAK_DEF), value))
    return out


def read_chained_imports(buf: Buffer, base: int, dataoff: int, datasize: int, end: int | None = None) -> list[Entry]:
    """The imports table of ``LC_DYLD_CHAINED_FIXUPS`` (macOS 12 and later): one ``Entry`` per
    import, in table order (a symbol imported with several addends appears once per addend).

    The three import formats are read (``DYLD_CHAINED_IMPORT``: 8-bit ordinal, 23-bit name offset;
    ``_ADDEND``: the same plus a 32-bit addend; ``_ADDEND64``: 16-bit ordinal, 32-bit name offset,
    64-bit addend); zlib-compressed symbol strings (``symbols_format`` 1) are inflated, capped.  The
    names may spell out ``names_budget`` of the pool's bytes in the file (``POOL_NAME_RATIO``), and a
    compressed pool inflate to as much.
    ``end``: where the slice ends in ``buf`` (``None``: the end of the file).
    """
    first, last = _region(buf, base, end, dataoff, datasize, "LC_DYLD_CHAINED_FIXUPS data")
    blob = bytes(buf[first:last])
    if len(blob) < 28:
        raise MalformedLinkedit(f"LC_DYLD_CHAINED_FIXUPS data of {len(blob)} bytes is shorter than its header")
    _version, _starts, imports_offset, symbols_offset, count, imports_format, symbols_format = struct.unpack_from(
        "<7I", blob
    )
    widths = {1: 4, 2: 8, 3: 16}
    if imports_format not in widths:
        raise MalformedLinkedit(f"unknown chained-fixups imports format {imports_format}")
    if count > MAX_CHAINED_IMPORTS:
        raise MalformedLinkedit(f"LC_DYLD_CHAINED_FIXUPS holds {count} imports, more than {MAX_CHAINED_IMPORTS}")
    width = widths[imports_format]
    if imports_offset + count * width > len(blob) or symbols_offset > len(blob):
        raise MalformedLinkedit("the chained-fixups imports table runs past its LC_DYLD_CHAINED_FIXUPS data")
    symbols = blob[symbols_offset:]
    pool, budget = len(symbols), names_budget(len(symbols), POOL_NAME_RATIO)
    if symbols_format == 1:
        inflater = zlib.decompressobj()
        symbols = inflater.decompress(symbols, budget)
        if inflater.unconsumed_tail:
            raise MalformedLinkedit(f"compressed chained-fixups symbol names inflate past {budget} bytes")
    elif symbols_format != 0:
        raise MalformedLinkedit(f"unknown chained-fixups symbols format {symbols_format}")
    out: list[Entry] = []
    spelled = 0
    for i in range(count):
        at = imports_offset + i * width
        if imports_format == 3:
            (raw,) = struct.unpack_from("<Q", blob, at)
            ordinal, weak, name_offset = normal_ordinal(raw & 0xFFFF, 16), bool(raw >> 16 & 1), raw >> 32
        else:
            (raw,) = struct.unpack_from("<I", blob, at)
            ordinal, weak, name_offset = raw & 0xFF, bool(raw >> 8 & 1), raw >> 9
        if name_offset >= len(symbols):
            raise MalformedLinkedit(f"chained import {i}: name offset {name_offset} outside the symbol strings")
        stop = symbols.find(b"\0", name_offset, name_offset + MAX_NAME + 1)
        if stop < 0:
            if name_offset + MAX_NAME < len(symbols):
                raise MalformedLinkedit(f"chained import {i}: its name is longer than {MAX_NAME} bytes")
            stop = len(symbols)
        spelled += stop - name_offset
        if spelled > budget:
            raise _overspent("chained-fixups symbol pool", budget, POOL_NAME_RATIO, pool)
        out.append(Entry(symbols[name_offset:stop], False, ordinal, weak))
    return out


def _uleb(data: bytes, pos: int) -> tuple[int, int]:
    """The ULEB128 number at ``pos`` and the offset past it: up to four bytes unrolled (nearly every
    number of a trie: under 2**28), longer ones by ``_uleb_long``; ``MalformedLinkedit`` when it runs
    past ``data`` or is wider than 64 bits."""
    try:
        byte = data[pos]
        if byte < 0x80:
            return byte, pos + 1
        result = byte & 0x7F
        byte = data[pos + 1]
        if byte < 0x80:
            return result | byte << 7, pos + 2
        result |= (byte & 0x7F) << 7
        byte = data[pos + 2]
        if byte < 0x80:
            return result | byte << 14, pos + 3
        result |= (byte & 0x7F) << 14
        byte = data[pos + 3]
        if byte < 0x80:
            return result | byte << 21, pos + 4
    except IndexError:
        raise MalformedLinkedit("export trie: a ULEB128 number runs past the trie") from None
    return _uleb_long(data, pos)


def _uleb_long(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data):
            raise MalformedLinkedit("export trie: a ULEB128 number runs past the trie")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7
        if shift > 63 or result >> 64:
            raise MalformedLinkedit(f"export trie: a ULEB128 number wider than 64 bits at offset {pos}")


def read_export_trie(buf: Buffer, base: int, offset: int, size: int, end: int | None = None) -> list[Entry]:
    """Every export of a trie (``LC_DYLD_EXPORTS_TRIE``, or ``export_off``/``export_size`` of
    ``LC_DYLD_INFO[_ONLY]``), depth first in edge order.

    A terminal node gives flags then, by kind: a re-export (library ordinal and the name in that
    library, empty for the same name), a stub and resolver (two offsets; the stub is the address),
    or an address.  A node reached twice (a loop, or two edges to one node) or names spelling out
    more than ``names_budget(len(trie), TRIE_NAME_RATIO)`` (every edge's whole name counted, as
    dyld's ``ExportTrie`` walk builds it) raise ``MalformedLinkedit`` (format: dyld's
    ``ExportTrie``, ``mach-o/loader.h``).  ``end``: where the slice ends in ``buf`` (``None``: the
    end of the file).
    """
    if size == 0:
        return []
    first, last = _region(buf, base, end, offset, size, "the export trie")
    trie = bytes(buf[first:last])
    out: list[Entry] = []
    seen: set[int] = set()
    spelled, budget = 0, names_budget(len(trie), TRIE_NAME_RATIO)
    stack: list[tuple[int, bytes]] = [(0, b"")]
    find, limit, new = trie.find, len(trie), tuple.__new__
    while stack:
        node, prefix = stack.pop()
        if node in seen:
            raise MalformedLinkedit(f"export trie: node at offset {node} is reached twice (the trie loops)")
        seen.add(node)
        terminal_size = trie[node]  # ULEB128s are read inline when one byte long (nearly all are)
        pos = node + 1
        if terminal_size >= 0x80:
            terminal_size, pos = _uleb(trie, node)
        children_at = pos + terminal_size
        if terminal_size:
            if pos < limit and trie[pos] < 0x80:  # the flags: one byte but for unknown high bits
                flags = trie[pos]
                pos += 1
            else:
                flags, pos = _uleb(trie, pos)
            weak = bool(flags & EXPORT_WEAK_DEFINITION)
            if flags & EXPORT_REEXPORT:
                ordinal, pos = _uleb(trie, pos)
                stop = find(b"\0", pos, children_at)
                if stop < 0:
                    raise MalformedLinkedit("export trie: a re-exported name runs past its node")
                out.append(Entry(prefix, True, ordinal, weak, 0, trie[pos:stop] or prefix))
            else:
                address, pos = _uleb(trie, pos)
                out.append(new(Entry, (prefix, True, 0, weak, address, None)))  # Entry(...) without its Python __new__
            if len(out) > MAX_ENTRIES:
                raise MalformedLinkedit(f"export trie: more than {MAX_ENTRIES} exports")
        if children_at >= limit:
            if children_at == limit:
                continue
            raise MalformedLinkedit(f"export trie: node at offset {node} runs past the trie")
        count = trie[children_at]
        pos = children_at + 1
        at = len(stack)
        for _ in range(count):
            stop = find(b"\0", pos)
            if stop < 0:
                raise MalformedLinkedit("export trie: an edge label runs past the trie")
            name = prefix + trie[pos:stop]
            if len(name) > MAX_NAME:
                raise MalformedLinkedit(f"export trie: a name longer than {MAX_NAME} bytes")
            pos = stop + 1
            if pos < limit and trie[pos] < 0x80:
                child = trie[pos]
                pos += 1
            else:
                child, pos = _uleb(trie, pos)
            if child >= limit:
                raise MalformedLinkedit(f"export trie: edge to offset {child}, past the {limit}-byte trie")
            spelled += len(name)
            stack.append((child, name))
        if spelled > budget:
            raise _overspent("export trie", budget, TRIE_NAME_RATIO, len(trie))
        stack[at:] = stack[at:][::-1]  # depth first in edge order
    return out
