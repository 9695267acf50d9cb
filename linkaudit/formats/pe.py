"""PE reader: bytes of one PE/COFF image (a DLL, an EXE, a ``.pyd``) -> one ``Binary``.

The headers and section table are read with pefile (``fast_load``: no data directory parsed);
the three directories a linkage audit needs — the import table, the delay-load import table and
the export table — by our own readers (``pe_directories``: pefile's stop silently at fixed caps).
Resources, relocations and debug data, most of a 200 MB CUDA DLL, are never touched.  What is
kept, in the format-neutral model:

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
from .filebytes import Buffer
from .pe_directories import Image, Imports, MalformedDirectory, Section

#: IMAGE_FILE_HEADER.Machine -> the field's name for it (PE format specification, "Machine Types").
MACHINES = {0x14C: "i386", 0x8664: "x86-64", 0xAA64: "aarch64", 0x1C4: "arm", 0x5064: "riscv64"}
IMAGE_FILE_DLL = 0x2000
PE32_PLUS = 0x20B

#: Data directory indices (PE format specification, "Optional Header Data Directories").
DIRECTORY_EXPORT, DIRECTORY_IMPORT, DIRECTORY_DELAY_IMPORT = 0, 1, 13


def _imports(tables: list[Imports], delay: bool, symbols: list[Symbol], needed: list[NeededLibrary]) -> None:
    kind = NeedKind.DELAY_LOAD if delay else NeedKind.PLAIN
    for table in tables:
        needed.append(NeededLibrary(table.dll, kind))
        symbols.extend(linked_symbol(name, False, table.dll, weak=delay) for name in table.functions)


def _headers(path: str, buf: Buffer) -> Any:
    """pefile's reading of the headers and section table only (``fast_load``: no directory).

    Raises:
        InputError: not a PE image (pefile's ``PEFormatError``, or its own errors on a header it
            cannot make sense of).
    """
    import pefile  # type: ignore[import-untyped]

    try:
        return pefile.PE(data=buf, fast_load=True)
    except pefile.PEFormatError as exc:
        raise InputError(path, f"malformed PE file: {exc.value if hasattr(exc, 'value') else exc}") from exc
    except (AttributeError, IndexError, ValueError, TypeError, OverflowError) as exc:
        raise InputError(path, f"malformed PE file: {exc}") from exc


def _image(pe: Any, buf: Buffer, bits: int) -> Image:
    """The image as the loader maps it, for our directory readers: each section's RVA range and
    file offset (rounded down to 512 bytes when FileAlignment is at least that, as the loader
    does), and the headers' size."""
    header = pe.OPTIONAL_HEADER
    align = 0x200 if header.FileAlignment >= 0x200 else 1
    return Image(
        buf,
        [
            Section(s.VirtualAddress, s.Misc_VirtualSize, s.PointerToRawData // align * align, s.SizeOfRawData)
            for s in pe.sections
        ],
        header.SizeOfHeaders,
        bits == 64,
    )


def _kind(pe: Any, path: str) -> Kind:
    """A DLL (``IMAGE_FILE_DLL``) is a shared library, or a Python extension when named ``*.pyd``;
    any other image an executable."""
    if pe.FILE_HEADER.Characteristics & IMAGE_FILE_DLL:
        return Kind.PYTHON_EXTENSION if os.path.basename(path).lower().endswith(".pyd") else Kind.SHARED_LIBRARY
    return Kind.EXECUTABLE


def read_pe(path: str, buf: Buffer, size: int) -> Binary:
    """Parse one PE image.

    Args:
        path: the path to report (as the user gave it).
        buf: the file's bytes (``bytes``, or ``FileBytes`` read on demand: pefile reads the headers through it).
        size: the file size, bytes.

    Returns:
        The ``Binary`` (``format`` PE, ``libc`` NONE, no RPATH or versions: PE has neither).

    Raises:
        InputError: not a PE image (an MS-DOS executable, a truncated header), a malformed
            import or export table, or more imports and exports than ``pe_directories`` allows (``MAX_ENTRIES``, one per ``ENTRY_BYTES`` bytes).
    """
    pe = _headers(path, buf)
    header = pe.OPTIONAL_HEADER
    machine_id = pe.FILE_HEADER.Machine
    machine = MACHINES.get(machine_id, f"unknown({machine_id:#x})")
    bits = 64 if header.Magic == PE32_PLUS else 32
    image = _image(pe, buf, bits)
    directories = header.DATA_DIRECTORY

    def directory(index: int) -> tuple[int, int]:
        return (directories[index].VirtualAddress, directories[index].Size) if index < len(directories) else (0, 0)

    try:
        symbols: list[Symbol] = []
        needed: list[NeededLibrary] = []
        _imports(image.imports(*directory(DIRECTORY_IMPORT)), False, symbols, needed)
        _imports(image.delay_imports(*directory(DIRECTORY_DELAY_IMPORT), header.ImageBase), True, symbols, needed)
        soname, exports = image.exports(*directory(DIRECTORY_EXPORT))
    except MalformedDirectory as exc:
        raise InputError(path, f"malformed PE file: {exc}") from exc
    forwarders = [(e.name, e.forwarder) for e in exports if e.forwarder is not None]
    symbols.extend(linked_symbol(e.name, True, value=e.rva) for e in exports)
    soname = soname or None
    kind = _kind(pe, path)
    return Binary(
        **NOT_ELF,
        path=path,
        format=Format.PE,
        machine=machine,
        bits=bits,
        endian=Endian.LITTLE,
        os_abi="Windows",
        kind=kind,
        soname=soname,
        needed=tuple(needed),
        rpath=(),
        symbols=SymbolTable.from_symbols(symbols),
        file_size=size,
        forwarders=tuple(forwarders),
    )
