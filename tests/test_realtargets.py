"""Real wheels for other targets than the auditing host (skipped where pip cannot fetch them):
numpy 2.2.6 for manylinux_2_17_aarch64, numpy 2.3.5 for musllinux_1_2_x86_64, jax-cuda12-plugin
0.10.2 for manylinux_2_27_x86_64."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .output.schema import validate_report
from .realsite import cache_root, download_wheel
from .tools import needs

pytestmark = pytest.mark.realwheel


def _wheel(requirement: str, platform: str) -> Path:
    wheel, reason = download_wheel(cache_root() / "targets", requirement, platform)
    if wheel is None:
        pytest.skip(f"{requirement} for {platform} not available offline: {reason}")
    return wheel


def _check(run_cli, wheel: Path) -> tuple[int, dict[str, object]]:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-config", "--format", "json", str(wheel))
    doc = json.loads(r.stdout)
    validate_report(doc)
    return r.exit_code, doc


def test_numpy_aarch64_has_no_false_library_not_found(run_cli) -> None:  # type: ignore[no-untyped-def]
    code, doc = _check(run_cli, _wheel("numpy==2.2.6", "manylinux_2_17_aarch64"))
    findings = doc["findings"]
    assert [f for f in findings if f["rule"] == "library-not-found"] == []  # type: ignore[union-attr]
    assert [f for f in findings if f["rule"] in ("unused-needed", "version-not-found")] == []  # type: ignore[union-attr]
    assert code == 0


def test_jax_plugin_gets_the_manylinux_2_27_ceilings(run_cli) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel("jax-cuda12-plugin==0.10.2", "manylinux_2_27_x86_64")
    _code, doc = _check(run_cli, wheel)
    (policy,) = doc["config"]["wheel_policies"]  # type: ignore[index]
    assert policy.endswith(
        "manylinux_2_27_x86_64: GLIBC_2.27 GLIBCXX_3.4.24 CXXABI_1.3.11 GCC_7.0.0 LIBATOMIC_1.2 ZLIB_1.2.9"
    )


def test_numpy_musllinux_is_loaded_by_musl(run_cli) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel("numpy==2.3.5", "musllinux_1_2_x86_64")
    code, doc = _check(run_cli, wheel)
    findings = doc["findings"]
    rules = {f["rule"] for f in findings}  # type: ignore[index]
    assert "loader-skipped" not in rules and "library-not-found" not in rules and "external-library" not in rules
    assert "musl_system_libraries=musllinux_1_2_x86_64" in doc["config"]["loader"]  # type: ignore[index]
    assert code == 0
    tree = run_cli("tree", str(wheel))
    assert "libc.musl-x86_64.so.1 => " in tree.stdout and "ld-musl-x86_64.so.1" in tree.stdout


def _unbound_names(doc: dict[str, object]) -> set[str]:
    return {s for f in doc["findings"] if f["rule"] == "unresolved-symbol" for s in f["evidence"]["symbols"]}  # type: ignore[index,union-attr,attr-defined]


def test_numpy_extension_modules_bind_libc_in_the_interpreters_scope(run_cli) -> None:  # type: ignore[no-untyped-def]
    """_operand_flag_tests and _struct_ufunc_tests have no DT_NEEDED: their __cxa_finalize is the
    interpreter's libc's (glibc: libc.so.6; musl: the loader), on every target."""
    for requirement, platform in (
        ("numpy==2.3.5", "manylinux_2_28_x86_64"),
        ("numpy==2.2.6", "manylinux_2_17_aarch64"),
        ("numpy==2.3.5", "musllinux_1_2_x86_64"),
    ):
        _code, doc = _check(run_cli, _wheel(requirement, platform))
        assert "__cxa_finalize" not in _unbound_names(doc), platform


@needs("musl-ldd")
def test_numpy_musllinux_frame_hooks_stay_weak_notes_against_real_musl(run_cli) -> None:  # type: ignore[no-untyped-def]
    """libgcc's frame hooks (``__register_frame_info``: no libc defines them) stay weak notes on musl.

    Which names musl's libc defines is known only from a real musl libc: where the host has one
    (Debian's musl-tools: ``/lib/ld-musl-x86_64.so.1``) it stands in for the musllinux policy's
    loader; without it the policy's libc is modelled, which defines every name it is asked for, and
    the note cannot be derived (a stock machine: the skip names the package)."""
    _code, doc = _check(run_cli, _wheel("numpy==2.3.5", "musllinux_1_2_x86_64"))
    unbound = _unbound_names(doc)
    assert "__register_frame_info" in unbound
    assert "__cxa_finalize" not in unbound
