"""Issue 14, "Linear by construction", for musl's loader (``loader.musl``): the loads of libraries
dlopened alone, shared (``musl_alone_load``), equal the per-root computation (``load_root_musl``),
and a chain's searches stay linear.

The random DAGs are tiny real ELF libraries whose PT_INTERP names a musl loader under the test's
directory (so ``<prefix>/etc/ld-musl-x86_64.path`` there is the system path): diamonds, names
shared by several files, DT_RPATH / DT_RUNPATH mixes (inherited alike up ``needed_by``, ``$LIB``
voiding a whole rpath), LD_LIBRARY_PATH, the loader's own names (``libc.musl-x86_64.so.1``), a
file reached under two names (a symlink: the same device and inode), names found nowhere, and in
even seeds executable and Python extension roots (one process).  musl has no LD_PRELOAD in its
emulation; the preloads of the glibc tests have no musl counterpart here.
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.loader import musl
from linkaudit.loader.closure import Load, RootKind
from linkaudit.loader.musl import MuslAloneLoads, MuslContext, load_root_musl
from linkaudit.loader.target import TargetEnvironment
from tests.loader.dagbuild import MUSL_LOADER, Lib, chain_libs, write
from tests.loader.test_scale import PYEXT, _analyze, _dump


def unshared_musl_alone_load(root_path: str, root: Any, ctx: MuslContext, _loads: MuslAloneLoads) -> Load:
    """``musl.musl_alone_load`` without sharing: every root loaded from scratch."""
    return load_root_musl(root_path, root, RootKind.DLOPEN, ctx)


def random_musl_dag(base: Path, seed: int) -> TargetEnvironment:
    """Write one random DAG of musl libraries under ``base``; returns the target environment."""
    rng = random.Random(seed)
    loader = str(base / "usr/lib/ld-musl-x86_64.so.1")  # prefix base/usr: base/usr/etc/ld-musl-x86_64.path
    (base / "usr/etc").mkdir(parents=True, exist_ok=True)
    (base / "usr/etc/ld-musl-x86_64.path").write_text(f"{base / 'nowhere'}\n{base / 'sys'}:{base / 'b'}\n")
    dirs = ["a", "b", "sys"]
    libs: list[Lib] = []
    names: list[str] = []
    for i in range(rng.randint(5, 14)):
        file = f"lib{rng.randrange(i + 1)}.so" if rng.random() < 0.25 else f"lib{i}.so"  # one name, several files
        needed = rng.sample(names, min(len(names), rng.choice([0, 1, 1, 1, 2, 3])))
        if rng.random() < 0.15:
            needed.append(rng.choice(["libmissing.so.1", "libc.musl-x86_64.so.1", "libc.so"]))
        entries = rng.sample(["$ORIGIN", "$ORIGIN/../a", "${ORIGIN}/../b", str(base / "nowhere"), "$LIB/x"], 2)
        which = rng.choice(["none", "rpath", "runpath", "runpath", "none"])
        libs.append(
            Lib(
                f"{rng.choice(dirs)}/{file}",
                soname=file,
                needed=tuple(needed),
                rpath=tuple(entries) if which == "rpath" else (),
                runpath=tuple(entries) if which == "runpath" else (),
                exports=(f"f{rng.randrange(6)}", f"own{i}"),
                imports=tuple(f"f{k}" for k in rng.sample(range(6), rng.randint(0, 2))),
                interpreter=loader,
            )
        )
        names.append(file)
    if seed % 2 == 0:  # executables and Python imports too (one process: reuse by name)
        for k in range(rng.randint(0, 2)):
            libs.append(Lib(f"a/mod{k}{PYEXT}", needed=tuple(rng.sample(names, 2)), interpreter=loader))
        if rng.random() < 0.5:
            exe = Lib("a/prog", needed=tuple(rng.sample(names, 2)), rpath=("$ORIGIN/../b",), executable=True)
            libs.append(Lib(**{**exe.__dict__, "interpreter": loader}))
    write(str(base), libs)
    for d in (*dirs, "nowhere"):
        (base / d).mkdir(exist_ok=True)
    if rng.random() < 0.6:  # one file under two paths: musl reuses it by device and inode
        for lib in libs:
            link = base / "b" / Path(lib.file).name
            if not lib.file.startswith("b/") and not link.exists() and not lib.executable:
                os.symlink(base / lib.file, link)
                break
    return TargetEnvironment(use_cache=False, ld_library_path=(str(base / "a"),) if rng.random() < 0.3 else ())


def _unshared(patch: pytest.MonkeyPatch) -> None:
    patch.setattr(musl, "musl_alone_load", unshared_musl_alone_load)  # analysis imports it per call


@pytest.mark.parametrize("seed", range(60))
def test_shared_musl_loads_equal_unshared(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    env = random_musl_dag(tmp_path, seed)
    shared = _analyze(tmp_path, env)
    assert shared.loads and all(load.loader == "musl" for load in shared.loads)
    with monkeypatch.context() as patch:
        _unshared(patch)
        alone = _analyze(tmp_path, env)
    assert _dump(shared) == _dump(alone)


@pytest.mark.parametrize("seed", range(0, 60, 7))
def test_shared_musl_audit_equals_unshared(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    env = random_musl_dag(tmp_path, seed)
    shared = audit([str(tmp_path)], AuditConfig(target=env))
    with monkeypatch.context() as patch:
        _unshared(patch)
        alone = audit([str(tmp_path)], AuditConfig(target=env))
    assert shared.findings == alone.findings
    assert (shared.files, shared.roots) == (alone.files, alone.roots)


def test_random_musl_dags_cover_the_cases(tmp_path: Path) -> None:
    """The generator makes what the equivalence test claims to cover (else it proves little)."""
    seen: set[str] = set()
    for seed in range(60):
        base = tmp_path / str(seed)
        env = random_musl_dag(base, seed)
        analysis = _analyze(base, env)
        resolutions = [r for load in analysis.loads for r in load.resolutions.values()]
        seen |= {r.source.value for r in resolutions if r.source is not None}
        seen |= {"not-found" for r in resolutions if r.path is None}
        seen |= {"loader" for r in resolutions if r.name.startswith("libc.")}
        seen |= {"voided" for r in resolutions for a in r.attempts if "voids" in a.detail}
        seen |= {
            "same-file"
            for r in resolutions
            if r.source is not None and r.attempts and r.source.value == "already-loaded"
        }
        seen |= {k.kind.value for k in analysis.roots}
        seen |= {"shared-part" for load in analysis.loads if load.below is not None}
        seen |= {"not-shared" for load in analysis.loads if load.below is None and len(load.own_resolutions()) == 1}
        seen |= {"symlink" for p in (base / "b").iterdir() if p.is_symlink()}
    assert seen >= {
        "DT_RPATH",
        "DT_RUNPATH",
        "LD_LIBRARY_PATH",
        "already-loaded",
        "system-directory",
        "not-found",
        "loader",
        "voided",
        "same-file",
        "python-import",
        "executable",
        "dlopen",
        "shared-part",
        "not-shared",
        "symlink",
    }, seen


def _counted_searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = musl._Search.run

    def counting(self: Any) -> Any:
        calls.append(self.name)
        return real(self)

    monkeypatch.setattr(musl._Search, "run", counting)
    return calls


def test_musl_chain_searches_once_per_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 14's chain for musl: n dlopen roots whose loads hold n(n+1)/2 objects and n(n-1)/2
    resolutions, made of n parts; ``load_library`` searches n-1 times (once per DT_NEEDED), not
    n(n-1)/2 (once per DT_NEEDED per root: the code before sharing)."""
    n = 40
    write(str(tmp_path), chain_libs(n, exports=3, interpreter=MUSL_LOADER))
    calls = _counted_searches(monkeypatch)
    analysis = _analyze(tmp_path, TargetEnvironment(use_cache=False))
    assert len(analysis.loads) == n and all(load.loader == "musl" for load in analysis.loads)
    assert sum(len(load.resolutions) for load in analysis.loads) == n * (n - 1) // 2
    assert sum(len(load.objects) for load in analysis.loads) == n * (n + 1) // 2
    assert len(analysis.parts()) == n
    assert sorted(calls) == sorted(f"libc{i}.so" for i in range(n - 1))
    calls.clear()
    with monkeypatch.context() as patch:
        _unshared(patch)
        alone = _analyze(tmp_path, TargetEnvironment(use_cache=False))
    assert _dump(analysis) == _dump(alone)
    assert len(calls) == n * (n - 1) // 2  # the reference: per root


def test_musl_inherited_rpath_blocks_sharing_when_a_search_falls_through(tmp_path: Path) -> None:
    """top (RUNPATH $ORIGIN/extra) needs mid; mid needs low, found nowhere on mid's own chain: in
    top's load musl then tries top's rpath (inherited up ``needed_by``) and finds extra/liblow.so,
    which mid dlopened alone never sees.  top's load is not mid's one level deeper."""
    loader = MUSL_LOADER
    write(
        str(tmp_path),
        [
            Lib("libtop.so", needed=("libmid.so",), runpath=("$ORIGIN", "$ORIGIN/extra"), interpreter=loader),
            Lib("libmid.so", needed=("liblow.so",), interpreter=loader),
            Lib("extra/liblow.so", interpreter=loader),
        ],
    )
    analysis = _analyze(tmp_path, TargetEnvironment(use_cache=False))
    top = next(load for load in analysis.loads if load.root == str(tmp_path / "libtop.so"))
    mid = next(load for load in analysis.loads if load.root == str(tmp_path / "libmid.so"))
    assert top.below is None
    assert top.resolution(str(tmp_path / "libmid.so"), "liblow.so").path == str(tmp_path / "extra/liblow.so")
    assert mid.resolution(str(tmp_path / "libmid.so"), "liblow.so").path is None
