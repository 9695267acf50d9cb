#!/usr/bin/env python3
"""Benchmark: every ratio of the hot-path table (issue 15) from one run, pairs alternating.

Each comparison runs linkaudit and its peer as new processes, one after the other, N times
(default 9) after one warm-up each (page cache and ``.pyc`` files warm), and prints both wall
times and both CPU times (user + system of the finished children, ``getrusage``) as min /
median / max, and the per-pair ratios linkaudit / peer (below 1.0 means linkaudit is faster).
On a loaded machine the CPU ratio is the figure to read; the wall ratio needs an idle one.
Rows:

* ``check torch/lib`` vs binutils run **once over all files** (``readelf -dW F...``,
  ``nm -D --undefined-only F...``, ``nm -D --defined-only F...``: three processes) — the
  strong baseline — and vs binutils started once **per file** (three processes per file);
* ``check`` on the ``.whl`` vs ``auditwheel show`` (``--auditwheel PATH``, else ``auditwheel`` on ``PATH``);
* ``tree --bind`` of ``torch/_C`` in the installed site vs ``ldd -r`` (glibc's loader on that
  trusted wheel, as ``bench_tree.py`` does);
* ``tree`` of ``torch/_C`` vs pax-utils ``lddtree`` (when installed: ``apt-get install pax-utils``);
* ``check`` of the torch 2.9.1 macOS wheel's files vs ``llvm-objdump --macho --all-headers``
  (when both are at hand).

A row whose peer or input is missing prints why and is skipped.  Start-up alone (``--version``,
imports before the first file is read) is ``bench_startup.py``'s.

Usage::

    python benchmarks/bench_ratios.py [--runs N] [--linkaudit PATH] [--auditwheel PATH] [--only ROW...]

The inputs come from the tests' cache (``tests/realsite.py``: ``~/.cache/linkaudit-tests``,
fetched with pip on first use).  ``PYTHONDONTWRITEBYTECODE`` is dropped from linkaudit's
environment: an installed linkaudit runs from ``.pyc`` files, and so does the benchmark.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

#: A command to time: argv lists run one after the other (a "once over all files" trio).
Job = list[list[str]]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_job(job: Job, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the commands of ``job``, run in order, output to /dev/null."""
    cpu = _children_cpu()
    start = time.perf_counter()
    with open(os.devnull, "wb") as null:
        for argv in job:
            subprocess.run(argv, stdout=null, stderr=null, env=env, check=False)
    return time.perf_counter() - start, _children_cpu() - cpu


def spread(xs: list[float], unit: str = " s") -> str:
    """``min 0.100 / median 0.123 / max 0.150 s``."""
    return f"min {min(xs):.3f} / median {statistics.median(xs):.3f} / max {max(xs):.3f}{unit}"


def compare(name: str, ours: Job, peer: Job, runs: int, env: dict[str, str]) -> None:
    """Time ``ours`` and ``peer`` alternately ``runs`` times (after a warm-up each) and print the row."""
    run_job(ours, env)
    run_job(peer)
    ours_t: list[tuple[float, float]] = []
    peer_t: list[tuple[float, float]] = []
    for _ in range(runs):
        ours_t.append(run_job(ours, env))
        peer_t.append(run_job(peer))
    print(f"\n## {name}")
    print(f"linkaudit: {' '.join(ours[0])}")
    for argv in peer[:3]:
        shown = argv if len(argv) <= 6 else [*argv[:4], f"... ({len(argv) - 4} more)"]
        print(f"peer:      {' '.join(shown)}")
    if len(peer) > 3:
        print(f"           ... and {len(peer) - 3} more processes, one after the other")
    for k, what in enumerate(("wall", "CPU")):
        mine, theirs = [t[k] for t in ours_t], [t[k] for t in peer_t]
        ratios = [a / b if b else float("inf") for a, b in zip(mine, theirs, strict=True)]
        print(f"{what:4} linkaudit {spread(mine)}")
        print(f"{what:4} peer      {spread(theirs)}")
        print(f"{what:4} ratio     {spread(ratios, '')}")


def torch_lib() -> Path | None:
    """The torch 2.14.1 wheel's ``torch/`` (``lib/*.so*`` and ``_C``), from the tests' cache."""
    from realsite import TORCH_VERSION, cache_root, fetch_torch_wheel

    torch, reason = fetch_torch_wheel(cache_root() / f"torch-{TORCH_VERSION}")
    if torch is None:
        print(f"(torch {TORCH_VERSION}: {reason})")
    return torch


def mac_files() -> Path | None:
    """The torch 2.9.1 macOS wheel's Mach-O files, extracted once beside it in the tests' cache."""
    from realsite import cache_root

    wheels = sorted((cache_root() / "wheels-mac").glob("torch-2.9.1-*.whl"))
    if not wheels:
        return None
    target = cache_root() / "torch-mac-2.9.1"
    if not (target / ".complete").exists():
        with zipfile.ZipFile(wheels[0]) as zf:
            for member in zf.namelist():
                if member.endswith((".dylib", ".so")):
                    zf.extract(member, target)
        (target / ".complete").write_text("ok\n")
    return target


def rows(linkaudit: list[str], auditwheel: str | None = None) -> dict[str, Callable[[], tuple[str, Job, Job] | str]]:
    """Row name -> a function giving ``(title, ours, peer)``, or the reason the row is skipped."""

    def binutils_once() -> tuple[str, Job, Job] | str:
        torch = torch_lib()
        if torch is None or not shutil.which("readelf"):
            return "needs the torch wheel and binutils (apt-get install binutils)"
        files = sorted(str(p) for p in (torch / "lib").iterdir() if ".so" in p.name)
        trio = [
            ["readelf", "-dW", *files],
            ["nm", "-D", "--undefined-only", *files],
            ["nm", "-D", "--defined-only", *files],
        ]
        title = f"check torch/lib ({len(files)} files) vs binutils once over all files"
        return title, [[*linkaudit, "check", "--format", "json", str(torch / "lib")]], trio

    def binutils_per_file() -> tuple[str, Job, Job] | str:
        torch = torch_lib()
        if torch is None or not shutil.which("readelf"):
            return "needs the torch wheel and binutils (apt-get install binutils)"
        files = sorted(str(p) for p in (torch / "lib").iterdir() if ".so" in p.name)
        per_file = [
            argv
            for f in files
            for argv in (["readelf", "-dW", f], ["nm", "-D", "--undefined-only", f], ["nm", "-D", "--defined-only", f])
        ]
        title = f"check torch/lib vs binutils started once per file ({len(per_file)} processes)"
        return title, [[*linkaudit, "check", "--format", "json", str(torch / "lib")]], per_file

    def wheel() -> tuple[str, Job, Job] | str:
        from realsite import cache_root

        found = sorted((cache_root() / "wheels").glob("torch-2.14.1-*.whl"))
        if not found:
            return "the torch 2.14.1 wheel is not in the tests' cache"
        peer = auditwheel or shutil.which("auditwheel")
        if not peer:
            return "auditwheel is not on PATH (--auditwheel PATH)"
        return (
            "check torch.whl vs auditwheel show",
            [[*linkaudit, "check", str(found[0])]],
            [[peer, "show", str(found[0])]],
        )

    def site_module() -> Path | None:
        from realsite import cache_root, make_torch_site

        site = make_torch_site(cache_root() / "torch-site-2.14.1")
        return None if site is None else site / "torch" / "_C.cpython-311-x86_64-linux-gnu.so"

    def bind() -> tuple[str, Job, Job] | str:
        module = site_module()
        if module is None or not shutil.which("ldd"):
            return "needs the torch site (tests/realsite.py) and ldd (libc-bin)"
        return (
            "tree --bind torch/_C vs ldd -r",
            [[*linkaudit, "tree", "--bind", str(module)]],
            [["ldd", "-r", str(module)]],
        )

    def tree() -> tuple[str, Job, Job] | str:
        module = site_module()
        if module is None:
            return "needs the torch site (tests/realsite.py)"
        script = shutil.which("lddtree")
        if not script:
            return "lddtree is not installed (apt-get install pax-utils)"
        return (
            "tree torch/_C vs lddtree",
            [[*linkaudit, "tree", str(module)]],
            [[*_lddtree_runner(script), str(module)]],
        )

    def macos() -> tuple[str, Job, Job] | str:
        files = mac_files()
        objdump = shutil.which("llvm-objdump-16") or shutil.which("llvm-objdump")
        if files is None or objdump is None:
            return "needs the torch 2.9.1 macOS wheel in the tests' cache and llvm-objdump (apt-get install llvm-16)"
        machos = sorted(str(p) for p in files.rglob("*") if p.suffix in (".dylib", ".so"))
        title = f"check torch 2.9.1 macOS files ({len(machos)}) vs llvm-objdump --macho --all-headers"
        return (
            title,
            [[*linkaudit, "check", "--format", "json", *machos]],
            [[objdump, "--macho", "--all-headers", *machos]],
        )

    return {
        "binutils-once": binutils_once,
        "binutils-per-file": binutils_per_file,
        "wheel": wheel,
        "bind": bind,
        "tree": tree,
        "macos": macos,
    }


def _lddtree_runner(script: str) -> list[str]:
    """How to run pax-utils' ``lddtree`` (a Python script, ``#!/usr/bin/env python3``) at its
    fastest: with the system's own Python (``/usr/bin/python3``, where the distribution installs
    its pyelftools) when that one imports ``elftools``; else as the shebang picks a Python from
    PATH, which may be a slower build (a pyenv one started it in 0.15-0.21 s where the system's
    took 0.11-0.15 s, 2026-12-04)."""
    system = "/usr/bin/python3"
    if os.access(system, os.X_OK):
        probe = subprocess.run([system, "-c", "import elftools"], capture_output=True, check=False)
        if probe.returncode == 0:
            return [system, script]
    return [script]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--linkaudit", help="the linkaudit to time (default: `linkaudit` on PATH, else -m)")
    parser.add_argument("--auditwheel", help="the auditwheel to compare with (default: `auditwheel` on PATH)")
    table = rows([])
    parser.add_argument("--only", nargs="*", choices=sorted(table), help="rows to run (default: all)")
    args = parser.parse_args()
    found = args.linkaudit or shutil.which("linkaudit")
    linkaudit = [found] if found else [sys.executable, "-m", "linkaudit"]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    print(f"linkaudit: {' '.join(linkaudit)}; {args.runs} runs per row, alternating, after one warm-up each")
    print(f"load average at start: {' '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs")
    for name, make in rows(linkaudit, args.auditwheel).items():
        if args.only and name not in args.only:
            continue
        made = make()
        if isinstance(made, str):
            print(f"\n## {name}: skipped — {made}")
            continue
        compare(made[0], made[1], made[2], args.runs, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
