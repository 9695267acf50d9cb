"""``unused-needed``: a DT_NEEDED that provides no symbol the object binds to (what ``ldd -u`` reports)."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..loader.analysis import ROOTS_SHOWN
from ..loader.modelled import is_modelled
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule

#: glibc 2.34 merged these into libc.so.6; they remain as compatibility stubs that
#: define no symbols, so every binary linked against an older glibc NEEDs them and
#: binds nothing to them on a newer one. Needed on the older targets: not findings.
GLIBC_MERGED_STUBS = frozenset({"libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1", "libanl.so.1"})


class UnusedNeeded(Rule):
    id = "unused-needed"
    needs_loader = True
    formats = ELF_ONLY
    severity = Severity.WARNING
    summary = "a DT_NEEDED whose library provides no symbol the object binds to (over-linking)"
    explain = """\
A DT_NEEDED entry costs load time and, worse, makes the library a hard
requirement: if it is missing, the load fails even though nothing is used from
it. This is what `ldd -u` calls an unused direct dependency, computed here
statically from the emulated bindings: no undefined symbol of the object binds
to the library its DT_NEEDED resolved to. Link with -Wl,--as-needed, or fix the
build-system target that drags it in.

Not reported: libraries that glibc 2.34 merged into libc.so.6 (libpthread,
libdl, librt, libutil, libanl), which binaries built for older glibc baselines
must keep; GPU driver libraries (driver-link reports them); a system library of
the target's platform policy known by name only (another machine's libc.so.6:
what it defines is unknown, so it cannot be shown unused). A library loaded
only for its static initialisers (a backend that registers itself) is
legitimately "unused": declare it in a [[required-needed]] entry of
linkaudit.toml, which also fails the build if an as-needed link drops it.

The evidence names the first ten roots (in root order) whose loads hold the
object and counts them all: the DT_NEEDED is the file's own, the same in every
load, and listing each root would make a chain of n libraries name n²/2 roots.
"""
    evidence = {
        "needed": "the DT_NEEDED entry",
        "resolved": "the path it resolved to",
        "roots": "the first loads (in root order, at most 10) in which nothing binds to it",
        "roots_count": "how many loads hold it (each counted once per load)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        linkage = context.linkage
        if linkage is None:
            return
        audited = linkage.audited
        used: dict[tuple[str, str], set[str]] = {}  # (file, provider path) -> roots where used
        for (root, path), bounds in linkage.bindings.items():
            file = audited.get(path)
            if file is not None:
                for b in bounds:
                    if b.provider is not None:
                        used.setdefault((file, b.provider), set()).add(root)
        # (file, needed) -> (paths, number of loads, indices of the first loads)
        candidates: dict[tuple[str, str], tuple[set[str], list[int], set[int]]] = {}
        holders = linkage.holders()
        for part in linkage.parts():
            # every object of the load that was searched for has its DT_NEEDED resolutions here
            held = holders[id(part.part)]
            for (requester, needed), res in part.part.own_resolutions().items():
                file = audited.get(requester)
                if file is None or res.path is None or needed in GLIBC_MERGED_STUBS or is_modelled(res.path):
                    continue
                paths, count, first = candidates.setdefault((file, needed), (set(), [0], set()))
                paths.add(res.path)
                count[0] += held.count
                first.update(held.first)
        required = context.config.required_needed
        staged = frozenset(context.packages.packages) if context.packages is not None else frozenset()
        loads = linkage.loads
        for (file, needed), (paths, count, first) in candidates.items():
            if any(used.get((file, path)) for path in paths):
                continue
            if any(p.applies_to(file, staged) and p.matching((needed,)) for p in required):
                continue  # [[required-needed]]: kept on purpose (static initialisers)
            resolved = sorted(paths)
            yield self.finding(
                file,
                needed,
                f"DT_NEEDED {needed} ({resolved[0]}) provides no symbol this object binds to: an unused "
                "dependency that still has to be found at load time",
                {
                    "needed": needed,
                    "resolved": resolved[0],
                    "roots": sorted({loads[i].root for i in sorted(first)[:ROOTS_SHOWN]}),
                    "roots_count": count[0],
                },
            )
