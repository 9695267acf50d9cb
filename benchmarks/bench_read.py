#!/usr/bin/env python3
"""Benchmark: the format readers alone, and ``check`` as a whole, on the real torch wheel's ``torch/lib``.

Each run is a new process (page cache warm after one warm-up run):

* ``read``: ``formats.read_path`` on every ``*.so*`` of the directory, in one process — what the
  readers cost (header, dynamic section, ``.dynsym``, string and version tables, ``.rodata`` scan),
  timed inside the process (imports excluded);
* ``check``: ``linkaudit check --format json DIR`` (everything: loader emulation, rules, output),
  CPU time (user + system) of the process: on a shared machine, steadier than its wall time.

Prints, per command, the median and spread of the times and the peak RSS (``ru_maxrss`` from
``wait4``, the most over the runs).  ``--compare SRC`` runs the same commands with another source
tree first on ``PYTHONPATH`` (say ``git archive`` of an older commit), alternating run by run, so
that a shared machine's load falls on both alike.

Usage::

    python benchmarks/bench_read.py [--lib DIR] [--runs N] [--compare SRC]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import describe
from bench_check import fetch_torch_lib

READ_ALL = (
    "import sys, time\n"
    "from pathlib import Path\n"
    "from linkaudit.formats import read_path\n"
    "files = [str(p) for p in sorted(Path(sys.argv[1]).iterdir()) if p.is_file() and '.so' in p.name]\n"
    "start = time.perf_counter()\n"
    "for f in files:\n"
    "    read_path(f)\n"
    "print(time.perf_counter() - start)\n"
)


def _run(argv: list[str], src: str | None, inner: bool) -> tuple[float, int]:
    """Seconds (the child's own figure when ``inner``, else its CPU time) and peak RSS (KiB) of one run."""
    env = {**os.environ, "PYTHONPATH": src} if src else None
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = proc.stdout.read() if proc.stdout else b""
    _pid, _status, usage = os.wait4(proc.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    return (float(out.split()[-1]) if inner else cpu), usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lib", type=Path, help="directory to read (default: the real torch wheel's torch/lib)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--compare", help="another linkaudit source tree to time alongside this one")
    args = parser.parse_args()
    lib = args.lib or fetch_torch_lib()
    commands = {
        "read": [sys.executable, "-c", READ_ALL, str(lib)],
        "check": [sys.executable, "-m", "linkaudit", "check", "--format", "json", str(lib)],
    }
    here = str(Path(__file__).resolve().parents[1])
    trees = {"this": here, **({"compare": args.compare} if args.compare else {})}
    print(f"input: {lib}")
    for src in trees.values():
        for name, argv in commands.items():
            _run(argv, src, name == "read")  # warm the page cache and the import caches
    times = {(t, c): [] for t in trees for c in commands}  # type: dict[tuple[str, str], list[float]]
    rss = dict.fromkeys(times, 0)
    for _ in range(args.runs):
        for tree, src in trees.items():
            for name, argv in commands.items():
                seconds, peak = _run(argv, src, name == "read")
                times[tree, name].append(seconds)
                rss[tree, name] = max(rss[tree, name], peak)
    for (tree, name), xs in times.items():
        print(f"{tree:8s} {name:6s} {describe(xs)}, peak RSS {rss[tree, name] / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
