"""``rpath-leak``: DT_RPATH / DT_RUNPATH entries that do not travel with the package."""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..context import AuditContext
from ..model import Format
from ..report import Finding, Severity
from .base import Rule
from .data import rpath_data

#: ``$ORIGIN`` or ``${ORIGIN}`` as a whole first component (ld.so's
#: _dl_dst_substitute: the name ends at a character that cannot continue it);
#: ``$ORIGINAL/lib`` is not ``$ORIGIN``.
_ORIGIN = re.compile(r"\$(?:ORIGIN|\{ORIGIN\})(?:/|\Z)")
#: Mach-O's image-relative LC_RPATH prefixes (dyld): the $ORIGIN of Apple's loader.
_LOADER_RELATIVE = re.compile(r"@(?:loader_path|executable_path)(?:/|\Z)")


class RpathLeak(Rule):
    id = "rpath-leak"
    severity = Severity.WARNING
    summary = "DT_RPATH/DT_RUNPATH entries that are absolute (warning) or point into a build tree (error)"
    explain = """\
A search path written into a library travels with it. Only entries relative to
$ORIGIN (the directory of the library itself, ld.so(8)) stay right when the
package is installed somewhere else. An absolute entry (/usr/local/lib,
/opt/vendor/lib) makes the loader look on the user's machine at a directory
the package does not own: a warning. An entry that points into the build
machine's own trees (/home/..., /tmp/..., .../build/..., conda-bld,
build_artifacts, a CUDA toolkit's lib64/stubs) is a leak: an error — at best a
wasted search, at worst a stale or hostile library picked up on a machine where
the path exists, and a stubs directory would hand the loader a fake libcuda.

A relative entry that does not start with $ORIGIN (or an empty entry, which
means the current directory) is resolved against the process's working
directory: a warning, since it finds different files depending on where the
program starts.

conda-build's host prefix (.../_h_env_placehold_placehold...) and conda's
legacy /opt/anaconda1anaconda2anaconda3 are rewritten at install time and are
not leaks. Markers match whole path components (/stubs matches lib64/stubs, not
/usr/lib/stubsfoo). Fix with patchelf --set-rpath '$ORIGIN/...' or the build's
CMAKE_INSTALL_RPATH / -Wl,-rpath,'$ORIGIN/...'.

Mach-O: LC_RPATH entries under @loader_path or @executable_path are the
image-relative form (dyld's $ORIGIN); absolute ones — a build machine's
/Users/..., /opt/homebrew/... — are judged as above.

Data: linkaudit/rules/data/rpath.toml.
"""
    evidence = {
        "tag": "DT_RPATH or DT_RUNPATH (LC_RPATH for Mach-O)",
        "entry": "the entry as written",
        "index": "position of the entry in the tag's list (0-based)",
        "reason": "absolute | build-tree | relative | empty",
        "marker": "the build-tree fragment matched (for build-tree)",
        "marker_what": "what that fragment is (for build-tree)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        data = rpath_data()
        for binary in context.binaries:
            macho = binary.format is Format.MACHO
            for tag, entries in (("LC_RPATH" if macho else "DT_RPATH", binary.rpath), ("DT_RUNPATH", binary.runpath)):
                for index, entry in enumerate(entries):
                    if _ORIGIN.match(entry) or (macho and _LOADER_RELATIVE.match(entry)):
                        continue
                    if entry.startswith("/") and any(p.matches(entry) for p in data.placeholders):
                        continue
                    marker = next((m for m in data.markers if m.matches(entry)), None)
                    if entry == "":
                        reason, severity = "empty", Severity.WARNING
                        message = f"{tag} has an empty entry, which ld.so reads as the current working directory"
                    elif not entry.startswith("/"):
                        reason, severity = "relative", Severity.WARNING
                        message = (
                            f"{tag} entry {entry!r} is relative but not to $ORIGIN: it is resolved against "
                            "the current working directory"
                        )
                    elif marker is not None:
                        reason, severity = "build-tree", Severity.ERROR
                        message = (
                            f"{tag} entry {entry!r} points into {marker.what} ({marker.fragment}): "
                            "a path of the build machine that leaked into the package"
                        )
                    else:
                        reason, severity = "absolute", Severity.WARNING
                        message = (
                            f"{tag} entry {entry!r} is absolute: the loader searches a directory of the "
                            "user's machine the package does not own; use $ORIGIN-relative paths"
                        )
                    yield self.finding(
                        binary,
                        entry,
                        message,
                        {
                            "tag": tag,
                            "entry": entry,
                            "index": index,
                            "reason": reason,
                            "marker": marker.fragment if marker and reason == "build-tree" else None,
                            "marker_what": marker.what if marker and reason == "build-tree" else None,
                        },
                        severity,
                    )
