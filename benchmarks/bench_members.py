#!/usr/bin/env python3
"""Benchmark: packages of many tiny binaries — staging and labelling must stay linear in members.

Generates (committed generator, here) a gzip tarball of N copies of
``sample_bins/loader/pyext/lib/libhelper.so`` (5.8 KB, SONAME libhelper.so) under 50 directories,
and times, each in a new process, page cache warm:

* ``linkaudit check --no-config --no-loader --format json TARBALL``: staging, reading, the per-file
  rules and labelling every path ``PACKAGE!member`` (the loader off: its cost with thousands of
  libraries of one SONAME is another matter, the loader's);
* the same with the loader on (``--with-loader``).

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,10000,20000")
    parser.add_argument("--with-loader", action="store_true")
    parser.add_argument("--keep", type=Path, help="keep the tarballs in this directory")
    args = parser.parse_args()
    linkaudit = shutil.which("linkaudit")
    base = [linkaudit] if linkaudit else [sys.executable, "-m", "linkaudit"]
    flags = ["check", "--no-config", "--format", "json"] + ([] if args.with_loader else ["--no-loader"])
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="linkaudit-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    previous: tuple[int, float] | None = None
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            tarball = workdir / f"many-{n}.tar.gz"
            if not tarball.exists():
                make_tarball(tarball, n)
            argv = [*base, *flags, str(tarball)]
            timed(argv)  # warm
            seconds, rss = timed(argv)
            growth = ""
            if previous is not None:
                growth = f"; exponent {math.log(seconds / previous[1]) / math.log(n / previous[0]):.2f}"
            print(f"{n:>7} members: {seconds:6.2f} s, peak RSS {rss / 1024:.0f} MiB{growth}", flush=True)
            previous = (n, seconds)
    finally:
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
