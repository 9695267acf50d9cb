"""``duplicate-rpath``: a Mach-O slice with the same LC_RPATH twice, judged as dyld judges it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from ..context import AuditContext
from ..model import Binary, Format
from ..report import Finding, Severity
from .base import MACHO_ONLY, Rule

#: The SDK from which dyld refuses a duplicate LC_RPATH, by dyld release (``mach_o/Policy.cpp``,
#: ``Policy::enforceNoDuplicateRPaths``: the slice's SDK epoch against fall 2024 in macOS 15.0-15.3,
#: spring 2025 from 15.4, fall 2025 on macOS 26).  The lowest is the gate: some macOS refuses the slice.
ENFORCED_FROM_SDK = (15, 0)


def sdk_numbers(sdk: str | None) -> tuple[int, ...] | None:
    """``"15.4"`` -> ``(15, 4)``; ``None`` when the slice records no SDK or it is not numeric."""
    try:
        return tuple(int(n) for n in sdk.split(".")) if sdk else None
    except ValueError:
        return None


def enforced(sdk: str | None) -> bool:
    """True when dyld refuses a duplicate LC_RPATH in a slice built against ``sdk``: SDK 15.0 or
    later, and an SDK of 0 or none at all — what GCC-driven links leave — which dyld reads as the
    newest epoch (a 0.0 version maps past every release), so every release enforces it."""
    numbers = sdk_numbers(sdk)
    if numbers is None or not any(numbers):
        return True
    return numbers >= ENFORCED_FROM_SDK


def _sdk_words(sdk: str | None) -> str:
    if sdk is None:
        return "records no SDK (no LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX)"
    numbers = sdk_numbers(sdk)
    if numbers is not None and not any(numbers):
        return f"records SDK {sdk}, as GCC-driven links leave it"
    return f"was built against SDK {sdk}"


def _message(binary: Binary, entry: str, count: int) -> str:
    slice_words = f"this {binary.machine} slice (minimum macOS {binary.min_os or 'unknown'}) {_sdk_words(binary.sdk)}"
    head = f"LC_RPATH {entry} appears {count} times; {slice_words}: "
    refusal = f"dyld refuses to load it (\"duplicate LC_RPATH '{entry}'\")"
    if not enforced(binary.sdk):
        return head + (
            "dyld loads it today, but refuses it once it is relinked against SDK 15 or later (as an Xcode "
            "update does) — remove the duplicate now"
        )
    if any(sdk_numbers(binary.sdk) or ()):
        return head + f"{refusal}: its SDK is past dyld's gate (SDK 15.0, 15.4 from macOS 15.4, 26 on macOS 26)"
    return head + f"{refusal} on macOS 15.4 and later: a slice whose SDK is 0 or absent is always held to the rule"


class DuplicateRpath(Rule):
    id = "duplicate-rpath"
    formats = MACHO_ONLY
    severity = Severity.WARNING
    summary = (
        "the same LC_RPATH entry twice in a Mach-O slice (dyld refuses it by the slice's SDK, or when the SDK is 0)"
    )
    explain = """\
dyld refuses to load a Mach-O image that carries the same LC_RPATH entry twice
("duplicate LC_RPATH '@loader_path'"), and the import or launch fails outright,
when the image's SDK is new enough: dyld's Policy::enforceNoDuplicateRPaths
(mach_o/Policy.cpp) compares the SDK recorded in LC_BUILD_VERSION against a
release epoch — SDK 15.0 in macOS 15.0-15.3, 15.4 from macOS 15.4, 26 on
macOS 26. A slice whose SDK field is 0, or that records no SDK at all, is
always refused: dyld reads version 0 as the newest epoch. GCC-driven links
leave the SDK 0 (cctools-port and ld64 invoked by GCC), which is why GCC-built
zstd and conda-forge's libgfortran stopped loading on macOS 15.4
(facebook/zstd#4369, tpoechtrager/cctools-port#166).

Each slice of a universal file is judged with its own SDK and minimum OS (both
in the evidence). An error when dyld refuses the slice; a warning for an older
SDK: dyld loads it today, and refuses it once it is relinked against SDK 15 or
later. Build systems produce the duplicate when two targets add the same -rpath
(CMake's INSTALL_RPATH plus a linker flag; setuptools' runtime_library_dirs
plus extra_link_args). Fix: remove the duplicate (install_name_tool
-delete_rpath, once), or link it once.
"""
    evidence = {
        "entry": "the LC_RPATH entry repeated",
        "count": "how many times it appears",
        "machine": "the slice's architecture (x86_64, arm64...)",
        "sdk": "the SDK the slice records (LC_BUILD_VERSION / LC_VERSION_MIN_MACOSX), or null when none",
        "min_os": "the slice's minimum macOS, or null",
        "enforced": "true when dyld refuses the slice: SDK 15.0 or later, or SDK 0 or none",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            if binary.format is not Format.MACHO:
                continue
            for entry, count in Counter(binary.rpath).items():
                if count < 2:
                    continue
                fatal = enforced(binary.sdk)
                yield self.finding(
                    binary,
                    entry,
                    _message(binary, entry, count),
                    {
                        "entry": entry,
                        "count": count,
                        "machine": binary.machine,
                        "sdk": binary.sdk,
                        "min_os": binary.min_os,
                        "enforced": fatal,
                    },
                    Severity.ERROR if fatal else None,
                )
