"""Every output format renders; JSON validates against the shipped schema; the schema itself is valid."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from linkaudit import AuditConfig, VersionCeiling, audit
from linkaudit.output import OutputFormat, renderer

from .schema import _schema, validate_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    return audit([str(SAMPLES)], AuditConfig(max_versions=(VersionCeiling.parse("GLIBC_2.17"),)))


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_renders(report, fmt: OutputFormat) -> None:  # type: ignore[no-untyped-def]
    text = renderer(fmt)(report, color=False)
    assert text.endswith("\n")
    assert "libtorch_cuda.so" in text


def test_schemas_are_valid_json_schema() -> None:
    for name in ("report.schema.json", "show.schema.json"):
        jsonschema.Draft202012Validator.check_schema(_schema(name))


def test_json_validates_and_has_every_rules_evidence(report) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(renderer(OutputFormat.JSON)(report))
    validate_report(doc)
    assert {f["rule"] for f in doc["findings"]} >= {
        "driver-link",
        "missing-provider",
        "symbol-version",
        "rpath-leak",
        "verneed-mismatch",
        "unreadable-input",
    }


def test_schema_rejects_a_finding_without_evidence(report) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(renderer(OutputFormat.JSON)(report))
    del doc["findings"][0]["evidence"]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(doc)


def test_text_colour_only_when_asked(report) -> None:  # type: ignore[no-untyped-def]
    assert "\x1b[" not in renderer(OutputFormat.TEXT)(report, color=False)
    assert "\x1b[31m" in renderer(OutputFormat.TEXT)(report, color=True)
