"""The work after the first read (issue 15): counted, never timed.

Each test counts what one change saves — names decoded, sites read, ``RECORD`` lines parsed by
``csv``, ``Symbol`` views built — and fails on the code before it; beside each, the result is
checked equal to the plain computation.
"""

from __future__ import annotations

import csv
import importlib
import posixpath
import shutil
import sys
from pathlib import Path

import pytest

from linkaudit import AuditConfig
from linkaudit.audit import read
from linkaudit.errors import InputError
from linkaudit.formats import copies as _copies
from linkaudit.loader import binding, symbol_lookup
from linkaudit.loader.analysis import analyze
from linkaudit.loader.symbol_lookup import hash_key
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Binary, Format, SymbolTable
from linkaudit.packages import metadata
from linkaudit.rules import dlopen_name, duplicate_export

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
audit_module = importlib.import_module("linkaudit.audit")  # the module, not the function linkaudit re-exports
PYEXT = SAMPLES / "loader/pyext"


def _elf_libraries(folder: Path) -> dict[str, Binary]:
    """Every ELF shared library under ``folder`` (recursively), by path."""
    out: dict[str, Binary] = {}
    for p in sorted(folder.rglob("*.so*")):
        if p.is_file() and not p.is_symlink() and p.read_bytes()[:4] == b"\x7fELF":
            try:
                found = read(str(p))
            except InputError:
                continue  # the corrupt samples
            for b in found:
                if b.format is Format.ELF and b.kind.value == "shared-library":
                    out[str(p)] = b
    return out


class Decoded:
    """Counts the symbol names ``SymbolTable._decode`` is asked for."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.names = 0
        real = SymbolTable._decode

        def counted(table: SymbolTable, offsets: list[int]) -> list[str]:
            self.names += len(offsets)
            return real(table, offsets)

        monkeypatch.setattr(SymbolTable, "_decode", counted)


def _by_names(libraries: dict[str, Binary]) -> dict[tuple[str, ...], set[str]]:
    """``_exporter_sets`` the plain way: every strong export name of every library decoded."""
    fresh = {p: read(p)[0] for p in libraries}
    for b in fresh.values():
        b.symbols._memo["strong_keys"] = None  # as a table without DT_GNU_HASH: names only
    try:
        return duplicate_export._exporter_sets(fresh)
    finally:  # a small file's table is shared by later reads of its content (formats.copies)
        for b in fresh.values():
            b.symbols._memo.pop("strong_keys", None)


def test_strong_export_keys_are_the_names_gnu_hashes() -> None:
    """The keys read from the DT_GNU_HASH chain are ``dl_new_hash`` of the export names, in order."""
    checked = 0
    for b in _elf_libraries(SAMPLES).values():  # every sample library
        keys = b.symbols.strong_export_keys()
        if keys is None:
            continue
        names = b.symbols._decode(
            [o for o, m in zip(b.symbols.name_offsets, b.symbols._strong_export_mask(), strict=True) if m]
        )
        assert list(keys) == [hash_key(n) for n in names], b.path
        checked += 1
    assert checked >= 10


def test_duplicate_export_decodes_only_names_whose_hash_repeats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sample library together: the same exporter sets as by names, far fewer names decoded."""
    libraries = _elf_libraries(SAMPLES / "loader")
    assert all(b.symbols.strong_export_keys() is not None for b in libraries.values())
    expected = _by_names(libraries)
    assert expected, "the samples share some export"
    total = sum(len(b.symbols.strong_export_names()) for b in (read(p)[0] for p in libraries))
    _copies.forget()  # fresh tables: a small file's would be shared with the reads above
    fresh = {p: read(p)[0] for p in libraries}
    decoded = Decoded(monkeypatch)
    assert duplicate_export._exporter_sets(fresh) == expected
    shared = {n for names in expected.values() for n in names}
    assert decoded.names < total, (decoded.names, total)  # the old way decoded every one
    assert decoded.names >= len(shared)


@pytest.mark.realwheel
def test_duplicate_export_on_torch_lib_decodes_a_few_names(torch_lib: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch/lib's twelve libraries: the same sets as by names; under 1% of the ~100,000 exports decoded."""
    libraries = {str(p): b for p in sorted(torch_lib.glob("*.so*")) for b in read(str(p)) if b.format is Format.ELF}
    expected = _by_names(libraries)
    total = sum(len(b.symbols.strong_export_names()) for b in (read(p)[0] for p in libraries))
    fresh = {p: read(p)[0] for p in libraries}
    decoded = Decoded(monkeypatch)
    assert duplicate_export._exporter_sets(fresh) == expected
    assert decoded.names < total / 100, (decoded.names, total)


def _old_record_paths(text: str) -> tuple[str, ...]:
    """``record_paths`` as it was: every line through ``csv``."""
    out = []
    for line in text.splitlines():
        try:
            row = next(csv.reader([line]), [])
        except csv.Error:
            continue
        if not row or not row[0]:
            continue
        path = posixpath.normpath(row[0].replace("\\", "/"))
        if path.startswith(("/", "../")) or path == "..":
            continue
        out.append(path)
    return tuple(out)


def test_record_lines_without_quotes_skip_csv() -> None:
    """Plain lines are split on their first comma; quoted, NUL-bearing and huge ones go through csv: same paths."""
    lines = [
        "torch/lib/libc10.so,sha256=abc,123",
        "torch/__init__.py,,",
        '"odd,name.py",sha256=x,1',
        '"with ""quote"".py",,',
        'a"b.py,,',
        "dir\\win.py,,",
        "../../bin/script,,",
        "/abs/path,,",
        "./x/../y.py,,",
        "",
        ",,",
        "nul\0inside.py,,",
        "x" * (200 << 10) + ",,",
        "x" * (128 << 10) + ",,",
        "only-a-path",
        " spaced .py , ,",
        "tab\tname.py,,",
        "a\x0cb.py,,",
    ]
    text = "\n".join(lines) + "\r\nlast.py,,\r\n"
    before = metadata.CSV_LINES[0]
    # the same paths, but those no file system holds (past PATH_MAX: the two 128 KiB lines)
    assert metadata.record_paths(text) == tuple(p for p in _old_record_paths(text) if len(p) < 4096)
    assert metadata.CSV_LINES[0] - before == 6  # the three with a quote, the NUL, the two longer than 128 KiB


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    (site / "pkg" / "lib").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", site / "pkg")
    shutil.copy(PYEXT / "lib/libhelper.so", site / "pkg" / "lib")
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_28_x86_64\n")
    files = ["pkg/mod.cpython-311-x86_64-linux-gnu.so", "pkg/lib/libhelper.so", f"{info.name}/RECORD"]
    (info / "RECORD").write_text("".join(f"{f},,\n" for f in files))
    return site


@pytest.mark.parametrize("command", [["tree"], ["tree", "--bind"], ["tree", "--format", "json"], ["why", "libc.so.6"]])
def test_a_site_is_read_once_per_command(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli,  # type: ignore[no-untyped-def]
    command: list[str],
) -> None:
    """``tree`` and ``why`` need the site for the target's tag and for the owners: one read."""
    site = _site(tmp_path)
    calls: list[str] = []
    real = audit_module.find_site

    def counted(path: str):  # type: ignore[no-untyped-def]
        calls.append(path)
        return real(path)

    monkeypatch.setattr(audit_module, "find_site", counted)
    module = str(site / "pkg" / "mod.cpython-311-x86_64-linux-gnu.so")
    args = ["--no-cache", *command, module] if command[0] == "tree" else ["--no-cache", "why", module, *command[1:]]
    result = run_cli(*args)
    assert result.exit_code in (0, 1), result.stderr
    assert "installed by pkg" in result.stdout or command[0] == "why" or "json" in command
    assert len(calls) == 1, calls


def test_version_checks_build_no_symbol_views_without_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    """``tree`` checks every loaded object's version needs; without a failure no undefined ``Symbol``
    view is made for an object that is not an input (they named the failure's symbols only)."""
    folder = SAMPLES / "loader" / "versions"
    inputs = [b for p in sorted(folder.rglob("*")) if p.is_file() for b in read(str(p)) if b.format is Format.ELF]
    assert inputs
    viewed: list[int] = []
    real = SymbolTable.undefined

    def counted(table: SymbolTable):  # type: ignore[no-untyped-def]
        if "undefined" not in table._memo:
            viewed.append(id(table))
        return real(table)

    monkeypatch.setattr(SymbolTable, "undefined", counted)
    env = TargetEnvironment()
    analysis = analyze(inputs, env, verify_all=True)
    tables = {o.path: id(o.binary.symbols) for ld in analysis.loads for o in ld.iter_objects()}
    # an input as loaded (read again at its load path) is bound, hence viewed: it counts as an input
    input_tables = {id(b.symbols) for b in inputs} | {tables[p] for p in analysis.audited if p in tables}
    assert set(tables.values()) - input_tables, "the loads reach objects beyond the inputs (libc at least)"
    failing = {tables[f.object] for _r, f in analysis.version_failures if f.object in tables}
    assert set(viewed) - input_tables <= failing, "views built for objects that are not inputs"


def _probe_bound(objects: dict[str, Binary]) -> tuple[int, int, int]:
    """Bind every object with all in scope: (probes made, (reference, defining object) pairs,
    references times scope objects — what asking every object about every reference costs)."""
    scope = sorted(objects)
    before = binding.WORK["probes"]
    for p, b in objects.items():
        binding.bind_object(b, scope, objects, None, path=p)
    probes = binding.WORK["probes"] - before
    defined = {p: b.symbols.definitions() for p, b in objects.items()}
    refs = [ref.name for b in objects.values() for ref in b.symbols.undefined() if ref.name]
    pairs = sum(1 for name in refs for p in scope if name in defined[p])
    return probes, pairs, len(refs) * len(scope)


def test_a_reference_asks_only_the_objects_defining_its_name() -> None:
    """Every ELF sample library in one scope: ``check_match`` runs only where the name is defined."""
    objects = {p: b for p, b in _elf_libraries(SAMPLES / "loader").items() if b.symbols.hash_table is not None}
    probes, pairs, naive = _probe_bound(objects)
    assert 0 < probes <= pairs < naive


@pytest.mark.realwheel
def test_torch_lib_references_ask_only_the_objects_defining_them(torch_lib: Path) -> None:
    """torch/lib's twelve libraries bound against each other: probes at most the defining pairs."""
    objects = {str(p): b for p in sorted(torch_lib.glob("*.so*")) for b in read(str(p)) if b.format is Format.ELF}
    probes, pairs, naive = _probe_bound(objects)
    assert 0 < probes <= pairs and probes * 4 < naive


def test_dlopen_siblings_list_each_directory_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Several unresolved dlopen names searching the same directories: each directory listed once per
    check (it was listed once per name), the hash-renamed sibling still found."""
    folder = tmp_path / "dlopen"
    shutil.copytree(SAMPLES / "dlopen", folder)
    for k in range(3):  # more libraries naming the same unresolved libraries
        shutil.copy(folder / "libdlopens.so", folder / f"libdlopens{k}.so")
    listed: list[str] = []
    real = dlopen_name.os.listdir

    def counted(path: str):  # type: ignore[no-untyped-def]
        if sys._getframe(1).f_code.co_name == "_hash_renamed_sibling":  # os.listdir is everyone's
            listed.append(path)
        return real(path)

    monkeypatch.setattr(dlopen_name.os, "listdir", counted)
    report = audit_module.audit([str(folder)], AuditConfig())
    found = [f for f in report.findings if f.rule == "dlopen-name" and f.evidence["problem"] == "hash-renamed-sibling"]
    assert len(found) == 4 and all(f.evidence["sibling"].endswith("libnvrtc-1a2b3c4d.so.12") for f in found)
    assert listed and len(listed) == len(set(listed)), listed


def test_bulk_masks_match_the_per_entry_ones() -> None:
    """The byte-lane masks (``model._nonzero``, the unversioned test) equal the per-entry Python ones."""
    import array
    import random

    from linkaudit.model import Binding, SymbolType, Visibility, _nonzero

    rng = random.Random(15)
    for code, top in (("B", 0xFF), ("H", 0xFFFF), ("I", 0xFFFFFFFF), ("Q", (1 << 64) - 1)):
        values = [rng.choice((0, 1, (1 << 8) & top, top, rng.randrange(top + 1))) for _ in range(500)]
        column = array.array(code, values)
        assert _nonzero(column) == bytes(map(bool, values))
        assert _nonzero(array.array(code)) == b""
    for b in _elf_libraries(SAMPLES).values():
        t = b.symbols
        plain = {
            s.name
            for s in t
            if s.defined
            and s.binding is Binding.GLOBAL
            and s.type in (SymbolType.FUNC, SymbolType.OBJECT)
            and s.visibility is Visibility.DEFAULT
            and s.version is None
        }
        assert t.strong_export_names() == frozenset(plain), b.path
        assert [s.name for s in t.undefined()] == [s.name for s in t if not s.defined]


def test_batched_gnu_hashes_equal_the_one_by_one_ones() -> None:
    """``gnu_hashes`` (Horner's rule on all names at once) gives ``dl_new_hash`` of each name, in order."""
    import random

    rng = random.Random(15)
    names = ["", "a", "printf", "exit", "é", "\udcff\udc80", "x" * 700, *(f"_ZN3foo{k}barEv" for k in range(40))]
    names += ["".join(rng.choice("abcXYZ_09$.@") for _ in range(rng.randrange(1, 200))) for _ in range(300)]
    symbol_lookup.forget_hashes()
    batched = symbol_lookup.gnu_hashes([*names, *names[:5]])
    symbol_lookup.forget_hashes()
    one_by_one = [symbol_lookup.gnu_hash(n) for n in [*names, *names[:5]]]
    assert batched == one_by_one
    assert symbol_lookup.gnu_hash("printf") == 0x156B2BB8 and symbol_lookup.gnu_hash("") == 0x1505


def test_names_are_hashed_in_batches() -> None:
    """``hash_keys`` of 100 new names: one batch, no name hashed one by one; known names not again."""
    symbol_lookup.forget_hashes()
    names = [f"name_{k}" for k in range(100)]
    before = dict(symbol_lookup.WORK)
    keys = symbol_lookup.hash_keys(names)
    assert symbol_lookup.WORK["single"] == before["single"]
    assert symbol_lookup.WORK["batched"] - before["batched"] == 100
    assert symbol_lookup.hash_keys(names) == keys
    assert symbol_lookup.WORK["batched"] - before["batched"] == 100


@pytest.mark.realwheel
def test_torch_lib_names_are_hashed_in_batches(torch_lib: Path) -> None:
    """Binding torch/lib: the ~9,600 distinct undefined names hashed in batches, each once; one by
    one only a table's handful of new names (fewer than ``_MIN_BATCH``)."""
    objects = {str(p): b for p in sorted(torch_lib.glob("*.so*")) for b in read(str(p)) if b.format is Format.ELF}
    symbol_lookup.forget_hashes()
    before = dict(symbol_lookup.WORK)
    scope = sorted(objects)
    for p, b in objects.items():
        binding.bind_object(b, scope, objects, None, path=p)
    distinct = {ref.name for b in objects.values() for ref in b.symbols.undefined() if ref.name}
    single = symbol_lookup.WORK["single"] - before["single"]
    batched = symbol_lookup.WORK["batched"] - before["batched"]
    assert single + batched == len(distinct)
    assert single < len(objects) * symbol_lookup._MIN_BATCH


def _email_metadata(text: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """``read_metadata`` as it was: every text through ``email``'s header parser."""
    from email.parser import HeaderParser

    from packaging.utils import canonicalize_name

    headers = HeaderParser().parsestr(text, headersonly=True)
    name = str(canonicalize_name(headers.get("Name", "") or ""))
    extras = tuple(str(canonicalize_name(e)) for e in headers.get_all("Provides-Extra") or ())
    return name, headers.get("Version", "") or "", tuple(headers.get_all("Requires-Dist") or ()), extras


_PLAIN_METADATA = [
    "",
    "\n",
    "Name: a\n",
    "Name:a\nVersion:  1.0 \n",
    "Name: a\n  cont\nVersion: 1\n\nbody\nName: b\n",
    "Name: a\n\tb\n c\n\nName: z",
    "Requires-Dist: a\nrequires-dist: b; extra == 'x'\nProvides-Extra: Foo_Bar\n",
    "Name: a\u2028b\nVersion: 1\x0b2\n",
    "Version: \n x\n",
]
_ODD_METADATA = ["Name: a\r\nVersion: 1\r\n", "From x\nName: a", "Name: a\nbad line\nVersion: 1", " lead\nName: a"]


def test_metadata_headers_skip_email_unless_odd() -> None:
    before = metadata.EMAIL_PARSES[0]
    for text in _PLAIN_METADATA:
        assert metadata.read_metadata(text) == _email_metadata(text)
    assert metadata.EMAIL_PARSES[0] == before
    for text in _ODD_METADATA:
        assert metadata.read_metadata(text) == _email_metadata(text)
    assert metadata.EMAIL_PARSES[0] - before == len(_ODD_METADATA)


def test_torch_site_metadata_skips_email(torch_site: Path) -> None:
    before = metadata.EMAIL_PARSES[0]
    texts = [p.read_text(errors="replace") for p in sorted(torch_site.glob("*.dist-info/METADATA"))]
    assert len(texts) > 10
    assert [metadata.read_metadata(t) for t in texts] == [_email_metadata(t) for t in texts]
    assert metadata.EMAIL_PARSES[0] == before


def test_record_paths_normalise_only_paths_normpath_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "".join(f"pkg/mod{i}.py,sha256=x,1\n" for i in range(100))
    odd = "a//b,\n./a,\na/./b,\na/../b,\n../x,\na/,\n.,\n..,\n/abs,\n//abs,\na/.hidden,\na/b.,\n.a,\na/.,\na/..,\n"
    expected = _old_record_paths(text + odd)
    calls = [0]
    real = posixpath.normpath

    def counting(path: str) -> str:
        calls[0] += 1
        return real(path)

    monkeypatch.setattr(posixpath, "normpath", counting)
    assert metadata.record_paths(text + odd) == expected
    assert calls[0] == 13  # the odd lines but "a/b." and "/abs": never the 100 plain ones


def test_defined_names_are_iter_defineds() -> None:
    tables = [b.symbols for p in sorted((SAMPLES / "macho").rglob("*")) if p.is_file() for b in _read_any(p)]
    tables += [b.symbols for b in _elf_libraries(SAMPLES / "loader").values()]
    assert len(tables) > 10
    for table in tables:
        assert table.defined_names() == [s.name for s in table.iter_defined()]


def _read_any(path: Path) -> list[Binary]:
    try:
        return list(read(str(path)))
    except InputError:
        return []


def test_export_tables_build_no_symbol_views(monkeypatch: pytest.MonkeyPatch) -> None:
    """``unresolved-symbol``'s export lookups (Mach-O, PE) take each library's defined names without
    a ``Symbol`` view per definition (the 9 torch 2.9.1 macOS files: 38,928 views before)."""
    from linkaudit.loader.image_binding import _Exports, _Libraries

    libs = [b for p in sorted((SAMPLES / "macho").rglob("*.dylib")) for b in _read_any(p)]
    assert libs
    views = [0]
    real = SymbolTable._views

    def counted(table: SymbolTable, indices):  # type: ignore[no-untyped-def]
        for view in real(table, indices):
            views[0] += 1
            yield view

    monkeypatch.setattr(SymbolTable, "_views", counted)
    exports = _Exports(_Libraries(libs, (), Format.MACHO))
    for lib in libs:
        assert exports._table(lib)[0] == frozenset(lib.symbols.defined_names())
    assert views[0] == 0


def test_export_trie_flags_are_read_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trie's one-byte flags are read in place, not by ``_uleb`` (the 9 torch 2.9.1 macOS files:
    138,791 calls for 38,949 exports before, 3.56 an export; now the address and the child offsets)."""
    from linkaudit.formats import macho, macho_linkedit

    from .realsite import cache_root

    files = sorted(p for p in (cache_root() / "torch-mac-2.9.1").rglob("*") if p.suffix in (".dylib", ".so"))
    if not files:
        pytest.skip("the torch 2.9.1 macOS files are not in the tests' cache (benchmarks/bench_ratios.py)")
    calls, exports = [0], [0]
    real_uleb, real_trie = macho_linkedit._uleb, macho_linkedit.read_export_trie

    def uleb(data: bytes, pos: int) -> tuple[int, int]:
        calls[0] += 1
        return real_uleb(data, pos)

    def trie(*args):  # type: ignore[no-untyped-def]
        out = real_trie(*args)
        exports[0] += len(out)
        return out

    monkeypatch.setattr(macho_linkedit, "_uleb", uleb)
    monkeypatch.setattr(macho_linkedit, "read_export_trie", trie)
    for path in files:
        macho.read_macho(str(path), path.read_bytes())
    assert exports[0] > 30_000
    assert calls[0] < 3 * exports[0]
