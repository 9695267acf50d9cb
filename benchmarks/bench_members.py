#!/usr/bin/env python3
"""Benchmark: packages of many tiny binaries — staging and labelling must stay linear in members.

Generates (committed generator, here) a gzip tarball of N copies of
``sample_bins/loader/pyext/lib/libhelper.so`` (5.8 KB, SONAME libhelper.so) under 50 directories,
and times, page cache warm:

* staging alone, in this process: ``packages.staged_inputs`` (every member sniffed and written)
  and ``Staged.label`` of one text naming each member — what the packages room does;
* ``linkaudit check --no-config --no-loader --ignore duplicate-export --format json TARBALL`` as a
  new process: staging, reading, the per-file rules and labelling every path ``PACKAGE!member``.
  duplicate-export is left out: N copies of one library export the same symbols, and it reports
  every pair (N^2/2 findings: 499,500 at N = 1,000); the loader is off (``--with-loader`` turns it
  on): thousands of libraries of one SONAME are the loader's matter, not staging's.

Prints seconds per size and the growth exponent between successive sizes (1.0: linear).

Usage::

    python benchmarks/bench_members.py [--sizes 5000,10000,20000] [--with-loader] [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import math
import shutil
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import timed

HELPER = Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so"


def make_tarball(path: Path, n: int) -> None:
    """``path``: a .tar.gz of ``n`` copies of libhelper.so at ``lib/dK/libI.so``."""
    data = HELPER.read_bytes()
    with tarfile.open(path, "w:gz", compresslevel=1) as tf:
        for i in range(n):
            info = tarfile.TarInfo(f"lib/d{i % 50}/lib{i}.so")
            info.size = len(data)
            info.mode = 0o755
            tf.addfile(info, io.BytesIO(data))


def stage_and_label(tarball: Path, n: int) -> float:
    """Seconds to stage ``tarball`` and label one text per member, in this process."""
    from linkaudit.packages import staged_inputs

    start = time.perf_counter()
    with staged_inputs([str(tarball)]) as staged:
        root = staged.paths[0]
        for i in range(n):
            staged.label(f"needs {root}/lib/d{i % 50}/lib{i}.so (a member)")
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,10000,20000")
    parser.add_argument("--with-loader", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep the tarballs in this directory")
    args = parser.parse_args()
    linkaudit = shutil.which("linkaudit")
    base = [linkaudit] if linkaudit else [sys.executable, "-m", "linkaudit"]
    flags = ["check", "--no-config", "--format", "json", "--ignore", "duplicate-export"]
    flags += [] if args.with_loader else ["--no-loader"]
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="linkaudit-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    previous: tuple[int, float, float] | None = None
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            tarball = workdir / f"many-{n}.tar.gz"
            if not tarball.exists():
                make_tarball(tarball, n)
            staging = stage_and_label(tarball, n)
            argv = [*base, *flags, str(tarball)]
            seconds, rss = timed(argv)
            growth = ""
            if previous is not None:
                growth = f"; exponents {math.log(staging / previous[1]) / math.log(n / previous[0]):.2f}, "
                growth += f"{math.log(seconds / previous[2]) / math.log(n / previous[0]):.2f}"
            print(
                f"{n:>7} members: staging+labels {staging:6.2f} s; check {seconds:6.2f} s, "
                f"peak RSS {rss / 1024:.0f} MiB{growth}",
                flush=True,
            )
            previous = (n, staging, seconds)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
