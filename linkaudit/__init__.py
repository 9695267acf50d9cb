"""linkaudit: a static shared-library linkage auditor.

Reads ELF, PE and Mach-O binaries (and ar archives, COFF objects) without executing them, works
out what each needs at load time — emulating glibc's ld.so, the Windows loader and dyld — and
reports what is wrong, where and why.  The JSON output's schemas ship in the package
(``linkaudit/output/schema/*.schema.json``, ``$id`` ``https://github.com/linkaudit/linkaudit/schema/NAME.schema.json``).

Public API::

    from linkaudit import audit, read, AuditConfig, VersionCeiling
    report = audit(["torch/lib"], AuditConfig(max_versions=(VersionCeiling.parse("GLIBC_2.28"),)))
    for finding in report.findings:
        print(finding.rule, finding.file, finding.message)
"""

from __future__ import annotations

import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .audit import audit, read
    from .config import AuditConfig, VersionCeiling
    from .errors import ConfigError, InputError, LinkauditError
    from .report import Finding, Report, Severity

__version__ = "0.1.0"

__all__ = [
    "AuditConfig",
    "ConfigError",
    "Finding",
    "InputError",
    "LinkauditError",
    "Report",
    "Severity",
    "VersionCeiling",
    "__version__",
    "audit",
    "read",
]

#: Public name -> the module that defines it.  Imported on first use (PEP 562), so that
#: ``import linkaudit.cli`` and ``linkaudit --version`` do not pay for the whole audit.
_HOMES = {
    "audit": "audit",
    "read": "audit",
    "AuditConfig": "config",
    "VersionCeiling": "config",
    "ConfigError": "errors",
    "InputError": "errors",
    "LinkauditError": "errors",
    "Finding": "report",
    "Report": "report",
    "Severity": "report",
}


def __getattr__(name: str) -> Any:
    """The public name ``name``, imported from its module on first use.

    Raises:
        AttributeError: ``name`` is not part of the public API.
    """
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'linkaudit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{home}", __name__), name)
    globals()[name] = value
    return value


class _Package(types.ModuleType):
    """The ``linkaudit`` package object: ``linkaudit.audit`` stays the public function.

    Importing the submodule ``linkaudit.audit`` binds the package attribute ``audit`` to the
    module (the import system does so once the submodule has run); eagerly imported, the
    function imported afterwards used to shadow it.  Imported lazily, the binding is redirected
    to the function instead, so ``from linkaudit import audit`` is the function either way.
    """

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "audit" and isinstance(value, types.ModuleType) and value.__name__ == f"{__name__}.audit":
            value = value.audit
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
