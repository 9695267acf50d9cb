"""``forbidden-needed`` and ``required-needed``: the project's own policy on the libraries each
file depends on (ELF ``DT_NEEDED``, PE imported DLLs, Mach-O dylib load commands), from the
configuration file (``[[forbidden-needed]]``, ``[[required-needed]]``); without entries they
report nothing."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..model import Format, Kind
from ..report import Finding, Severity
from .base import Rule
from .terms import dropped_dependency, needed_entry


class ForbiddenNeeded(Rule):
    id = "forbidden-needed"
    severity = Severity.ERROR
    summary = "a file NEEDs a library the configuration forbids it ([[forbidden-needed]], with its reason)"
    explain = """\
Configured in linkaudit.toml: files matching a glob must not depend on a library
matching another glob (an ELF DT_NEEDED entry, a PE imported DLL, a Mach-O dylib
load command), and each entry says why. The example of the field:
libnvrtc-builtins.so.12.x is private to libnvrtc — it has no compatibility
guarantee across CUDA minor versions — so nothing but libnvrtc may link it:

    [[forbidden-needed]]
    file = "*"
    needed = "libnvrtc-builtins.so*"
    reason = "private to libnvrtc: no compatibility across CUDA minor versions"

Fix the link line (or the CMake target) that names the library.
"""
    evidence = {
        "needed": "the forbidden dependency (DT_NEEDED entry, imported DLL or dylib load command)",
        "pattern": "the glob of the configuration entry",
        "reason": "the reason the entry gives",
        "entry": "which entry of the configuration file",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        policies = context.config.forbidden_needed
        if not policies:
            return
        staged = frozenset(context.packages.packages) if context.packages is not None else frozenset()
        for binary in context.binaries:
            for policy in policies:
                if not policy.applies_to(binary.display_path, staged):
                    continue
                for needed in policy.matching(binary.needed_names, fold_case=binary.format is Format.PE):
                    yield self.finding(
                        binary,
                        needed,
                        f"{needed_entry(binary.format)} {needed}, which {policy.where} forbids: {policy.reason}",
                        {"needed": needed, "pattern": policy.needed, "reason": policy.reason, "entry": policy.where},
                    )


class RequiredNeeded(Rule):
    id = "required-needed"
    severity = Severity.ERROR
    summary = "a file lacks a dependency the configuration requires ([[required-needed]], with its reason)"
    explain = """\
Configured in linkaudit.toml: files matching a glob must depend on a library
matching another glob (an ELF DT_NEEDED entry, a PE imported DLL, a Mach-O dylib
load command). The case it exists for: an application that relies on a backend
library registering itself from its static initialisers uses no symbol of it,
so the link silently drops the dependency and the backend is simply not there
at run time — ELF: a link with -Wl,--as-needed; PE: the linker emits no import
for a DLL nothing is referenced from; Mach-O: -dead_strip_dylibs:

    [[required-needed]]
    file = "*/libtorch.so"
    needed = "libtorch_cuda.so"
    reason = "the CUDA backend registers itself from static initialisers"

A library an entry requires is never reported as unused-needed. Fix: ELF, link
it with -Wl,--no-as-needed around it (or -Wl,--push-state,--no-as-needed); PE,
/INCLUDE:symbol naming a symbol the DLL exports forces its import; Mach-O,
-needed_library (-Wl,-needed-lNAME).
"""
    evidence = {
        "pattern": "the glob of the required dependency",
        "needed": "the file's dependencies, in order (DT_NEEDED entries, imported DLLs or dylib load commands)",
        "reason": "the reason the entry gives",
        "entry": "which entry of the configuration file",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        policies = context.config.required_needed
        if not policies:
            return
        staged = frozenset(context.packages.packages) if context.packages is not None else frozenset()
        for binary in context.binaries:
            if binary.kind in (Kind.RELOCATABLE, Kind.CORE, Kind.OTHER):
                continue  # no dependencies to have
            for policy in policies:
                pe = binary.format is Format.PE
                if policy.applies_to(binary.display_path, staged) and not policy.matching(
                    binary.needed_names, fold_case=pe
                ):
                    yield self.finding(
                        binary,
                        policy.needed,
                        f"no {needed_entry(binary.format)} matches {policy.needed}, which {policy.where} requires: "
                        f"{policy.reason} ({dropped_dependency(binary.format)})",
                        {
                            "pattern": policy.needed,
                            "needed": list(binary.needed_names),
                            "reason": policy.reason,
                            "entry": policy.where,
                        },
                    )
