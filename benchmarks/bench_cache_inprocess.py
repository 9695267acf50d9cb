#!/usr/bin/env python3
"""Benchmark: a warm cache's share of a ``torch/lib`` re-check, in one process after start-up.

Minimum CPU seconds (``time.process_time``: this process only, no workers) over N rounds of:

* reading torch/lib's 12 files through the warm cache (``jobs.read_paths``, in this process);
* the names the audit asks for first of each table (``undefined()``, ``strong_export_names()``);
* a whole warm ``audit()`` of torch/lib (which reads again: each round starts with fresh tables).

Usage (from outside a checkout, so that ``PYTHONPATH`` picks the code measured)::

    cd /tmp && LINKAUDIT_CACHE_DIR=SCRATCH [PYTHONPATH=DIR] python .../bench_cache_inprocess.py [N]

The first read fills the cache when ``SCRATCH`` is empty; it is not counted.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from realsite import TORCH_VERSION, cache_root

from linkaudit import cache
from linkaudit.audit import audit
from linkaudit.config.model import AuditConfig
from linkaudit.jobs import read_paths


def main() -> None:
    lib = cache_root() / f"torch-{TORCH_VERSION}" / "torch" / "lib"
    if not lib.is_dir():
        raise SystemExit(f"{lib} absent (tests/realsite.py fetches it)")
    paths = sorted(str(p) for p in lib.iterdir())
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    cache.configure(True)
    read_paths(paths, jobs=1)  # fills an empty cache
    reads, names, audits = [], [], []
    for _ in range(rounds):
        start = time.process_time()
        got = read_paths(paths, jobs=1)
        reads.append(time.process_time() - start)
        start = time.process_time()
        for read in got:
            for binary in read.binaries:
                binary.symbols.undefined()
                binary.symbols.strong_export_names()
        names.append(time.process_time() - start)
        start = time.process_time()
        audit([str(lib)], AuditConfig())
        audits.append(time.process_time() - start)
    print(
        f"read {min(reads):.3f}  undefined+strong_export_names {min(names):.3f}  audit {min(audits):.3f} "
        f"(min of {rounds}, CPU s; cache {os.environ.get('LINKAUDIT_CACHE_DIR', 'default')})"
    )


if __name__ == "__main__":
    main()
