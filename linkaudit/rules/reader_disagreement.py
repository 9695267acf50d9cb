"""``reader-disagreement``: with ``--verify``, lief reads a field of an input differently from us."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..report import Finding, Severity
from .base import Rule, preview


class ReaderDisagreement(Rule):
    id = "reader-disagreement"
    severity = Severity.ERROR
    summary = "with --verify: an independent reader (lief) reads a field of the file differently"
    explain = """\
linkaudit's findings rest on its own reading of each file (its ELF reader; for
PE pefile and its own directory readers; for Mach-O macholib and its own
__LINKEDIT readers). `check
--verify` reads every input a second time with lief, an independent library,
and compares what matters for linkage: for ELF the DT_NEEDED entries in order,
DT_SONAME, DT_RPATH/DT_RUNPATH, and the names of the defined and undefined
dynamic symbols; for PE the imported and delay-load DLLs, the functions imported
from each, the export directory's DLL name, the exports and their forwarders;
for Mach-O, per slice of a universal file, the machine, the install name, the
needed dylibs with their kind (weak, re-export, upward, lazy), the LC_RPATH
entries in order, the minimum OS and SDK, the imports with the dylib each binds
to (none: flat lookup) and whether weak, the exports and the export trie's
re-exports. Each field that differs is a finding naming both readings.

A disagreement means one of the two readers is wrong on this file (or the file
is malformed in a way the two handle differently): the other findings about the
file cannot be trusted until it is understood — please report it. --verify is
slower (lief reads whole files) and opt-in.
"""
    evidence = {
        "field": "what was compared",
        "ours": "linkaudit's reading",
        "theirs": "lief's reading",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for d in context.disagreements:

            def short(value: object) -> str:
                if isinstance(value, list):
                    return f"[{preview([str(v) for v in value], 3)}]"
                return str(value)[:200]

            yield self.finding(
                d.path,
                d.field,
                f"{d.field}: linkaudit reads {short(d.ours)}, lief reads {short(d.theirs)}",
                {"field": d.field, "ours": d.ours, "theirs": d.theirs},
            )
