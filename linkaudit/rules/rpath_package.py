"""``rpath-outside-package``: an ``$ORIGIN`` search path of a package member that leads out of its package."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator

from ..context import AuditContext
from ..report import Finding, Severity
from .base import Rule

_ORIGIN = re.compile(r"\$(ORIGIN\b|\{ORIGIN\})")


class RpathOutsidePackage(Rule):
    id = "rpath-outside-package"
    severity = Severity.NOTE
    summary = "an $ORIGIN RPATH/RUNPATH entry of a package member that points out of its package"
    explain = """\
A wheel or conda package may reach libraries another package installs: torch's
libraries carry RPATH $ORIGIN/../../nvidia/cu13/lib, a directory the nvidia-*
wheels install into site-packages. Such an entry works only once that other
package is installed beside it, at the layout it expects; it is a dependency
the loader, not pip or conda, will check.

For each member of a package given (wheel, .conda, .tar.bz2), every DT_RPATH and
DT_RUNPATH entry that starts with $ORIGIN is resolved against the member's place
in the installed layout. An entry that stays inside the package is fine. One that
leaves it is a note naming where it leads and which package given with it
installs files there — or that none does, so the load relies on a package not
audited here (give it too, as in `linkaudit check torch-*.whl nvidia_*.whl`, to
audit the site they make together). An entry that leaves the site-packages or
prefix altogether is named as such, and so is one into the package's own
directories where it installs nothing (a stale build-time entry such as
$ORIGIN/../lib64).

Absolute entries are rpath-leak's.
"""
    evidence = {
        "entry": "the DT_RPATH/DT_RUNPATH entry as written",
        "tag": "DT_RPATH or DT_RUNPATH",
        "points_to": "where it leads, relative to the site-packages or prefix (null: outside it)",
        "provided_by": "the package given that installs files there, or null",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        packages = context.packages
        if packages is None:
            return
        for binary in context.binaries:
            own = packages.package_of(binary.path)
            if own is None:
                continue
            origin = os.path.dirname(binary.path)
            for tag, entries in (("DT_RPATH", binary.rpath), ("DT_RUNPATH", binary.runpath)):
                for entry in entries:
                    match = _ORIGIN.match(entry)
                    if match is None:
                        continue
                    target = os.path.normpath(origin + entry[match.end() :])
                    where = packages.site_of(target)
                    provider = packages.directory_owner(target)
                    if where is not None and provider == own:
                        continue
                    points_to = where[1] if where is not None else None
                    top = os.path.join(where[0], points_to.split("/", 1)[0]) if where and points_to else None
                    if top is not None and provider is None and packages.directory_owner(top) == own:
                        text = (
                            f"points to {points_to}/, inside the package's own directories, where it installs nothing"
                        )
                    elif points_to is None:
                        text = "leads out of the site-packages (or prefix) the package installs into"
                    elif provider is not None:
                        text = f"leads out of the package into {points_to}/, which {provider} installs"
                    else:
                        text = (
                            f"leads out of the package into {points_to}/, which no package given installs: "
                            "the load relies on another package installed beside it"
                        )
                    yield self.finding(
                        binary,
                        entry,
                        f"{tag} entry {entry} {text}",
                        {"entry": entry, "tag": tag, "points_to": points_to, "provided_by": provider},
                    )
