"""Every message on a PE or Mach-O file speaks that format's terms: every rule runs over the PE and
Mach-O samples — with a configuration that makes the configured rules speak too — and no message
says DT_*, ELF's RPATH/RUNPATH, SONAME, --as-needed, ELF or ld.so."""

from __future__ import annotations

import re
from pathlib import Path

from linkaudit import AuditConfig, VersionCeiling, audit
from linkaudit.config import NeededPolicy
from linkaudit.rules import RULES

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
#: ELF's words; LC_RPATH (Mach-O's) does not match ``\bRPATH``.
ELF_WORDS = re.compile(r"DT_|\bRPATH\b|\bRUNPATH\b|--as-needed|\bSONAME\b|\bELF\b|\bld\.so\b")

CONFIG = AuditConfig(
    forbidden_needed=(
        NeededPolicy("*", "*nvrtc*", "private to the test", "t.toml:1: forbidden-needed[0]"),
        NeededPolicy("*", "helper.dll", "private to the test", "t.toml:5: forbidden-needed[1]"),
    ),
    required_needed=(NeededPolicy("*", "libbackend*", "registers itself at load", "t.toml:9: required-needed[0]"),),
    max_versions=(VersionCeiling.parse("macos=10.9"),),
)


def _report():  # type: ignore[no-untyped-def]
    return audit([str(SAMPLES / "pe"), str(SAMPLES / "macho")], CONFIG)


def test_no_elf_words_in_pe_or_macho_findings() -> None:
    report = _report()
    assert len(report.rules) == len(RULES)  # every rule ran
    spoke = {f.rule for f in report.findings}
    # the rules this test is about did speak (else it could not fail)
    assert {"forbidden-needed", "required-needed", "duplicate-rpath", "rpath-leak", "library-not-found"} <= spoke
    offenders = [(f.rule, f.file, f.message) for f in report.findings if ELF_WORDS.search(f.message)]
    assert offenders == []


def test_required_needed_speaks_windows_and_macos() -> None:
    report = _report()
    required = {f.file.rsplit("/", 1)[-1]: f.message for f in report.findings if f.rule == "required-needed"}
    pe = required["app.exe"]
    assert "no imported DLL matches libbackend*" in pe
    assert "the linker emits no import for a DLL the code references nothing from" in pe and "/INCLUDE:" in pe
    macho = required["libnvrtc.12.dylib"]
    assert "no dylib load command (LC_LOAD_DYLIB) matches libbackend*" in macho and "-dead_strip_dylibs" in macho
    forbidden = [f.message for f in report.findings if f.rule == "forbidden-needed"]
    assert any(m.startswith("imported DLL helper.dll, which t.toml:5") for m in forbidden)
    assert any(m.startswith("dylib load command (LC_LOAD_DYLIB) @rpath/libnvrtc.12.dylib") for m in forbidden)


def test_elf_keeps_its_own_words() -> None:
    report = audit([str(SAMPLES / "fixed/libtorch_cuda.so")], CONFIG)
    (f,) = [f for f in report.findings if f.rule == "required-needed"]
    assert "no DT_NEEDED entry matches libbackend*" in f.message and "-Wl,--as-needed" in f.message


def test_rpath_leak_on_macho_entries_no_sample_has() -> None:
    """An empty and a relative LC_RPATH (no sample carries them): dyld's terms, not ld.so's."""
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.context import AuditContext
    from linkaudit.rules.rpath_leak import RpathLeak

    (b,) = read(str(SAMPLES / "macho/fixed/libtorch_cuda.dylib"))
    found = list(RpathLeak().check(AuditContext((replace(b, rpath=("", "lib")),), AuditConfig())))
    assert [f.evidence["reason"] for f in found] == ["empty", "relative"]
    assert all(not ELF_WORDS.search(f.message) for f in found), [f.message for f in found]
    assert "@loader_path" in found[1].message


def test_needed_globs_ignore_case_for_dlls_only() -> None:
    """Windows compares DLL names without case: HELPER.DLL names pe/imports' helper.dll import; an
    ELF DT_NEEDED entry is compared exactly."""
    upper = AuditConfig(
        forbidden_needed=(NeededPolicy("*", "HELPER.DLL", "r", "t.toml:1: forbidden-needed[0]"),),
        required_needed=(NeededPolicy("*/app.dll", "Helper.*", "r", "t.toml:5: required-needed[0]"),),
    )
    pe = audit([str(SAMPLES / "pe/imports")], upper).findings
    assert {f.file.rsplit("/", 1)[-1] for f in pe if f.rule == "forbidden-needed"} == {"app.dll", "app.exe"}
    assert [f for f in pe if f.rule == "required-needed"] == []
    for glob, hits in (("libnvrtc.so.12", 1), ("LIBNVRTC.SO.12", 0)):
        elf = AuditConfig(forbidden_needed=(NeededPolicy("*", glob, "r", "t.toml:1"),))
        assert len([f for f in audit([str(SAMPLES / "fixed")], elf).findings if f.rule == "forbidden-needed"]) == hits
