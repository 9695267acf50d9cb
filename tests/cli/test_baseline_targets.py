"""A baseline (and SARIF's fingerprints) key a wheel member under its wheel's target: a finding
accepted in one platform's wheel of a ``dist/`` does not hide the same finding new in another's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..samplewheels import sample_write_wheel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
LEAK = SAMPLES / "misc/libleak.so"  # an rpath-leak (error)
CLEAN = SAMPLES / "misc/libweak.so"  # no rpath-leak
MANY = "cp311-abi3-manylinux_2_17_x86_64"
MUSL = "cp311-abi3-musllinux_1_2_x86_64"


def _dist(directory: Path, libraries: dict[str, Path]) -> None:
    """``directory``: a wheel of pkg 1.0 per tag of ``libraries``, its ``pkg/libfoo.so`` that library."""
    directory.mkdir()
    write_wheel = sample_write_wheel()
    for tag, library in libraries.items():
        members = {"pkg/libfoo.so": library.read_bytes()}
        write_wheel(
            directory / f"pkg-1.0-{tag}.whl",
            members,
            "pkg-1.0.dist-info",
            "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n",
            [tag],
        )


@pytest.fixture
def releases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``d1/``: a leaking manylinux wheel and a clean musllinux one; ``d2/``: both leak."""
    monkeypatch.chdir(tmp_path)
    _dist(tmp_path / "d1", {MANY: LEAK, MUSL: CLEAN})
    _dist(tmp_path / "d2", {MANY: LEAK, MUSL: LEAK})
    return tmp_path


def _live(stdout: str) -> set[tuple[str, str]]:
    return {
        (f["rule"], f["file"])
        for f in json.loads(stdout)["findings"]
        if "suppressed" not in f and f["severity"] == "error"
    }


def test_a_finding_accepted_in_one_platforms_wheel_is_new_in_another(run_cli, releases: Path) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check", "--no-config", "--write-baseline", "bl.json", "d1").exit_code == 0
    same = run_cli("check", "--no-config", "--baseline", "bl.json", "d1")
    assert same.exit_code == 0, same.stdout
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", "d2")
    assert r.exit_code == 1, r.stdout
    assert _live(r.stdout) == {("rpath-leak", f"d2/pkg-1.0-{MUSL}.whl!pkg/libfoo.so")}
    assert "predates" not in r.stderr
    entries = json.loads((releases / "bl.json").read_text())["findings"]
    assert {f["file"] for f in entries if f["rule"] == "rpath-leak"} == {"abi3-manylinux_x86_64:pkg/libfoo.so"}


def test_sarif_fingerprints_differ_per_platform_wheel(run_cli, releases: Path) -> None:  # type: ignore[no-untyped-def]
    from linkaudit.output.sarif import FINGERPRINT_KEY

    sarif = json.loads(run_cli("check", "--no-config", "--format", "sarif", "d2").stdout)
    prints = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r["partialFingerprints"][FINGERPRINT_KEY]
        for r in sarif["runs"][0]["results"]
        if r["ruleId"] == "rpath-leak"
    }
    assert len(prints) == 2 and len(set(prints.values())) == 2, prints


def test_an_older_baseline_without_targets_still_accepts_and_says_to_write_it_again(run_cli, releases: Path) -> None:  # type: ignore[no-untyped-def]
    run_cli("check", "--no-config", "--write-baseline", "bl.json", "d1")
    doc = json.loads((releases / "bl.json").read_text())
    for entry in doc["findings"]:
        entry["file"] = entry["file"].partition(":")[2]  # as written before wheel members were keyed per target
    (releases / "old.json").write_text(json.dumps(doc))
    r = run_cli("check", "--no-config", "--baseline", "old.json", "d2")
    assert r.exit_code == 0, r.stdout
    assert r.stderr.count("old.json predates per-target keys") == 1, r.stderr
    assert "--write-baseline" in r.stderr
    j = run_cli("check", "--no-config", "--format", "json", "--baseline", "old.json", "d2")
    assert not _live(j.stdout)
    fixed = [f for f in json.loads(j.stdout)["findings"] if f["rule"] == "baseline-fixed"]
    assert not [f for f in fixed if f["evidence"]["rule"] == "rpath-leak"], fixed


def test_wheels_given_themselves_are_keyed_per_target_too(run_cli, releases: Path) -> None:  # type: ignore[no-untyped-def]
    """``check dist/*.whl``: each wheel an input of its own, its members still under its target."""
    old = [str(p.relative_to(releases)) for p in sorted((releases / "d1").glob("*.whl"))]
    new = [str(p.relative_to(releases)) for p in sorted((releases / "d2").glob("*.whl"))]
    assert run_cli("check", "--no-config", "--write-baseline", "bl.json", *old).exit_code == 0
    r = run_cli("check", "--no-config", "--format", "json", "--baseline", "bl.json", *new)
    assert r.exit_code == 1, r.stdout
    assert _live(r.stdout) == {("rpath-leak", f"d2/pkg-1.0-{MUSL}.whl!pkg/libfoo.so")}
