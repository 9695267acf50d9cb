"""The audit's configuration, in one room; imports run one way inside it.

- ``model``: what the user asked for, parsed and validated — ``AuditConfig``, version
  ceilings, suppressions, needed-policies.  Imports nothing else from this package.
- ``file``: ``linkaudit.toml`` / ``[tool.linkaudit]`` read and validated into ``FileSettings``
  (imports ``model``).
- ``profiles``: named target baselines shipped as data, and the policy a wheel's tag implies.
- ``baseline``: accepted findings recorded so that CI fails only on new ones (imports ``file``).

This package re-exports the model's public names (``from linkaudit.config import AuditConfig``);
it imports nothing of the audit, the rules or the CLI.
"""

from __future__ import annotations

from .model import (
    MACOS,
    AuditConfig,
    NeededPolicy,
    Suppression,
    VersionCeiling,
    file_matches,
    parse_version_name,
)

__all__ = [
    "MACOS",
    "AuditConfig",
    "NeededPolicy",
    "Suppression",
    "VersionCeiling",
    "file_matches",
    "parse_version_name",
]
