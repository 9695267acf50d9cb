"""glibc's ``/etc/ld.so.cache``: bytes -> ``LdCache``, and the cache lookup ld.so does with it.

``ldconfig`` writes the cache; ld.so reads it in ``_dl_load_cache_lookup`` after
DT_RUNPATH and before the system directories.  This module reads it without
running either, so a cache of another machine (a sysroot, an image) can be read
on any host.  The rules below are glibc's; each names where it lives:

* ``sysdeps/generic/dl-cache.h``: the layouts (``struct cache_file``,
  ``struct file_entry``, ``struct cache_file_new``, ``struct file_entry_new``,
  ``struct cache_extension``), the endianness flag, ``DL_CACHE_HWCAP_EXTENSION``,
  ``cache_extension_load`` and ``cache_extension_verify``.
* ``elf/dl-cache.c``: which layout ld.so uses (``_dl_load_cache_lookup`` /
  ``_dl_maybe_load_ldsocache``), the search (``search_cache``), the name
  comparison (``_dl_cache_libcmp``) and the glibc-hwcaps priorities
  (``glibc_hwcaps_priorities_init``).
* ``elf/cache.c``: how ``ldconfig`` writes it (``save_cache``,
  ``write_extensions``) and how ``ldconfig -p`` prints it (``print_cache``).
* ``sysdeps/generic/ldconfig.h``: the ``FLAG_*`` words; each port's
  ``dl-cache.h``: its ``_DL_CACHE_DEFAULT_ID`` and ``_dl_cache_check_flags``.

Three layouts exist:

* ``"old"``: ``ld.so-1.7.0`` (libc5, glibc 2.0/2.1): a 16-byte header
  (magic, ``nlibs``), ``nlibs`` 12-byte entries (flags, key, value), then the
  string table up to the end of the file; key and value are offsets from the
  end of the entries.
* ``"new"``: ``glibc-ld.so.cache`` version ``1.1`` (glibc 2.2+, the only layout
  ``ldconfig`` writes by default since 2.32): a 48-byte header, ``nlibs``
  24-byte entries, ``len_strings`` bytes of strings; key and value are offsets
  from the start of this header; then, at ``extension_offset``, the extension
  directory (the generator string and the glibc-hwcaps subdirectory table).
* ``"old+new"``: an old cache whose string table hides a new one (``ldconfig
  -c compat``), starting at the end of the old entries rounded up to the
  alignment of ``struct cache_file_new``.  ld.so then uses the new part only,
  and so does this module.

Every offset and count read from the file is checked against its size before
use, so no input can make the parser allocate or loop without bound; every fault
raises ``InputError`` with the path and the offset.
"""

from __future__ import annotations

import struct
import sys
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import field, fields
from itertools import accumulate
from typing import Any

from ..errors import InputError
from ..lazyre import LazyPattern
from ..records import dataclass

#: Where glibc's ld.so looks for the cache (``LD_SO_CACHE``, ``SYSCONFDIR "/ld.so.cache"``).
LD_SO_CACHE = "/etc/ld.so.cache"

CACHEMAGIC = b"ld.so-1.7.0"
CACHEMAGIC_VERSION_NEW = b"glibc-ld.so.cache1.1"

# FLAG_* words (sysdeps/generic/ldconfig.h): the low byte is the library type,
# the high byte the ABI ldconfig read from the ELF header.
FLAG_TYPE_MASK = 0x00FF
FLAG_LIBC4 = 0x0000
FLAG_ELF = 0x0001
FLAG_ELF_LIBC5 = 0x0002
FLAG_ELF_LIBC6 = 0x0003
FLAG_REQUIRED_MASK = 0xFF00
FLAG_SPARC_LIB64 = 0x0100
FLAG_IA64_LIB64 = 0x0200
FLAG_X8664_LIB64 = 0x0300
FLAG_S390_LIB64 = 0x0400
FLAG_POWERPC_LIB64 = 0x0500
FLAG_MIPS64_LIBN32 = 0x0600
FLAG_MIPS64_LIBN64 = 0x0700
FLAG_X8664_LIBX32 = 0x0800
FLAG_ARM_LIBHF = 0x0900
FLAG_AARCH64_LIB64 = 0x0A00
FLAG_ARM_LIBSF = 0x0B00
FLAG_MIPS_LIB32_NAN2008 = 0x0C00
FLAG_MIPS64_LIBN32_NAN2008 = 0x0D00
FLAG_MIPS64_LIBN64_NAN2008 = 0x0E00
FLAG_RISCV_FLOAT_ABI_SOFT = 0x0F00
FLAG_RISCV_FLOAT_ABI_DOUBLE = 0x1000
FLAG_LARCH_FLOAT_ABI_SOFT = 0x1100
FLAG_LARCH_FLOAT_ABI_DOUBLE = 0x1200

#: hwcap bit marking a glibc-hwcaps entry: the low 32 bits index the hwcaps table (dl-cache.h).
DL_CACHE_HWCAP_EXTENSION = 1 << 62
#: Bits 32..41 of such an entry's hwcap: the x86 ISA level ldconfig read from the library.
DL_CACHE_HWCAP_ISA_LEVEL_MASK = (1 << 10) - 1
#: ``cache_extension_magic``: ``(uint32_t) -358342284``.
CACHE_EXTENSION_MAGIC = 0xEAA42174
CACHE_EXTENSION_TAG_GENERATOR = 0
CACHE_EXTENSION_TAG_GLIBC_HWCAPS = 1

# cache_file_new.flags & 3 (dl-cache.h).
_ENDIAN_UNSET, _ENDIAN_INVALID, _ENDIAN_LITTLE, _ENDIAN_BIG = 0, 1, 2, 3

_OLD_HEADER_SIZE = 16  # char magic[11]; (pad); unsigned int nlibs
_OLD_ENTRY_SIZE = 12  # int32 flags; uint32 key, value
_NEW_HEADER_SIZE = 48  # _Static_assert in dl-cache.h
_NEW_ENTRY_SIZE = 24  # int32 flags; uint32 key, value, osversion; uint64 hwcap
_NEW_ALIGN = 8  # __alignof__ (struct cache_file_new) on every 64-bit port (4 on i386)

_HOST_LITTLE = sys.byteorder == "little"


class _Structs:
    """struct formats of one byte order."""

    __slots__ = ("e", "ext", "new_entry", "new_header", "old_entry", "section", "u32")

    def __init__(self, e: str) -> None:
        self.e = e
        self.u32 = struct.Struct(e + "I")
        self.old_entry = struct.Struct(e + "iII")
        # nlibs, len_strings, flags (+3 padding bytes), extension_offset (then unused[3])
        self.new_header = struct.Struct(e + "IIB3xI")
        self.new_entry = struct.Struct(e + "iIIIQ")
        self.ext = struct.Struct(e + "II")  # magic, count
        self.section = struct.Struct(e + "IIII")  # tag, flags, offset, size


_STRUCTS = {True: _Structs("<"), False: _Structs(">")}


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One library in the cache, as ``ldconfig -p`` lists it.

    Attributes:
        name: the key: the library's SONAME as ldconfig read it (``"libz.so.1"``);
            ld.so compares it with a DT_NEEDED string.
        path: the value: the file ld.so opens (``"/lib/x86_64-linux-gnu/libz.so.1"``).
        flags: the ``FLAG_*`` word: library type in the low byte (``FLAG_ELF_LIBC6``),
            ABI in the high byte (``FLAG_X8664_LIB64``); e.g. 0x0303 for x86-64.
        os_version: ``osversion``, the minimum kernel from the library's
            ``NT_GNU_ABI_TAG`` as ``os << 24 | major << 16 | minor << 8 | patch``;
            0 when absent (always 0 in the old layout).
        hwcap: the raw 64-bit ``hwcap`` word (0 in the old layout).  With
            ``DL_CACHE_HWCAP_EXTENSION`` set (see ``hwcap_extension``) its low 32 bits
            index the glibc-hwcaps table; any other non-zero value is a legacy hwcap
            entry (``tls/``, ``x86_64/`` subdirectories), which ld.so ignores since 2.37.
        hwcaps_subdir: for a glibc-hwcaps entry, the subdirectory name from the
            table (``"x86-64-v3"``); ``None`` for a plain entry, and for a
            glibc-hwcaps entry whose index is outside the table (ld.so never picks those).
    """

    name: str
    path: str
    flags: int
    os_version: int
    hwcap: int
    hwcaps_subdir: str | None

    @property
    def hwcap_extension(self) -> bool:
        """True for a glibc-hwcaps entry (``dl_cache_hwcap_extension``: bit 62 alone, ISA-level bits ignored)."""
        return _is_extension(self.hwcap)

    @property
    def isa_level(self) -> int:
        """The x86 ISA level ldconfig recorded for a glibc-hwcaps entry (hwcap bits 32..41); 0 otherwise."""
        return (self.hwcap >> 32) & DL_CACHE_HWCAP_ISA_LEVEL_MASK if _is_extension(self.hwcap) else 0


def _is_extension(hwcap: int) -> bool:
    return (hwcap >> 32) & ~DL_CACHE_HWCAP_ISA_LEVEL_MASK == DL_CACHE_HWCAP_EXTENSION >> 32


@dataclass(frozen=True, slots=True)
class LdCache:
    """One parsed ``ld.so.cache``.

    Attributes:
        format: ``"old"``, ``"new"`` or ``"old+new"`` (see the module docstring).
        entries: every entry ld.so searches, in file order (ldconfig sorts them
            by name in ``_dl_cache_libcmp`` order, descending; for one name, by
            flags descending, glibc-hwcaps entries first).  For ``"old+new"``, the
            new part's entries: ld.so ignores the old part when a new one is present.
        hwcaps_subdirs: the ``cache_extension_tag_glibc_hwcaps`` table, in file
            order (ldconfig sorts it by name): index ``i`` is
            ``entry.hwcap & 0xffffffff``.  Empty without that section.
        generator: the ``cache_extension_tag_generator`` text (``"ldconfig (GNU
            libc) stable release version 2.36"``), or ``None``.
    """

    format: str
    entries: tuple[CacheEntry, ...]
    hwcaps_subdirs: tuple[str, ...] = ()
    generator: str | None = None
    _index: dict[str, tuple[CacheEntry, ...]] = field(default_factory=dict, repr=False, compare=False)

    def lookup_all(self, name: str) -> tuple[CacheEntry, ...]:
        """Every entry whose key equals ``name`` as ld.so compares names, in file order.

        ``_dl_cache_libcmp`` (elf/dl-cache.c) compares runs of digits as numbers,
        so ``"libfoo.so.01"`` equals ``"libfoo.so.1"``; for every other name this
        is plain equality.
        """
        index = self._index
        if not index:
            keys = _libcmp_keys([e.name for e in self.entries])
            groups: dict[str, list[CacheEntry]] = {}
            for key, entry in zip(keys, self.entries, strict=True):
                groups.setdefault(key, []).append(entry)
            index.update(zip(groups, map(tuple, groups.values()), strict=True))
            index.setdefault("\0", ())  # marks the index as built, even for an empty cache
        return index.get(_libcmp_key(name), ())

    def lookup(self, name: str, cache_flags: int | None, hwcaps_active: Sequence[str] = ()) -> CacheEntry | None:
        """The entry ``_dl_load_cache_lookup`` returns for DT_NEEDED ``name``, or ``None``.

        Args:
            name: the DT_NEEDED string (a name without ``/``; ld.so asks the cache for no other).
            cache_flags: the loading ld.so's ``_DL_CACHE_DEFAULT_ID``, as
                ``expected_cache_flags`` gives it; entries are kept as that port's
                ``_dl_cache_check_flags`` keeps them (only that exact word on most
                64-bit ports; also ``FLAG_ELF`` for the generic ``FLAG_ELF_LIBC6``;
                also ``FLAG_ELF_LIBC6`` for the ARM hard- and soft-float words).
                ``None`` keeps every entry.
            hwcaps_active: the glibc-hwcaps subdirectories the target CPU supports,
                most preferred first (``["x86-64-v4", "x86-64-v3", "x86-64-v2"]``).

        The walk is ``search_cache``'s (elf/dl-cache.c, glibc 2.37+), over the
        entries with that name in file order: a glibc-hwcaps entry counts only if
        its subdirectory is active, and the most preferred one wins; the first
        plain entry ends the walk unless a glibc-hwcaps entry already won; plain
        entries with a legacy ``hwcap`` are skipped (removed in 2.37).  In the old
        layout, which has no hwcap, a later accepted entry replaces an earlier
        one until one carries exactly ``cache_flags``.  Not emulated: the x86
        ISA-level gate on glibc-hwcaps entries (``dl_cache_hwcap_isa_level_compatible``,
        a CPU check: ``hwcaps_active`` stands for the CPU), the ``osversion``
        check of older ld.so (entries newer than the running kernel were
        skipped; current glibc no longer checks), and the binary search over a
        cache that is not sorted (ldconfig always sorts it).
        """
        candidates = self.lookup_all(name)
        if not candidates:
            return None
        accepted, default_id = _check_flags(cache_flags)
        with_hwcap = self.format != "old"
        priorities = _hwcaps_priorities(self.hwcaps_subdirs, hwcaps_active) if with_hwcap else ()
        best: CacheEntry | None = None
        best_priority = 0
        for entry in candidates:
            if accepted is not None and entry.flags not in accepted:
                continue
            named = False
            if with_hwcap:
                named = _is_extension(entry.hwcap)
                if not named and best is not None:
                    break  # glibc-hwcaps entries come first; one of them won
                if not named and entry.hwcap != 0:
                    continue  # legacy hwcaps/platform entry
                if named:
                    index = entry.hwcap & 0xFFFFFFFF
                    priority = priorities[index] if index < len(priorities) else 0
                    if priority == 0 or (best is not None and priority >= best_priority):
                        continue
                    best_priority = priority
            best = entry
            if not named and (default_id is None or entry.flags == default_id):
                break
        return best


_LEADING_ZEROS = LazyPattern(r"(?<![0-9])0+(?=[0-9])")


def _libcmp_key(name: str) -> str:
    """A key equal for two names exactly when ``_dl_cache_libcmp`` says they are equal."""
    return _LEADING_ZEROS.sub("", name)


_NONZERO_DIGITS = str.maketrans("123456789", "111111111")


def _libcmp_keys(names: list[str]) -> list[str]:
    """``_libcmp_key`` of every name; only names with a 0 before a digit need the regex.

    One ``translate`` of all the names joined (NUL cannot occur in a name) finds
    those, so a cache without such names costs no per-name work.
    """
    marked = "\0".join(names).translate(_NONZERO_DIGITS)
    if "00" not in marked and "01" not in marked:
        return names
    starts = list(accumulate((len(n) + 1 for n in names), initial=0))
    keys = list(names)
    for pattern in ("00", "01"):
        at = marked.find(pattern)
        while at >= 0:
            i = bisect_right(starts, at) - 1
            keys[i] = _libcmp_key(names[i])
            at = marked.find(pattern, starts[i + 1])
    return keys


def _check_flags(cache_flags: int | None) -> tuple[frozenset[int] | None, int | None]:
    """(flags ``_dl_cache_check_flags`` accepts, ``_DL_CACHE_DEFAULT_ID``) for one loader."""
    if cache_flags is None:
        return None, None
    if cache_flags == FLAG_ELF_LIBC6:  # sysdeps/generic/dl-cache.h
        return frozenset((FLAG_ELF, FLAG_ELF_LIBC6)), FLAG_ELF_LIBC6
    if cache_flags in (FLAG_ARM_LIBHF | FLAG_ELF_LIBC6, FLAG_ARM_LIBSF | FLAG_ELF_LIBC6):
        # sysdeps/unix/sysv/linux/arm/dl-cache.h: unmarked libraries stay usable;
        # the port keeps the generic _DL_CACHE_DEFAULT_ID.
        return frozenset((cache_flags, FLAG_ELF_LIBC6)), FLAG_ELF_LIBC6
    return frozenset((cache_flags,)), cache_flags


def _hwcaps_priorities(table: Sequence[str], active: Sequence[str]) -> list[int]:
    """Priority of each hwcaps table entry (0: unusable, lower: preferred), as ``glibc_hwcaps_priorities_init``.

    ld.so merges the cache's table with its own list of active subdirectories,
    both taken as sorted by name (memcmp, shorter first); an active name gets
    priority ``1 + its position`` in preference order (elf/dl-hwcaps.c).
    """
    if not table or not active:
        return []
    first: dict[bytes, int] = {}
    for i, subdir in enumerate(active):
        first.setdefault(subdir.encode("utf-8", "surrogateescape"), i + 1)
    right = sorted(first.items())
    out: list[int] = []
    r = 0
    for subdir in table:
        left = subdir.encode("utf-8", "surrogateescape")
        while r < len(right) and left > right[r][0]:
            r += 1
        if r < len(right) and left == right[r][0]:
            out.append(right[r][1])
            r += 1
        else:
            out.append(0)
    return out


# --- _DL_CACHE_DEFAULT_ID per machine ------------------------------------------

#: (``Binary.machine``, ``Binary.bits``) -> the ``_DL_CACHE_DEFAULT_ID`` of that port's ld.so.
#: Sources: ``sysdeps/unix/sysv/linux/<port>/dl-cache.h``; ports without one use
#: ``sysdeps/generic/dl-cache.h`` (``FLAG_ELF_LIBC6``).  Where the ABI needs ELF
#: header flags the model does not keep, the common Linux distribution ABI is
#: assumed: ARM hard-float (armhf), RISC-V and LoongArch double-float (lp64d),
#: MIPS legacy NaN (n64 for 64-bit, o32 for 32-bit; n32 is not told apart).
_CACHE_IDS: dict[tuple[str, int], int] = {
    ("x86-64", 64): FLAG_X8664_LIB64 | FLAG_ELF_LIBC6,  # x86_64/dl-cache.h: 0x303
    ("x86-64", 32): FLAG_X8664_LIBX32 | FLAG_ELF_LIBC6,  # x86_64/x32/dl-cache.h: 0x803
    ("x86", 32): FLAG_ELF_LIBC6,  # i386: generic
    ("aarch64", 64): FLAG_AARCH64_LIB64 | FLAG_ELF_LIBC6,  # aarch64/dl-cache.h (__LP64__)
    ("ppc64", 64): FLAG_POWERPC_LIB64 | FLAG_ELF_LIBC6,  # powerpc/powerpc64/dl-cache.h: 0x503
    ("ppc64le", 64): FLAG_POWERPC_LIB64 | FLAG_ELF_LIBC6,
    ("ppc", 32): FLAG_ELF_LIBC6,
    ("s390x", 64): FLAG_S390_LIB64 | FLAG_ELF_LIBC6,  # s390/s390-64/dl-cache.h: 0x403
    ("s390", 32): FLAG_ELF_LIBC6,
    ("sparcv9", 64): FLAG_SPARC_LIB64 | FLAG_ELF_LIBC6,  # sparc/sparc64/dl-cache.h: 0x103
    ("sparc", 32): FLAG_ELF_LIBC6,
    ("sparc32plus", 32): FLAG_ELF_LIBC6,
    ("ia64", 64): FLAG_IA64_LIB64 | FLAG_ELF_LIBC6,  # ia64/dl-cache.h: 0x203
    ("riscv64", 64): FLAG_RISCV_FLOAT_ABI_DOUBLE | FLAG_ELF_LIBC6,  # riscv/dl-cache.h
    ("riscv32", 32): FLAG_RISCV_FLOAT_ABI_DOUBLE | FLAG_ELF_LIBC6,
    ("loongarch64", 64): FLAG_LARCH_FLOAT_ABI_DOUBLE | FLAG_ELF_LIBC6,  # loongarch/dl-cache.h
    ("mips64", 64): FLAG_MIPS64_LIBN64 | FLAG_ELF_LIBC6,  # mips/dl-cache.h (_ABI64, legacy NaN)
    ("mips64el", 64): FLAG_MIPS64_LIBN64 | FLAG_ELF_LIBC6,
    ("mips", 32): FLAG_ELF_LIBC6,  # o32, legacy NaN: generic
    ("mipsel", 32): FLAG_ELF_LIBC6,
    ("arm", 32): FLAG_ARM_LIBHF | FLAG_ELF_LIBC6,  # arm/dl-cache.h (__ARM_PCS_VFP): 0x903 or 0x3
    ("sh", 32): FLAG_ELF_LIBC6,
}


def expected_cache_flags(machine: str, bits: int) -> int | None:
    """The cache flags word glibc's ld.so for ``machine`` looks for, or ``None`` when unknown.

    Args:
        machine: a ``Binary.machine`` string (``"x86-64"``, ``"aarch64"``, ``"ppc64le"``, ...).
        bits: ``Binary.bits`` (32 or 64); ``"x86-64"`` with 32 is x32.

    Returns:
        The port's ``_DL_CACHE_DEFAULT_ID``: ``FLAG_ELF_LIBC6`` combined with its
        ABI flag (0x0303 for x86-64), for ``LdCache.lookup``.  For ARM this is the
        hard-float word 0x0903; ld.so also accepts unmarked (0x0003) entries there.
        ``None`` for a machine glibc does not support or linkaudit does not name.
    """
    return _CACHE_IDS.get((machine, bits))


# --- reading -----------------------------------------------------------------


#: Largest ld.so.cache read (a system with 5,000 libraries has a cache of a few hundred KB).
MAX_CACHE_BYTES = 16 * 1024 * 1024


def read_ld_cache(path: str = LD_SO_CACHE) -> LdCache | None:
    """Read and parse the cache at ``path``.

    Returns:
        The parsed cache, or ``None`` when the file does not exist (ld.so then
        goes on to the system directories).

    Raises:
        InputError: the file cannot be read, or is not a valid cache.
    """
    from ..formats.hostfile import read_regular_file

    try:
        data = read_regular_file(path, MAX_CACHE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(path, f"cannot read the ld.so cache: {exc.strerror or exc}") from None
    if len(data) > MAX_CACHE_BYTES:
        raise InputError(
            path, f"the ld.so cache is larger than {MAX_CACHE_BYTES >> 20} MiB (real ones are well under 1 MiB)"
        )
    return parse_ld_cache(data, path)


def parse_ld_cache(data: bytes, path: str) -> LdCache:
    """Parse the bytes of an ``ld.so.cache``.

    The layout is told from the magic, as ``_dl_maybe_load_ldsocache`` does;
    the byte order from the new header's endianness flag, or, where the file
    has none (old layout; new layout written before glibc 2.33), from the one
    order whose entry count fits in the file (the host's when both do).

    Args:
        data: the whole file.
        path: the path to name in errors.

    Raises:
        InputError: not a cache, truncated, or an offset, count or string that
            lies (outside the file or its string table, or without its NUL).
    """
    size = len(data)
    if data[: len(CACHEMAGIC_VERSION_NEW)] == CACHEMAGIC_VERSION_NEW:
        entries, hwcaps, generator = _parse_new(data, 0, path, None)
        return LdCache("new", entries, hwcaps, generator)
    if data[: len(CACHEMAGIC)] != CACHEMAGIC:
        if CACHEMAGIC.startswith(data) or CACHEMAGIC_VERSION_NEW.startswith(data):
            raise InputError(path, f"truncated ld.so cache: {size} bytes, shorter than its magic", 0)
        raise InputError(path, 'not an ld.so cache (no "ld.so-1.7.0" or "glibc-ld.so.cache1.1" magic)', 0)
    if size < _OLD_HEADER_SIZE:
        raise InputError(path, f"truncated ld.so cache: {size} bytes, shorter than its header (16 bytes)", 0)

    little = _count_order(data, 12, _OLD_HEADER_SIZE, _OLD_ENTRY_SIZE, 0, path, "nlibs")
    st = _STRUCTS[little]
    (nlibs,) = st.u32.unpack_from(data, 12)
    strings = _OLD_HEADER_SIZE + nlibs * _OLD_ENTRY_SIZE

    # ld.so looks for the new header at ALIGN_CACHE (end of the old entries);
    # the alignment is 8 on 64-bit ports and 4 on i386 (ldconfig makes nlibs even
    # so that both agree, elf/cache.c save_cache).
    for base in dict.fromkeys(((strings + _NEW_ALIGN - 1) & -_NEW_ALIGN, strings)):
        end = base + len(CACHEMAGIC_VERSION_NEW)
        if base + _NEW_HEADER_SIZE <= size and data[base:end] == CACHEMAGIC_VERSION_NEW:
            entries, hwcaps, generator = _parse_new(data, base, path, little)
            return LdCache("old+new", entries, hwcaps, generator)

    rows = ((flags, key, value, 0, 0) for flags, key, value in st.old_entry.iter_unpack(data[_OLD_HEADER_SIZE:strings]))
    old_entries = _entries(data, rows, strings, size, strings, path, _OLD_HEADER_SIZE, _OLD_ENTRY_SIZE, ())
    return LdCache("old", old_entries)


def _count_order(data: bytes, at: int, header: int, entry: int, base: int, path: str, what: str) -> bool:
    """The byte order (True: little) in which the count at ``at`` fits in the file: the host's first."""
    size = len(data)
    tried = []
    for little in (_HOST_LITTLE, not _HOST_LITTLE):
        (count,) = _STRUCTS[little].u32.unpack_from(data, at)
        if base + header + count * entry <= size:
            return little
        tried.append(count)
    raise InputError(
        path,
        f"{what} ({tried[0]}, or {tried[1]} byte-swapped) entries of {entry} bytes do not fit in the file ({size} bytes)",
        at,
    )


def _parse_new(
    data: bytes, base: int, path: str, old_little: bool | None
) -> tuple[tuple[CacheEntry, ...], tuple[str, ...], str | None]:
    """Parse the ``cache_file_new`` at ``base``: (entries, hwcaps table, generator)."""
    size = len(data)
    if base + _NEW_HEADER_SIZE > size:
        raise InputError(
            path, f"truncated ld.so cache: {size - base} bytes, shorter than the new-format header (48 bytes)", base
        )
    endian = data[base + 28] & 3
    if endian == _ENDIAN_INVALID:
        raise InputError(path, "the cache header marks the cache invalid (endianness flag 1)", base + 28)
    if endian == _ENDIAN_UNSET:
        little = (
            old_little
            if old_little is not None
            else _count_order(data, base + 20, _NEW_HEADER_SIZE, _NEW_ENTRY_SIZE, base, path, "nlibs")
        )
    else:
        little = endian == _ENDIAN_LITTLE
        if old_little is not None and old_little != little:
            raise InputError(
                path,
                f"the new-format header says {'little' if little else 'big'}-endian, the old-format header around it reads the other way",
                base + 28,
            )
    st = _STRUCTS[little]
    nlibs, len_strings, _flags, extension_offset = st.new_header.unpack_from(data, base + 20)
    entries_at = base + _NEW_HEADER_SIZE
    if (size - entries_at) // _NEW_ENTRY_SIZE < nlibs:
        raise InputError(
            path,
            f"nlibs {nlibs}: {nlibs} entries of 24 bytes do not fit in the file ({size} bytes)",
            base + 20,
        )
    strings = entries_at + nlibs * _NEW_ENTRY_SIZE
    strings_end = strings + len_strings
    if strings_end > size:
        raise InputError(
            path,
            f"len_strings {len_strings}: the string table ({len_strings} bytes at offset {strings:#x}) extends past the end of the file ({size} bytes)",
            base + 24,
        )

    hwcaps, generator = _read_extensions(data, extension_offset, st, path, base + 32)

    rows = st.new_entry.iter_unpack(data[entries_at:strings])
    entries = _entries(data, rows, strings, strings_end, base, path, entries_at, _NEW_ENTRY_SIZE, hwcaps)
    return entries, hwcaps, generator


def _entry_factory() -> tuple[Any, ...]:
    """``object.__new__`` and the slot setters of ``CacheEntry``, in field order.

    The frozen dataclass ``__init__`` sets each field through
    ``object.__setattr__``; setting the slots through their descriptors makes the
    same object in half the time, and building entries is most of a parse.
    The field list is checked here so that a new field cannot be left unset.
    """
    names = tuple(f.name for f in fields(CacheEntry))
    if names != ("name", "path", "flags", "os_version", "hwcap", "hwcaps_subdir"):
        raise AssertionError(f"CacheEntry fields changed: {names}; update _entries")
    return (object.__new__, *(getattr(CacheEntry, n).__set__ for n in names))


_ENTRY_FACTORY = _entry_factory()


def _entries(
    data: bytes,
    rows: Iterable[tuple[int, int, int, int, int]],
    low: int,
    high: int,
    rel: int,
    path: str,
    at: int,
    step: int,
    hwcaps: tuple[str, ...],
) -> tuple[CacheEntry, ...]:
    """Build the entries from raw ``(flags, key, value, osversion, hwcap)`` rows.

    ``key`` and ``value`` are offsets from file offset ``rel``; each string must
    lie, with its NUL, in the string table ``[low, high)``.  ``at`` is the file
    offset of the first row, ``step`` the row size (for error offsets).  The
    table is cut once; strings are found in it without a call per string, and
    ``_cstr`` is called only to report a fault.
    """
    table = data[low:high]
    find = table.find
    new, set_name, set_path, set_flags, set_os, set_hwcap, set_subdir = _ENTRY_FACTORY
    n = high - low
    shift = rel - low
    n_hwcaps = len(hwcaps)
    out: list[CacheEntry] = []
    append = out.append
    for flags, key, value, osversion, hwcap in rows:
        k = key + shift
        v = value + shift
        ke = find(b"\0", k) if 0 <= k < n else -1
        ve = find(b"\0", v) if 0 <= v < n else -1
        if ke < 0 or ve < 0:
            _cstr(data, rel + key, low, high, path, at, "key")
            _cstr(data, rel + value, low, high, path, at, "value")
        subdir = None
        if hwcap and _is_extension(hwcap) and hwcap & 0xFFFFFFFF < n_hwcaps:
            subdir = hwcaps[hwcap & 0xFFFFFFFF]
        entry = new(CacheEntry)
        set_name(entry, table[k:ke].decode("utf-8", "surrogateescape"))
        set_path(entry, table[v:ve].decode("utf-8", "surrogateescape"))
        set_flags(entry, flags)
        set_os(entry, osversion)
        set_hwcap(entry, hwcap)
        set_subdir(entry, subdir)
        append(entry)
        at += step
    return tuple(out)


def _read_extensions(
    data: bytes, offset: int, st: _Structs, path: str, field_at: int
) -> tuple[tuple[str, ...], str | None]:
    """The extension directory at file offset ``offset``: (hwcaps table, generator), as ``cache_extension_load``.

    Offsets in the directory, and the string offsets in the hwcaps table, are
    from the start of the file (``cache_extension_load`` and
    ``glibc_hwcaps_compare`` use the file's base address).  A hwcaps section
    that is empty, misaligned or not a multiple of 4 bytes is dropped, as
    ``cache_extension_verify`` drops it; unknown tags are skipped; for a tag
    given twice the last one counts.
    """
    if offset == 0:
        return (), None
    size = len(data)
    if offset % 4:
        raise InputError(path, f"extension_offset {offset:#x} is not a multiple of 4", field_at)
    if offset + 8 > size:
        raise InputError(
            path,
            f"extension_offset {offset:#x}: the extension directory extends past the end of the file ({size} bytes)",
            field_at,
        )
    magic, count = st.ext.unpack_from(data, offset)
    if magic != CACHE_EXTENSION_MAGIC:
        raise InputError(
            path, f"bad extension directory magic {magic:#010x} (expected {CACHE_EXTENSION_MAGIC:#010x})", offset
        )
    if offset + 8 + count * 16 > size:
        raise InputError(
            path,
            f"extension count {count}: {count} section descriptors of 16 bytes extend past the end of the file ({size} bytes)",
            offset + 4,
        )
    sections: dict[int, tuple[int, int]] = {}
    for at in range(offset + 8, offset + 8 + count * 16, 16):
        tag, _flags, sec_offset, sec_size = st.section.unpack_from(data, at)
        if sec_offset + sec_size > size:
            raise InputError(
                path,
                f"extension section (tag {tag}, {sec_size} bytes at offset {sec_offset:#x}) extends past the end of the file ({size} bytes)",
                at,
            )
        sections[tag] = (sec_offset, sec_size)

    generator = None
    if CACHE_EXTENSION_TAG_GENERATOR in sections:
        g_offset, g_size = sections[CACHE_EXTENSION_TAG_GENERATOR]
        generator = data[g_offset : g_offset + g_size].decode("utf-8", "surrogateescape")

    hwcaps: tuple[str, ...] = ()
    h_offset, h_size = sections.get(CACHE_EXTENSION_TAG_GLIBC_HWCAPS, (0, 0))
    if h_size and h_offset % 4 == 0 and h_size % 4 == 0:
        names = []
        for i, index in enumerate(struct.unpack_from(f"{st.e}{h_size // 4}I", data, h_offset)):
            names.append(_cstr(data, index, 0, size, path, h_offset + 4 * i, "glibc-hwcaps name"))
        hwcaps = tuple(names)
    return hwcaps, generator


def _cstr(data: bytes, start: int, low: int, high: int, path: str, field_at: int, what: str) -> str:
    """The NUL-terminated string at ``start``, which must lie in ``[low, high)`` with its NUL."""
    if not low <= start < high:
        raise InputError(
            path,
            f"{what} string offset points to {start:#x}, outside the string table ({low:#x}..{high:#x})",
            field_at,
        )
    end = data.find(b"\0", start, high)
    if end < 0:
        raise InputError(
            path, f"{what} string at offset {start:#x} has no NUL before the end of the string table", start
        )
    return data[start:end].decode("utf-8", "surrogateescape")
