"""The layout of a cache entry, and its validation: every field is checked for its type and
every column of a symbol table for its type code, length and bounds, so that a corrupt or
foreign entry is refused (``None``) and never turns into a ``Binary`` the rules would trust.

The structured part of an entry is a JSON value: ``{"magic", "reader", "key", "written",
"content", "binaries": [...]}``; each binary is an object of ``Binary``'s fields (``path`` left
out: the reader's caller sets it), enums by value, tuples as lists, the symbol table's string
table and columns (little-endian) as ``[offset, length]`` references into the entry's blob
(``pack``/``unpack``, the file's layout) or, in a bare JSON value, as base64 strings.

The file (``pack``): a 32-byte header — magic ``LAcache\0``, reader version (u32), length of
the JSON part (u32), length of the blob (u64), CRC-32 of JSON part and blob (u32), 4 zero bytes,
all little-endian — then the JSON part (UTF-8), then the blob: the raw bytes of every string
table and column, one after another.  The blob is copied into ``array`` columns (``frombytes``,
C speed); no per-symbol Python object is made while loading.  A file of another size, magic,
version or checksum, or whose references leave the blob, is refused.
"""

from __future__ import annotations

import array
import base64
import contextvars
import dataclasses
import json
import struct
import sys
import zlib
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

from ..model import (
    Binary,
    ComdatSection,
    ElfHashTable,
    Endian,
    Format,
    Kind,
    Libc,
    NeededLibrary,
    NeedKind,
    SymbolTable,
    SymbolVersion,
    VersionDefinition,
    VersionNeed,
    VersionNeedEntry,
    WeakExternal,
)
from ..records import dataclass

#: Bumped whenever a reader's output or this layout changes: entries of other versions are never read.
READER_VERSION = 8  # 7: archive members numbered past names taken literally; fat files of one architecture twice refused  # 8: a Mach-O record's file_size (was 0)
_MAGIC = "linkaudit-binaries"
#: The file's header: magic, reader version, JSON length, blob length, CRC-32, zero.
_HEADER = struct.Struct("<8sIIQII")
_FILE_MAGIC = b"LAcache\0"
#: The symbol table's columns and the ``array`` type code of each.
_COLUMNS = {
    "name_offsets": "I",
    "info": "B",
    "other": "B",
    "section": "H",
    "values": "Q",
    "sizes": "Q",
    "versym": "H",
}


class Invalid(ValueError):
    """A cache entry that is not what linkaudit writes."""


#: What a package's members begin with: member name -> (CRC-32, size, its first bytes).
Heads = dict[str, tuple[int, int, bytes]]


@dataclass(frozen=True, slots=True)
class Entry:
    """A validated entry: binaries (of a file or member) or heads (of a package's members).

    Attributes:
        written: when it was written (ns since the epoch).
        content: the content hash stored with it, or ``None``.
        binaries: the binaries, ``path`` empty (``None`` in a heads entry).
        heads: the package's members' first bytes (``None`` in a binaries entry).
    """

    written: int
    content: str | None
    binaries: tuple[Binary, ...] | None
    heads: Heads | None = None


class _Blob:
    """The blob an entry's raw bytes are appended to while it is encoded (``pack``)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> list[int]:
        """Append ``data``; its ``[offset, length]`` in the blob."""
        self.parts.append(data)
        self.size += len(data)
        return [self.size - len(data), len(data)]


def _raw(data: bytes, blob: _Blob | None) -> object:
    """Bytes as an entry holds them: a reference into ``blob``, or (no blob) base64."""
    return base64.b64encode(data).decode("ascii") if blob is None else blob.add(data)


def _opt_raw(data: bytes | None, blob: _Blob | None) -> object:
    """``_raw`` of ``data``, or ``None`` (a symbol table's names block left out)."""
    return None if data is None else _raw(data, blob)


def _column(values: array.array[int], blob: _Blob | None) -> object:
    data = values if sys.byteorder == "little" else array.array(values.typecode, values)
    if sys.byteorder != "little":
        data.byteswap()
    return _raw(data.tobytes(), blob)


def _encode_hash_table(table: ElfHashTable | None, blob: _Blob | None) -> object:
    """``DT_GNU_HASH`` / ``DT_HASH`` as the reader kept it (``SymbolTable.hash_table``), or ``None``."""
    if table is None:
        return None
    return {
        "gnu": table.gnu,
        "buckets": _column(table.buckets, blob),
        "chain": _column(table.chain, blob),
        "symoffset": table.symoffset,
    }


def _encode_value(value: object, blob: _Blob | None = None) -> object:
    if isinstance(value, SymbolTable):
        return {
            "strtab": _raw(value.strtab, blob),
            "names": _opt_raw(value.ordered_names(), blob),
            **{name: _column(getattr(value, name), blob) for name in _COLUMNS},
            "versions": [[i, v.name, v.file] for i, v in sorted(value.versions.items())],
            "hash_table": _encode_hash_table(value.hash_table, blob),
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _encode_value(getattr(value, f.name), blob) for f in dataclasses.fields(value)}
    if isinstance(value, frozenset):
        return sorted(value)
    if isinstance(value, tuple):
        return [_encode_value(v, blob) for v in value]
    return value.value if isinstance(value, (Format, Endian, Libc, Kind, NeedKind)) else value


def encode_binary(binary: Binary) -> dict[str, Any]:
    """The JSON value of ``binary``, every field (``path`` too): what an entry holds, and what two
    records are compared by (a ``SymbolTable`` compares by identity)."""
    fields = _encode_value(binary)
    assert isinstance(fields, dict)
    return fields


def _encode_fields(binary: Binary, blob: _Blob | None) -> dict[str, Any]:
    """The JSON value of ``binary`` but its ``path``, its bytes in ``blob`` (else base64)."""
    return {
        f.name: _encode_value(getattr(binary, f.name), blob) for f in dataclasses.fields(binary) if f.name != "path"
    }


def encode_entry(
    name: str,
    written: int,
    content: str | None,
    binaries: tuple[Binary, ...] | None,
    heads: Heads | None = None,
    blob: _Blob | None = None,
) -> dict[str, Any]:
    """The JSON value of the entry ``name`` holding ``binaries`` (their ``path`` left out) or
    ``heads``; the symbol tables' bytes appended to ``blob`` (``pack``), else inline as base64."""
    out: dict[str, Any] = {"magic": _MAGIC, "reader": READER_VERSION, "key": name, "written": written}
    out["content"] = content
    if binaries is not None:
        out["binaries"] = [_encode_fields(b, blob) for b in binaries]
    if heads is not None:
        out["heads"] = {
            m: [crc, size, base64.b64encode(head).decode("ascii")] for m, (crc, size, head) in heads.items()
        }
    return out


# --- decoding, checked -------------------------------------------------------------------

Decoder = Callable[[object], Any]


def _typed(kind: type) -> Decoder:
    def check(value: object) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise Invalid(f"{value!r:.40} is not a {kind.__name__}")
        return value

    return check


_int, _bool = _typed(int), _typed(bool)


def _bits(value: object) -> int | None:
    """A binary's class: 32 or 64 bits (every reader's), or unknown."""
    if value is not None and value not in (32, 64):
        raise Invalid(f"{value!r:.40} bits")
    return _opt(_int)(value)  # type: ignore[no-any-return]


def _size(value: object) -> int:
    """A size in bytes: a whole number, never negative."""
    size = _int(value)
    if size < 0:
        raise Invalid("a negative size")
    return size  # type: ignore[no-any-return]


def _str(value: object) -> str:
    """A string of a record: no NUL (no reader makes one: names end at the first NUL, and the OS
    refuses a path holding one), else ``Invalid``."""
    text = _typed(str)(value)
    if "\0" in text:
        raise Invalid("a NUL inside a string")
    return text  # type: ignore[no-any-return]


def _opt(inner: Decoder) -> Decoder:
    return lambda value: None if value is None else inner(value)


def _list(inner: Decoder) -> Decoder:
    def decode(value: object) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise Invalid("not a list")
        return tuple(inner(v) for v in value)

    return decode


def _enum(kind: type) -> Decoder:
    def decode(value: object) -> Any:
        try:
            return kind(_str(value))
        except ValueError as exc:
            raise Invalid(str(exc)) from exc

    return decode


def _record(kind: type, fields: dict[str, Decoder]) -> Decoder:
    def decode(value: object) -> Any:
        if not isinstance(value, dict) or set(value) != set(fields):
            raise Invalid(f"not a {kind.__name__}")
        return kind(**{name: fields[name](value[name]) for name in fields})

    return decode


def _os_version(value: object) -> str:
    """A Mach-O minimum OS or SDK version as the reader spells it (``formats.macho._version``:
    ``xxxx.yy.zz`` nibble-packed, ``"11.0"``, ``"14.2.1"``): ASCII digits, major to 65535, minor
    and patch to 255; anything else is ``Invalid`` (a forged ``"1²"`` ended a run in ``int()``)."""
    text = _str(value)
    parts = text.split(".")
    if not 2 <= len(parts) <= 3 or not all(p.isascii() and p.isdigit() and len(p) <= 5 for p in parts):
        raise Invalid("not a Mach-O version")
    if int(parts[0]) > 0xFFFF or any(int(p) > 0xFF for p in parts[1:]):
        raise Invalid("not a Mach-O version")
    return text


def _pair(value: object) -> tuple[str, str]:
    items = _list(_str)(value)
    if len(items) != 2:
        raise Invalid("not a pair")
    return (items[0], items[1])


def _bytes(value: object) -> bytes:
    try:
        return base64.b64decode(_str(value), validate=True)
    except ValueError as exc:
        raise Invalid("not base64") from exc


#: The blob of the entry being decoded (``unpack``): byte references resolve into it.
_BLOB: contextvars.ContextVar[memoryview | None] = contextvars.ContextVar("blob", default=None)


def _raw_view(value: object) -> bytes | memoryview:
    """Bytes of a symbol table: an ``[offset, length]`` inside the blob being decoded (a view, not
    a copy), or (a bare JSON value, no blob) base64; the other form, or a reference leaving the
    blob, is ``Invalid``."""
    blob = _BLOB.get()
    if blob is None:
        return _bytes(value)
    if not isinstance(value, list) or len(value) != 2:
        raise Invalid("not a reference into the blob")
    start, length = _int(value[0]), _int(value[1])
    if start < 0 or length < 0 or start + length > len(blob):
        raise Invalid("a reference outside the blob")
    return blob[start : start + length]


def _raw_bytes(value: object) -> bytes:
    """``_raw_view``'s bytes, copied."""
    data = _raw_view(value)
    return data if isinstance(data, bytes) else data.tobytes()


def _array(typecode: str, value: object) -> array.array[int]:
    out = array.array(typecode)
    data = _raw_view(value)  # copied once, by frombytes
    if len(data) % out.itemsize:
        raise Invalid("a column of a partial item")
    out.frombytes(data)
    if sys.byteorder != "little":
        out.byteswap()
    return out


def _version(value: object) -> tuple[int, SymbolVersion]:
    items = _list(lambda v: v)(value)
    if len(items) != 3:
        raise Invalid("not a version")
    index = _int(items[0])
    if not 0 <= index <= 0x7FFF:  # a .gnu.version entry's index: 15 bits, the 16th is VERSYM_HIDDEN (gABI)
        raise Invalid("a version index outside 0..0x7fff")
    return index, SymbolVersion(_str(items[1]), _opt(_str)(items[2]))


#: Half the longest name the readers keep (``formats.elf``: 64 KiB): a string table with a NUL in
#: every window of this many bytes, and at its end, has no longer name.
_HALF_NAME = 32 * 1024


def _names_end_soon(strtab: bytes) -> bool:
    """True when ``strtab`` ends with a NUL and has no run of more than 64 KiB without one: every
    name a symbol points at ends at a NUL within 64 KiB, as the ELF reader holds the names it keeps.
    A few hundred ``find`` calls on a 5 MB table (no per-symbol work)."""
    find, half = strtab.find, _HALF_NAME
    if not strtab.endswith(b"\0"):
        return False
    return all(find(b"\0", k, k + half) >= 0 for k in range(0, len(strtab) - half + 1, half))


def _symbols(value: object) -> SymbolTable:
    if not isinstance(value, dict) or set(value) != {"strtab", "names", "versions", "hash_table", *_COLUMNS}:
        raise Invalid("not a symbol table")
    strtab = _raw_bytes(value["strtab"])
    columns = {name: _array(code, value[name]) for name, code in _COLUMNS.items()}
    count = len(columns["name_offsets"])
    if any(len(c) != count for n, c in columns.items() if n != "versym") or len(columns["versym"]) not in (0, count):
        raise Invalid("symbol table columns of different lengths")
    if count and max(columns["name_offsets"]) > len(strtab):
        raise Invalid("a symbol name outside the string table")
    if count and not _names_end_soon(strtab):
        raise Invalid("a string table whose names do not end within 64 KiB (the ELF reader's bound)")
    versions = dict(_list(_version)(value["versions"]))
    c = columns
    table = SymbolTable(
        strtab,
        c["name_offsets"],
        c["info"],
        c["other"],
        c["section"],
        c["values"],
        c["sizes"],
        c["versym"],
        MappingProxyType(versions),
        _hash_table(value["hash_table"], count + 1),
    )
    # no names block: the table's names would have outgrown its string table (``ordered_names``)
    if value["names"] is not None and not table.attach_names(_raw_bytes(value["names"])):
        raise Invalid("not one name per symbol")
    return table


def _hash_table(value: object, dynsym: int) -> ElfHashTable | None:
    """A kept ``DT_GNU_HASH`` / ``DT_HASH`` table over ``dynsym`` ``.dynsym`` entries (index 0
    included), held to what the reader checks before it keeps one (``formats.elf._read_hash_table``):
    every bucket and chain index inside ``.dynsym``, the chain no longer than the symbols it covers.

    Raises:
        Invalid: the table does not fit the symbol table it came with.
    """
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"gnu", "buckets", "chain", "symoffset"}:
        raise Invalid("not a hash table")
    gnu, symoffset = value["gnu"], _int(value["symoffset"])
    if not isinstance(gnu, bool):
        raise Invalid("not a hash table")
    word = _COLUMNS["name_offsets"]  # 32-bit words, as both tables store them
    buckets, chain = _array(word, value["buckets"]), _array(word, value["chain"])
    if gnu:
        fits = 0 <= symoffset <= dynsym and len(chain) <= dynsym - symoffset
        fits = fits and bool(buckets) and max(buckets) < dynsym
    else:
        fits = symoffset == 0 and len(chain) == dynsym and bool(buckets) and max((*buckets, *chain)) < dynsym
    if not fits:
        raise Invalid("a hash table that does not fit its symbol table")
    return ElfHashTable(gnu, buckets, chain, symoffset)


_NEEDED = _record(NeededLibrary, {"name": _str, "kind": _enum(NeedKind)})
_VERNEED = _record(
    VersionNeed,
    {
        "file": _str,
        "versions": _list(_record(VersionNeedEntry, {"name": _str, "flags": _int, "index": _int, "hash": _int})),
    },
)
_VERDEF = _record(VersionDefinition, {"name": _str, "index": _int, "flags": _int, "parents": _list(_str)})

#: How each field of ``Binary`` but ``path`` is decoded (a test checks that every field is here).
FIELDS: dict[str, Decoder] = {
    "format": _enum(Format),
    "machine": _str,
    "bits": _bits,
    "endian": _enum(Endian),
    "os_abi": _str,
    "interpreter": _opt(_str),
    "libc": _enum(Libc),
    "kind": _enum(Kind),
    "soname": _opt(_str),
    "needed": _list(_NEEDED),
    "rpath": _list(_str),
    "runpath": _list(_str),
    "flags": _int,
    "flags_1": _int,
    "bind_now": _bool,
    "version_needs": _list(_VERNEED),
    "version_definitions": _list(_VERDEF),
    "symbols": _symbols,
    "member": _opt(_str),
    "file_size": _size,
    "dlopen_names": _list(_str),
    "gnu_stack": _opt(_str),
    "text_relocations": _bool,
    "section_names": _list(_str),
    "comdat_sections": lambda v: frozenset(_list(_int)(v)),
    "member_file": _opt(_str),
    "forwarders": _list(_pair),
    "min_os": _opt(_os_version),
    "sdk": _opt(_os_version),
    "min_os_command": _opt(_str),
    "link_directives": _list(_str),
    "referenced_from": _list(_pair),
    "comdats": _list(
        _record(
            ComdatSection,
            {"section": _int, "selection": _int, "size": _int, "checksum": _int, "associated": _int},
        )
    ),
    "weak_externals": _list(_record(WeakExternal, {"name": _str, "alternate": _str, "search": _int})),
    "x86_isa_needed": _int,
}
_BINARY = _record(Binary, {"path": _str, **FIELDS})  # the path is the reader's, never stored


def decode_entry(value: object, name: str, path: str = "") -> Entry | None:
    """The entry ``name`` read from JSON ``value``, its binaries' ``path`` set to ``path`` (an entry
    stores none: it is keyed by content), or ``None`` when it is not a valid one of this reader
    version (wrong magic, version or key; a field of the wrong type; inconsistent columns)."""
    try:
        if not isinstance(value, dict) or value.get("magic") != _MAGIC or value.get("reader") != READER_VERSION:
            return None
        if value.get("key") != name or ("binaries" in value) == ("heads" in value):
            return None
        written, content = _int(value.get("written")), _opt(_str)(value.get("content"))
        if "heads" in value:
            return Entry(written, content, None, _heads(value["heads"]))
        binaries = tuple(_BINARY({**_dict(b), "path": path}) for b in _list(lambda v: v)(value["binaries"]))
        return Entry(written, content, binaries)
    except (Invalid, TypeError, OverflowError, MemoryError):
        return None


def pack(
    name: str, written: int, content: str | None, binaries: tuple[Binary, ...] | None, heads: Heads | None = None
) -> bytes:
    """The file of the entry ``name`` (see the module's docstring for the layout).

    Raises:
        ValueError: a part too large for its header field (over 4 GiB of JSON).
    """
    blob = _Blob()
    head = json.dumps(encode_entry(name, written, content, binaries, heads, blob), separators=(",", ":")).encode()
    crc = zlib.crc32(b"".join(blob.parts), zlib.crc32(head))
    header = _HEADER.pack(_FILE_MAGIC, READER_VERSION, len(head), blob.size, crc, 0)
    return b"".join((header, head, *blob.parts))


def unpack(data: bytes, name: str, path: str = "") -> Entry | None:
    """The entry ``name`` read from the file's bytes ``data`` (its binaries' ``path`` set to ``path``),
    or ``None`` when they are not a valid
    one of this reader version: another magic or version, a size other than the header's, a
    checksum that does not match, then everything ``decode_entry`` checks (references into the
    blob included).  Never raises."""
    if len(data) < _HEADER.size:
        return None
    magic, reader, head_size, blob_size, crc, zero = _HEADER.unpack_from(data)
    if magic != _FILE_MAGIC or reader != READER_VERSION or zero or len(data) != _HEADER.size + head_size + blob_size:
        return None
    view = memoryview(data)
    if zlib.crc32(view[_HEADER.size + head_size :], zlib.crc32(view[_HEADER.size : _HEADER.size + head_size])) != crc:
        return None
    try:
        value = json.loads(view[_HEADER.size : _HEADER.size + head_size].tobytes())
    except (ValueError, RecursionError, MemoryError):
        return None
    token = _BLOB.set(view[_HEADER.size + head_size :])
    try:
        return decode_entry(value, name, path)
    finally:
        _BLOB.reset(token)


def _heads(value: object) -> Heads:
    if not isinstance(value, dict):
        raise Invalid("not heads")
    out: Heads = {}
    for member, item in value.items():
        fields = _list(lambda v: v)(item)
        if len(fields) != 3:
            raise Invalid("not a head")
        out[_str(member)] = (_int(fields[0]), _int(fields[1]), _bytes(fields[2]))
    return out


def _dict(value: object) -> dict[str, object]:
    if not isinstance(value, dict) or "path" in value:
        raise Invalid("not a binary")
    return value
