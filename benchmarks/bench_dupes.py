#!/usr/bin/env python3
"""Benchmark: ``linkaudit dupes`` against ``nm -A`` over the same static archives.

Default inputs: Debian's ``libc6-dev`` ``libc.a`` (about 2,000 members; it must give
zero findings: a noise test) and GCC's ``libstdc++.a`` (a large C++ library).
Alternating, N runs each (default 10); prints medians and linkaudit's findings.

Usage::

    python benchmarks/bench_dupes.py [ARCHIVE...] [--runs N]
"""

from __future__ import annotations

import argparse
import glob
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import alternate, describe, ratio

DEFAULTS = ["/usr/lib/x86_64-linux-gnu/libc.a", *sorted(glob.glob("/usr/lib/gcc/x86_64-linux-gnu/*/libstdc++.a"))[-1:]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("archives", nargs="*", default=DEFAULTS)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    archives = [a for a in args.archives if Path(a).exists()]
    if not archives:
        print("no archives found", file=sys.stderr)
        return 2
    linkaudit = shutil.which("linkaudit")
    la = [linkaudit] if linkaudit else [sys.executable, "-m", "linkaudit"]
    la += ["dupes", *archives]
    nm = ["nm", "-A", *archives]
    summary = subprocess.run(la, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    print(f"inputs: {' '.join(archives)}")
    print(f"linkaudit findings: {summary}")
    la_t, nm_t, _rss = alternate(la, nm, args.runs)
    print(f"runs: {args.runs} each, alternating")
    print(f"linkaudit dupes: {describe(la_t)}")
    print(f"nm -A:           {describe(nm_t)}")
    print(f"ratio linkaudit/nm: median {ratio(la_t, nm_t):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
