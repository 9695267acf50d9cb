"""Mach-O reader: one thin or fat (universal) file -> one ``Binary`` per architecture slice.

The container — fat header, Mach-O headers, load commands, the ``LC_SYMTAB``/``LC_DYSYMTAB``
symbol table — is read with macholib.  What is kept, in the format-neutral model:

* ``needed``: the dylibs of ``LC_LOAD_DYLIB`` (``PLAIN``), ``LC_LOAD_WEAK_DYLIB`` (``WEAK``: may be
  missing), ``LC_REEXPORT_DYLIB`` (``REEXPORT``), ``LC_LOAD_UPWARD_DYLIB`` (``UPWARD``) and
  ``LC_LAZY_LOAD_DYLIB`` (``LAZY``), in load-command order — the order two-level library ordinals
  count in;
* ``soname``: the install name (``LC_ID_DYLIB``); ``rpath``: the ``LC_RPATH`` entries, in order,
  duplicates kept (dyld rejects them since macOS 15.4);
* ``min_os`` / ``sdk``: from ``LC_BUILD_VERSION`` or ``LC_VERSION_MIN_MACOSX`` (``"11.0"``);
* ``symbols``: the external symbols of the symbol table, names without the one leading underscore
  Mach-O adds to every C name (``_nvrtcCreateProgram`` -> ``nvrtcCreateProgram``; C++ ``__Z...``
  -> ``_Z...``, the Itanium mangling ELF shows); an undefined one whose two-level library ordinal
  (``GET_LIBRARY_ORDINAL(n_desc)``) names a dylib carries that install name as its version
  (``SymbolVersion(name, file=name)``, as an ELF version need names its file); one looked up flat
  (``DYNAMIC_LOOKUP_ORDINAL``, ``-undefined dynamic_lookup``) carries none; weak references
  (``N_WEAK_REF``) are weak.

Not read yet: ``LC_DYLD_CHAINED_FIXUPS`` imports and the export trie, which binaries built for
macOS 12 and later may carry instead of a full symbol table (a file whose symbol table was stripped
then shows no symbols).  Sources: Apple's ``mach-o/loader.h`` and ``mach-o/nlist.h``
(``GET_LIBRARY_ORDINAL``, ``SELF_LIBRARY_ORDINAL``, ``DYNAMIC_LOOKUP_ORDINAL``,
``EXECUTABLE_ORDINAL``), ``mach-o/fat.h``; macholib's documentation.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError
from ..model import (
    Binary,
    Endian,
    Format,
    Kind,
    Libc,
    NeededLibrary,
    NeedKind,
    Symbol,
    SymbolTable,
    linked_symbol,
)

#: cputype -> the field's name for it (mach/machine.h).
MACHINES = {7: "i386", 0x01000007: "x86-64", 12: "arm", 0x0100000C: "arm64", 0x0200000C: "arm64_32"}
MH_OBJECT, MH_EXECUTE, MH_DYLIB, MH_BUNDLE = 1, 2, 6, 8
N_EXT, N_TYPE, N_UNDF, N_WEAK_REF = 0x01, 0x0E, 0x0, 0x0040
SELF_LIBRARY_ORDINAL, DYNAMIC_LOOKUP_ORDINAL, EXECUTABLE_ORDINAL = 0x0, 0xFE, 0xFF
#: Symbols beyond which a slice is refused (no real dylib comes close).
MAX_SYMBOLS = 5_000_000


def _cstring(data: Any) -> str:
    raw = bytes(data or b"").split(b"\0", 1)[0]
    return raw.decode("utf-8", "surrogateescape")


def _version(packed: int) -> str:
    """``xxxx.yy.zz`` nibble-packed (``0x000B0000`` -> ``"11.0"``), the patch shown when set."""
    major, minor, patch = packed >> 16, (packed >> 8) & 0xFF, packed & 0xFF
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def _c_name(name: bytes) -> str:
    text = name.decode("utf-8", "surrogateescape")
    return text[1:] if text.startswith("_") else text


def read_macho(path: str) -> list[Binary]:
    """Parse every slice of the Mach-O file at ``path`` (thin: one; fat: one per architecture).

    Raises:
        InputError: not a Mach-O file macholib can read (truncated, malformed load commands), or a
            slice with more than ``MAX_SYMBOLS`` symbols.
    """
    from macholib import mach_o  # type: ignore[import-untyped]
    from macholib.MachO import MachO  # type: ignore[import-untyped]
    from macholib.SymbolTable import SymbolTable as MachoSymbols  # type: ignore[import-untyped]

    needs = {
        mach_o.LC_LOAD_DYLIB: NeedKind.PLAIN,
        mach_o.LC_LOAD_WEAK_DYLIB: NeedKind.WEAK,
        mach_o.LC_REEXPORT_DYLIB: NeedKind.REEXPORT,
        mach_o.LC_LOAD_UPWARD_DYLIB: NeedKind.UPWARD,
        mach_o.LC_LAZY_LOAD_DYLIB: NeedKind.LAZY,
    }
    try:
        macho = MachO(path)
    except (ValueError, KeyError, IndexError, OSError, EOFError, AttributeError, TypeError) as exc:
        raise InputError(path, f"malformed Mach-O file: {exc}") from exc
    out: list[Binary] = []
    fat = len(macho.headers) > 1 or macho.fat is not None
    for header in macho.headers:
        cputype = header.header.cputype
        machine = MACHINES.get(cputype, f"unknown({cputype:#x})")
        needed: list[NeededLibrary] = []
        rpath: list[str] = []
        soname = None
        min_os = sdk = None
        for lc, cmd, data in header.commands:
            if lc.cmd in needs:
                needed.append(NeededLibrary(_cstring(data), needs[lc.cmd]))
            elif lc.cmd == mach_o.LC_ID_DYLIB:
                soname = _cstring(data)
            elif lc.cmd == mach_o.LC_RPATH:
                rpath.append(_cstring(data))
            elif lc.cmd == mach_o.LC_BUILD_VERSION:
                min_os, sdk = _version(cmd.minos), _version(cmd.sdk)
            elif lc.cmd == mach_o.LC_VERSION_MIN_MACOSX and min_os is None:
                min_os, sdk = _version(cmd.version), _version(cmd.sdk)
        symbols: list[Symbol] = []
        try:
            table = MachoSymbols(macho, header)
            entries = [*table.undefsyms, *table.extdefsyms]
        except (ValueError, KeyError, IndexError, EOFError, AttributeError, TypeError, OSError):
            entries = []  # no LC_SYMTAB/LC_DYSYMTAB (stripped, or chained fixups only)
        if len(entries) > MAX_SYMBOLS:
            raise InputError(path, f"{len(entries)} symbols in one slice, more than {MAX_SYMBOLS}")
        for nlist, raw in entries:
            defined = (nlist.n_type & N_TYPE) != N_UNDF
            library = None
            if not defined:
                ordinal = (nlist.n_desc >> 8) & 0xFF
                if ordinal not in (SELF_LIBRARY_ORDINAL, DYNAMIC_LOOKUP_ORDINAL, EXECUTABLE_ORDINAL):
                    library = needed[ordinal - 1].name if 0 < ordinal <= len(needed) else f"#ordinal {ordinal}"
            weak = not defined and bool(nlist.n_desc & N_WEAK_REF)
            symbols.append(linked_symbol(_c_name(raw), defined, library, weak, nlist.n_value if defined else 0))
        filetype = header.header.filetype
        if filetype == MH_EXECUTE:
            kind = Kind.EXECUTABLE
        elif filetype == MH_OBJECT:
            kind = Kind.RELOCATABLE
        elif filetype == MH_BUNDLE and path.endswith(".so"):
            kind = Kind.PYTHON_EXTENSION  # CPython's extension modules are bundles named *.so
        elif filetype in (MH_DYLIB, MH_BUNDLE):
            kind = Kind.SHARED_LIBRARY
        else:
            kind = Kind.OTHER
        out.append(
            Binary(
                path=path,
                format=Format.MACHO,
                machine=machine,
                bits=64 if cputype & 0x01000000 else 32,
                endian=Endian.BIG if header.endian == ">" else Endian.LITTLE,
                os_abi="Darwin",
                interpreter=None,
                libc=Libc.NONE,
                kind=kind,
                soname=soname,
                needed=tuple(needed),
                rpath=tuple(rpath),
                runpath=(),
                flags=0,
                flags_1=0,
                bind_now=False,
                version_needs=(),
                version_definitions=(),
                symbols=SymbolTable.from_symbols(symbols),
                member=machine if fat else None,
                min_os=min_os,
                sdk=sdk,
            )
        )
    return out
