"""Helpers for rule tests: audit sample binaries and pick findings."""

from __future__ import annotations

from pathlib import Path

from linkaudit import AuditConfig, Finding, VersionCeiling, audit

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def findings(*rel: str, rule: str | None = None, max_versions: tuple[str, ...] = ()) -> list[Finding]:
    config = AuditConfig(max_versions=tuple(VersionCeiling.parse(v) for v in max_versions))
    report = audit([str(SAMPLES / r) for r in rel], config)
    return [f for f in report.findings if rule is None or f.rule == rule]
