"""Mach-O reader: one thin or fat (universal) file -> one ``Binary`` per architecture slice.

The fat header, Mach-O headers and load commands are parsed with macholib's structure
definitions, walked by ``_slices`` (``macholib.MachO`` would also read every section's contents);
the symbol tables by our own readers (``macho_linkedit``).  What is kept, in the format-neutral
model:

* ``needed``: the dylibs of ``LC_LOAD_DYLIB`` (``PLAIN``), ``LC_LOAD_WEAK_DYLIB`` (``WEAK``: may be
  missing), ``LC_REEXPORT_DYLIB`` (``REEXPORT``), ``LC_LOAD_UPWARD_DYLIB`` (``UPWARD``) and
  ``LC_LAZY_LOAD_DYLIB`` (``LAZY``), in load-command order — the order two-level library ordinals
  count in;
* ``soname``: the install name (``LC_ID_DYLIB``); ``rpath``: the ``LC_RPATH`` entries, in order,
  duplicates kept (dyld rejects them since macOS 15.4);
* ``min_os`` / ``sdk``: from ``LC_BUILD_VERSION`` or ``LC_VERSION_MIN_MACOSX`` (``"11.0"``), and
  ``min_os_command`` which of the two;
* ``symbols``: imports and exports from the authoritative tables, read by our own code
  (``macho_linkedit``): imports from the ``LC_DYLD_CHAINED_FIXUPS`` imports table (macOS 12 and
  later) or else the undefined external ``nlist`` entries; exports from the export trie
  (``LC_DYLD_EXPORTS_TRIE``, or that of ``LC_DYLD_INFO[_ONLY]``) or else the defined external
  ``nlist`` entries.  Names lose the one leading underscore Mach-O adds to every C name
  (``_nvrtcCreateProgram`` -> ``nvrtcCreateProgram``; C++ ``__Z...`` -> ``_Z...``, the Itanium
  mangling ELF shows).  An import whose two-level library ordinal names a dylib carries that
  install name as its version (``SymbolVersion(name, file=name)``, as an ELF version need names its
  file); one looked up flat — ``DYNAMIC_LOOKUP_ORDINAL`` (``-undefined dynamic_lookup``), an image
  without ``MH_TWOLEVEL`` (``-flat_namespace``), the main executable's or the weak-lookup ordinal —
  carries none; weak imports (``N_WEAK_REF``, the chained import's weak bit) and weak definitions
  are weak;
* ``forwarders``: re-exported symbols of the trie (``EXPORT_SYMBOL_FLAGS_REEXPORT``) as
  ``(name, "INSTALL_NAME:symbol")``.

Sources: Apple's ``mach-o/loader.h`` and ``mach-o/nlist.h``
(``GET_LIBRARY_ORDINAL``, ``SELF_LIBRARY_ORDINAL``, ``DYNAMIC_LOOKUP_ORDINAL``,
``EXECUTABLE_ORDINAL``), ``mach-o/fat.h``; macholib's documentation.
"""

from __future__ import annotations

import struct
from typing import Any, NamedTuple

from ..model import (
    NOT_ELF,
    Binary,
    Endian,
    Format,
    Kind,
    NeededLibrary,
    NeedKind,
    Symbol,
    SymbolTable,
    linked_symbol,
)
from . import macho_linkedit as linkedit
from .filebytes import Buffer

#: cputype -> the architecture's name as Apple's tools (``lipo``, ``otool``, dyld's messages) and
#: macOS wheel tags spell it (``mach/machine.h``; the names of ``mach-o/arch.h``).
MACHINES = {
    7: "i386",
    0x01000007: "x86_64",
    12: "arm",
    0x0100000C: "arm64",
    0x0200000C: "arm64_32",
    18: "ppc",
    0x01000012: "ppc64",
}
#: (cputype, cpusubtype without its capability bits) -> the name of an architecture its subtype
#: sets apart (``CPU_SUBTYPE_X86_64_H``, ``CPU_SUBTYPE_ARM64E``, the 32-bit ARM versions).
SUBTYPE_NAMES = {
    (0x01000007, 8): "x86_64h",
    (0x0100000C, 2): "arm64e",
    (12, 6): "armv6",
    (12, 9): "armv7",
    (12, 11): "armv7s",
    (12, 12): "armv7k",
}
#: The high byte of ``cpusubtype``: capability bits (``CPU_SUBTYPE_LIB64``, arm64e's pointer
#: authentication ABI version), not part of the subtype.
CPU_SUBTYPE_MASK = 0xFF000000


def cpu_family(arch: str) -> str:
    """The architecture of ``arch``'s CPU type, its subtype set aside: ``"x86_64h"`` -> ``"x86_64"``,
    ``"arm64e"`` -> ``"arm64"``, ``"armv7"`` -> ``"arm"``; any other name is its own."""
    for (cputype, _subtype), name in SUBTYPE_NAMES.items():
        if name == arch:
            return MACHINES[cputype]
    return arch


def arch_name(cputype: int, cpusubtype: int) -> str:
    """The architecture of a Mach-O header as Apple spells it: ``"x86_64"``, ``"x86_64h"``,
    ``"arm64"``, ``"arm64e"``, ``"i386"``..., ``"unknown(0x…)"`` for a CPU type it does not name."""
    named = SUBTYPE_NAMES.get((cputype, cpusubtype & ~CPU_SUBTYPE_MASK))
    return named or MACHINES.get(cputype, f"unknown({cputype:#x})")


MH_OBJECT, MH_EXECUTE, MH_DYLIB, MH_BUNDLE = 1, 2, 6, 8
MH_TWOLEVEL = 0x80
#: Library ordinals that bind to no one dylib: looked up in every image (flat), or in the image itself.
FLAT_ORDINALS = frozenset(
    {
        linkedit.SELF_LIBRARY_ORDINAL,
        linkedit.WEAK_LOOKUP_ORDINAL,
        linkedit.DYNAMIC_LOOKUP_ORDINAL,
        linkedit.EXECUTABLE_ORDINAL,
    }
)
LC_SYMTAB, LC_DYSYMTAB, LC_DYLD_INFO, LC_DYLD_INFO_ONLY = 0x2, 0xB, 0x22, 0x80000022
LC_DYLD_EXPORTS_TRIE, LC_DYLD_CHAINED_FIXUPS = 0x80000033, 0x80000034
#: magic -> (little-endian, 64-bit) (mach-o/loader.h: MH_MAGIC, MH_CIGAM, MH_MAGIC_64, MH_CIGAM_64).
THIN_MAGICS = {
    b"\xfe\xed\xfa\xce": (False, False),
    b"\xce\xfa\xed\xfe": (True, False),
    b"\xfe\xed\xfa\xcf": (False, True),
    b"\xcf\xfa\xed\xfe": (True, True),
}
LINKEDIT_COMMANDS = frozenset(
    {LC_SYMTAB, LC_DYSYMTAB, LC_DYLD_INFO, LC_DYLD_INFO_ONLY, LC_DYLD_EXPORTS_TRIE, LC_DYLD_CHAINED_FIXUPS}
)


#: Commands whose structure the reader uses: too short a one is a malformed file (mach-o/loader.h).
STRUCTURED = LINKEDIT_COMMANDS | {
    0xC,  # LC_LOAD_DYLIB
    0xD,  # LC_ID_DYLIB
    0x20,  # LC_LAZY_LOAD_DYLIB
    0x24,  # LC_VERSION_MIN_MACOSX
    0x32,  # LC_BUILD_VERSION
    0x80000018,  # LC_LOAD_WEAK_DYLIB
    0x8000001C,  # LC_RPATH
    0x8000001F,  # LC_REEXPORT_DYLIB
    0x80000023,  # LC_LOAD_UPWARD_DYLIB
}
FAT_MAGICS = (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf")
#: Slices of one fat file, and load commands of one slice, beyond which the file is refused.
MAX_SLICES, MAX_COMMANDS = 64, 65_536
#: Dylib load commands of one slice (the model numbers libraries in 15 bits; real files: tens).
MAX_DYLIBS = 16_384


class Slice(NamedTuple):
    """One Mach-O image of a file (the file itself when thin): its ``offset`` in the file and its
    ``end`` (bytes: the fat header's offset + size; the end of a thin file), byte order, header fields, and its load commands as ``(cmd, structure, bytes)`` — the
    structure parsed by macholib's definition (``None`` for a command it does not define) and the
    command's whole ``cmdsize`` bytes."""

    offset: int
    end: int
    little: bool
    cputype: int
    cpusubtype: int
    filetype: int
    flags: int
    commands: list[tuple[int, Any, bytes]]


def _slices(buf: Buffer) -> list[Slice]:
    """The fat header's slices (``fat_arch``/``fat_arch64``) or the one thin image, each with its
    load commands.  macholib's structure definitions parse the headers and commands; the walk is
    ours, because ``macholib.MachO`` also reads every section's contents (130 MB of a 207 MB
    ``libtorch_cpu.dylib``) where a linkage audit needs only the load commands.

    Raises:
        MalformedLinkedit: a fat header, Mach-O header or load command outside the file, a
            ``cmdsize`` too small or past ``sizeofcmds``, more than the caps above, or two slices
            of one architecture (as lipo refuses them).
    """
    if bytes(buf[:4]) not in FAT_MAGICS:
        return [_thin(buf, 0, len(buf), None)]
    offsets, archs = _fat_offsets(buf)
    slices = [_thin(buf, base, slice_end, fat_cpu) for base, slice_end, fat_cpu in offsets]
    seen: dict[tuple[int, int], int] = {}
    for i, arch in enumerate(archs):  # once each slice is known to be a Mach-O image
        if arch in seen:  # lipo: "fat file contains two of the same architecture"; dyld takes the first
            raise linkedit.MalformedLinkedit(
                f"slices {seen[arch]} and {i} are both {arch_name(*arch)}: lipo refuses such a fat "
                "file, and which one a loader takes is not defined"
            )
        seen[arch] = i
    return slices


def _fat_offsets(buf: Buffer) -> tuple[list[tuple[int, int, int | None]], list[tuple[int, int]]]:
    """The fat header's slices as ``(start, end, cputype)`` (``fat_arch`` or ``fat_arch64``), and
    each one's ``(cputype, cpusubtype)``, the subtype's capability bits cleared.

    Raises:
        MalformedLinkedit: more than ``MAX_SLICES`` slices, an entry or a slice past the end of
            the file, or two slices that overlap.
    """
    from macholib import mach_o  # type: ignore[import-untyped]
    from macholib.ptypes import sizeof  # type: ignore[import-untyped]

    size = len(buf)
    offsets: list[tuple[int, int, int | None]] = []  # (start, end, the fat header's cputype)
    archs: list[tuple[int, int]] = []  # (cputype, cpusubtype without its capability bits) of each slice
    wide = buf[3] == 0xBF
    count = struct.unpack(">I", buf[4:8])[0]
    if count > MAX_SLICES:
        raise linkedit.MalformedLinkedit(f"fat header lists {count} slices, more than {MAX_SLICES}")
    arch = mach_o.fat_arch64 if wide else mach_o.fat_arch
    width = sizeof(arch)
    for i in range(count):
        at = 8 + i * width
        if at + width > size:
            raise linkedit.MalformedLinkedit(f"fat header entry {i} runs past the end of the file")
        entry = arch.from_str(bytes(buf[at : at + width]), _endian_=">")
        if entry.offset + entry.size > size:
            raise linkedit.MalformedLinkedit(
                f"slice {i} ({entry.size} bytes at {entry.offset}) runs past the end of the file"
            )
        for start, end, _cpu in offsets:
            if entry.offset < end and start < entry.offset + entry.size:
                raise linkedit.MalformedLinkedit(f"slice {i} overlaps another slice of the fat file")
        archs.append((entry.cputype, entry.cpusubtype & ~CPU_SUBTYPE_MASK))
        offsets.append((entry.offset, entry.offset + entry.size, entry.cputype))
    return offsets, archs


def _thin(buf: Buffer, base: int, slice_end: int, fat_cpu: int | None) -> Slice:
    """The thin image at ``base`` (ending at ``slice_end``) with its load commands; ``fat_cpu``: the
    CPU type the fat header gives it (None for a thin file).

    Raises:
        MalformedLinkedit: no Mach-O header, a header past the end of the file or for another CPU
            than the fat header says, or load commands that do not fit (see :func:`_slices`).
    """
    from macholib import mach_o
    from macholib.ptypes import sizeof

    magic = bytes(buf[base : base + 4])
    if magic not in THIN_MAGICS:
        raise linkedit.MalformedLinkedit(f"no Mach-O header at offset {base}")
    little, wide = THIN_MAGICS[magic]
    endian = "<" if little else ">"
    header_cls = mach_o.mach_header_64 if wide else mach_o.mach_header
    at = base + sizeof(header_cls)
    if at > len(buf):
        raise linkedit.MalformedLinkedit(f"the Mach-O header at offset {base} runs past the end of the file")
    header = header_cls.from_str(bytes(buf[base:at]), _endian_=endian)
    if fat_cpu is not None and header.cputype != fat_cpu:
        raise linkedit.MalformedLinkedit(
            f"the slice at offset {base} is for CPU type {header.cputype:#x}, its fat header says {fat_cpu:#x}"
        )
    end = at + header.sizeofcmds
    if end > slice_end or header.ncmds > MAX_COMMANDS:
        raise linkedit.MalformedLinkedit(
            f"{header.ncmds} load commands ({header.sizeofcmds} bytes) at offset {at} do not fit the file"
        )
    commands: list[tuple[int, Any, bytes]] = []
    for i in range(header.ncmds):
        if at + 8 > end:
            raise linkedit.MalformedLinkedit(f"load command {i} runs past sizeofcmds")
        cmd_id, cmdsize = struct.unpack(endian + "II", buf[at : at + 8])
        if cmdsize < 8 or at + cmdsize > end:
            raise linkedit.MalformedLinkedit(f"load command {i} ({cmd_id:#x}) has cmdsize {cmdsize}")
        raw = bytes(buf[at : at + cmdsize])
        cls = mach_o.LC_REGISTRY.get(cmd_id)
        cmd = None
        if cls is not None and 8 + sizeof(cls) <= cmdsize:
            cmd = cls.from_str(raw[8 : 8 + sizeof(cls)], _endian_=endian)
        elif cmd_id in STRUCTURED:
            raise linkedit.MalformedLinkedit(f"load command {i} ({cmd_id:#x}) is too short ({cmdsize} bytes)")
        commands.append((cmd_id, cmd, raw))
        at += cmdsize
    return Slice(base, slice_end, little, header.cputype, header.cpusubtype, header.filetype, header.flags, commands)


def _lc_str(raw: bytes, offset: int, fixed: int) -> str:
    """An ``lc_str``: the NUL-terminated string at ``offset`` from the start of its load command,
    after the command's ``fixed`` bytes of structure."""
    if not fixed <= offset < len(raw):
        raise linkedit.MalformedLinkedit(f"a load command's string offset {offset} lies outside its {len(raw)} bytes")
    return raw[offset:].split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _version(packed: int) -> str:
    """``xxxx.yy.zz`` nibble-packed (``0x000B0000`` -> ``"11.0"``), the patch shown when set."""
    major, minor, patch = packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def _c_name(name: bytes) -> str:
    text = name.decode("utf-8", "surrogateescape")
    return text[1:] if text.startswith("_") else text


def _symbols(
    buf: Buffer, header: Slice, needed: list[NeededLibrary], tables: dict[int, Any], budget: linkedit.EntryBudget
) -> tuple[list[Symbol], list[tuple[str, str]]]:
    """One slice's imports and exports (see the module docstring for which table wins), its tables
    read within the slice (``header.end``), its ``nlist`` entries charged to the file's ``budget``."""
    base, little, end = header.offset, header.little, header.end
    is64 = bool(header.cputype & 0x01000000)
    nlist: list[linkedit.Entry] = []
    if LC_SYMTAB in tables:
        st = tables[LC_SYMTAB]
        dy = tables.get(LC_DYSYMTAB)
        ranges = (dy.iextdefsym, dy.nextdefsym, dy.iundefsym, dy.nundefsym) if dy is not None else None
        symtab = (st.symoff, st.nsyms, st.stroff, st.strsize)
        nlist = linkedit.read_nlist(buf, base, is64, little, symtab, ranges, end, budget)
    if LC_DYLD_CHAINED_FIXUPS in tables:
        fixups = tables[LC_DYLD_CHAINED_FIXUPS]
        imports = linkedit.read_chained_imports(buf, base, fixups.dataoff, fixups.datasize, end)
    else:
        imports = [e for e in nlist if not e.defined]
    trie = tables.get(LC_DYLD_EXPORTS_TRIE)
    info = tables.get(LC_DYLD_INFO_ONLY) or tables.get(LC_DYLD_INFO)
    if trie is not None:
        exports = linkedit.read_export_trie(buf, base, trie.dataoff, trie.datasize, end)
    elif info is not None and info.export_size:
        exports = linkedit.read_export_trie(buf, base, info.export_off, info.export_size, end)
    else:
        exports = [e for e in nlist if e.defined]
    twolevel = bool(header.flags & MH_TWOLEVEL)

    def library(ordinal: int) -> str | None:
        if not twolevel or ordinal in FLAT_ORDINALS:
            return None
        return needed[ordinal - 1].name if ordinal <= len(needed) else f"#ordinal {ordinal}"

    symbols: list[Symbol] = []
    forwarders: list[tuple[str, str]] = []
    seen: set[tuple[bytes, int]] = set()
    for e in imports:
        if (e.name, e.ordinal) not in seen:  # chained fixups list an import once per addend
            seen.add((e.name, e.ordinal))
            symbols.append(linked_symbol(_c_name(e.name), False, library(e.ordinal), e.weak))
    for e in exports:
        if e.reexport is not None:
            target = library(e.ordinal) or f"#ordinal {e.ordinal}"
            forwarders.append((_c_name(e.name), f"{target}:{_c_name(e.reexport)}"))
        else:
            symbols.append(linked_symbol(_c_name(e.name), True, None, e.weak, e.value))
    return symbols, forwarders


class _Commands(NamedTuple):
    """What one slice's load commands say about its linkage (see :func:`_linkage_commands`)."""

    needed: list[NeededLibrary]
    rpath: list[str]
    soname: str | None
    min_os: str | None
    sdk: str | None
    min_os_command: str | None
    tables: dict[int, Any]


def _linkage_commands(header: Slice) -> _Commands:
    """One walk over a slice's load commands: the dylibs it loads (LC_LOAD_DYLIB and kin, in
    order), LC_RPATH entries, the install name (LC_ID_DYLIB), the minimum macOS and SDK
    (LC_BUILD_VERSION, else LC_VERSION_MIN_MACOSX) and the first of each LINKEDIT table command.

    Raises:
        MalformedLinkedit: an ``lc_str`` outside its command, or more than ``MAX_DYLIBS`` dylibs.
    """
    from macholib import mach_o

    needs = {
        mach_o.LC_LOAD_DYLIB: NeedKind.PLAIN,
        mach_o.LC_LOAD_WEAK_DYLIB: NeedKind.WEAK,
        mach_o.LC_REEXPORT_DYLIB: NeedKind.REEXPORT,
        mach_o.LC_LOAD_UPWARD_DYLIB: NeedKind.UPWARD,
        mach_o.LC_LAZY_LOAD_DYLIB: NeedKind.LAZY,
    }
    needed: list[NeededLibrary] = []
    rpath: list[str] = []
    soname = None
    min_os = sdk = min_os_command = None
    tables: dict[int, Any] = {}
    for cmd_id, cmd, raw in header.commands:
        if cmd_id in LINKEDIT_COMMANDS:
            tables.setdefault(cmd_id, cmd)
        if cmd_id in needs:
            needed.append(NeededLibrary(_lc_str(raw, cmd.name, 24), needs[cmd_id]))
        elif cmd_id == mach_o.LC_ID_DYLIB:
            soname = _lc_str(raw, cmd.name, 24)
        elif cmd_id == mach_o.LC_RPATH:
            rpath.append(_lc_str(raw, cmd.path, 12))
        elif cmd_id == mach_o.LC_BUILD_VERSION:
            min_os, sdk, min_os_command = _version(cmd.minos), _version(cmd.sdk), "LC_BUILD_VERSION"
        elif cmd_id == mach_o.LC_VERSION_MIN_MACOSX and min_os is None:
            min_os, sdk, min_os_command = _version(cmd.version), _version(cmd.sdk), "LC_VERSION_MIN_MACOSX"
    if len(needed) > MAX_DYLIBS:
        raise linkedit.MalformedLinkedit(f"{len(needed)} dylib load commands, more than {MAX_DYLIBS}")
    return _Commands(needed, rpath, soname, min_os, sdk, min_os_command, tables)


def _kind(filetype: int, path: str, symbols: list[Symbol]) -> Kind:
    """The model's kind for a slice's ``filetype`` (MH_EXECUTE, MH_OBJECT, MH_DYLIB, MH_BUNDLE).

    CPython's importlib ``dlopen()``s any file whose name ends in one of ``EXTENSION_SUFFIXES``
    (on macOS ``.cpython-3XY-darwin.so``, ``.abi3.so``, ``.so``) whatever its filetype, and calls
    its ``PyInit_<module>``: a bundle so named (what distutils/setuptools link) is an extension
    module, and so is a dylib so named that exports ``_PyInit_<module>`` (``<module>``: the name up
    to its first dot), as Rust/PyO3 (maturin) links every module."""
    if filetype == MH_EXECUTE:
        return Kind.EXECUTABLE
    if filetype == MH_OBJECT:
        return Kind.RELOCATABLE
    if filetype == MH_BUNDLE and path.endswith(".so"):
        return Kind.PYTHON_EXTENSION  # CPython's extension modules are bundles named *.so
    if filetype == MH_DYLIB and path.endswith(".so"):
        init = "PyInit_" + path.rsplit("/", 1)[-1].split(".", 1)[0]  # the reader drops Mach-O's leading "_"
        if any(s.defined and s.name == init for s in symbols):
            return Kind.PYTHON_EXTENSION
    if filetype in (MH_DYLIB, MH_BUNDLE):
        return Kind.SHARED_LIBRARY
    return Kind.OTHER


def read_macho(path: str, buf: Buffer) -> list[Binary]:
    """Parse every slice of the Mach-O file at ``path`` (thin: one; fat: one per architecture).

    Args:
        path: the file, as reported; macholib reads its fat header and load commands.
        buf: the same file's bytes (``FileBytes``), which our own readers take the symbol tables from.

    Raises:
        InputError: not a Mach-O file macholib can read (truncated, malformed load commands).
        MalformedLinkedit: a symbol table, chained-fixups table or export trie that runs past the
            end of its slice (offsets are from the slice's start and a slice is an image of its own,
            ``mach-o/fat.h``: the message names the slice's architecture), loops, or holds more than
            ``macho_linkedit.MAX_ENTRIES`` entries; more ``nlist`` entries decoded, all slices
            together, than ``macho_linkedit.EntryBudget`` allows for the file's size (a
            ``ValueError``, reported by ``read_path`` as a malformed Mach-O file).
    """
    slices = _slices(buf)
    fat = len(slices) > 1 or bytes(buf[:4]) in FAT_MAGICS
    budget = linkedit.EntryBudget(len(buf))
    out: list[Binary] = []
    for header in slices:
        cputype = header.cputype
        machine = arch_name(cputype, header.cpusubtype)
        fields = _linkage_commands(header)
        try:
            symbols, forwarders = _symbols(buf, header, fields.needed, fields.tables, budget)
        except linkedit.MalformedLinkedit as exc:
            if not fat:
                raise
            where = f"{header.end - header.offset} bytes at offset {header.offset}"
            raise linkedit.MalformedLinkedit(f"the {machine} slice ({where}): {exc}") from exc
        out.append(
            Binary(
                **NOT_ELF,
                path=path,
                format=Format.MACHO,
                machine=machine,
                bits=64 if cputype & 0x01000000 else 32,
                endian=Endian.LITTLE if header.little else Endian.BIG,
                os_abi="Darwin",
                kind=_kind(header.filetype, path, symbols),
                soname=fields.soname,
                needed=tuple(fields.needed),
                rpath=tuple(fields.rpath),
                symbols=SymbolTable.from_symbols(symbols),
                forwarders=tuple(forwarders),
                member=machine if fat else None,
                file_size=len(buf),
                min_os=fields.min_os,
                sdk=fields.sdk,
                min_os_command=fields.min_os_command,
            )
        )
    return out
