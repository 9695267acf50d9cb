"""Format readers: one file's bytes -> ``Binary`` records.

``sniff`` names the container format from a file's first bytes (magic numbers,
never file names); ``read_path`` opens one file read-only (reads through ``pread``,
never a memory map) and dispatches to the reader of its format.  Readers only parse: search paths,
symbol binding and rules live elsewhere and see only the model.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import stat
from collections.abc import Callable

from ..cache import Cache, Key, file_key, member_variant, narrowed
from ..cache import active as active_cache
from ..errors import InputError, UnsupportedFormat
from ..model import Binary
from . import copies, held
from .elf import read_elf
from .filebytes import READER_FAULTS, Buffer, fault_reason, file_bytes, open_file
from .ranges import Member, source_of

#: Bytes ``sniff`` needs to see.
SNIFF_BYTES = 8

_FAT_MAGICS = (b"\xca\xfe\xba\xbe", b"\xca\xfe\xba\xbf")
_MACHO_MAGICS = (b"\xfe\xed\xfa\xce", b"\xfe\xed\xfa\xcf", b"\xce\xfa\xed\xfe", b"\xcf\xfa\xed\xfe")


class Container(enum.StrEnum):
    """What a file's magic bytes say it is."""

    ELF = "elf"
    MACHO = "macho"
    PE = "pe"
    ARCHIVE = "archive"
    LLVM_BITCODE = "llvm-bitcode"
    COFF = "coff"


#: Containers this version can read; the others are recognised and reported as unsupported.
SUPPORTED = frozenset({Container.ELF, Container.ARCHIVE, Container.PE, Container.MACHO, Container.COFF})


#: The most slices a universal (fat) Mach-O header is taken to hold: Java class files share its
#: magic and keep their version, 45 or more, where ``nfat_arch`` would be.
MAX_FAT_ARCHS = 44


def _fat_arch_count(head: bytes) -> int | None:
    """``nfat_arch`` of a file starting with a universal (fat) Mach-O magic (Apple's
    ``<mach-o/fat.h>``, big-endian), or ``None`` for any other start."""
    if head[:4] in _FAT_MAGICS and len(head) >= 8:
        return int.from_bytes(head[4:8], "big")
    return None


def _not_a_binary(head: bytes) -> str:
    """Why ``sniff`` named no container for a file starting with ``head``: a fat magic whose slice
    count is implausible (``_fat_arch_count``) is said as such."""
    nfat = _fat_arch_count(head)
    if nfat is not None:
        return (
            f"not a binary: the universal (fat) Mach-O magic 0x{head[:4].hex()} with nfat_arch {nfat}, "
            f"where a fat header holds 1 to {MAX_FAT_ARCHS} slices (a Java class file has its version there)"
        )
    return "not a binary (no ELF, Mach-O, PE, COFF or ar magic number)"


def sniff(head: bytes) -> Container | None:
    """Name the container format from the first ``SNIFF_BYTES`` bytes of a file, or ``None``.

    Magic numbers: ELF ``\\x7fELF`` (gABI), Mach-O ``MH_MAGIC``/``MH_MAGIC_64`` in
    either byte order and ``FAT_MAGIC``/``FAT_MAGIC_64`` (Apple's ``mach-o/loader.h``,
    ``mach-o/fat.h``), PE/COFF images start with the MS-DOS ``MZ`` stub (Microsoft
    PE format spec), ``ar`` archives with ``!<arch>\\n`` or ``!<thin>\\n``.  Java class
    files share ``\\xca\\xfe\\xba\\xbe``; they are told apart by the slice count.  A COFF object
    (``.obj``) has no magic number: a known ``Machine`` (``coff.MACHINES``) with a section count
    below 0xFFFF, or ``Sig1`` 0 / ``Sig2`` 0xFFFF (``/bigobj``, a short import member).
    """
    if head.startswith(b"\x7fELF"):
        return Container.ELF
    if head[:4] in _MACHO_MAGICS:
        return Container.MACHO
    nfat = _fat_arch_count(head)
    if nfat is not None:
        return Container.MACHO if 0 < nfat <= MAX_FAT_ARCHS else None
    if head.startswith(b"MZ"):
        return Container.PE
    if head.startswith((b"!<arch>\n", b"!<thin>\n")):
        return Container.ARCHIVE
    if head.startswith((b"BC\xc0\xde", b"\xde\xc0\x17\x0b")):
        return Container.LLVM_BITCODE  # raw bitcode, or the bitcode wrapper header
    from .coff import is_coff_object  # COFF objects have no magic: the reader only for what is left

    if is_coff_object(head):
        return Container.COFF
    return None


def read_path(path: str, soft_dependencies: bool = True) -> list[Binary]:
    """Read every binary one file holds (one for ELF and PE; the members of an ``ar`` archive;
    one per slice of a fat Mach-O, later).

    The file is opened read-only and read with ``pread`` (``filebytes``), never mapped: a file
    that shrinks while it is read is an ``InputError``, not a SIGBUS.  It is never executed or loaded.
    A file of at most ``copies.SMALL_FILE_BYTES`` is read whole, parsed once per content and
    never cached on disk (``copies``); a larger one goes through the active cache, if any.  A
    package member held in memory (``held``) is parsed from its bytes, as a small file is.

    Args:
        path: path to the file, reported as given.
        soft_dependencies: also read the library names in ``.rodata`` (see ``read_elf``).

    Returns:
        The ``Binary`` records parsed from the file.

    Raises:
        UnsupportedFormat: the file is of a recognised format this version does
            not read (an ``InputError``).
        InputError: the file cannot be opened (missing, unreadable, a symlink
            loop, not a regular file), is empty, is not a binary, is malformed,
            or holds a table too large to read.
    """
    kept = held.held(path)
    if kept is not None:  # a package's small member held in memory, never written (``held``)
        return copies.parse_small(path, kept[1], soft_dependencies, read_bytes, kept[0])
    fd, st = open_file(path)
    try:
        member = source_of(st)
        if member is not None and not _whole(member):  # inflated to its kept ranges, or found in the cache
            return _read_member(path, member, soft_dependencies)
        if st.st_size == 0:
            raise InputError(path, "empty file (0 bytes)")
        if st.st_size <= copies.SMALL_FILE_BYTES:  # cheaper to parse than to cache; copies parsed once
            small = copies.read_small(path, fd, st.st_size, soft_dependencies, read_bytes)
            if small is not None:
                return small
        store = active_cache()
        if store is None:
            return read_bytes(path, file_bytes(fd, path, st.st_size), soft_dependencies)
        key = _key(fd, st, path, soft_dependencies, member)
        return cached_read(
            store, key, path, lambda: read_bytes(path, file_bytes(fd, path, st.st_size), soft_dependencies)
        )
    finally:
        os.close(fd)


def _how(path: str, soft_dependencies: bool) -> str:
    """How ``read_path`` read an ordinary file: part of its cache key."""
    return f"{path}\0{soft_dependencies}"


def _whole(member: Member) -> bool:
    """True for a package member written out whole with its cache key (a tar member)."""
    return member.source is None and member.binaries is None and member.key is not None


def _key(fd: int, st: os.stat_result, path: str, soft_dependencies: bool, member: Member | None) -> Key:
    """The cache key of a file read by ``read_path``: a whole member's own (``member.key``)
    narrowed by how it is read — the file name it is read under (the readers take the file's
    kind from it: ``copies.path_traits``; a symlink of the package may name the member
    otherwise) and soft dependencies —, else the file's (``cache.file_key``)."""
    if member is not None and member.key is not None and _whole(member):
        return narrowed(member.key, "whole", path.rsplit("/", 1)[-1], soft_dependencies)
    return file_key(fd, st, _how(path, soft_dependencies))


def cached_already(path: str, soft_dependencies: bool = True) -> bool:
    """Whether the active cache holds an entry for the ordinary file ``path`` read as ``read_path``
    reads it (by its key; presence only, the entry is validated when read): a warm read costs
    less than sending its records back from a worker process (``jobs.read_paths``)."""
    store = active_cache()
    if store is None:
        return False
    try:
        st = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
        return False
    member = source_of(st)
    if member is not None and not _whole(member):
        return False
    return store.holds(_key(-1, st, path, soft_dependencies, member))


def cached_read(store: Cache, key: Key, path: str, read: Callable[[], list[Binary]]) -> list[Binary]:
    """The binaries ``store`` holds under ``key`` (their ``path`` set to ``path``), else ``read()``'s,
    stored unless they name another file (a thin archive's members)."""
    hit = store.get(key, path)
    if hit is not None:
        return list(hit)
    binaries = read()
    if not any(b.member_file for b in binaries):
        store.put(key, tuple(binaries))
    return binaries


def _read_member(path: str, member: Member, soft_dependencies: bool) -> list[Binary]:
    """Read a placeholder's member: the binaries the cache gave at staging, or its kept ranges
    (then cached under the member's key)."""
    if member.binaries is not None:
        # only read_elf reads soft dependencies (into dlopen_names)
        return [
            dataclasses.replace(b, path=path, dlopen_names=b.dlopen_names if soft_dependencies else ())
            for b in member.binaries
        ]
    if member.source is None:
        raise InputError(path, "a package member with no bytes kept")
    source = member.source
    store = active_cache() if member.key is not None else None
    if store is None or member.key is None:
        return read_bytes(path, source, soft_dependencies)
    key = dataclasses.replace(member.key, name=member_variant(member.key.name, soft_dependencies))
    return cached_read(store, key, path, lambda: read_bytes(path, source, soft_dependencies))


def read_bytes(path: str, buf: Buffer, soft_dependencies: bool = True, kind: Container | None = None) -> list[Binary]:
    """Read every binary of one file's bytes ``buf`` (what ``read_path`` does once the file is open).

    Args:
        path: the path to report.
        buf: the file's bytes (``bytes``, or ``FileBytes`` read on demand).
        soft_dependencies: as for ``read_path``.
        kind: the container to read ``buf`` as; by default the one ``sniff`` names.

    Raises:
        InputError: as ``read_path``: every fault of the readers (``struct.error``, ``IndexError``,
            ``ValueError``, ``OverflowError``, ``MemoryError``) becomes one naming ``path``.
    """
    size = len(buf)
    if kind is None:
        head = buf[:SNIFF_BYTES]
        kind = sniff(head)
        if kind is None:
            raise InputError(path, _not_a_binary(bytes(head)), 0)
    if kind not in SUPPORTED:
        raise UnsupportedFormat(path, kind.value, unsupported_reason(kind))
    try:
        return _read(path, kind, buf, soft_dependencies)
    except InputError:
        raise
    except READER_FAULTS as exc:
        what = {Container.PE: "PE", Container.MACHO: "Mach-O", Container.COFF: "COFF"}.get(kind, "ELF")
        raise InputError(path, fault_reason(exc, what, size)) from exc


def _read(path: str, kind: Container, buf: Buffer, soft_dependencies: bool) -> list[Binary]:
    """Dispatch the bytes ``buf`` of container ``kind`` to its reader."""
    if kind is Container.ARCHIVE:
        from .archive import read_archive

        return read_archive(path, buf, len(buf))
    if kind is Container.PE:
        from .pe import read_pe

        return [read_pe(path, buf, len(buf))]
    if kind is Container.MACHO:
        from .macho import read_macho

        return read_macho(path, buf)
    if kind is Container.COFF:
        from .coff import read_coff_binary

        return [read_coff_binary(path, buf, len(buf))]
    return [read_elf(path, buf, len(buf), soft_dependencies)]


def unsupported_reason(kind: Container) -> str:
    """Why a file of the recognised but unsupported format ``kind`` is skipped, for reports."""
    if kind is Container.LLVM_BITCODE:
        return (
            "an LLVM bitcode file (an LTO object): its symbols are in LLVM's intermediate representation, "
            "not visible to the duplicate analysis"
        )
    what = {
        Container.ARCHIVE: "an ar archive (static library)",
        Container.MACHO: "a Mach-O file",
        Container.PE: "a PE/COFF file",
    }.get(kind, f"a {kind.value} file")
    return f"{what}: format not supported yet"
