"""Build a "virtual site-packages": the real torch 2.14.1 CUDA wheel plus the NVIDIA wheels its RPATHs point into.

Stdlib only. One ``pip install --no-deps --target`` puts torch and its pinned native CUDA 13 wheels side by side,
as a real environment has them, so the loader emulation can follow ``$ORIGIN/../../nvidia/*/lib`` for real:

* ``torch/lib/*.so`` carry ``RPATH $ORIGIN/../../nvidia/{cudnn,nvshmem,nccl,cusparselt,cu13}/lib:$ORIGIN``;
* the CUDA 13 toolkit wheels (cublas, cudart, cufft, cufile, cupti, curand, cusolver, cusparse, nvjitlink,
  nvrtc, nvtx) all install into ``nvidia/cu13/lib``; cudnn, nccl, nvshmem and cusparselt keep their own folder.

The pins are read off torch 2.14.1's METADATA: ``nvidia-cudnn-cu13``, ``nvidia-cusparselt-cu13``,
``nvidia-nccl-cu13`` and ``nvidia-nvshmem-cu13`` are direct ``==`` pins; the others come through
``cuda-toolkit[cublas,cudart,cufft,cufile,cupti,curand,cusolver,cusparse,nvjitlink,nvrtc,nvtx]==13.0.3``, whose
metadata pins each ``==X.*`` (nvjitlink only ``>=13.0.88,<14``; 13.4.92 is the copy on the local index). All carry
the marker ``platform_system == "Linux"``. Left out on purpose: ``triton~=3.8.0`` and ``cuda-bindings>=13.0.3,<14``
(native, but not on torch's RPATH; cuda-bindings is not on the local index), the ``cuda-toolkit`` metapackage (no
files) and torch's pure-Python deps.

The platform flags make the result the same whatever Python runs this (the wheels are cp311 / manylinux);
pip 23 does not widen ``manylinux_2_28`` to older tags by itself, hence the list. Installed size is about 4.3 GiB
(torch 1.2 GiB, nvidia 3.2 GiB); about a minute from a local index.

    python tests/realsite.py DIR      # builds DIR, prints it; exit 1 when pip cannot
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

TORCH_VERSION = "2.14.1"

REQUIREMENTS: tuple[str, ...] = (
    f"torch=={TORCH_VERSION}",
    "nvidia-cublas==13.1.1.3",
    "nvidia-cuda-cupti==13.0.85",
    "nvidia-cuda-nvrtc==13.0.88",
    "nvidia-cuda-runtime==13.0.96",
    "nvidia-cudnn-cu13==9.24.0.43",
    "nvidia-cufft==12.0.0.61",
    "nvidia-cufile==1.15.1.6",
    "nvidia-curand==10.4.0.35",
    "nvidia-cusolver==12.0.4.66",
    "nvidia-cusparse==12.6.3.3",
    "nvidia-cusparselt-cu13==0.8.1",
    "nvidia-nccl-cu13==2.30.7",
    "nvidia-nvjitlink==13.4.92",
    "nvidia-nvshmem-cu13==3.4.5",
    "nvidia-nvtx==13.0.85",
)

# Every manylinux tag the wheels above carry (torch is 2_28; nvtx goes down to manylinux1).
PLATFORMS: tuple[str, ...] = (
    "manylinux_2_28_x86_64",
    "manylinux_2_27_x86_64",
    "manylinux_2_25_x86_64",
    "manylinux_2_18_x86_64",
    "manylinux_2_17_x86_64",
    "manylinux2014_x86_64",
    "manylinux_2_12_x86_64",
    "manylinux_2_5_x86_64",
)

# The torch/lib RPATH targets, relative to the site; a build without all of them is not marked complete.
RPATH_DIRS: tuple[str, ...] = (
    "nvidia/cudnn/lib",
    "nvidia/nvshmem/lib",
    "nvidia/nccl/lib",
    "nvidia/cusparselt/lib",
    "nvidia/cu13/lib",
)

MARKER = ".complete"


def pip_command(target: Path) -> list[str]:
    """The single pip command that fills ``target``."""
    cmd = [
        sys.executable, "-m", "pip", "install",
        "--no-deps", "--only-binary=:all:", "--upgrade", "--no-compile",
        "--disable-pip-version-check", "--no-input",
        "--python-version", "3.11", "--implementation", "cp",
    ]  # fmt: skip
    for platform in PLATFORMS:
        cmd += ["--platform", platform]
    return [*cmd, "--target", str(target), *REQUIREMENTS]


def cache_root() -> Path:
    """Where real-wheel inputs are cached: ``$LINKAUDIT_TEST_CACHE`` or ``~/.cache/linkaudit-tests``."""
    return Path(os.environ.get("LINKAUDIT_TEST_CACHE") or Path.home() / ".cache" / "linkaudit-tests")


@contextlib.contextmanager
def cache_lock() -> Iterator[None]:
    """Hold the cache's lock file (``flock``) for the block: test runs sharing one cache (several
    checkouts, CI beside a developer) fill it one at a time, and none reads a half-written file."""
    root = cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def pip_download(target: Path, args: list[str], pattern: str, timeout: float | None = 600) -> tuple[Path | None, str]:
    """The first file of ``target`` matching ``pattern``, fetched once with ``pip download --no-deps
    ARGS`` under the cache lock.

    pip writes into a scratch folder inside ``target`` and what matches is renamed into place, so a
    download cut short (killed, timed out) or one running beside another never leaves a partial
    file that a later run would take for a wheel.

    Returns:
        (the path, "") or (``None``, the reason pip gave) when it cannot be had offline.
    """
    with cache_lock():
        return _pip_download(target, args, pattern, timeout)


def _pip_download(target: Path, args: list[str], pattern: str, timeout: float | None) -> tuple[Path | None, str]:
    """``pip_download`` without the lock."""
    found = sorted(target.glob(pattern)) if target.exists() else []
    if found:
        return found[0], ""
    target.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".partial-", dir=target))
    try:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(scratch), *args]
        try:
            proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, str(exc)
        got = sorted(scratch.glob(pattern))
        if proc.returncode != 0 or not got:
            return None, proc.stderr.strip()[-300:]
        for path in got:
            os.replace(path, target / path.name)
        return target / got[0].name, ""
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def download_torch_wheel(target: Path, *, timeout: float | None = 600) -> tuple[Path | None, str]:
    """The torch wheel file itself (``pip download --no-deps``), kept in ``target``, once.

    Returns:
        (the ``.whl`` path, "") or (``None``, the reason pip gave) when it cannot be had offline.
    """
    args = [
        f"torch=={TORCH_VERSION}", "--only-binary=:all:", "--platform", "manylinux_2_28_x86_64",
        "--python-version", "3.11", "--implementation", "cp",
    ]  # fmt: skip
    return pip_download(target, args, f"torch-{TORCH_VERSION}-*.whl", timeout)


def fetch_torch_wheel(target: Path, *, timeout: float | None = 600) -> tuple[Path | None, str]:
    """Extract ``torch/lib/*.so*`` and ``torch/_C*.so`` of the torch wheel (``download_torch_wheel``)
    into ``target``, once.

    Returns:
        (``target/torch``, "") or (``None``, the reason pip gave) when it cannot be had offline.
    """
    marker = target / MARKER
    if marker.exists():
        return target / "torch", ""
    wheel, reason = download_torch_wheel(target.parent / "wheels", timeout=timeout)
    if wheel is None:
        return None, reason
    with cache_lock():
        if marker.exists():
            return target / "torch", ""
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                if (name.startswith("torch/lib/") and ".so" in name) or (
                    name.startswith("torch/_C") and name.endswith(".so")
                ):
                    zf.extract(name, target)
        marker.write_text("ok\n")
    return target / "torch", ""


def make_torch_site(target: Path, *, timeout: float | None = 1800) -> Path | None:
    """Install torch and its NVIDIA wheels into ``target`` once; None when pip cannot (offline, not on the index).

    A finished site holds ``target/.complete`` (listing the requirements) and is reused as is. ``--upgrade``
    lets a half-built ``target`` be filled again rather than skipped package by package.
    """
    target = Path(target)
    if (target / MARKER).is_file():
        return target
    with cache_lock():
        if (target / MARKER).is_file():
            return target
        return _install_site(target, timeout)


def _install_site(target: Path, timeout: float | None) -> Path | None:
    """``make_torch_site``'s pip run and completeness check, under the cache lock."""
    try:
        proc = subprocess.run(
            pip_command(target), stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        print(f"realsite: pip did not run: {exc}", file=sys.stderr)
        return None
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-15:])
        print(f"realsite: pip failed ({proc.returncode}):\n{tail}", file=sys.stderr)
        return None
    missing = [d for d in RPATH_DIRS if not (target / d).is_dir()]
    if missing or not (target / "torch" / "lib").is_dir():
        print(f"realsite: pip succeeded but the site lacks {missing or ['torch/lib']}", file=sys.stderr)
        return None
    (target / MARKER).write_text("\n".join(REQUIREMENTS) + "\n")
    return target


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} DIR")
    site = make_torch_site(Path(sys.argv[1]))
    if site is None:
        sys.exit(1)
    print(site)


def download_wheel(
    target: Path, requirement: str, platform: str, *, timeout: float | None = 600
) -> tuple[Path | None, str]:
    """One wheel for ``platform`` (``pip download --no-deps --only-binary=:all: --platform PLATFORM
    --python-version 3.11 REQUIREMENT``), kept in ``target``, once.

    Returns:
        (the ``.whl`` path, "") or (``None``, the reason pip gave) when it cannot be had offline.
    """
    name, _, version = requirement.partition("==")
    pattern = f"{name.replace('-', '_')}-{version}-*{platform}*.whl"
    args = [requirement, "--only-binary=:all:", "--platform", platform, "--python-version", "3.11"]
    return pip_download(target, args, pattern, timeout)
