#!/usr/bin/env python3
"""Benchmark: linkaudit on the official torch 2.9.1 macOS and Windows wheels, against LLVM's readers
and delvewheel, in one run.

For each wheel, alternating, page cache warm, N times each (default 5), every command a new process:

* ``linkaudit check --no-config --format json WHEEL`` — the whole job: members staged, every
  binary read, the dyld or Windows loader emulation, binding, every rule (Windows:
  ``--dll-directory torch/lib``, as torch's ``__init__`` adds it);
* ``linkaudit show --format json FILES`` on the same binaries unpacked — our readers alone (every
  symbol read and counted, the linkage printed);
* the LLVM reader of the same tables on the same files, the floor a C++ reader sets:
  ``llvm-objdump --macho --private-headers --exports-trie --bind --lazy-bind --weak-bind
  --chained-fixups`` (Mach-O, one process per file),
  ``llvm-readobj --coff-imports --coff-exports`` (PE);
* ``delvewheel show WHEEL`` (Windows; optional ``--delvewheel PATH``, default on PATH): the peer
  that reads a Windows wheel's DLLs with pefile.  delocate, the macOS peer, shells out to Apple's
  ``otool`` and runs on macOS only: not timed here.

Prints the median and spread of each, the per-round ratios against linkaudit's, and linkaudit's
peak RSS (``ru_maxrss`` from wait4).

Usage::

    python benchmarks/bench_platforms.py [--mac WHEEL] [--win WHEEL] [--runs N] [--delvewheel PATH]

Without ``--mac`` / ``--win`` the wheels are taken from the tests' cache
(``~/.cache/linkaudit-tests/wheels-mac``, ``wheels-win``; ``pytest -m realwheel`` fetches them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import describe, timed

CACHE = Path(os.environ.get("LINKAUDIT_TEST_CACHE", Path.home() / ".cache" / "linkaudit-tests"))


def _tool(*names: str) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


def _unpack(wheel: Path, into: Path) -> list[str]:
    """The wheel's binary members (by magic bytes) unpacked under ``into``; their paths."""
    from linkaudit.formats import SNIFF_BYTES, Container, sniff

    out = []
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            if info.is_dir():
                continue
            with zf.open(info) as member:
                kind = sniff(member.read(SNIFF_BYTES))
            if kind in (Container.MACHO, Container.PE):
                out.append(zf.extract(info, into))
    return out


def _run(label: str, commands: dict[str, list[str]], runs: int) -> None:
    print(f"\n== {label}")
    for name, argv in commands.items():
        shown = " ".join(a if len(a) < 60 else "…/" + Path(a).name for a in argv[:8])
        print(f"{name}: {shown}{' ...' if len(argv) > 8 else ''}")
    for argv in commands.values():
        timed(argv)  # warm the page cache and the import caches
    times: dict[str, list[float]] = {name: [] for name in commands}
    rss = 0
    for _ in range(runs):
        for name, argv in commands.items():
            seconds, peak = timed(argv)
            times[name].append(seconds)
            if name.startswith("linkaudit check"):
                rss = max(rss, peak)
    print(f"runs: {runs} each, alternating")
    for name, xs in times.items():
        print(f"{name + ':':28} {describe(xs)}")
    ours = times[next(iter(times))]
    for name, xs in list(times.items())[1:]:
        ratios = [a / b for a, b in zip(ours, xs, strict=True)]
        print(f"ratio check/{name.split(' (')[0]}: median {statistics.median(ratios):.2f}")
    print(f"linkaudit check peak RSS: {rss / 1024:.1f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mac", type=Path, help="a macOS wheel (default: torch 2.9.1 macosx_11_0_arm64, cached)")
    parser.add_argument("--win", type=Path, help="a Windows wheel (default: torch 2.9.1 win_amd64, cached)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--delvewheel", default=shutil.which("delvewheel"), help="delvewheel executable")
    args = parser.parse_args()
    mac = args.mac or next(iter(sorted((CACHE / "wheels-mac").glob("torch-2.9.1-*macosx*.whl"))), None)
    win = args.win or next(iter(sorted((CACHE / "wheels-win").glob("torch-2.9.1-*win_amd64.whl"))), None)
    la = [shutil.which("linkaudit") or sys.executable, *([] if shutil.which("linkaudit") else ["-m", "linkaudit"])]
    objdump = _tool("llvm-objdump-16", "llvm-objdump")
    readobj = _tool("llvm-readobj-16", "llvm-readobj")
    print(f"{os.cpu_count()} CPUs; llvm-objdump: {objdump}; llvm-readobj: {readobj}; delvewheel: {args.delvewheel}")
    with tempfile.TemporaryDirectory() as tmp:
        if mac is not None:
            files = _unpack(mac, Path(tmp) / "mac")
            size = sum(os.path.getsize(f) for f in files)
            commands = {
                "linkaudit check (wheel)": [*la, "check", "--no-config", "--format", "json", str(mac)],
                f"linkaudit show ({len(files)} files)": [*la, "show", "--format", "json", *files],
            }
            if objdump:
                # One process per file: llvm-objdump 16 stops at the first file it refuses (the 8-byte
                # empty export trie ld64 writes, as in libtorch_global_deps.dylib), skipping the rest.
                flags = "--macho --private-headers --exports-trie --bind --lazy-bind --weak-bind --chained-fixups"
                loop = f'for f; do {objdump} {flags} "$f"; done'
                commands["llvm-objdump --macho"] = ["sh", "-c", loop, "sh", *files]
            _run(f"{mac.name}: {len(files)} Mach-O files, {size / 1e6:.0f} MB", commands, args.runs)
        if win is not None:
            files = _unpack(win, Path(tmp) / "win")
            size = sum(os.path.getsize(f) for f in files)
            check = ["check", "--no-config", "--dll-directory", "torch/lib", "--format", "json", str(win)]
            commands = {
                "linkaudit check (wheel)": [*la, *check],
                f"linkaudit show ({len(files)} files)": [*la, "show", "--format", "json", *files],
            }
            if readobj:
                commands["llvm-readobj --coff-imports"] = [readobj, "--coff-imports", "--coff-exports", *files]
            if args.delvewheel:
                commands["delvewheel show (wheel)"] = [args.delvewheel, "show", str(win)]
            _run(f"{win.name}: {len(files)} PE files, {size / 1e6:.0f} MB", commands, args.runs)
    if mac is None and win is None:
        print("no wheel: pass --mac / --win, or run pytest -m realwheel to fetch them")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
