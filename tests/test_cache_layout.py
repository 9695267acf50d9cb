"""The cache entry's binary layout (``linkaudit.cache.codec.pack``/``unpack``): every binary the
readers make comes back equal, the symbol tables never pass through JSON, and an entry that is
truncated, patched, foreign or oversized is refused (``None``), then ignored and rewritten by the
cache — never trusted, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import os
import struct
import zlib
from pathlib import Path

import pytest
from realsite import TORCH_VERSION, cache_root

from linkaudit import cache
from linkaudit.cache import Cache, Key, codec
from linkaudit.cache.codec import encode_binary, pack, unpack
from linkaudit.errors import InputError
from linkaudit.formats import cached_read, read_path
from linkaudit.model import Binary, SymbolTable

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bins"
SMALL = SAMPLES / "fixed/libnvrtc.so.12"


@pytest.fixture(autouse=True)
def _small_files_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fixtures are tiny: files below ``copies.SMALL_FILE_BYTES`` are not cached (cheaper to
    parse), so these tests of the cache's layout lower the threshold to nothing."""
    monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 0)


_HEADER = struct.Struct("<8sIIQII")


def _readable(root: Path) -> list[tuple[Path, list[Binary]]]:
    """``(file, its binaries)`` of every file under ``root`` the readers read."""
    out = []
    for path in sorted(p for p in root.rglob("*") if p.is_file() and not p.is_symlink()):
        try:
            binaries = read_path(str(path))
        except InputError:
            continue
        if binaries and not any(b.member_file for b in binaries):  # thin archives are never cached
            out.append((path, binaries))
    return out


def _same(binaries: list[Binary], name: str = "k") -> None:
    """``binaries`` packed and unpacked: equal field by field (``path`` left out), nothing decoded."""
    entry = unpack(pack(name, 1, None, tuple(binaries)), name)
    assert entry is not None and entry.binaries is not None
    assert [encode_binary(b) for b in entry.binaries] == [
        encode_binary(dataclasses.replace(b, path="")) for b in binaries
    ]
    for got, read in zip(entry.binaries, binaries, strict=True):
        table = got.symbols
        assert set(table._memo) <= {"ordered"}  # no name decoded, no per-symbol view made while loading
        n = len(table)
        assert table._names_where(b"\1" * n) == [read.symbols.name_at(i) for i in range(n)]
        assert table.strong_export_names() == read.symbols.strong_export_names()
        assert table.undefined() == read.symbols.undefined()
        assert dict(table.definitions()) == dict(read.symbols.definitions())


def test_every_sample_binary_round_trips() -> None:
    found = _readable(SAMPLES)
    assert len(found) > 100 and sum(len(b.symbols) for _p, bs in found for b in bs) > 1000
    for _path, binaries in found:
        _same(binaries)


def test_the_real_torch_libraries_round_trip() -> None:
    lib = cache_root() / f"torch-{TORCH_VERSION}" / "torch" / "lib"
    if not lib.is_dir():
        pytest.skip(f"{lib} absent (fetched by tests/realsite.py)")
    for path in sorted(p for p in lib.iterdir() if p.is_file()):
        _same(read_path(str(path)))


def test_the_symbol_tables_do_not_pass_through_json(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON part holds the structured fields only: its size does not grow with the symbols
    (the JSON entries of reader version 2 held every column as base64 text)."""
    (binary,) = read_path(str(SAMPLES / "broken/libtorch_cuda.so"))
    many = dataclasses.replace(binary, symbols=type(binary.symbols).from_symbols(list(binary.symbols) * 500))
    parsed: list[int] = []
    real = json.loads
    monkeypatch.setattr(codec.json, "loads", lambda data, **kw: parsed.append(len(data)) or real(data, **kw))
    data = pack("k", 1, None, (many,))
    assert unpack(data, "k") is not None
    assert len(many.symbols) >= 500 and parsed == [_HEADER.unpack_from(data)[2]] and parsed[0] < 8192


def _entry() -> tuple[bytes, str]:
    name = "ab" * 32
    return pack(name, 1, None, tuple(read_path(str(SMALL)))), name


def test_every_truncation_is_refused() -> None:
    data, name = _entry()
    assert unpack(data, name) is not None
    for size in range(len(data)):
        assert unpack(data[:size], name) is None, size


def test_every_single_byte_patch_is_refused() -> None:
    """Header fields, the JSON part and the blob alike: a CRC-32 catches every single-byte change."""
    data, name = _entry()
    for i in range(len(data)):
        for flip in (0x01, 0x80, 0xFF):
            patched = bytearray(data)
            patched[i] ^= flip
            assert unpack(bytes(patched), name) is None, (i, flip)


def _rebuilt(data: bytes, change) -> bytes:  # type: ignore[no-untyped-def]
    """A well-formed file (size and CRC-32 right) whose JSON part ``change`` altered: foreign."""
    magic, reader, head_size, _blob, _crc, zero = _HEADER.unpack_from(data)
    blob = data[_HEADER.size + head_size :]
    head = json.dumps(change(json.loads(data[_HEADER.size : _HEADER.size + head_size]))).encode()
    return _HEADER.pack(magic, reader, len(head), len(blob), zlib.crc32(blob, zlib.crc32(head)), zero) + head + blob


def _symbols(value: dict, field: str, new: object) -> dict:  # type: ignore[type-arg]
    value["binaries"][0]["symbols"][field] = new
    return value


def _field(value: dict, field: str, new: object) -> dict:  # type: ignore[type-arg]
    value["binaries"][0][field] = new
    return value


@pytest.mark.parametrize(
    "change",
    [
        lambda v: _symbols(v, "strtab", [0, 1 << 40]),  # past the blob
        lambda v: _symbols(v, "strtab", [-1, 2]),
        lambda v: _symbols(v, "strtab", [0]),
        lambda v: _symbols(v, "strtab", [True, 1]),
        lambda v: _symbols(v, "strtab", "AAAA"),  # base64 inline: the bare JSON form, not this one's
        lambda v: _symbols(v, "info", [0, 1]),  # a column of another length
        lambda v: _symbols(v, "values", [0, 3]),  # a partial item
        lambda v: _symbols(v, "name_offsets", [0, 0]),  # columns of different lengths
        lambda v: _field(v, "bits", 0),  # no reader makes another class (libc.so.6 was "not found")
        lambda v: _field(v, "bits", 2**100),
        lambda v: _field(v, "file_size", -1),
        # a .gnu.version index has 15 bits (the reader masks VERSYM_HIDDEN): 2**40 was believed
        # and moved every version of the file (the hostile tester's cache_forge_crc.py bigcount)
        lambda v: _symbols(v, "versions", [[2**40, "X", None]]),
        lambda v: _symbols(v, "versions", [[0x8000, "X", None]]),
        lambda v: _symbols(v, "versions", [[-2, "X", None]]),
        # a Mach-O version as formats.macho spells it, or refused: "1\u00b2" passed str.isdigit and
        # ended min-os-version in int() (the hostile tester's forge_run.sh min_os_sup, min_os_long)
        lambda v: _field(v, "min_os", "1\u00b2"),
        lambda v: _field(v, "min_os", "9" * 5000 + ".0"),
        lambda v: _field(v, "min_os", "11"),
        lambda v: _field(v, "min_os", "11.0.0.0"),
        lambda v: _field(v, "min_os", "65536.0"),
        lambda v: _field(v, "sdk", "14.256"),
        lambda v: _field(v, "sdk", "\u0661\u0664.0"),  # Arabic-Indic digits: int() takes them
        lambda v: {**v, "key": "cd" * 32},
        lambda v: {**v, "reader": 2},
        lambda v: [v],
    ],
)
def test_a_well_formed_foreign_entry_is_refused(change) -> None:  # type: ignore[no-untyped-def]
    data, name = _entry()
    assert unpack(_rebuilt(data, lambda v: v), name) is not None
    assert unpack(_rebuilt(data, change), name) is None


def test_another_reader_version_is_refused() -> None:
    data, name = _entry()
    magic, _reader, *rest = _HEADER.unpack_from(data)
    assert unpack(_HEADER.pack(magic, codec.READER_VERSION - 1, *rest) + data[_HEADER.size :], name) is None


def _spoiled(data: bytes) -> list[bytes]:
    """A few of each kind of damage: truncations, patches, garbage, a JSON entry of version 2."""
    patched = [bytes(data[:i]) + bytes([data[i] ^ 0x55]) + data[i + 1 :] for i in range(0, len(data), 997)]
    return [b"", b"{}", data[:31], data[:-1], data + b"\0", *patched, b"\0" * len(data)]


def test_a_spoiled_entry_is_read_around_and_rewritten(tmp_path: Path) -> None:
    store = Cache(str(tmp_path / "c"))
    key = Key("ef" * 32, 0, lambda: "")
    reads: list[int] = []
    real = [encode_binary(dataclasses.replace(b, path="")) for b in read_path(str(SMALL))]

    def read() -> list[Binary]:
        reads.append(1)
        return read_path(str(SMALL))

    cached_read(store, key, str(SMALL), read)
    path = Path(store._path(key.name))
    good = path.read_bytes()
    for n, bad in enumerate(_spoiled(good), start=2):
        path.write_bytes(bad)
        got = cached_read(store, key, str(SMALL), read)
        assert [encode_binary(dataclasses.replace(b, path="")) for b in got] == real
        assert len(reads) == n  # read again, not trusted
        assert unpack(path.read_bytes(), key.name) is not None  # rewritten
    assert cached_read(store, key, str(SMALL), read) and len(reads) == n  # then a hit


def test_an_oversized_entry_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry larger than ``MAX_ENTRY_BYTES`` is foreign: not read at all (a bounded read)."""
    store = Cache(str(tmp_path / "c"))
    key = Key("01" * 32, 0, lambda: "")
    store.put(key, tuple(read_path(str(SMALL))))
    assert store.get(key) is not None
    size = os.path.getsize(store._path(key.name))
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", size - 1)
    opened: list[int] = []
    real_fdopen = os.fdopen
    monkeypatch.setattr(cache.os, "fdopen", lambda *a, **k: opened.append(1) or real_fdopen(*a, **k))
    assert store.get(key) is None and opened == []  # refused by its size, before any byte is read


def test_names_come_from_the_entry_not_from_the_string_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A loaded table's exported, undefined and bindable names are decoded from the entry's names
    in one call: the string table is never looked into (a table read from the file is: split into
    a map of offsets, or each name found on its own)."""
    from linkaudit.model import Binding, Symbol, SymbolType, Visibility

    (binary,) = read_path(str(SMALL))
    symbols = [
        Symbol(f"f{i}", i % 3 != 0, Binding.GLOBAL, SymbolType.FUNC, Visibility.DEFAULT, 16 + i, 8, None, False, i % 3)
        for i in range(300)
    ]
    binary = dataclasses.replace(binary, symbols=SymbolTable.from_symbols(symbols))
    entry = unpack(pack("k", 1, None, (binary,)), "k")
    assert entry is not None and entry.binaries is not None
    (table,) = (b.symbols for b in entry.binaries)
    decodes: list[int] = []
    real = SymbolTable._decode
    monkeypatch.setattr(SymbolTable, "_decode", lambda self, offsets: decodes.append(1) or real(self, offsets))
    assert len(table.strong_export_names()) == 200 and len(table.undefined()) == 100 and table.definitions()
    assert decodes == []
    assert binary.symbols.strong_export_names() == table.strong_export_names() and decodes  # the read table


def test_names_not_one_per_symbol_are_refused() -> None:
    data, name = _entry()

    def strtab_as_names(value: dict) -> dict:  # type: ignore[type-arg]
        table = value["binaries"][0]["symbols"]
        table["names"] = table["strtab"]  # NUL-separated too, but not one name per symbol
        return value

    assert unpack(_rebuilt(data, strtab_as_names), name) is None
    table = _table_with_names(b"a\0b")
    assert table.attach_names(b"a\0b") and not table.attach_names(b"a") and not table.attach_names(b"a\0b\0c")
    assert not SymbolTable().attach_names(b"x") and SymbolTable().attach_names(b"")


def _table_with_names(joined: bytes) -> SymbolTable:
    from linkaudit.model import Symbol, Visibility

    return SymbolTable.from_symbols(
        [Symbol(n.decode(), True, 1, 2, Visibility.DEFAULT, 16, 8, None, False, 1) for n in joined.split(b"\0")]
    )


def test_attached_names_survive_the_pool() -> None:
    """``--jobs`` sends a worker's records back pickled: the attached names come with them."""
    import pickle

    (binary,) = read_path(str(SMALL))
    entry = unpack(pack("k", 1, None, (binary,)), "k")
    assert entry is not None and entry.binaries is not None
    table = pickle.loads(pickle.dumps(entry.binaries[0].symbols))
    assert table._memo.get("ordered") == binary.symbols.ordered_names()


def test_a_warm_read_uses_no_process_pool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file in the cache: ``read_paths`` reads here, whatever ``jobs`` says (forking workers
    and pickling their records back cost more than the entries), with the same records."""
    import concurrent.futures

    from linkaudit import jobs

    monkeypatch.setattr(jobs, "MIN_POOL_FILES", 1)
    monkeypatch.setattr(jobs, "MIN_POOL_BYTES", 0)
    monkeypatch.setattr(jobs, "MIN_POOL_FILE_BYTES", 0)
    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    cache.configure(True, str(tmp_path / "c"))
    paths = [str(SMALL), str(SAMPLES / "broken/libtorch_cuda.so")]
    pools: list[int] = []
    real = concurrent.futures.ProcessPoolExecutor

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        pools.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", counting)
    cold = jobs.read_paths(paths, jobs=2)
    assert pools == [1]  # cold: read in workers (their entries written there)
    warm = jobs.read_paths(paths, jobs=2)
    assert pools == [1]  # warm: no pool
    assert [[encode_binary(b) for b in r.binaries] for r in warm] == [
        [encode_binary(b) for b in r.binaries] for r in cold
    ]
    assert cache.active().hits == len(paths)  # type: ignore[union-attr]


def _shared_suffix_table(symbols: int, name_bytes: int) -> SymbolTable:
    """``symbols`` undefined symbols all naming one ``name_bytes``-byte string (suffix sharing)."""
    import array
    from types import MappingProxyType

    strtab = b"\0" + b"x" * name_bytes + b"\0"
    return SymbolTable(
        strtab,
        array.array("I", [1] * symbols),
        array.array("B", [0x12] * symbols),
        array.array("B", [0] * symbols),
        array.array("H", [0] * symbols),
        array.array("Q", [0] * symbols),
        array.array("Q", [0] * symbols),
        array.array("H"),
        MappingProxyType({}),
        None,
    )


def test_names_shared_by_many_symbols_keep_the_entry_bounded_by_the_input() -> None:
    """20,000 symbols naming one 60,000-byte string (a 2.5 MB file): the names written one per
    symbol would be 1.2 GB (the run peaked at 2.37 GB and wrote a 1.2 GB entry that, over
    MAX_ENTRY_BYTES, was never read back); the entry leaves them out and stays the table's size."""
    (b,) = read_path(str(SMALL))
    table = _shared_suffix_table(20_000, 60_000)
    assert table.ordered_names() is None
    data = pack("ab" * 32, 1, None, (dataclasses.replace(b, symbols=table),))
    assert len(data) < 2 * len(table.strtab) + 20_000 * 32 + (1 << 20)
    entry = unpack(data, "ab" * 32)
    assert entry is not None and entry.binaries is not None
    got = entry.binaries[0].symbols
    assert got._memo.get("ordered") is None  # decoded from the string table, as read
    assert {s.name for s in got.undefined()} == {"x" * 60_000}
    small = _shared_suffix_table(10, 100)
    assert small.ordered_names() == b"\0".join([b"x" * 100] * 10)  # within the limit: written out


def test_an_entry_that_cannot_be_packed_again_is_still_a_hit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A racy entry is re-stamped by packing it again; a failure there (it raised MemoryError: exit 3,
    on every run until ``cache clear``) leaves the entry as it is and the read a hit."""
    store = Cache(str(tmp_path / "c"))
    key = Key("cd" * 32, 2**62, lambda: "same")  # stamped after the entry: racy, compared by content
    store.put(key, tuple(read_path(str(SMALL))))

    def failing(*_a: object, **_k: object) -> bytes:
        raise MemoryError

    monkeypatch.setattr(cache, "pack", failing)
    assert store.get(key) is not None


def test_an_entry_over_the_read_bound_is_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = Cache(str(tmp_path / "c"))
    monkeypatch.setattr(cache, "MAX_ENTRY_BYTES", 100)
    store.put(Key("ef" * 32, 0, lambda: ""), tuple(read_path(str(SMALL))))
    assert list((tmp_path / "c").rglob("*.bin")) == []


@pytest.mark.parametrize(
    "strtab",
    [b"\0" + b"x" * 1000, b"\0" + b"x" * (100 << 10) + b"\0"],
    ids=["no-final-nul", "a-100-KiB-name"],
)
def test_an_entry_whose_names_would_not_end_is_refused(strtab: bytes) -> None:
    """A well-formed entry (CRC right) whose string table has no final NUL, or a name longer than
    the ELF reader keeps: every name would run to the table's end (a forged one took 15-18 s and
    exit 3 when packed again); refused like any foreign entry."""
    (b,) = read_path(str(SMALL))
    table = dataclasses.replace(_shared_suffix_table(50, 10), strtab=strtab)
    data = pack("ab" * 32, 1, None, (dataclasses.replace(b, symbols=table),))
    assert unpack(data, "ab" * 32) is None
