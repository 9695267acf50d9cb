"""Binding through the providers' own ELF hash tables (``loader.symbol_lookup``).

The hash-table path must bind every reference exactly as the bulk name map does
(``SymbolTable.definitions``), while looking up only undefined names, only in providers that
store their hash, and never building a provider's map of every export.  Counted, not timed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from linkaudit.audit import read
from linkaudit.formats import copies
from linkaudit.loader import binding, symbol_lookup
from linkaudit.model import Binary, Format, SymbolTable

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bins"


def _elf_dirs() -> list[Path]:
    """Every sample directory holding ELF shared objects or executables (loader scenarios and misc)."""
    return sorted({p.parent for p in (SAMPLES / "loader").rglob("*") if p.is_file()} | {SAMPLES / "misc"})


def _binaries(folder: Path) -> dict[str, Binary]:
    out: dict[str, Binary] = {}
    for p in sorted(folder.iterdir()):
        if p.is_file() and p.read_bytes()[:4] == b"\x7fELF":
            for b in read(str(p)):
                if b.format is Format.ELF and b.kind.value != "object":
                    out[str(p)] = b
    return out


def _bind_all(objects: dict[str, Binary], *, by_map: bool) -> dict[str, list[binding.Bound]]:
    """Bind every object of ``objects`` with all of them in scope (sorted order)."""
    scope = sorted(objects)
    get = (lambda b: b.symbols.definitions()) if by_map else None
    return {p: binding.bind_object(b, scope, objects, None, definitions_of=get, path=p) for p, b in objects.items()}


class Lookups:
    """Records every (table, name) the hash path walks a chain for (memo misses), and what it found."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[SymbolTable, str, bool]] = []
        #: the calls made without a set of the table's stored hashes (few names wanted: walked)
        self.unfiltered: list[tuple[SymbolTable, str]] = []
        real = symbol_lookup.definitions_of_name

        def counted(table: SymbolTable, name: str):  # type: ignore[no-untyped-def]
            walked = name not in table.memo("lookups")
            found = real(table, name)
            if walked:
                self.calls.append((table, name, bool(found)))
                if 0 not in table.memo("gnu_hashes"):
                    self.unfiltered.append((table, name))
            return found

        monkeypatch.setattr(binding, "definitions_of_name", counted)


def _fresh(objects: dict[str, Binary]) -> Iterator[tuple[str, Binary]]:
    """Each object parsed again: new symbol tables, with nothing memoised on them (small files
    are otherwise handed the records of their first read: ``formats.copies``)."""
    copies.forget()
    for p in objects:
        yield p, read(p)[0]


@pytest.mark.parametrize("folder", _elf_dirs(), ids=lambda p: str(p.relative_to(SAMPLES)))
def test_hash_tables_bind_as_the_name_map_does(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    objects = _binaries(folder)
    if not objects:
        pytest.skip("no ELF objects here")
    by_map = _bind_all(objects, by_map=True)
    fresh = dict(_fresh(objects))
    lookups = Lookups(monkeypatch)
    by_hash = _bind_all(fresh, by_map=False)
    assert by_hash == by_map
    _assert_only_wanted_names(fresh, lookups)


def _assert_only_wanted_names(objects: dict[str, Binary], lookups: Lookups, collisions: float = 0.0) -> None:
    """Only undefined names looked up; each (provider, name) once; (nearly) every lookup a real definition."""
    undefined = {ref.name for b in objects.values() for ref in b.symbols.undefined()}
    assert {name for _t, name, _f in lookups.calls} <= undefined
    pairs = [(id(t), name) for t, name, _f in lookups.calls]
    assert len(pairs) == len(set(pairs)), "a (provider, name) looked up twice"
    # A GNU-hash lookup that finds nothing: the name is in the table but not bindable there, or a
    # 32-bit hash collision (DT_HASH stores no hashes: there every wanted name is walked).
    # A name walked without the set (few wanted against a long chain) may simply be absent.
    unfiltered = {(id(t), name) for t, name in lookups.unfiltered}
    collided = [
        name for t, name, found in lookups.calls
        if not found and t.hash_table is not None and t.hash_table.gnu and (id(t), name) not in unfiltered
        and name not in _any_symbol(t)
    ]  # fmt: skip
    assert len(collided) <= collisions * len(lookups.calls)
    for b in objects.values():
        if b.symbols.hash_table is not None:
            assert "definitions" not in b.symbols._memo, f"{b.path}: a map of every export was built"


def _any_symbol(table: SymbolTable) -> set[str]:
    """Every name of ``table`` (a PIE's hash table also holds its undefined weak symbols)."""
    return {s.name for s in table}


def test_hash_tables_are_read(samples: Path) -> None:
    """DT_GNU_HASH from a plain library; DT_HASH from one linked --hash-style=sysv without section headers."""
    (gnu,) = read(str(samples / "misc" / "libnoshdr.so"))
    (sysv,) = read(str(samples / "misc" / "libsysvhash.so"))
    assert gnu.symbols.hash_table is not None and gnu.symbols.hash_table.gnu
    assert sysv.symbols.hash_table is not None and not sysv.symbols.hash_table.gnu
    for b in (gnu, sysv):
        for name, defs in b.symbols.definitions().items():
            assert symbol_lookup.definitions_of_name(b.symbols, name) == defs
        assert symbol_lookup.definitions_of_name(b.symbols, "no_such_symbol_anywhere") == ()


def test_gnu_and_sysv_hashes() -> None:
    """The values binutils' ``readelf --gnu-hash`` / glibc's dl-hash.h give for well-known names."""
    assert symbol_lookup.gnu_hash("") == 0x1505
    assert symbol_lookup.gnu_hash("printf") == 0x156B2BB8
    assert symbol_lookup.gnu_hash("exit") == 0x7C967E3F
    assert symbol_lookup.sysv_hash("printf") == 0x077905A6
    assert symbol_lookup.sysv_hash("exit") == 0x0006CF04


@pytest.mark.realwheel
def test_torch_lib_binds_through_hash_tables(torch_lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The twelve torch libraries bound against each other: same bindings; lookups only for undefined names."""
    objects = {str(p): b for p in sorted(torch_lib.glob("*.so*")) for b in read(str(p)) if b.format is Format.ELF}
    by_map = _bind_all(objects, by_map=True)
    fresh = dict(_fresh(objects))
    lookups = Lookups(monkeypatch)
    by_hash = _bind_all(fresh, by_map=False)
    assert by_hash == by_map
    _assert_only_wanted_names(fresh, lookups, collisions=0.001)
    exports = sum(len(b.symbols) - b.symbols.undefined_count for b in fresh.values())
    assert len(lookups.calls) < exports / 4  # far fewer names looked up than the providers define


@pytest.mark.parametrize("ratio", [0, 10**9], ids=["always-walked", "always-filtered"])
def test_walked_and_filtered_lookups_bind_alike(ratio: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sample directory binds as the name map does whether each wanted name walks its bucket
    (``SET_RATIO`` 0) or is first filtered through a set of the chain's hashes (huge ratio)."""
    monkeypatch.setattr(symbol_lookup, "SET_RATIO", ratio)
    before = symbol_lookup.WORK["walked"]
    sets = 0
    for folder in _elf_dirs():
        objects = _binaries(folder)
        expected = _bind_all(objects, by_map=True)
        fresh = dict(_fresh(objects))
        assert _bind_all(fresh, by_map=False) == expected, folder
        sets += sum(1 for b in fresh.values() if 0 in b.symbols.memo("gnu_hashes"))
    walked = symbol_lookup.WORK["walked"] - before
    assert (walked > 0 and sets == 0) if ratio == 0 else (walked == 0 and sets > 0)


@pytest.mark.realwheel
def test_few_wanted_names_build_no_set_of_a_long_chain(torch_site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch's ``_C`` (a handful of undefined names) bound in the scope of torch/lib: each name walks
    its bucket in libtorch_cpu (74,567 chain entries), which gets no set of its hashes; the
    bindings equal those made through the set."""
    module = next((torch_site / "torch").glob("_C.cpython-*.so"))
    libs = {str(p): b for p in sorted((torch_site / "torch" / "lib").glob("*.so*")) for b in read(str(p))}
    objects = {str(module): read(str(module))[0], **libs}
    scope = [str(module), *libs]

    def bind() -> list[binding.Bound]:
        return binding.bind_object(objects[str(module)], scope, objects, None, path=str(module))

    before = symbol_lookup.WORK["walked"]
    walked_bindings = bind()
    cpu = objects[str(torch_site / "torch" / "lib" / "libtorch_cpu.so")].symbols
    assert 0 not in cpu.memo("gnu_hashes")
    wanted = objects[str(module)].symbols.undefined_count
    assert 0 < symbol_lookup.WORK["walked"] - before <= wanted * len(libs)
    monkeypatch.setattr(symbol_lookup, "SET_RATIO", 10**9)
    objects = {str(module): read(str(module))[0], **dict(_fresh(libs))}
    assert bind() == walked_bindings
    assert 0 in objects[str(torch_site / "torch" / "lib" / "libtorch_cpu.so")].symbols.memo("gnu_hashes")


def test_a_hash_table_that_does_not_fit_is_left_out(samples: Path, tmp_path: Path) -> None:
    """A bucket outside ``.dynsym`` (a damaged or hostile table): no table kept, binding by the name map, same result."""
    folder = samples / "loader" / "ancestor_runpath"
    lib = folder / "lib" / "libleaf.so"
    (good,) = read(str(lib))
    ht = good.symbols.hash_table
    assert ht is not None and ht.gnu
    data = bytearray(lib.read_bytes())
    at = data.find(ht.buckets.tobytes() + ht.chain.tobytes())
    assert at > 0 and data.find(ht.buckets.tobytes() + ht.chain.tobytes(), at + 1) < 0
    data[at : at + 4] = (0xFFFFFF00).to_bytes(4, "little")
    bad_path = tmp_path / "libleaf.so"
    bad_path.write_bytes(bytes(data))
    (bad,) = read(str(bad_path))
    assert bad.symbols.hash_table is None
    assert bad.symbols.definitions() == good.symbols.definitions()
    objects = {str(bad_path): bad, **_binaries(folder / "mid")}
    assert _bind_all(objects, by_map=False) == _bind_all(dict(_fresh(objects)), by_map=True)
