"""Helpers for loader tests: run the emulation over a scenario of sample_bins/loader."""

from __future__ import annotations

from pathlib import Path

from linkaudit import AuditConfig, audit
from linkaudit.loader.analysis import LinkageAnalysis, Root, analyze
from linkaudit.loader.closure import root_kind_of
from linkaudit.loader.fs import FileSystemView
from linkaudit.loader.target import TargetEnvironment
from linkaudit.report import Report
from linkaudit.rules.data import driver_index

SCENARIOS = Path(__file__).resolve().parents[2] / "sample_bins" / "loader"


def scenario(name: str) -> str:
    return str(SCENARIOS / name)


def analyze_paths(*paths: str, entries: tuple[str, ...] = (), env: TargetEnvironment | None = None) -> LinkageAnalysis:
    from linkaudit import read
    from linkaudit.inputs import collect

    binaries = [b for f in collect(list(paths)).files for b in _safe_read(f)]
    env = env or TargetEnvironment()
    fs = FileSystemView(env.sysroot)
    roots = [Root(e, root_kind_of(read(e)[0])) for e in entries] or None
    return analyze(binaries, env, roots, fs, is_driver=driver_index().is_driver)


def _safe_read(path: str) -> list:  # type: ignore[type-arg]
    from linkaudit import InputError, read

    try:
        return read(path)
    except InputError:
        return []


def audit_paths(*paths: str, entries: tuple[str, ...] = (), env: TargetEnvironment | None = None) -> Report:
    return audit(list(paths), AuditConfig(target=env or TargetEnvironment(), entries=entries))


def resolution(analysis: LinkageAnalysis, requester_suffix: str, needed: str):  # type: ignore[no-untyped-def]
    for load in analysis.loads:
        for (req, name), res in load.resolutions.items():
            if req.endswith(requester_suffix) and name == needed:
                return res
    raise AssertionError(f"no resolution of {needed} by {requester_suffix}")
