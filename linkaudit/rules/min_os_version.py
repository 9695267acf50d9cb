"""``min-os-version``: a Mach-O file built for a newer macOS than the ceiling (the macOS analogue of
a glibc symbol-version ceiling)."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import MACOS, VersionCeiling
from ..context import AuditContext
from ..model import Format
from ..report import Finding, Severity
from .base import Rule


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())


class MinOsVersion(Rule):
    id = "min-os-version"
    severity = Severity.ERROR
    summary = "a Mach-O file whose minimum macOS (LC_BUILD_VERSION) is above the ceiling (--max-version macos=11.0)"
    explain = """\
Every Mach-O file records the oldest macOS it runs on (LC_BUILD_VERSION minos,
or LC_VERSION_MIN_MACOSX): dyld refuses to load it on an older system ("built for
macOS 14.0 which is newer than running OS"). A wheel tagged macosx_11_0_arm64
promises macOS 11: every file in it must say 11.0 or lower — what delocate checks.
Give the ceiling with --max-version macos=11.0 or --profile macos-11; a wheel's
own macosx_X_Y tag implies it (a configured ceiling wins). The usual cause is a
dependency (libomp, OpenBLAS) built on the CI machine's newer macOS without
MACOSX_DEPLOYMENT_TARGET.
"""
    evidence = {
        "min_os": "the minimum macOS the file records",
        "ceiling": "the ceiling exceeded (macos=11.0)",
        "ceiling_source": "configuration, or the wheel platform tag that implies it",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        configured = next((c for c in context.config.max_versions if c.prefix == MACOS), None)
        for binary in context.binaries:
            if binary.format is not Format.MACHO or not binary.min_os:
                continue
            ceiling, source = configured, "configuration"
            promised = context.wheel_policies.get(binary.path)
            if ceiling is None and promised is not None:
                tagged = [VersionCeiling.parse(c) for c in promised.ceilings if c.startswith(MACOS + "=")]
                if tagged:
                    ceiling, source = tagged[0], f"the platform tag {promised.tag} of {promised.package}"
            if ceiling is None or _release(binary.min_os) <= ceiling.version:
                continue
            yield self.finding(
                binary,
                f"macOS {binary.min_os}",
                f"built for macOS {binary.min_os} or later (LC_BUILD_VERSION minos) but the ceiling is "
                f"{ceiling.text}"
                + (f", which {source} promises" if source != "configuration" else "")
                + f": dyld refuses to load it on macOS {'.'.join(map(str, ceiling.version))}",
                {"min_os": binary.min_os, "ceiling": ceiling.text, "ceiling_source": source},
            )
