"""linkaudit: a static shared-library linkage auditor.

Reads ELF and PE binaries (Mach-O to come) without executing them, works out
what each needs at load time, and reports what is wrong, where and why.

Public API::

    from linkaudit import audit, read, AuditConfig, VersionCeiling
    report = audit(["torch/lib"], AuditConfig(max_versions=(VersionCeiling.parse("GLIBC_2.28"),)))
    for finding in report.findings:
        print(finding.rule, finding.file, finding.message)
"""

from __future__ import annotations

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
