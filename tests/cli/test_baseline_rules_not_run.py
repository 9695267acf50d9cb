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


def test_entries_on_a_file_the_loader_left_unloaded_are_kept(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """A file the loader emulation left unloaded past its bound (loader-skipped) has no loader
    findings in that run: its accepted library-not-found entries were called fixed and dropped."""
    from linkaudit.loader import dyld
    from tests.formats.test_hostile_images import ID, LOAD, _dylib_cmd, _macho, _rpath_cmd

    monkeypatch.chdir(tmp_path)
    (tmp_path / "build").mkdir()
    for n in range(3):  # each: 10 dylibs found nowhere, 20 LC_RPATH places each
        cmds = [_dylib_cmd(ID, f"@rpath/b{n}.dylib"), *(_rpath_cmd(f"/nonexistent/d{i:03d}") for i in range(20))]
        _macho(
            tmp_path / f"build/b{n}.dylib", cmds + [_dylib_cmd(LOAD, f"@rpath/libm{i:03d}.dylib") for i in range(10)]
        )
    assert run_cli(*CHECK, "--no-config", "build", "--write-baseline", "b.json").exit_code == 0
    before = json.loads((tmp_path / "b.json").read_text())["findings"]
    assert {e["file"] for e in before if e["rule"] == "library-not-found"} == {f"b{n}.dylib" for n in range(3)}
    monkeypatch.setattr(dyld, "MAX_TOTAL_ATTEMPTS", 500)  # b2's load is now past the bound
    r = run_cli(*CHECK, "--no-config", "build", "--baseline", "b.json", "--write-baseline", "b.json")
    assert [f["file"] for f in _notes(r.stdout, "loader-skipped")] == ["build/b2.dylib"]
    assert _notes(r.stdout, "baseline-fixed") == []
    after = json.loads((tmp_path / "b.json").read_text())["findings"]
    assert all(e in after for e in before)  # b2's accepted entries kept (its warning added)
