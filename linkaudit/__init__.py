"""linkaudit: a static shared-library linkage auditor.

Reads ELF, PE and Mach-O binaries (and ar archives, COFF objects) without executing them, works
out what each needs at load time — emulating glibc's ld.so, the Windows loader and dyld — and
reports what is wrong, where and why.  The JSON output's schemas ship in the package
(``linkaudit/output/schema/*.schema.json``, ``$id`` ``https://github.com/linkaudit-project/linkaudit/schema/NAME.schema.json``).

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
