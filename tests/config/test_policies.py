"""Platform policies (config.policies): auditwheel's data, every tag, derived tags, profiles per
tag and architecture, and a drift check against the auditwheel version the data records."""

from __future__ import annotations

import glob
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from linkaudit.config.policies import iter_policies, parse_tag, policy_for_tag
from linkaudit.config.profiles import get_profile, implied_by_wheel, profiles
from linkaudit.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "linkaudit/rules/data/policies.json"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_policies", ROOT / "scripts/gen_policies.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_data_matches_the_recorded_auditwheel(tmp_path: Path) -> None:
    """Our policies.json is exactly what scripts/gen_policies.py makes of the auditwheel it records."""
    recorded = json.loads(DATA.read_text())
    version = recorded["auditwheel_version"]
    try:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:", "-d", str(tmp_path),
             f"auditwheel=={version}"],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    except (subprocess.SubprocessError, OSError):
        pytest.skip(f"auditwheel {version} cannot be fetched with pip here")
    (wheel,) = glob.glob(str(tmp_path / "auditwheel-*.whl"))
    gen = _generator()
    got = gen.build(*gen.read_auditwheel(wheel), recorded["generated"])
    assert got == recorded, "policies.json drifted from auditwheel's data: run scripts/gen_policies.py"


def test_every_published_policy_per_architecture() -> None:
    tags = {p.tag for p in iter_policies()}
    assert {"manylinux_2_5_x86_64", "manylinux_2_5_i686", "manylinux_2_17_ppc64", "manylinux_2_31_riscv64",
            "manylinux_2_36_loongarch64", "musllinux_1_1_x86_64", "musllinux_1_2_loongarch64"} <= tags  # fmt: skip
    assert "manylinux_2_5_aarch64" not in tags and "manylinux_2_28_riscv64" not in tags  # not published
    assert "musllinux_1_1_loongarch64" not in tags
    loaders = {p.arch: p.loader_name for p in iter_policies() if p.family == "manylinux"}
    assert loaders == {
        "x86_64": "ld-linux-x86-64.so.2", "i686": "ld-linux.so.2", "aarch64": "ld-linux-aarch64.so.1",
        "ppc64le": "ld64.so.2", "ppc64": "ld64.so.1", "s390x": "ld64.so.1", "armv7l": "ld-linux-armhf.so.3",
        "riscv64": "ld-linux-riscv64-lp64d.so.1", "loongarch64": "ld-linux-loongarch-lp64d.so.1",
    }  # fmt: skip
    musl = {p.arch: p.loader_name for p in iter_policies() if p.family == "musllinux"}
    assert musl["i686"] == "ld-musl-i386.so.1" and musl["armv7l"] == "ld-musl-armhf.so.1"
    assert musl["ppc64le"] == "ld-musl-powerpc64le.so.1"


def test_a_policy_as_published() -> None:
    p = policy_for_tag("manylinux2014_aarch64")
    assert p is not None and p.tag == "manylinux_2_17_aarch64" and p.derived_from is None
    assert p.aliases == ("manylinux2014_aarch64",) and p.machine == "aarch64"
    # auditwheel lists GLIBC_2.18 for aarch64 in manylinux_2_17 (CentOS 7's aarch64 glibc): as published.
    assert p.ceilings == ("GLIBC_2.18", "GLIBCXX_3.4.19", "CXXABI_1.3.7", "GCC_4.7.0", "LIBATOMIC_1.0", "ZLIB_1.2.5.2")
    assert "libc.so.6" in p.system_libraries and "__cxa_thread_atexit_impl" in p.blacklist["libc.so.6"]
    x86 = policy_for_tag("manylinux_2_17_x86_64")
    assert x86 is not None and x86.ceilings[:4] == ("GLIBC_2.17", "GLIBCXX_3.4.19", "CXXABI_1.3.7", "GCC_4.8.0")
    # non-numbered versions (TM_1, FLOAT128, ABI_DT_RELR) are listed but set no ceiling
    newest = policy_for_tag("manylinux_2_41_x86_64")
    assert newest is not None and "ABI_DT_RELR" in newest.symbol_versions["GLIBC"] and "GLIBC_2.41" in newest.ceilings
    musl = policy_for_tag("musllinux_1_2_x86_64")
    assert musl is not None and musl.ceilings == () and musl.system_libraries == ("libc.so", "libz.so.1")


def test_a_legal_tag_without_a_policy_is_derived() -> None:
    p = policy_for_tag("manylinux_2_29_x86_64")
    assert p is not None and p.derived_from == "manylinux_2_28" and p.name == "manylinux_2_29"
    assert p.ceilings[:4] == ("GLIBC_2.29", "GLIBCXX_3.4.24", "CXXABI_1.3.11", "GCC_7.0.0")
    assert p.system_libraries == policy_for_tag("manylinux_2_28_x86_64").system_libraries  # type: ignore[union-attr]
    assert policy_for_tag("manylinux_2_17_riscv64") is None  # riscv64 starts at 2_31
    assert policy_for_tag("manylinux_2_4_x86_64") is None  # nothing published below
    for tag in ("linux_x86_64", "macosx_11_0_arm64", "any", "manylinux_2_17_sparc"):
        assert policy_for_tag(tag) is None
    assert parse_tag("manylinux1_i686") == ("manylinux", (2, 5), "i686")


def test_profiles_per_tag_and_architecture(run_cli) -> None:  # type: ignore[no-untyped-def]
    known = profiles()
    assert known["manylinux_2_17"].max_versions == known["manylinux_2_17_x86_64"].max_versions
    assert {"manylinux_2_28_aarch64", "musllinux_1_2_x86_64", "manylinux_2_5_i686"} <= set(known)
    assert get_profile("manylinux2014").name == "manylinux_2_17_x86_64"
    assert get_profile("manylinux2014_aarch64").name == "manylinux_2_17_aarch64"
    derived = get_profile("manylinux_2_29")
    assert derived.name == "manylinux_2_29_x86_64" and "derived" in derived.summary
    with pytest.raises(ConfigError, match="no such profile"):
        get_profile("manylinux_1_99")
    r = run_cli("profiles")
    assert r.exit_code == 0 and "manylinux_2_36_loongarch64" in r.stdout and "musllinux_1_1_s390x" in r.stdout
    one = run_cli("profiles", "musllinux_1_2_x86_64")
    assert one.exit_code == 0 and "loader: /lib/ld-musl-x86_64.so.1" in one.stdout and "no symbol-version" in one.stdout


@pytest.mark.parametrize(
    ("name", "tag", "libcs"),
    [
        ("n-1-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl", "manylinux_2_17_aarch64", 1),
        ("n-1-cp311-cp311-manylinux_2_28_x86_64.manylinux_2_17_x86_64.whl", "manylinux_2_17_x86_64", 1),
        (
            "n-1-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64.whl",
            "manylinux_2_17_x86_64",
            2,
        ),
        ("n-1-cp311-cp311-musllinux_1_2_x86_64.whl", "musllinux_1_2_x86_64", 1),
    ],
)
def test_a_wheel_selects_its_policies(name: str, tag: str, libcs: int) -> None:
    got = implied_by_wheel(name)
    assert got is not None and got.tag == tag and len(got.policies) == libcs
    assert got.policies[0].tag == tag


def test_jax_tag_gets_every_ceiling() -> None:
    got = implied_by_wheel("jax_cuda12_plugin-0.10.2-cp311-cp311-manylinux_2_27_x86_64.whl")
    assert got is not None and got.ceilings[:4] == ("GLIBC_2.27", "GLIBCXX_3.4.24", "CXXABI_1.3.11", "GCC_7.0.0")
