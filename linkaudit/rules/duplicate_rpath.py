"""``duplicate-rpath``: a Mach-O file with the same LC_RPATH twice."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ..context import AuditContext
from ..model import Format
from ..report import Finding, Severity
from .base import Rule


def _at_least_15(sdk: str | None) -> bool:
    try:
        return sdk is not None and int(sdk.split(".", 1)[0]) >= 15
    except ValueError:
        return False


class DuplicateRpath(Rule):
    id = "duplicate-rpath"
    severity = Severity.WARNING
    summary = "the same LC_RPATH entry twice in a Mach-O file (dyld rejects it since macOS 15.4)"
    explain = """\
Since macOS 15.4, dyld refuses to load a binary built against the macOS 15 SDK
or later that carries the same LC_RPATH entry twice ("duplicate LC_RPATH"):
the import fails outright. Older SDKs' binaries still load, with a warning in
dyld's log — until they are rebuilt with a new SDK. Build systems produce the
duplicate when two targets each add the same -rpath (CMake's INSTALL_RPATH plus
a linker flag; setuptools' runtime_library_dirs plus an extra_link_args).

An error for a binary whose LC_BUILD_VERSION names SDK 15 or later, a warning
otherwise. Fix: remove the duplicate (install_name_tool -delete_rpath, once).
Source: Apple's dyld release notes for macOS 15.4.
"""
    evidence = {
        "entry": "the LC_RPATH entry repeated",
        "count": "how many times it appears",
        "sdk": "the SDK version the binary was built against (LC_BUILD_VERSION), or null",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            if binary.format is not Format.MACHO:
                continue
            for entry, count in Counter(binary.rpath).items():
                if count < 2:
                    continue
                fatal = _at_least_15(binary.sdk)
                yield self.finding(
                    binary,
                    entry,
                    f"LC_RPATH {entry} appears {count} times: dyld on macOS 15.4 and later "
                    + (
                        f"refuses to load this file (built against SDK {binary.sdk})"
                        if fatal
                        else f"refuses such files once built against SDK 15 or later (this one: SDK {binary.sdk})"
                    ),
                    {"entry": entry, "count": count, "sdk": binary.sdk},
                    Severity.ERROR if fatal else None,
                )
