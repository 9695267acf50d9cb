"""delvewheel's repairs: which ``<name>.libs`` directories a repaired distribution adds with
``os.add_dll_directory`` before any of its extension modules is imported.

delvewheel (``delvewheel repair``) vendors a Windows wheel's DLLs into ``<name>.libs/`` beside the
package, writes ``<name>.dist-info/DELVEWHEEL`` (its version and arguments) and, in
``<name>.libs/``, a ``.load-order-<name>-<version>`` file (the DLLs in load order), and patches the
package's ``__init__.py`` with a ``_delvewheel_patch_<version>()`` function that calls
``os.add_dll_directory`` on the ``.libs`` directory (``LoadLibraryEx``'s
``LOAD_LIBRARY_SEARCH_USER_DIRS``): to the loader, the same as ``--dll-directory``.
Source: delvewheel's ``_wheel_repair.py`` (``_patch_py_contents``, ``.load-order`` and
``DELVEWHEEL`` writing).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

#: The marker delvewheel's patch puts in a package's ``__init__.py``.
PATCH_MARKER = b"_delvewheel_patch"
#: Most bytes of an ``__init__.py`` read for the marker (the patch sits at the top).
_INIT_BYTES = 1 << 16


def libs_directories(files: Iterable[str], root: str) -> list[str]:
    """The ``<name>.libs`` directories (host paths under ``root``) a distribution whose ``files``
    (paths relative to ``root``, as its ``RECORD`` lists them) delvewheel repaired adds, in the
    order first listed; ``[]`` when it was not repaired.

    Repaired: its ``.dist-info/DELVEWHEEL`` is listed, or a ``.load-order-*`` file in a top-level
    ``*.libs`` directory, or a top-level ``__init__.py`` beside one carries the patch (read from
    ``root``, at most 64 KiB: older delvewheels wrote only the patch).
    """
    tops: dict[str, None] = {}
    repaired = False
    inits: list[str] = []
    for rel in files:
        top, sep, rest = rel.partition("/")
        if not sep:
            continue
        if top.endswith(".libs"):
            tops.setdefault(top)
            repaired = repaired or rest.startswith(".load-order-")
        elif top.endswith(".dist-info") and rest == "DELVEWHEEL":
            repaired = True
        elif rest == "__init__.py":
            inits.append(rel)
    if not tops:
        return []
    if not repaired:
        repaired = any(_patched(os.path.join(root, rel)) for rel in inits)
    return [os.path.join(root, top) for top in tops] if repaired else []


def _patched(path: str) -> bool:
    """True when the ``__init__.py`` at ``path`` carries delvewheel's patch (unreadable: no)."""
    from ..formats.hostfile import read_regular_file

    try:
        return PATCH_MARKER in read_regular_file(path, _INIT_BYTES)
    except OSError:
        return False
