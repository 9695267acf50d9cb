"""``rpath-outside-package``: an ``$ORIGIN`` search path of package members that leads out of their package."""

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
    summary = "an $ORIGIN RPATH/RUNPATH entry of package members that points out of their package"
    explain = """\
A wheel or conda package may reach libraries another package installs: torch's
libraries carry RPATH $ORIGIN/../../nvidia/cu13/lib, a directory the nvidia-*
wheels install into site-packages. Such an entry works only once that other
package is installed beside it, at the layout it expects; it is a dependency
the loader, not pip or conda, will check.

For each member of a package given (wheel, .conda, .tar.bz2), every DT_RPATH and
DT_RUNPATH entry that starts with $ORIGIN is resolved against the member's place
in the installed layout. An entry that stays inside the package is fine. One that
leaves it is a note — one per package and entry, naming the members that carry
it — saying where it leads: no package given installs files there, so the load
relies on a package not audited here (give it too, as in `linkaudit check
torch-*.whl nvidia_*.whl`, to audit the site they make together). An entry into
a directory that a package given with it installs is no note: the loads through
it are audited, as in the installed site of those packages (undeclared-dependency
says whether the package declares the one it reaches). An entry that leaves the site-packages or prefix altogether is
named as such, and so is one into the package's own directories where it
installs nothing (a stale build-time entry such as $ORIGIN/../lib64).

Absolute entries are rpath-leak's.
"""
    evidence = {
        "entry": "the DT_RPATH/DT_RUNPATH entry as written",
        "tag": "DT_RPATH or DT_RUNPATH",
        "points_to": "where it leads from the first member, relative to the site-packages or prefix (null: outside it)",
        "members": "every member of the package that carries the entry and leads there",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        packages = context.packages
        if packages is None:
            return
        # (package, tag, entry, where it leads) -> members, in input order
        groups: dict[tuple[str, str, str, str | None], list[str]] = {}
        texts: dict[tuple[str, str, str, str | None], str] = {}
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
                    providers = packages.directory_owners(target)
                    if where is not None and providers:
                        # its own directory, or one another package given installs: resolved and
                        # audited here, as in the site these packages make (no note there either)
                        continue
                    points_to = where[1] if where is not None else None
                    key = (own, tag, entry, points_to)
                    groups.setdefault(key, []).append(binary.path)
                    if key in texts:
                        continue
                    top = os.path.join(where[0], points_to.split("/", 1)[0]) if where and points_to else None
                    if top is not None and own in packages.directory_owners(top):
                        text = (
                            f"points to {points_to}/, inside the package's own directories, where it installs nothing"
                        )
                    elif points_to is None:
                        text = "leads out of the site-packages (or prefix) the package installs into"
                    else:
                        text = (
                            f"leads out of the package into {points_to}/, which no package given installs: "
                            "the load relies on another package installed beside it"
                        )
                    texts[key] = text
        for key, members in groups.items():
            _own, tag, entry, points_to = key
            text = texts[key]
            carried = f" (carried by {len(members)} members of the package)" if len(members) > 1 else ""
            yield self.finding(
                members[0],
                entry,
                f"{tag} entry {entry} {text}{carried}",
                {"entry": entry, "tag": tag, "points_to": points_to, "members": members},
            )
