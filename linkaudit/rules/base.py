"""The rule interface.

A rule is a small class with a stable kebab-case ``id``, a default
``severity``, a one-line ``summary``, a longer ``explain`` text and an
``evidence`` table documenting the keys of the evidence object its findings
carry.  ``check(context)`` reads only the ``AuditContext`` and yields findings;
it does no I/O and prints nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from ..context import AuditContext
from ..model import Binary
from ..report import Finding, Severity

#: ``Rule.formats`` of the rules that judge one container's files only.
ELF_ONLY: frozenset[str] = frozenset({"elf"})
MACHO_ONLY: frozenset[str] = frozenset({"macho"})
COFF_ONLY: frozenset[str] = frozenset({"coff"})
PE_ONLY: frozenset[str] = frozenset({"pe"})


class Rule:
    """Base class of every rule.

    Class attributes:
        id: stable kebab-case id (``"driver-link"``), used in output, ``--ignore``
            and suppressions; never renamed.
        severity: default severity of the rule's findings.
        summary: one line.
        explain: several paragraphs: what the rule checks, why it matters, how to fix, sources.
        evidence: evidence key -> description (the documented shape).
        formats: the containers whose files the rule judges (``"elf"``, ``"macho"``, ``"pe"``,
            ``"coff"``: ``FileResult.format``), or ``None`` for every one: a JUnit report gives a
            file a passing case only for the rules that judge its format.
        needs_loader: True for a rule whose findings come from the loader emulation alone (the
            ld.so, musl, Windows and dyld loads): without one (``--no-loader``) it does not run,
            and the report does not list it among the rules that ran — so that a baseline entry
            or a suppression of it is not judged by a run that could not have found it.
    """

    id: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    explain: ClassVar[str]
    evidence: ClassVar[Mapping[str, str]] = {}
    formats: ClassVar[frozenset[str] | None] = None
    needs_loader: ClassVar[bool] = False

    def check(self, context: AuditContext) -> Iterator[Finding]:
        """Yield the findings of this rule over ``context``."""
        raise NotImplementedError

    def finding(
        self,
        binary: Binary | str,
        subject: str,
        message: str,
        evidence: Mapping[str, Any],
        severity: Severity | None = None,
    ) -> Finding:
        """Make a ``Finding`` of this rule for ``binary`` (a ``Binary`` or a path)."""
        path = binary if isinstance(binary, str) else binary.display_path
        return Finding(self.id, severity or self.severity, path, subject, message, evidence)


def preview(names: list[str], limit: int = 4) -> str:
    """``"a, b, c"`` or ``"a, b, c, d, … (+5 more)"`` for messages."""
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", … (+{len(names) - limit} more)"
