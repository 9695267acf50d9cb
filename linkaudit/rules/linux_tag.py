"""``linux-tag``: a wheel tagged ``linux_*`` only: PyPI refuses it, and it promises no system."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..config.profiles import wheel_platform_tags
from ..context import AuditContext
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule

#: Where a wheel states its tags (PEP 427: ``{name}-{version}.dist-info/WHEEL``), spelled without
#: the version.
WHEEL_FILE = "*.dist-info/WHEEL"


def wheel_tags(context: AuditContext) -> Iterator[tuple[str, tuple[str, ...]]]:
    """``(wheel, its platform tags)`` for each package given (``wheel_platform_tags``: empty for a
    conda package or tarball), in input order; nothing for a build tree or an installed site."""
    staged = context.packages
    for package in staged.packages if staged is not None else ():
        yield package, wheel_platform_tags(package)


class LinuxTag(Rule):
    id = "linux-tag"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "a wheel whose only Linux platform tags are linux_*: PyPI rejects its upload; no manylinux/musllinux policy is promised"
    explain = """\
A wheel built on Linux is tagged linux_x86_64 (linux_aarch64, ...) until a
repair tool (auditwheel repair) checks it against a policy and retags it
manylinux_X_Y_ARCH or musllinux_X_Y_ARCH. PyPI refuses linux_* wheels ("Binary
wheel ... has an unsupported platform tag 'linux_x86_64'"), because such a tag
says nothing of the glibc or musl, the system libraries or the symbol versions
its users must have. Run auditwheel repair (or build in a manylinux/musllinux
image with cibuildwheel). Source: PEP 600, PEP 656; PyPI's upload checks
(warehouse: _valid_platform_tag).
"""
    evidence = {"package": "the wheel", "tags": "its platform tags"}
    # Reported once per wheel, at WHEEL_FILE (a member path without the version: a baseline
    # fingerprint stays the same from one release to the next).

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for package, tags in wheel_tags(context):
            linux = [t for t in tags if t.startswith("linux_")]
            if linux and len(linux) == len([t for t in tags if "linux" in t]):
                yield self.finding(
                    f"{package}!{WHEEL_FILE}",
                    linux[0],
                    f"{os.path.basename(package)} is tagged {'.'.join(tags)}: PyPI rejects linux_* wheels and the "
                    "tag promises no system to load on — auditwheel repair retags it manylinux_X_Y / musllinux_X_Y "
                    "after checking it",
                    {"package": package, "tags": list(tags)},
                )
