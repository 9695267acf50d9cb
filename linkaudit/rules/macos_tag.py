"""``macos-tag``: a wheel tagged ``macosx_X_Y`` with X ≥ 11 and Y ≠ 0, which no installer selects."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..context import AuditContext
from ..lazyre import LazyPattern
from ..report import Finding, Severity
from .base import MACHO_ONLY, Rule
from .linux_tag import WHEEL_FILE, wheel_tags

_MAC_TAG = LazyPattern(r"macosx_(?P<major>\d{1,4})_(?P<minor>\d{1,4})_(?P<format>\w+)")


def uninstallable(tag: str) -> str | None:
    """The tag installers offer instead of ``tag`` (``"macosx_14_0_arm64"`` for
    ``"macosx_14_2_arm64"``), or ``None`` when ``tag`` is one they offer or no macOS tag.

    From macOS 11 on, each yearly release is a major version and installers list the supported
    tags as ``macosx_X_0`` only, for X from the running release down to 11, then
    ``macosx_10_16`` ... ``macosx_10_0`` (packaging's ``tags.mac_platforms``, which pip, uv and
    installer use), so a minor other than 0 above 10 matches no Mac."""
    match = _MAC_TAG.fullmatch(tag)
    if match is None or int(match["major"]) < 11 or int(match["minor"]) == 0:
        return None
    return f"macosx_{int(match['major'])}_0_{match['format']}"


class MacosTag(Rule):
    id = "macos-tag"
    formats = MACHO_ONLY
    severity = Severity.ERROR
    summary = "a wheel tagged macosx_X_Y with X ≥ 11 and Y ≠ 0: installers offer macOS 11 and later only as macosx_X_0, so it installs nowhere"
    explain = """\
Since macOS 11 every yearly release bumps the major version, and the tags an
installer accepts on a Mac are macosx_X_0 for each major release X from the
running one down to 11, then macosx_10_16 ... macosx_10_0 (packaging's
tags.mac_platforms, used by pip, uv and installer). A wheel tagged
macosx_14_2_arm64 (MACOSX_DEPLOYMENT_TARGET=14.2 passed through as it is)
matches no Mac: pip says "is not a supported wheel on this platform" and falls
back to the sdist. Tag it macosx_14_0_arm64 (delocate and wheel's bdist_wheel
write X_0), and keep its files' minimum macOS at 14.0 (min-os-version).
Reported at PACKAGE!*.dist-info/WHEEL, like linux-tag.
"""
    evidence = {"package": "the wheel", "tags": "its platform tags", "instead": "the tag installers offer"}

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for package, tags in wheel_tags(context):
            for tag in tags:
                instead = uninstallable(tag)
                if instead is None:
                    continue
                yield self.finding(
                    f"{package}!{WHEEL_FILE}",
                    tag,
                    f"{os.path.basename(package)} is tagged {tag}, which no installer selects: for macOS 11 and "
                    f"later they offer macosx_X_0 only (packaging's mac_platforms), so it installs on no Mac — "
                    f"tag it {instead}",
                    {"package": package, "tags": list(tags), "instead": instead},
                )
