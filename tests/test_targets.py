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
