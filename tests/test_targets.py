"""Every platform tag a target: a wheel's tags choose the policy its binaries are loaded under
(the target's system libraries, its loader, its ceilings), whatever machine audits it."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
AARCH64_EXT = SAMPLES / "targets/aarch64/aarch64ext.cpython-311-aarch64-linux-gnu.so"


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _findings(run_cli, *args: str) -> tuple[int, list[dict[str, object]]]:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-config", "--format", "json", *args)
    return r.exit_code, json.loads(r.stdout)["findings"]


def test_an_aarch64_wheel_is_loaded_against_its_policy(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """On an x86-64 host there is no aarch64 libc.so.6, libm.so.6 or ld-linux-aarch64.so.1: the
    policy's system libraries stand in for them (no library-not-found), the library the policy does
    not list is still missing, and the aarch64 policy's GLIBC ceiling (2.18, as auditwheel lists)
    catches fstat64@GLIBC_2.33."""
    whl = _wheel(
        tmp_path / "m-1.0-cp311-cp311-manylinux_2_17_aarch64.manylinux2014_aarch64.whl",
        {"m/aarch64ext.cpython-311-aarch64-linux-gnu.so": AARCH64_EXT.read_bytes()},
    )
    code, findings = _findings(run_cli, str(whl))
    missing = [f["subject"] for f in findings if f["rule"] == "library-not-found"]
    assert missing == ["libmissing.so.1"]
    (nf,) = [f for f in findings if f["rule"] == "library-not-found"]
    assert "manylinux_2_17_aarch64" in str(nf["evidence"])
    (sv,) = [f for f in findings if f["rule"] == "symbol-version" and f["subject"].startswith("GLIBC")]  # type: ignore[union-attr]
    assert sv["evidence"]["ceiling"] == "GLIBC_2.18" and "fstat64@GLIBC_2.33" in sv["evidence"]["symbols"]  # type: ignore[index]
    assert not [f for f in findings if f["rule"] in ("unused-needed", "unresolved-symbol", "version-not-found")]
    assert code == 1
    # The same file given bare (no tag): the host is the target, nothing of aarch64 is found.
    _code, bare = _findings(run_cli, str(AARCH64_EXT))
    assert {"libc.so.6", "libm.so.6", "libmissing.so.1"} <= {
        f["subject"] for f in bare if f["rule"] == "library-not-found"
    }
    # ... unless a profile names the target.
    _code, profiled = _findings(
        run_cli, "--profile", "manylinux2014_aarch64", "--target-env", "policy", str(AARCH64_EXT)
    )
    assert [f["subject"] for f in profiled if f["rule"] == "library-not-found"] == ["libmissing.so.1"]


def test_tree_shows_the_policy_library(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    whl = _wheel(
        tmp_path / "m-1.0-cp311-cp311-manylinux_2_17_aarch64.whl",
        {"m/aarch64ext.cpython-311-aarch64-linux-gnu.so": AARCH64_EXT.read_bytes()},
    )
    r = run_cli("tree", str(whl))
    assert "<manylinux_2_17_aarch64>/libc.so.6" in r.stdout, r.stdout


def test_a_tag_without_a_published_policy_is_derived(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """manylinux_2_29 has no auditwheel policy: GLIBC_2.29 from the tag, the rest from manylinux_2_28,
    and the evidence says so. libdlopens.so needs GLIBC_2.34."""
    lib = (SAMPLES / "dlopen/libdlopens.so").read_bytes()
    whl = _wheel(tmp_path / "d-1.0-py3-none-manylinux_2_29_x86_64.whl", {"d/libdlopens.so": lib})
    _code, findings = _findings(run_cli, "--no-loader", str(whl))
    (sv,) = [f for f in findings if f["rule"] == "symbol-version"]
    assert sv["evidence"]["ceiling"] == "GLIBC_2.29"  # type: ignore[index]
    assert "derived" in sv["evidence"]["ceiling_source"] and "manylinux_2_28" in sv["evidence"]["ceiling_source"]  # type: ignore[index, operator]


def test_the_interface_for_installations() -> None:
    """What the installations room calls: one function, one platform tag in, a Policy or None out."""
    from linkaudit.config.profiles import policy_for_tag

    policy = policy_for_tag("manylinux_2_28_aarch64")
    assert policy is not None and policy.machine == "aarch64" and policy.loader_name == "ld-linux-aarch64.so.1"
    assert "libc.so.6" in policy.system_libraries and policy_for_tag("linux_x86_64") is None


def test_an_extension_of_another_machine_gets_a_python_process_of_its_own(tmp_path: Path) -> None:
    """An aarch64 extension given with x86-64 ones is never imported into their interpreter: its
    libm.so.6 is not the x86-64 libm they loaded (before: version-not-found GLIBC_2.17 against
    /lib/x86_64-linux-gnu/libm.so.6, and unused-needed naming it); on this machine its system
    libraries are not found, and the finding says why and what to give."""
    import platform
    import shutil

    from linkaudit import audit

    shutil.copy(AARCH64_EXT, tmp_path)
    shutil.copy(SAMPLES / "ext_libc/_libconly.cpython-311-x86_64-linux-gnu.so", tmp_path)
    findings = audit([str(tmp_path)]).findings
    mine = [f for f in findings if f.file.endswith(AARCH64_EXT.name)]
    assert not [f for f in mine if f.rule in ("version-not-found", "unused-needed")]
    assert not any("x86_64-linux-gnu" in str(f.evidence.get("resolved", "")) for f in mine)
    if platform.machine() == "x86_64":
        (libc,) = [f for f in mine if f.rule == "library-not-found" and f.subject == "libc.so.6"]
        assert "the file is aarch64 and this machine is x86-64" in libc.message
        assert "--profile manylinux_2_28_aarch64 --target-env policy" in libc.message
