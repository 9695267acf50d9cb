"""The per-file cap on findings: one file that makes a rule say a great deal (here an ELF library
NEEDing 40 libraries that exist nowhere) shows ``--max-findings-per-file`` findings and one
``more-findings`` note, "… and N more", in every output format; the summaries and the exit status
are those of every finding, and ``--write-baseline`` records them all."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from linkaudit.report import Finding, Report, Severity, capped

from ..output.schema import validate_junit, validate_report

N, CAP = 40, 10


@pytest.fixture
def noisy(tmp_path: Path) -> Path:
    from tests.loader.dagbuild import Lib, write

    write(str(tmp_path), [Lib("libnoisy.so", "libnoisy.so", needed=tuple(f"libgone{i:02d}.so" for i in range(N)))])
    return tmp_path / "libnoisy.so"


def _json(run_cli, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    r = run_cli("check", "--format", "json", *args)
    assert r.exit_code == 1, r.stdout[-2000:]
    doc = json.loads(r.stdout)
    validate_report(doc)
    return doc  # type: ignore[no-any-return]


def test_one_file_shows_the_cap_and_one_note_standing_for_the_rest(run_cli, noisy: Path) -> None:  # type: ignore[no-untyped-def]
    full = _json(run_cli, "--max-findings-per-file", "0", str(noisy))
    doc = _json(run_cli, "--max-findings-per-file", str(CAP), str(noisy))
    errors = full["summary"]["errors"]
    assert errors >= N and len(full["findings"]) > CAP + 1
    assert len(doc["findings"]) == CAP + 1
    more = doc["findings"][-1]
    assert more["rule"] == "more-findings" and more["severity"] == "note" and more["file"] == str(noisy)
    hidden = len(full["findings"]) - CAP
    assert more["evidence"]["count"] == hidden and more["evidence"]["limit"] == CAP
    assert more["message"].startswith(f"… and {hidden} more findings")
    assert "library-not-found" in more["evidence"]["rules"]
    assert doc["summary"] == {**full["summary"], "seconds": doc["summary"]["seconds"]}  # counts of every finding
    assert all(f["severity"] == "error" for f in doc["findings"][:CAP])  # the most severe are the ones shown


def test_every_format_says_it_and_counts_every_finding(run_cli, noisy: Path) -> None:  # type: ignore[no-untyped-def]
    cap = ("--max-findings-per-file", str(CAP), str(noisy))
    text = run_cli("check", *cap)
    assert text.exit_code == 1
    assert text.stdout.count("  error   [") == CAP
    assert "[more-findings]" in text.stdout and "… and " in text.stdout
    full_text = run_cli("check", "--max-findings-per-file", "0", str(noisy)).stdout
    assert text.stdout.splitlines()[-1].split(" (")[0] == full_text.splitlines()[-1].split(" (")[0]  # the summary line
    sarif = json.loads(run_cli("check", "--format", "sarif", *cap).stdout)
    results = sarif["runs"][0]["results"]
    assert len(results) == CAP + 1 and results[-1]["ruleId"] == "more-findings"
    junit = run_cli("check", "--format", "junit", *cap).stdout
    validate_junit(junit)
    assert any(c.get("name") == "more-findings" for c in ET.fromstring(junit.encode()).iter("testcase"))
    github = run_cli("check", "--format", "github", *cap).stdout
    assert github.count("::error ") == CAP and "title=more-findings" in github


def test_the_baseline_records_every_finding(run_cli, noisy: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    base = tmp_path / "base.json"
    r = run_cli("check", "--max-findings-per-file", str(CAP), "--write-baseline", str(base), str(noisy))
    assert r.exit_code == 0
    assert sum(f["rule"] == "library-not-found" for f in json.loads(base.read_text())["findings"]) == N
    r = run_cli("check", "--format", "json", "--max-findings-per-file", str(CAP), "--baseline", str(base), str(noisy))
    assert r.exit_code == 0 and json.loads(r.stdout)["summary"]["errors"] == 0


def test_the_cap_keeps_unsuppressed_and_unreadable_first() -> None:
    """Kept: unreadable-input, then unsuppressed findings, then the most severe — so a file's
    unsuppressed error is never hidden behind suppressed ones and the exit status holds."""
    f = [Finding("x", Severity.ERROR, "a", f"s{i}", "m", suppressed="ok") for i in range(5)]
    f += [Finding("y", Severity.WARNING, "a", "w", "m"), Finding("z", Severity.ERROR, "a", "e", "m")]
    f += [Finding("unreadable-input", Severity.NOTE, "a", "u", "m"), Finding("z", Severity.ERROR, "b", "e", "m")]
    report = Report((), tuple(f), rules=("x", "y", "z"))
    out = capped(report, 2)
    assert [(g.file, g.rule) for g in out.findings] == [
        ("a", "z"),
        ("a", "unreadable-input"),
        ("a", "more-findings"),
        ("b", "z"),
    ]
    assert out.has_errors and out.has_unreadable
    assert (out.count(Severity.ERROR), out.count(Severity.WARNING), out.suppressed) == (2, 1, 5)
    assert out.count(Severity.NOTE) == report.count(Severity.NOTE)
    assert out.rules[-1] == "more-findings"
    assert capped(report, 0) is report and capped(report, 100) is report
