"""``forbidden-needed`` and ``required-needed``: the project's own DT_NEEDED policy, from the
configuration file (``[[forbidden-needed]]``, ``[[required-needed]]``); without entries they
report nothing."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..model import Kind
from ..report import Finding, Severity
from .base import Rule


class ForbiddenNeeded(Rule):
    id = "forbidden-needed"
    severity = Severity.ERROR
    summary = "a file NEEDs a library the configuration forbids it ([[forbidden-needed]], with its reason)"
    explain = """\
Configured in linkaudit.toml: files matching a glob must not have a DT_NEEDED
entry matching another glob, and each entry says why. The example of the field:
libnvrtc-builtins.so.12.x is private to libnvrtc — it has no compatibility
guarantee across CUDA minor versions — so nothing but libnvrtc may link it:

    [[forbidden-needed]]
    file = "*"
    needed = "libnvrtc-builtins.so*"
    reason = "private to libnvrtc: no compatibility across CUDA minor versions"

Fix the link line (or the CMake target) that names the library.
"""
    evidence = {
        "needed": "the forbidden DT_NEEDED entry",
        "pattern": "the glob of the configuration entry",
        "reason": "the reason the entry gives",
        "entry": "which entry of the configuration file",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        policies = context.config.forbidden_needed
        if not policies:
            return
        for binary in context.binaries:
            for policy in policies:
                if not policy.applies_to(binary.display_path):
                    continue
                for needed in policy.matching(binary.needed_names):
                    yield self.finding(
                        binary,
                        needed,
                        f"DT_NEEDED names {needed}, which {policy.where} forbids: {policy.reason}",
                        {"needed": needed, "pattern": policy.needed, "reason": policy.reason, "entry": policy.where},
                    )


class RequiredNeeded(Rule):
    id = "required-needed"
    severity = Severity.ERROR
    summary = "a file lacks a DT_NEEDED the configuration requires ([[required-needed]], with its reason)"
    explain = """\
Configured in linkaudit.toml: files matching a glob must have a DT_NEEDED
entry matching another glob. The case it exists for: an application that
relies on a backend library registering itself from its static initialisers
uses no symbol of it, so a link with -Wl,--as-needed silently drops the
DT_NEEDED and the backend is simply not there at run time:

    [[required-needed]]
    file = "*/libtorch.so"
    needed = "libtorch_cuda.so"
    reason = "the CUDA backend registers itself from static initialisers"

A library an entry requires is never reported as unused-needed. Fix: link it
with -Wl,--no-as-needed around it (or -Wl,--push-state,--no-as-needed).
"""
    evidence = {
        "pattern": "the glob of the required DT_NEEDED entry",
        "needed": "the file's DT_NEEDED entries, in order",
        "reason": "the reason the entry gives",
        "entry": "which entry of the configuration file",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        policies = context.config.required_needed
        if not policies:
            return
        for binary in context.binaries:
            if binary.kind in (Kind.RELOCATABLE, Kind.CORE, Kind.OTHER):
                continue  # no DT_NEEDED to have
            for policy in policies:
                if policy.applies_to(binary.display_path) and not policy.matching(binary.needed_names):
                    yield self.finding(
                        binary,
                        policy.needed,
                        f"no DT_NEEDED entry matches {policy.needed}, which {policy.where} requires: {policy.reason} "
                        "(an -Wl,--as-needed link drops a library used only for its static initialisers)",
                        {
                            "pattern": policy.needed,
                            "needed": list(binary.needed_names),
                            "reason": policy.reason,
                            "entry": policy.where,
                        },
                    )
