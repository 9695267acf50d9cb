"""``verneed-mismatch``: a version need names a file that is not a DT_NEEDED entry."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..report import Finding, Severity
from .base import Rule


class VerneedMismatch(Rule):
    id = "verneed-mismatch"
    severity = Severity.ERROR
    summary = "a .gnu.version_r entry names a file that is not among the DT_NEEDED entries"
    explain = """\
Each Verneed record of .gnu.version_r names the file (vn_file) that must
provide a set of symbol versions, and that name must be one of the object's
DT_NEEDED entries: at load time glibc's _dl_check_map_versions
(elf/dl-version.c) looks the file up among the loaded dependencies by that name
and aborts with "Inconsistency detected by ld.so: dl-version.c: ...
Assertion `needed != NULL' failed!" when it is not there.

This is what a careless rename of a dependency leaves behind: an old patchelf
--replace-needed that rewrote DT_NEEDED but not vn_file, or a wheel-repair tool
grafting libfoo-1a2b3c4d.so.1 in place of libfoo.so.1. Rename with a current
patchelf (0.18 or later rewrites both), or rebuild.
"""
    evidence = {
        "verneed_file": "the vn_file name with no DT_NEEDED entry",
        "versions": "versions needed from it",
        "needed": "the file's DT_NEEDED entries",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            needed = set(binary.needed_names)
            for need in binary.version_needs:
                if need.file in needed:
                    continue
                versions = [v.name for v in need.versions]
                yield self.finding(
                    binary,
                    need.file,
                    f"version need names {need.file} ({', '.join(versions)}) but no DT_NEEDED entry is "
                    f"{need.file}: ld.so aborts with an assertion in dl-version.c when loading the file",
                    {"verneed_file": need.file, "versions": versions, "needed": list(binary.needed_names)},
                )
