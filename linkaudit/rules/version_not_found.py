"""``version-not-found``: a version need that the resolved provider does not define."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ..context import AuditContext
from ..loader.analysis import would_fail
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule, preview


class VersionNotFound(Rule):
    id = "version-not-found"
    needs_loader = True
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "a symbol version an audited object needs is not defined by the library its DT_NEEDED resolves to"
    explain = """\
At load time ld.so checks every version need of every loaded object against the
object its file resolved to (glibc elf/dl-version.c, _dl_check_map_versions and
match_version): each Vernaux of a Verneed record must be among the provider's
version definitions, or loading fails with "version `GLIBC_2.34' not found
(required by libX.so)". Entries flagged VER_FLG_WEAK only warn; a provider
without any symbol versioning satisfies every need. The check covers needs
that no symbol uses.

This rule applies to the audited objects (not to the system libraries they
resolve to), and says which file the need names, which path that resolved to,
and the symbols that carry the missing version. It differs from symbol-version,
which compares versions with a declared baseline: this one compares them with
what the loader would actually find — a copy of a library older than the one
linked against, or another package's copy loaded first under the same SONAME
(an RTLD_GLOBAL dlopen, an RPATH that finds the wrong copy).
"""
    evidence = {
        "version": "the version not defined",
        "file": "the verneed file (a DT_NEEDED name)",
        "provider": "the path that file resolved to",
        "symbols": "references that carry the version",
        "roots": "roots whose load fails this way",
        "would_fail": "what the user would see",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        linkage = context.linkage
        if linkage is None:
            return
        grouped: dict[tuple[str, str, str, str], list[str]] = {}
        for root, failure in linkage.version_failures:
            key = (failure.object, failure.file, failure.provider, failure.version)
            grouped.setdefault(key, [])
            if root not in grouped[key]:
                grouped[key].append(root)
        kinds = {ld.root: ld.kind for ld in linkage.loads}
        symbols_of = {(f.object, f.file, f.provider, f.version): f.symbols for _r, f in linkage.version_failures}
        for key, roots in grouped.items():
            obj, file, provider, version = key
            symbols = list(symbols_of[key])
            name = obj.rsplit("/", 1)[-1]
            ld_message = f"{file}: version `{version}' not found (required by {name})"
            evidence: dict[str, Any] = {
                "version": version,
                "file": file,
                "provider": provider,
                "symbols": symbols,
                "roots": roots,
                "would_fail": would_fail(kinds[roots[0]], roots[0], ld_message),
            }
            message = f"{ld_message}: {file} resolves to {provider}, which does not define {version}"
            if symbols:
                message += f" (needed by {preview(symbols, 3)})"
            else:
                message += " (needed by no symbol; ld.so checks it all the same)"
            yield self.finding(linkage.audited.get(obj, obj), version, message, evidence)
