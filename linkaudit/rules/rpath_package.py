"""``rpath-outside-package``: an ``$ORIGIN`` search path of package members that leads out of their package."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Protocol

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

For each member of a package given (wheel, .conda, .tar.bz2) or of a distribution
installed in a site given (its RECORD, or a conda prefix's conda-meta), every DT_RPATH and
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
        layouts: list[_Layout] = [context.packages] if context.packages is not None else []
        sites = context.installation.site_layout() if context.installation is not None else None
        layouts += [sites] if sites is not None else []
        # (package, tag, entry, where it leads) -> members, in input order; and the words for it
        groups: dict[tuple[str, str, str, str | None], list[str]] = {}
        texts: dict[tuple[str, str, str, str | None], str] = {}
        for binary in context.binaries:
            layout, own = next(((lay, o) for lay in layouts if (o := lay.package_of(binary.path))), (None, None))
            if layout is None or own is None:
                continue
            for tag, entries in (("DT_RPATH", binary.rpath), ("DT_RUNPATH", binary.runpath)):
                for entry in entries:
                    judged = _judge(layout, own, binary.path, entry)
                    if judged is not None:
                        key = (own, tag, entry, judged[0])
                        groups.setdefault(key, []).append(binary.path)
                        texts.setdefault(key, judged[1])
        for key, members in groups.items():
            _own, tag, entry, points_to = key
            carried = f" (carried by {len(members)} members of the package)" if len(members) > 1 else ""
            yield self.finding(
                members[0],
                entry,
                f"{tag} entry {entry} {texts[key]}{carried}",
                {"entry": entry, "tag": tag, "points_to": points_to, "members": members},
            )


class _Layout(Protocol):
    """Who installs what: ``packages.Staged`` (packages given) or ``packages.site.SiteLayout`` (a site)."""

    def package_of(self, path: str) -> str | None: ...
    def site_of(self, path: str) -> tuple[str, str] | None: ...
    def directory_owners(self, path: str) -> list[str]: ...


def _judge(layout: _Layout, own: str, path: str, entry: str) -> tuple[str | None, str] | None:
    """``(where entry leads, relative to the site-packages or prefix; the words for it)`` for the
    member ``path`` of package ``own``, or ``None``: not an ``$ORIGIN`` entry, or one into a
    directory a package installs (its own, or another given: resolved and audited here)."""
    match = _ORIGIN.match(entry)
    if match is None:
        return None
    target = os.path.normpath(os.path.dirname(path) + entry[match.end() :])
    where = layout.site_of(target)
    if where is None:
        return None, "leads out of the site-packages (or prefix) the package installs into"
    if layout.directory_owners(target):
        return None
    points_to = where[1]
    if own in layout.directory_owners(os.path.join(where[0], points_to.split("/", 1)[0])):
        return points_to, f"points to {points_to}/, inside the package's own directories, where it installs nothing"
    return points_to, (
        f"leads out of the package into {points_to}/, which no package given installs: "
        "the load relies on another package installed beside it"
    )
