"""``duplicate-rpath`` judged as dyld judges it (``mach_o/Policy.cpp``, ``enforceNoDuplicateRPaths``):
by each slice's own SDK, a slice whose SDK is 0 or absent always refused — on the samples of
sample_bins/macho/sdk0/ (built by build_macho.sh with ``-platform_version macos 11.0 0.0``)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, read
from linkaudit.context import AuditContext
from linkaudit.report import Finding
from linkaudit.rules.duplicate_rpath import DuplicateRpath, enforced

SDK0 = Path(__file__).resolve().parents[2] / "sample_bins" / "macho" / "sdk0"


def _dups(path: Path) -> dict[str, Finding]:
    return {f.file: f for f in audit([str(path)]).findings if f.rule == "duplicate-rpath"}


@pytest.mark.parametrize(
    ("sdk", "refused"),
    [(None, True), ("0.0", True), ("11.0", False), ("14.5", False), ("15.0", True), ("15.4", True), ("26.0", True)],
)
def test_enforced_by_sdk(sdk: str | None, refused: bool) -> None:
    assert enforced(sdk) is refused


def test_an_sdk_0_slice_is_an_error() -> None:
    (b,) = read(str(SDK0 / "libdup_sdk0.dylib"))
    assert (b.machine, b.min_os, b.sdk, b.rpath) == ("x86_64", "11.0", "0.0", ("@loader_path", "@loader_path"))
    (f,) = _dups(SDK0 / "libdup_sdk0.dylib").values()
    assert f.severity.value == "error" and f.subject == "@loader_path"
    assert f.evidence == {
        "entry": "@loader_path",
        "count": 2,
        "machine": "x86_64",
        "sdk": "0.0",
        "min_os": "11.0",
        "enforced": True,
    }
    assert "records SDK 0.0" in f.message and "duplicate LC_RPATH '@loader_path'" in f.message


def test_each_slice_of_a_universal_file_is_judged_by_its_own_sdk() -> None:
    path = SDK0 / "libdup_universal.dylib"
    found = _dups(path)
    assert sorted(found) == [f"{path}(arm64)", f"{path}(x86_64)"]
    x86, arm = found[f"{path}(x86_64)"], found[f"{path}(arm64)"]
    assert (x86.severity.value, x86.evidence["sdk"], x86.evidence["min_os"]) == ("error", "0.0", "11.0")
    assert (arm.severity.value, arm.evidence["sdk"], arm.evidence["min_os"]) == ("warning", "11.0", "11.0")
    assert arm.evidence["enforced"] is False
    assert "once it is relinked against SDK 15 or later" in arm.message


def test_no_sdk_recorded_is_refused_too() -> None:
    (b,) = read(str(SDK0 / "libdup_sdk0.dylib"))
    for sdk, level in ((None, "error"), ("14.0", "warning"), ("15.4", "error")):
        (f,) = DuplicateRpath().check(AuditContext((dataclasses.replace(b, sdk=sdk),), AuditConfig()))
        assert f.severity.value == level, sdk
    (none,) = DuplicateRpath().check(AuditContext((dataclasses.replace(b, sdk=None),), AuditConfig()))
    assert "records no SDK" in none.message and none.evidence["sdk"] is None
