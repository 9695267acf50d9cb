"""``wheel-libc``: an ELF file linked against the other C library than its wheel's Linux tag
promises — musl in a ``manylinux`` wheel (PEP 600: glibc systems), glibc in a ``musllinux`` one
(PEP 656: musl systems).

The file's C library is what ``formats.elf`` reads from it: its PT_INTERP (``ld-musl-*`` or
``ld-linux-*``), else the DT_NEEDED that names a C library (``libc.musl-ARCH.so.1`` or
``libc.so.6``).  Neither loader can load the other's objects: glibc finds no
``libc.musl-x86_64.so.1``; a musl system has no ``libc.so.6``, and glibc cannot be vendored.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..config.profiles import wheel_platform_tags
from ..context import AuditContext
from ..model import Binary, Format, Libc
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule

#: The C library each Linux tag family promises (PEP 600, PEP 656; manylinux1/2010/2014 are glibc's).
_FAMILY = (("manylinux", Libc.GLIBC), ("musllinux", Libc.MUSL))


def tag_libc(tag: str) -> Libc | None:
    """The C library a platform tag promises (``manylinux_2_17_x86_64`` -> glibc), or ``None``."""
    return next((libc for prefix, libc in _FAMILY if tag.startswith(prefix)), None)


def _linked_by(binary: Binary) -> str:
    """What says which C library ``binary`` uses: its PT_INTERP or the DT_NEEDED naming it."""
    if binary.interpreter:
        return f"PT_INTERP {binary.interpreter}"
    for n in binary.needed:
        if n.name == "libc.so.6" or n.name.startswith("libc.musl-") or n.name == "libc.so":
            return f"DT_NEEDED {n.name}"
    return f"DT_SONAME {binary.soname}" if binary.soname else "its dynamic section"


class WheelLibc(Rule):
    id = "wheel-libc"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "an ELF file linked against another C library than its wheel's tag promises: musl in a manylinux wheel, glibc in a musllinux one"
    explain = """\
A manylinux wheel promises glibc systems (PEP 600), a musllinux wheel musl
systems (PEP 656). An extension or library built against the other C library
cannot load there: glibc's ld.so finds no libc.musl-x86_64.so.1 ("cannot open
shared object file"), and a musl system has no libc.so.6 — glibc cannot be
vendored into the wheel either. It happens when a wheel is assembled from two
builds, or built on the host and tagged by hand. Build each wheel in its own
image (cibuildwheel's manylinux and musllinux images) or tag it for the C
library it was built against. The file's C library is read from its PT_INTERP,
else from the DT_NEEDED that names a C library. auditwheel ignores such a file
("ignoring: ... with musl libc") and so does not catch it.
"""
    evidence = {
        "package": "the wheel",
        "tag": "the wheel's platform tag the file breaks",
        "libc": "the C library the file is linked against: glibc or musl",
        "linked_by": "what says so: the file's PT_INTERP, or the DT_NEEDED naming the C library",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        staged = context.packages
        if staged is None or not any(map(wheel_platform_tags, staged.package_names())):
            return  # no wheel staged
        for binary in context.binaries:
            if binary.format is not Format.ELF or binary.libc not in (Libc.GLIBC, Libc.MUSL):
                continue
            package = staged.package_of(binary.path)
            tags = wheel_platform_tags(package) if package is not None else ()
            # pip installs the wheel wherever any of its tags matches: each must hold
            broken = next((t for t in tags if tag_libc(t) not in (None, binary.libc)), None)
            if broken is not None and package is not None:
                yield self._finding(binary, package, broken)

    def _finding(self, binary: Binary, package: str, tag: str) -> Finding:
        by = _linked_by(binary)
        if binary.libc is Libc.MUSL:
            consequence = (
                "on the glibc systems it promises the import fails (glibc's ld.so finds no musl C library: "
                "cannot open shared object file) — build it in a manylinux image, or tag the wheel musllinux"
            )
        else:
            consequence = (
                "musl systems have no glibc and it cannot be vendored: the import fails — build it in a "
                "musllinux image, or tag the wheel manylinux"
            )
        return self.finding(
            binary,
            binary.libc.value,
            f"linked against {binary.libc.value} ({by}) but {os.path.basename(package)} is tagged {tag}: {consequence}",
            {"package": package, "tag": tag, "libc": binary.libc.value, "linked_by": by},
        )
