"""The format-neutral model: what one binary needs and provides at load time.

Format readers (``linkaudit.formats``) produce these records; the loader
emulation, the rules and ``show`` read them and nothing else.  Every record is
immutable.  Raw header values that the field knows by number are ``IntEnum``
members whose values are the ELF gABI's (``STB_*``, ``STT_*``, ``STV_*``); the
Mach-O and PE readers map their own notions onto the same members (a Mach-O weak
definition is ``Binding.WEAK``, a PE export is ``Binding.GLOBAL``).

Symbol tables are the bulk of the data (75,000 entries in one library), so
``SymbolTable`` is columnar: parallel ``array`` columns plus the raw string
table, with per-symbol ``Symbol`` views built only when asked for.
"""

from __future__ import annotations

import array
import enum
from collections.abc import Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import field, fields
from itertools import accumulate, compress, repeat
from operator import add, and_, lshift, or_
from sys import byteorder
from types import MappingProxyType
from typing import Any, NamedTuple, cast

from .records import dataclass


class Format(enum.StrEnum):
    """Container format of a binary."""

    ELF = "elf"
    MACHO = "macho"
    PE = "pe"
    COFF = "coff"  # a Windows object (.obj) or a member of a Windows library (.lib)


class Kind(enum.StrEnum):
    """What a binary is, as far as loading goes."""

    SHARED_LIBRARY = "shared-library"
    EXECUTABLE = "executable"
    PIE_EXECUTABLE = "pie-executable"
    PYTHON_EXTENSION = "python-extension"
    RELOCATABLE = "relocatable"
    IMPORT_LIBRARY = "import-library"  # a short import member of a Windows .lib: symbols a DLL provides
    CORE = "core"
    OTHER = "other"


#: The kinds of input loaded on their own when no root reaches them: a library (dlopened), an
#: extension module (imported), an executable (run).  With ``--entry`` naming one extension module,
#: every other was reached by nothing and loaded by nothing: a missing library of theirs went unsaid.
ALONE_KINDS = frozenset({Kind.SHARED_LIBRARY, Kind.PYTHON_EXTENSION, Kind.EXECUTABLE, Kind.PIE_EXECUTABLE})


class Endian(enum.StrEnum):
    """Byte order of the file's headers and tables."""

    LITTLE = "little"
    BIG = "big"


class Libc(enum.StrEnum):
    """C library (and so dynamic loader family) a binary is built for.

    Decided from the ELF interpreter (``ld-linux*`` is glibc, ``ld-musl*`` is
    musl) or, for a library without PT_INTERP, from its DT_NEEDED libc
    (``libc.so.6`` is glibc, ``libc.musl-*`` is musl).
    """

    GLIBC = "glibc"
    MUSL = "musl"
    UNKNOWN = "unknown"
    NONE = "none"  # Mach-O, PE: not an ELF libc question


class NeedKind(enum.StrEnum):
    """How a needed library is needed.

    ELF knows only ``PLAIN`` (DT_NEEDED).  Mach-O adds ``WEAK``
    (LC_LOAD_WEAK_DYLIB), ``REEXPORT`` (LC_REEXPORT_DYLIB), ``UPWARD``
    (LC_LOAD_UPWARD_DYLIB) and ``LAZY`` (LC_LAZY_LOAD_DYLIB); PE adds
    ``DELAY_LOAD`` (the delay-load import table).
    """

    PLAIN = "plain"
    WEAK = "weak"
    REEXPORT = "reexport"
    UPWARD = "upward"
    LAZY = "lazy"
    DELAY_LOAD = "delay-load"


class Binding(enum.IntEnum):
    """Symbol binding; values are the ELF gABI's ``STB_*`` (GNU_UNIQUE is ``STB_GNU_UNIQUE``)."""

    LOCAL = 0
    GLOBAL = 1
    WEAK = 2
    GNU_UNIQUE = 10


class SymbolType(enum.IntEnum):
    """Symbol type; values are the ELF gABI's ``STT_*`` (IFUNC is ``STT_GNU_IFUNC``)."""

    NOTYPE = 0
    OBJECT = 1
    FUNC = 2
    SECTION = 3
    FILE = 4
    COMMON = 5
    TLS = 6
    IFUNC = 10


class Visibility(enum.IntEnum):
    """Symbol visibility; values are the ELF gABI's ``STV_*`` (low two bits of st_other)."""

    DEFAULT = 0
    INTERNAL = 1
    HIDDEN = 2
    PROTECTED = 3


# Flag bits quoted from the ELF gABI and the GNU extensions (elf.h).
DF_BIND_NOW = 0x8
DF_1_NOW = 0x1
DF_1_NODEFLIB = 0x800
DF_1_PIE = 0x08000000
VER_FLG_BASE = 0x1
#: ``st_shndx`` of an absolute symbol (gABI ``SHN_ABS``): its value is no address of any section.
SHN_ABS = 0xFFF1
VER_FLG_WEAK = 0x2

#: DT_FLAGS bits (elf.h ``DF_*``), named as ``readelf -d`` prints them.
DT_FLAGS_NAMES: tuple[tuple[int, str], ...] = (
    (0x1, "ORIGIN"),
    (0x2, "SYMBOLIC"),
    (0x4, "TEXTREL"),
    (DF_BIND_NOW, "BIND_NOW"),
    (0x10, "STATIC_TLS"),
)
#: DT_FLAGS_1 bits (elf.h ``DF_1_*``), named as ``readelf -d`` prints them.
DT_FLAGS_1_NAMES: tuple[tuple[int, str], ...] = (
    (DF_1_NOW, "NOW"),
    (0x2, "GLOBAL"),
    (0x4, "GROUP"),
    (0x8, "NODELETE"),
    (0x10, "LOADFLTR"),
    (0x20, "INITFIRST"),
    (0x40, "NOOPEN"),
    (0x80, "ORIGIN"),
    (0x100, "DIRECT"),
    (0x200, "TRANS"),
    (0x400, "INTERPOSE"),
    (DF_1_NODEFLIB, "NODEFLIB"),
    (0x1000, "NODUMP"),
    (0x2000, "CONFALT"),
    (0x4000, "ENDFILTEE"),
    (0x8000, "DISPRELDNE"),
    (0x10000, "DISPRELPND"),
    (0x20000, "NODIRECT"),
    (0x40000, "IGNMULDEF"),
    (0x80000, "NOKSYMS"),
    (0x100000, "NOHDR"),
    (0x200000, "EDITED"),
    (0x400000, "NORELOC"),
    (0x800000, "SYMINTPOSE"),
    (0x1000000, "GLOBAUDIT"),
    (0x2000000, "SINGLETON"),
    (0x4000000, "STUB"),
    (DF_1_PIE, "PIE"),
    (0x10000000, "KMOD"),
    (0x20000000, "WEAKFILTER"),
    (0x40000000, "NOCOMMON"),
)


def flag_names(value: int, table: Sequence[tuple[int, str]]) -> list[str]:
    """The names of the bits set in ``value``, in ``table`` order; bits ``table`` lacks as one hex number.

    ``flag_names(0x8000001, DT_FLAGS_1_NAMES)`` -> ``["NOW", "PIE"]``;
    ``flag_names(0x80000008, DT_FLAGS_NAMES)`` -> ``["BIND_NOW", "0x80000000"]``.
    """
    names = [name for bit, name in table if value & bit]
    rest = value & ~sum(bit for bit, _name in table)
    if rest:
        names.append(f"{rest:#x}")
    return names


@dataclass(frozen=True, slots=True)
class NeededLibrary:
    """One entry of a binary's ordered list of needed libraries.

    Attributes:
        name: the string as written (ELF DT_NEEDED, Mach-O install name, PE DLL name).
        kind: how it is needed; ``NeedKind.PLAIN`` for every ELF DT_NEEDED.
    """

    name: str
    kind: NeedKind = NeedKind.PLAIN


@dataclass(frozen=True, slots=True)
class VersionNeedEntry:
    """One ``Vernaux`` of a verneed record: a version required from one file.

    Attributes:
        name: version name, e.g. ``"GLIBC_2.34"`` or ``"libnvrtc.so.13"``.
        flags: ``vna_flags``; ``VER_FLG_WEAK`` (0x2) marks a need whose absence
            ld.so tolerates (glibc ``elf/dl-version.c``).
        index: ``vna_other``, the value symbols carry in ``.gnu.version``.
        hash: ``vna_hash``, the ELF hash of ``name`` as stored.
    """

    name: str
    flags: int
    index: int
    hash: int = 0

    @property
    def weak(self) -> bool:
        """True when ``VER_FLG_WEAK`` is set."""
        return bool(self.flags & VER_FLG_WEAK)


@dataclass(frozen=True, slots=True)
class VersionNeed:
    """One ``Verneed`` record (``.gnu.version_r``): the versions needed from one file.

    Attributes:
        file: ``vn_file``, a DT_NEEDED name such as ``"libc.so.6"``.
        versions: the versions required from that file, in file order.
    """

    file: str
    versions: tuple[VersionNeedEntry, ...]


@dataclass(frozen=True, slots=True)
class VersionDefinition:
    """One ``Verdef`` record (``.gnu.version_d``).

    Attributes:
        name: the version name (for the base definition, the file's SONAME).
        index: ``vd_ndx``, the value symbols carry in ``.gnu.version``.
        flags: ``vd_flags``; ``VER_FLG_BASE`` (0x1) marks the file's own base version.
        parents: names of the versions this one inherits from (the ``Verdaux``
            entries after the first).
    """

    name: str
    index: int
    flags: int
    parents: tuple[str, ...] = ()

    @property
    def base(self) -> bool:
        """True for the definition that names the file itself (``VER_FLG_BASE``)."""
        return bool(self.flags & VER_FLG_BASE)


@dataclass(frozen=True, slots=True)
class SymbolVersion:
    """The version a symbol carries.

    Attributes:
        name: version name, e.g. ``"GLIBC_2.2.5"``.
        file: for a needed version (verneed), the file it is needed from; ``None``
            for a version this binary defines (verdef).
    """

    name: str
    file: str | None = None


class Symbol(NamedTuple):
    """A view of one symbol table entry (a ``NamedTuple``: cheap to build, immutable).

    Attributes:
        name: symbol name as stored (mangled for C++).
        defined: False for an undefined symbol (ELF ``SHN_UNDEF``; a Mach-O or
            PE import).
        binding, type, visibility: gABI values, see the enums (a raw ``int`` for
            values outside them).
        value: ``st_value`` (an address in bytes; 0 for most undefined symbols).
        size: ``st_size`` in bytes.
        version: the version the symbol carries, or ``None`` when unversioned.
        version_hidden: True when the version is not the default one
            (``name@VER`` rather than ``name@@VER``; the ``.gnu.version`` hidden bit).
        section: ELF section index (``st_shndx``; 0 = undefined); other formats
            use 1 for defined, 0 for undefined.
    """

    name: str
    defined: bool
    binding: Binding | int
    type: SymbolType | int
    visibility: Visibility
    value: int
    size: int
    version: SymbolVersion | None
    version_hidden: bool
    section: int

    @property
    def weak(self) -> bool:
        """True for ``STB_WEAK`` (a weak undefined symbol may stay unresolved)."""
        return self.binding == Binding.WEAK

    @property
    def version_node(self) -> bool:
        """True for the symbol a version definition defines for itself: GNU ld (and gold) give every
        version node of a version script an absolute symbol of its name in that version
        (``V1@@V1``: ``st_shndx`` ``SHN_ABS``, ``st_value`` 0, ``nm -D`` type ``A``). It names the
        version, not code or data: no binary is linked against it."""
        return (
            self.defined
            and self.section == SHN_ABS
            and self.version is not None
            and self.version.file is None
            and self.name == self.version.name
        )

    def display_name(self) -> str:
        """``name``, ``name@VER`` or ``name@@VER``, as ``nm -D`` (binutils) prints it.

        ``@@`` marks a default version of a version *definition* (``version.file``
        is ``None``, hidden bit clear); every other versioned symbol gets ``@``:
        undefined ones, hidden definitions, and definitions whose version comes
        from a version *need* (copy relocations in executables:
        ``stdout@GLIBC_2.2.5`` in ``/usr/bin/ls``).  Like binutils, the symbol a
        version definition creates for itself (named after the version, e.g.
        ``libnvrtc.so.12`` in version ``libnvrtc.so.12``) is shown without the version.
        """
        if self.version is None or (self.defined and self.name == self.version.name and self.version.file is None):
            return self.name
        default = self.defined and not self.version_hidden and self.version.file is None
        return f"{self.name}{'@@' if default else '@'}{self.version.name}"


def linked_symbol(name: str, defined: bool, library: str | None = None, weak: bool = False, value: int = 0) -> Symbol:
    """A ``Symbol`` of a format without ELF's binding, type and visibility (PE, Mach-O): a global
    (or, ``weak``, a weak) function; an import bound to one library carries it as its version
    (``SymbolVersion(library, file=library)``, as an ELF version need names its file); section 1
    for a definition, 0 for an import."""
    return Symbol(
        name=name,
        defined=defined,
        binding=Binding.WEAK if weak else Binding.GLOBAL,
        type=SymbolType.FUNC,
        visibility=Visibility.DEFAULT,
        value=value,
        size=0,
        version=SymbolVersion(library, library) if library is not None else None,
        version_hidden=False,
        section=1 if defined else 0,
    )


class Definition(NamedTuple):
    """One definition a reference can bind to (see ``SymbolTable.definitions``).

    Attributes:
        version: the version name, or ``None`` when unversioned (versym 0/1 or no versions).
        version_index: the ``.gnu.version`` index (hidden bit cleared); 1 when the table has no versions.
        hidden: the ``.gnu.version`` hidden bit (``name@VER``, not the default).
        weak: ``STB_WEAK``.
    """

    version: str | None
    version_index: int
    hidden: bool
    weak: bool


@dataclass(frozen=True, slots=True, eq=False)
class ElfHashTable:
    """An ELF object's own symbol hash table, as its loader reads it (``elf/dl-lookup.c``).

    Attributes:
        gnu: ``True`` for ``DT_GNU_HASH`` (glibc's ``dl_new_hash``), ``False`` for the gABI's
            ``DT_HASH`` (``_dl_elf_hash``).
        buckets: per bucket, the ``.dynsym`` index of its first symbol (``DT_GNU_HASH``: 0 for an
            empty bucket; ``DT_HASH``: 0 = ``STN_UNDEF`` ends the chain).
        chain: ``DT_GNU_HASH``: the 32-bit hash of each symbol from ``symoffset`` on, bit 0 set on
            the last entry of a bucket's run; ``DT_HASH``: the next ``.dynsym`` index per symbol.
        symoffset: ``DT_GNU_HASH``: the ``.dynsym`` index of the first hashed symbol; 0 for ``DT_HASH``.

    The bloom filter of ``DT_GNU_HASH`` is not kept: the hashes in ``chain``, as one set per table,
    filter exactly (``loader.symbol_lookup``).
    """

    gnu: bool
    buckets: array.array[int]
    chain: array.array[int]
    symoffset: int = 0

    def chain_keys(self) -> array.array[int]:
        """``DT_GNU_HASH``: the hash of each symbol from ``symoffset`` on with bit 0 (the end-of-run
        marker) cleared — the form a wanted name's ``dl_new_hash & ~1`` is compared in — as a
        32-bit array built at C speed (not cached; callers keep what they make of it)."""
        raw = bytearray(self.chain.tobytes())
        raw[_LOW_BYTE::4] = raw[_LOW_BYTE::4].translate(_CLEAR_BIT0)
        words = array.array("I")
        words.frombytes(raw)
        return words


#: Byte translations: 1 for a non-zero byte; logical not of 0/1 bytes; 1 when bits 1-7 (``_CLEAR_FE``)
#: or 0-6 (``_CLEAR_7F``) are clear — a ``.gnu.version`` entry's low and high byte with index 0 or 1.
_NZ = bytes([0] + [1] * 255)
_NOT = bytes([1, 0] + [0] * 254)
_CLEAR_FE = bytes(1 if not b & 0xFE else 0 for b in range(256))
_CLEAR_7F = bytes(1 if not b & 0x7F else 0 for b in range(256))
_LOW16 = 0 if byteorder == "little" else 1


def _nonzero(column: array.array[int]) -> bytes:
    """One byte per entry of ``column``: 1 where the entry is non-zero, else 0 (C speed, any item size).

    The entry is non-zero when one of its bytes is: the bytes at each lane are translated and OR-ed.
    """
    raw, size, n = column.tobytes(), column.itemsize, len(column)
    if not n:
        return b""
    mask = 0
    for lane in range(size):
        mask |= int.from_bytes(raw[lane::size].translate(_NZ), "big")
    return mask.to_bytes(n, "big")


def _u8(data: bytes | Sequence[int] = b"") -> array.array[int]:
    return array.array("B", data)


@dataclass(frozen=True, slots=True, eq=False)
class SymbolTable:
    """A columnar, immutable symbol table with lazily built per-symbol views.

    Every column has one entry per symbol, in table order (for ELF, the
    ``.dynsym`` order without the null entry 0).  Names are not decoded until a
    ``Symbol`` view is made: ``name_offsets[i]`` indexes the NUL-terminated name
    in ``strtab``.

    Attributes:
        strtab: the raw string table (bytes).
        name_offsets: byte offset of each name in ``strtab``.
        info: ELF ``st_info`` encoding (binding << 4 | type), used for every format.
        other: ELF ``st_other`` (visibility in the low two bits).
        section: ELF ``st_shndx``; 0 means undefined.
        values: ``st_value`` per symbol.
        sizes: ``st_size`` per symbol, bytes.
        versym: raw ``.gnu.version`` entry per symbol (index | 0x8000 hidden bit),
            empty when the binary carries no symbol versions.
        versions: maps a versym index (hidden bit cleared) to its ``SymbolVersion``;
            indices 0 (local) and 1 (global) are absent, meaning "unversioned".
        hash_table: the ELF object's ``DT_GNU_HASH`` (or else ``DT_HASH``) table over these
            symbols (table index ``i`` is ``.dynsym`` index ``i + 1``), or ``None``.
    """

    strtab: bytes = b""
    name_offsets: array.array[int] = field(default_factory=lambda: array.array("I"))
    info: array.array[int] = field(default_factory=_u8)
    other: array.array[int] = field(default_factory=_u8)
    section: array.array[int] = field(default_factory=lambda: array.array("H"))
    values: array.array[int] = field(default_factory=lambda: array.array("Q"))
    sizes: array.array[int] = field(default_factory=lambda: array.array("Q"))
    versym: array.array[int] = field(default_factory=lambda: array.array("H"))
    versions: Mapping[int, SymbolVersion] = field(default_factory=lambda: MappingProxyType({}))
    hash_table: ElfHashTable | None = None
    _memo: dict[str, object] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_symbols(cls, symbols: Sequence[Symbol]) -> SymbolTable:
        """Build a table from ``Symbol`` records (for the Mach-O and PE readers and tests).

        Versions are interned: each distinct ``(version, hidden)`` gets a versym index.
        """
        blob = bytearray(b"\0")
        offsets = array.array("I")
        version_index: dict[SymbolVersion, int] = {}
        versym = array.array("H")
        for sym in symbols:
            offsets.append(len(blob))
            blob += sym.name.encode("utf-8", "surrogateescape") + b"\0"
            if sym.version is None:
                versym.append(1)
            else:
                idx = version_index.setdefault(sym.version, len(version_index) + 2)
                versym.append(idx | (0x8000 if sym.version_hidden else 0))
        return cls(
            strtab=bytes(blob),
            name_offsets=offsets,
            info=_u8([(int(s.binding) << 4) | (int(s.type) & 0xF) for s in symbols]),
            other=_u8([int(s.visibility) for s in symbols]),
            section=array.array("H", [s.section if s.defined else 0 for s in symbols]),
            values=array.array("Q", [s.value for s in symbols]),
            sizes=array.array("Q", [s.size for s in symbols]),
            versym=versym if version_index else array.array("H"),
            versions=MappingProxyType({i: v for v, i in version_index.items()}),
        )

    def __len__(self) -> int:
        return len(self.name_offsets)

    def __getitem__(self, index: int) -> Symbol:
        return self._view(index)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (between the processes of ``--jobs``) without the memo but for the attached names
        (``attach_names``) and the identity (``set_identity``), ``versions`` as a dict."""
        columns = (self.strtab, self.name_offsets, self.info, self.other, self.section, self.values, self.sizes)
        names, identity = self._memo.get("ordered"), self._memo.get("identity")
        return (_unpickle_table, (*columns, self.versym, dict(self.versions), self.hash_table, names, identity))

    def __iter__(self) -> Iterator[Symbol]:
        return self._views(range(len(self.name_offsets)))

    @property
    def undefined_count(self) -> int:
        """Number of undefined symbols."""
        return self.section.count(0)

    @property
    def defined_count(self) -> int:
        """Number of defined, non-local symbols (what ``nm -D --defined-only`` lists; STB_LOCAL section symbols excluded)."""
        return sum(
            1 for i, shndx in zip(self.info, self.section, strict=True) if shndx != 0 and i >> 4 != Binding.LOCAL
        )

    def undefined(self) -> tuple[Symbol, ...]:
        """Every undefined symbol as a ``Symbol`` view, in table order (built once, then cached)."""
        cached = self._memo.get("undefined")
        if cached is None:
            cached = self._bulk_views(_nonzero(self.section).translate(_NOT))
            self._memo["undefined"] = cached
        return cached  # type: ignore[return-value]

    def strong_export_names(self, among: Set[int] | None = None) -> frozenset[str]:
        """Names of defined, GLOBAL, default-visibility, unversioned FUNC and OBJECT symbols (C speed).

        What ``duplicate-export`` compares between libraries: a versioned symbol belongs to a
        deliberate interface, and weak or unique ones to vague linkage.  With ``among`` (GNU hash
        keys, as ``strong_export_keys`` gives them; the table must have them) only the names whose
        key is in ``among`` are decoded and returned; without it every one (cached).
        """
        if among is not None:
            keys = self.strong_export_keys()
            assert keys is not None, "strong_export_names(among=...) needs a DT_GNU_HASH table"
            offsets = compress(self.name_offsets, self._strong_export_mask())
            return frozenset(self._decode(list(compress(offsets, map(among.__contains__, keys)))))
        cached = self._memo.get("strong_exports")
        if cached is None:
            cached = frozenset(self._names_where(self._strong_export_mask()))
            self._memo["strong_exports"] = cached
        return cached  # type: ignore[return-value]

    def _strong_export_mask(self) -> bytes:
        """One byte per symbol, non-zero for the strong exports of ``strong_export_names`` (cached)."""
        cached = self._memo.get("strong_mask")
        if cached is None:
            n = len(self.section)
            mask = (
                int.from_bytes(_nonzero(self.section), "big")
                & int.from_bytes(self.info.tobytes().translate(_GLOBAL_FUNC_OR_OBJECT), "big")
                & int.from_bytes(self.other.tobytes().translate(_DEFAULT_VISIBILITY), "big")
            )
            if self.versym:
                # versym index 0 or 1 (hidden bit ignored): unversioned
                raw = self.versym.tobytes()  # native 16-bit words: index bits 1-14 clear, either byte order
                low, high = raw[_LOW16::2], raw[1 - _LOW16 :: 2]
                unversioned = int.from_bytes(low.translate(_CLEAR_FE), "big") & int.from_bytes(
                    high.translate(_CLEAR_7F), "big"
                )
                mask &= unversioned
            cached = self._memo["strong_mask"] = mask.to_bytes(n, "big") if n else b""
        return cached  # type: ignore[return-value]

    def strong_export_keys(self) -> array.array[int] | None:
        """The GNU hash (``dl_new_hash``, bit 0 cleared) of each strong export, in table order, read
        from the ``DT_GNU_HASH`` chain without decoding a name (cached); ``None`` when the table has
        no ``DT_GNU_HASH`` or a strong export lies outside the chain (below ``symoffset``, or past
        the chain's last run: an unhashed symbol)."""
        if "strong_keys" in self._memo:
            return self._memo["strong_keys"]  # type: ignore[return-value]
        ht, found = self.hash_table, None
        mask = self._strong_export_mask()
        base = ht.symoffset - 1 if ht is not None else -1  # table index of chain[0]
        end = base + len(ht.chain) if ht is not None else -1  # past the last hashed symbol
        if ht is not None and ht.gnu and 0 <= base <= end <= len(mask) and not any(mask[:base]) and not any(mask[end:]):
            found = array.array("I", compress(ht.chain_keys(), mask[base:end]))
        self._memo["strong_keys"] = found
        return found

    def defined_names(self) -> list[str]:
        """Names of the defined, non-local symbols, in table order: ``iter_defined``'s names, without
        a ``Symbol`` view each (masks at C speed; the names from ``_names_where``)."""
        n = len(self.section)
        if not n:
            return []
        mask = int.from_bytes(_nonzero(self.section), "big") & int.from_bytes(
            self.info.tobytes().translate(_NONLOCAL_INFO), "big"
        )
        return self._names_where(mask.to_bytes(n, "big"))

    def strong_definitions(self) -> tuple[Symbol, ...]:
        """Defined symbols with binding GLOBAL or GNU_UNIQUE (not weak, not local), built in bulk."""
        n = len(self.section)
        if not n:
            return ()
        mask = int.from_bytes(_nonzero(self.section), "big") & int.from_bytes(
            self.info.tobytes().translate(_STRONG_INFO), "big"
        )
        return self._bulk_views(mask.to_bytes(n, "big"))

    def strong_definition_columns(self) -> tuple[list[str], list[int], list[int]]:
        """``strong_definitions`` as three columns, without a ``Symbol`` view each: the names, the raw
        ``st_shndx`` and the raw symbol type (``st_info & 0xF``), in table order (C speed)."""
        n = len(self.section)
        if not n:
            return [], [], []
        mask = int.from_bytes(_nonzero(self.section), "big") & int.from_bytes(
            self.info.tobytes().translate(_STRONG_INFO), "big"
        )
        selected = mask.to_bytes(n, "big")
        types = list(map(and_, compress(self.info, selected), repeat(0xF)))
        return self._names_where(selected), list(compress(self.section, selected)), types

    def _bulk_views(self, selected: bytes) -> tuple[Symbol, ...]:
        """``Symbol`` views of the entries whose byte in ``selected`` is non-zero, built column-wise (C speed)."""
        names = self._names_where(selected)
        n = len(names)
        info = list(compress(self.info, selected))
        bindings = [_BINDINGS.get(i >> 4, i >> 4) for i in info]
        types = [_TYPES.get(i & 0xF, i & 0xF) for i in info]
        visibilities = list(map(_VISIBILITIES.__getitem__, map(and_, compress(self.other, selected), repeat(3))))
        shndx = list(compress(self.section, selected))
        if self.versym:
            raw = list(compress(self.versym, selected))
            versions = list(map(self.versions.get, map(and_, raw, repeat(0x7FFF))))
            hidden = [r & 0x8000 != 0 for r in raw]
        else:
            versions = [None] * n
            hidden = [False] * n
        return tuple(
            map(
                Symbol._make,
                zip(
                    names,
                    map(bool, shndx),
                    bindings,
                    types,
                    visibilities,
                    compress(self.values, selected),
                    compress(self.sizes, selected),
                    versions,
                    hidden,
                    shndx,
                    strict=False,
                ),
            )
        )

    def definitions(self) -> Mapping[str, tuple[Definition, ...]]:
        """Symbols this table can bind references to, by name (built once, then cached).

        What glibc's ``do_lookup_x``/``check_match`` (``elf/dl-lookup.c``) accepts: defined
        (not ``SHN_UNDEF``), binding GLOBAL, WEAK or GNU_UNIQUE, type NOTYPE, OBJECT, FUNC,
        COMMON, TLS or IFUNC, and a non-zero value unless TLS.
        """
        cached = self._memo.get("definitions")
        if cached is not None:
            return cached  # type: ignore[return-value]
        n = len(self.section)
        info = self.info.tobytes()
        # Bulk masks (C speed): defined, bindable binding and type, non-zero value or TLS.
        mask = (
            int.from_bytes(_nonzero(self.section), "big")
            & int.from_bytes(info.translate(_BINDABLE_INFO), "big")
            & (int.from_bytes(_nonzero(self.values), "big") | int.from_bytes(info.translate(_TLS_INFO), "big"))
        )
        selected = mask.to_bytes(n, "big") if n else b""
        names = self._names_where(selected)
        versym, versions = self.versym, self.versions
        # One shared 1-tuple per (versym entry, weak) pair, looked up in bulk.
        weak_flags = list(compress(info.translate(_WEAK_INFO), selected))
        raw_versions = list(compress(versym, selected)) if versym else [1] * len(names)
        keys = list(map(or_, map(lshift, raw_versions, repeat(1)), weak_flags))
        made: dict[int, tuple[Definition]] = {}
        for key in set(keys):
            raw, weak = key >> 1, bool(key & 1)
            version = versions.get(raw & 0x7FFF) if versym else None
            made[key] = (Definition(version.name if version else None, raw & 0x7FFF, raw & 0x8000 != 0, weak),)
        defs = list(map(made.__getitem__, keys))
        out: dict[str, tuple[Definition, ...]] = dict(zip(names, defs, strict=True))
        if len(out) != len(names):  # a name defined more than once (several versions): merge
            out = {}
            for name, one in zip(names, defs, strict=True):
                prev = out.get(name)
                out[name] = one if prev is None else prev + one
        self._memo["definitions"] = out
        return out

    def definitions_at(self, indices: Iterable[int]) -> tuple[Definition, ...]:
        """The ``Definition`` of each symbol at ``indices`` that ld.so may bind to (as ``definitions``).

        For a lookup through the object's hash table: ``indices`` are the table indices whose
        name matched; the others are skipped (undefined, local, a section or file symbol, or a
        zero value that is not TLS).
        """
        info, section, values, versym, versions = self.info, self.section, self.values, self.versym, self.versions
        out: list[Definition] = []
        for i in indices:
            raw_info = info[i]
            if not section[i] or not _BINDABLE_INFO[raw_info] or not (values[i] or _TLS_INFO[raw_info]):
                continue
            raw = versym[i] if versym else 1
            version = versions.get(raw & 0x7FFF) if versym else None
            out.append(
                Definition(version.name if version else None, raw & 0x7FFF, raw & 0x8000 != 0, raw_info >> 4 == 2)
            )
        return tuple(out)

    def identity(self) -> str | None:
        """What names the content this table's record was read from across runs (``set_identity``),
        or ``None`` when nothing does (the cache off, a record built in memory)."""
        return self._memo.get("identity")  # type: ignore[return-value]

    def set_identity(self, identity: str) -> None:
        """Name the content this table's record was read from: a string that no other content is ever
        given (a cache entry's name, write time and position; a small file's SHA-256 and how it was
        read).  The loader keys what it stores about a binding by it (``loader.bindcache``)."""
        self._memo["identity"] = identity

    def memo(self, key: str) -> dict[Any, Any]:
        """A dictionary kept with this table under ``key`` (what the loader derives from it, computed once)."""
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = {}
        return found  # type: ignore[return-value]

    def names(self, indices: Iterable[int]) -> list[str]:
        """Decode the names of the symbols at ``indices``, in bulk."""
        return self._decode(list(map(self.name_offsets.__getitem__, indices)))

    def ordered_names(self) -> bytes | None:
        """Every symbol's name in table order, NUL-separated: the raw bytes ``attach_names`` takes
        (what a cache entry stores beside the string table; made here symbol by symbol), or
        ``None`` when they would exceed ``ordered_names_limit()`` bytes.

        Names may share their string-table bytes (suffix sharing: ``gABI``'s string table allows
        any offset into a string), so written out one per symbol they can grow as symbols times
        name length — 20,000 symbols naming one 60,000-byte string are 1.2 GB from a 2.5 MB file.
        Past the limit the table keeps decoding from its string table, which is bounded by the
        input's size.
        """
        strtab = self.strtab
        find, size = strtab.find, len(strtab)
        limit, total = self.ordered_names_limit(), 0
        out = []
        for start in self.name_offsets:
            end = find(b"\0", start)
            name = strtab[start : end if end >= 0 else size]
            total += len(name) + 1
            if total > limit:
                return None
            out.append(name)
        return b"\0".join(out)

    def ordered_names_limit(self) -> int:
        """Bytes the names written one per symbol may take: four times the string table, at least 1 MiB."""
        return max(1 << 20, 4 * len(self.strtab))

    def attach_names(self, names: bytes) -> bool:
        """Take every symbol's name, in table order, NUL-separated (``ordered_names``, from a cache
        entry), to be decoded in one call (C speed) the first time many names are asked for, instead
        of splitting the string table into a map of offsets.  Names that are not exactly one per
        symbol are not taken (``False``).  The cache's writer made them from this string table; a
        caller with other names would be believed (decoded names are then the attached ones)."""
        count = len(self.name_offsets)
        if (names.count(b"\0") != count - 1) if count else names:
            return False
        self._memo["ordered"] = names
        return True

    def _names_where(self, selected: bytes) -> list[str]:
        """Names of the symbols whose byte in ``selected`` is non-zero, in table order: from the
        attached names once decoded, or when many are asked for; else from the string table."""
        names = cast("list[str] | None", self._memo.get("ordered_list"))
        if names is None:
            attached = cast("bytes | None", self._memo.get("ordered"))
            if attached is None or (len(selected) - selected.count(0)) * 4 < len(selected):
                return self._decode(list(compress(self.name_offsets, selected)))  # none, or a few asked for
            names = self._memo["ordered_list"] = attached.decode("utf-8", "surrogateescape").split("\0")
        return list(compress(names, selected))

    def _decode(self, offsets: list[int]) -> list[str]:
        """Names at string-table ``offsets``, each distinct offset decoded once for the table's lifetime.

        The string table is split once (C speed) into a map offset -> string; a name that points
        into the middle of a string (suffix sharing) is decoded when first asked for and added
        to the map, so that thousands of symbols naming one offset share one ``str``.
        """
        if "strings" not in self._memo and len(offsets) * 4 < len(self.name_offsets):
            return self._decode_each(offsets)  # a few names of a large table: not worth splitting it all
        by_offset = self._strings()
        names: list[str | None] = list(map(by_offset.get, offsets))
        if None in names:
            for k, name in enumerate(names):
                if name is None:
                    names[k] = self._inner_name(offsets[k])
        return names  # type: ignore[return-value]

    def _decode_each(self, offsets: list[int]) -> list[str]:
        """Names at ``offsets``, each found and decoded on its own (remembered per offset)."""
        known = self.memo("each")
        strtab = self.strtab
        find, size = strtab.find, len(strtab)
        out: list[str] = []
        for start in offsets:
            name = known.get(start)
            if name is None:
                end = find(b"\0", start)
                name = known[start] = strtab[start : end if end >= 0 else size].decode("utf-8", "surrogateescape")
            out.append(name)
        return out

    def _strings(self) -> dict[int, str]:
        """The map string-table offset -> name (the whole strings of an ASCII table; then every name decoded)."""
        by_offset = cast("dict[int, str] | None", self._memo.get("strings"))
        if by_offset is None:
            strtab = self.strtab
            text = strtab.decode("ascii") if strtab.isascii() else None
            if text is not None:
                parts = text.split("\0")
                by_offset = dict(zip(accumulate(map(add, map(len, parts), repeat(1)), initial=0), parts, strict=False))
            else:
                by_offset = {}
            self._memo["strings"] = by_offset
        return by_offset

    def _inner_name(self, start: int) -> str:
        """Decode the name at ``start`` (UTF-8; undecodable bytes as surrogate escapes) and remember it."""
        strtab = self.strtab
        end = strtab.find(b"\0", start)
        name = strtab[start : end if end >= 0 else len(strtab)].decode("utf-8", "surrogateescape")
        self._strings()[start] = name
        return name

    def iter_undefined(self) -> Iterator[Symbol]:
        """Yield a ``Symbol`` view of each undefined symbol, in table order."""
        return iter(self.undefined())

    def iter_defined(self) -> Iterator[Symbol]:
        """Yield a ``Symbol`` view of each defined, non-local symbol (one that can satisfy a reference), in table order."""
        info = self.info
        return self._views(i for i, shndx in enumerate(self.section) if shndx != 0 and info[i] >> 4 != Binding.LOCAL)

    def name_at(self, index: int) -> str:
        """Decode the name of symbol ``index`` (UTF-8; undecodable bytes kept as surrogate escapes)."""
        start = self.name_offsets[index]
        name = self._strings().get(start)
        return self._inner_name(start) if name is None else name

    def _views(self, indices: Iterable[int]) -> Iterator[Symbol]:
        """``Symbol`` views of ``indices``: the batch form of ``_view``, with lookups hoisted out of the loop."""
        offsets, known, inner = self.name_offsets, self._strings().get, self._inner_name
        info, other, section, values, sizes = self.info, self.other, self.section, self.values, self.sizes
        versym, versions = self.versym, self.versions
        bindings, types, visibilities = _BINDINGS, _TYPES, _VISIBILITIES
        for i in indices:
            start = offsets[i]
            name = known(start)
            if name is None:
                name = inner(start)
            raw_info = info[i]
            version = None
            hidden = False
            if versym:
                raw = versym[i]
                version = versions.get(raw & 0x7FFF)
                hidden = raw & 0x8000 != 0
            shndx = section[i]
            yield Symbol(
                name,
                shndx != 0,
                bindings.get(raw_info >> 4, raw_info >> 4),
                types.get(raw_info & 0xF, raw_info & 0xF),
                visibilities[other[i] & 3],
                values[i],
                sizes[i],
                version,
                hidden,
                shndx,
            )

    def _view(self, i: int) -> Symbol:
        return next(self._views((i,)))


_BINDINGS: dict[int, Binding] = {b.value: b for b in Binding}
_TYPES: dict[int, SymbolType] = {t.value: t for t in SymbolType}
_VISIBILITIES: tuple[Visibility, ...] = tuple(Visibility)
#: st_info byte -> 1 when ld.so may bind to it (dl-lookup.c: GLOBAL/WEAK/GNU_UNIQUE;
#: NOTYPE/OBJECT/FUNC/COMMON/TLS/IFUNC), else 0; and -> 1 for STT_TLS.
_BINDABLE_INFO = bytes(1 if (i >> 4) in (1, 2, 10) and (i & 0xF) in (0, 1, 2, 5, 6, 10) else 0 for i in range(256))
_TLS_INFO = bytes(1 if (i & 0xF) == 6 else 0 for i in range(256))
_WEAK_INFO = bytes(1 if (i >> 4) == 2 else 0 for i in range(256))
_STRONG_INFO = bytes(1 if (i >> 4) in (1, 10) else 0 for i in range(256))
_NONLOCAL_INFO = bytes(0 if (i >> 4) == 0 else 1 for i in range(256))
_GLOBAL_FUNC_OR_OBJECT = bytes(1 if (i >> 4) == 1 and (i & 0xF) in (1, 2) else 0 for i in range(256))
#: Byte translation clearing bit 0 (the GNU hash chain's end-of-run marker) of a hash's low byte.
_CLEAR_BIT0 = bytes(b & 0xFE for b in range(256))
_LOW_BYTE = 0 if byteorder == "little" else 3
_DEFAULT_VISIBILITY = bytes(1 if (i & 3) == 0 else 0 for i in range(256))


def _unpickle_table(
    strtab: bytes, offsets: array.array[int], info: array.array[int], other: array.array[int],
    section: array.array[int], values: array.array[int], sizes: array.array[int], versym: array.array[int],
    versions: dict[int, SymbolVersion], hash_table: ElfHashTable | None = None, names: bytes | None = None,
    identity: str | None = None,
) -> SymbolTable:  # fmt: skip
    """A ``SymbolTable`` from the columns ``SymbolTable.__reduce__`` gave (its attached names and identity too)."""
    table = SymbolTable(
        strtab, offsets, info, other, section, values, sizes, versym, MappingProxyType(versions), hash_table
    )
    if names is not None:
        table.attach_names(names)
    if identity is not None:
        table.set_identity(identity)
    return table


@dataclass(frozen=True, slots=True)
class Binary:
    """Everything linkaudit knows about one binary (one file, or one slice of a fat file).

    Attributes:
        path: the path as the user gave it, or as found under a directory they gave.
        format: container format.
        machine: architecture name in the field's spelling (``"x86-64"``,
            ``"aarch64"``, ``"ppc64le"``...); ``"unknown(N)"`` for an unlisted e_machine.
        bits: 32 or 64 (ELF class), or ``None`` where it does not apply.
        endian: byte order.
        os_abi: ELF ``EI_OSABI`` name (``"SYSV"``, ``"GNU"``, ``"FreeBSD"``...).
        interpreter: PT_INTERP path, e.g. ``"/lib64/ld-linux-x86-64.so.2"``, or ``None``.
        libc: the C library the binary targets (see ``Libc``).
        kind: what the binary is.
        soname: DT_SONAME (ELF), install name (Mach-O LC_ID_DYLIB) or export-table
            DLL name (PE); ``None`` when absent.
        needed: needed libraries in load-command / DT_NEEDED order.
        rpath: DT_RPATH entries as written (``$ORIGIN`` unexpanded), split on ``:``.
        runpath: DT_RUNPATH entries as written, split on ``:``.
        flags: DT_FLAGS value (0 when absent).
        flags_1: DT_FLAGS_1 value (0 when absent).
        bind_now: DT_BIND_NOW present, or DF_BIND_NOW or DF_1_NOW set.
        version_needs: ``.gnu.version_r`` records in file order.
        version_definitions: ``.gnu.version_d`` records in file order.
        symbols: the dynamic symbol table (ELF ``.dynsym``).
        member: archive member name when the binary came from an archive, else ``None``.
        file_size: size of the file on disk, bytes.
        dlopen_names: library names (``lib*.so[.N]``, or paths ending so) found as
            NUL-terminated strings in ``.rodata``: what the code may pass to ``dlopen`` —
            soft dependencies, in file order, without duplicates; empty when the file
            has no section headers or no ``.rodata``.
        gnu_stack: the stack the file asks for: ``"rw"`` or ``"rwx"`` from PT_GNU_STACK,
            ``None`` when it has no PT_GNU_STACK (then the ABI's default applies).
        text_relocations: DT_TEXTREL present or DF_TEXTREL set: the loader must write
            into the text segment to relocate it.
        section_names: for a relocatable object, its section names by index (so a symbol's
            ``section`` can be named); empty otherwise.
        comdat_sections: for a relocatable object, the indices of sections that belong to
            COMDAT groups (the linker keeps one copy per group signature); empty otherwise.
        member_file: for a member of a thin archive, the file that holds it (the archive
            only names it); ``None`` otherwise.
        forwarders: PE exports that name a function of another DLL: ``(export, "DLL.function")``
            (``"DLL.#N"`` by ordinal), in export order; empty for other formats.
        min_os: Mach-O: the minimum OS version it was built for (``LC_BUILD_VERSION`` minos,
            ``"11.0"``); ``None`` elsewhere.
        sdk: Mach-O: the SDK version it was built against (``"15.0"``); ``None`` elsewhere.
        min_os_command: Mach-O: the load command ``min_os`` and ``sdk`` come from,
            ``"LC_BUILD_VERSION"`` (its ``minos``) or ``"LC_VERSION_MIN_MACOSX"`` (its ``version``:
            what builds for macOS 10.13 and older carry); ``None`` when the file has neither.
        link_directives: COFF objects: the ``.drectve`` linker directives as ``/OPTION:argument``
            (``"/DEFAULTLIB:nvrtc.lib"``), in order; empty elsewhere.
        referenced_from: COFF objects: ``(external symbol, function)`` for each reference made from
            inside a function (found through the relocations); empty elsewhere.
        x86_isa_needed: ELF x86 files: the ``GNU_PROPERTY_X86_ISA_1_NEEDED`` bits of the file's
            GNU property note (``X86_ISA_1_BASELINE`` = 1, ``V2`` = 2, ``V3`` = 4, ``V4`` = 8): the
            micro-architecture levels its code needs, which glibc's ld.so checks against the CPU
            before it maps the file; 0 without the property (and for every other format).
        comdats: COFF objects: every COMDAT section with its selection, in section order.
        weak_externals: COFF objects: the weak externals with their alternate and search type.
    """

    path: str
    format: Format
    machine: str
    bits: int | None
    endian: Endian
    os_abi: str
    interpreter: str | None
    libc: Libc
    kind: Kind
    soname: str | None
    needed: tuple[NeededLibrary, ...]
    rpath: tuple[str, ...]
    runpath: tuple[str, ...]
    flags: int
    flags_1: int
    bind_now: bool
    version_needs: tuple[VersionNeed, ...]
    version_definitions: tuple[VersionDefinition, ...]
    symbols: SymbolTable
    member: str | None = None
    file_size: int = 0
    dlopen_names: tuple[str, ...] = ()
    gnu_stack: str | None = None
    text_relocations: bool = False
    section_names: tuple[str, ...] = ()
    comdat_sections: frozenset[int] = frozenset()
    member_file: str | None = None
    forwarders: tuple[tuple[str, str], ...] = ()
    min_os: str | None = None
    sdk: str | None = None
    link_directives: tuple[str, ...] = ()
    referenced_from: tuple[tuple[str, str], ...] = ()
    x86_isa_needed: int = 0
    comdats: tuple[ComdatSection, ...] = ()
    weak_externals: tuple[WeakExternal, ...] = ()
    min_os_command: str | None = None

    @property
    def needed_names(self) -> tuple[str, ...]:
        """The needed library names, in order."""
        return tuple(n.name for n in self.needed)

    def with_path(self, path: str) -> Binary:
        """This record under another ``path``: ``dataclasses.replace(self, path=path)`` by setting
        each slot through its descriptor, one line a field (no ``__post_init__``, every field in
        ``__init__``): 1.8 us, a loop over the fields 8.9 us, ``replace`` 12.7 us — once per copy of
        a file and per label of a package member (issue 14 §1). ``tests/formats/test_copies.py`` checks that
        every field is copied (a field added to ``Binary`` must get its line here)."""
        new = _NEW(Binary)
        s = _SET
        s[0](new, path)
        s[1](new, self.format)
        s[2](new, self.machine)
        s[3](new, self.bits)
        s[4](new, self.endian)
        s[5](new, self.os_abi)
        s[6](new, self.interpreter)
        s[7](new, self.libc)
        s[8](new, self.kind)
        s[9](new, self.soname)
        s[10](new, self.needed)
        s[11](new, self.rpath)
        s[12](new, self.runpath)
        s[13](new, self.flags)
        s[14](new, self.flags_1)
        s[15](new, self.bind_now)
        s[16](new, self.version_needs)
        s[17](new, self.version_definitions)
        s[18](new, self.symbols)
        s[19](new, self.member)
        s[20](new, self.file_size)
        s[21](new, self.dlopen_names)
        s[22](new, self.gnu_stack)
        s[23](new, self.text_relocations)
        s[24](new, self.section_names)
        s[25](new, self.comdat_sections)
        s[26](new, self.member_file)
        s[27](new, self.forwarders)
        s[28](new, self.min_os)
        s[29](new, self.sdk)
        s[30](new, self.link_directives)
        s[31](new, self.referenced_from)
        s[32](new, self.x86_isa_needed)
        s[33](new, self.comdats)
        s[34](new, self.weak_externals)
        s[35](new, self.min_os_command)
        return new

    @property
    def display_path(self) -> str:
        """``path``, or ``archive(member)`` for an archive member (``fat.dylib(arm64)`` for a slice of a
        universal Mach-O file)."""
        return f"{self.path}({self.member})" if self.member else self.path


#: ``Binary``'s fields, in order, and each one's slot setter (``Binary.with_path``).
_BINARY_SLOTS = tuple(f.name for f in fields(Binary))
_SET = tuple(Binary.__dict__[name].__set__ for name in _BINARY_SLOTS)
_NEW = object.__new__


@dataclass(frozen=True, slots=True)
class ComdatSection:
    """A COFF object's COMDAT section (``IMAGE_SCN_LNK_COMDAT``) as its section-definition aux
    record describes it (Microsoft PE/COFF specification, "COMDAT Sections (Object Only)").

    Attributes:
        section: the section number (1-based, as symbols name it).
        selection: ``IMAGE_COMDAT_SELECT_*`` (1 NODUPLICATES, 2 ANY, 3 SAME_SIZE, 4 EXACT_MATCH,
            5 ASSOCIATIVE, 6 LARGEST), or the raw value.
        size: the section's ``SizeOfRawData``, bytes.
        checksum: the aux record's ``CheckSum`` (``EXACT_MATCH`` compares it).
        associated: for ``ASSOCIATIVE``, the section it goes with; else 0.
    """

    section: int
    selection: int
    size: int
    checksum: int = 0
    associated: int = 0


@dataclass(frozen=True, slots=True)
class WeakExternal:
    """A COFF weak external (``IMAGE_SYM_CLASS_WEAK_EXTERNAL``) and its aux record.

    Attributes:
        name: the weak symbol.
        alternate: the symbol it resolves to when nothing defines ``name`` (its ``TagIndex``).
        search: ``IMAGE_WEAK_EXTERN_SEARCH_*``: 1 NOLIBRARY (no library searched for ``name``),
            2 LIBRARY (libraries searched first), 3 ALIAS (``name`` is an alias of ``alternate``),
            4 anti-dependency; or the raw value.
    """

    name: str
    alternate: str
    search: int


#: The ``Binary`` fields only ELF fills (interpreter, libc, DT_RUNPATH, DT_FLAGS, DT_FLAGS_1,
#: BIND_NOW, symbol versions), empty: what the PE and Mach-O readers pass, ``Binary(**NOT_ELF, ...)``.
NOT_ELF: Mapping[str, Any] = MappingProxyType(
    {
        "interpreter": None,
        "libc": Libc.NONE,
        "runpath": (),
        "flags": 0,
        "flags_1": 0,
        "bind_now": False,
        "version_needs": (),
        "version_definitions": (),
    }
)
