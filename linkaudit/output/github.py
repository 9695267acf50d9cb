"""GitHub Actions workflow commands: one ``::error``/``::warning``/``::notice`` line per finding.

GitHub shows each as an annotation on the file (``file=`` is the path as given, relative to
the workspace when linkaudit runs there).  Property values and messages are escaped as the
workflow-command syntax requires (``%``, CR, LF; and ``:``/``,`` inside properties).
"""

from __future__ import annotations

from ..report import Report, Severity, split_member
from .shared import text_safe
from .text import summary_line

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice"}


def _data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(value: str) -> str:
    return _data(value).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, color: bool = False) -> str:
    """The findings that are not suppressed as workflow commands, then the summary as a plain line."""
    lines = []
    packages = frozenset(report.packages)
    for f in report.findings:
        if f.suppressed is not None:
            continue
        # A package member is annotated on its package (the file in the checkout), the member in the title.
        package, member = split_member(f.file, packages) or (f.file, None)
        title = f"{f.rule}: {member + ': ' if member is not None else ''}{f.subject}"
        lines.append(
            f"::{_LEVEL[f.severity]} file={_property(text_safe(package))},"
            f"title={_property(text_safe(title))}::{_data(text_safe(f.message))}"
        )
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
