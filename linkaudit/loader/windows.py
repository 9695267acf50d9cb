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
* an executable: its own directory (the application directory), ``--dll-directory``, System32;
* any other DLL, loaded alone (``LoadLibraryEx`` with the same flags): its own directory, then as above.

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
from .images import ImageAttempt, ImageCache, ImageLoad, ImageResolution, load_roots


@functools.cache
def _system() -> tuple[frozenset[str], tuple[str, ...]]:
    from ..rules.data import _load

    data = _load("windows")
    names = frozenset(n.lower() for n in [*data["system_dlls"]] if "*" not in n)
    patterns = tuple(p.lower() for p in [*data["python_dlls"], *data["api_set_patterns"]])
    return names, patterns


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
) -> list[ImageLoad]:
    """Load each PE import root the way Windows would.

    Args:
        binaries: the inputs (PE ones are loaded; others ignored).
        dll_directories: ``os.add_dll_directory`` directories, in order.
        preload: base names of DLLs already loaded (``--preload-dll``).
        read: reads a DLL found outside the inputs (default ``formats.read_path``).

    Returns:
        One ``ImageLoad`` per root: every ``.pyd`` and executable, then every other DLL no root's
        load reaches (loaded alone, as a ``dlopen``).
    """

    pe = [b for b in binaries if b.format is Format.PE]
    by_path = {b.path: b for b in pe}
    listing: dict[str, dict[str, str]] = {}

    image = ImageCache(by_path, read)

    def load(root: Binary, kind: str) -> ImageLoad:
        result = ImageLoad(root.path, kind, [root.path], images={root.path: root})
        base = posixpath.dirname(root.path) or "."
        first = "dll-load-dir" if kind != "executable" else "application-directory"
        dirs = [(base, first), *((d, "dll-directory") for d in dll_directories)]
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
                attempts = []
                hit = None
                for directory, source in dirs:
                    path = _find(directory, need.name, listing)
                    attempts.append(
                        ImageAttempt(
                            path or posixpath.join(directory, need.name), source, "found" if path else "missing"
                        )
                    )
                    if path:
                        hit = (path, source)
                        break
                if hit is None:
                    attempts.append(ImageAttempt(f"System32\\{need.name}", "system", "missing"))
                    result.resolutions[key] = ImageResolution(need.name, current.path, None, None, tuple(attempts))
                    continue
                path, source = hit
                result.resolutions[key] = ImageResolution(need.name, current.path, path, source, tuple(attempts))
                loaded[low] = path
                found = result.add(path, current.path, image(path), Format.PE)
                if found is not None:
                    queue.append(found)
        return result

    return load_roots(pe, load)
