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
    LoadStack,
    entry_roots,
    load_roots,
    push_part,
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
#: The searches ``_lookup`` keeps: of at most this many places each, ...
MEMO_CANDIDATES = 16
#: ... and while those kept hold at most this many places and attempts together.
MEMO_TOTAL = 200_000


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
    share: bool = True,
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
        share: search each install name once per everything that decides it, and load a dylib
            that loads one other dylib as itself on top of that dylib's load (``_closure``);
            ``False`` loads every root afresh (the reference the sharing is tested against).
        skipped: when given, a root whose load the run's budget stopped (``MAX_TOTAL_ATTEMPTS``)
            is left out and listed here with why, as ELF's ``LinkageAnalysis.skipped`` (a load cut
            short is no evidence of a library dyld would not find), and so is a root met once the
            loads hold more than ELF's bound (``images.ImageBudget``); ``None``: neither.

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
    cut_short = skipped is not None
    dyld = _Dyld(
        image, [0, 0, 0], tuple(library_path), tuple(fallback_library_path), share, cut_short, {}, {}, {}, {}, {}
    )
    cut: list[ImageLoad] = []

    def load(root: Binary, kind: str) -> ImageLoad:
        return _root_or_cut(dyld, root, kind, given_executable_dir, skipped, cut)

    slices = [b for each in macho.values() for b in each]
    loads = load_roots(slices, load, entry_roots(image, entries, Format.MACHO), skipped)
    return [ld for ld in loads if not any(ld is c for c in cut)] if cut else loads


def _root_or_cut(
    dyld: _Dyld,
    root: Binary,
    kind: str,
    given_executable_dir: str | None,
    skipped: list[tuple[str, str]] | None,
    cut: list[ImageLoad],
) -> ImageLoad:
    """``_root_load``; when the run's budget stops it (``dyld.cut_short``), the root listed in
    ``skipped`` with why and an empty load appended to ``cut`` (left out of the result)."""
    try:
        return _root_load(dyld, root, kind, given_executable_dir)
    except _AllOverBudget as stop:
        assert skipped is not None
        skipped.append((root.path, f"not loaded by the dyld emulation: {stop}"))
        cut.append(ImageLoad(root.path, kind, [root.path], machine=root.machine, loader=ImageLoader.DYLD))
        return cut[-1]


def _root_load(dyld: _Dyld, root: Binary, kind: str, given_executable_dir: str | None) -> ImageLoad:
    """The load of the import root ``root`` of ``kind``: whole (``share`` off), else a view of its
    shared load (``_closure``).  An executable root is its own ``@executable_path``."""
    executable_dir = posixpath.dirname(root.path) if root.kind is Kind.EXECUTABLE else given_executable_dir
    if not dyld.share:
        return _load(root, kind, dyld, executable_dir, root.machine)
    done = _closure(dyld, root, root.machine, executable_dir)
    if isinstance(done, ImageLoad):  # loaded whole: its containers as they are
        return ImageLoad(
            root.path, kind, done.objects, done.resolutions, done.parents, done.images, root.machine, ImageLoader.DYLD
        )
    stack, level = done
    view = stack.view(root.path, kind, level, root.machine)
    view.loader = ImageLoader.DYLD
    return view


#: A load shared by the roots that load it: computed whole (an ``ImageLoad``), or a level of a ``LoadStack``.
_Shared = ImageLoad | tuple[LoadStack, int]
#: What decides a dylib's load: its path, the loader's machine, the ``@executable_path`` directory.
_LoadKey = tuple[str, str, str | None]
_Hit = tuple[str, str, Binary] | str | None


class _Dyld(NamedTuple):
    """What every load of one ``analyze_dyld`` shares: the images read, the search budget (places
    tried in the current load against ``MAX_ATTEMPTS``, in all against ``MAX_TOTAL_ATTEMPTS``, and
    what the kept searches hold against ``MEMO_TOTAL``),
    DYLD_LIBRARY_PATH and DYLD_FALLBACK_LIBRARY_PATH; when ``share``: each search done, by (install
    name, machine, the places the install name stands for), each dylib's load by ``_LoadKey``, and
    the places that load tried (``spent``; past ``MAX_ATTEMPTS`` when its search stopped), each
    dylib's own part (``parts``, ``_part_of``), each path's real path (``real``); ``cut_short``: the run's budget running out stops the root's load (``_AllOverBudget``)."""

    image: ImageCache
    budget: list[int]
    library_path: tuple[str, ...]
    fallback_library_path: tuple[str, ...]
    share: bool
    cut_short: bool
    searches: dict[tuple[str, str, tuple[tuple[str, str], ...]], tuple[tuple[ImageAttempt, ...], _Hit]]
    loads: dict[_LoadKey, _Shared]
    spent: dict[_LoadKey, int]
    parts: dict[_LoadKey, tuple[ImageLoad, int] | None]
    real: dict[str, str]


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
    dyld: _Dyld, name: str, candidates: list[tuple[str, str]], attempts: list[ImageAttempt], machine: str
) -> _Hit:
    """DYLD_LIBRARY_PATH, the shared cache (``"shared-cache"``), the install name's ``candidates``
    (``_install_name_candidates``), then DYLD_FALLBACK_LIBRARY_PATH: the first hit, or ``None``."""
    leaf = posixpath.basename(name)
    override = [(posixpath.join(d, leaf), "DYLD_LIBRARY_PATH") for d in dyld.library_path]
    hit = _search(dyld, attempts, machine, override)
    if hit is None and name.startswith(SHARED_CACHE_PREFIXES):
        return "shared-cache"
    if hit is None:
        hit = _search(dyld, attempts, machine, candidates)
    if hit is None:
        fallback = [(posixpath.join(d, leaf), "DYLD_FALLBACK_LIBRARY_PATH") for d in dyld.fallback_library_path]
        hit = _search(dyld, attempts, machine, fallback)
    return hit


def _lookup(
    dyld: _Dyld, name: str, candidates: list[tuple[str, str]], attempts: list[ImageAttempt], machine: str
) -> _Hit:
    """``_resolve``, run once per (name, machine, candidates) when sharing: everything else that
    decides it (DYLD_LIBRARY_PATH, the fallback, the files) is the run's.  Only a list of at most
    ``MEMO_CANDIDATES`` places is kept, and while the kept ones hold at most ``MEMO_TOTAL`` places
    and attempts (``dyld.budget[2]``): ``@rpath`` names under a deep chain of ``LC_RPATH`` holders
    stand for a list of places per chain, and keeping each held 4.4 GB for 1,000 dylibs.  A search found again
    counts its places against this load's ``MAX_ATTEMPTS`` (searched afresh when they would pass
    it, to stop where it would), not against the run's ``MAX_TOTAL_ATTEMPTS``: no place is tried twice.

    Raises:
        _OverBudget: as ``_search``; a search stopped is not kept."""
    if not dyld.share or len(candidates) > MEMO_CANDIDATES or dyld.budget[2] > MEMO_TOTAL:
        return _resolve(dyld, name, candidates, attempts, machine)
    key = (name, machine, tuple(candidates))
    done = dyld.searches.get(key)
    if done is not None and dyld.budget[0] + len(done[0]) <= MAX_ATTEMPTS:
        dyld.budget[0] += len(done[0])
        attempts.extend(done[0])
        return done[1]
    own: list[ImageAttempt] = []
    try:
        hit = _resolve(dyld, name, candidates, own, machine)
    finally:
        attempts.extend(own)
    dyld.searches[key] = (tuple(own), hit)
    dyld.budget[2] += len(candidates) + len(own)
    return hit


def _load(root: Binary, kind: str, dyld: _Dyld, executable_dir: str | None, machine: str) -> ImageLoad:
    """The load of one ``root`` of ``kind`` by a loader of ``machine``, whole: its imports
    breadth-first, each by ``_resolve``; a file reached by two paths is loaded once (by real path).
    ``dyld.budget[0]`` restarts at 0 for the load, and ends as the places it tried (past
    ``MAX_ATTEMPTS`` when its search stopped)."""
    result = ImageLoad(root.path, kind, [root.path], images={root.path: root}, machine=machine, loader=ImageLoader.DYLD)
    # dyld loads a file once, whatever path reaches it (symlinked directories): real path -> first path
    loaded = {_real(dyld, root.path): root.path}
    queue = deque([root])
    dyld.budget[0] = 0
    while queue:
        added = _step(queue.popleft(), dyld, result, loaded, executable_dir)
        if added is None:
            dyld.budget[0] = MAX_ATTEMPTS + 1
            break
        queue.extend(added)
    return result


def _step(
    current: Binary, dyld: _Dyld, result: ImageLoad, loaded: dict[str, str], executable_dir: str | None
) -> list[Binary] | None:
    """Resolve the load commands of ``current`` into ``result``, in order; the images they add
    (``loaded``: real path -> first path), or ``None`` when the search stopped (the budget)."""
    out: list[Binary] = []
    bases: list[tuple[str, str]] | None = None  # its chain is set: the same for each @rpath name
    for need in current.needed:
        key = (current.path, need.name)
        name = need.name
        attempts: list[ImageAttempt] = []
        if bases is None and name.startswith("@rpath/"):
            bases = _rpath_bases(current.path, result, executable_dir)
        candidates = _install_name_candidates(name, current.path, result, executable_dir, bases)
        try:
            hit = _lookup(dyld, name, candidates, attempts, result.machine)
        except _OverBudget as stop:
            if dyld.cut_short and isinstance(stop, _AllOverBudget):
                raise  # the root is left out (``analyze_dyld``'s ``skipped``)
            attempts.append(ImageAttempt("", "budget", ImageOutcome.MISSING, str(stop)))
            result.record(key, ImageResolution(name, current.path, None, None, tuple(attempts)))
            return None
        if isinstance(hit, str):  # the dyld shared cache
            result.record(key, ImageResolution(name, current.path, None, "shared-cache", tuple(attempts), True))
            continue
        if hit is None:
            weak = need.kind is NeedKind.WEAK
            result.record(key, ImageResolution(name, current.path, None, None, tuple(attempts), optional=weak))
            continue
        path, source, found = hit
        result.record(key, ImageResolution(name, current.path, path, source, tuple(attempts)))
        real = _real(dyld, path)
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
            out.append(added)
    return out


def _closure(dyld: _Dyld, root: Binary, machine: str, executable_dir: str | None) -> _Shared:
    """``root``'s load: down the dylibs that each load one other (iteratively: a chain of 4,000 is
    no recursion), then each stacked on the next's load, bottom up (``_stack``); each dylib's load
    computed once per ``_LoadKey``."""
    chain: list[tuple[Binary, ImageLoad, int]] = []
    seen: set[str] = set()
    current = root
    while True:
        key = (current.path, machine, executable_dir)
        done = dyld.loads.get(key)
        if done is not None:
            break
        found = _part_of(dyld, current, machine, executable_dir) if current.path not in seen else None
        if found is None:  # loads several dylibs, or a ring came back: loaded whole
            done = _whole(dyld, current, machine, executable_dir)
            break
        seen.add(current.path)
        chain.append((current, *found))
        current = found[0].images[found[0].objects[-1]]
    below_key = key
    for binary, part, spent in reversed(chain):
        key = (binary.path, machine, executable_dir)
        if key not in dyld.loads:
            stacked = _stack(dyld, binary, part, spent, below_key)
            if stacked is None:  # loaded whole: only the root now, the others once they are roots
                return _whole(dyld, root, machine, executable_dir)  # (a ring of K: K² at once before)
            dyld.loads[key], dyld.spent[key] = stacked
        done, below_key = dyld.loads[key], key
    return done


def _whole(dyld: _Dyld, binary: Binary, machine: str, executable_dir: str | None) -> _Shared:
    """``binary``'s load computed whole (``_load``), once, with the places it tried (``spent``)."""
    key = (binary.path, machine, executable_dir)
    if key not in dyld.loads:
        dyld.loads[key] = _load(binary, "", dyld, executable_dir, machine)
        dyld.spent[key] = dyld.budget[0]
    return dyld.loads[key]


def _real(dyld: _Dyld, path: str) -> str:
    """``os.path.realpath(path)``, once per path in the run (dyld loads a file once, whatever path
    reaches it: each load asks it of every image; a ring of 500 dylibs asked it 500,000 times)."""
    real = dyld.real.get(path)
    if real is None:
        real = dyld.real[path] = os.path.realpath(path)
    return real


def _part_of(dyld: _Dyld, binary: Binary, machine: str, executable_dir: str | None) -> tuple[ImageLoad, int] | None:
    """``_part`` and the places it tried, worked out once (a ring's roots each walk it down again)."""
    key = (binary.path, machine, executable_dir)
    if key not in dyld.parts:
        part = _part(dyld, binary, machine, executable_dir)
        dyld.parts[key] = None if part is None else (part, dyld.budget[0])
    return dyld.parts[key]


def _part(dyld: _Dyld, binary: Binary, machine: str, executable_dir: str | None) -> ImageLoad | None:
    """``binary``'s own load commands resolved by a loader of ``machine``, when they find exactly one
    dylib (its slice read as itself) and ``binary`` has no ``LC_RPATH`` (the ``@rpath`` names below
    it would search them: its load is then not that dylib's with it on top): its part of its load,
    ``objects`` ending with that dylib; else ``None``.  ``dyld.budget[0]``: the places it tried."""
    if binary.rpath:
        return None
    part = ImageLoad(binary.path, "", [binary.path], images={binary.path: binary}, machine=machine)
    dyld.budget[0] = 0
    added = _step(binary, dyld, part, {_real(dyld, binary.path): binary.path}, executable_dir)
    hits = [res for res in part.resolutions.values() if res.path is not None]
    if added is None or len(added) != 1 or len(hits) != 1 or len(part.images) != 2 or added[0].path != hits[0].path:
        return None
    return part


def _stack(dyld: _Dyld, binary: Binary, part: ImageLoad, spent: int, below_key: _LoadKey) -> tuple[_Shared, int] | None:
    """``binary``'s load and the places it tried: ``part`` on top of the load of the dylib it loads,
    unless that load reaches ``binary``'s own file (there it would be found loaded already) or the
    two together pass ``MAX_ATTEMPTS`` (then ``None``: it is loaded whole).  A whole load becomes
    level 0 of a stack when the first load stacks on it."""
    below, total = dyld.loads[below_key], spent + dyld.spent[below_key]
    if isinstance(below, ImageLoad):
        stack = LoadStack()
        below = stack, stack.push(below, {_real(dyld, p) for p in below.images})
    stack, level = below
    if stack.names.get(_real(dyld, binary.path), level + 1) <= level or total > MAX_ATTEMPTS:
        return None
    return push_part(stack, level, part, lambda _own: {_real(dyld, binary.path)}), total


def _rpath_bases(requester: str, load: ImageLoad, executable_dir: str | None) -> list[tuple[str, str]]:
    """The directories an ``@rpath/`` name of ``requester`` is looked for in, in order, each with its
    source: every ``LC_RPATH`` of the requester, then of each image up its chain, expanded (the
    same for every load command of the requester: worked out once per image, ``_step``)."""
    bases: list[tuple[str, str]] = []
    for holder in load.chain(requester)[::-1]:  # the loading image first, then up
        held = load.images.get(holder)
        for entry in held.rpath if held is not None else ():
            base = _expand(entry, posixpath.dirname(holder), executable_dir)
            if base is not None:
                bases.append((base, f"LC_RPATH of {posixpath.basename(holder)}"))
    return bases


def _install_name_candidates(
    name: str,
    requester: str,
    load: ImageLoad,
    executable_dir: str | None,
    bases: list[tuple[str, str]] | None = None,
) -> list[tuple[str, str]]:
    """The paths an install name stands for, in order, each with its source: the ``LC_RPATH``
    expansions of an ``@rpath/`` name (the requester's, then up the chain: ``bases``, when the
    caller has them from ``_rpath_bases``), else the one path."""
    candidates: list[tuple[str, str]] = []
    if name.startswith("@rpath/"):
        rest = name[len("@rpath/") :]
        for base, source in bases if bases is not None else _rpath_bases(requester, load, executable_dir):
            candidates.append((posixpath.join(base, rest), source))
    else:
        path = _expand(name, posixpath.dirname(requester), executable_dir)
        if path is not None:
            candidates.append((path, "install-name"))
    return candidates
