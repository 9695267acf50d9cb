#!/usr/bin/env python3
"""Benchmark: ``linkaudit check`` against the binutils trio on the real torch wheel's ``torch/lib``.

In one run, alternating, page cache warm, N times each (default 15):

* linkaudit: the whole ``linkaudit check --format json DIR`` as a new process
  (interpreter start-up, imports, parsing, the loader emulation of every input
  with full binding, every rule, output to /dev/null); ``--no-loader`` times the
  per-file rules alone;
* binutils: ``readelf -dW`` + ``nm -D --undefined-only`` + ``nm -D --defined-only``
  over the same files, one process each, output to /dev/null — what a person runs
  merely to dump the linkage before reading it.

Prints the median and spread (min..max) of both wall times, the median of the
per-pair ratios (linkaudit / binutils; below 1.0 means linkaudit is faster),
and linkaudit's peak RSS (max ru_maxrss over its runs, from wait4).

Usage::

    python benchmarks/bench_check.py [--lib DIR] [--runs N]

Without ``--lib`` the wheel is fetched with ``pip download --no-deps torch==2.14.1``
into ``~/.cache/linkaudit-tests`` (the cache the tests use).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import describe, timed

TORCH = "2.14.1"


def fetch_torch_lib() -> Path:
    """The real wheel's ``torch/lib``, fetched once into the tests' cache (``tests/realsite.py``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from realsite import TORCH_VERSION, cache_root, fetch_torch_wheel

    torch, reason = fetch_torch_wheel(cache_root() / f"torch-{TORCH_VERSION}")
    if torch is None:
        raise SystemExit(f"cannot fetch torch=={TORCH_VERSION} offline: {reason}")
    return torch / "lib"


def run_trio(files: list[str]) -> float:
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        for f in files:
            for argv in (["readelf", "-dW", f], ["nm", "-D", "--undefined-only", f], ["nm", "-D", "--defined-only", f]):
                subprocess.run(argv, stdout=null, stderr=null, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", type=Path, help="directory to audit (default: the real torch wheel's torch/lib)")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--no-loader", action="store_true", help="time `check --no-loader` (the per-file rules only)")
    args = parser.parse_args()
    lib = args.lib or fetch_torch_lib()
    files = sorted(str(p) for p in lib.iterdir() if p.is_file() and ".so" in p.name)
    size = sum(os.path.getsize(f) for f in files)
    linkaudit = shutil.which("linkaudit")
    la_argv = [linkaudit] if linkaudit else [sys.executable, "-m", "linkaudit"]
    la_argv += ["check", "--format", "json", *(["--no-loader"] if args.no_loader else []), str(lib)]
    print(f"input: {lib} ({len(files)} files, {size / 1e9:.2f} GB)")
    print(f"linkaudit: {' '.join(la_argv)}")
    print("binutils:  readelf -dW + nm -D --undefined-only + nm -D --defined-only, per file")
    timed(la_argv)  # warm the page cache and the import caches
    run_trio(files)
    la_times, trio_times, ratios, rss = [], [], [], []
    for _ in range(args.runs):
        t_la, r = timed(la_argv)
        t_trio = run_trio(files)
        la_times.append(t_la)
        trio_times.append(t_trio)
        ratios.append(t_la / t_trio)
        rss.append(r)

    print(f"runs: {args.runs} each, alternating")
    print(f"linkaudit check: {describe(la_times)}")
    print(f"binutils trio:   {describe(trio_times)}")
    print(
        f"ratio linkaudit/binutils: median {statistics.median(ratios):.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})"
    )
    print(f"linkaudit peak RSS: {max(rss) / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
