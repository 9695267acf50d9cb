"""``rpath-leak``: DT_RPATH / DT_RUNPATH entries that do not travel with the package."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..lazyre import LazyPattern
from ..model import Binary, Format
from ..report import Finding, Severity
from .base import Rule
from .data import PathFragment, RpathData, rpath_data

#: ``$ORIGIN`` or ``${ORIGIN}`` as a whole first component (ld.so's
#: _dl_dst_substitute: the name ends at a character that cannot continue it);
#: ``$ORIGINAL/lib`` is not ``$ORIGIN``.
_ORIGIN = LazyPattern(r"\$(?:ORIGIN|\{ORIGIN\})(?:/|\Z)")
#: Mach-O's image-relative LC_RPATH prefixes (dyld): the $ORIGIN of Apple's loader.
_LOADER_RELATIVE = LazyPattern(r"@(?:loader_path|executable_path)(?:/|\Z)")
#: delocate gives each dylib it vendors into a wheel an install name under ``/DLC/<package>/``
#: (delocating.py ``_make_install_name_ids_unique``), unique in the process on purpose so that two
#: wheels' copies of one library never meet in dyld's list of loaded images; no image is linked
#: against a vendored copy, so that install name is never recorded elsewhere nor searched.
_DELOCATE_INSTALL_NAME = "/DLC/"


def _entries(binary: Binary) -> Iterator[tuple[str, int, str]]:
    """``(tag, index, entry)``: the search-path entries, and for Mach-O the install name and the
    dylibs loaded by path (every dylib load command, whatever its kind), which dyld takes as written."""
    if binary.format is Format.MACHO:
        yield from (("LC_RPATH", i, e) for i, e in enumerate(binary.rpath))
        if binary.soname is not None:
            yield "LC_ID_DYLIB", 0, binary.soname
        yield from (("LC_LOAD_DYLIB", i, n.name) for i, n in enumerate(binary.needed))
        return
    yield from (("DT_RPATH", i, e) for i, e in enumerate(binary.rpath))
    yield from (("DT_RUNPATH", i, e) for i, e in enumerate(binary.runpath))


#: Findings one file gets before the rest are counted in one more (``RpathLeak._file``).
MAX_PER_FILE = 100


class RpathLeak(Rule):
    id = "rpath-leak"
    severity = Severity.WARNING
    summary = "search paths (DT_RPATH/DT_RUNPATH, LC_RPATH) that are absolute (warning) or point into a build tree (error); Mach-O install names and dylib paths of the build machine"
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
/Users/..., /opt/homebrew/... — are judged as above. So are the install name
(LC_ID_DYLIB, a warning: not searched to load the dylib itself, but every image
linked against it later records it, and dyld looks there) and, when they point into a build machine's trees, the dylibs loaded by
path (LC_LOAD_DYLIB and the other dylib load commands; an installed framework
such as /Library/Frameworks/Python.framework is library-not-found's to judge) —
the official torch 2.9.1 macOS wheel ships a libomp.dylib whose install name is
the build machine's /opt/homebrew path.
An install name under /DLC/ is delocate's own, given on purpose to each dylib
it vendors (unique in the process, and nothing links against a vendored copy):
not a leak.

Data: linkaudit/rules/data/rpath.toml.
"""
    evidence = {
        "tag": "DT_RPATH or DT_RUNPATH; Mach-O: LC_RPATH, LC_ID_DYLIB (install name) or LC_LOAD_DYLIB",
        "entry": "the entry as written",
        "index": "position of the entry in the tag's list (0-based; LC_LOAD_DYLIB: among the dylib load commands)",
        "reason": "absolute | build-tree | relative | empty",
        "marker": "the build-tree fragment matched (for build-tree)",
        "marker_what": "what that fragment is (for build-tree)",
        "marker_at": "the fragment as it occurs in the entry: the path up to the end of the component it matched (for build-tree)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        """One finding per search-path entry (and, for Mach-O, install name or dylib path) that does
        not travel with the package; ``$ORIGIN``/``@loader_path``-relative entries, placeholders and
        what dyld resolves on its own are left alone."""
        data = rpath_data()
        for binary in context.binaries:
            yield from self._file(binary, data)

    def _file(self, binary: Binary, data: RpathData) -> Iterator[Finding]:
        """The findings of one file: at most ``MAX_PER_FILE``, then one that counts the rest (a
        RUNPATH of 9,500 absolute entries in 40 files made 380,000 findings, 466 MB from 3.2 MB)."""
        macho = binary.format is Format.MACHO
        count = 0
        first_unlisted: Finding | None = None
        for finding in self._leaks(binary, data, macho):
            count += 1
            if count <= MAX_PER_FILE:
                yield finding
            elif first_unlisted is None:
                first_unlisted = finding
        if first_unlisted is not None:  # its evidence stands for the rest: the first of them
            more = count - MAX_PER_FILE
            yield self.finding(
                binary,
                f"(+{more} more)",
                f"{more} more search-path entries of this file point outside the package, as the "
                f"{MAX_PER_FILE} above (the first: {first_unlisted.subject}); not listed one by one",
                dict(first_unlisted.evidence),
                first_unlisted.severity,
            )

    def _leaks(self, binary: Binary, data: RpathData, macho: bool) -> Iterator[Finding]:
        """Every leaking entry of ``binary`` (``check``'s rules), in order."""
        for tag, index, entry in _entries(binary):
            if _ORIGIN.match(entry) or (macho and _LOADER_RELATIVE.match(entry)):
                continue
            if macho and tag != "LC_RPATH" and _dyld_resolved(entry):
                continue
            if tag == "LC_ID_DYLIB" and entry.startswith(_DELOCATE_INSTALL_NAME):
                continue  # delocate's deliberate install name of a vendored copy
            if entry.startswith("/") and any(p.matches(entry) for p in data.placeholders):
                continue
            marker = next((m for m in data.markers if m.matches(entry)), None)
            if tag == "LC_LOAD_DYLIB" and marker is None:
                continue  # an installed framework (/Library/Frameworks/...): library-not-found judges it
            reason, severity, message = _judge(tag, entry, marker, macho)
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
                    "marker_at": marker.occurrence(entry) if marker and reason == "build-tree" else None,
                    "marker_what": marker.what if marker and reason == "build-tree" else None,
                },
                severity,
            )


def _dyld_resolved(entry: str) -> bool:
    """True for a Mach-O load command path dyld resolves on its own: ``@rpath/`` or the shared
    cache's (``loader.dyld``, imported here: only Mach-O inputs reach it)."""
    from ..loader.dyld import SHARED_CACHE_PREFIXES

    return entry.startswith(("@rpath/", *SHARED_CACHE_PREFIXES))


def _judge(tag: str, entry: str, marker: PathFragment | None, macho: bool) -> tuple[str, Severity, str]:
    """``(reason, severity, message)`` for ``entry`` of ``tag`` that leaks: empty, relative (not to
    ``$ORIGIN``/``@loader_path``), into a build tree (``marker`` matched it) or absolute; for a
    Mach-O install name or dylib path the message adds what dyld then does and the fix."""
    origin = "@loader_path" if macho else "$ORIGIN"
    if entry == "":
        reason, severity = "empty", Severity.WARNING
        message = (
            f"{tag} has an empty entry, which dyld joins to the rest of an @rpath/ name: a directory of no package"
            if macho
            else f"{tag} has an empty entry, which ld.so reads as the current working directory"
        )
    elif not entry.startswith("/"):
        reason, severity = "relative", Severity.WARNING
        message = (
            f"{tag} entry {entry!r} is relative but not to {origin}: it is resolved against "
            "the current working directory"
        )
    elif marker is not None:
        reason, severity = "build-tree", Severity.ERROR
        message = (
            f"{tag} entry {entry!r} points into {marker.what} ({marker.occurrence(entry)}): "
            "a path of the build machine that leaked into the package"
        )
    else:
        reason, severity = "absolute", Severity.WARNING
        message = (
            f"{tag} entry {entry!r} is absolute: the loader searches a directory of the "
            f"user's machine the package does not own; use {origin}-relative paths"
        )
    if tag == "LC_ID_DYLIB" and reason != "relative":
        # The install name is not searched when this dylib is loaded; it is copied into every
        # image linked against it later (an extension built against the package): a warning.
        severity = Severity.WARNING
        message += (
            ". An image linked against this dylib later (an extension built against the package) "
            "records that install name and dyld looks for it there, not in the package: set it "
            f"to @rpath/{entry.rsplit('/', 1)[-1]} (install_name_tool -id)"
        )
    elif tag == "LC_LOAD_DYLIB" and reason != "relative":
        message += ": dyld loads the dylib from exactly that path (install_name_tool -change)"
    return reason, severity, message
