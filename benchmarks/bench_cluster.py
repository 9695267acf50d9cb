#!/usr/bin/env python3
"""Benchmark: a channel of generated packages, audited every package on its own (issue 14, §3–4).

Writes N tiny packages with the committed generator (``tests/channel.py``: even ones manylinux
wheels, odd ones ``.conda`` packages, each a library or two from ``sample_bins``) and runs
``linkaudit check --no-config --each --format jsonl -o FILE DIR`` as a new process:

* ``-j 1``: every installation in the one process;
* ``-j 2``: the installations over a forked process pool (``jobs.run_tasks``);
* ``--scheduler``: a ``LocalCluster`` (loopback, no dashboard, one thread per worker process)
  of 1 and of 2 workers, started here before the run and kept for it;
* the peer, one ``linkaudit check PACKAGE`` process per package (what a shell loop over a
  channel does), on the first ``--peer`` packages only and scaled.

Prints wall seconds, packages per second, and CPU seconds — of the ``check`` process and its
children, and for the cluster of its workers too (``Client.run`` of ``getrusage`` before and
after).  On a loaded machine wall times mislead: compare CPU seconds per package.

``--small`` also times channels of 2, 4, 8 and 16 packages with ``-j 1`` and ``-j 2``: where the
pool starts to pay (``jobs.MIN_POOL_TASKS``).

Usage::

    python benchmarks/bench_cluster.py [--packages 2000] [--peer 50] [--small | --small-only] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.channel import make_channel  # noqa: E402

LINKAUDIT = [sys.executable, "-m", "linkaudit"]


def run(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, the process and its children) of one process."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as a user's install: compiled modules kept
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null, env=env)
        _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime


def check(channel: Path, out: Path, *options: str) -> tuple[float, float]:
    return run(
        [
            *LINKAUDIT,
            "check",
            "--no-config",
            "--each",
            "-q",
            "--format",
            "jsonl",
            "-o",
            str(out),
            *options,
            str(channel),
        ]
    )


def _worker_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def on_cluster(channel: Path, out: Path, workers: int) -> tuple[float, float, float]:
    """Wall, client CPU and workers' CPU seconds of a run on a fresh LocalCluster of ``workers``."""
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        check(channel, out, "--scheduler", cluster.scheduler_address)  # warm: the workers import linkaudit
        before = sum(client.run(_worker_cpu).values())
        wall, cpu = check(channel, out, "--scheduler", cluster.scheduler_address)
        after = sum(client.run(_worker_cpu).values())
    return wall, cpu, after - before


def line(label: str, packages: int, wall: float, cpu: float) -> None:
    print(
        f"{label:<34} {wall:8.2f} s wall {packages / wall:8.1f} packages/s   {cpu:8.2f} s CPU {1000 * cpu / packages:7.2f} ms CPU/package"
    )


def small(base: Path) -> None:
    """``-j 1`` against ``-j 2`` on small channels: where the pool starts to pay."""
    print("\nsmall channels (-j 1 against -j 2; CPU includes the pool's workers):")
    for n in (2, 4, 8, 16):
        channel = base / f"small{n}"
        make_channel(channel, n)
        for jobs in ("1", "2"):
            runs = [check(channel, base / "small.jsonl", "-j", jobs) for _ in range(3)]
            wall, cpu = min(r[0] for r in runs), min(r[1] for r in runs)
            line(f"{n} packages, -j {jobs}", n, wall, cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", type=int, default=2000)
    parser.add_argument("--peer", type=int, default=50, help="packages the one-process-per-package peer runs")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--small-only", action="store_true", help="only the small channels")
    parser.add_argument("--keep", type=Path, default=None)
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    channel = base / "channel"
    try:
        if args.small_only:
            small(base)
            return
        if not channel.is_dir() or len(list(channel.iterdir())) != args.packages:
            shutil.rmtree(channel, ignore_errors=True)
            make_channel(channel, args.packages)
        n, out = args.packages, base / "report.jsonl"
        print(
            f"{n} packages in {channel} ({sum(p.stat().st_size for p in channel.iterdir()) >> 10} KiB); cores {len(os.sched_getaffinity(0))}, load {os.getloadavg()[0]:.1f}"
        )
        check(channel, out, "-j", "1")  # warm the page cache
        line("-j 1 (one process)", n, *check(channel, out, "-j", "1"))
        line("-j 2 (process pool)", n, *check(channel, out, "-j", "2"))
        try:
            import distributed  # noqa: F401
        except ImportError:
            print("--scheduler: skipped (pip install 'native-linkage-auditor[dask]')")
        else:
            for workers in (1, 2):
                wall, client, cpu = on_cluster(channel, out, workers)
                line(f"--scheduler, {workers} local worker{'s' * (workers > 1)}", n, wall, client + cpu)
                print(f"{'':<34} of which client {client:.2f} s, workers {cpu:.2f} s ({1000 * cpu / n:.2f} ms/package)")
        peers = sorted(channel.iterdir())[: args.peer]
        times = [run([*LINKAUDIT, "check", "--no-config", "-q", "--format", "json", str(p)]) for p in peers]
        wall, cpu = sum(t[0] for t in times), sum(t[1] for t in times)
        line(f"peer: one process per package ({len(peers)})", len(peers), wall, cpu)
        if args.small:
            small(base)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
