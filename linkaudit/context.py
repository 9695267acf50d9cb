"""The audit context every rule reads.

Built once per audit; rules read it and recompute nothing.  The loader issue
extends it with resolutions (which file each DT_NEEDED resolved to, with the
paths tried), bindings and closures per import root.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import AuditConfig
from .model import Binary


@dataclass(frozen=True, slots=True)
class AuditContext:
    """What the rules see.

    Attributes:
        binaries: every binary read, in input order.
        config: the audit configuration.
    """

    binaries: tuple[Binary, ...]
    config: AuditConfig
