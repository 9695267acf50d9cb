"""dyld, emulated for the Mach-O inputs: which file each dylib load command names, found where, or not.

Pure apart from checking which files exist.  Each import root is loaded breadth first, its load
commands in order (``LC_LOAD_DYLIB``, weak, re-export, upward, lazy; a weak dylib may be missing).
How a name resolves (Apple's dyld documentation, ``man dyld``; dyld's ``ImageLoader`` search):

* ``@rpath/X``: each ``LC_RPATH`` of the image that loads it, then of every image above it in the
  load chain up to the root, in that order; an ``@loader_path`` inside an ``LC_RPATH`` is the
  directory of the image that *holds* that ``LC_RPATH``; ``@executable_path`` the main executable's
  directory (``--executable-path``; unset: such entries cannot match);
* ``@loader_path/X``: the directory of the image that loads it; ``@executable_path/X`` as above;
* an absolute path: that path — except under ``/usr/lib`` and ``/System/Library``, which the
  dyld shared cache provides on every macOS (present, exports unknown);
* anything else: the path as given, relative to the working directory (a finding of its own).

``DYLD_LIBRARY_PATH`` / ``DYLD_FALLBACK_LIBRARY_PATH`` are not emulated yet.
"""

from __future__ import annotations

import os
import posixpath
from collections import deque
from collections.abc import Callable, Sequence

from ..model import Binary, Format, NeedKind
from .images import ImageAttempt, ImageCache, ImageLoad, ImageResolution, load_roots

#: Directories the dyld shared cache covers on every macOS since 11: present, not on disk.
SHARED_CACHE_PREFIXES = ("/usr/lib/", "/System/Library/")


def _expand(entry: str, loader_dir: str, executable_dir: str | None) -> str | None:
    if entry.startswith("@loader_path"):
        return posixpath.normpath(loader_dir + entry[len("@loader_path") :])
    if entry.startswith("@executable_path"):
        if executable_dir is None:
            return None
        return posixpath.normpath(executable_dir + entry[len("@executable_path") :])
    return entry


def analyze_dyld(
    binaries: Sequence[Binary],
    executable: str | None = None,
    read: Callable[[str], list[Binary]] | None = None,
) -> list[ImageLoad]:
    """Load each Mach-O import root the way dyld would.

    Args:
        binaries: the inputs (Mach-O ones are loaded, one slice per file: the first).
        executable: the main executable's path for ``@executable_path`` (Python extension modules:
            the interpreter), or ``None``.
        read: reads a dylib found outside the inputs (default ``formats.read_path``).

    Returns:
        One ``ImageLoad`` per root: every bundle named ``*.so`` (a Python extension module) and
        executable, then every other Mach-O input no root's load reaches (loaded alone, a ``dlopen``).
    """

    macho: dict[str, Binary] = {}
    for b in binaries:
        if b.format is Format.MACHO:
            macho.setdefault(b.path, b)  # a universal file: its first slice stands for its layout
    executable_dir = posixpath.dirname(executable) if executable else None

    image = ImageCache(macho, read)

    def load(root: Binary, kind: str) -> ImageLoad:
        result = ImageLoad(root.path, kind, [root.path], images={root.path: root})
        loaded = {root.path}
        queue = deque([root])
        while queue:
            current = queue.popleft()
            for need in current.needed:
                key = (current.path, need.name)
                optional = need.kind is NeedKind.WEAK
                name = need.name
                if name.startswith(SHARED_CACHE_PREFIXES):
                    result.resolutions[key] = ImageResolution(name, current.path, None, "shared-cache", (), True)
                    continue
                candidates: list[tuple[str, str]] = []
                if name.startswith("@rpath/"):
                    rest = name[len("@rpath/") :]
                    for holder in result.chain(current.path)[::-1]:  # the loading image first, then up
                        held = result.images.get(holder)
                        for entry in held.rpath if held is not None else ():
                            base = _expand(entry, posixpath.dirname(holder), executable_dir)
                            if base is not None:
                                candidates.append(
                                    (posixpath.join(base, rest), f"LC_RPATH of {posixpath.basename(holder)}")
                                )
                else:
                    path = _expand(name, posixpath.dirname(current.path), executable_dir)
                    if path is not None:
                        candidates.append((path, "install-name"))
                attempts: list[ImageAttempt] = []
                hit = None
                for path, source in candidates:
                    exists = os.path.isfile(path)
                    attempts.append(ImageAttempt(path, source, "found" if exists else "missing"))
                    if exists:
                        hit = (path, source)
                        break
                if hit is None:
                    result.resolutions[key] = ImageResolution(
                        name, current.path, None, None, tuple(attempts), optional=optional
                    )
                    continue
                path, source = hit
                result.resolutions[key] = ImageResolution(name, current.path, path, source, tuple(attempts))
                if path in loaded:
                    continue
                loaded.add(path)
                found = result.add(path, current.path, image(path), Format.MACHO)
                if found is not None:
                    queue.append(found)
        return result

    return load_roots(macho.values(), load)
