from __future__ import annotations

import pytest

from linkaudit import ConfigError, VersionCeiling
from linkaudit.config import parse_version_name

from .helpers import findings


def test_versions_above_ceiling_with_their_symbols() -> None:
    (f,) = findings("misc/libnewglibc.so", rule="symbol-version", max_versions=("GLIBC_2.17",))
    assert f.subject == "GLIBC_2.26"
    assert f.evidence["highest"] == "GLIBC_2.26"
    assert [v["name"] for v in f.evidence["versions"]] == ["GLIBC_2.25", "GLIBC_2.26"]
    assert set(f.evidence["symbols"]) == {"getrandom@GLIBC_2.25", "reallocarray@GLIBC_2.26"}


def test_at_or_above_highest_is_clean() -> None:
    assert findings("misc/libnewglibc.so", rule="symbol-version", max_versions=("GLIBC_2.26",)) == []
    assert findings("misc/libnewglibc.so", rule="symbol-version") == []  # no ceiling, no GLIBC_PRIVATE


def test_version_needed_by_no_symbol_still_fails() -> None:
    """GLIBC_ABI_DT_RELR (from -z pack-relative-relocs) stands for glibc 2.36 and is checked by ld.so."""
    (f,) = findings("misc/librelr.so", rule="symbol-version", max_versions=("GLIBC_2.28",))
    assert f.evidence["unused_versions"] == ["GLIBC_ABI_DT_RELR"]
    assert f.evidence["highest"] == "GLIBC_2.36"
    assert "dl-version.c" in f.message
    assert findings("misc/librelr.so", rule="symbol-version", max_versions=("GLIBC_2.36",)) == []


def test_other_prefixes_are_independent() -> None:
    assert findings("misc/libnewglibc.so", rule="symbol-version", max_versions=("GLIBCXX_3.4.19",)) == []


def test_executable_needs_glibc_2_34() -> None:
    (f,) = findings("misc/hello", rule="symbol-version", max_versions=("GLIBC_2.28",))
    assert f.evidence["symbols"] == ["__libc_start_main@GLIBC_2.34"]


def test_ceiling_parsing() -> None:
    assert VersionCeiling.parse("GLIBCXX_3.4.19") == VersionCeiling("GLIBCXX", (3, 4, 19))
    assert parse_version_name("CXXABI_TM_1") == ("CXXABI_TM", (1,))
    assert parse_version_name("GLIBC_PRIVATE") is None
    with pytest.raises(ConfigError):
        VersionCeiling.parse("2.17")
    with pytest.raises(ConfigError):
        VersionCeiling.parse("GLIBC")


def test_version_names_are_ascii_digits_of_bounded_length() -> None:
    assert parse_version_name("GLIBC_2." + "9" * 5000) is None  # no int() of 5000 digits
    assert parse_version_name("GLIBC_2.1234567890") is None
    assert parse_version_name("GLIBC_2.123456789") == ("GLIBC", (2, 123456789))
    assert parse_version_name("GLIBC_\u0662.\u0661\u0667") is None  # Arabic-Indic digits
    assert parse_version_name("GLIBC_2.17\n") is None
    with pytest.raises(ConfigError, match="digits"):
        VersionCeiling.parse("GLIBC_2." + "9" * 5000)


def test_wrong_case_of_a_known_prefix_suggests_the_spelling() -> None:
    for text, right in (("glibc_2.17", "GLIBC_2.17"), ("GlibCXX_3.4.19", "GLIBCXX_3.4.19"), ("gcc_4.8.0", "GCC_4.8.0")):
        with pytest.raises(ConfigError, match=f"did you mean {right}"):
            VersionCeiling.parse(text)
    assert VersionCeiling.parse("Foo_1.2") == VersionCeiling("Foo", (1, 2))  # unknown prefixes as written


def _with_needs(rel: str, needs: list[tuple[str, list[str]]], **changes: object):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.model import VersionNeed, VersionNeedEntry

    from .helpers import SAMPLES

    (b,) = read(str(SAMPLES / rel))
    records = tuple(VersionNeed(f, tuple(VersionNeedEntry(v, 0, 20 + i) for i, v in enumerate(vs))) for f, vs in needs)
    return replace(b, version_needs=records, **changes)


def _check(binary, *ceilings: str):  # type: ignore[no-untyped-def]
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.rules.symbol_version import SymbolVersion

    config = AuditConfig(max_versions=tuple(VersionCeiling.parse(c) for c in ceilings))
    return list(SymbolVersion().check(AuditContext((binary,), config)))


def test_unparseable_version_name_in_a_file_is_not_a_number() -> None:
    b = _with_needs("misc/libnewglibc.so", [("libc.so.6", ["GLIBC_2." + "9" * 5000, "GLIBC_2.2.5"])])
    assert _check(b, "GLIBC_2.17") == []


def test_relr_subject_is_the_version_name_needed() -> None:
    (f,) = findings("misc/librelr.so", rule="symbol-version", max_versions=("GLIBC_2.28",))
    assert f.subject == "GLIBC_ABI_DT_RELR"
    assert f.evidence["highest_name"] == "GLIBC_ABI_DT_RELR" and f.evidence["highest"] == "GLIBC_2.36"
    assert f.message.startswith("needs GLIBC_ABI_DT_RELR, which stands for GLIBC_2.36")
    # a numbered name of the same release wins the subject
    b = _with_needs("misc/librelr.so", [("libc.so.6", ["GLIBC_ABI_DT_RELR", "GLIBC_2.36", "GLIBC_2.2.5"])])
    (f,) = _check(b, "GLIBC_2.28")
    assert f.subject == "GLIBC_2.36"


def test_glibc_private_inside_glibc_is_not_a_finding() -> None:
    needs = [("ld-linux-x86-64.so.2", ["GLIBC_PRIVATE"])]
    (f,) = _check(_with_needs("misc/libnewglibc.so", needs, soname="libfoo.so.1"))
    assert f.subject == "GLIBC_PRIVATE"
    for soname in ("libm.so.6", "libc.so.6", "ld-linux-x86-64.so.2", "libnss_files.so.2", "libpthread.so.0"):
        assert _check(_with_needs("misc/libnewglibc.so", needs, soname=soname)) == [], soname
    gconv = _with_needs("misc/libnewglibc.so", needs, soname=None, path="/usr/lib/x86_64-linux-gnu/gconv/UTF-16.so")
    assert _check(gconv) == []
