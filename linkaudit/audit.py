"""The audit driver: paths in, ``Report`` out.

inputs -> formats -> model -> rules -> findings.  An input that cannot be read
becomes an ``unreadable-input`` finding and the rest of the audit goes on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from .config import AuditConfig
from .context import AuditContext
from .errors import ConfigError, InputError
from .formats import read_path
from .inputs import collect
from .model import Binary
from .report import FileResult, FileStatus, Finding, Report, Severity
from .rules import RULES, get_rule


def _unreadable(error: InputError) -> Finding:
    return Finding(
        "unreadable-input",
        Severity.ERROR,
        error.path,
        error.path,
        error.reason + (f" (at byte offset {error.offset:#x})" if error.offset is not None else ""),
        {"reason": error.reason, "offset": error.offset},
    )


def read(path: str) -> list[Binary]:
    """Read one file into ``Binary`` records (one per ELF file; never executes it).

    Raises:
        InputError: the file cannot be read or is malformed.
    """
    return read_path(path)


def audit(paths: Sequence[str], config: AuditConfig | None = None) -> Report:
    """Audit files and directories.

    Args:
        paths: files and directories, as the user gave them.
        config: what to check; defaults to ``AuditConfig()``.

    Returns:
        A ``Report``: every input (audited or unreadable) and every finding,
        grouped by file in input order, most severe first.

    Raises:
        ConfigError: ``config.ignore`` names an unknown rule, or rule data is invalid.
    """
    config = config or AuditConfig()
    for rule_id in config.ignore:
        if get_rule(rule_id) is None:
            raise ConfigError(f"--ignore {rule_id!r}: no such rule (see `linkaudit rules`)")
    start = time.perf_counter()
    collected = collect(paths)
    files: list[FileResult] = []
    findings: list[Finding] = []
    binaries: list[Binary] = []
    for error in collected.errors:
        files.append(FileResult(error.path, FileStatus.UNREADABLE, error=str(error.reason)))
        findings.append(_unreadable(error))
    for path in collected.files:
        try:
            read_binaries = read_path(path)
        except InputError as error:
            files.append(FileResult(path, FileStatus.UNREADABLE, error=error.reason))
            findings.append(_unreadable(error))
            continue
        for b in read_binaries:
            files.append(FileResult(b.display_path, FileStatus.AUDITED, b.format.value, b.kind.value, b.machine))
        binaries.extend(read_binaries)
    for directory in collected.empty_dirs:
        skipped = [p for p, _f in collected.skipped if p.startswith(directory)]
        findings.append(
            Finding(
                "no-binaries",
                Severity.NOTE,
                directory,
                directory,
                "holds no binary linkaudit can read"
                + (f" ({len(skipped)} of a format not supported yet)" if skipped else "")
                + "; nothing to audit",
                {"skipped": skipped},
            )
        )
    context = AuditContext(tuple(binaries), config)
    ran = []
    for rule_cls in RULES:
        if rule_cls.id in config.ignore:
            continue
        ran.append(rule_cls.id)
        findings.extend(rule_cls().check(context))
    findings = [f for f in findings if f.rule not in config.ignore]
    order = {f.path: i for i, f in enumerate(files)}
    findings.sort(key=lambda f: (order.get(f.file, len(order)), f.severity.rank, f.rule, f.subject))
    return Report(tuple(files), tuple(findings), time.perf_counter() - start, tuple(ran))
