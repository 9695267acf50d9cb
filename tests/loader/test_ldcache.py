"""The ``ld.so.cache`` reader: against ``ldconfig -p``, on synthetic caches of every layout, and on lies.

Synthetic caches are built here with ``struct`` in the layouts glibc's
``elf/cache.c`` (``save_cache``, ``write_extensions``) writes and
``sysdeps/generic/dl-cache.h`` declares.  ``ldconfig`` is only ever run with
``-p`` (print the cache; with ``-C FILE``, that file), which builds nothing.
"""

from __future__ import annotations

import os
import random
import re
import struct
import subprocess
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from linkaudit.errors import InputError
from linkaudit.loader.ldcache import (
    CACHE_EXTENSION_MAGIC,
    DL_CACHE_HWCAP_EXTENSION,
    LD_SO_CACHE,
    CacheEntry,
    LdCache,
    expected_cache_flags,
    parse_ld_cache,
    read_ld_cache,
)

from ..tools import find_tool, needs

X8664 = 0x0303
PATH = "synthetic/ld.so.cache"
CACHE_MAGIC_OLD = b"ld.so-1.7.0"


# --- building caches ------------------------------------------------------------


@dataclass
class E:
    """One entry to write: ``subdir`` makes it a glibc-hwcaps entry; ``hwcap`` a legacy one."""

    name: str
    path: str
    flags: int = X8664
    subdir: str | None = None
    hwcap: int = 0
    osversion: int = 0
    isa_level: int = 0


def build(
    entries: Sequence[E],
    fmt: str = "new",
    *,
    big: bool = False,
    endian_flag: int | None = None,
    generator: str | None = "ldconfig (linkaudit tests) 0.0",
    hwcaps_table: Sequence[str] | None = None,
    align: int = 8,
) -> bytes:
    """An ld.so.cache in ``fmt`` ("old", "new", "old+new"), laid out as ldconfig lays it out.

    Entries are written in the order given.  ``hwcaps_table`` defaults to the
    sorted subdirectory names of ``entries``; ``align`` is ``__alignof__ (struct
    cache_file_new)`` for "old+new" (8, or 4 as on i386).  Two departures from
    ldconfig, both in "old+new" only: the old part leaves glibc-hwcaps entries
    out, and the hwcaps names are written as offsets from the start of the file,
    which is how ld.so and ``ldconfig -p`` read them (``write_extensions`` writes
    them from the start of the new header: the same thing in "new").
    """
    e = ">" if big else "<"
    table = list(hwcaps_table) if hwcaps_table is not None else sorted({x.subdir for x in entries if x.subdir})
    strtab = bytearray()
    where: dict[str, int] = {}

    def intern(s: str) -> int:
        if s not in where:
            where[s] = len(strtab)
            strtab.extend(s.encode("utf-8", "surrogateescape") + b"\0")
        return where[s]

    for x in entries:
        intern(x.name)
        intern(x.path)
    for name in table:
        intern(name)

    def hwcap_of(x: E) -> int:
        if x.subdir is None:
            return x.hwcap
        return DL_CACHE_HWCAP_EXTENSION | (x.isa_level << 32) | table.index(x.subdir)

    old = b""
    base = 0
    with_new = fmt in ("new", "old+new")
    new_size = 48 + 24 * len(entries) if with_new else 0
    if fmt in ("old", "old+new"):
        old_entries = [x for x in entries if hwcap_of(x) == 0] if with_new else list(entries)
        old_end = 16 + 12 * len(old_entries)
        base = (old_end + align - 1) & -align if with_new else old_end
        pad = base - old_end
        strings_from_old_table = pad + new_size  # old offsets count from the end of the old entries
        old = CACHE_MAGIC_OLD + b"\0" + struct.pack(e + "I", len(old_entries))
        for x in old_entries:
            old += struct.pack(
                e + "iII", x.flags, strings_from_old_table + where[x.name], strings_from_old_table + where[x.path]
            )
        old += b"\0" * pad
        if not with_new:
            return old + bytes(strtab)

    strings_at = base + new_size
    ext_at = (strings_at + len(strtab) + 3) & -4
    flag = endian_flag if endian_flag is not None else (3 if big else 2)
    new = bytearray(
        b"glibc-ld.so.cache1.1"
        + struct.pack(e + "IIB3xI12x", len(entries), len(strtab), flag, ext_at if generator or table else 0)
    )
    for x in entries:
        new += struct.pack(
            e + "iIIIQ", x.flags, new_size + where[x.name], new_size + where[x.path], x.osversion, hwcap_of(x)
        )
    blob = bytearray(old + new + strtab)
    if not (generator or table):
        return bytes(blob)
    blob += b"\0" * (ext_at - len(blob))
    sections = []
    gen = (generator or "").encode()
    n_sections = (1 if generator else 0) + (1 if table else 0)
    payload_at = ext_at + 8 + 16 * n_sections
    if table:
        sections.append(struct.pack(e + "IIII", 1, 0, payload_at, 4 * len(table)))
    if generator:
        sections.append(struct.pack(e + "IIII", 0, 0, payload_at + 4 * len(table), len(gen)))
    blob += struct.pack(e + "II", CACHE_EXTENSION_MAGIC, n_sections) + b"".join(sections)
    # hwcaps names: string offsets from the start of the file (glibc_hwcaps_string, glibc_hwcaps_compare)
    blob += b"".join(struct.pack(e + "I", strings_at + where[name]) for name in table)
    blob += gen
    return bytes(blob)


LIBS = [
    E("libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1"),
    E("libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6"),
    E("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6", osversion=0x00030200),
    E("libc.so.6", "/lib/i386-linux-gnu/libc.so.6", flags=0x0003),
]

HWCAPS_LIBS = [
    E("libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1", subdir="x86-64-v2", isa_level=1),
    E("libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1", subdir="x86-64-v3", isa_level=2),
    E("libfoo.so.1", "/usr/lib/glibc-hwcaps/x86-64-v4/libfoo.so.1", subdir="x86-64-v4", isa_level=3),
    E("libfoo.so.1", "/usr/lib/libfoo.so.1"),
    E("libbar.so.2", "/usr/lib/glibc-hwcaps/x86-64-v3/libbar.so.2", subdir="x86-64-v3"),
    E("libbar.so.2", "/usr/lib/libbar.so.2"),
    E("libonly.so.1", "/usr/lib/glibc-hwcaps/x86-64-v4/libonly.so.1", subdir="x86-64-v4"),
]


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def found(cache: LdCache, name: str, flags: int | None, active: Sequence[str] = ()) -> str | None:
    """The path ``cache.lookup`` gives, or None."""
    entry = cache.lookup(name, flags, active)
    return entry.path if entry is not None else None


def pairs(cache: LdCache) -> list[tuple[str, str]]:
    return [(x.name, x.path) for x in cache.entries]


# --- ldconfig -p as the reference -------------------------------------------------

_FLAG_ABI = {
    0x0100: ",64bit",
    0x0200: ",IA-64",
    0x0300: ",x86-64",
    0x0400: ",64bit",
    0x0500: ",64bit",
    0x0600: ",N32",
    0x0700: ",64bit",
    0x0800: ",x32",
    0x0900: ",hard-float",
    0x0A00: ",AArch64",
    0x0B00: ",soft-float",
    0x0C00: ",nan2008",
    0x0D00: ",N32,nan2008",
    0x0E00: ",64bit,nan2008",
    0x0F00: ",soft-float",
    0x1000: ",double-float",
    0x1100: ",soft-float",
    0x1200: ",double-float",
}
_OS_ABI = re.compile(r", OS ABI: [^,)]*")


def render(entry: CacheEntry) -> str:
    """The line ``ldconfig -p`` prints for ``entry`` (elf/cache.c, print_entry), without the OS ABI.

    glibc up to 2.34 adds ``, OS ABI: Linux 3.2.0`` for a non-zero osversion;
    later ones do not: ``ldconfig_print`` removes it.
    """
    kind = {0: "libc4", 1: "ELF", 2: "libc5", 3: "libc6"}.get(entry.flags & 0xFF, "unknown")
    abi = entry.flags & 0xFF00
    text = f"\t{entry.name} ({kind}{_FLAG_ABI.get(abi, f',{abi}' if abi else '')}"
    if entry.hwcaps_subdir is not None:
        text += f', hwcap: "{entry.hwcaps_subdir}"'
    elif entry.hwcap:
        text += f", hwcap: {entry.hwcap:#018x}"
    return f"{text}) => {entry.path}"


def ldconfig_print(cache_file: str) -> tuple[str, list[str]] | None:
    """(first line, entry lines) of ``ldconfig -C cache_file -p``, or None when it cannot say."""
    exe = find_tool("ldconfig").path
    if exe is None:
        return None
    proc = subprocess.run(
        [exe, "-C", cache_file, "-p"],  # -p prints the cache and exits: nothing is built
        capture_output=True,
        env={**os.environ, "LC_ALL": "C"},
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        return None
    lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
    return lines[0], [_OS_ABI.sub("", line) for line in lines[1:] if line.startswith("\t")]


# --- the system cache against ldconfig -p ----------------------------------------


@needs("ldconfig")
def test_system_cache_matches_ldconfig_p() -> None:
    if not os.path.exists(LD_SO_CACHE):
        pytest.skip(f"{LD_SO_CACHE} does not exist here")
    printed = ldconfig_print(LD_SO_CACHE)
    if printed is None:
        pytest.skip(find_tool("ldconfig").reason or "ldconfig -p printed nothing here")
    header, lines = printed
    cache = read_ld_cache(LD_SO_CACHE)
    assert cache is not None
    assert header.startswith(f"{len(cache.entries)} libs found in cache")
    assert len(lines) == len(cache.entries) > 0
    # Every (name, path), with multiplicity, and then every whole line in file order.
    printed_pairs = Counter((line[1:].split(" (", 1)[0], line.rsplit(" => ", 1)[1]) for line in lines)
    assert Counter(pairs(cache)) == printed_pairs
    assert [render(x) for x in cache.entries] == lines


def test_system_cache_lookups_are_consistent() -> None:
    cache = read_ld_cache(LD_SO_CACHE)
    if cache is None:
        pytest.skip(f"{LD_SO_CACHE} does not exist here")
    for entry in cache.entries:
        if entry.hwcap:
            continue
        hit = cache.lookup(entry.name, entry.flags)
        assert hit is not None and hit.name == entry.name and hit.flags in (entry.flags, 1, 3)


@pytest.mark.parametrize(
    ("fmt", "entries"),
    [
        ("new", LIBS),
        ("old", LIBS),
        ("old+new", LIBS),
        ("new", HWCAPS_LIBS + LIBS),
        ("old+new", HWCAPS_LIBS + LIBS),
    ],
    ids=["new", "old", "old+new", "new-hwcaps", "old+new-hwcaps"],
)
@needs("ldconfig")
def test_synthetic_caches_match_ldconfig_p(tmp_path: Path, fmt: str, entries: list[E]) -> None:
    """glibc's own reader sees in the synthetic files what the parser sees: the builder is faithful."""
    f = tmp_path / "ld.so.cache"
    f.write_bytes(build(entries, fmt))
    printed = ldconfig_print(str(f))
    if printed is None:
        pytest.skip(find_tool("ldconfig").reason or "ldconfig -p printed nothing here")
    cache = read_ld_cache(str(f))
    assert cache is not None and cache.format == fmt
    assert [render(x) for x in cache.entries] == printed[1]


# --- layouts -----------------------------------------------------------------------


def test_new_format() -> None:
    cache = parse_ld_cache(build(LIBS), PATH)
    assert cache.format == "new"
    assert pairs(cache) == [(x.name, x.path) for x in LIBS]
    assert [x.flags for x in cache.entries] == [x.flags for x in LIBS]
    assert cache.entries[2].os_version == 0x00030200
    assert cache.hwcaps_subdirs == ()
    assert cache.generator == "ldconfig (linkaudit tests) 0.0"
    assert all(x.hwcap == 0 and x.hwcaps_subdir is None for x in cache.entries)


def test_new_format_without_extensions() -> None:
    cache = parse_ld_cache(build(LIBS, generator=None), PATH)
    assert pairs(cache) == [(x.name, x.path) for x in LIBS]
    assert cache.generator is None


def test_old_format() -> None:
    cache = parse_ld_cache(build(LIBS, "old"), PATH)
    assert cache.format == "old"
    assert pairs(cache) == [(x.name, x.path) for x in LIBS]
    assert all(x.os_version == 0 and x.hwcap == 0 for x in cache.entries)
    assert cache.generator is None


@pytest.mark.parametrize("align", [8, 4])
def test_old_plus_new_uses_the_new_part(align: int) -> None:
    """The old part holds only hwcap-free entries; ld.so (and the parser) read the new part.

    With an odd number of old entries the new header sits 4 bytes later on
    64-bit ports than on i386 (ALIGN_CACHE); both placements are found.
    """
    entries = [*HWCAPS_LIBS, *LIBS[:3]]  # 2 + 3 plain entries: an odd count in the old part
    data = build(entries, "old+new", align=align)
    (n_old,) = struct.unpack_from("<I", data, 12)
    assert n_old % 2 == 1
    cache = parse_ld_cache(data, PATH)
    assert cache.format == "old+new"
    assert pairs(cache) == [(x.name, x.path) for x in entries]
    assert cache.hwcaps_subdirs == ("x86-64-v2", "x86-64-v3", "x86-64-v4")


@pytest.mark.parametrize("fmt", ["new", "old", "old+new"])
@pytest.mark.parametrize("endian_flag", [None, 0])
def test_big_endian(fmt: str, endian_flag: int | None) -> None:
    """A big-endian cache reads the same as the little-endian one, with or without the endianness flag."""
    entries = HWCAPS_LIBS + LIBS if fmt != "old" else LIBS
    little = parse_ld_cache(build(entries, fmt), PATH)
    big = parse_ld_cache(build(entries, fmt, big=True, endian_flag=endian_flag), PATH)
    assert big == little


def test_hwcaps_extension() -> None:
    cache = parse_ld_cache(build(HWCAPS_LIBS), PATH)
    assert cache.hwcaps_subdirs == ("x86-64-v2", "x86-64-v3", "x86-64-v4")
    foo = cache.lookup_all("libfoo.so.1")
    assert [x.hwcaps_subdir for x in foo] == ["x86-64-v2", "x86-64-v3", "x86-64-v4", None]
    assert [x.hwcap_extension for x in foo] == [True, True, True, False]
    assert [x.isa_level for x in foo] == [1, 2, 3, 0]
    assert foo[1].hwcap == DL_CACHE_HWCAP_EXTENSION | (2 << 32) | 1


# --- lookup ----------------------------------------------------------------------

V4 = ("x86-64-v4", "x86-64-v3", "x86-64-v2")


@pytest.mark.parametrize(
    ("name", "active", "expected"),
    [
        ("libfoo.so.1", V4, "/usr/lib/glibc-hwcaps/x86-64-v4/libfoo.so.1"),
        ("libfoo.so.1", V4[1:], "/usr/lib/glibc-hwcaps/x86-64-v3/libfoo.so.1"),
        ("libfoo.so.1", V4[2:], "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1"),
        ("libfoo.so.1", ("x86-64-v2", "x86-64-v4"), "/usr/lib/glibc-hwcaps/x86-64-v2/libfoo.so.1"),
        ("libfoo.so.1", (), "/usr/lib/libfoo.so.1"),
        ("libfoo.so.1", ("power10",), "/usr/lib/libfoo.so.1"),
        ("libbar.so.2", V4, "/usr/lib/glibc-hwcaps/x86-64-v3/libbar.so.2"),
        ("libbar.so.2", V4[2:], "/usr/lib/libbar.so.2"),
        ("libonly.so.1", V4, "/usr/lib/glibc-hwcaps/x86-64-v4/libonly.so.1"),
        ("libonly.so.1", V4[1:], None),
        ("libmissing.so.1", V4, None),
    ],
)
def test_lookup_prefers_active_hwcaps_in_priority_order(
    name: str, active: tuple[str, ...], expected: str | None
) -> None:
    for fmt in ("new", "old+new"):
        cache = parse_ld_cache(build(HWCAPS_LIBS, fmt), PATH)
        assert found(cache, name, X8664, active) == expected
        assert found(cache, name, None, active) == expected


def test_lookup_checks_flags() -> None:
    cache = parse_ld_cache(build(HWCAPS_LIBS + LIBS), PATH)
    assert cache.lookup("libfoo.so.1", 0x0803, V4) is None  # an x32 loader
    assert found(cache, "libc.so.6", X8664) == "/lib/x86_64-linux-gnu/libc.so.6"
    i386 = cache.lookup("libc.so.6", expected_cache_flags("x86", 32))
    assert i386 is not None and i386.path == "/lib/i386-linux-gnu/libc.so.6"
    # hwcaps entries of another ABI are not candidates either
    other = [E("libq.so.1", "/v3/libq.so.1", flags=0x0803, subdir="x86-64-v3"), E("libq.so.1", "/libq.so.1")]
    assert found(parse_ld_cache(build(other), PATH), "libq.so.1", X8664, V4) == "/libq.so.1"


def test_lookup_generic_and_arm_flag_rules() -> None:
    """sysdeps/generic accepts FLAG_ELF too; ARM accepts unmarked libc6 entries but not the other float ABI."""
    generic = parse_ld_cache(build([E("liba.so.1", "/elf/liba.so.1", flags=0x0001)]), PATH)
    assert generic.lookup("liba.so.1", 0x0003) is not None
    assert generic.lookup("liba.so.1", X8664) is None
    arm = [
        E("libhf.so.1", "/hf", flags=0x0903),
        E("libplain.so.1", "/plain", flags=0x0003),
        E("libsf.so.1", "/sf", flags=0x0B03),
    ]
    cache = parse_ld_cache(build(arm), PATH)
    hf = expected_cache_flags("arm", 32)
    assert [found(cache, n, hf) for n in ("libhf.so.1", "libplain.so.1", "libsf.so.1")] == ["/hf", "/plain", None]


def test_lookup_first_plain_entry_wins_in_new_format_last_accepted_in_old() -> None:
    """search_cache: a plain entry ends the walk in the new layout; the old layout walks on until _DL_CACHE_DEFAULT_ID."""
    entries = [E("libx.so.1", "/elf/libx.so.1", flags=0x0001), E("libx.so.1", "/libc6/libx.so.1", flags=0x0003)]
    assert found(parse_ld_cache(build(entries), PATH), "libx.so.1", 3) == "/elf/libx.so.1"
    assert found(parse_ld_cache(build(entries, "old"), PATH), "libx.so.1", 3) == "/libc6/libx.so.1"
    dup = [E("liby.so.1", "/first"), E("liby.so.1", "/second")]
    for fmt in ("new", "old"):
        assert found(parse_ld_cache(build(dup, fmt), PATH), "liby.so.1", X8664) == "/first"


def test_lookup_skips_legacy_hwcap_entries() -> None:
    entries = [E("libl.so.1", "/lib/tls/libl.so.1", hwcap=1 << 63), E("libl.so.1", "/lib/libl.so.1")]
    cache = parse_ld_cache(build(entries), PATH)
    assert found(cache, "libl.so.1", X8664, V4) == "/lib/libl.so.1"
    assert cache.entries[0].hwcaps_subdir is None and not cache.entries[0].hwcap_extension


def test_lookup_compares_names_as_dl_cache_libcmp() -> None:
    cache = parse_ld_cache(build(LIBS), PATH)
    assert found(cache, "libz.so.01", X8664) == "/lib/x86_64-linux-gnu/libz.so.1"
    assert cache.lookup("libz.so.10", X8664) is None
    assert cache.lookup("libz.so", X8664) is None
    assert [x.path for x in cache.lookup_all("libc.so.6")] == [
        "/lib/x86_64-linux-gnu/libc.so.6",
        "/lib/i386-linux-gnu/libc.so.6",
    ]
    assert cache.lookup_all("nothing") == ()
    assert parse_ld_cache(build([]), PATH).lookup_all("libz.so.1") == ()


def test_hwcaps_priorities_merge_like_ld_so() -> None:
    """ld.so merges the hwcaps table as sorted (glibc_hwcaps_priorities_init): an unsorted table loses names."""
    entries = [
        E("libu.so.1", "/v3/libu.so.1", subdir="x86-64-v3"),
        E("libu.so.1", "/v2/libu.so.1", subdir="x86-64-v2"),
        E("libu.so.1", "/libu.so.1"),
    ]
    cache = parse_ld_cache(build(entries, hwcaps_table=["x86-64-v3", "x86-64-v2"]), PATH)
    assert cache.hwcaps_subdirs == ("x86-64-v3", "x86-64-v2")
    assert found(cache, "libu.so.1", X8664, V4) == "/v3/libu.so.1"
    assert found(cache, "libu.so.1", X8664, ("x86-64-v2",)) == "/libu.so.1"


@pytest.mark.parametrize(
    ("machine", "bits", "flags"),
    [
        ("x86-64", 64, 0x0303),
        ("x86-64", 32, 0x0803),
        ("x86", 32, 0x0003),
        ("aarch64", 64, 0x0A03),
        ("ppc64le", 64, 0x0503),
        ("ppc64", 64, 0x0503),
        ("s390x", 64, 0x0403),
        ("riscv64", 64, 0x1003),
        ("arm", 32, 0x0903),
        ("mips64el", 64, 0x0703),
        ("loongarch64", 64, 0x1203),
        ("sparcv9", 64, 0x0103),
        ("aarch64", 32, None),
        ("bpf", 64, None),
        ("unknown(4242)", 64, None),
    ],
)
def test_expected_cache_flags(machine: str, bits: int, flags: int | None) -> None:
    assert expected_cache_flags(machine, bits) == flags


def test_read_ld_cache(tmp_path: Path) -> None:
    assert read_ld_cache(str(tmp_path / "absent")) is None
    with pytest.raises(InputError) as info:
        read_ld_cache(str(tmp_path))
    assert info.value.path == str(tmp_path)
    f = tmp_path / "ld.so.cache"
    f.write_bytes(build(LIBS))
    cache = read_ld_cache(str(f))
    assert cache is not None and pairs(cache) == [(x.name, x.path) for x in LIBS]


# --- malformed caches ----------------------------------------------------------------


def expect_error(data: bytes, fragment: str = "") -> InputError:
    """Parsing must raise InputError naming the path, and nothing else."""
    with pytest.raises(InputError) as info:
        parse_ld_cache(data, PATH)
    err = info.value
    assert err.path == PATH and PATH in str(err) and err.reason
    assert fragment in err.reason, err.reason
    if err.offset is not None:
        assert 0 <= err.offset <= len(data)
    return err


@pytest.mark.parametrize(
    "data",
    [
        build(HWCAPS_LIBS + LIBS),
        build(HWCAPS_LIBS + LIBS, big=True),
        build(LIBS, "old"),
        build(LIBS, "old+new"),
        build(HWCAPS_LIBS + LIBS, "old+new"),
    ],
    ids=["new", "new-big", "old", "old+new", "old+new-hwcaps"],
)
def test_every_truncation_is_an_input_error(data: bytes) -> None:
    parse_ld_cache(data, PATH)
    for length in range(len(data)):
        expect_error(data[:length])


def test_not_a_cache() -> None:
    expect_error(b"", "truncated")
    expect_error(b"\x7fELF\x02\x01\x01" + b"\0" * 60, "not an ld.so cache")
    expect_error(b"glibc-ld.so.cache1.2" + b"\0" * 60, "not an ld.so cache")


NEW = build(HWCAPS_LIBS + LIBS)
N_NEW = len(HWCAPS_LIBS + LIBS)
EXT_AT = struct.unpack_from("<I", NEW, 32)[0]


@pytest.mark.parametrize(
    ("offset", "fmt", "value", "fragment"),
    [
        (20, "<I", 0xFFFFFFFF, "nlibs"),  # nlibs far beyond the file
        (20, "<I", N_NEW + 3, "string table"),  # entries fit, the strings then do not
        (24, "<I", 0xFFFFFF00, "len_strings"),
        (24, "<I", 10, "string"),  # strings past a too-short table
        (28, "<B", 1, "invalid"),  # cache_file_new_flags_endian_invalid
        (28, "<B", 3, "nlibs"),  # says big-endian, is not
        (32, "<I", EXT_AT + 2, "multiple of 4"),
        (32, "<I", len(NEW) + 4 & -4, "extension"),
        (32, "<I", 0xFFFFFFFC, "extension"),
        (32, "<I", 48, "magic"),
        (EXT_AT, "<I", 0x12345678, "magic"),
        (EXT_AT + 4, "<I", 0x10000000, "extension count"),
        (EXT_AT + 8 + 8, "<I", 0xFFFFFFF0, "extends past the end"),  # section offset
        (EXT_AT + 8 + 12, "<I", 0x7FFFFFFF, "extends past the end"),  # section size
        (EXT_AT + 8 + 32, "<I", 0xFFFFFFF0, "glibc-hwcaps name"),  # hwcaps string index
        (48 + 4, "<I", 0xFFFFFF00, "key string"),  # entry 0 key
        (48 + 8, "<I", 0x80000000, "value string"),  # entry 0 value
        (48 + 24 * 5 + 4, "<I", 47, "outside the string table"),  # key pointing into the header
    ],
)
def test_lying_fields(offset: int, fmt: str, value: int, fragment: str) -> None:
    expect_error(patched(NEW, offset, fmt, value), fragment)


def test_hwcaps_section_that_glibc_drops_is_dropped() -> None:
    """cache_extension_verify drops an empty, misaligned or odd-sized hwcaps section; its entries are never picked."""
    size_at = EXT_AT + 8 + 12  # first section (hwcaps) size
    cache = parse_ld_cache(patched(NEW, size_at, "<I", 6), PATH)
    assert cache.hwcaps_subdirs == ()
    assert all(x.hwcaps_subdir is None for x in cache.entries)
    assert found(cache, "libfoo.so.1", X8664, V4) == "/usr/lib/libfoo.so.1"
    assert cache.lookup("libonly.so.1", X8664, V4) is None


def test_string_without_nul() -> None:
    data = build([E("libz.so.1", "/lib/libz.so.1")], generator=None)
    assert data.endswith(b"/lib/libz.so.1\0")
    expect_error(data[:-1] + b"!", "no NUL")
    old = build([E("libz.so.1", "/lib/libz.so.1")], "old")
    expect_error(old[:-1] + b"!", "no NUL")


def test_old_format_lies() -> None:
    old = build(LIBS, "old")
    expect_error(patched(old, 12, "<I", 0x7FFFFFFF), "nlibs")
    expect_error(patched(old, 12, "<I", len(LIBS) + 2), "string")
    expect_error(patched(old, 16 + 4, "<I", 0xFFFFFFF0), "key string")
    expect_error(patched(old, 16 + 8, "<i", -1), "value string")


def test_compat_endianness_disagreement() -> None:
    data = build(LIBS, "old+new")
    base = (16 + 12 * len(LIBS) + 7) & -8
    expect_error(patched(data, base + 28, "<B", 3), "endian")


def test_random_corruption_is_only_ever_an_input_error() -> None:
    rng = random.Random(20240601)
    seeds = [build(HWCAPS_LIBS + LIBS), build(LIBS, "old"), build(HWCAPS_LIBS + LIBS, "old+new", big=True)]
    for _ in range(3000):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(data))
            if rng.random() < 0.5:
                data[at] = rng.randrange(256)
            else:
                struct.pack_into(
                    "<I", data, min(at, len(data) - 4), rng.choice([0, 0xFFFFFFFF, rng.randrange(1 << 32), len(data)])
                )
        try:
            cache = parse_ld_cache(bytes(data), PATH)
        except InputError as err:
            assert err.path == PATH
        else:
            for entry in cache.entries:
                cache.lookup(entry.name, entry.flags, V4)


# --- speed --------------------------------------------------------------------------


def test_a_large_cache_parses_in_milliseconds() -> None:
    entries = [E(f"lib{i:05d}.so.{i % 7}", f"/usr/lib/x86_64-linux-gnu/lib{i:05d}.so.{i % 7}.0.0") for i in range(5000)]
    data = build(entries)
    best = min(_timed(data) for _ in range(5))
    cache = parse_ld_cache(data, PATH)
    assert len(cache.entries) == 5000
    assert best < 0.25, f"{best * 1e3:.1f} ms for 5000 entries"


def _timed(data: bytes) -> float:
    start = time.perf_counter()
    parse_ld_cache(data, PATH)
    return time.perf_counter() - start
