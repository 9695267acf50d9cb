"""Writes directories of tiny real ELF shared libraries for the scaling tests and benchmark.

Each library is an ELF64 little-endian x86-64 shared object built by
``tests/formats/elfbuild.py``: a DT_SONAME, its DT_NEEDED entries, an optional
DT_RPATH / DT_RUNPATH and DT_FLAGS_1, and strong GLOBAL FUNC exports.  Nothing
here is ever executed or loaded; the files only need to read as the loader
emulation expects.

``chain(directory, n)`` is issue 14's chain: ``libc0.so`` ... ``libc{n-1}.so``,
each exporting 200 names of its own, each NEEDing the previous, RUNPATH
``$ORIGIN``.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

from tests.formats.elfbuild import DT_NEEDED, DT_RUNPATH, build, sym

DT_SONAME, DT_RPATH, DT_FLAGS_1 = 14, 15, 0x6FFFFFFB
DF_1_NODEFLIB = 0x800
_STT_FUNC_GLOBAL = 0x12
_ET_EXEC = 2
_SHN_TEXT = 1  # any defined section index: the reader only asks "defined or not"


@dataclass(frozen=True)
class Lib:
    """One library to write.

    Attributes:
        file: file name inside the output directory (may contain a subdirectory).
        soname: DT_SONAME, or ``None``.
        needed: DT_NEEDED entries, in order.
        rpath: DT_RPATH entries (``:``-joined into one string).
        runpath: DT_RUNPATH entries.
        nodeflib: set DF_1_NODEFLIB.
        exports: names of strong GLOBAL FUNC symbols it defines.
        imports: names of undefined symbols it references.
        executable: an ET_EXEC file (an executable root) instead of a shared object.
        interpreter: a PT_INTERP naming this loader (``/lib/ld-musl-x86_64.so.1``: read as a musl
            object, ``Libc.MUSL``, and loaded by ``loader.musl``), or ``None``.
    """

    file: str
    soname: str | None = None
    needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    nodeflib: bool = False
    exports: tuple[str, ...] = ()
    imports: tuple[str, ...] = field(default=())
    executable: bool = False
    interpreter: str | None = None


def elf_bytes(lib: Lib) -> bytes:
    """The ELF image of ``lib``."""
    strtab = bytearray(b"\0")

    def intern(text: str) -> int:
        offset = len(strtab)
        strtab.extend(text.encode() + b"\0")
        return offset

    dynamic: list[tuple[int, int]] = []
    if lib.soname:
        dynamic.append((DT_SONAME, intern(lib.soname)))
    dynamic += [(DT_NEEDED, intern(n)) for n in lib.needed]
    if lib.rpath:
        dynamic.append((DT_RPATH, intern(":".join(lib.rpath))))
    if lib.runpath:
        dynamic.append((DT_RUNPATH, intern(":".join(lib.runpath))))
    if lib.nodeflib:
        dynamic.append((DT_FLAGS_1, DF_1_NODEFLIB))
    symbols = [sym(0, 0)]
    symbols += [
        sym(intern(name), _STT_FUNC_GLOBAL, _SHN_TEXT, 0x1000 + 16 * i, 16) for i, name in enumerate(lib.exports)
    ]
    symbols += [sym(intern(name), _STT_FUNC_GLOBAL) for name in lib.imports]
    image = build(bytes(strtab), dynamic, b"".join(symbols), interpreter=lib.interpreter)
    if lib.executable:
        image = image[:16] + struct.pack("<H", _ET_EXEC) + image[18:]
    return image


def write(directory: str, libs: Sequence[Lib]) -> list[str]:
    """Write every library under ``directory``; returns their paths, in order."""
    paths = []
    for lib in libs:
        path = os.path.join(directory, lib.file)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(elf_bytes(lib))
        paths.append(path)
    return paths


#: musl's loader on x86-64: a library whose PT_INTERP names it is loaded by ``loader.musl``.
MUSL_LOADER = "/lib/ld-musl-x86_64.so.1"


def chain_libs(n: int, exports: int = 200, interpreter: str | None = None) -> list[Lib]:
    """Issue 14's chain of ``n`` libraries: each ``exports`` names of its own, NEEDs the previous,
    RUNPATH $ORIGIN; ``interpreter``: each carries that PT_INTERP (``MUSL_LOADER``: a musl chain)."""
    return [
        Lib(
            f"libc{i}.so",
            soname=f"libc{i}.so",
            needed=(f"libc{i - 1}.so",) if i else (),
            runpath=("$ORIGIN",),
            exports=tuple(f"c{i}_f{j}" for j in range(exports)),
            interpreter=interpreter,
        )
        for i in range(n)
    ]


def chain(directory: str, n: int, exports: int = 200, interpreter: str | None = None) -> list[str]:
    """Write ``chain_libs(n, exports, interpreter)`` under ``directory``; returns the paths."""
    return write(directory, chain_libs(n, exports, interpreter))
