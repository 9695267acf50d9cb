#!/usr/bin/env python3
"""Benchmark: binding through the providers' hash tables vs a name map of every export (issue 15).

Reads a folder of ELF libraries (default: the torch 2.14.1 wheel's ``torch/lib`` from the tests'
cache), binds every library's undefined symbols with all of them in scope, both ways, from fresh
reads each time, alternating, and prints CPU seconds (``time.process_time``) of the binding
alone as min / median / max, and what each way touched: the names the map decodes (every
bindable export) and the chains the hash tables walk (the (provider, name) pairs whose hash the
provider stores).  The two results are compared: they must be equal.

Usage::

    python benchmarks/bench_bind.py [--runs N] [FOLDER]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from linkaudit.audit import read  # noqa: E402
from linkaudit.loader import binding, symbol_lookup  # noqa: E402
from linkaudit.model import Binary, Format  # noqa: E402


def load(folder: Path) -> dict[str, Binary]:
    """Every ELF binary of ``folder`` (``*.so*``), freshly read."""
    return {str(p): b for p in sorted(folder.glob("*.so*")) for b in read(str(p)) if b.format is Format.ELF}


def bind(objects: dict[str, Binary], by_map: bool) -> tuple[float, list[list[binding.Bound]]]:
    """CPU seconds of binding every object (all in scope), and the bindings."""
    symbol_lookup.forget_hashes()
    scope = sorted(objects)
    get = (lambda b: b.symbols.definitions()) if by_map else None
    start = time.process_time()
    out = [binding.bind_object(b, scope, objects, None, definitions_of=get, path=p) for p, b in objects.items()]
    return time.process_time() - start, out


def spread(xs: list[float]) -> str:
    return f"min {min(xs):.3f} / median {statistics.median(xs):.3f} / max {max(xs):.3f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    folder = args.folder
    if folder is None:
        from realsite import TORCH_VERSION, cache_root

        folder = cache_root() / f"torch-{TORCH_VERSION}" / "torch" / "lib"
    times: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.runs):
        for by_map in (True, False):
            objects = load(folder)
            seconds, result = bind(objects, by_map)
            times[by_map].append(seconds)
            if by_map:
                expected, decoded = result, sum(len(b.symbols.definitions()) for b in objects.values())
            else:
                assert result == expected, "the two ways bind differently"
                walked = sum(len(b.symbols.memo("lookups")) for b in objects.values())
    wanted = sum(len(b.symbols.memo("wanted").get(0, ())) for b in objects.values())
    print(f"input: {folder} ({len(objects)} files); {args.runs} runs each, alternating")
    print(f"name map of every export: {spread(times[True])}; {decoded} export names decoded")
    print(f"hash tables:              {spread(times[False])}; {walked} chains walked, for {wanted} hash keys")
    print(f"ratio hash / map (medians): {statistics.median(times[False]) / statistics.median(times[True]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
