"""Baseline entries and suppressions of rules a run did not run are not judged by it: a per-file
job (``--no-loader``) or one that ignores a rule (``--ignore RULE``) neither calls them fixed or
unused nor drops them when it writes the baseline in place.  Before, ``--no-loader`` with
``--baseline B --write-baseline B`` wrote ``"findings": []`` and the next full run failed on the
accepted ``library-not-found``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from linkaudit.rules import RULES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
MOD = SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so"  # needs libhelper.so: not found here
LEAK = SAMPLES / "misc/libleak.so"  # an rpath-leak (a per-file rule)
CLEAN = SAMPLES / "misc/libweak.so"

CHECK = ("check", "--no-cache", "--format", "json")
NOT_RUN = [("--no-loader",), ("--ignore", "library-not-found")]


def _build(root: Path) -> None:
    (root / "build").mkdir()
    shutil.copy(MOD, root / "build" / MOD.name)
    shutil.copy(LEAK, root / "build/libx.so")


def _rules(baseline: Path) -> list[str]:
    return sorted(e["rule"] for e in json.loads(baseline.read_text())["findings"])


def _notes(stdout: str, rule: str) -> list[dict[str, object]]:
    return [f for f in json.loads(stdout)["findings"] if f["rule"] == rule]


@pytest.mark.parametrize("flags", NOT_RUN, ids=["no-loader", "ignore"])
def test_entries_of_a_rule_not_run_are_neither_fixed_nor_dropped(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _build(tmp_path)
    assert run_cli(*CHECK, "--no-config", "build", "--write-baseline", "b.json").exit_code == 0
    before = _rules(tmp_path / "b.json")
    assert set(before) == {"library-not-found", "rpath-leak"}
    r = run_cli(*CHECK, "--no-config", *flags, "build", "--baseline", "b.json", "--write-baseline", "b.json")
    assert r.exit_code == 0, r.stdout
    assert _notes(r.stdout, "baseline-fixed") == []
    assert _rules(tmp_path / "b.json") == before
    assert run_cli(*CHECK, "--no-config", "build", "--baseline", "b.json").exit_code == 0  # the next full run
    # a rule that did run and no longer finds: still fixed, and dropped
    shutil.copy(CLEAN, tmp_path / "build/libx.so")
    r = run_cli(*CHECK, "--no-config", *flags, "build", "--baseline", "b.json", "--write-baseline", "b.json")
    assert {n["evidence"]["rule"] for n in _notes(r.stdout, "baseline-fixed")} == {"rpath-leak"}  # type: ignore[index]
    after = _rules(tmp_path / "b.json")
    assert "library-not-found" in after and "rpath-leak" not in after


@pytest.mark.parametrize("flags", NOT_RUN, ids=["no-loader", "ignore"])
def test_a_suppression_of_a_rule_not_run_is_not_called_unused(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _build(tmp_path)
    (tmp_path / "linkaudit.toml").write_text(
        '[[suppress]]\nrule = "library-not-found"\nfile = "build/*.so"\nreason = "libhelper comes from the host"\n'
        '[[suppress]]\nrule = "duplicate-rpath"\nfile = "build/*.so"\nreason = "gone since"\n'
    )
    r = run_cli(*CHECK, *flags, "build")
    unused = [n["evidence"]["rule"] for n in _notes(r.stdout, "unused-suppression")]  # type: ignore[index]
    assert unused == ["duplicate-rpath"]  # it ran: its suppression is judged


def test_without_the_loader_the_rules_needing_it_are_not_listed_as_run(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _build(tmp_path)
    loader = {r.id for r in RULES if r.needs_loader}
    assert {"library-not-found", "unresolved-symbol", "version-not-found"} <= loader
    ran = set(json.loads(run_cli(*CHECK, "--no-config", "--no-loader", "build").stdout)["rules"])
    assert not ran & loader and "rpath-leak" in ran
    assert loader <= set(json.loads(run_cli(*CHECK, "--no-config", "build").stdout)["rules"])
