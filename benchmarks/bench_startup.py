#!/usr/bin/env python3
"""Benchmark: start-up — ``linkaudit --version`` and a plain ELF ``check`` up to its first read.

Targets (issue 15): 0.06 s for ``--version``, 0.08 s before the first file is read.  Each is
run N times (default 21) as a new process, alternating with ``python -c pass`` (the
interpreter's own floor); prints wall and CPU seconds (``ru_utime + ru_stime`` from ``wait4``)
as min / median / max.  On a loaded machine the minimum is the figure to read; ``--callgrind``
adds instruction counts (valgrind), which load does not change.

"Up to the first read" is measured by an audit hook that exits the process when the input is
first opened (``open`` audit event): every import and all the set-up the command does before
touching its input, nothing after.

Usage::

    python benchmarks/bench_startup.py [--python PY] [--runs N] [--callgrind] [--elf FILE]

``--python`` is the interpreter of the installation to time (default: this one); time an
installed (non-editable) linkaudit with ``.pyc`` files: an editable install's import finder
alone costs more than half of the ``--version`` budget.  ``PYTHONDONTWRITEBYTECODE`` is
dropped from the children's environment.
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
#: The children run in an empty directory: ``python -c`` puts the working directory first on
#: ``sys.path`` (a checkout would shadow the installation timed), and no configuration is found.
_CWD = tempfile.mkdtemp(prefix="bench-startup-")

#: Runs the CLI on ``sys.argv[1]`` and exits at the first open of that file.
FIRST_READ = """
import os, sys
target = os.path.realpath(sys.argv[1])
def hook(event, args):
    if event == "open" and isinstance(args[0], str) and os.path.realpath(args[0]) == target:
        os._exit(0)
sys.addaudithook(hook)
sys.argv = ["linkaudit", "check", "-q", sys.argv[1]]
from linkaudit.cli import run
run()
"""


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one process, output to /dev/null."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null, env=env, cwd=_CWD)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def spread(xs: list[float]) -> str:
    """``min 0.012 / median 0.015 / max 0.020 s``."""
    return f"min {min(xs):.4f} / median {statistics.median(xs):.4f} / max {max(xs):.4f} s"


def instructions(argv: list[str], env: dict[str, str]) -> int | None:
    """Instructions executed by ``argv`` (valgrind's callgrind ``Collected``), or ``None``."""
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=_CWD,
        check=False,
    )
    for line in proc.stderr.splitlines():
        if "Collected" in line:
            return int(line.split()[-1])
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--elf", default=str(ROOT / "sample_bins" / "loader" / "ancestor_runpath" / "app"))
    parser.add_argument("--callgrind", action="store_true", help="also count instructions (needs valgrind)")
    args = parser.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cases = {
        "python -c pass": [args.python, "-c", "pass"],
        "linkaudit --version": [
            args.python,
            "-c",
            "import sys; sys.argv[1:] = ['--version']; from linkaudit.cli import run; run()",
        ],
        "check, up to the first read": [args.python, "-c", FIRST_READ, args.elf],
    }
    for argv in cases.values():
        timed(argv, env)  # warm: .pyc files written, page cache
    wall: dict[str, list[float]] = {k: [] for k in cases}
    cpu: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(args.runs):
        for name, argv in cases.items():
            w, c = timed(argv, env)
            wall[name].append(w)
            cpu[name].append(c)
    print(f"python: {args.python}; {args.runs} runs each, alternating")
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    for name in cases:
        print(f"\n{name}\n  wall {spread(wall[name])}\n  cpu  {spread(cpu[name])}")
    if args.callgrind and shutil.which("valgrind"):
        print("\ninstructions (callgrind):")
        for name, argv in cases.items():
            count = instructions(argv, env)
            print(f"  {name}: {count / 1e6:.0f} M" if count else f"  {name}: n/a")
    return 0


if __name__ == "__main__":
    sys.exit(main())
