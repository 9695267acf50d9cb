"""The loads of one run are bounded by the inputs' size (``loader.analysis.LoadBudget``): N
libraries that each need all N, none reached by an import root, held N^3 loaded objects and
resolutions (200 of them, 3.2 MB: 1.95 GB; stop 27's D4). Past the bound, the inputs not
loaded yet are ``loader-skipped`` warnings; below it, nothing changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.loader import analysis, bounds
from linkaudit.loader.target import TargetEnvironment
from tests.loader.dagbuild import Lib, write

N = 40


def _mesh(directory: Path) -> None:
    names = [f"libm{i:03d}.so" for i in range(N)]
    write(str(directory), [Lib(n, soname=n, needed=tuple(names), runpath=("$ORIGIN",)) for n in names])


def _budgets(monkeypatch: pytest.MonkeyPatch) -> list[analysis.LoadBudget]:
    made: list[analysis.LoadBudget] = []
    real = analysis.LoadBudget.__init__

    def init(self: analysis.LoadBudget, binaries) -> None:  # type: ignore[no-untyped-def]
        real(self, binaries)
        made.append(self)

    monkeypatch.setattr(analysis.LoadBudget, "__init__", init)
    return made


def test_a_mesh_within_the_bound_is_loaded_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _mesh(tmp_path)
    made = _budgets(monkeypatch)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    assert not [f for f in report.findings if f.rule == "loader-skipped"]
    (budget,) = made
    assert N * N <= budget.spent <= budget.limit  # every root's load: N objects, N x N resolutions, shared parts once


def test_past_the_bound_the_rest_are_skipped_and_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _mesh(tmp_path)
    monkeypatch.setattr(bounds, "LOAD_FLOOR", 5 * (N + N * N))  # five roots' loads
    monkeypatch.setattr(bounds, "LOAD_BYTES", 1 << 40)
    made = _budgets(monkeypatch)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    skipped = [f for f in report.findings if f.rule == "loader-skipped"]
    (budget,) = made
    assert budget.spent <= budget.limit + N + N * N  # at most one load past the bound
    assert len(skipped) == N - 6, len(skipped)  # five loads fit, the sixth passes it, the rest wait
    assert all(f.severity.value == "warning" and "--entry" in f.message for f in skipped)
    assert {f.file for f in skipped} < {str(tmp_path / f"libm{i:03d}.so") for i in range(N)}


def test_a_vendored_copy_no_import_reaches_is_not_loaded_alone(tmp_path: Path) -> None:
    """a and b each vendor libv.so in <dist>.libs; a is imported first, so b's import reuses a's
    copy by SONAME and b.libs/libv.so is never loaded: nothing dlopens a vendored copy by path, so
    no load of its own is made up for it (before: its missing dependency was a warning that
    check --each did not give; stop 27's fresh user)."""
    from tests.loader.dagbuild import Lib, write

    ext = "cpython-311-x86_64-linux-gnu.so"
    for dist, needs in (("a", ()), ("b", ("libonlyb.so",))):
        write(str(tmp_path / f"{dist}.libs"), [Lib("libv.so", soname="libv.so", needed=needs)])
        write(str(tmp_path / dist), [Lib(f"_{dist}.{ext}", needed=("libv.so",), runpath=(f"$ORIGIN/../{dist}.libs",))])
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    assert not [f for f in report.findings if f.rule == "library-not-found"]
    assert str(tmp_path / "b.libs/libv.so") not in {r.path for r in report.roots}
    alone = audit([str(tmp_path / "b.libs/libv.so")], AuditConfig(target=TargetEnvironment()))
    assert [f.subject for f in alone.findings if f.rule == "library-not-found"] == [
        "libonlyb.so"
    ]  # given alone: loaded
