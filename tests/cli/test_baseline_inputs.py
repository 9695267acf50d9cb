"""Baseline keys say which input, conda build variant or wheel target holds a file: a finding
accepted in one does not hide the same finding new in another; an older baseline without that
part still accepts (``check`` says once to write it again); entries and suppressions for what the
run did not audit are not called fixed or stale."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from .test_baseline_targets import CLEAN, LEAK, MANY, MUSL, _dist, _live


def _fixed(stdout: str) -> list[dict[str, str]]:
    return [f["evidence"] for f in json.loads(stdout)["findings"] if f["rule"] == "baseline-fixed"]


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``old/{cpu,gpu}/lib/libx.so``: cpu leaks, gpu is clean; ``new/``: both leak."""
    monkeypatch.chdir(tmp_path)
    for build, gpu in (("old", CLEAN), ("new", LEAK)):
        for variant, library in (("cpu", LEAK), ("gpu", gpu)):
            (tmp_path / build / variant / "lib").mkdir(parents=True)
            shutil.copy(library, tmp_path / build / variant / "lib/libx.so")
    return tmp_path


def test_several_directories_key_their_files_apart(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check", "--no-config", "--write-baseline", "bl.json", "old/cpu", "old/gpu").exit_code == 0
    entries = json.loads((builds / "bl.json").read_text())["findings"]
    assert {e["file"] for e in entries if e["rule"] == "rpath-leak"} == {"cpu:lib/libx.so"}
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", "new/cpu", "new/gpu")
    assert r.exit_code == 1, r.stdout
    assert _live(r.stdout) == {("rpath-leak", "new/gpu/lib/libx.so")}
    assert "predates" not in r.stderr and not [e for e in _fixed(r.stdout) if e["rule"] == "rpath-leak"]


def test_files_given_themselves_key_apart_too(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    run_cli("check", "--no-config", "--write-baseline", "bl.json", "old/cpu/lib/libx.so", "old/gpu/lib/libx.so")
    entries = json.loads((builds / "bl.json").read_text())["findings"]
    assert {e["file"] for e in entries if e["rule"] == "rpath-leak"} == {"cpu/lib:libx.so"}
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", "new/cpu/lib/libx.so", "new/gpu/lib/libx.so")  # fmt: skip
    assert _live(r.stdout) == {("rpath-leak", "new/gpu/lib/libx.so")}, r.stdout


def test_a_job_of_one_input_reads_the_baseline_of_several(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    """``check build/cpu`` against the baseline of ``check build/cpu build/gpu``: cpu's entries
    accept its findings, gpu's (not audited) are not called fixed; cpu's gone ones are."""
    assert run_cli("check", "--no-config", "--write-baseline", "bl.json", "new/cpu", "new/gpu").exit_code == 0
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", "new/cpu")
    assert r.exit_code == 0 and not _live(r.stdout), r.stdout
    assert not _fixed(r.stdout) and "predates" not in r.stderr
    shutil.copy(CLEAN, builds / "new/cpu/lib/libx.so")
    g = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", "new/cpu")
    assert {e["file"] for e in _fixed(g.stdout) if e["rule"] == "rpath-leak"} == {"cpu:lib/libx.so"}, g.stdout


def test_one_input_keeps_its_keys(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    run_cli("check", "--no-config", "--write-baseline", "bl.json", "old/cpu")
    entries = json.loads((builds / "bl.json").read_text())["findings"]
    assert {e["file"] for e in entries if e["rule"] == "rpath-leak"} == {"lib/libx.so"}


def test_sarif_fingerprints_differ_per_input(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    from linkaudit.output.sarif import FINGERPRINT_KEY

    sarif = json.loads(run_cli("check", "--no-config", "--format", "sarif", "new/cpu", "new/gpu").stdout)
    prints = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["partialFingerprints"][FINGERPRINT_KEY]
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "rpath-leak"
    }
    assert len(prints) == 2 and len(set(prints.values())) == 2, prints


def test_an_older_baseline_without_the_input_still_accepts(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    # keyed as a baseline of several inputs was before they were told apart: lib/libx.so
    assert run_cli("check", "--no-config", "--write-baseline", "old.json", "old/cpu").exit_code == 0
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "old.json", "new/cpu", "new/gpu")
    assert not [x for x in _live(r.stdout) if x[0] == "rpath-leak"], r.stdout
    assert r.stderr.count("old.json predates per-target keys") == 1, r.stderr
    assert not [e for e in _fixed(r.stdout) if e["rule"] == "rpath-leak"]


def _conda(path: Path, build: str, library: Path, subdir: str = "linux-64") -> None:
    """A conda package (``.tar.bz2``) of foo 1.0, build ``build``, its ``lib/libfoo.so`` that library."""
    path.mkdir(parents=True, exist_ok=True)
    index = {"name": "foo", "version": "1.0", "build": build, "build_number": 0, "subdir": subdir, "depends": []}
    with tarfile.open(path / f"foo-1.0-{build}.tar.bz2", "w:bz2") as tar:
        for name, data in (
            ("info/index.json", json.dumps(index).encode()),
            ("info/files", b"lib/libfoo.so\n"),
            ("lib/libfoo.so", library.read_bytes()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize("subdir", ["linux-64", "out"])
def test_conda_build_variants_key_their_members_apart(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, subdir: str) -> None:  # type: ignore[no-untyped-def]  # fmt: skip
    monkeypatch.chdir(tmp_path)
    for build, py312 in (("old", CLEAN), ("new", LEAK)):
        _conda(tmp_path / build / subdir, "py311_0", LEAK)
        _conda(tmp_path / build / subdir, "py312_0", py312)
    assert run_cli("check", "--no-config", "--write-baseline", "bl.json", "old").exit_code == 0
    entries = json.loads((tmp_path / "bl.json").read_text())["findings"]
    prefix = "linux-64/" if subdir == "linux-64" else ""
    assert {e["file"] for e in entries if e["rule"] == "rpath-leak"} == {f"{prefix}foo-py311:lib/libfoo.so"}
    (tmp_path / "new" / subdir / "foo-1.0-py311_0.tar.bz2").rename(
        tmp_path / "new" / subdir / "foo-1.0-py311_1.tar.bz2"
    )
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", "new")
    assert r.exit_code == 1, r.stdout  # the rebuild (py311_1) still pairs; py312's leak is new
    assert _live(r.stdout) == {("rpath-leak", f"new/{subdir}/foo-1.0-py312_0.tar.bz2!lib/libfoo.so")}
    assert not [e for e in _fixed(r.stdout) if e["rule"] == "rpath-leak"]
    doc = json.loads((tmp_path / "bl.json").read_text())
    for entry in doc["findings"]:
        entry["file"] = entry["file"].partition(":")[2]  # as written before conda builds were keyed apart
    (tmp_path / "old.json").write_text(json.dumps(doc))
    o = run_cli("check", "--no-config", "--format", "json", "--baseline", "old.json", "new")
    assert not _live(o.stdout) and "old.json predates per-target keys" in o.stderr


@pytest.fixture
def dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    _dist(tmp_path / "dist", {MANY: LEAK, MUSL: LEAK})
    return tmp_path


def test_entries_of_wheels_not_audited_are_not_called_fixed(run_cli, dist: Path) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check", "--no-config", "--write-baseline", "bl.json", "dist").exit_code == 0
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", f"dist/pkg-1.0-{MANY}.whl")
    assert r.exit_code == 0, r.stdout
    assert not _fixed(r.stdout), _fixed(r.stdout)
    # a fix in the wheel audited is still reported
    _dist(dist / "fixed", {MANY: CLEAN})
    f = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", f"fixed/pkg-1.0-{MANY}.whl")
    assert "rpath-leak" in {e["rule"] for e in _fixed(f.stdout)}, f.stdout


def test_a_suppression_for_a_wheel_not_audited_is_not_stale(run_cli, dist: Path) -> None:  # type: ignore[no-untyped-def]
    (dist / "linkaudit.toml").write_text(
        '[[suppress]]\nrule = "rpath-leak"\nfile = "*musllinux*"\nreason = "musl build known"\n'
    )
    r = run_cli("check", "--format", "json", f"dist/pkg-1.0-{MANY}.whl")
    stale = [f["subject"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "unused-suppression"]
    assert stale == [], stale
    # in the run that audits the musllinux wheel and no longer finds the leak, it is stale
    _dist(dist / "fixed", {MUSL: CLEAN})
    s = run_cli("check", "--format", "json", f"fixed/pkg-1.0-{MUSL}.whl")
    stale = [f["subject"] for f in json.loads(s.stdout)["findings"] if f["rule"] == "unused-suppression"]
    assert stale == ["rpath-leak *musllinux*"], stale
