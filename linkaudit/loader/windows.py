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
from collections import deque
from collections.abc import Callable, Sequence

from ..model import Binary, Format, NeedKind
from .images import ImageAttempt, ImageCache, ImageLoad, ImageOutcome, ImageResolution, entry_roots, load_roots


@functools.cache
def _system() -> tuple[frozenset[str], tuple[str, ...]]:
    from ..rules.data import _load

    data = _load("windows")
    names = frozenset(n.lower() for n in [*data["system_dlls"]] if "*" not in n)
    patterns = tuple(p.lower() for p in [*data["python_dlls"], *data["api_set_patterns"]])
    return names, patterns


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


def is_system_dll(name: str) -> bool:
    """True for a DLL every Windows process can load (``rules/data/windows.toml``)."""
    names, patterns = _system()
    low = name.lower()
    return low in names or any(fnmatch.fnmatchcase(low, p) for p in patterns)


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

    Returns:
        One ``ImageLoad`` (``machine`` the root's) per root: the entries, by default every ``.pyd``
        and executable; then every other DLL no root's load reaches (loaded alone, as a
        ``dlopen``).  Each import's
        ``ImageResolution`` lists every place tried; a DLL of another machine is ``wrong-machine``
        and the search goes on.  Never raises for a file it cannot read.
    """

    pe = [b for b in binaries if b.format is Format.PE]
    by_path = {b.path: [b] for b in pe}
    listing: dict[str, dict[str, str]] = {}

    image = ImageCache(by_path, read)

    def load(root: Binary, kind: str) -> ImageLoad:
        return _load(root, kind, _search_order(root, kind, path, dll_directories), preload, listing, image)

    return load_roots(pe, load, entry_roots(image, entries, Format.PE))


def _search_order(
    root: Binary, kind: str, path: Sequence[str], dll_directories: Sequence[str]
) -> list[tuple[str | None, str]]:
    """The directories searched for this root's imports, each with its source; ``None`` is
    System32 (and the Windows directory), where only the system DLLs count as present."""
    base = posixpath.dirname(root.path) or "."
    if kind == "executable":
        # The standard order: application directory, System32, the Windows directory, the
        # current directory (not emulated: unknown), PATH.
        return [(base, "application-directory"), (None, "system"), *((d, "PATH") for d in path)]
    return [(base, "dll-load-dir"), *((d, "dll-directory") for d in dll_directories), (None, "system")]


def _load(
    root: Binary,
    kind: str,
    dirs: list[tuple[str | None, str]],
    preload: Sequence[str],
    listing: dict[str, dict[str, str]],
    image: ImageCache,
) -> ImageLoad:
    """The load of one ``root`` of ``kind``: its imports breadth-first, each searched in ``dirs``
    (``_search_order``) unless already ``loaded`` (by base name, case-insensitively; ``preload``
    counts as loaded) or a system DLL; delay-load imports are left out."""
    result = ImageLoad(root.path, kind, [root.path], images={root.path: root}, machine=root.machine)
    loaded = {posixpath.basename(root.path).lower(): root.path, **{p.lower(): p for p in preload}}
    queue = deque([root])
    while queue:
        current = queue.popleft()
        for need in current.needed:
            if need.kind is not NeedKind.PLAIN:
                continue  # delay-load: resolved at the first call
            low = need.name.lower()
            key = (current.path, need.name)
            if low in loaded:
                result.resolutions[key] = ImageResolution(need.name, current.path, loaded[low], "loaded", ())
                continue
            if is_system_dll(need.name):
                result.resolutions[key] = ImageResolution(need.name, current.path, None, "system", (), True)
                continue
            attempts, hit = _search(need.name, dirs, root.machine, listing, image)
            if hit is None:
                result.resolutions[key] = ImageResolution(need.name, current.path, None, None, attempts)
                continue
            found, source, dll = hit
            result.resolutions[key] = ImageResolution(need.name, current.path, found, source, attempts)
            loaded[low] = found
            added = result.add(found, current.path, dll, Format.PE)
            if added is not None:
                queue.append(added)
    return result


def _search(
    name: str,
    dirs: list[tuple[str | None, str]],
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
