#!/usr/bin/env python3
"""Benchmark: ``linkaudit check`` on the real torch 2.14.1 wheel *file*, against ``unzip -p`` of the
same members and ``auditwheel show``, in one run.

In one run, alternating, page cache warm, N times each (default 5):

* linkaudit: ``linkaudit check --no-config --format json WHEEL`` as a new process — the wheel read
  in place: every member sniffed, the binary ones decompressed (on up to 4 threads) into a private
  staging tree, parsed, the loader emulation run on the member layout, every rule, JSON to
  /dev/null;
* ``unzip -p WHEEL MEMBER...`` of exactly the binary members linkaudit stages, to /dev/null: the
  floor for reading them (patchelf moved ``.dynstr`` to the end of each library, so every ELF
  member must be decompressed whole);
* ``auditwheel show WHEEL`` (optional: ``--auditwheel PATH``, default ``auditwheel`` on PATH;
  it needs no patchelf to *show*).

Prints the median and spread of each, the median per-round ratios linkaudit/unzip and
linkaudit/auditwheel, and linkaudit's peak RSS (max ``ru_maxrss`` from wait4).

Usage::

    python benchmarks/bench_wheel.py [--wheel FILE] [--runs N] [--auditwheel PATH]

Without ``--wheel`` the wheel is fetched with ``pip download --no-deps torch==2.14.1`` into the
tests' cache (``tests/realsite.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import describe, timed


def fetch_wheel() -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from realsite import TORCH_VERSION, cache_root, download_torch_wheel

    wheel, reason = download_torch_wheel(cache_root() / "wheels")
    if wheel is None:
        raise SystemExit(f"cannot fetch torch=={TORCH_VERSION} offline: {reason}")
    return wheel


def binary_members(wheel: Path) -> list[str]:
    """The members linkaudit stages: those whose first bytes name a binary format."""
    from linkaudit.formats import SNIFF_BYTES, sniff

    names = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            with zf.open(info) as member:
                if sniff(member.read(SNIFF_BYTES)) is not None:
                    names.append(info.filename)
    return names


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", type=Path, help="wheel file (default: the real torch 2.14.1 wheel)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--auditwheel", default=shutil.which("auditwheel"), help="auditwheel executable")
    args = parser.parse_args()
    wheel = args.wheel or fetch_wheel()
    members = binary_members(wheel)
    with zipfile.ZipFile(wheel) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    unpacked = sum(infos[m].file_size for m in members)
    linkaudit = shutil.which("linkaudit")
    la = [linkaudit] if linkaudit else [sys.executable, "-m", "linkaudit"]
    la += ["check", "--no-config", "--format", "json", str(wheel)]
    unzip = ["unzip", "-p", str(wheel), *members]
    commands = {"linkaudit check": la, "unzip -p": unzip}
    if args.auditwheel:
        commands["auditwheel show"] = [args.auditwheel, "show", str(wheel)]
    print(
        f"input: {wheel.name} ({os.path.getsize(wheel) / 1e6:.0f} MB; {len(infos)} members, "
        f"{len(members)} binary: {unpacked / 1e9:.2f} GB unpacked); {os.cpu_count()} CPUs"
    )
    for name, argv in commands.items():
        shown = " ".join(argv[:4]) + (
            f" ... ({len(argv) - 3} members)" if name == "unzip -p" else " " + " ".join(argv[4:])
        )
        print(f"{name}: {shown}")
    for argv in commands.values():
        timed(argv)  # warm the page cache and the import caches
    times: dict[str, list[float]] = {name: [] for name in commands}
    rss = 0
    for _ in range(args.runs):
        for name, argv in commands.items():
            seconds, peak = timed(argv)
            times[name].append(seconds)
            if name == "linkaudit check":
                rss = max(rss, peak)
    print(f"runs: {args.runs} each, alternating")
    for name, xs in times.items():
        print(f"{name + ':':17} {describe(xs)}")
    ours = times["linkaudit check"]
    for name, xs in times.items():
        if name != "linkaudit check":
            ratios = [a / b for a, b in zip(ours, xs, strict=True)]
            print(f"ratio linkaudit/{name.split()[0]}: median {statistics.median(ratios):.2f} "
                  f"(min {min(ratios):.2f}, max {max(ratios):.2f})")  # fmt: skip
    print(f"linkaudit peak RSS: {rss / 1024:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
