"""The Windows loader, emulated for the PE inputs: which DLL each import names, found where, or not.

Pure apart from reading the directories it searches (case-insensitively, as Windows compares
names).  Each import root is loaded breadth first, its DLLs' plain imports in table order;
delay-load imports are not loaded with the image (they are resolved at the first call).

The search order (Microsoft, "Dynamic-link library search order"; Python 3.8+ ``os.add_dll_directory``
and the extension-module loader, which calls ``LoadLibraryExW`` with
``LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR``):

* a Python extension module (``.pyd``): the directory of that ``.pyd`` — for the whole load: a
  dependency's own directory is not searched for its dependencies —, then the directories given
  with ``--dll-directory`` (``os.add_dll_directory``), then System32;
* an executable (the standard search order, safe DLL search mode on): its own directory (the
  application directory), System32, the Windows directory, the current directory (not emulated:
  unknown before the program runs), then the ``PATH`` directories (``--path``).  Its imports are
  loaded before any of its code runs, so ``os.add_dll_directory`` cannot reach them: the
  ``--dll-directory`` directories are not searched for it;
* any other DLL, loaded alone (``LoadLibraryEx`` with the flags of a ``.pyd``, as ``ctypes`` does):
  its own directory, then as for a ``.pyd``.  ``PATH`` is searched for neither.

A DLL found but built for another machine than the root's (an i386 DLL for an x86-64 ``.pyd``) is
skipped and the search goes on; when nothing else is found the load fails with
``ERROR_BAD_EXE_FORMAT`` ("%1 is not a valid Win32 application"), which the attempts, recorded
``wrong-machine`` with both machines, explain.

System32 is not searched on disk: the DLLs of ``rules/data/windows.toml`` — Windows' own, the
Universal CRT, the API sets (``api-ms-win-*``, ``ext-ms-*``) and those every CPython ships beside
``python.exe`` — count as present; any other name is not found there.  A DLL already loaded is
matched by base name (``--preload-dll`` loads some first, as PyTorch's ``__init__`` does).
"""

from __future__ import annotations

import fnmatch
import functools
import os
import posixpath
import re
from collections import deque
from collections.abc import Callable, Sequence

from ..model import Binary, Format, NeedKind
from .images import (
    ImageAttempt,
    ImageCache,
    ImageLoad,
    ImageOutcome,
    ImageResolution,
    LoadStack,
    entry_roots,
    load_roots,
    push_part,
)


@functools.cache
def _system() -> tuple[frozenset[str], re.Pattern[str]]:
    """The system DLL names (lower-cased) and one pattern matching every wildcard name of
    ``rules/data/windows.toml`` (``fnmatch`` patterns, compiled together once)."""
    from ..rules.data import _load

    data = _load("windows")
    names = frozenset(n.lower() for n in [*data["system_dlls"]] if "*" not in n)
    patterns = [p.lower() for p in [*data["python_dlls"], *data["api_set_patterns"]]]
    return names, re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns) or "(?!)")


@functools.cache
def _redistributable() -> frozenset[str]:
    from ..rules.data import _load

    return frozenset(n.lower() for n in _load("windows").get("redistributable", []))


def is_redistributable(name: str) -> bool:
    """True for a DLL of the Microsoft Visual C++ Redistributable (``msvcp140.dll``...), which
    neither Windows nor python.org's CPython provides (``rules/data/windows.toml``)."""
    return name.lower() in _redistributable()


def windows_failure(kind: str, root: str, dll: str, wrong_machine: bool = False) -> str:
    """What the user sees when Windows cannot load ``dll`` for the import root ``root`` of ``kind``
    (``python-import``, ``executable``, ``dlopen``): Python's ImportError, the dialog of an
    executable that cannot start, or ``LoadLibrary``'s error — ERROR_MOD_NOT_FOUND, or
    ERROR_BAD_EXE_FORMAT / STATUS_INVALID_IMAGE_FORMAT when only a DLL of another machine was found."""
    reason = "%1 is not a valid Win32 application." if wrong_machine else "The specified module could not be found."
    if kind == "python-import":
        module = posixpath.basename(root).split(".", 1)[0]
        return f"ImportError: DLL load failed while importing {module}: {reason}"
    if kind == "executable" and wrong_machine:
        return f"{root} cannot start: The application was unable to start correctly (0xc000007b) ({dll})"
    if kind == "executable":
        return f"The code execution cannot proceed because {dll} was not found ({root})"
    return f"LoadLibrary({root}) fails: {reason[:-1]} ({dll})"


@functools.lru_cache(maxsize=1 << 16)
def is_system_dll(name: str) -> bool:
    """True for a DLL every Windows process can load (``rules/data/windows.toml``); answered once
    per name (a ring of 1,000 DLLs asked it a million times, seven ``fnmatch`` calls each)."""
    names, patterns = _system()
    low = name.lower()
    return low in names or patterns.match(low) is not None


def _find(directory: str, name: str, listing: dict[str, dict[str, str]]) -> str | None:
    """``directory/NAME`` matched without case, or ``None``."""
    entries = listing.get(directory)
    if entries is None:
        try:
            with os.scandir(directory) as it:
                entries = {e.name.lower(): e.name for e in it if e.is_file()}
        except OSError:
            entries = {}
        listing[directory] = entries
    found = entries.get(name.lower())
    return posixpath.join(directory, found) if found else None


def analyze_windows(
    binaries: Sequence[Binary],
    dll_directories: Sequence[str] = (),
    preload: Sequence[str] = (),
    read: Callable[[str], list[Binary]] | None = None,
    path: Sequence[str] = (),
    entries: Sequence[str] = (),
    share: bool = True,
    skipped: list[tuple[str, str]] | None = None,
) -> list[ImageLoad]:
    """Load each PE import root the way Windows would (the search order is the module's docstring,
    after Microsoft's "Dynamic-link library search order").

    Args:
        binaries: the inputs (PE ones are loaded; others ignored).
        dll_directories: ``os.add_dll_directory`` directories, in order (a ``.pyd``, a DLL loaded alone).
        preload: base names of DLLs already loaded (``--preload-dll``).
        read: reads a DLL found outside the inputs (default ``formats.read_path``).
        path: the ``PATH`` directories, in order (``--path``): searched for an executable's imports
            only, last (never for a ``.pyd``'s: ``LOAD_LIBRARY_SEARCH_DEFAULT_DIRS`` leaves it out).
        entries: the import roots (``--entry``): paths of PE files; empty: the defaults below.
        share: search each name once per search order and machine, and load a DLL that imports
            one other DLL as itself on top of that DLL's load (``_Loader``); ``False`` loads every
            root afresh (the reference the sharing is tested against: the same loads).
        skipped: when given, the loads are bounded as ELF's (``images.ImageBudget``): a root met
            past the bound is not loaded but listed here with why (a ring of 2,000 DLLs, each its
            own root, held 8 million images and resolutions); ``None``: unbounded.

    Returns:
        One ``ImageLoad`` (``machine`` the root's) per root: the entries, by default every ``.pyd``
        and executable; then every other DLL no root's load reaches (loaded alone, as a
        ``dlopen``).  Each import's
        ``ImageResolution`` lists every place tried; a DLL of another machine is ``wrong-machine``
        and the search goes on.  Never raises for a file it cannot read.
    """

    pe = [b for b in binaries if b.format is Format.PE]
    loader = _Loader(ImageCache({b.path: [b] for b in pe}, read), preload, share)

    def load(root: Binary, kind: str) -> ImageLoad:
        return loader.load(root, kind, _search_order(root, kind, path, dll_directories))

    return load_roots(pe, load, entry_roots(loader.image, entries, Format.PE), skipped)


#: The directories searched for a root's imports, each with its source (``_search_order``).
_Dirs = tuple[tuple[str | None, str], ...]
#: A DLL's load under one search order: computed whole (an ``ImageLoad``), or a level of a ``LoadStack``.
_Shared = ImageLoad | tuple[LoadStack, int]
_Hit = tuple[tuple[ImageAttempt, ...], tuple[str, str, Binary | None] | None]


def _search_order(root: Binary, kind: str, path: Sequence[str], dll_directories: Sequence[str]) -> _Dirs:
    """The directories searched for this root's imports, each with its source; ``None`` is
    System32 (and the Windows directory), where only the system DLLs count as present."""
    base = posixpath.dirname(root.path) or "."
    if kind == "executable":
        # The standard order: application directory, System32, the Windows directory, the
        # current directory (not emulated: unknown), PATH.
        return ((base, "application-directory"), (None, "system"), *((d, "PATH") for d in path))
    return ((base, "dll-load-dir"), *((d, "dll-directory") for d in dll_directories), (None, "system"))


class _Loader:
    """The Windows loader over one run's inputs, sharing what does not depend on the root.

    A search depends on the name, the directories searched and the root's machine only: each is run
    once (``searches``).  A DLL whose plain imports find one DLL (the others system DLLs, missing, or
    already loaded) loads as itself on top of that DLL's load under the same search order — its
    breadth-first load is its own imports, then that DLL's — unless that load looks up the DLL's own
    name (there it would be found already loaded: first loaded wins, so loads compose only when
    everything that decides them is identical; issue 14).  Such a load stores its own part only
    (``LoadStack``): K DLLs each importing the next are K parts, not K²/2 images.  ``loads``: each
    DLL's load per (path, search order, machine), computed once.
    """

    def __init__(self, image: ImageCache, preload: Sequence[str], share: bool) -> None:
        self.image = image
        self.preload = {p.lower(): p for p in preload}
        self.share = share
        self.listing: dict[str, dict[str, str]] = {}
        self.searches: dict[tuple[str, _Dirs, str], _Hit] = {}
        self.loads: dict[tuple[str, _Dirs, str], _Shared] = {}
        self.parts: dict[tuple[str, _Dirs, str], ImageLoad | None] = {}

    def search(self, name: str, dirs: _Dirs, machine: str) -> _Hit:
        """``_search``, run once per (name, directories, machine) when sharing."""
        if not self.share:
            return _search(name, dirs, machine, self.listing, self.image)
        key = (name, dirs, machine)
        hit = self.searches.get(key)
        if hit is None:
            hit = self.searches[key] = _search(name, dirs, machine, self.listing, self.image)
        return hit

    def load(self, root: Binary, kind: str, dirs: _Dirs) -> ImageLoad:
        """The load of ``root`` as an import root of ``kind`` searching ``dirs``."""
        if not self.share:
            return _load(root, kind, dirs, self)
        done = self._closure(root, dirs)
        if isinstance(done, ImageLoad):  # loaded whole, stacked on by none: its containers as they are
            return ImageLoad(
                root.path, kind, done.objects, done.resolutions, done.parents, done.images, machine=root.machine
            )
        stack, level = done
        return stack.view(root.path, kind, level, root.machine)

    def _closure(self, root: Binary, dirs: _Dirs) -> _Shared:
        """``root``'s load under ``dirs``: down the DLLs that each import one other (iteratively: a
        chain of 4,000 is no recursion), then each stacked on the next's load, bottom up."""
        chain: list[tuple[Binary, ImageLoad]] = []
        seen: set[str] = set()
        current = root
        while True:
            done = self.loads.get((current.path, dirs, current.machine))
            if done is not None:
                break
            part = self._part(current, dirs) if current.path not in seen else None
            if part is None:  # imports several DLLs, or a ring came back: loaded whole
                done = self._whole(current, dirs)
                break
            seen.add(current.path)
            chain.append((current, part))
            current = part.images[part.objects[-1]]
        for binary, part in reversed(chain):
            key = (binary.path, dirs, binary.machine)
            stacked = self.loads.get(key) or self._stack(binary, part, done, dirs)
            if stacked is None:  # it would be loaded whole: only the root is, now (a ring's others
                return self._whole(root, dirs)  # when they are roots, as the budget allows)
            self.loads[key] = done = stacked
        return done

    def _whole(self, binary: Binary, dirs: _Dirs) -> _Shared:
        """``binary``'s load computed whole, once."""
        key = (binary.path, dirs, binary.machine)
        done = self.loads.get(key)
        if done is None:
            done = self.loads[key] = _load(binary, "", dirs, self)
        return done

    def _part(self, binary: Binary, dirs: _Dirs) -> ImageLoad | None:
        """``binary``'s own imports resolved, when they find exactly one DLL (a PE image of its
        machine, read): its part of its load, ``objects`` ending with that DLL; else ``None``.
        Each worked out once (a ring's roots each walk the ring down again)."""
        key = (binary.path, dirs, binary.machine)
        if key not in self.parts:
            self.parts[key] = self._own_part(binary, dirs)
        return self.parts[key]

    def _own_part(self, binary: Binary, dirs: _Dirs) -> ImageLoad | None:
        """``_part``, worked out."""
        part = ImageLoad(binary.path, "", [binary.path], images={binary.path: binary}, machine=binary.machine)
        loaded = {posixpath.basename(binary.path).lower(): binary.path, **self.preload}
        before = len(loaded)
        added = _resolve(binary, loaded, dirs, binary.machine, self, part)
        if len(added) != 1 or len(loaded) != before + 1 or added[0].path not in part.parents:
            return None
        return part

    def _stack(self, binary: Binary, part: ImageLoad, below: _Shared, dirs: _Dirs) -> _Shared | None:
        """``binary``'s load: ``part`` on top of the load ``below`` of the DLL it imports, unless that
        load looks up ``binary``'s own name (then ``None``: it is loaded whole, and only once it is a
        root itself).  A whole load becomes level 0 of a stack when the first load stacks on it."""
        if isinstance(below, ImageLoad):
            stack = LoadStack()
            below = stack, stack.push(below, _names(below))
        stack, level = below
        own = posixpath.basename(binary.path).lower()
        if stack.names.get(own, level + 1) <= level or stack.objects.get(binary.path, level + 1) <= level:
            return None
        return push_part(stack, level, part, _names)


def _names(load: ImageLoad) -> set[str]:
    """Every name the images of ``load`` import plainly (looked up by the load), lower-cased."""
    return {
        need.name.lower() for path in load.objects for need in load.images[path].needed if need.kind is NeedKind.PLAIN
    }


def _load(root: Binary, kind: str, dirs: _Dirs, loader: _Loader) -> ImageLoad:
    """The load of one ``root`` of ``kind``, whole: its imports breadth-first, each searched in
    ``dirs`` (``_search_order``) unless already loaded (by base name, case-insensitively;
    ``--preload-dll`` counts as loaded) or a system DLL; delay-load imports are left out."""
    result = ImageLoad(root.path, kind, [root.path], images={root.path: root}, machine=root.machine)
    loaded = {posixpath.basename(root.path).lower(): root.path, **loader.preload}
    queue = deque([root])
    while queue:
        queue.extend(_resolve(queue.popleft(), loaded, dirs, root.machine, loader, result))
    return result


def _resolve(
    current: Binary, loaded: dict[str, str], dirs: _Dirs, machine: str, loader: _Loader, result: ImageLoad
) -> list[Binary]:
    """Resolve the plain imports of ``current`` into ``result`` for a root of ``machine``, in table
    order; ``loaded`` (lower-cased base name -> path) grows with each DLL found.  The PE images
    newly loaded, in order (to load their imports next)."""
    out = []
    for need in current.needed:
        if need.kind is not NeedKind.PLAIN:
            continue  # delay-load: resolved at the first call
        low = need.name.lower()
        key = (current.path, need.name)
        if low in loaded:
            result.record(key, ImageResolution(need.name, current.path, loaded[low], "loaded", ()))
            continue
        if is_system_dll(need.name):
            result.record(key, ImageResolution(need.name, current.path, None, "system", (), True))
            continue
        attempts, hit = loader.search(need.name, dirs, machine)
        if hit is None:
            result.record(key, ImageResolution(need.name, current.path, None, None, attempts))
            continue
        found, source, dll = hit
        result.record(key, ImageResolution(need.name, current.path, found, source, attempts))
        loaded[low] = found
        added = result.add(found, current.path, dll, Format.PE)
        if added is not None:
            out.append(added)
    return out


def _search(
    name: str,
    dirs: _Dirs,
    machine: str,
    listing: dict[str, dict[str, str]],
    image: ImageCache,
) -> tuple[tuple[ImageAttempt, ...], tuple[str, str, Binary | None] | None]:
    """Search ``dirs`` in order for the DLL ``name`` for a root of ``machine``: every place tried,
    and the first hit ``(path, source, image)``, or ``None``.  An image of another machine is
    skipped and the search goes on."""
    attempts: list[ImageAttempt] = []
    for directory, source in dirs:
        if directory is None:
            attempts.append(ImageAttempt(f"System32\\{name}", source, ImageOutcome.MISSING))
            continue
        found = _find(directory, name, listing)
        if found is None:
            attempts.append(ImageAttempt(posixpath.join(directory, name), source, ImageOutcome.MISSING))
            continue
        dll = image(found)
        if dll is not None and dll.format is Format.PE and dll.machine != machine:
            # The loader skips an image of another machine and searches on
            # (STATUS_IMAGE_MACHINE_TYPE_MISMATCH); nothing else found: ERROR_BAD_EXE_FORMAT.
            detail = f"have {dll.machine}, need {machine}"
            attempts.append(ImageAttempt(found, source, ImageOutcome.WRONG_MACHINE, detail, (dll.machine,)))
            continue
        attempts.append(ImageAttempt(found, source, ImageOutcome.FOUND))
        return tuple(attempts), (found, source, dll)
    return tuple(attempts), None
