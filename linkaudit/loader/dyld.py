"""dyld, emulated for the Mach-O inputs: which file each dylib load command names, found where, or not.

Pure apart from checking which files exist and reading the candidates found.  Each import root is
loaded breadth first, its load commands in order (``LC_LOAD_DYLIB``, weak, re-export, upward, lazy;
a weak dylib may be missing).  Every slice of a universal root is a root of its own (a Mac of that
CPU loads it), and its machine is the loader's: a dylib found is loaded through its slice of that
machine.  How a name resolves (Apple's ``man dyld``, ``DYLD_LIBRARY_PATH`` and
``DYLD_FALLBACK_LIBRARY_PATH``; dyld's search of an install name):

1. ``DYLD_LIBRARY_PATH`` (``--dyld-library-path``): each directory, with the *leaf name* of the
   install name (its last component), before anything else — also for the names of the shared
   cache and for ``@rpath/`` names;
2. the install name:

   * ``@rpath/X``: each ``LC_RPATH`` of the image that loads it, then of every image above it in
     the load chain up to the root, in that order; an ``@loader_path`` inside an ``LC_RPATH`` is the
     directory of the image that *holds* that ``LC_RPATH``; ``@executable_path`` the main
     executable's directory (an executable root's own; otherwise ``--executable-path``, for a Python
     extension module the interpreter; unset: such entries cannot match);
   * ``@loader_path/X``: the directory of the image that loads it; ``@executable_path/X`` as above;
   * under ``/usr/lib`` and ``/System/Library``: the dyld shared cache, present on every macOS
     (exports unknown); the search stops there;
   * any other path: that path (a relative one is relative to the working directory);

3. ``DYLD_FALLBACK_LIBRARY_PATH`` (``--dyld-fallback-library-path``): each directory, with the
   leaf name.  dyld's default fallback (``/usr/local/lib:/usr/lib`` for binaries older than fall
   2023) is not searched: ``/usr/lib`` is the shared cache, ``/usr/local/lib`` the user's machine.

A candidate that exists but holds no slice of the loader's machine is skipped ("mach-o file, but
is an incompatible architecture"), as is one that is not a Mach-O file ("not a mach-o file"); the
search goes on, and each is recorded with why (``ImageOutcome``).
"""

from __future__ import annotations

import os
import posixpath
from collections import deque
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ..formats.macho import cpu_family
from ..model import Binary, Format, Kind, NeedKind
from .images import (
    ImageAttempt,
    ImageCache,
    ImageLoad,
    ImageLoader,
    ImageOutcome,
    ImageResolution,
    entry_roots,
    load_roots,
)
from .ldso import shown_path

#: Places one load may try before its search stops (a hostile file's thousands of LC_RPATH entries
#: times thousands of @rpath dylibs would be millions of file checks).
MAX_ATTEMPTS = 100_000
#: macOS's ``PATH_MAX`` (``<sys/syslimits.h>``, bytes with the NUL): ``open`` of a longer path fails.
MACOS_PATH_MAX = 1024
#: Places all loads of one run may try together (each input is a root of its own: 20 such files
#: would be two million checks).
MAX_TOTAL_ATTEMPTS = 250_000


class _OverBudget(Exception):
    """A load tried more than ``MAX_ATTEMPTS`` places."""


class _AllOverBudget(_OverBudget):
    """The loads of the run tried more than ``MAX_TOTAL_ATTEMPTS`` places together."""


#: Directories the dyld shared cache covers on every macOS since 11: present, not on disk.
SHARED_CACHE_PREFIXES = ("/usr/lib/", "/System/Library/")


def dyld_reason(attempt: ImageAttempt, machine: str) -> str:
    """Why dyld rejected one place, in the words of its "tried:" list: ``"no such file"``,
    ``"not a mach-o file"``, ``"mach-o file, but is an incompatible architecture (have 'arm64',
    need 'x86_64')"`` or, for a universal file, ``"fat file, but missing compatible architecture
    (have (arm64,i386), need (x86_64))"``.  ``machine`` is the loader's machine (model name)."""
    if attempt.outcome == ImageOutcome.INVALID:
        return "not a mach-o file"
    if attempt.outcome == ImageOutcome.WRONG_MACHINE:
        have, need = list(attempt.machines), machine  # the model spells them as dyld does
        if not attempt.detail.startswith("fat file"):
            return f"mach-o file, but is an incompatible architecture (have '{have[0]}', need '{need}')"
        return f"fat file, but missing compatible architecture (have ({','.join(have)}), need ({need}))"
    if attempt.source == "budget":
        return attempt.detail  # linkaudit's own limit, not dyld's
    if attempt.outcome == ImageOutcome.FOUND:
        return "found"
    return "no such file"


def dyld_failure(kind: str, root: str, install_name: str, context: str = "") -> str:
    """What the user sees when dyld cannot load ``install_name`` for the import root ``root`` of
    ``kind``: ``Library not loaded: NAME`` (with ``context``, e.g. ``" (referenced from ...; tried:
    ...)"``), inside Python's ``ImportError: dlopen(...)`` for an extension module."""
    failure = f"Library not loaded: {install_name}{context}"
    return f"ImportError: dlopen({root}): {failure}" if kind == "python-import" else failure


def _expand(entry: str, loader_dir: str, executable_dir: str | None) -> str | None:
    """``entry`` with a leading ``@loader_path`` / ``@executable_path`` replaced by the directory
    given (``None``: no executable is known).  An empty directory (an image given by a bare
    relative name, ``libfoo.dylib``) is the current one, never the root: ``@loader_path/x`` is
    then ``x``, not ``/x``."""
    if entry.startswith("@loader_path"):
        return posixpath.normpath((loader_dir or ".") + entry[len("@loader_path") :])
    if entry.startswith("@executable_path"):
        if executable_dir is None:
            return None
        return posixpath.normpath((executable_dir or ".") + entry[len("@executable_path") :])
    return entry


def analyze_dyld(
    binaries: Sequence[Binary],
    executable: str | None = None,
    read: Callable[[str], list[Binary]] | None = None,
    library_path: Sequence[str] = (),
    fallback_library_path: Sequence[str] = (),
    entries: Sequence[str] = (),
    skipped: list[tuple[str, str]] | None = None,
) -> list[ImageLoad]:
    """Load each Mach-O import root the way dyld would (the search order is the module's docstring,
    after Apple's ``man dyld``).

    Args:
        binaries: the inputs (Mach-O ones are loaded, every slice of a universal file; others ignored).
        executable: the main executable's path for ``@executable_path`` (``--executable-path``; for
            Python extension modules the interpreter), or ``None``.  An executable root is its own
            main executable.
        read: reads a dylib found outside the inputs (default ``formats.read_path``), every slice.
        library_path: ``DYLD_LIBRARY_PATH`` directories, in order (searched by leaf name first).
        fallback_library_path: ``DYLD_FALLBACK_LIBRARY_PATH`` directories, in order (searched by
            leaf name when the install name is not found).
        entries: the import roots (``--entry``): paths of Mach-O files, every slice of each loaded;
            empty: the defaults below.
        skipped: when given, a root whose load the run's budget stopped (``MAX_TOTAL_ATTEMPTS``)
            is left out and listed here with why, as ELF's ``LinkageAnalysis.skipped`` (a load cut
            short is no evidence of a library dyld would not find); ``None``: found nowhere.

    Returns:
        One ``ImageLoad`` (``loader`` ``ImageLoader.DYLD``, ``machine`` the root slice's) per root:
        the entries, by default every bundle named ``*.so`` (a Python extension module) and
        executable; then every other Mach-O input no root's load reaches (loaded alone, a
        ``dlopen``).  Each import's
        ``ImageResolution`` lists every place tried, with its source and outcome.  Never raises
        for a file it cannot read: such a candidate is ``invalid``.
    """

    macho: dict[str, list[Binary]] = {}
    for b in binaries:
        if b.format is Format.MACHO:
            macho.setdefault(b.path, []).append(b)
    given_executable_dir = posixpath.dirname(executable) if executable else None

    image = ImageCache(macho, read)
    dyld = _Dyld(image, [0, 0], tuple(library_path), tuple(fallback_library_path))

    cut: list[ImageLoad] = []

    def load(root: Binary, kind: str) -> ImageLoad:
        try:
            return _load(root, kind, dyld, given_executable_dir, skipped is not None)
        except _AllOverBudget as stop:
            assert skipped is not None
            skipped.append((root.path, f"not loaded by the dyld emulation: {stop}"))
            cut.append(ImageLoad(root.path, kind, [root.path], machine=root.machine, loader=ImageLoader.DYLD))
            return cut[-1]

    roots = entry_roots(image, entries, Format.MACHO)
    loads = load_roots([b for slices in macho.values() for b in slices], load, roots)
    return [ld for ld in loads if not any(ld is c for c in cut)] if cut else loads


class _Dyld(NamedTuple):
    """What every load of one ``analyze_dyld`` shares: the images read, the search budget (places
    tried in the current load against ``MAX_ATTEMPTS``, in all against ``MAX_TOTAL_ATTEMPTS``),
    DYLD_LIBRARY_PATH and DYLD_FALLBACK_LIBRARY_PATH."""

    image: ImageCache
    budget: list[int]
    library_path: tuple[str, ...]
    fallback_library_path: tuple[str, ...]


def _attempt(image: ImageCache, path: str, source: str, machine: str) -> tuple[ImageAttempt, Binary | None]:
    """One place tried: missing, or the file there with its slice of ``machine``, or why not; a
    path of ``MACOS_PATH_MAX`` bytes or more is never opened on macOS (kept short: ``shown_path``)."""
    if len(path.encode("utf-8", "surrogateescape")) >= MACOS_PATH_MAX:
        why = f"{MACOS_PATH_MAX} bytes or more: longer than macOS's PATH_MAX, never opened (ENAMETOOLONG)"
        return ImageAttempt(shown_path(path), source, ImageOutcome.MISSING, why), None
    if not os.path.isfile(path):
        return ImageAttempt(path, source, ImageOutcome.MISSING), None
    slices = [b for b in image.slices(path) if b.format is Format.MACHO]
    if not slices:
        return ImageAttempt(path, source, ImageOutcome.INVALID, "not a Mach-O file"), None
    # the loader's own architecture first, then a slice of its CPU type under another subtype
    # (x86_64h beside x86_64, arm64e beside arm64)
    family = cpu_family(machine)
    for b in sorted(slices, key=lambda b: b.machine != machine):
        if b.machine == machine or cpu_family(b.machine) == family:
            return ImageAttempt(path, source, ImageOutcome.FOUND), b
    have = tuple(b.machine for b in slices)
    fat = any(b.member is not None for b in slices)  # a universal file, even of one slice
    detail = f"{'fat file: ' if fat else ''}have {','.join(have)}, need {machine}"
    return ImageAttempt(path, source, ImageOutcome.WRONG_MACHINE, detail, have), None


def _search(
    dyld: _Dyld, attempts: list[ImageAttempt], machine: str, candidates: list[tuple[str, str]]
) -> tuple[str, str, Binary] | None:
    """Try the candidates in order, each recorded in ``attempts``; the first usable one.

    Raises:
        _OverBudget: the load has tried more than ``MAX_ATTEMPTS`` places (hostile LC_RPATH lists).
    """
    budget = dyld.budget
    for path, source in candidates:
        budget[0] += 1
        budget[1] += 1
        if budget[0] > MAX_ATTEMPTS:
            raise _OverBudget(f"search stopped: more than {MAX_ATTEMPTS} places tried in this load")
        if budget[1] > MAX_TOTAL_ATTEMPTS:
            raise _AllOverBudget(f"search stopped: more than {MAX_TOTAL_ATTEMPTS} places tried by all loads")
        tried, found = _attempt(dyld.image, path, source, machine)
        attempts.append(tried)
        if found is not None:
            return path, source, found
    return None


def _resolve(
    dyld: _Dyld, name: str, current: Binary, attempts: list[ImageAttempt], result: ImageLoad, executable_dir: str | None
) -> tuple[str, str, Binary] | str | None:
    """DYLD_LIBRARY_PATH, the shared cache (``"shared-cache"``), the install name, then
    DYLD_FALLBACK_LIBRARY_PATH: the first hit, or ``None``."""
    leaf = posixpath.basename(name)
    override = [(posixpath.join(d, leaf), "DYLD_LIBRARY_PATH") for d in dyld.library_path]
    hit = _search(dyld, attempts, result.machine, override)
    if hit is None and name.startswith(SHARED_CACHE_PREFIXES):
        return "shared-cache"
    if hit is None:
        candidates = _install_name_candidates(name, current.path, result, executable_dir)
        hit = _search(dyld, attempts, result.machine, candidates)
    if hit is None:
        fallback = [(posixpath.join(d, leaf), "DYLD_FALLBACK_LIBRARY_PATH") for d in dyld.fallback_library_path]
        hit = _search(dyld, attempts, result.machine, fallback)
    return hit


def _load(
    root: Binary,
    kind: str,
    dyld: _Dyld,
    given_executable_dir: str | None,
    cut_short: bool = False,
) -> ImageLoad:
    """The load of one ``root`` of ``kind``: its imports breadth-first, each by ``_resolve``; a file
    reached by two paths is loaded once (by real path).  ``dyld.budget[0]`` restarts at 0 for the load.

    Raises:
        _AllOverBudget: with ``cut_short``, the run's budget ran out (``analyze_dyld``'s ``skipped``).
    """
    machine = root.machine
    result = ImageLoad(root.path, kind, [root.path], images={root.path: root}, machine=machine, loader=ImageLoader.DYLD)
    executable_dir = posixpath.dirname(root.path) if root.kind is Kind.EXECUTABLE else given_executable_dir
    # dyld loads a file once, whatever path reaches it (symlinked directories): real path -> first path
    loaded = {os.path.realpath(root.path): root.path}
    queue = deque([root])
    dyld.budget[0] = 0
    while queue:
        current = queue.popleft()
        for need in current.needed:
            key = (current.path, need.name)
            name = need.name
            attempts: list[ImageAttempt] = []
            try:
                hit = _resolve(dyld, name, current, attempts, result, executable_dir)
            except _OverBudget as stop:
                if cut_short and isinstance(stop, _AllOverBudget):
                    raise
                attempts.append(ImageAttempt("", "budget", ImageOutcome.MISSING, str(stop)))
                result.record(key, ImageResolution(name, current.path, None, None, tuple(attempts)))
                return result
            if isinstance(hit, str):  # the dyld shared cache
                result.record(key, ImageResolution(name, current.path, None, "shared-cache", tuple(attempts), True))
                continue
            if hit is None:
                result.record(
                    key,
                    ImageResolution(
                        name, current.path, None, None, tuple(attempts), optional=need.kind is NeedKind.WEAK
                    ),
                )
                continue
            path, source, found = hit
            result.record(key, ImageResolution(name, current.path, path, source, tuple(attempts)))
            real = os.path.realpath(path)
            first = loaded.get(real)
            if first is not None:
                if first != path and first in result.images:
                    images = result.images
                    assert isinstance(images, dict)  # the load being built
                    images.setdefault(path, images[first])  # one image, two spellings
                continue
            loaded[real] = path
            added = result.add(path, current.path, found, Format.MACHO)
            if added is not None:
                queue.append(added)
    return result


def _install_name_candidates(
    name: str, requester: str, load: ImageLoad, executable_dir: str | None
) -> list[tuple[str, str]]:
    """The paths an install name stands for, in order, each with its source: the ``LC_RPATH``
    expansions of an ``@rpath/`` name (the requester's, then up the chain), else the one path."""
    candidates: list[tuple[str, str]] = []
    if name.startswith("@rpath/"):
        rest = name[len("@rpath/") :]
        for holder in load.chain(requester)[::-1]:  # the loading image first, then up
            held = load.images.get(holder)
            for entry in held.rpath if held is not None else ():
                base = _expand(entry, posixpath.dirname(holder), executable_dir)
                if base is not None:
                    candidates.append((posixpath.join(base, rest), f"LC_RPATH of {posixpath.basename(holder)}"))
    else:
        path = _expand(name, posixpath.dirname(requester), executable_dir)
        if path is not None:
            candidates.append((path, "install-name"))
    return candidates
