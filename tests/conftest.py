"""Shared fixtures: the committed sample binaries, the CLI runner, and the real wheel (where present)."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

# The suite never writes the user's cache: a private one for the session (processes the tests
# start inherit it), and a fresh one per test below (no test sees another's entries).
os.environ["LINKAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="linkaudit-test-cache-")

from linkaudit import cache as _cache
from linkaudit.cli import main
from linkaudit.formats import copies as _copies

sys.path.insert(0, str(Path(__file__).parent))
from realsite import TORCH_VERSION, cache_root, download_torch_wheel, fetch_torch_wheel, make_torch_site, pip_download
from tools import find_tool

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Each test its own cache directory, and the cache off again after it (the CLI turns it on);
    no test sees the small files another one read (``formats.copies``)."""
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    _copies.forget()
    yield
    _cache.configure(False)


SAMPLES = ROOT / "sample_bins"


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


@pytest.fixture(scope="session")
def torch_wheel_dir() -> Path:
    """The extracted ``torch/`` of the real torch 2.14.1 CUDA wheel; skips when pip cannot fetch it offline.

    The wheel comes from a local pip index (``pip download --no-deps torch==2.14.1``);
    only ``torch/lib/*.so*`` and ``torch/_C*.so`` are extracted, once, into a cache.
    """
    torch, reason = fetch_torch_wheel(cache_root() / f"torch-{TORCH_VERSION}")
    if torch is None:
        pytest.skip(f"torch=={TORCH_VERSION} wheel not available offline: {reason}")
    return torch


@pytest.fixture(scope="session")
def torch_wheel_file() -> Path:
    """The real torch 2.14.1 CUDA wheel file itself (kept in the cache); skips when pip cannot fetch it offline."""
    wheel, reason = download_torch_wheel(cache_root() / "wheels")
    if wheel is None:
        pytest.skip(f"torch=={TORCH_VERSION} wheel not available offline: {reason}")
    return wheel


@pytest.fixture(scope="session")
def torch_lib(torch_wheel_dir: Path) -> Path:
    lib = torch_wheel_dir / "lib"
    if not lib.is_dir():
        pytest.skip("torch/lib missing from the wheel cache")
    return lib


@pytest.fixture(scope="session")
def torch_site() -> Path:
    """A site with torch 2.14.1 and the nvidia-* wheels its RPATHs point into; skips when pip cannot build it."""
    site = make_torch_site(cache_root() / "torch-site-2.14.1")
    if site is None:
        pytest.skip("torch 2.14.1 and its nvidia wheels cannot be installed offline")
    return site


def pytest_terminal_summary(terminalreporter, exitstatus, config):  # type: ignore[no-untyped-def]
    from tests.loader import STATS

    if STATS:
        terminalreporter.write_line("ldd differential: " + ", ".join(f"{k}: {v}" for k, v in sorted(STATS.items())))
    _summarise_tools(terminalreporter)


NVRTC_WIN = "nvidia-cuda-nvrtc-cu12==12.9.86"
TORCH_MAC_WIN = "torch==2.9.1"


def platform_wheel(spec: str, platform: str, pattern: str, folder: str) -> Path:
    """One wheel of ``spec`` for ``platform`` (``pip download --only-binary=:all: --platform``, Python
    3.11), kept in the test cache's ``folder``; skips the test where it cannot be fetched."""
    args = [spec, "--only-binary=:all:", "--platform", platform, "--python-version", "3.11"]
    found, _ = pip_download(cache_root() / folder, args, pattern)
    if found is None:
        pytest.skip(f"{spec} ({platform}) not available")
    return found


@pytest.fixture(scope="session")
def nvrtc_windows_wheel() -> Path:
    """NVIDIA's Windows NVRTC wheel (76 MB, from the package index); skips where it cannot be fetched."""
    return platform_wheel(NVRTC_WIN, "win_amd64", "nvidia_cuda_nvrtc_cu12-12.9.86-*win_amd64.whl", "wheels-win")


@pytest.fixture(scope="session")
def torch_macos_wheel() -> Path:
    """The official torch 2.9.1 macOS arm64 wheel (74 MB; its _C extension's LC_RPATH and libomp's
    install name are build-machine paths); skips where it cannot be fetched."""
    return platform_wheel(TORCH_MAC_WIN, "macosx_11_0_arm64", "torch-2.9.1-*macosx_11_0_arm64.whl", "wheels-mac")


@pytest.fixture(scope="session")
def torch_windows_wheel() -> Path:
    """The official torch 2.9.1 Windows wheel (a CPU build: PyPI's Windows torch has no CUDA);
    skips where it cannot be fetched."""
    return platform_wheel(TORCH_MAC_WIN, "win_amd64", "torch-2.9.1-*win_amd64.whl", "wheels-win")


# --- which tool-dependent tests ran ----------------------------------------------------------------
#: tool name -> {"ran": n, "skipped": n}, and the distinct skip reasons, for the end-of-run summary.
_TOOL_RUNS: dict[str, dict[str, int]] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    names = [name for mark in item.iter_markers("tools") for name in mark.args]
    if not names or not (report.when == "call" or report.skipped):
        return
    for name in names:
        tally = _TOOL_RUNS.setdefault(name, {"ran": 0, "skipped": 0})
        if report.skipped:
            tally["skipped"] += 1
        else:
            tally["ran"] += 1


def _summarise_tools(terminalreporter) -> None:  # type: ignore[no-untyped-def]
    """One line per outside tool: how many tests needing it ran and how many were skipped, and why."""
    if not _TOOL_RUNS:
        return
    terminalreporter.section("tests that need outside tools (tests/tools.py)")
    for name in sorted(_TOOL_RUNS):
        tally = _TOOL_RUNS[name]
        why = find_tool(name).reason if tally["skipped"] else ""
        line = f"{name}: {tally['ran']} ran, {tally['skipped']} skipped"
        terminalreporter.write_line(line + (f" ({why})" if why else ""))
