"""A conda prefix (``conda-meta/*.json``) is one installation: its packages own their ``files``,
declare their ``depends`` by name, and the glibc baseline is the highest ``__glibc >=X`` among the
depends, else an installed ``sysroot_linux-*``'s version, else conda-forge's 2.17."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.output.text import render as render_text
from linkaudit.packages import find_site
from linkaudit.packages.site import conda_glibc
from tests.loader.dagbuild import Lib, elf_bytes

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
PYEXT = SAMPLES / "loader/pyext"


def _record(prefix: Path, name: str, files: list[str], depends: list[str], version: str = "1.0") -> None:
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    record = {"name": name, "version": version, "build": "0", "subdir": "linux-64", "depends": depends, "files": files}
    (meta / f"{name}-{version}-0.json").write_text(json.dumps(record))


def _prefix(tmp_path: Path, app_depends: list[str], with_helper: bool = True) -> Path:
    prefix = tmp_path / "env"
    (prefix / "pkg/lib").mkdir(parents=True)
    shutil.copy(PYEXT / "mod.cpython-311-x86_64-linux-gnu.so", prefix / "pkg")
    _record(prefix, "app", ["pkg/mod.cpython-311-x86_64-linux-gnu.so"], app_depends)
    if with_helper:
        shutil.copy(PYEXT / "lib/libhelper.so", prefix / "pkg/lib")
        _record(prefix, "helper", ["pkg/lib/libhelper.so"], ["libgcc >=13", "__glibc >=2.28,<3.0.a0"])
    return prefix


def test_glibc_baseline_of_a_prefix() -> None:
    assert conda_glibc(
        [{"name": "a", "depends": ["__glibc >=2.28,<3.0.a0"]}, {"name": "b", "depends": ["__glibc >=2.17"]}]
    ) == (2, 28)
    assert conda_glibc([{"name": "sysroot_linux-64", "version": "2.34", "depends": []}]) == (2, 34)
    assert conda_glibc([{"name": "zlib", "version": "1.3", "depends": ["libgcc >=13"]}]) == (2, 17)


def test_a_prefix_owns_its_files_and_declares_by_name(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path, ["helper >=1", "python >=3.11,<3.12.0a0"])
    site = find_site(str(prefix / "pkg"))
    assert site is not None and site.root == str(prefix)
    assert site.owner_of(str(prefix / "pkg/lib/libhelper.so")).name == "helper"  # type: ignore[union-attr]
    report = audit([str(prefix / "pkg")])
    assert not [f for f in report.findings if f.severity.value == "error"]
    (note,) = report.config["sites"]
    assert note["target_tag"] == "py3-none-manylinux_2_28_x86_64"
    assert note["policy"] == "conda-forge sysroot (glibc 2.28)"  # a prefix: glibc's libraries only
    # app does not list helper in its depends: it loads by accident
    other = _prefix(tmp_path / "b", ["python >=3.11"])
    undeclared = [f for f in audit([str(other / "pkg")]).findings if f.rule == "undeclared-dependency"]
    assert [(f.evidence["owner"], f.evidence["distribution"]) for f in undeclared] == [("helper", "app")]


def test_a_library_only_the_host_has_is_missing_from_a_prefix(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path, ["helper"], with_helper=False)
    host = tmp_path / "host"
    host.mkdir()
    shutil.copy(PYEXT / "lib/libhelper.so", host)
    dirs = (str(host), "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64")
    config = AuditConfig(target=TargetEnvironment(system_dirs=dirs))
    missing = [f for f in audit([str(prefix / "pkg")], config).findings if f.rule == "library-not-found"]
    assert [f.subject for f in missing] == ["libhelper.so"]


def test_a_prefix_takes_only_glibc_from_the_system(tmp_path: Path) -> None:
    """A conda prefix is judged against conda-forge's sysroot, not a manylinux policy: libz.so.1
    (which every manylinux policy lists, and this machine has) must come from a conda package."""
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    demo = Lib("libdemo.so", soname="libdemo.so", needed=("libz.so.1", "libc.so.6"))
    (prefix / "lib/libdemo.so").write_bytes(elf_bytes(demo))
    _record(prefix, "demo", ["lib/libdemo.so"], ["__glibc >=2.28,<3.0.a0"])
    report = audit([str(prefix)])
    (note,) = report.config["sites"]
    assert (
        note["target_tag"] == "py3-none-manylinux_2_28_x86_64" and note["policy"] == "conda-forge sysroot (glibc 2.28)"
    )
    (missing,) = [f for f in report.findings if f.rule == "library-not-found"]
    assert missing.evidence["needed"] == "libz.so.1" and missing.severity.value == "error"
    assert "libzlib or zlib" in missing.message and "requirements/run" in missing.message
    assert not report.config.get("outside_inputs")  # nothing came from this machine (libc: the sysroot's)
    assert "glibc's libraries count (conda-forge sysroot (glibc 2.28))" in render_text(report)


def test_an_undeclared_dependency_in_a_prefix_speaks_conda(tmp_path: Path) -> None:
    """app links helper's library without depending on it: conda's run requirements (conda-build:
    overlinking), not a wheel's Requires-Dist for a made-up tag; the site line names the prefix's
    target as conda does (its subdir and glibc baseline), not as a wheel tag."""
    prefix = _prefix(tmp_path, ["python >=3.11"])
    report = audit([str(prefix / "pkg")])
    (finding,) = [f for f in report.findings if f.rule == "undeclared-dependency"]
    assert "add helper to app's requirements/run (conda-build: overlinking)" in finding.message
    assert "the conda package helper, which app does not depend on" in finding.message
    assert "Requires-Dist" not in finding.message and "py3-none" not in finding.message
    text = render_text(report)
    assert "a conda prefix, target linux-64, glibc 2.28 (its glibc baseline)" in text
    assert "py3-none" not in text
