"""The bound on what the loads of one run may hold, shared by ELF's ``analysis.LoadBudget`` and the
Windows and dyld loads' ``images.ImageBudget`` (a module of its own: a plain ELF run imports no
image loader)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..model import Binary

#: The loads of one analysis may hold ``LOAD_FLOOR`` loaded objects and resolutions, plus one per
#: ``LOAD_BYTES`` bytes of the inputs' files, each shared part counted once (ELF's
#: ``analysis.LoadBudget``; Windows' and dyld's ``ImageBudget``).  Real inputs stay far below it
#: (``/usr/lib/x86_64-linux-gnu``'s 976 libraries, each loaded alone: about 40,000; torch's wheel
#: and its NVIDIA wheels: about 3,000); N libraries that each need all N, none reached by an import
#: root, hold N^3 (100 of them, 1.6 MB: a million resolutions, 314 MB; 200: 1.95 GB); a ring of
#: N DLLs, each its own root, N^2 (2,000 of them, 2 MB: 8 million, 1.06 GB, 18 s).
LOAD_FLOOR = 250_000
LOAD_BYTES = 4


class LoadBound:
    """What the loads of one analysis hold (``spent``: loaded objects or images and resolutions)
    against a limit linear in the inputs' size: ``LOAD_FLOOR`` plus one per ``LOAD_BYTES`` bytes.
    The loaders count (``LoadBudget.new_objects``, ``ImageBudget.spend``) and, once ``exhausted``,
    leave the next roots unloaded with ``reason``.

    Args:
        binaries: the inputs (their ``file_size``, bytes).
    """

    #: what one load holds, in the reason's words
    held = "loaded objects"
    #: why loads grow past it, in the reason's words
    growth = "libraries that all need one another cost the cube of their number"

    def __init__(self, binaries: Sequence[Binary]) -> None:
        self.inputs = len(binaries)
        self.limit = LOAD_FLOOR + sum(b.file_size or 0 for b in binaries) // LOAD_BYTES
        self.spent = 0

    @property
    def exhausted(self) -> bool:
        """True once the loads hold more than ``limit``."""
        return self.spent > self.limit

    def reason(self) -> str:
        """Why a root is not loaded once the bound is passed."""
        return (
            f"not loaded: the loads of the {self.inputs} inputs already hold {self.spent:,} {self.held} and "
            f"resolutions, past the bound of {self.limit:,} ({LOAD_FLOOR:,} and one per {LOAD_BYTES} bytes "
            f"of input): each library no import root reaches is loaded alone with its whole closure, and "
            f"{self.growth} — only the per-file rules ran for it; give the import roots with --entry, or "
            "audit fewer libraries together"
        )
