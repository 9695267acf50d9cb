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
