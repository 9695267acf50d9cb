"""A baseline updated by a run that reads one (``--baseline X --write-baseline Y``, the same file
or not) keeps the entries of the inputs, packages and targets the run did not audit, and writes
the run's own with the labels they had: a per-input or per-wheel CI job updating the baseline of
all of them in place neither drops the others' entries nor widens its own to every input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .test_baseline_targets import CLEAN, LEAK, MANY, MUSL, SAMPLES, _dist, _live

STACK = SAMPLES / "misc/libexecstack.so"  # executable-stack, no rpath-leak

CHECK = ("check", "--no-config", "--no-cache", "--no-loader")


def _leaks(baseline: Path) -> set[str]:
    return {e["file"] for e in json.loads(baseline.read_text())["findings"] if e["rule"] == "rpath-leak"}


def _build(root: Path, cpu: Path, gpu: Path) -> None:
    """``build/{cpu,gpu}/lib/libx.so``: the libraries given."""
    for variant, library in (("cpu", cpu), ("gpu", gpu)):
        (root / "build" / variant / "lib").mkdir(parents=True, exist_ok=True)
        shutil.copy(library, root / "build" / variant / "lib/libx.so")


@pytest.mark.parametrize("target", ["bl.json", "out.json"])
def test_a_per_input_job_keeps_the_other_inputs_and_its_label(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, LEAK, LEAK)
    assert run_cli(*CHECK, "--write-baseline", "bl.json", "build/cpu", "build/gpu").exit_code == 0
    assert _leaks(tmp_path / "bl.json") == {"cpu:lib/libx.so", "gpu:lib/libx.so"}
    before = json.loads((tmp_path / "bl.json").read_text())["findings"]
    w = run_cli(*CHECK, "build/cpu", "--baseline", "bl.json", "--write-baseline", target)
    assert w.exit_code == 0, w.stderr
    assert json.loads((tmp_path / target).read_text())["findings"] == before  # nothing changed: the same document
    # cpu fixed: its entry dropped, gpu's (not audited) kept
    shutil.copy(CLEAN, tmp_path / "build/cpu/lib/libx.so")
    run_cli(*CHECK, "build/cpu", "--baseline", "bl.json", "--write-baseline", target)
    assert _leaks(tmp_path / target) == {"gpu:lib/libx.so"}


def test_the_repro_a_leak_new_in_the_other_input_is_reported(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    """cpu accepted a leak, gpu had no leak; cpu's job updates in place; gpu then leaks: new, exit 1."""
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, LEAK, STACK)
    run_cli(*CHECK, "--write-baseline", "b.json", "build/cpu", "build/gpu")
    before = {e["file"] for e in json.loads((tmp_path / "b.json").read_text())["findings"]}
    assert {f.partition(":")[0] for f in before} == {"cpu", "gpu"}, before
    run_cli(*CHECK, "build/cpu", "--baseline", "b.json", "--write-baseline", "b.json")
    after = {e["file"] for e in json.loads((tmp_path / "b.json").read_text())["findings"]}
    assert after == before
    shutil.copy(LEAK, tmp_path / "build/gpu/lib/libx.so")
    r = run_cli(*CHECK, "--format", "json", "build/gpu", "--baseline", "b.json")
    assert r.exit_code == 1 and _live(r.stdout) == {("rpath-leak", "build/gpu/lib/libx.so")}, r.stdout
    both = run_cli(*CHECK, "--format", "json", "build/cpu", "build/gpu", "--baseline", "b.json")
    assert both.exit_code == 1 and _live(both.stdout) == {("rpath-leak", "build/gpu/lib/libx.so")}, both.stdout


def test_a_new_finding_of_a_labelled_input_is_written_labelled(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, STACK, LEAK)
    run_cli(*CHECK, "--write-baseline", "b.json", "build/cpu", "build/gpu")
    rules = {(e["rule"], e["file"]) for e in json.loads((tmp_path / "b.json").read_text())["findings"]}
    assert rules == {("executable-stack", "cpu:lib/libx.so"), ("rpath-leak", "gpu:lib/libx.so")}
    shutil.copy(LEAK, tmp_path / "build/cpu/lib/libx.so")  # the stack fixed, a leak new
    run_cli(*CHECK, "build/cpu", "--baseline", "b.json", "--write-baseline", "b.json")
    rules = {(e["rule"], e["file"]) for e in json.loads((tmp_path / "b.json").read_text())["findings"]}
    assert rules == {("rpath-leak", "cpu:lib/libx.so"), ("rpath-leak", "gpu:lib/libx.so")}


def test_a_single_input_baseline_stays_unlabelled(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _build(tmp_path, LEAK, LEAK)
    run_cli(*CHECK, "--write-baseline", "b.json", "build/cpu")
    run_cli(*CHECK, "build/cpu", "--baseline", "b.json", "--write-baseline", "b.json")
    assert _leaks(tmp_path / "b.json") == {"lib/libx.so"}


def test_a_per_wheel_job_keeps_the_other_targets(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    _dist(tmp_path / "dist", {MANY: LEAK, MUSL: LEAK})
    run_cli(*CHECK, "--write-baseline", "b.json", "dist")
    both = _leaks(tmp_path / "b.json")
    assert len(both) == 2 and all(":pkg/libfoo.so" in f for f in both), both
    many = next(f for f in both if "manylinux" in f)
    for given in (f"dist/pkg-1.0-{MANY}.whl", f"dist/pkg-1.0-{MUSL}.whl"):
        assert run_cli(*CHECK, given, "--baseline", "b.json", "--write-baseline", "b.json").exit_code == 0
        assert _leaks(tmp_path / "b.json") == both
    # the manylinux wheel fixed: its entry dropped, musllinux's kept
    _dist(tmp_path / "fixed", {MANY: CLEAN})
    run_cli(*CHECK, f"fixed/pkg-1.0-{MANY}.whl", "--baseline", "b.json", "--write-baseline", "b.json")
    assert _leaks(tmp_path / "b.json") == both - {many}
