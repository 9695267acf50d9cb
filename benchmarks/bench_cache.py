#!/usr/bin/env python3
"""Benchmark: the wheel read path and the cache (issue 14 §2, issue 15's "Wheels").

Each row runs linkaudit as a new process and reports wall and CPU (user + system, from
``wait4``) seconds, min / median / max over N runs (default 3), and the peak RSS:

* ``check WHEEL --no-cache`` on the torch 2.14.1 wheel (every ELF member streamed to its kept
  ranges, nothing written but placeholders) — and, with ``--main DIR``, the same command run from
  another checkout (``PYTHONPATH=DIR``: the code before this change, members written out);
* ``check WHEEL`` cold (an empty cache) and warm (the cache filled by the cold run);
* ``auditwheel show WHEEL`` (``--auditwheel PATH``; skipped when absent);
* ``why libcuda.so.1`` after ``check`` on torch and its 14 NVIDIA wheels, warm (``--nvidia``:
  the wheels are fetched with pip into the tests' cache first; target < 2 s);
* a re-``check`` of the unchanged, installed ``torch/lib``, warm (target < 0.3 s), cold, and
  ``--no-cache`` (with ``--main DIR``, the warm one from the other checkout too: its own entries);
* the entries of ``torch/lib``: how many, their bytes on disk, the largest, and the CPU seconds
  of encoding (``codec.pack``) and decoding (``codec.unpack``) each, in this process
  (``--entries-only``: only that; run with ``PYTHONPATH=DIR`` from outside a checkout, the
  linkaudit in DIR's, JSON entries included).

Usage::

    python benchmarks/bench_cache.py [--runs N] [--main DIR] [--auditwheel PATH] [--nvidia] [--lib-only]
    python benchmarks/bench_cache.py --entries-only

The cache lives in a scratch directory (``LINKAUDIT_CACHE_DIR``), never the user's.
``PYTHONDONTWRITEBYTECODE`` is dropped (an installed linkaudit runs from ``.pyc`` files).
Wall times on a loaded machine mean little: compare CPU, and rerun on an idle machine.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from realsite import PLATFORMS, REQUIREMENTS, TORCH_VERSION, cache_root, download_torch_wheel, pip_download  # noqa: E402


def run(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (KiB) of one process."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null, env=env)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        return time.perf_counter() - start, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def row(name: str, argv: list[str], env: dict[str, str], runs: int, before: list[str] | None = None) -> None:
    """Run ``argv`` ``runs`` times (each after ``before``, untimed) and print one line."""
    walls, cpus, rss = [], [], 0
    for _ in range(runs):
        if before:
            subprocess.run(before, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        wall, cpu, peak = run(argv, env)
        walls.append(wall)
        cpus.append(cpu)
        rss = max(rss, peak)
    print(
        f"{name:<44} wall {statistics.median(walls):7.3f} s ({min(walls):.3f}-{max(walls):.3f})  "
        f"cpu {statistics.median(cpus):7.3f} s ({min(cpus):.3f}-{max(cpus):.3f})  rss {rss // 1024} MB",
        flush=True,
    )


def nvidia_wheels() -> list[Path]:
    """torch's NVIDIA wheels (``realsite.REQUIREMENTS``), fetched once into the tests' cache."""
    target = cache_root() / "wheels-nvidia"
    platforms = [a for p in PLATFORMS for a in ("--platform", p)]
    found = []
    for requirement in REQUIREMENTS[1:]:
        name, _, version = requirement.partition("==")
        args = [requirement, "--only-binary=:all:", "--python-version", "3.11", *platforms]
        wheel, reason = pip_download(target, args, f"{name.replace('-', '_')}-{version}-*.whl")
        if wheel is None:
            raise SystemExit(f"cannot fetch {requirement}: {reason}")
        found.append(wheel)
    return found


def lib_rows(env: dict[str, str], scratch: Path, args: argparse.Namespace) -> None:
    """The ``torch/lib`` rows (skipped when it is absent) and its entries' sizes and costs."""
    lib = cache_root() / f"torch-{TORCH_VERSION}" / "torch" / "lib"
    if not lib.is_dir():
        print(f"skipped: {lib} absent")
        return
    env = {**env, "LINKAUDIT_CACHE_DIR": str(scratch / "lib")}
    py = [sys.executable, "-m", "linkaudit"]
    check = ["check", "--no-config", "-q", str(lib)]
    clear = [*py, "cache", "clear"]
    row("check torch/lib, cold cache", py + check, env, args.runs, before=clear)
    row("re-check torch/lib, warm cache", py + check, env, args.runs)
    if args.main:
        before = {**env, "PYTHONPATH": args.main, "LINKAUDIT_CACHE_DIR": str(scratch / "lib-main")}
        subprocess.run(py + check, env=before, stdout=subprocess.DEVNULL, check=False)
        row("re-check torch/lib, warm (before: --main)", py + check, before, args.runs)
    row("check torch/lib --no-cache", [*py, "--no-cache", *check], env, args.runs)
    entries(lib)


def entries(lib: Path) -> None:
    """Each ``torch/lib`` file's entry: bytes, and CPU seconds to encode and to decode it (here)."""
    from linkaudit.cache import codec
    from linkaudit.formats import read_path

    pack, unpack = getattr(codec, "pack", None), getattr(codec, "unpack", None)
    if pack is None or unpack is None:  # a linkaudit of JSON entries (reader version 2: ``--main``)
        import json

        def pack(name: str, written: int, content: None, binaries: tuple[object, ...]) -> bytes:
            value = codec.encode_entry(name, written, content, binaries)
            return json.dumps(value, separators=(",", ":")).encode()

        def unpack(data: bytes, name: str) -> object:
            return codec.decode_entry(json.loads(data), name)

    sizes, packs, unpacks = [], [], []
    for path in sorted(p for p in lib.iterdir() if p.is_file()):
        binaries = tuple(read_path(str(path)))
        start = time.process_time()
        data = pack("k", 1, None, binaries)
        middle = time.process_time()
        assert unpack(data, "k") is not None
        packs.append(middle - start)
        unpacks.append(time.process_time() - middle)
        sizes.append((len(data), path.name))
    print(
        f"entries of torch/lib (reader version {codec.READER_VERSION}): {len(sizes)}, {sum(s for s, _n in sizes) / 1e6:.1f} MB, largest "
        f"{max(sizes)[1]} {max(sizes)[0] / 1e6:.1f} MB; encode {sum(packs):.3f} s CPU (largest {max(packs):.3f}), "
        f"decode {sum(unpacks):.3f} s CPU (largest {max(unpacks):.3f})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--main", help="another checkout to compare with (PYTHONPATH)")
    parser.add_argument("--auditwheel", default=shutil.which("auditwheel"))
    parser.add_argument("--nvidia", action="store_true", help="also why-after-check on the 15 wheels")
    parser.add_argument("--lib-only", action="store_true", help="only the torch/lib rows and its entries")
    parser.add_argument("--entries-only", action="store_true", help="only torch/lib's entries, in this process")
    args = parser.parse_args()
    args.main = os.path.abspath(args.main) if args.main else None
    lib = cache_root() / f"torch-{TORCH_VERSION}" / "torch" / "lib"
    if args.entries_only:
        if lib.is_dir():
            entries(lib)
        return
    scratch = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    # ``python -m linkaudit`` puts the working directory first on sys.path, before PYTHONPATH: run
    # from the scratch directory, or a checkout's own linkaudit would shadow ``--main``'s
    os.chdir(scratch)
    if args.lib_only:
        try:
            env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
            lib_rows(env, scratch, args)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return
    wheel, reason = download_torch_wheel(cache_root() / "wheels")
    if wheel is None:
        shutil.rmtree(scratch, ignore_errors=True)
        raise SystemExit(f"no torch wheel: {reason}")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["LINKAUDIT_CACHE_DIR"] = str(scratch)
    py = [sys.executable, "-m", "linkaudit"]
    check = ["check", "--no-config", "--format", "json", str(wheel)]
    clear = [*py, "cache", "clear"]
    try:
        if args.main:
            row("check .whl (before: --main)", py + check, {**env, "PYTHONPATH": args.main}, args.runs)
        row("check .whl --no-cache", [*py, "--no-cache", *check], env, args.runs)
        row("check .whl, cold cache", py + check, env, args.runs, before=clear)
        row("check .whl, warm cache", py + check, env, args.runs)
        if args.auditwheel:
            row("auditwheel show .whl", [args.auditwheel, "show", str(wheel)], env, max(1, args.runs // 2))
        lib_rows(env, scratch, args)
        if args.nvidia:
            wheels = [str(wheel), *map(str, nvidia_wheels())]
            subprocess.run([*py, "check", "-q", *wheels], env=env, stdout=subprocess.DEVNULL, check=False)
            row("why libcuda.so.1 after check, 15 wheels", [*py, "why", *wheels, "libcuda.so.1"], env, args.runs)
            row("why, 15 wheels --no-cache", [*py, "--no-cache", "why", *wheels, "libcuda.so.1"], env, 1)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
