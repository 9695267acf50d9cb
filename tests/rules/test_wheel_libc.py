"""``wheel-libc``: wheels assembled from a musl build and a glibc build.  The extensions are the
committed samples: ``targets/musl/pyuser``'s extension is linked against musl (DT_NEEDED libc.so),
``loader/pyext`` against glibc (DT_NEEDED libc.so.6)."""

from __future__ import annotations

import sys
import zipfile
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.rules import rule_ids

from .helpers import SAMPLES

MUSL_EXT = SAMPLES / "targets/musl/pyuser/mod.cpython-311-x86_64-linux-musl.so"
GLIBC_LIB = SAMPLES / "loader/pyext/lib/libhelper.so"


def _wheel(tmp_path: Path, platform: str, member: Path) -> Path:
    path = tmp_path / f"demo-1.0-cp311-cp311-{platform}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"demo/{member.name}", member.read_bytes())
        zf.writestr("demo-1.0.dist-info/WHEEL", f"Wheel-Version: 1.0\nTag: cp311-cp311-{platform}\n")
    return path


@pytest.mark.parametrize(
    ("platform", "member", "libc", "linked_by"),
    [
        ("manylinux_2_17_x86_64.manylinux2014_x86_64", MUSL_EXT, "musl", "DT_NEEDED libc.so"),
        ("musllinux_1_2_x86_64", GLIBC_LIB, "glibc", "DT_NEEDED libc.so.6"),
    ],
)
def test_a_file_of_the_other_c_library_is_an_error(
    tmp_path: Path, platform: str, member: Path, libc: str, linked_by: str
) -> None:
    wheel = _wheel(tmp_path, platform, member)
    report = audit([str(wheel)])
    (found,) = [f for f in report.findings if f.rule == "wheel-libc"]
    assert found.severity.value == "error" and found.file == f"{wheel}!demo/{member.name}"
    assert found.evidence["libc"] == libc and found.evidence["linked_by"] == linked_by
    assert found.evidence["tag"] == platform.split(".")[0]
    # vendoring is no advice for glibc itself (it was: "external-library libc.so.6 ... vendor it")
    assert not [f for f in report.findings if f.rule == "external-library"]


@pytest.mark.parametrize(
    ("platform", "member"),
    [("manylinux_2_17_x86_64", GLIBC_LIB), ("musllinux_1_2_x86_64", MUSL_EXT), ("linux_x86_64", MUSL_EXT)],
)
def test_a_file_of_the_promised_c_library_is_not(tmp_path: Path, platform: str, member: Path) -> None:
    report = audit([str(_wheel(tmp_path, platform, member))])
    assert not [f for f in report.findings if f.rule == "wheel-libc"]


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    from linkaudit.packages.staged import Staged

    asked: list[str] = []
    real = Staged.package_of

    def counted(self: Staged, path: str) -> str | None:
        if sys._getframe(1).f_globals["__name__"] in ("linkaudit.rules.wheel_libc", "linkaudit.rules.platform_tag"):
            asked.append(path)
        return real(self, path)

    monkeypatch.setattr(Staged, "package_of", counted)
    return asked


def test_the_wheel_rules_ask_no_member_of_a_tarball_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """wheel-libc and wheel-architecture judge wheels only: a tarball of 200 members cost them
    400 package lookups (1.2 s of 3 at 200,000 members, issue 14); now none of theirs — and on a wheel they
    still look, and find."""
    import io
    import tarfile

    tarball = tmp_path / "many.tar.gz"
    with tarfile.open(tarball, "w:gz") as tf:
        for i in range(200):
            info = tarfile.TarInfo(f"lib/lib{i}.so")
            info.size = len(MUSL_EXT.read_bytes())
            tf.addfile(info, io.BytesIO(MUSL_EXT.read_bytes()))
    only = AuditConfig(
        ignore=tuple(r for r in rule_ids() if r not in ("wheel-libc", "wheel-architecture", "unreadable-input"))
    )
    asked = _asked(monkeypatch)
    report = audit([str(tarball)], only)
    assert len(report.files) == 200 and not report.findings
    assert asked == []
    wheel = _wheel(tmp_path, "manylinux_2_17_x86_64", MUSL_EXT)
    report = audit([str(wheel)], only)
    assert [f.rule for f in report.findings] == ["wheel-libc"] and asked
