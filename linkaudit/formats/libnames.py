"""Files named like a shared library that are not one.

A directory walk and a package's staging pick binaries by their magic bytes, never by name
(``formats.sniff``), so a file that is no binary is passed over.  That is right for data, text
and scripts, and wrong for a file the loader will be asked to open: a Python extension module
``_ext.cpython-312-x86_64-linux-gnu.so`` of random bytes, a 0-byte ``libfoo.so.1``, or a Git LFS
pointer committed in place of ``libfoo.so`` all install fine and fail at import time (glibc's
``dl-load.c``: "file too short", "invalid ELF header"; Windows' loader: "%1 is not a valid Win32
application").  ``not_a_library`` says why such a file cannot be loaded, so that it is named as
an unreadable input rather than dropped without a word.

One kind of text file is a library by design: a GNU ld linker script (``libc.so``,
``libncurses.so``: ``INPUT(...)``/``GROUP(...)``) is read by the link editor, never by the
loader; it is passed over as before.
"""

from __future__ import annotations

import re

#: Bytes read from a file named like a library to tell why it is none (a linker script's
#: command comes after its comment header, within the first few hundred bytes).
HEAD_BYTES = 1024

#: A shared library's file name: ELF's ``*.so`` and ``*.so.1.2``, Mach-O's ``*.dylib``, PE's
#: ``*.dll`` and Python's ``*.pyd`` (case-insensitive: Windows names).
_LIBRARY_NAME = re.compile(r"\.(?:so(?:\.\d+)*|dylib|dll|pyd)\Z", re.IGNORECASE)

#: The commands that make a text file a GNU ld script (``ld``'s manual, "Linker Scripts").
_LD_SCRIPT = re.compile(rb"\b(?:INPUT|GROUP|OUTPUT_FORMAT|SEARCH_DIR|AS_NEEDED)\s*\(")

_LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def library_named(name: str) -> bool:
    """True when the file name ``name`` (a path or a base name) is a shared library's: ends in
    ``.so``, ``.so.N[.M...]``, ``.dylib``, ``.dll`` or ``.pyd``."""
    return _LIBRARY_NAME.search(name) is not None


def not_a_library(head: bytes) -> str | None:
    """Why a file named like a shared library, which ``sniff`` found no binary in, cannot be
    loaded, from its first ``HEAD_BYTES`` bytes ``head`` (all of them when shorter); ``None`` for a
    GNU ld linker script, which is the link editor's and no loader's."""
    if not head:
        return "named like a shared library, but empty (0 bytes): the loader refuses it (glibc: 'file too short')"
    if head.startswith(_LFS_POINTER):
        return (
            "named like a shared library, but a Git LFS pointer: the library itself was never fetched "
            "(`git lfs pull` before building)"
        )
    if b"\0" not in head and _LD_SCRIPT.search(head):
        return None
    what = "text" if b"\0" not in head and head.isascii() else "data"
    return (
        f"named like a shared library, but holds {what} with no ELF, Mach-O or PE header "
        f"(first bytes {head[:8].hex(' ')}): the loader refuses it (glibc: 'invalid ELF header')"
    )
