"""An installation of wheels of several projects is judged on the system its most demanding wheel
needs: pip installs the set only where every wheel's tag is accepted, so glibc (musl) is at least
the highest floor among them and the system libraries are that policy's (``libmvec.so.1`` is one of
manylinux_2_28's, not of manylinux_2_17's).  Each wheel is still held to its own tag's promise
(``external-library``).

``libuses_driver.so`` NEEDs ``libcuda.so.1``; patched, it NEEDs ``libmvec.so.1`` (same length).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.audit import policy_target
from linkaudit.loader.target import TargetEnvironment

from .rules.helpers import SAMPLES

_MVEC = (SAMPLES / "misc/libuses_driver.so").read_bytes().replace(b"libcuda.so.1\0", b"libmvec.so.1\0")


def _wheel(folder: Path, name: str, tag: str, members: dict[str, bytes]) -> Path:
    path = folder / f"{name}-1.0-{tag}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for member, data in members.items():
            zf.writestr(member, data)
        zf.writestr(f"{name}/__init__.py", "")
    return path


def _mvec_findings(paths: list[Path], rule: str) -> list[str]:
    report = audit([str(p) for p in paths], AuditConfig())
    return [f.file for f in report.findings if f.rule == rule and "libmvec.so.1" in f.subject]


def test_a_2_28_wheel_beside_a_2_17_one_finds_the_2_28_system_libraries(tmp_path: Path) -> None:
    """The user's report (soundfile manylinux_2_28 + matplotlib manylinux2014): libmvec.so.1 was a
    false library-not-found once the 2_17 wheel was beside the 2_28 one."""
    a = _wheel(tmp_path, "apkg", "py3-none-manylinux_2_28_x86_64", {"apkg/libavec.so": _MVEC})
    b = _wheel(tmp_path, "bpkg", "cp311-cp311-manylinux_2_17_x86_64", {"bpkg/_b.cpython-311-x86_64-linux-gnu.so":
                                                                       (SAMPLES / "fixed/libnvrtc.so.12").read_bytes()})  # fmt: skip
    assert _mvec_findings([a], "library-not-found") == []
    assert _mvec_findings([a, b], "library-not-found") == []
    assert _mvec_findings([a, b], "external-library") == []


def test_each_wheel_is_still_held_to_its_own_tag(tmp_path: Path) -> None:
    """The 2_17 wheel needing libmvec.so.1 breaks its own promise, whatever wheel is beside it."""
    a = _wheel(tmp_path, "apkg", "py3-none-manylinux_2_28_x86_64", {"apkg/liba.so": (SAMPLES / "fixed/libnvrtc.so.12").read_bytes()})  # fmt: skip
    b = _wheel(tmp_path, "bpkg", "cp311-cp311-manylinux_2_17_x86_64", {"bpkg/libbvec.so": _MVEC})
    (file,) = _mvec_findings([a, b], "external-library")
    assert file.endswith("bpkg/libbvec.so")


@pytest.mark.parametrize(
    ("tags", "policy"),
    [
        (["manylinux_2_28_x86_64", "manylinux_2_17_x86_64"], "manylinux_2_28_x86_64"),
        (["manylinux2014_x86_64", "manylinux_2_34_x86_64", "manylinux_2_28_x86_64"], "manylinux_2_34_x86_64"),
        # a compressed tag set claims its lowest: the other wheel's 2_28 is the floor of the pair
        (["manylinux_2_17_x86_64.manylinux_2_34_x86_64", "manylinux_2_28_x86_64"], "manylinux_2_28_x86_64"),
    ],
)
def test_the_installation_policy_is_the_highest_floor(tags: list[str], policy: str) -> None:
    packages = [f"p{i}-1.0-py3-none-{t}.whl" for i, t in enumerate(tags)]
    target = policy_target(TargetEnvironment(), "auto", packages)
    assert target.system_policy == policy
    assert target.system_libraries is not None
    assert ("libmvec.so.1" in target.system_libraries) is (policy != "manylinux_2_17_x86_64")


def test_musllinux_wheels_take_the_highest_musl_too() -> None:
    packages = ["a-1.0-py3-none-musllinux_1_1_x86_64.whl", "b-1.0-py3-none-musllinux_1_2_x86_64.whl"]
    assert policy_target(TargetEnvironment(), "auto", packages).musl_policy == "musllinux_1_2_x86_64"
