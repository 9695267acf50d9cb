"""The dyld emulation shares what does not depend on the root (``loader.dyld``): each search once per
install name and everything that decides it, and a dylib that loads one other dylib loaded as
itself on top of that dylib's load (``loader.images.LoadStack``).  K dylibs each loading
``@loader_path/libm{i+1}.dylib`` were K²/2 places: past K=710 the run-wide budget of 250,000 places
was spent and every later load reported a false ``library-not-found`` naming a file that is there
(the hostile tester's K=1000: 677 errors).  The shared loads equal the unshared ones
(``analyze_dyld(share=False)``) on random DAGs of real Mach-O files."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, read
from linkaudit.loader import dyld
from linkaudit.loader.dyld import analyze_dyld
from linkaudit.loader.images import iter_resolutions
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Binary
from tests.formats.test_hostile_images import ID, LOAD, REEXPORT, _dylib_cmd, _macho, _rpath_cmd
from tests.loader.test_windows_shared import _flat

WEAK = 0x80000018


def _chain(directory: Path, k: int, cmd: int = LOAD) -> list[Binary]:
    """libm0 ... libm{k-1}, libm{i} loading (``cmd``: or re-exporting) ``@loader_path/libm{i+1}.dylib``, all present."""
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(k):
        loads = [_dylib_cmd(cmd, f"@loader_path/libm{i + 1}.dylib")] if i < k - 1 else []
        _macho(directory / f"libm{i}.dylib", [_dylib_cmd(ID, f"@rpath/libm{i}.dylib"), *loads])
    return [b for i in range(k) for b in read(str(directory / f"libm{i}.dylib"))]


@pytest.mark.parametrize("cmd", [LOAD, REEXPORT])
def test_a_chain_of_dylibs_is_searched_once_per_name_and_stored_once(tmp_path: Path, monkeypatch, cmd: int) -> None:  # type: ignore[no-untyped-def]
    """Each install name is searched once for the run, and the K loads hold about K distinct
    resolutions: per-root work (K²/2 searches) fails this.  A re-export chain the same."""
    searched: list[str] = []
    real = dyld._search

    def counting(state, attempts, machine, candidates):  # type: ignore[no-untyped-def]
        searched.extend(path for path, _ in candidates)
        return real(state, attempts, machine, candidates)

    monkeypatch.setattr(dyld, "_search", counting)
    k = 300
    loads = analyze_dyld(_chain(tmp_path, k, cmd))
    assert len(loads) == k
    assert len(searched) == len(set(searched)) == k - 1  # libm1 ... libm{k-1}: each once
    assert [len(ld.objects) for ld in loads[:3]] == [k, k - 1, k - 2]
    assert sum(len(ld.resolutions) for ld in loads) == k * (k - 1) // 2  # each load still says it all
    assert len(list(iter_resolutions(loads))) == k - 1  # each part once


def test_a_chain_of_1000_dylibs_has_no_library_not_found(tmp_path: Path) -> None:
    """The hostile tester's K=1000: 677 false library-not-found errors, each naming a file present."""
    _chain(tmp_path, 1000)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    assert not [f for f in report.findings if f.rule == "library-not-found"]


def _random_tree(rng: random.Random, tmp_path: Path) -> dict[str, object]:
    """Random dylibs in ``a`` and ``b``: loads (plain, weak, re-export) of later dylibs by
    ``@loader_path``, ``@rpath`` (LC_RPATH of the image or of one above it), absolute paths, of
    earlier ones (rings), of themselves, of missing ones and of the shared cache."""
    n = rng.randint(2, 12)
    dirs = [tmp_path / "a", tmp_path / "b"]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    where = [rng.choice(dirs) for _ in range(n)]
    for i in range(n):
        cmds = [_dylib_cmd(ID, f"@rpath/libL{i}.dylib")]
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            pick, j = rng.random(), rng.randint(i + 1, n) if i + 1 < n else n
            if pick < 0.1:
                j = rng.randint(0, i)  # back: a ring, or itself
            target = where[j] if j < n else rng.choice(dirs)
            how = rng.random()
            if how < 0.35:
                name = f"@loader_path/../{target.name}/libL{j}.dylib"
            elif how < 0.7:
                name = f"@rpath/libL{j}.dylib"
            elif how < 0.8:
                name = str(target / f"libL{j}.dylib")
            elif how < 0.9:
                name = "/usr/lib/libSystem.B.dylib"
            else:
                name = f"@rpath/missing{rng.randint(0, 1)}.dylib"
            cmds.append(_dylib_cmd(rng.choice([LOAD, LOAD, LOAD, WEAK, REEXPORT]), name))
        for _ in range(rng.choice([0, 0, 1, 2])):
            cmds.append(_rpath_cmd(rng.choice(["@loader_path", "@loader_path/../a", "@loader_path/../b", "/none"])))
        _macho(where[i] / f"libL{i}.dylib", cmds)
    return {
        "library_path": [str(tmp_path / "b")] if rng.random() < 0.15 else [],
        "fallback_library_path": [str(tmp_path / "a")] if rng.random() < 0.3 else [],
    }


@pytest.mark.parametrize("seed", range(80))
def test_shared_loads_equal_each_root_loaded_afresh(tmp_path: Path, seed: int) -> None:
    options = _random_tree(random.Random(seed), tmp_path)
    binaries = [b for p in sorted(tmp_path.rglob("*.dylib")) for b in read(str(p))]
    shared = analyze_dyld(binaries, **options)  # type: ignore[arg-type]
    alone = analyze_dyld(binaries, share=False, **options)  # type: ignore[arg-type]
    assert [_flat(ld) for ld in shared] == [_flat(ld) for ld in alone]


def test_a_search_stopped_by_the_budget_is_a_limit_not_a_missing_library(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past one load's budget the search stops: that is said as linkaudit's limit (a warning naming
    the limit), never as an error that dyld would not load a dylib that is there."""
    monkeypatch.setattr(dyld, "MAX_ATTEMPTS", 4)
    _chain(tmp_path, 10)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    found = [f for f in report.findings if f.rule == "library-not-found"]
    assert found  # the budget was passed
    for f in found:
        assert f.severity.value == "warning", f.message
        assert "more than 4 places tried in this load" in f.message
        assert "Library not loaded" not in f.message and "is among the inputs" not in f.message


def test_a_root_the_run_wide_budget_stops_is_left_out_not_reported_missing(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Past the run-wide budget a root's load is cut short: the root is left out with a
    ``loader-skipped`` warning naming the limit (no ``library-not-found`` for a dylib that is there),
    and the roots loaded before it are judged as usual."""
    monkeypatch.setattr(dyld, "MAX_TOTAL_ATTEMPTS", 4)
    _chain(tmp_path, 10)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    assert not [f for f in report.findings if f.rule == "library-not-found"]
    skipped = [f for f in report.findings if f.rule == "loader-skipped"]
    assert skipped
    for f in skipped:
        assert f.severity.value == "warning", f.message
        assert "more than 4 places tried by all loads" in f.message


def test_the_searches_kept_are_short_and_bounded(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An ``@rpath`` name under a chain of ``LC_RPATH`` holders stands for the holders' places, a
    list per chain: keeping every such search held 4.4 GB for 1,000 dylibs of a lattice (each with
    two ``LC_RPATH``s, loading the next few by ``@rpath``).  Only short lists are kept, up to a total;
    the loads are those of every root loaded afresh."""
    k = 30
    for i in range(k):
        cmds = [_dylib_cmd(ID, f"@rpath/libl{i}.dylib"), _rpath_cmd("@loader_path"), _rpath_cmd("@loader_path/x")]
        cmds += [_dylib_cmd(LOAD, f"@rpath/libl{j}.dylib") for j in (i + 1, i + 3) if j < k]
        _macho(tmp_path / f"libl{i}.dylib", cmds)
    binaries = [b for i in range(k) for b in read(str(tmp_path / f"libl{i}.dylib"))]
    monkeypatch.setattr(dyld, "MEMO_CANDIDATES", 6)
    monkeypatch.setattr(dyld, "MEMO_TOTAL", 60)
    runs: list[object] = []
    real = dyld._root_load

    def spy(run, *args):  # type: ignore[no-untyped-def]
        runs.append(run)
        return real(run, *args)

    monkeypatch.setattr(dyld, "_root_load", spy)
    shared = analyze_dyld(binaries)
    assert [_flat(ld) for ld in shared] == [_flat(ld) for ld in analyze_dyld(binaries, share=False)]
    searches = runs[0].searches  # type: ignore[attr-defined]
    assert searches and all(len(key[2]) <= 6 for key in searches)
    assert sum(len(key[2]) + len(done[0]) for key, done in searches.items()) <= 60 + 6 + 6


def test_an_images_rpath_places_are_listed_once_for_all_its_rpath_names(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The ``LC_RPATH`` places of an image's chain are the same for each of its ``@rpath`` names:
    listed once per image loaded, not once per name (a lattice of 1,000 dylibs: 37 -> 23 s)."""
    names = [f"libn{j}.dylib" for j in range(6)]
    for leaf in names:
        _macho(tmp_path / leaf, [_dylib_cmd(ID, f"@rpath/{leaf}")])
    loads = [_dylib_cmd(LOAD, f"@rpath/{leaf}") for leaf in names]
    _macho(tmp_path / "libtop.dylib", [_dylib_cmd(ID, "@rpath/libtop.dylib"), _rpath_cmd("@loader_path"), *loads])
    top = read(str(tmp_path / "libtop.dylib"))
    listed: list[str] = []
    real = dyld._rpath_bases

    def counted(requester, *args):  # type: ignore[no-untyped-def]
        listed.append(requester)
        return real(requester, *args)

    monkeypatch.setattr(dyld, "_rpath_bases", counted)
    (load,) = analyze_dyld(top, entries=[str(tmp_path / "libtop.dylib")])
    assert len(load.objects) == 7  # every name found by the one LC_RPATH
    assert listed == [str(tmp_path / "libtop.dylib")]
