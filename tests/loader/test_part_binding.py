"""The roots of shared dlopen loads are bound part by part (``loader.part_binding``): the same
bindings as ``bind_object`` over each root's whole scope, for work linear in the chain.

A chain of n libraries each referencing a symbol of the next (every file its own dlopen root, the
last needing a library found nowhere) bound every root in its whole scope: n(n+1)/2 scope entries
and lookups (4,000 libraries: 54 s, 323 MB, for ``check`` and ``why`` alike).  The counting tests
assert work, never time."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from linkaudit.cli.app import main
from linkaudit.loader import binding, part_binding
from linkaudit.loader.closure import Load
from linkaudit.loader.target import TargetEnvironment
from tests.loader.dagbuild import MUSL_LOADER, Lib, write
from tests.loader.test_scale import _analyze, _dump, random_tree, unshared
from tests.tools import find_tool, needs


def _missing_tail_chain(directory: Path, n: int) -> None:
    """The hostile chain: lib{i} needs lib{i+1} ($ORIGIN), exports f{i}, references f{i+1}; the last
    needs libmissing.so (its f{n} binds nowhere)."""
    write(
        str(directory),
        [
            Lib(f"lib{i}.so", soname=f"lib{i}.so", needed=(f"lib{i + 1}.so" if i + 1 < n else "libmissing.so",),
                runpath=("$ORIGIN",), exports=(f"f{i}",), imports=(f"f{i + 1}",))
            for i in range(n)
        ],
    )  # fmt: skip


def _counting(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the binding work from here on: ``scope``, the scope entries handed to ``bind_object``
    (the old way walked each root's whole scope); ``part``, ``part_binding``'s indexed objects,
    walked parts and probes; ``probes``, ``bind_object``'s."""
    work = {"scope": 0}
    real = Load.scope_for

    def scope_for(load: Load, path: str) -> list[str]:
        scope = real(load, path)
        work["scope"] += len(scope)
        return scope

    monkeypatch.setattr(Load, "scope_for", scope_for)
    monkeypatch.setattr(binding, "WORK", {"probes": 0})
    monkeypatch.setattr(part_binding, "WORK", dict.fromkeys(part_binding.WORK, 0))
    return work


def _total(work: dict[str, int]) -> int:
    return work["scope"] + binding.WORK["probes"] + sum(part_binding.WORK.values())


@pytest.mark.parametrize("command", ["check", "why"])
def test_missing_tail_chain_binds_in_linear_work(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check --format json DIR`` and ``why DIR libmissing.so`` on the chain of 200 and of 400:
    twice the libraries, about twice the binding work (it was four times: n(n+1)/2 scope entries),
    and the report holds the chains of ten roots at most (each up to n + 2 long), the rest counted."""
    totals, entries = [], []
    for n in (200, 400):
        directory = tmp_path / str(n)
        _missing_tail_chain(directory, n)
        with monkeypatch.context() as patch:
            work = _counting(patch)
            args = ["check", "--format", "json"] if command == "check" else ["why", "--format", "json"]
            code = main([*args, "--no-cache", str(directory), *(["libmissing.so"] if command == "why" else [])])
            totals.append(_total(work))
        doc = json.loads(capsys.readouterr().out)
        assert code == (1 if command == "check" else 0)
        if command == "check":
            (missing,) = [f for f in doc["findings"] if f["rule"] == "library-not-found"]
            assert missing["evidence"]["roots_count"] == n and len(missing["evidence"]["roots"]) == 10
            entries.append(sum(len(r["chain"]) for r in missing["evidence"]["roots"]))
        else:
            assert doc["library_chains"][-1]["more_roots"] == n - 10
            entries.append(sum(len(c["chain"]) for c in doc["library_chains"]))
        assert totals[-1] <= 6 * n and entries[-1] <= 10 * (n + 2), (n, totals[-1], entries[-1])
    assert totals[1] <= 2.2 * totals[0], totals


def test_missing_tail_chain_binds_each_root_to_the_next(tmp_path: Path) -> None:
    n = 30
    _missing_tail_chain(tmp_path, n)
    analysis = _analyze(tmp_path, TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False))
    assert sum(load.below is not None for load in analysis.loads) == n - 1
    for i in range(n):
        path = str(tmp_path / f"lib{i}.so")
        (bound,) = analysis.bindings[(path, path)]
        assert bound.symbol.name == f"f{i + 1}"
        assert bound.provider == (str(tmp_path / f"lib{i + 1}.so") if i + 1 < n else None)


def _equal_to_unshared(base: Path, env: TargetEnvironment, monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared loads bind as the unshared ones, scanning the parts defining a name and walking the
    load's parts (``SCAN_PARTS`` 0)."""
    with monkeypatch.context() as patch:
        unshared(patch)
        alone = _dump(_analyze(base, env))
    for scan in (part_binding.SCAN_PARTS, 0):
        with monkeypatch.context() as patch:
            patch.setattr(part_binding, "SCAN_PARTS", scan)
            shared = _analyze(base, env)
        assert sum(load.below is not None for load in shared.loads) > 3
        assert _dump(shared) == alone


@pytest.mark.parametrize("seed", range(6))
def test_shared_roots_bind_as_in_their_whole_scope(tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    _equal_to_unshared(tmp_path, random_tree(tmp_path, seed), monkeypatch)


def _asm(defines: list[str], references: list[str], weak: list[str]) -> str:
    """A tiny library's assembly: functions ``defines``, a data word per reference (weak ones ``.weak``)."""
    text = ".text\n" + "".join(f".globl {name}\n.type {name},@function\n{name}: ret\n" for name in defines)
    text += "".join(f".weak {name}\n" for name in weak)
    text += ".data\n" + "".join(f".quad {name}\n" for name in [*references, *weak])
    return text + '.section .note.GNU-stack,"",@progbits\n'


def _version(i: int) -> str:
    """lib{i}'s one version: VE for even libraries, VA and VB by turns for odd ones."""
    return "VE" if i % 2 == 0 else ("VA" if i % 4 == 1 else "VB")


def _gcc_chain(out: Path, n: int, style: str) -> None:
    """lib{i} needs lib{i+1} (RUNPATH $ORIGIN), the last a library found nowhere; each defines f{i},
    odd ones also g, every name at version ``_version(i)``.  lib{i} references f{i+1}, a weak name
    defined nowhere and, when even, g — at the version of the stub it was linked against instead of
    lib{i+1} (same SONAME): the other of VA and VB, so lib{i+1}'s g does not match and lib{i+3}'s does."""
    gcc = find_tool("gcc").path or "gcc"
    flags = ["-shared", "-nostdlib", f"-Wl,--hash-style={style}", "-Wl,--enable-new-dtags", "-Wl,-rpath,$ORIGIN"]
    work = out / "build"
    work.mkdir()
    for i in range(n):
        j = i + 1
        other = "VB" if _version(j) == "VA" else "VA"
        (work / "stub.s").write_text(_asm([f"f{j}", "g"], [], []))
        (work / "stub.map").write_text(f"{_version(j)} {{ global: f{j}; }};\n{other} {{ global: g; }};\n")
        stub = work / f"lib{j}.so"
        subprocess.run([gcc, *flags, f"-Wl,-soname,lib{j}.so", "-Wl,--version-script", work / "stub.map", "-o", stub, work / "stub.s"], check=True)  # fmt: skip
        defines, references = ([f"f{i}", "g"], [f"f{j}"]) if i % 2 else ([f"f{i}"], [f"f{j}", "g"])
        (work / "lib.s").write_text(_asm(defines, references, ["nowhere"]))
        (work / "lib.map").write_text(f"{_version(i)} {{ global: *; }};\n")
        subprocess.run([gcc, *flags, f"-Wl,-soname,lib{i}.so", "-Wl,--version-script", work / "lib.map", "-o", out / f"lib{i}.so", work / "lib.s", stub], check=True)  # fmt: skip
    for leftover in work.iterdir():
        leftover.unlink()
    work.rmdir()


@needs("gcc")
@pytest.mark.parametrize("style", ["gnu", "sysv"])
def test_versioned_chain_through_hash_tables_binds_as_in_the_whole_scope(
    tmp_path: Path, style: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real hash tables (``DT_GNU_HASH`` or ``DT_HASH``), versioned references whose first definer
    in scope has the other version, a weak reference bound nowhere, a missing tail."""
    _gcc_chain(tmp_path, 12, style)
    env = TargetEnvironment(system_dirs=(str(tmp_path / "sys"),), use_cache=False)
    _equal_to_unshared(tmp_path, env, monkeypatch)
    analysis = _analyze(tmp_path, env)
    root = str(tmp_path / "lib2.so")
    where: dict[str, Any] = {b.symbol.name: b.provider for b in analysis.bindings[(root, root)]}
    assert where == {"f3": str(tmp_path / "lib3.so"), "g": str(tmp_path / "lib5.so"), "nowhere": None}
    assert {b.symbol.version.name for b in analysis.bindings[(root, root)] if b.symbol.version} == {"VA", "VB"}


def test_musl_chain_binds_in_linear_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The chain read as musl (no missing tail: musl shares no load whose search fell through to the
    system path) binds its roots part by part too, by name (``musl_matches``)."""
    totals = []
    for n in (100, 200):
        base = tmp_path / str(n)
        libs = [Lib(f"lib{i}.so", soname=f"lib{i}.so", needed=(f"lib{i + 1}.so",) if i + 1 < n else (),
                    runpath=("$ORIGIN",), exports=(f"f{i}",), imports=(f"f{i + 1}",), interpreter=MUSL_LOADER)
                for i in range(n)]  # fmt: skip
        write(str(base), libs)
        with monkeypatch.context() as patch:
            work = _counting(patch)
            analysis = _analyze(base, TargetEnvironment(system_dirs=(str(base / "sys"),), use_cache=False))
            totals.append(_total(work))
        assert sum(load.below is not None for load in analysis.loads) == n - 1
        top = str(base / "lib0.so")
        assert [b.provider for b in analysis.bindings[(top, top)]] == [str(base / "lib1.so")]
        assert totals[-1] <= 6 * n, (n, totals[-1])
    assert totals[1] <= 2.2 * totals[0], totals
