#!/usr/bin/env python3
"""Benchmark: how ``linkaudit check`` grows with the number of libraries (issue 14, section 1).

Writes issue 14's chain with the committed generator (``tests/loader/dagbuild.py``): N tiny
real ELF shared libraries ``libc0.so`` ... ``libc{N-1}.so``, each exporting 200 names of its
own, each NEEDing the previous, DT_RUNPATH ``$ORIGIN`` (``--imports K``: each also references
K of the previous library's exports; ``--loader musl``: each carries PT_INTERP
``/lib/ld-musl-x86_64.so.1``, so musl's loader emulation, ``loader.musl``, loads them; ``--libc``: each
also NEEDs ``libc.so.6``, found as ld.so finds it, as real libraries do).  With no Python extension among them every library is
its own dlopen root.  Runs ``linkaudit check DIR`` once per size (after one warm-up at the
smallest) and prints wall and CPU seconds, peak RSS and the growth exponent between successive
sizes, ``log(t2 / t1) / log(n2 / n1)`` (1 is linear, 2 quadratic), of wall and of CPU time.

A size that exceeds ``--timeout`` seconds or ``--max-rss`` MiB of address space is reported
as such and ends the run.

Then the many-member tarball (``--members``, default 10,000 and 200,000; ``bench_members``'
committed generator: copies of ``sample_bins/loader/pyext/lib/libhelper.so`` under 50
directories): staging and labelling one text per member in this process (wall and CPU
seconds: ``packages.staged_inputs`` and ``Staged.label``), then ``linkaudit check --no-loader
--ignore duplicate-export`` on it as a new process, each with the growth exponent.

Usage::

    python benchmarks/bench_scale.py [--sizes 100 1000 10000] [--imports K] [--loader glibc|musl] [--libc] [--no-cache]
                                     [--timeout S] [--max-rss MIB]
                                     [--members 10000 200000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from tests.loader.dagbuild import MUSL_LOADER, Lib, chain_libs, write  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_members import make_tarball, stage_and_label  # noqa: E402


def chain_with_imports(n: int, imports: int, interpreter: str | None = None) -> list[Lib]:
    """``chain_libs(n, interpreter=interpreter)``, each library also referencing ``imports`` exports of the previous one."""
    libs = chain_libs(n, interpreter=interpreter)
    if not imports:
        return libs
    return [
        Lib(
            lib.file,
            lib.soname,
            lib.needed,
            runpath=lib.runpath,
            exports=lib.exports,
            imports=tuple(f"c{i - 1}_f{j}" for j in range(imports)) if i else (),
            interpreter=interpreter,
        )
        for i, lib in enumerate(libs)
    ]


def run(argv: list[str], timeout: float, max_rss_mib: int) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user + system), peak RSS (KiB) and how it ended, of one process."""

    def limit() -> None:
        if max_rss_mib:
            cap = max_rss_mib << 20
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    with open(os.devnull, "wb") as null:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=null, stderr=subprocess.PIPE, preexec_fn=limit)
        try:
            _out, err = proc.communicate(timeout=timeout)
            ended = f"exit {proc.returncode}" if proc.returncode in (0, 1) else f"failed: {err.decode()[-200:]}"
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            ended = f"killed after {timeout:.0f} s"
        wall = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, ended


def exponent(n: int, t: float, previous: tuple[int, float] | None) -> str:
    """``log(t / t0) / log(n / n0)`` against the previous size, or "" for the first."""
    if previous is None or previous[1] <= 0 or t <= 0:
        return ""
    return f"{math.log(t / previous[1]) / math.log(n / previous[0]):.2f}"


def members(base: Path, sizes: list[int], la: list[str], timeout: float, max_rss: int) -> None:
    """The many-member tarball rows: staging + labels in this process, then ``check`` as a process."""
    print("\nmany-member tarball (copies of libhelper.so, 50 directories)")
    print(f"{'members':>8} {'stage wall':>11} {'stage cpu':>10} {'exp(cpu)':>9} {'check wall':>11} {'check cpu':>10} "
          f"{'exp(cpu)':>9}  ended")  # fmt: skip
    flags = ["--no-config", "--no-loader", "--ignore", "duplicate-export", "--format", "json"]
    stage_prev: tuple[int, float] | None = None
    check_prev: tuple[int, float] | None = None
    for n in sizes:
        tarball = base / f"many-{n}.tar.gz"
        if not tarball.exists():
            make_tarball(tarball, n)
        before = resource.getrusage(resource.RUSAGE_SELF)
        stage_wall = stage_and_label(tarball, n)
        after = resource.getrusage(resource.RUSAGE_SELF)
        stage_cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall, cpu_total, _rss, ended = run([*la, *flags, str(tarball)], timeout, max_rss)
        cpu = cpu_total - children.ru_utime - children.ru_stime
        print(
            f"{n:>8} {stage_wall:>11.2f} {stage_cpu:>10.2f} {exponent(n, stage_cpu, stage_prev):>9} "
            f"{wall:>11.2f} {cpu:>10.2f} {exponent(n, cpu, check_prev):>9}  {ended}",
            flush=True,
        )
        stage_prev, check_prev = (n, stage_cpu), (n, cpu)
        if not ended.startswith("exit"):
            break


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--imports", type=int, default=0, help="exports of the previous library each one uses")
    parser.add_argument("--loader", choices=("glibc", "musl"), default="glibc", help="the loader the chain targets")
    parser.add_argument("--libc", action="store_true", help="each library also NEEDs libc.so.6 (real libraries do)")
    parser.add_argument("--no-cache", action="store_true", help="pass --no-cache to check (no writes to the cache)")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--max-rss", type=int, default=4096, help="address-space cap per run, MiB (0: none)")
    parser.add_argument("--keep", help="write the chains and tarballs under this directory and keep them")
    parser.add_argument("--members", type=int, nargs="*", default=[10000, 200000], help="tarball sizes (none: skip)")
    args = parser.parse_args()
    la = [sys.executable, "-m", "linkaudit", "check", *(["--no-cache"] if args.no_cache else [])]
    base = Path(args.keep or tempfile.mkdtemp(prefix="bench_scale-"))
    interpreter = MUSL_LOADER if args.loader == "musl" else None
    print(
        f"linkaudit check over a chain of N libraries (200 exports each, {args.imports} imports, RUNPATH $ORIGIN, "
        f"{args.loader}{', each NEEDing libc.so.6' if args.libc else ''})"
    )
    print(f"{'N':>7} {'wall s':>9} {'cpu s':>9} {'peak MiB':>9} {'exp(wall)':>10} {'exp(cpu)':>9}  ended")
    previous: tuple[int, float, float] | None = None
    cpu_before = 0.0
    try:
        for i, n in enumerate(args.sizes):
            directory = base / f"chain-{n}-{args.imports}-{args.loader}{'-libc' if args.libc else ''}"
            if not directory.exists():
                libs = chain_with_imports(n, args.imports, interpreter)
                if args.libc:
                    libs = [dataclasses.replace(lib, needed=(*lib.needed, "libc.so.6")) for lib in libs]
                write(str(directory), libs)
            if i == 0:
                run([*la, str(directory)], args.timeout, args.max_rss)  # warm-up: the page cache, .pyc files
            cpu_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
            cpu_before += resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime
            wall, cpu_total, rss, ended = run([*la, str(directory)], args.timeout, args.max_rss)
            cpu = cpu_total - cpu_before
            exp_wall = exponent(n, wall, previous[:2] if previous else None)
            exp_cpu = exponent(n, cpu, (previous[0], previous[2]) if previous else None)
            print(
                f"{n:>7} {wall:>9.2f} {cpu:>9.2f} {rss / 1024:>9.0f} {exp_wall:>10} {exp_cpu:>9}  {ended}", flush=True
            )
            if not ended.startswith("exit"):
                break
            previous = (n, wall, cpu)
        if args.members:
            members(base, args.members, la, args.timeout, args.max_rss)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
