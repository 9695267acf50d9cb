"""PE reader: bytes of one PE/COFF image (a DLL, an EXE, a ``.pyd``) -> one ``Binary``.

The container is read with pefile (``fast_load``, then only the three data directories a linkage
audit needs: the import table, the delay-load import table and the export table — not the
resources, relocations or debug data, which make up most of a 200 MB CUDA DLL's parse time).
What is kept, in the format-neutral model:

* ``needed``: the DLLs of the import table, in table order (``NeedKind.PLAIN``), then those of the
  delay-load import table (``NeedKind.DELAY_LOAD``: loaded at the first call of one of its
  functions, not at load time);
* ``symbols``: every import as an undefined symbol whose ``version`` names the DLL it is imported
  from (``SymbolVersion(dll, file=dll)``, as an ELF version need names its file) — by name, or
  ``#N`` for an import by ordinal; delay-load imports are weak (they may stay unresolved at load
  time); then every export as a defined symbol (``#N`` when exported by ordinal only);
* ``forwarders``: exports that name a function of another DLL (``"nvrtc64_120_0.nvrtcGetPTX"``);
* ``soname``: the DLL name the export directory records; ``kind``: a DLL (``IMAGE_FILE_DLL``) is a
  shared library — a Python extension module when named ``*.pyd`` — anything else an executable.

Sources: Microsoft's PE format specification ("The .idata Section", "Delay-Load Import Tables",
"The .edata Section": export address table, name pointer table, ordinal table, forwarder RVAs);
pefile's documentation for the directory entries it builds.
"""

from __future__ import annotations

import os
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

#: IMAGE_FILE_HEADER.Machine -> the field's name for it (PE format specification, "Machine Types").
MACHINES = {0x14C: "i386", 0x8664: "x86-64", 0xAA64: "aarch64", 0x1C4: "arm", 0x5064: "riscv64"}
IMAGE_FILE_DLL = 0x2000
PE32_PLUS = 0x20B
#: Imports or exports of one image beyond which the file is refused (no real DLL comes close:
#: cublasLt64_13.dll exports about 3,000 functions).
MAX_ENTRIES = 1_000_000

_DIRECTORIES = (
    "IMAGE_DIRECTORY_ENTRY_IMPORT",
    "IMAGE_DIRECTORY_ENTRY_DELAY_IMPORT",
    "IMAGE_DIRECTORY_ENTRY_EXPORT",
)


def _text(value: bytes | None) -> str:
    return value.decode("utf-8", "surrogateescape") if value else ""


def _imports(entries: Any, delay: bool, symbols: list[Symbol], needed: list[NeededLibrary]) -> None:
    kind = NeedKind.DELAY_LOAD if delay else NeedKind.PLAIN
    for entry in entries or ():
        dll = _text(entry.dll)
        needed.append(NeededLibrary(dll, kind))
        for imp in entry.imports:
            name = _text(imp.name) if imp.name else f"#{imp.ordinal}"
            symbols.append(linked_symbol(name, False, dll, weak=delay))


def read_pe(path: str, buf: bytes | Any, size: int) -> Binary:
    """Parse one PE image.

    Args:
        path: the path to report (as the user gave it).
        buf: the file's bytes (``bytes`` or a read-only ``mmap``).
        size: the file size, bytes.

    Returns:
        The ``Binary`` (``format`` PE, ``libc`` NONE, no RPATH or versions: PE has neither).

    Raises:
        InputError: not a PE image (an MS-DOS executable, a truncated header), a malformed
            import or export table, or more than ``MAX_ENTRIES`` imports or exports.
    """
    import pefile  # type: ignore[import-untyped]

    try:
        pe = pefile.PE(data=buf, fast_load=True)
        pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY[d] for d in _DIRECTORIES])
    except pefile.PEFormatError as exc:
        raise InputError(path, f"malformed PE file: {exc.value if hasattr(exc, 'value') else exc}") from exc
    except (AttributeError, IndexError, ValueError, TypeError, OverflowError) as exc:
        raise InputError(path, f"malformed PE file: {exc}") from exc
    machine_id = pe.FILE_HEADER.Machine
    machine = MACHINES.get(machine_id, f"unknown({machine_id:#x})")
    bits = 64 if pe.OPTIONAL_HEADER.Magic == PE32_PLUS else 32
    symbols: list[Symbol] = []
    needed: list[NeededLibrary] = []
    _imports(getattr(pe, "DIRECTORY_ENTRY_IMPORT", None), False, symbols, needed)
    _imports(getattr(pe, "DIRECTORY_ENTRY_DELAY_IMPORT", None), True, symbols, needed)
    soname = None
    forwarders: list[tuple[str, str]] = []
    export = getattr(pe, "DIRECTORY_ENTRY_EXPORT", None)
    if export is not None:
        soname = _text(getattr(export, "name", None)) or None
        for sym in export.symbols:
            name = _text(sym.name) if sym.name else f"#{sym.ordinal}"
            if sym.forwarder:
                forwarders.append((name, _text(sym.forwarder)))
            symbols.append(linked_symbol(name, True, value=sym.address or 0))
    if len(symbols) > MAX_ENTRIES:
        raise InputError(path, f"{len(symbols)} imports and exports, more than {MAX_ENTRIES}: not a real image")
    is_dll = bool(pe.FILE_HEADER.Characteristics & IMAGE_FILE_DLL)
    if is_dll:
        kind = Kind.PYTHON_EXTENSION if os.path.basename(path).lower().endswith(".pyd") else Kind.SHARED_LIBRARY
    else:
        kind = Kind.EXECUTABLE
    return Binary(
        path=path,
        format=Format.PE,
        machine=machine,
        bits=bits,
        endian=Endian.LITTLE,
        os_abi="Windows",
        interpreter=None,
        libc=Libc.NONE,
        kind=kind,
        soname=soname,
        needed=tuple(needed),
        rpath=(),
        runpath=(),
        flags=0,
        flags_1=0,
        bind_now=False,
        version_needs=(),
        version_definitions=(),
        symbols=SymbolTable.from_symbols(symbols),
        file_size=size,
        forwarders=tuple(forwarders),
    )
