"""``verneed-mismatch``: a version need names a file that is not a DT_NEEDED entry."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule
from .data import library_stem


class VerneedMismatch(Rule):
    id = "verneed-mismatch"
    formats = ELF_ONLY
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
        "needed": "the file's DT_NEEDED entries (each name once, in file order)",
        "renamed_to": "a DT_NEEDED entry of the same library (same stem, e.g. libnvrtc-1a2b3c4d.so.12): the rename that left vn_file behind; null when none",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            needed = set(binary.needed_names)
            unmatched = [need for need in binary.version_needs if need.file not in needed]
            if not unmatched:
                continue
            by_stem: dict[str, str] = {}
            for name in binary.needed_names:
                by_stem.setdefault(library_stem(name), name)
            for need in unmatched:
                versions = [v.name for v in need.versions]
                # "(libnvrtc.so.12)" would only echo the file name: a library's own version
                listed = "" if versions == [need.file] else f" ({', '.join(versions)})"
                renamed = by_stem.get(library_stem(need.file))
                why = (
                    f"DT_NEEDED has {renamed} instead — a rename that rewrote DT_NEEDED but not vn_file"
                    if renamed
                    else f"no DT_NEEDED entry is {need.file}"
                )
                yield self.finding(
                    binary,
                    need.file,
                    f"version need names {need.file}{listed} but {why}: ld.so aborts with an assertion in "
                    "dl-version.c when loading the file",
                    {
                        "verneed_file": need.file,
                        "versions": versions,
                        "needed": list(dict.fromkeys(binary.needed_names)),
                        "renamed_to": renamed,
                    },
                )
