"""Generated wrapper files in a source tree (``--source DIR``), for ``stacked-codegen``.

PyTorch-style per-CPU-capability code generation writes ``X.cpp.DEFAULT.cpp``,
``X.cpp.AVX2.cpp`` ... beside the sources; a stale tree holds stacked ones
(``X.cpp.DEFAULT.cpp.DEFAULT.cpp``).  This module walks the tree (bounded, never
following symlinks) and reads which of the files git tracks, when the tree is in a
checkout, from its index (``gitindex``, submodules included) — git is never run: a tree's
``.git/config`` can make ``git ls-files`` run any command (``core.fsmonitor``).  It is input
reading, done by the audit driver; the rule only reads the result.
"""

from __future__ import annotations

import os
import re

from ..records import dataclass
from .gitindex import tracked_files

#: A generated wrapper: a source file name followed by ``.CAPABILITY.ext`` once or more.
WRAPPER = re.compile(r"\.(?:cpp|cc|cxx|c|cu)(\.[A-Za-z0-9_]+\.(?:cpp|cc|cxx|c|cu))+$")
STACKED = re.compile(r"(\.[A-Za-z0-9_]+\.(?:cpp|cc|cxx|c|cu))\1+")
MAX_FILES = 500_000


@dataclass(frozen=True, slots=True)
class GeneratedSource:
    """A generated wrapper file in a source tree.

    Attributes:
        path: its path under the directory given.
        stacked: its name repeats the generated suffix (a wrapper of a wrapper).
        tracked: whether git tracks it (``None`` when the tree is not a git checkout).
    """

    path: str
    stacked: bool
    tracked: bool | None


def scan(top: str) -> list[GeneratedSource]:
    """Generated wrappers under ``top`` (files only, symlinks not followed), in sorted order."""
    tracked = tracked_files(top)
    out: list[GeneratedSource] = []
    stack = [top]
    seen = 0
    while stack and seen < MAX_FILES:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if entry.is_dir(follow_symlinks=False):
                if entry.name != ".git":
                    stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False) and WRAPPER.search(entry.name):
                path = os.path.normpath(entry.path)
                out.append(
                    GeneratedSource(
                        path,
                        bool(STACKED.search(entry.name)),
                        None if tracked is None else os.path.abspath(path) in tracked,
                    )
                )
    return sorted(out, key=lambda s: s.path)
