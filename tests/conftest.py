"""Shared fixtures: the committed sample binaries, the CLI runner, and the real wheel (where present)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from linkaudit.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bins"
TORCH_VERSION = "2.14.1"


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):  # type: ignore[no-untyped-def]
    """Run ``linkaudit ARGS...`` in-process; returns exit code, stdout, stderr."""

    def run(*args: str) -> CliResult:
        code = main(list(args))
        out, err = capsys.readouterr()
        return CliResult(code, out, err)

    return run


def _wheel_cache() -> Path:
    base = os.environ.get("LINKAUDIT_TEST_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "linkaudit-tests")
    return Path(base) / f"torch-{TORCH_VERSION}"


@pytest.fixture(scope="session")
def torch_wheel_dir() -> Path:
    """The extracted ``torch/`` of the real torch 2.14.1 CUDA wheel; skips when pip cannot fetch it offline.

    The wheel comes from a local pip index (``pip download --no-deps torch==2.14.1``);
    only ``torch/lib/*.so*`` and ``torch/_C*.so`` are extracted, once, into a cache.
    """
    cache = _wheel_cache()
    marker = cache / ".complete"
    if not marker.exists():
        cache.mkdir(parents=True, exist_ok=True)
        download = cache / "download"
        try:
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pip",
                    "download",
                    "--no-deps",
                    "--quiet",
                    "-d",
                    str(download),
                    f"torch=={TORCH_VERSION}",
                    "--only-binary=:all:",
                    "--platform",
                    "manylinux_2_28_x86_64",
                    "--python-version",
                    "3.11",
                    "--implementation",
                    "cp",
                ],
                capture_output=True,
                text=True,
                timeout=600,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            pytest.skip(f"torch=={TORCH_VERSION} wheel not available: {exc}")
        wheels = sorted(download.glob("torch-*.whl")) if download.exists() else []
        if proc.returncode != 0 or not wheels:
            pytest.skip(f"torch=={TORCH_VERSION} wheel not available offline: {proc.stderr.strip()[-300:]}")
        with zipfile.ZipFile(wheels[0]) as zf:
            for name in zf.namelist():
                if (name.startswith("torch/lib/") and ".so" in name) or (
                    name.startswith("torch/_C") and name.endswith(".so")
                ):
                    zf.extract(name, cache)
        shutil.rmtree(download, ignore_errors=True)
        marker.write_text("ok\n")
    return cache / "torch"


@pytest.fixture(scope="session")
def torch_lib(torch_wheel_dir: Path) -> Path:
    lib = torch_wheel_dir / "lib"
    if not lib.is_dir():
        pytest.skip("torch/lib missing from the wheel cache")
    return lib


@pytest.fixture(scope="session")
def torch_site() -> Path:
    """A site with torch 2.14.1 and the nvidia-* wheels its RPATHs point into; skips when pip cannot build it."""
    sys.path.insert(0, str(Path(__file__).parent))
    from realsite import make_torch_site

    base = Path(os.environ.get("LINKAUDIT_TEST_CACHE") or Path.home() / ".cache" / "linkaudit-tests")
    site = make_torch_site(base / "torch-site-2.14.1")
    if site is None:
        pytest.skip("torch 2.14.1 and its nvidia wheels cannot be installed offline")
    return site


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    from tests.loader import STATS

    if STATS:
        terminalreporter.write_line("ldd differential: " + ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items())))
