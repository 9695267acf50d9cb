"""An installed site's delvewheel-repaired distributions find their ``<name>.libs`` DLLs, as inside
the wheel: ``DELVEWHEEL`` in the dist-info, a ``.load-order-*`` file in ``<name>.libs/`` or the
``_delvewheel_patch`` in the package's ``__init__.py`` each says the package adds the directory."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

import pytest
from test_installations import _windows_wheel

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.packages.delvewheel import libs_directories


def _site(tmp_path: Path, marker: str) -> Path:
    """The delvewheel-laid-out wheel installed (unzipped, RECORD kept) into a site, repaired as ``marker`` says."""
    site = tmp_path / "site"
    with zipfile.ZipFile(_windows_wheel(tmp_path, delvewheel=marker == "DELVEWHEEL")) as zf:
        zf.extractall(site)
    extra = {
        "load-order": ("pkg.libs/.load-order-pkg-1.0", "helper.dll\n"),
        "patch": ("pkg/__init__.py", '"""..."""\n\ndef _delvewheel_patch_1_10_0():\n    import os\n'),
    }.get(marker)
    if extra is not None:
        (site / extra[0]).write_text(extra[1])
        with open(site / "pkg-1.0.dist-info/RECORD", "a", newline="") as fh:
            csv.writer(fh).writerow([extra[0], "", ""])
    return site


@pytest.mark.parametrize("marker", ["none", "DELVEWHEEL", "load-order", "patch"])
def test_a_repaired_distribution_of_a_site_finds_its_vendored_dlls(tmp_path: Path, marker: str) -> None:
    site = _site(tmp_path, marker)
    report = audit([str(site / "pkg")], AuditConfig(target=TargetEnvironment()))
    missing = [f.subject for f in report.findings if f.rule == "library-not-found"]
    assert missing == (["helper.dll"] if marker == "none" else [])


def test_libs_directories_reads_only_what_marks_a_repair(tmp_path: Path) -> None:
    files = ["pkg/__init__.py", "pkg/_app.pyd", "pkg.libs/helper.dll"]
    assert libs_directories(files, str(tmp_path)) == []  # no marker, __init__.py absent: not repaired
    assert libs_directories([*files, "pkg.libs/.load-order-pkg-1.0"], "/r") == ["/r/pkg.libs"]
    assert libs_directories(["pkg-1.0.dist-info/DELVEWHEEL", "pkg/x.pyd"], "/r") == []  # no .libs directory
