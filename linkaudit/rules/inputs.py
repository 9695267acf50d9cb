"""Findings about the inputs themselves, emitted by the audit driver rather than by ``check``."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..report import Finding, Severity
from .base import Rule


class DriverRule(Rule):
    """A rule whose findings the audit driver emits (about the inputs, the configuration or
    the baseline), not ``check``: listed, explained, ignorable and schema-checked like any other."""

    def check(self, context: AuditContext) -> Iterator[Finding]:
        return iter(())


class UnreadableInput(DriverRule):
    id = "unreadable-input"
    severity = Severity.ERROR
    summary = "an input could not be read: missing, unreadable, a symlink loop, not a binary, or malformed"
    explain = """\
An input named on the command line (or found under a directory given) could
not be read as a binary. The message names the file and the reason —
truncated, a header or table pointing past the end of the file, a version
chain that loops, permission denied, a symlink loop, not a binary at all — and,
where one applies, the byte offset of the fault. Every other input is still
audited; the command exits with status 2.
"""
    evidence = {"reason": "why the input could not be read", "offset": "byte offset of the fault, or null"}


class NoBinaries(DriverRule):
    id = "no-binaries"
    severity = Severity.NOTE
    summary = "a directory given holds no binary (a pure-Python package, for instance)"
    explain = """\
A directory given on the command line holds no file whose magic bytes say ELF
(or another supported format). That is normal for a pure-Python package, so it
is a note and the exit status stays 0: a CI step can run linkaudit over every
package without special cases.

A wheel whose platform tag is not `any` (manylinux_2_17_x86_64, win_amd64, ...)
and that holds no binary is a warning: pip installs it only on the platforms the
tag names, and a wheel without compiled code is tagged py3-none-any (auditwheel
refuses it too: "This does not look like a platform wheel"). A file named like a
shared library (*.so, *.so.N, *.dylib, *.dll, *.pyd) that holds no binary is not
passed over: it is an unreadable input (empty, a Git LFS pointer, random bytes),
since the loader will be asked to open it; GNU ld scripts (libc.so) are passed over.
"""
    evidence = {
        "skipped": "files found that are binaries of a format not supported yet",
        "tarballs": "tarballs found in the directory, not audited: give each by name (a directory's note only)",
    }


class LoaderSkipped(Rule):
    id = "loader-skipped"
    needs_loader = True
    severity = Severity.WARNING
    summary = "an input the loader emulation did not load: its loads would pass the bound on memory"
    explain = """\
Each input library no import root reaches is loaded alone, with its whole
closure, as a dlopen in a process of its own. Loads that share a part share it,
so real inputs cost little (/usr/lib/x86_64-linux-gnu's 976 libraries: about
22,000 loaded objects and resolutions), but libraries that all need one another
cost the cube of their number (100 libraries of 1.6 MB, each needing all 100:
a million, 314 MB). The loads of one run may hold 250,000 loaded objects and
resolutions plus one per 4 bytes of input; past that, each input not loaded yet
is listed with this warning and only the per-file rules run for it (its
library-not-found and unresolved-symbol findings are not made). Give the import
roots with --entry (only they are loaded), or audit fewer libraries together.
The dyld emulation likewise stops once its loads have tried 250,000 places in
all: each Mach-O root not loaded by then is listed with this warning, never
reported as a library dyld would not find.
"""
    evidence = {"reason": "why the loader emulation skipped the input"}

    def check(self, context: AuditContext) -> Iterator[Finding]:
        linkage = context.linkage
        for path, reason in (*(linkage.skipped if linkage is not None else ()), *context.image_skipped):
            yield self.finding(path, path, reason, {"reason": reason})


class UnusedSuppression(DriverRule):
    id = "unused-suppression"
    severity = Severity.WARNING
    summary = "a [[suppress]] entry of the configuration file matches no finding: the exception is stale"
    explain = """\
A suppression in linkaudit.toml (or [tool.linkaudit] in pyproject.toml)
documents an accepted exception: a rule, a file glob, an optional subject glob
and the reason. When no finding matches it any more — the library was fixed,
renamed or dropped — the entry is reported so that it is removed: a stale
exception would silently hide the next, different problem with the same name.
"""
    evidence = {
        "rule": "the rule id the suppression names",
        "file": "its file glob",
        "subject": "its subject glob, or null for any",
        "reason": "the reason it gives",
    }


class BaselineFixed(DriverRule):
    id = "baseline-fixed"
    severity = Severity.NOTE
    summary = "a finding recorded in the --baseline file is no longer found: fixed since the baseline"
    explain = """\
check --baseline FILE accepts the findings FILE records (written earlier with
--write-baseline) and fails only on new ones. Each recorded finding that no
longer occurs is listed as this note, so the baseline can be written again and
the fix cannot silently regress later. Fingerprints are (rule, file path
relative to the input given, subject): they survive a build in another
directory.
"""
    evidence = {
        "rule": "the rule id of the recorded finding",
        "file": "its file, relative to the input given",
        "subject": "its subject",
    }


class MoreFindings(DriverRule):
    id = "more-findings"
    severity = Severity.NOTE
    summary = 'a file\'s findings past the per-file cap, as one note: "… and N more" with their counts'
    explain = """\
One file can make a rule say a great deal (a library exporting one name among
thousands of others, a table of tens of thousands of imports): check shows at
most --max-findings-per-file findings per file (1,000 by default; 0 shows all)
and replaces the rest by this note, last among the file's findings, saying how
many there are of each severity and which rules they are of. The file's
unreadable-input findings, then its unsuppressed ones and the most severe are
the ones shown; the summary counts and the exit status are those of every
finding, shown or not, and a --write-baseline file records them all.
"""
    evidence = {
        "count": "how many findings the note stands for",
        "error": "how many of them are errors (not suppressed)",
        "warning": "how many are warnings",
        "note": "how many are notes",
        "suppressed": "how many are suppressed",
        "limit": "the cap: findings shown per file",
        "rules": "the rules of the findings not shown",
    }
