"""JSON Lines report (``--format jsonl``): one finding per line, written as packages finish.

For runs too large to wait for (a channel of thousands of packages on a cluster): each line is
one JSON object, valid against ``schema/jsonl.schema.json``:

* ``{"type": "finding", "order": [I, J], "package": P, ...}`` — a finding with the fields of the
  JSON report's findings (``report.schema.json#/$defs/finding``); ``order`` is the index ``I`` of
  the installation in the audit's plan (with ``--each``: of the package, in input order) and its
  place ``J`` among that installation's findings, ``package`` the package (path as given) or
  ``null`` for inputs that are no package.  Lines come in completion order; sorting them by
  ``order`` gives the JSON report's order.
* ``{"type": "summary", "summary": {...}, "files": N}`` — last, once everything is audited: the
  JSON report's summary.

Findings known only at the end (``unused-suppression``, ``baseline-fixed``) come just before the
summary, with ``I`` one past the last installation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..report import Finding, Report
from .json import finding_to_dict, report_to_dict


def finding_line(finding: Finding, order: tuple[int, int], package: str | None) -> str:
    """One finding as a line (ending in a newline)."""
    doc: dict[str, Any] = {"type": "finding", "order": list(order), "package": package}
    doc.update(finding_to_dict(finding))
    return json.dumps(doc, ensure_ascii=False) + "\n"


def summary_line(report: Report) -> str:
    """The closing line: the JSON report's summary."""
    doc = report_to_dict(report)
    return json.dumps({"type": "summary", "summary": doc["summary"], "files": len(report.files)}) + "\n"


def _key(f: Finding) -> tuple[str, str, str, str]:
    return f.rule, f.file, f.subject, f.message


class Stream:
    """Lines written as installations finish (``jobs.Spread.on_part``), then the rest and the summary.

    Args:
        write: takes each line as it is made (standard output, a temporary file).
    """

    def __init__(self, write: Callable[[str], None]) -> None:
        self._write = write
        self._written: set[tuple[str, str, str, str]] = set()
        self._parts = 0

    def part(self, index: int, packages: Sequence[str], findings: Iterable[Finding]) -> None:
        """One installation's findings (``Spread.on_part``'s arguments)."""
        package = packages[0] if len(packages) == 1 else (" ".join(packages) or None)
        self._parts = max(self._parts, index + 1)
        for j, f in enumerate(findings):
            self._written.add(_key(f))
            self._write(finding_line(f, (index, j), package))

    def finish(self, report: Report) -> None:
        """The findings of ``report`` no part gave (known only at the end), then the summary."""
        rest = [f for f in report.findings if _key(f) not in self._written]
        for j, f in enumerate(rest):
            self._write(finding_line(f, (self._parts, j), None))
        self._write(summary_line(report))


def render(report: Report, color: bool = False) -> str:
    """A whole report as JSON Lines (not streamed): every finding in report order, then the summary."""
    lines: list[str] = []
    Stream(lines.append).finish(report)
    return "".join(lines)
