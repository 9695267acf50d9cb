"""``--with-driver`` under a platform policy: the GPU driver's libraries (``rules/data/cuda.toml``)
count as system libraries of any wheel's, site's or conda prefix's target — the machine's driver
provides them, no policy lists one and no package ships one — so they resolve where the target
(``--sysroot``) has them; found nowhere, ``library-not-found`` never names a package as their
provider. Driverless (the default) they stay absent, reported by ``driver-link``."""

from __future__ import annotations

import zipfile
from pathlib import Path

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.report import Finding
from tests.loader.dagbuild import Lib, elf_bytes

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
TAG = "cp311-cp311-manylinux_2_17_x86_64"
EXT = "cpkg/c.cpython-311-x86_64-linux-gnu.so"
DIRS = ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu")


def _wheel(tmp_path: Path) -> Path:
    """cpkg's extension module NEEDs libcuda.so.1 (and libc.so.6); its wheel declares nothing."""
    ext = Lib("c.so", needed=("libcuda.so.1", "libc.so.6"), imports=("cuInit",), exports=("PyInit_c",))
    info = "cpkg-1.0.dist-info"
    members = {
        EXT: elf_bytes(ext),
        f"{info}/METADATA": b"Metadata-Version: 2.1\nName: cpkg\nVersion: 1.0\n",
        f"{info}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {TAG}\n".encode(),
        f"{info}/RECORD": f"{EXT},,\n{info}/METADATA,,\n{info}/WHEEL,,\n{info}/RECORD,,\n".encode(),
    }
    path = tmp_path / f"cpkg-1.0-{TAG}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _sysroot(tmp_path: Path, driver: bool) -> Path:
    """A target root file system, with the driver's libcuda.so.1 in its system directory or not."""
    root = tmp_path / ("with-driver" if driver else "no-driver")
    (root / "usr/lib/x86_64-linux-gnu").mkdir(parents=True)
    if driver:
        (root / "usr/lib/x86_64-linux-gnu/libcuda.so.1").write_bytes((SAMPLES / "driver/libcuda.so.1").read_bytes())
    return root


def _not_found(tmp_path: Path, driver: bool, driverless: bool) -> list[Finding]:
    target = TargetEnvironment(sysroot=str(_sysroot(tmp_path, driver)), system_dirs=DIRS, use_cache=False,
                               driverless=driverless)  # fmt: skip
    report = audit([str(_wheel(tmp_path))], AuditConfig(target=target))
    return [f for f in report.findings if f.rule == "library-not-found" and f.subject == "libcuda.so.1"]


def test_with_driver_a_wheel_finds_the_driver_the_target_has(tmp_path: Path) -> None:
    """The repro: the sysroot has libcuda.so.1 in its system directory; under manylinux_2_17 it was
    "outside-target" (not one of the policy's system libraries) and missing."""
    assert _not_found(tmp_path, driver=True, driverless=False) == []


def test_with_driver_a_missing_driver_is_never_a_package_to_declare(tmp_path: Path) -> None:
    """Found nowhere: the attempts are the target's system directories (not "outside-target", not
    the policy's model), and the message names the driver, no distribution that would ship it."""
    (finding,) = _not_found(tmp_path, driver=False, driverless=False)
    outcomes = {a["outcome"] for a in finding.evidence["attempts"]}
    assert outcomes == {"missing"}, finding.evidence["attempts"]
    assert "GPU driver" in finding.message and "no package ships it" in finding.message
    assert "no distribution" not in finding.message and "Requires-Dist" not in finding.message
    assert finding.evidence["providers"] == [] and finding.evidence["declared_by"] is None
    assert "PyPI" not in finding.message


def test_driverless_the_driver_stays_absent(tmp_path: Path) -> None:
    """Without --with-driver nothing changes: the driver is absent even where present (driver-link
    reports the link), and library-not-found says nothing of it."""
    assert _not_found(tmp_path, driver=True, driverless=True) == []
    (tmp_path / "again").mkdir()
    report = audit([str(_wheel(tmp_path / "again"))], AuditConfig(target=TargetEnvironment(driverless=True)))
    assert [f.subject for f in report.findings if f.rule == "driver-link"] == ["libcuda.so.1"]
