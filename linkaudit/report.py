"""Findings and the report an audit returns.

A ``Finding`` is one problem (or note) a rule found in one file; a ``Report``
is every file audited and every finding, with timings.  Presentation modules
(``linkaudit.output``) read a ``Report`` and nothing else.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


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
    """

    files: tuple[FileResult, ...]
    findings: tuple[Finding, ...]
    seconds: float = 0.0
    rules: tuple[str, ...] = ()
    config: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    roots: tuple[RootInfo, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.config, MappingProxyType):
            object.__setattr__(self, "config", _frozen(self.config))

    def count(self, severity: Severity) -> int:
        """Number of findings of ``severity`` that are not suppressed."""
        return sum(1 for f in self.findings if f.severity is severity and f.suppressed is None)

    @property
    def suppressed(self) -> int:
        """Number of suppressed findings."""
        return sum(1 for f in self.findings if f.suppressed is not None)

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
