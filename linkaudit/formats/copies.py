"""Small files: read whole, never cached on disk, and parsed once per content (issue 14 §1, §2).

A package of 200,000 tiny libraries — often copies of a few — was read file by file: each one
opened, parsed, and written to the on-disk cache.  For a file under ``SMALL_FILE_BYTES`` the
cache costs more than the parse it saves: measured on this project's 2-core machine
(``benchmarks/bench_scale.py``; 6 to 64 KB libraries), parsing one from memory takes 0.16 to
0.23 ms, a cache hit 0.12 to 0.35 ms, writing a fresh entry 1.4 to 2.1 ms.  So such a file is
read with one ``pread`` and parsed from memory, and copies of one content are parsed once:
the records are remembered by the file's SHA-256 (the cache's content hash) and handed to each
copy with its own ``path``.

The readers take one thing from a file's path besides naming it: its ``Kind`` (a Python
extension by its suffix or its ``PyInit_<module>`` symbol, ELF; ``.pyd``, PE; a bundle named
``.so``, or a dylib so named exporting ``_PyInit_<module>``, Mach-O).  ``path_traits`` is what decides it, and is part of the memo's key; ``ar``
archives (members named after the archive, thin members beside it) are never remembered.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable

from ..model import Binary
from .elf import PYEXT_SUFFIX

#: The first four bytes of a thin or fat Mach-O file: ``macho.THIN_MAGICS`` and ``macho.FAT_MAGICS``
#: (spelled here: the Mach-O reader is imported only once a Mach-O file is read).
MACHO_MAGICS = frozenset(
    {
        b"\xfe\xed\xfa\xce",
        b"\xce\xfa\xed\xfe",
        b"\xfe\xed\xfa\xcf",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
        b"\xca\xfe\xba\xbf",
    }
)

#: Files smaller than this (bytes) are read whole, parsed from memory, remembered by content,
#: and never written to the on-disk cache (see the module's docstring for the measurements).
SMALL_FILE_BYTES = 64 << 10
#: Distinct contents remembered (the oldest is forgotten first): ~20 KB of records each at most.
MAX_REMEMBERED = 4096

#: (SHA-256, soft dependencies, path traits) -> the records read from the first copy.
_PARSED: dict[tuple[bytes, bool, tuple[object, ...]], tuple[Binary, ...]] = {}
#: Whether a content (by SHA-256) holds ``"\0PyInit_"`` anywhere (``path_traits``' look-up is then needed).
_PYINIT: dict[bytes, bool] = {}
_LOCK = threading.Lock()


def path_traits(path: str, data: bytes, pyinit: bool | None = None) -> tuple[object, ...]:
    """Everything a reader derives from ``path`` (other than reporting it) for a file of bytes
    ``data``: two paths with equal traits give equal records but for ``path``.

    ELF (``elf._kind``): the CPython/PyPy extension suffix of the file name, and whether the
    string ``PyInit_<module>`` (``<module>``: the name up to its first dot) is in the file at all
    (the reader looks for it in the dynamic string table, a part of the file); PE
    (``pe.read_pe``): a ``.pyd`` name; Mach-O (``macho._kind``): a name ending ``.so`` and, for such
    a Mach-O file, ``<module>`` itself (a dylib exporting ``_PyInit_<module>`` is an extension; the
    export trie spells names in shared prefixes, so the bytes need not hold the name whole).
    ``pyinit``: whether ``data`` holds ``"\0PyInit_"`` at all, when known (``False``: no module's
    name is looked for).
    """
    base = path.rsplit("/", 1)[-1]
    module = base.split(".", 1)[0]
    init = (
        bool(module)
        and pyinit is not False
        and b"\0PyInit_" + module.encode("utf-8", "surrogateescape") + b"\0" in data
    )
    macho = path.endswith(".so") and data[:4] in MACHO_MAGICS
    return (
        PYEXT_SUFFIX.search(base) is not None,
        module if init or macho else None,
        base.lower().endswith(".pyd"),
        path.endswith(".so"),
    )


def read_small(
    path: str, fd: int, size: int, soft_dependencies: bool, read: Callable[[str, bytes, bool], list[Binary]]
) -> list[Binary] | None:
    """The records of the small file open as ``fd`` (``size`` bytes, at most ``SMALL_FILE_BYTES``):
    ``read(path, data, soft_dependencies)``'s for its first copy, remembered ones for the others.

    Returns ``None`` when the file did not read back whole (it changed while read, or the read
    failed): the caller reads it the ordinary way, which says what went wrong.

    Raises:
        InputError: as ``read`` (errors are never remembered: each copy is read again).
    """
    try:
        data = os.pread(fd, size, 0)
    except OSError:
        return None
    if len(data) != size:
        return None
    return parse_small(path, data, soft_dependencies, read)


def parse_small(
    path: str,
    data: bytes,
    soft_dependencies: bool,
    read: Callable[[str, bytes, bool], list[Binary]],
    digest: bytes | None = None,
) -> list[Binary]:
    """The records of the small file ``path`` whose bytes are ``data`` (``digest``: their SHA-256,
    when known): ``read(path, data, soft_dependencies)``'s for the first copy of its content,
    remembered ones for the others.

    Raises:
        InputError: as ``read`` (errors are never remembered: each copy is read again).
    """
    digest = digest or hashlib.sha256(data).digest()
    pyinit = _PYINIT.get(digest)
    if pyinit is None:  # once per content, not per copy: each copy has a name of its own to look for
        pyinit = _PYINIT[digest] = b"\0PyInit_" in data
        if len(_PYINIT) > MAX_REMEMBERED:
            _PYINIT.pop(next(iter(_PYINIT)), None)
    key = (digest, soft_dependencies, path_traits(path, data, pyinit))
    found = _PARSED.get(key)
    if found is not None:
        return [b.with_path(path) for b in found]
    binaries = read(path, data, soft_dependencies)
    if not data.startswith((b"!<arch>\n", b"!<thin>\n")):
        for k, binary in enumerate(binaries):  # what a binding stored across runs is keyed by
            binary.symbols.set_identity(f"small.{key[0].hex()}.{key[1:]!r}.{k}")
        with _LOCK:
            if len(_PARSED) >= MAX_REMEMBERED:
                _PARSED.pop(next(iter(_PARSED)), None)
            _PARSED[key] = tuple(binaries)
    return binaries


def forget() -> None:
    """Forget every remembered content (tests; a long-lived process that wants the memory back)."""
    with _LOCK:
        _PARSED.clear()
        _PYINIT.clear()
