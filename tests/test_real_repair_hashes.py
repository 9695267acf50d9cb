"""Repair hashes on real wheels (``tests/config/test_repair_hashes.py`` has the rule): numpy 1.25.2
and 1.26.4 vendor auditwheel's ``libopenblas64_p-r0-<hash>.3.23.dev.so``, the hash mid-name; numpy
1.26.4's win_amd64 wheel delvewheel's ``libopenblas64__v0.3.23-293-gc2f4bdbb-gcc_10_3_0-<32 hex>.dll``;
pillow 11.0.0 auditwheel's ``libjpeg-25f93ad1.so.62.4.0``. Each wheel is fetched once into the test
cache (``wheels-repaired``); a test is skipped where it cannot be."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .conftest import platform_wheel

pytestmark = pytest.mark.realwheel

LINUX = "manylinux2014_x86_64"


def _wheel(spec: str, platform: str) -> Path:
    name, version = spec.split("==")
    tag = "win_amd64" if platform == "win_amd64" else "manylinux*"
    return platform_wheel(spec, platform, f"{name}-{version}-cp311-cp311-{tag}.whl", "wheels-repaired")


def test_numpy_releases_baseline_and_diff_keep_the_mid_name_hash_out(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A baseline written for numpy 1.25.2 accepts 1.26.4's OpenBLAS finding (no new finding, no
    baseline-fixed note for it); ``diff`` sees no OpenBLAS file or DT_NEEDED change."""
    old, new = _wheel("numpy==1.25.2", LINUX), _wheel("numpy==1.26.4", LINUX)
    monkeypatch.chdir(tmp_path)
    for build, wheel in (("old", old), ("new", new)):
        (tmp_path / build).mkdir()
        shutil.copy(wheel, tmp_path / build)
    run_cli("check", "old", "--write-baseline", "bl.json")
    keys = [f for f in json.loads((tmp_path / "bl.json").read_text())["findings"] if "openblas" in f["file"]]
    # under the wheel's target (cp311-cp311-manylinux_x86_64:numpy.libs/...), its version left out
    assert keys and all(f["file"].split(":")[1] == "numpy.libs/libopenblas64_p-r0-*.3.23.dev.so" for f in keys)
    doc = json.loads(run_cli("check", "--format", "json", "new", "--baseline", "bl.json").stdout)
    live = [f for f in doc["findings"] if "openblas" in f["file"] and not f.get("suppressed")]
    fixed = [f for f in doc["findings"] if f["rule"] == "baseline-fixed" and "openblas" in f["evidence"]["file"]]
    assert live == [] and fixed == []
    text = run_cli("diff", "old", "new").stdout
    assert "openblas" not in text, text


@pytest.mark.parametrize(
    ("spec", "platform", "asked", "taken"),
    [
        (
            "numpy==1.26.4",
            "win_amd64",
            "libopenblas64__v0.3.23-293-gc2f4bdbb-gcc_10_3_0.dll",
            "libopenblas64__v0.3.23-293-gc2f4bdbb-gcc_10_3_0-2bde3a66a51006b2b53eb373ff767a3f.dll",
        ),
        ("pillow==11.0.0", LINUX, "libjpeg.so.62", "libjpeg-25f93ad1.so.62.4.0"),
        ("numpy==1.26.4", LINUX, "libopenblas64_p-r0.3.23.dev.so", "libopenblas64_p-r0-0cf96a72.3.23.dev.so"),
    ],
)
def test_why_by_the_name_before_the_repair(run_cli, spec: str, platform: str, asked: str, taken: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(_wheel(spec, platform)), asked)
    assert r.exit_code == 0, r.stdout
    assert r.stdout.startswith(f"{asked}: no library of that name; taken as {taken}, the copy a repair tool renamed\n")
    assert f"→ {taken} => " in r.stdout
