"""Findings and the report an audit returns.

A ``Finding`` is one problem (or note) a rule found in one file; a ``Report``
is every file audited and every finding, with timings.  Presentation modules
(``linkaudit.output``) read a ``Report`` and nothing else.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Set
from dataclasses import field, replace
from types import MappingProxyType
from typing import Any

from .records import dataclass


class Severity(enum.StrEnum):
    """How bad a finding is.  ``error`` fails a CI step (exit status 1)."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """0 for error, 1 for warning, 2 for note (sort key, most severe first)."""
        return _RANK[self]


_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTE: 2}


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a rule found.

    Attributes:
        rule: the rule's stable kebab-case id, e.g. ``"driver-link"``.
        severity: the severity after configuration.
        file: the path of the file at fault, as the user gave it (relative stays relative).
        subject: the library, symbol, version or path at fault, e.g. ``"libcuda.so.1"``.
        message: one or two sentences saying what is wrong and why.
        evidence: JSON-ready structured evidence; each rule documents its keys.
        suppressed: the reason of the configured suppression that covers it, or ``None``;
            a suppressed finding is still reported but does not fail the audit.
    """

    rule: str
    severity: Severity
    file: str
    subject: str
    message: str
    evidence: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    suppressed: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.evidence, MappingProxyType):
            object.__setattr__(self, "evidence", _frozen(self.evidence))

    def __reduce__(self) -> tuple[type[Finding], tuple[Any, ...]]:
        # pickled to and from pool and cluster workers: a mappingproxy does not pickle
        return Finding, (
            self.rule,
            self.severity,
            self.file,
            self.subject,
            self.message,
            dict(self.evidence),
            self.suppressed,
        )


class FileStatus(enum.StrEnum):
    """What happened to one input file.

    ``SKIPPED`` is a binary of a recognised format this version does not read
    (Mach-O, LLVM bitcode): listed with the reason, not an error.
    """

    AUDITED = "audited"
    UNREADABLE = "unreadable"
    SKIPPED = "skipped"


@dataclass(frozen=True, slots=True)
class FileResult:
    """One input file and what became of it.

    Attributes:
        path: as the user gave it.
        status: audited, unreadable (then ``error`` says why) or skipped (then
            ``reason`` says why).
        format, kind, machine: of the binary read (``None`` when unreadable;
            for a skipped file, ``format`` is the format recognised:
            ``"archive"``, ``"macho"``, ``"pe"``).
        error: the reason the file could not be read, or ``None``.
        reason: the reason a skipped file was not audited, or ``None``.
    """

    path: str
    status: FileStatus
    format: str | None = None
    kind: str | None = None
    machine: str | None = None
    error: str | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class RootInfo:
    """An import root the loader emulation loaded.

    Attributes:
        path: the root's path.
        kind: ``"executable"``, ``"python-import"`` or ``"dlopen"``.
        reached: False for an input no root reaches, loaded alone as a ``dlopen``.
    """

    path: str
    kind: str
    reached: bool


@dataclass(frozen=True, slots=True)
class Report:
    """The result of one audit.

    Attributes:
        files: every input file, in the order read.
        findings: every finding, grouped by file in input order, most severe first.
        seconds: wall time of the audit, seconds.
        rules: the ids of the rules that ran.
        config: the settings the audit ran with, JSON-ready (``AuditConfig.settings()``:
            ``{"max_versions": [...], "ignore": [...]}``); empty when not recorded.
        roots: the import roots the loader emulation loaded, in order (empty without it).
        packages: the package files staged (wheels, conda packages, tarballs), as found — those
            found in a directory included; a report is never written over one.
        links: each symlink (or tar hard link) of a package staged that leads to a file or a
            directory of the staging -> what it resolves to, both ``PACKAGE!member``: a member
            given by a link's name is its target's (``resolve_link``).  Not rendered.
    """

    files: tuple[FileResult, ...]
    findings: tuple[Finding, ...]
    seconds: float = 0.0
    rules: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    roots: tuple[RootInfo, ...] = ()
    packages: tuple[str, ...] = ()
    links: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.config, MappingProxyType):
            object.__setattr__(self, "config", _frozen(self.config))

    def count(self, severity: Severity) -> int:
        """Number of findings of ``severity`` that are not suppressed, those a ``more-findings``
        note stands for (``capped``) included and the note itself not."""
        return sum(
            f.evidence[severity.value] if f.rule == MORE_FINDINGS else 1
            for f in self.findings
            if f.rule == MORE_FINDINGS or (f.severity is severity and f.suppressed is None)
        )

    @property
    def suppressed(self) -> int:
        """Number of suppressed findings (those a ``more-findings`` note stands for included)."""
        return sum(
            f.evidence["suppressed"] if f.rule == MORE_FINDINGS else 1
            for f in self.findings
            if f.rule == MORE_FINDINGS or f.suppressed is not None
        )

    def count_status(self, status: FileStatus) -> int:
        """Number of input files with ``status``."""
        return sum(1 for f in self.files if f.status is status)

    @property
    def has_errors(self) -> bool:
        """True when any finding that is not suppressed has severity error."""
        return any(f.severity is Severity.ERROR and f.suppressed is None for f in self.findings)

    @property
    def has_unreadable(self) -> bool:
        """True when some input could not be read: an input file, or an input of the loader
        emulation (an ``--entry``, the ld.so.cache, an ``--interpreter``...), reported as an
        ``unreadable-input`` finding."""
        return any(f.status is FileStatus.UNREADABLE for f in self.files) or any(
            f.rule == "unreadable-input" for f in self.findings
        )


#: The rule id of the note that stands for a file's findings past the cap (``capped``).
MORE_FINDINGS = "more-findings"


def _kept_first(f: Finding) -> tuple[int, int, int]:
    """Which findings of a file the cap keeps: unreadable inputs, then unsuppressed before
    suppressed, then the most severe, so the exit status and the summary are unchanged."""
    return (f.rule != "unreadable-input", f.suppressed is not None, f.severity.rank)


def capped(report: Report, limit: int) -> Report:
    """``report`` with at most ``limit`` findings per file (``0``: no cap), the rest of each file's
    findings replaced by one ``more-findings`` note, last among that file's findings: "… and N
    more", with the counts of what it stands for (``count``, ``error``, ``warning``, ``note``,
    ``suppressed``, ``limit``).  The findings kept are a file's unreadable-input findings first,
    then the unsuppressed, then the most severe (``_kept_first``), in their report order;
    ``Report.count`` and ``suppressed`` count the findings the note stands for, so every
    output's summary and the exit status are those of the whole report.  Output stays linear in
    the files, whatever one file makes the rules say (N libraries, N symbols)."""
    if limit <= 0:
        return report
    by_file: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_file.setdefault(f.file, []).append(f)
    if all(len(found) <= limit for found in by_file.values()):
        return report
    out: list[Finding] = []
    for path, found in by_file.items():
        if len(found) <= limit:
            out.extend(found)
            continue
        keep = {id(f) for f in sorted(found, key=_kept_first)[:limit]}
        out.extend(f for f in found if id(f) in keep)
        out.append(_more(path, [f for f in found if id(f) not in keep], limit))
    rules = report.rules if not report.rules or MORE_FINDINGS in report.rules else (*report.rules, MORE_FINDINGS)
    return replace(report, findings=tuple(out), rules=rules)


def _more(path: str, rest: list[Finding], limit: int) -> Finding:
    """The ``more-findings`` note standing for ``rest``, the findings of ``path`` past ``limit``."""
    counts = {s.value: sum(1 for f in rest if f.severity is s and f.suppressed is None) for s in Severity}
    suppressed = sum(1 for f in rest if f.suppressed is not None)
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n] + [f"{suppressed} suppressed"] * bool(
        suppressed
    )
    rules = sorted({f.rule for f in rest})
    return Finding(
        MORE_FINDINGS,
        Severity.NOTE,
        path,
        f"{len(rest)} more",
        f"… and {len(rest)} more finding{'s' if len(rest) != 1 else ''} for this file ({', '.join(parts)}; "
        f"rules: {', '.join(rules[:6])}{', …' if len(rules) > 6 else ''}), past the cap of {limit} per file "
        "(--max-findings-per-file N shows more; 0: all)",
        {"count": len(rest), **counts, "suppressed": suppressed, "limit": limit, "rules": rules},
    )


def split_member(file: str, packages: Set[str]) -> tuple[str, str] | None:
    """``(package, member)`` when ``file`` (as reported) names a member of a package the run
    staged, ``PACKAGE!member`` with ``PACKAGE`` among ``packages`` (as given or found:
    ``Report.packages``, as a set), else ``None``: a ``!`` in a plain file's name (``d/x!y.so``) is part of
    its name, never a package's.  A package whose own name holds ``!`` is found at the ``!`` after
    its name (each ``!`` is tried from the left)."""
    at = file.find("!")
    while at >= 0:
        if file[:at] in packages:
            return file[:at], file[at + 1 :]
        at = file.find("!", at + 1)
    return None


#: How many links ``resolve_link`` follows at most (the kernel's ``ELOOP`` bound, as staging's).
MAX_LINK_HOPS = 40


def resolve_link(links: Mapping[str, str], member: str) -> str:
    """``member`` (``PACKAGE!path``) with every symlink among its leading paths replaced by what it
    resolves to (``links``: ``Report.links``, or one staging root's own ``StagingRoot.links``),
    as the file system would open it: ``pkg!lib/libz.so`` -> ``pkg!lib/libz.so.1.3.1``,
    ``pkg!lib64/libz.so`` through ``lib64 -> lib``.  Unchanged when no link leads it anywhere;
    at most ``MAX_LINK_HOPS`` links followed.  Linear in the path's length per link followed."""
    if not links:
        return member
    for _hop in range(MAX_LINK_HOPS):
        at = len(member)
        while at > 0:
            target = links.get(member[:at])
            if target is not None:
                member = target + member[at:]
                break
            at = member.rfind("/", 0, at)
        else:
            return member
    return member
