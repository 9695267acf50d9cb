"""JSON report: one document, ``{"schema": "linkaudit/1", "files": [...], "findings": [...]}``.

The shape is specified by ``schema/report.schema.json`` (JSON Schema 2020-12),
which tests validate every output against.  Within ``linkaudit/1`` the schema
only grows: new optional fields; a breaking change is ``linkaudit/2``.

The document is valid UTF-8 whatever the names hold: bytes that are not UTF-8
(kept in the model as surrogate escapes) are written ``\\xNN`` (``utf8_safe``).
"""

from __future__ import annotations

from typing import Any

from .. import __version__
from ..report import FileResult, FileStatus, Finding, Report, Severity
from .indented import Rows, dumps
from .shared import SCHEMA_VERSION, utf8_safe, utf8_tree


def finding_to_dict(f: Finding) -> dict[str, Any]:
    """A finding as a JSON-ready dict (``evidence`` copied to plain containers; strings made valid UTF-8)."""
    out: dict[str, Any] = utf8_tree(
        {
            "rule": f.rule,
            "severity": f.severity.value,
            "file": f.file,
            "subject": f.subject,
            "message": f.message,
            "evidence": f.evidence,
        }
    )
    if f.suppressed is not None:
        out["suppressed"] = utf8_tree(f.suppressed)
    return out


_FILE_KEYS = ("path", "status", "format", "kind", "machine", "error", "reason")


def _file_row(r: FileResult) -> tuple[str | None, ...]:
    """One file's entry as values in the order of ``_FILE_KEYS`` (its strings made valid UTF-8,
    as ``utf8_tree`` would, field by field: 200,000 entries of a package's members, 0.5 s sooner)."""
    return (
        utf8_safe(r.path),
        r.status.value,
        _safe(r.format),
        _safe(r.kind),
        _safe(r.machine),
        _safe(r.error),
        _safe(r.reason),
    )


def _safe(text: str | None) -> str | None:
    return None if text is None else utf8_safe(text)


def report_to_dict(report: Report) -> dict[str, Any]:
    """The whole report as a JSON-ready dict following ``report.schema.json``."""
    return _document(report, Rows(_FILE_KEYS, [_file_row(r) for r in report.files]).as_list())


def _document(report: Report, files: list[dict[str, Any]] | Rows) -> dict[str, Any]:
    """``report_to_dict``'s document with ``files`` as its file entries."""
    doc: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "tool": {"name": "linkaudit", "version": __version__},
        "files": files,
        "findings": [finding_to_dict(f) for f in report.findings],
        "summary": {
            "files": len(report.files),
            "audited": report.count_status(FileStatus.AUDITED),
            "unreadable": report.count_status(FileStatus.UNREADABLE),
            "skipped": report.count_status(FileStatus.SKIPPED),
            "errors": report.count(Severity.ERROR),
            "warnings": report.count(Severity.WARNING),
            "notes": report.count(Severity.NOTE),
            "suppressed": report.suppressed,
            "seconds": round(report.seconds, 4),
        },
        "rules": list(report.rules),
    }
    if report.config:
        doc["config"] = utf8_tree(report.config)
    if report.roots:
        doc["roots"] = utf8_tree([{"path": r.path, "kind": r.kind, "reached": r.reached} for r in report.roots])
    return doc


def render(report: Report, color: bool = False) -> str:
    """The report as a JSON document (indented, keys in schema order, ending in a newline)."""
    return dumps(_document(report, Rows(_FILE_KEYS, [_file_row(r) for r in report.files]))) + "\n"
