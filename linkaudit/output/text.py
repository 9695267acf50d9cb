"""Text report for people: grouped by file, one line per finding, evidence indented beneath.

::

    sample_bins/broken/libtorch_cuda.so
      error    driver-link  libcuda.so.1: ...
               library: libcuda.so.1
    ...
    9 files audited, 1 unreadable: 3 errors, 2 warnings, 0 notes (0.04 s)

Colour only when asked (the CLI asks when writing to a terminal).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..report import FileStatus, Finding, Report, Severity

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTE: "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
MAX_ITEMS = 12


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        if not value:
            return "(none)"
        items = [_value(v) for v in value[:MAX_ITEMS]]
        more = f" … (+{len(value) - MAX_ITEMS} more; --format json lists all)" if len(value) > MAX_ITEMS else ""
        return ", ".join(items) + more
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _finding(f: Finding, color: bool) -> list[str]:
    sev = f"{f.severity.value:<7}"
    if color:
        sev = f"{_COLORS[f.severity]}{sev}{_RESET}"
    lines = [f"  {sev} [{f.rule}] {f.subject}: {f.message}"]
    for key, value in f.evidence.items():
        text = f"      {key}: {_value(value)}"
        lines.append(f"{_DIM}{text}{_RESET}" if color else text)
    return lines


def summary_line(report: Report) -> str:
    """``"N files audited, M unreadable: E errors, W warnings, N notes (S s)"``."""
    audited = sum(1 for r in report.files if r.status is FileStatus.AUDITED)
    unreadable = sum(1 for r in report.files if r.status is FileStatus.UNREADABLE)

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    head = n(audited, "file") + " audited"
    if unreadable:
        head += f", {unreadable} unreadable"
    return (
        f"{head}: {n(report.count(Severity.ERROR), 'error')}, {n(report.count(Severity.WARNING), 'warning')}, "
        f"{n(report.count(Severity.NOTE), 'note')} ({report.seconds:.2f} s)"
    )


def render(report: Report, color: bool = False) -> str:
    """The report as text, ending in a newline."""
    lines: list[str] = []
    current = None
    for f in report.findings:
        if f.file != current:
            if current is not None:
                lines.append("")
            current = f.file
            lines.append(f"{_BOLD}{f.file}{_RESET}" if color else f.file)
        lines.extend(_finding(f, color))
    if lines:
        lines.append("")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
