"""JSON report: one document, ``{"schema": "linkaudit/1", "files": [...], "findings": [...]}``.

The shape is specified by ``schema/report.schema.json`` (JSON Schema 2020-12),
which tests validate every output against.  Within ``linkaudit/1`` the schema
only grows: new optional fields; a breaking change is ``linkaudit/2``.
"""

from __future__ import annotations

import json
from typing import Any

from .. import __version__
from ..report import Finding, Report, Severity
from . import SCHEMA_VERSION


def finding_to_dict(f: Finding) -> dict[str, Any]:
    """A finding as a JSON-ready dict (``evidence`` copied to plain containers)."""
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "file": f.file,
        "subject": f.subject,
        "message": f.message,
        "evidence": _plain(f.evidence),
    }


def _plain(value: Any) -> Any:
    if isinstance(value, dict) or hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def report_to_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict following ``report.schema.json``."""
    return {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "linkaudit", "version": __version__},
        "files": [
            {
                "path": r.path,
                "status": r.status.value,
                "format": r.format,
                "kind": r.kind,
                "machine": r.machine,
                "error": r.error,
            }
            for r in report.files
        ],
        "findings": [finding_to_dict(f) for f in report.findings],
        "summary": {
            "files": len(report.files),
            "audited": sum(1 for r in report.files if r.status.value == "audited"),
            "unreadable": sum(1 for r in report.files if r.status.value == "unreadable"),
            "errors": report.count(Severity.ERROR),
            "warnings": report.count(Severity.WARNING),
            "notes": report.count(Severity.NOTE),
            "seconds": round(report.seconds, 4),
        },
        "rules": list(report.rules),
    }


def render(report: Report, color: bool = False) -> str:
    """The report as a JSON document (indented, keys in schema order, ending in a newline)."""
    return json.dumps(report_to_dict(report), indent=2, ensure_ascii=False) + "\n"
