"""``dlopen-name``: library names the code may pass to ``dlopen`` that will not load as meant."""

from __future__ import annotations

import bisect
import os
import posixpath
import re
from collections.abc import Callable, Iterator, Sequence

from ..context import AuditContext
from ..loader.ldso import Attempt, Requester, origin_of, search
from ..model import Binary
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule
from .data import library_stem

_UNVERSIONED = re.compile(r".*\.so")


class DlopenName(Rule):
    id = "dlopen-name"
    formats = ELF_ONLY
    severity = Severity.WARNING
    summary = (
        "a library name in .rodata (a dlopen candidate) that is unversioned for the driver, or lost to a hash rename"
    )
    explain = """\
Libraries reach optional dependencies with dlopen(): the GPU driver (libcuda.so.1,
libnvidia-ml.so.1), plugins, backends. Those names are not in DT_NEEDED; linkaudit
reads them from the file's .rodata (never the whole file) as NUL-terminated
lib*.so[.N] strings — soft dependencies, shown by `show` — and resolves each as
ld.so would resolve a dlopen() from that file (its DT_RPATH/DT_RUNPATH, the
cache, the system directories).

Two mistakes are reported:
- an unversioned name of a driver library (dlopen("libcuda.so")) in a file that
  does not also name the versioned one: only libcuda.so.1 is guaranteed by the
  driver; libcuda.so is the toolkit's link-time stub or a -dev package's symlink,
  absent on most user machines (NVIDIA's own libraries keep both names, the
  unversioned one as a fallback after the versioned: not reported);
- a name that resolves nowhere while a hash-renamed copy sits in a directory
  the search tried (libnvrtc-1a2b3c4d.so.13 next to the dlopen()ing library):
  a wheel-repair tool (auditwheel, delocate, delvewheel) renamed the file and
  patched DT_NEEDED, but cannot patch a string the code builds or keeps; the
  dlopen fails at run time. Keep the library unrenamed (exclude it from the
  repair) or load it through the DT_NEEDED.
Names that simply resolve nowhere (optional plugins, other platforms' libraries)
are not findings.
"""
    evidence = {
        "name": "the library name found in .rodata",
        "problem": "unversioned-driver-name | hash-renamed-sibling | too-many-names (a note: names past MAX_NAMES_PER_FILE not searched)",
        "resolved": "where a dlopen() from this file finds it, or null",
        "sibling": "the hash-renamed file found beside a search directory (hash-renamed-sibling)",
        "tried": "directories searched",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        linkage = context.linkage
        ctx = linkage.search_context if linkage is not None else None
        listings: dict[str, list[str]] = {}  # directory -> its sorted entries, listed once per check
        for binary in context.binaries:
            if not binary.dlopen_names:
                continue
            if ctx is None:
                continue
            ordered = sorted(binary.dlopen_names)  # a name's versioned forms follow it: found by bisection
            names, unchecked = _names_to_check(binary.dlopen_names, ctx.is_driver)
            if unchecked:
                yield self._unchecked(binary, names, unchecked)
            for name in names:
                unversioned = bool(_UNVERSIONED.fullmatch(name))
                driver = ctx.is_driver(name)
                requester = Requester(binary.path, binary, None, origin_of(binary.path))
                res, _found = search(name, requester, None, {}, ctx)
                versioned_too = _names_versioned(ordered, name)
                if driver and unversioned and not versioned_too:
                    # (a file that also names the versioned library tries it first: a fallback)
                    yield self.finding(
                        binary,
                        name,
                        f"dlopen name {name!r} is unversioned: the GPU driver installs only versioned names (such "
                        f"as libcuda.so.1); {name} is a toolkit's link-time stub or a -dev package's symlink, "
                        "absent on most machines — dlopen the versioned name",
                        {
                            "name": name,
                            "problem": "unversioned-driver-name",
                            "resolved": res.path,
                            "sibling": None,
                            "tried": _directories(res.attempts),
                        },
                    )
                    continue
                if res.found or driver or (unversioned and versioned_too):
                    continue
                sibling = _hash_renamed_sibling(
                    name, [posixpath.dirname(a.path) for a in res.attempts], ctx.fs.host_path, listings
                )
                if sibling is not None:
                    yield self.finding(
                        binary,
                        name,
                        f"dlopen name {name!r} resolves nowhere, but {sibling} sits in a directory the search "
                        "tried: a wheel-repair tool renamed the library and the name in the code still says "
                        f"{name}; the dlopen fails at run time",
                        {
                            "name": name,
                            "problem": "hash-renamed-sibling",
                            "resolved": None,
                            "sibling": sibling,
                            "tried": _directories(res.attempts),
                        },
                    )

    def _unchecked(self, binary: Binary, names: Sequence[str], unchecked: int) -> Finding:
        """The note counting a file's library names past ``MAX_NAMES_PER_FILE`` (not searched for)."""
        return self.finding(
            binary,
            f"(+{unchecked} more)",
            f"{len(binary.dlopen_names)} library names in .rodata: the first {MAX_NAMES_PER_FILE} (and every "
            f"GPU driver name) were searched for, {unchecked} more were not — no real library holds so many",
            {
                "name": _first_unchecked(binary, names),
                "problem": "too-many-names",
                "resolved": None,
                "sibling": None,
                "tried": [],
            },
            Severity.NOTE,
        )


#: Library names of one file searched for, at most (every GPU driver name besides): each search tries
#: a directory list; 200,000 names in a 2.5 MB file took 19.7 s and 388 MB (real libraries hold tens).
MAX_NAMES_PER_FILE = 1000


def _first_unchecked(binary: Binary, names: Sequence[str]) -> str:
    """The first library name of ``binary`` not among the ``names`` searched for."""
    searched = set(names)
    return next(n for n in binary.dlopen_names if "/" not in n and n not in searched)


def _names_to_check(names: Sequence[str], is_driver: Callable[[str], bool]) -> tuple[list[str], int]:
    """The names of a file to search for (no ``/``: a path is not searched) — the first
    ``MAX_NAMES_PER_FILE``, and every driver name after them — and how many were left out."""
    bare = [n for n in names if "/" not in n]
    kept = bare[:MAX_NAMES_PER_FILE] + [n for n in bare[MAX_NAMES_PER_FILE:] if is_driver(n)]
    return kept, len(bare) - len(kept)


def _directories(attempts: Sequence[Attempt]) -> list[str]:
    """The directories the search tried, sorted, each once; an attempt by name alone (a system
    library outside the target's policy) names none (it showed as an empty first entry)."""
    return sorted({d for a in attempts if (d := posixpath.dirname(a.path))})


def _hash_renamed_sibling(
    name: str,
    directories: list[str],
    host_path: Callable[[str], str],
    listings: dict[str, list[str]] | None = None,
) -> str | None:
    """A file named like ``name`` with a wheel-repair hash (``libfoo-1a2b3c4d.so.N``) in one of ``directories``.

    ``listings`` keeps each directory's sorted entries between calls (one ``listdir`` per directory
    and check, however many names search it); only entries starting ``<stem>-`` meet the pattern.
    """
    stem = library_stem(name)
    suffix = name[len(stem) :]
    pattern: re.Pattern[str] | None = None  # compiled once an entry starts <stem>- (rare): not per name
    listings = {} if listings is None else listings
    start = stem + "-"
    for directory in dict.fromkeys(directories):
        entries = listings.get(directory)
        if entries is None:
            WORK["listdir"] += 1
            try:
                entries = sorted(os.listdir(host_path(directory)))
            except OSError:
                entries = []
            listings[directory] = entries
        for at in range(bisect.bisect_left(entries, start), len(entries)):  # the entries starting <stem>-
            entry = entries[at]
            if not entry.startswith(start):
                break
            if pattern is None:
                pattern = re.compile(
                    re.escape(stem) + r"-[0-9a-f]{8}" + re.escape(suffix.split(".so", 1)[0]) + r"\.so(?:\.[0-9]+)*"
                )
            if pattern.fullmatch(entry):
                return posixpath.join(directory, entry)
    return None


def _names_versioned(ordered: list[str], name: str) -> bool:
    """True when the sorted ``ordered`` names hold a versioned form of ``name`` (``name.N...``): by
    bisection, not a scan per name (20,000 names in .rodata took 59 s)."""
    prefix = name + "."
    at = bisect.bisect_left(ordered, prefix)
    return at < len(ordered) and ordered[at].startswith(prefix)


#: Directories listed by ``_hash_renamed_sibling`` in this process (the counting test).
WORK = {"listdir": 0}
