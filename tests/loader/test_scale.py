"""Issue 14, "Linear by construction": memoised and shared work equals the per-root computation,
and the counts that matter stay linear.

The equivalence tests write random DAGs of tiny real ELF libraries (diamonds, shared SONAMEs,
mixed DT_RPATH / DT_RUNPATH, DF_1_NODEFLIB, LD_PRELOAD with an executable root, Python
extension roots sharing one process, LD_LIBRARY_PATH, driver names) and run the emulation and
the whole audit twice: as shipped, and with the unshared reference in place of the memoised
search (``reference_search``) and of the indexed duplicate-export (the pairwise loop it replaced).

The counting tests assert work, never time: path searches per distinct (name, search list),
driver-pattern decisions per distinct name, duplicate-export pairs per collision.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.inputs import collect
from linkaudit.loader import analysis as analysis_module
from linkaudit.loader import closure
from linkaudit.loader.analysis import LinkageAnalysis, analyze
from linkaudit.loader.closure import Load, RootKind
from linkaudit.loader.fs import FileSystemView
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Binary
from linkaudit.rules import duplicate_export
from linkaudit.rules.data import DriverIndex, driver_libraries
from tests.loader.dagbuild import Lib, chain_libs, write
from tests.loader.reference_search import reference_search

PYEXT = ".cpython-311-x86_64-linux-gnu.so"


def reference_pairs(
    libraries: dict[str, Binary], groups: duplicate_export.Groups
) -> dict[tuple[str, str], tuple[set[str], set[str]]]:
    """duplicate-export's pairwise loop before the index: every pair of every group intersected."""
    pairs: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for root, held in groups(set(libraries)):
        distinct = [libraries[path] for path in sorted(held)]
        for i, first_lib in enumerate(distinct):
            for second_lib in distinct[i + 1 :]:
                shared = {
                    n
                    for n in first_lib.symbols.strong_export_names() & second_lib.symbols.strong_export_names()
                    if not duplicate_export._runtime(n)
                }
                if not shared:
                    continue
                first, second = sorted((first_lib.path, second_lib.path))
                symbols, roots = pairs.setdefault((first, second), (set(), set()))
                symbols |= shared
                if root is not None:
                    roots.add(root)
    return pairs


def reference_sets(
    libraries: dict[str, Binary], groups: duplicate_export.Groups
) -> dict[tuple[str, ...], tuple[set[str], set[str]]]:
    """``reference_pairs`` grouped as duplicate-export reports them: per name, the libraries of
    its pairs and their roots; names with the same libraries one entry."""
    per_name: dict[str, tuple[set[str], set[str]]] = {}
    for (first, second), (symbols, roots) in reference_pairs(libraries, groups).items():
        for name in symbols:
            libs, where = per_name.setdefault(name, (set(), set()))
            libs |= {first, second}
            where |= roots
    out: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}
    for name, (libs, where) in per_name.items():
        symbols, roots = out.setdefault(tuple(sorted(libs)), (set(), set()))
        symbols.add(name)
        roots |= where
    return out


def reference_load_groups(linkage: LinkageAnalysis) -> tuple[dict[str, Binary], duplicate_export.Groups]:
    """duplicate-export's groups before the index: every object of every load filtered."""
    from linkaudit.loader.ldso import Source

    libraries: dict[str, Binary] = {}
    held: list[tuple[str | None, set[str]]] = []
    for load in linkage.loads:
        libs = [
            o.binary
            for o in load.objects
            if o.binary.kind in duplicate_export._KINDS
            and o.source not in (Source.CACHE, Source.SYSTEM)
            and o.path.rsplit("/", 1)[0] not in linkage.system_dirs
        ]
        for lib in libs:
            libraries.setdefault(lib.path, lib)
        held.append((load.root, {lib.path for lib in libs}))
    return libraries, lambda paths: [(root, group & paths) for root, group in held]


def unshared_alone_load(target: str, binary: Binary, ctx: Any, read: Any, _loads: dict[str, Load]) -> Load:
    """``closure.alone_load`` without sharing: every root loaded from scratch."""
    return closure.load_root(target, binary, RootKind.DLOPEN, ctx, read)


def unshared(patch: pytest.MonkeyPatch) -> None:
    """Put the unshared reference in place of every memo and every shared load."""
    patch.setattr(closure, "search", reference_search)
    patch.setattr(analysis_module, "alone_load", unshared_alone_load)


def random_dag(base: Path, seed: int) -> TargetEnvironment:
    """Write one random DAG under ``base``; returns the target environment to load it with."""
    rng = random.Random(seed)
    dirs = ["a", "b", "sys"]
    pool = [f"f{k}" for k in range(10)]
    libs: list[Lib] = []
    names: list[str] = []  # names a later library may need
    for i in range(rng.randint(5, 13)):
        directory = rng.choice(dirs)
        soname = f"lib{rng.randrange(i + 1)}.so" if rng.random() < 0.25 else f"lib{i}.so"  # shared SONAMEs
        file = soname if rng.random() < 0.85 else f"libfile{i}.so"
        # diamonds (several paths to one name), and single needs (their loads are shared)
        needed = rng.sample(names, min(len(names), rng.choice([0, 1, 1, 2, 3])))
        if rng.random() < 0.1:
            needed.append(rng.choice(["libmissing.so.1", "libcuda.so.1", "./lib0.so"]))
        entries = rng.sample(["$ORIGIN", "$ORIGIN/../a", "$ORIGIN/../b", str(base / "nowhere"), str(base / "b")], 2)
        which = rng.choice(["none", "rpath", "runpath", "rpath"])
        libs.append(
            Lib(
                f"{directory}/{file}",
                soname=soname,
                needed=tuple(needed),
                rpath=tuple(entries) if which == "rpath" else (),
                runpath=tuple(entries) if which == "runpath" else (),
                nodeflib=rng.random() < 0.2,
                exports=(*rng.sample(pool, rng.randint(0, 3)), f"own{i}"),
                imports=tuple(rng.sample(pool, rng.randint(0, 3))),
            )
        )
        names.append(soname if rng.random() < 0.8 else file)
    alone = seed % 2 == 1  # odd seeds: only libraries, each dlopened alone (loads shared)
    for k in range(0 if alone else rng.randint(0, 3)):  # Python extension roots: one process, reuse by SONAME
        needed = tuple(rng.sample(names, min(len(names), 2)))
        libs.append(Lib(f"a/mod{k}{PYEXT}", needed=needed, rpath=("$ORIGIN",) if k % 2 else (), imports=("f1",)))
    preload: tuple[str, ...] = ()
    if not alone and rng.random() < 0.5:  # an executable root, with LD_PRELOAD
        libs.append(Lib("a/prog", needed=tuple(rng.sample(names, 2)), rpath=("$ORIGIN/../b",), executable=True))
        preload = (str(base / libs[0].file),)
    write(str(base), libs)
    (base / "b").mkdir(exist_ok=True)
    return TargetEnvironment(
        system_dirs=(str(base / "sys"),),
        use_cache=False,
        ld_library_path=(str(base / "b"),) if rng.random() < 0.3 else (),
        ld_preload=preload,
        driverless=rng.random() < 0.7,
    )


def _binaries(base: Path) -> list[Binary]:
    from linkaudit import read

    return [b for f in collect([str(base)]).files for b in read(f)]


def _dump(analysis: LinkageAnalysis) -> list[Any]:
    """Everything the rules read from an analysis, as plain comparable values."""
    loads = [
        (
            load.root,
            load.kind,
            [(o.path, o.binary.path, o.parent, o.source, o.depth) for o in load.objects],
            load.global_scope,
            load.local_scope,
            load.resolutions,
            load.errors,
        )
        for load in analysis.loads
    ]
    return [loads, analysis.roots, analysis.audited, analysis.bindings, analysis.version_failures]


def _analyze(base: Path, env: TargetEnvironment) -> LinkageAnalysis:
    """``analyze`` as ``audit.analyze_inputs`` calls it (the view seeded with the records read)."""
    drivers = driver_libraries()
    binaries = _binaries(base)
    fs = FileSystemView()
    for binary in binaries:
        fs.remember(binary)
    return analyze(binaries, env, fs=fs, is_driver=lambda n: any(d.matches(n) for d in drivers))


@pytest.mark.parametrize("seed", range(40))
def test_memoised_loads_equal_unshared(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    env = random_dag(tmp_path, seed)
    shared = _analyze(tmp_path, env)
    with monkeypatch.context() as patch:
        unshared(patch)
        alone = _analyze(tmp_path, env)
    assert _dump(shared) == _dump(alone)
    assert shared.loads  # the DAG was loaded at all


@pytest.mark.parametrize("seed", range(0, 40, 3))
def test_memoised_audit_equals_unshared(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    env = random_dag(tmp_path, seed)
    shared = audit([str(tmp_path)], AuditConfig(target=env))
    with monkeypatch.context() as patch:
        unshared(patch)
        patch.setattr(duplicate_export, "duplicate_sets", reference_sets)
        patch.setattr(duplicate_export, "_load_groups", reference_load_groups)
        alone = audit([str(tmp_path)], AuditConfig(target=env))
    assert shared.findings == alone.findings
    assert (shared.files, shared.roots) == (alone.files, alone.roots)


def test_random_dags_cover_the_cases(tmp_path: Path) -> None:
    """The generator makes what the equivalence tests claim to cover (else they prove little)."""
    seen: set[str] = set()
    for seed in range(40):
        base = tmp_path / str(seed)
        env = random_dag(base, seed)
        analysis = _analyze(base, env)
        sources = {r.source for load in analysis.loads for r in load.resolutions.values()}
        seen |= {s.value for s in sources if s is not None}
        seen |= {"not-found" for load in analysis.loads for r in load.resolutions.values() if r.path is None}
        seen |= {"nodeflib" for b in _binaries(base) if b.flags_1 & 0x800}
        seen |= {"preload" for _ in env.ld_preload}
        seen |= {k.kind.value for k in analysis.roots}
        seen |= {"shared-part" for load in analysis.loads if load.below is not None}
        sonames = [b.soname for b in _binaries(base) if b.soname]
        seen |= {"shared-soname" for _ in range(len(sonames) - len(set(sonames)))}
    assert seen >= {
        "DT_RPATH",
        "DT_RUNPATH",
        "LD_LIBRARY_PATH",
        "already-loaded",
        "system-directory",
        "not-found",
        "nodeflib",
        "preload",
        "python-import",
        "executable",
        "dlopen",
        "shared-soname",
        "shared-part",
    }, seen


def test_search_runs_once_per_distinct_name_and_search_list(tmp_path: Path) -> None:
    """Issue 14's chain: n dlopen roots, n(n-1)/2 DT_NEEDED lookups, n-1 path searches."""
    n = 40
    write(str(tmp_path), chain_libs(n, exports=3))
    analysis = _analyze(tmp_path, TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False))
    assert len(analysis.loads) == n
    resolutions = sum(len(load.resolutions) for load in analysis.loads)
    assert resolutions == n * (n - 1) // 2
    assert analysis.search_context is not None
    assert analysis.search_context.memo.searches == n - 1


def test_rpath_chain_searches_once_per_distinct_search_list(tmp_path: Path) -> None:
    """With DT_RPATH the loader chain's RPATHs are part of the search list: one search per distinct list."""
    n = 20
    libs = [
        Lib(f"libr{i}.so", soname=f"libr{i}.so", needed=(f"libr{i - 1}.so",) if i else (), rpath=("$ORIGIN",))
        for i in range(n)
    ]
    write(str(tmp_path), libs)
    analysis = _analyze(tmp_path, TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False))
    assert analysis.search_context is not None
    # libr{k} needed by libr{k+1} loaded from root libr{r}: the list holds r-k RPATH entries, so
    # one distinct search per (k, depth): n(n-1)/2, not one per root and per need (n^3/6).
    distinct = {
        (name, tuple(load.chain(requester)))
        for load in analysis.loads
        for (requester, name), res in load.resolutions.items()
    }
    assert analysis.search_context.memo.searches == len({(name, len(chain)) for name, chain in distinct})


def test_driver_patterns_decided_once_per_distinct_name(tmp_path: Path) -> None:
    n = 30
    libs = chain_libs(n, exports=2)
    libs = [Lib(lib.file, lib.soname, (*lib.needed, "libcuda.so.1"), runpath=lib.runpath) for lib in libs]
    write(str(tmp_path), libs)
    index = DriverIndex(driver_libraries())
    env = TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False, driverless=True)
    binaries = _binaries(tmp_path)
    fs = FileSystemView()
    for binary in binaries:
        fs.remember(binary)
    analysis = analyze(binaries, env, fs=fs, is_driver=index.is_driver)
    distinct = {name for load in analysis.loads for (_req, name) in load.resolutions}
    assert index.decided == len(distinct) == n  # libc0.so ... libc{n-2}.so and libcuda.so.1
    assert index.is_driver("libcuda.so.1") and not index.is_driver("libc0.so")
    assert index.decided == n


def test_driver_index_answers_as_the_patterns() -> None:
    index = DriverIndex(driver_libraries())
    names = ["libcuda.so.1", "libcuda.so", "libnvidia-ml.so.1", "NVCUDA.DLL", "nvml.dll", "libcudart.so.12"]
    names += ["libnvrtc.so.13", "libc.so.6", "x/libcuda.so.1", "C:\\drv\\nvcuda.dll", "libcuda.so.1.dll"]
    for name in names:
        expected = next((d for d in driver_libraries() if d.matches(name)), None)
        assert index.library_for(name) is expected, name
    assert index.library_for("libcuda.so.1") is not None


def test_duplicate_export_work_bounded_by_collisions(tmp_path: Path) -> None:
    """A chain with unique exports examines no set; k libraries sharing one name are one set of k
    (one finding, never k(k-1)/2), tested against the groups of its k libraries only."""
    n, k = 60, 4
    libs = chain_libs(n, exports=20)
    libs = [
        Lib(
            lib.file,
            lib.soname,
            lib.needed,
            runpath=lib.runpath,
            exports=(*lib.exports, "clash") if i < k else lib.exports,
        )
        for i, lib in enumerate(libs)
    ]
    write(str(tmp_path), libs)
    env = TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False)
    before = dict(duplicate_export.WORK)
    report = audit([str(tmp_path)], AuditConfig(target=env))
    work = {key: duplicate_export.WORK[key] - before[key] for key in before}
    assert work["libraries"] == n
    assert work["sets"] == 1
    assert work["memberships"] <= k * n
    (found,) = [f for f in report.findings if f.rule == "duplicate-export"]
    assert found.evidence["symbols"] == ["clash"]
    assert found.evidence["libraries"] == sorted(str(tmp_path / f"libc{i}.so") for i in range(k))
    # libc0 and libc1 are held together by every root from libc1 on
    assert len(found.evidence["roots"]) == n - 1


def test_chain_loads_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14's chain: one library is loaded from scratch, every other load is built on its dependency's."""
    n = 30
    write(str(tmp_path), chain_libs(n, exports=3))
    calls: list[str] = []
    real = closure.load_root

    def counting(path: str, *args: Any, **kwargs: Any) -> Load:
        calls.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(closure, "load_root", counting)
    shared = _analyze(tmp_path, TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False))
    assert calls == [str(tmp_path / "libc0.so")]
    monkeypatch.setattr(closure, "load_root", real)
    with monkeypatch.context() as patch:
        unshared(patch)
        alone = _analyze(tmp_path, TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False))
    assert _dump(shared) == _dump(alone)


def test_shared_load_not_taken_when_a_name_differs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """top needs mid by "libmid.so"; mid's closure needs "libtop.so" — top's own SONAME, already loaded
    in top's load (reused) but searched in mid's: top's load is not mid's load one level deeper."""
    libs = [
        Lib("libtop.so", soname="libtop.so", needed=("libmid.so",), runpath=("$ORIGIN",)),
        Lib("libmid.so", soname="libmid.so", needed=("liblow.so",), runpath=("$ORIGIN",)),
        Lib("liblow.so", soname="liblow.so", needed=("libtop.so", "libother.so"), runpath=("$ORIGIN/other",)),
        Lib("other/libtop.so", soname="libtop.so"),
        Lib("other/libother.so", soname="libother.so"),
    ]
    write(str(tmp_path), libs)
    env = TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False)
    shared = _analyze(tmp_path, env)
    with monkeypatch.context() as patch:
        unshared(patch)
        alone = _analyze(tmp_path, env)
    assert _dump(shared) == _dump(alone)
    top = next(load for load in shared.loads if load.root == str(tmp_path / "libtop.so"))
    assert top.resolutions[(str(tmp_path / "liblow.so"), "libtop.so")].path == str(tmp_path / "libtop.so")


def test_chain_stores_each_object_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14's chain: n loads of n(n+1)/2 objects are n parts of one object and one resolution
    each (the bottom: the library alone), and no rule reads a whole shared load during the audit."""
    n = 120
    write(str(tmp_path), chain_libs(n, exports=3))
    analysis = _analyze(tmp_path, TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False))
    parts = analysis.parts()
    assert len(parts) == n
    assert sum(len(list(p.objects())) for p in parts) == n
    assert sum(len(p.part.own_resolutions()) for p in parts) == n - 1
    assert sum(len(load.objects) for load in analysis.loads) == n * (n + 1) // 2  # the views are whole
    holders = analysis.holders()
    bottom = next(p.part for p in parts if p.part.below is None)
    assert holders[id(bottom)].count == n and len(holders[id(bottom)].first) == 10
    whole: list[str] = []
    for name in ("objects", "resolutions", "local_scope"):
        view = getattr(closure.Load, name)

        def counted(load: Load, view: Any = view, name: str = name) -> Any:
            if load.below is not None:
                whole.append(name)
            return view.fget(load)

        monkeypatch.setattr(closure.Load, name, property(counted, view.fset))
    monkeypatch.setattr(closure.Load, "distinct", lambda load: whole.append("distinct") or {})
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment(use_cache=False)))
    assert whole == []
    unused = [f for f in report.findings if f.rule == "unused-needed"]
    assert len(unused) == n - 1
    first = next(f for f in unused if f.file == str(tmp_path / "libc1.so"))
    assert first.evidence["roots_count"] == n - 1 and len(first.evidence["roots"]) == 10


def test_missing_library_at_the_bottom_of_a_chain_counted_not_listed(tmp_path: Path) -> None:
    """A DT_NEEDED found nowhere under a chain of n: one finding naming 10 roots with their chains,
    counting all n (listing them would be n^2/2 chain entries)."""
    n = 60
    libs = chain_libs(n, exports=2)
    libs[0] = Lib(libs[0].file, libs[0].soname, ("libmissing.so.1",), runpath=libs[0].runpath)
    write(str(tmp_path), libs)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment(use_cache=False)))
    found = [f for f in report.findings if f.rule == "library-not-found"]
    assert len(found) == 1
    evidence = found[0].evidence
    assert evidence["roots_count"] == n and len(evidence["roots"]) == 10
    assert all(r["chain"][-2:] == [str(tmp_path / "libc0.so"), "libmissing.so.1"] for r in evidence["roots"])
    deep = max(evidence["roots"], key=lambda r: len(r["chain"]))
    assert deep["chain"][0] == deep["root"] and len(deep["chain"]) == int(deep["root"].rsplit("libc", 1)[1][:-3]) + 2


def random_tree(base: Path, seed: int) -> TargetEnvironment:
    """A random forest of libraries that each need one earlier library (their loads shared part
    by part, many roots deep), with shared SONAMEs, RPATH entries here and there (no sharing),
    a library found nowhere and a clash of exports: roots counted past ``ROOTS_SHOWN``."""
    rng = random.Random(seed)
    libs: list[Lib] = []
    for i in range(40):
        soname = f"lib{rng.randrange(i)}.so" if i >= 15 and rng.random() < 0.1 else f"lib{i}.so"
        needed: tuple[str, ...] = (f"lib{rng.randrange(max(0, i - 2), i)}.so",) if i else ("libmissing.so.1",)
        if i and rng.random() < 0.1:
            needed = (rng.choice(["libmissing.so.1", f"lib{i - 1}.so"]),)
        if 0 < i < 15:
            needed = (f"lib{i - 1}.so",)  # a spine: lib0's need is met by every load above it
        libs.append(
            Lib(
                f"{'a' if i < 15 or rng.random() < 0.8 else 'b'}/lib{i}.so",
                soname=soname,
                needed=needed,
                rpath=("$ORIGIN/../b",) if i >= 15 and rng.random() < 0.1 else (),
                runpath=("$ORIGIN", "$ORIGIN/../b") if rng.random() < 0.9 else ("$ORIGIN",),
                nodeflib=rng.random() < 0.1,
                exports=(f"own{i}", *(["clash"] if rng.random() < 0.1 else [])),
                imports=(f"own{i - 1}",) if i and rng.random() < 0.3 else (),
            )
        )
    write(str(base), libs)
    return TargetEnvironment(system_dirs=(str(base / "sys"),), use_cache=False)


@pytest.mark.parametrize("seed", range(6))
def test_shared_parts_audit_equals_unshared(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Deep shared loads: the loads, and every finding with its counted and shown roots, equal
    the unshared per-root computation's."""
    env = random_tree(tmp_path, seed)
    shared_analysis = _analyze(tmp_path, env)
    assert sum(load.below is not None for load in shared_analysis.loads) > 10
    shared = audit([str(tmp_path)], AuditConfig(target=env))
    with monkeypatch.context() as patch:
        unshared(patch)
        alone_analysis = _analyze(tmp_path, env)
        patch.setattr(duplicate_export, "duplicate_sets", reference_sets)
        patch.setattr(duplicate_export, "_load_groups", reference_load_groups)
        alone = audit([str(tmp_path)], AuditConfig(target=env))
    assert _dump(shared_analysis) == _dump(alone_analysis)
    assert shared.findings == alone.findings
    assert any(f.evidence.get("roots_count", 0) > 10 for f in shared.findings)


def test_many_copies_of_one_library_cost_linear_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copies of one library (one SONAME, the same exports, one DT_NEEDED of a shared base) in
    many folders, each dlopened alone — a tarball of many members: the sharing test and
    duplicate-export's per-load lookups stay linear (each was N² ``holds_part`` / ``Load.object``
    calls: 10,000 members took 60 s)."""
    from linkaudit.loader.closure import Load

    n = 300
    write(str(tmp_path), [Lib("base/libbase.so", soname="libbase.so", exports=("b",))])
    write(str(tmp_path), [Lib(f"d{i}/libcopy.so", soname="libcopy.so", needed=("libbase.so",), runpath=("$ORIGIN/../base",),
                              exports=("f", "g"), imports=("b",)) for i in range(n)])  # fmt: skip
    calls = {"object": 0, "holds_part": 0}
    for name in calls:
        real = getattr(Load, name)

        def counted(self, *args, _real=real, _name=name):  # type: ignore[no-untyped-def]
            calls[_name] += 1
            return _real(self, *args)

        monkeypatch.setattr(Load, name, counted)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment(use_cache=False)))
    assert sum(f.status.value == "audited" for f in report.files) == n + 1
    assert calls["object"] < 20 * n and calls["holds_part"] < 20 * n, calls
