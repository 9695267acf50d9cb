"""Profiles (``--profile``, ``profile =``, ``linkaudit profiles``): named symbol-version ceilings."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import pytest

from linkaudit.config import VersionCeiling
from linkaudit.config.profiles import profiles

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
NEWGLIBC = str(SAMPLES / "misc/libnewglibc.so")


@pytest.fixture(autouse=True)
def _no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _versions(run_cli, *args: str) -> set[str]:  # type: ignore[no-untyped-def]
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", *args, NEWGLIBC).stdout)
    return {f["subject"] for f in doc["findings"] if f["rule"] == "symbol-version"}


def test_profile_data_is_valid() -> None:
    known = profiles()
    assert {"cuda", "manylinux_2_17", "manylinux_2_28", "manylinux_2_34", "conda-forge:2.17"} <= set(known)
    for p in known.values():
        datetime.date.fromisoformat(p.date)
        assert p.source and p.summary
        prefixes = [VersionCeiling.parse(v).prefix for v in p.max_versions]
        assert len(prefixes) == len(set(prefixes)), p.name
    assert known["manylinux_2_17"].max_versions[:4] == ("GLIBC_2.17", "GLIBCXX_3.4.19", "CXXABI_1.3.7", "GCC_4.8.0")
    assert all(v.startswith("GLIBC_") for n, p in known.items() if n.startswith("conda-forge") for v in p.max_versions)


def test_profile_sets_ceilings(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert _versions(run_cli) == set()  # default profile cuda: no ceiling
    assert _versions(run_cli, "--profile", "manylinux_2_17") == {"GLIBC_2.26"}
    assert _versions(run_cli, "--profile", "manylinux_2_34") == set()
    # --max-version replaces the profile's ceiling of the same prefix
    assert _versions(run_cli, "--profile", "manylinux_2_17", "--max-version", "GLIBC_2.28") == set()


def test_profile_from_config_file(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "linkaudit.toml").write_text('profile = "conda-forge:2.17"\n')
    assert _versions(run_cli) == {"GLIBC_2.26"}
    assert _versions(run_cli, "--profile", "cuda") == set()
    (tmp_path / "linkaudit.toml").write_text('profile = "manylinux_1"\n')
    r = run_cli("check", "--no-loader", NEWGLIBC)
    assert r.exit_code == 2 and "linkaudit.toml: profile: --profile manylinux_1: no such profile" in r.stderr


def test_profiles_command(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("profiles")
    line = "manylinux_2_28              GLIBC_2.28, GLIBCXX_3.4.24, CXXABI_1.3.11, GCC_7.0.0, LIBATOMIC_1.2, ZLIB_1.2.9"
    assert r.exit_code == 0 and line in r.stdout
    one = run_cli("profiles", "manylinux_2_17")
    assert "source: PEP 600; auditwheel 6.8.2, policy manylinux_2_17" in one.stdout
    assert run_cli("profiles", "nope").exit_code == 2


def test_empty_profile_name_is_an_error(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-loader", "--profile", "", NEWGLIBC)
    assert r.exit_code == 2 and "no such profile" in r.stderr
