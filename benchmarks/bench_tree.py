#!/usr/bin/env python3
"""Benchmark: ``linkaudit tree --bind`` against ``ldd -r`` on the real torch site's ``_C`` module.

``ldd -r`` is glibc's real loader resolving the NEEDED closure of
``torch/_C.cpython-311-x86_64-linux-gnu.so`` and binding every symbol; ``linkaudit
tree --bind`` does the same statically (search emulation, closure, binding of every
object in the closure) as a new process.  Alternating, page cache warm, N runs each
(default 15); prints medians, spread, the median per-pair ratio and linkaudit's
peak RSS.  The site is built with ``tests/realsite.py`` (torch 2.14.1 + the nvidia
wheels its RPATHs point into) unless ``--site`` is given.  Run by hand: this
benchmark, like the differential test, runs ``ldd`` on that trusted wheel only.

Usage::

    python benchmarks/bench_tree.py [--site DIR] [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import alternate, describe, ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    site = args.site
    if site is None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from realsite import cache_root, make_torch_site

        site = make_torch_site(cache_root() / "torch-site-2.14.1")
        if site is None:
            print("cannot build the torch site offline", file=sys.stderr)
            return 2
    module = site / "torch" / "_C.cpython-311-x86_64-linux-gnu.so"
    linkaudit = shutil.which("linkaudit")
    la = [linkaudit] if linkaudit else [sys.executable, "-m", "linkaudit"]
    la += ["tree", "--bind", str(module)]
    ldd = ["ldd", "-r", str(module)]
    print(f"input: {module}")
    print(f"linkaudit: {' '.join(la)}")
    print(f"reference: {' '.join(ldd)}")
    la_t, ldd_t, rss = alternate(la, ldd, args.runs)
    print(f"runs: {args.runs} each, alternating")
    print(f"linkaudit tree --bind: {describe(la_t)}")
    print(f"ldd -r:                {describe(ldd_t)}")
    print(f"ratio linkaudit/ldd -r: median {ratio(la_t, ldd_t):.2f}")
    print(f"linkaudit peak RSS: {rss / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
