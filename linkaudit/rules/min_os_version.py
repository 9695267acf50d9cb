"""``min-os-version``: a Mach-O file built for a newer macOS than the ceiling (the macOS analogue of
a glibc symbol-version ceiling)."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import MACOS, VersionCeiling
from ..config.profiles import WheelPolicy
from ..context import AuditContext
from ..model import Format
from ..report import Finding, Severity
from .base import MACHO_ONLY, Rule
from .platform_tag import tag_machines

#: The field of each load command that holds the minimum macOS (``mach-o/loader.h``:
#: ``build_version_command.minos``, ``version_min_command.version``), in ``otool -l``'s words.
_FIELD = {"LC_BUILD_VERSION": "minos", "LC_VERSION_MIN_MACOSX": "version"}

#: The first macOS release for Apple silicon (arm64): 11.0 (Big Sur).
APPLE_SILICON_FIRST = (11, 0)


def _release(text: str) -> tuple[int, ...]:
    """``"11.0.1"`` -> ``(11, 0, 1)``: ASCII digit runs of at most 9 digits only (``str.isdigit``
    alone takes ``"²"``, which ``int`` refuses, and a 5,000-digit run passes ``int``'s limit)."""
    return tuple(int(p) for p in text.split(".") if p.isascii() and p.isdigit() and len(p) <= 9)


class MinOsVersion(Rule):
    id = "min-os-version"
    formats = MACHO_ONLY
    severity = Severity.ERROR
    summary = (
        "a Mach-O file whose minimum macOS (LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX) is above the ceiling "
        "(--max-version macos=11.0)"
    )
    explain = """\
Every Mach-O file records the oldest macOS it runs on (LC_BUILD_VERSION minos,
or LC_VERSION_MIN_MACOSX): dyld refuses to load it on an older system ("built for
macOS 14.0 which is newer than running OS"). A wheel tagged macosx_11_0_arm64
promises macOS 11: every file in it must say 11.0 or lower — what delocate checks.
Give the ceiling with --max-version macos=11.0 or --profile macos-11; a wheel's
own macosx_X_Y tag implies it (a configured ceiling wins). The usual cause is a
dependency (libomp, OpenBLAS) built on the CI machine's newer macOS without
MACOSX_DEPLOYMENT_TARGET.
Each slice is judged by itself: by the lowest tag whose binary format covers
its architecture (macosx_10_9_x86_64.macosx_11_0_arm64), and an arm64 slice
never below 11.0 — no Apple-silicon Mac runs an older macOS, so a
macosx_10_9_universal2 wheel whose arm64 slices say 11.0 keeps its promise.
"""
    evidence = {
        "min_os": "the minimum macOS the file records",
        "load_command": "the load command it records it in: LC_BUILD_VERSION (minos) or LC_VERSION_MIN_MACOSX (version)",
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
                tagged = slice_ceiling(promised, binary.machine)
                if tagged is not None:
                    ceiling, source = tagged[0], f"the platform tag {tagged[1]} of {promised.package}"
            if ceiling is None:
                continue
            ceiling, source = _apple_silicon_floor(ceiling, source, binary.machine)
            if _release(binary.min_os) <= ceiling.version:
                continue
            command = binary.min_os_command or "LC_BUILD_VERSION"
            yield self.finding(
                binary,
                f"macOS {binary.min_os}",
                f"built for macOS {binary.min_os} or later ({command} {_FIELD.get(command, 'minos')}) but the "
                f"ceiling is {ceiling.text}"
                + (f", which {source} promises" if source != "configuration" else "")
                + f": dyld refuses to load it on macOS {'.'.join(map(str, ceiling.version))}",
                {"min_os": binary.min_os, "load_command": command, "ceiling": ceiling.text, "ceiling_source": source},
            )


def slice_ceiling(promised: WheelPolicy, machine: str) -> tuple[VersionCeiling, str] | None:
    """The ceiling a wheel's macOS tags set for a slice of ``machine`` (Apple's spelling,
    ``"arm64e"`` counts as arm64), and the tag it comes from: the lowest release among the tags
    whose binary format covers that architecture (``macosx_10_9_x86_64.macosx_11_0_arm64`` holds an
    x86_64 slice to 10.9 and an arm64 one to 11.0; ``universal2`` covers both); with none covering
    it (``wheel-architecture`` reports that) the lowest tag.  ``None`` for a wheel with no macOS tag.
    Source: packaging's ``mac_platforms`` and ``_mac_binary_formats`` (what pip installs where)."""
    from ..formats.macho import cpu_family  # the Mach-O reader's names, only for Mach-O slices

    family = cpu_family(machine)
    parsed = [(VersionCeiling.parse(_tag_ceiling(t)), t) for t in promised.macos_tags]
    covering = [c for c in parsed if (need := tag_machines(c[1])) is not None and family in need.machines]
    chosen = covering or parsed
    return min(chosen, key=lambda c: c[0].version) if chosen else None


def _tag_ceiling(tag: str) -> str:
    """``"macos=10.9"`` for ``macosx_10_9_universal2``."""
    major, minor = tag.split("_")[1:3]
    return f"{MACOS}={int(major)}.{int(minor)}"


def _apple_silicon_floor(ceiling: VersionCeiling, source: str, machine: str) -> tuple[VersionCeiling, str]:
    """``ceiling`` raised to macOS 11.0 for an arm64 slice: no Mac with Apple silicon runs an older
    macOS, so a ``macosx_10_9_universal2`` wheel's arm64 slices may say 11.0 (the tag promises 10.9
    only where the slice can run).  Other slices keep ``ceiling``."""
    from ..formats.macho import cpu_family

    if cpu_family(machine) != "arm64" or ceiling.version >= APPLE_SILICON_FIRST:
        return ceiling, source
    raised = VersionCeiling.parse(f"{MACOS}=11.0")
    return raised, f"{source} (for arm64 slices macOS 11.0, the first release on Apple silicon)"
