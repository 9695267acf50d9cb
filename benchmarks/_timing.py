"""Shared helpers of the benchmarks: time a process, describe a sample."""

from __future__ import annotations

import os
import statistics
import subprocess
import time


def timed(argv: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB, from ``wait4``) of one process, stdout and stderr to /dev/null."""
    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=null)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        return time.perf_counter() - start, usage.ru_maxrss


def describe(xs: list[float]) -> str:
    """``"median 0.123 s (min 0.100, max 0.150)"``."""
    return f"median {statistics.median(xs):.3f} s (min {min(xs):.3f}, max {max(xs):.3f})"


def alternate(ours: list[str], reference: list[str], runs: int) -> tuple[list[float], list[float], int]:
    """Run both commands ``runs`` times, alternating, after one warm-up each.

    Returns:
        (our wall times, the reference's wall times, our peak RSS in KiB).
    """
    timed(ours)
    timed(reference)
    ours_t: list[float] = []
    ref_t: list[float] = []
    rss = 0
    for _ in range(runs):
        seconds, peak = timed(ours)
        ours_t.append(seconds)
        rss = max(rss, peak)
        ref_t.append(timed(reference)[0])
    return ours_t, ref_t, rss


def ratio(ours: list[float], reference: list[float]) -> float:
    """Median of the per-pair ratios ours / reference."""
    return statistics.median(a / b for a, b in zip(ours, reference, strict=True))
