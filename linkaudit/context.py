"""The audit context every rule reads.

Built once per audit; rules read it and recompute nothing.  The loader issue
extends it with resolutions (which file each DT_NEEDED resolved to, with the
paths tried), bindings and closures per import root.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .config import AuditConfig
from .model import Binary

if TYPE_CHECKING:
    from .loader.analysis import LinkageAnalysis
    from .sources import GeneratedSource


@dataclass(frozen=True, slots=True)
class AuditContext:
    """What the rules see.

    Attributes:
        binaries: every binary read, in input order.
        config: the audit configuration.
        linkage: the loader emulation over the inputs (loads per import root,
            resolutions with the paths tried, bindings, version checks), or ``None``
            when it was not run (``--no-loader``, or no ELF input).
        generated_sources: with ``--source``, the generated wrapper files of the source tree.
    """

    binaries: tuple[Binary, ...]
    config: AuditConfig
    linkage: LinkageAnalysis | None = None
    generated_sources: tuple[GeneratedSource, ...] = ()
