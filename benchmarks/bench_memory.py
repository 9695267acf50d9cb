#!/usr/bin/env python3
"""Measure the memory promise: peak RSS against the linkage bytes the readers read.

For each input and command, a child process runs ``linkaudit COMMAND INPUT`` in-process with the
readers' ``pread`` counted (``formats.filebytes``: every byte read from the inputs, headers, tables
and names — the "linkage bytes"), and reports its peak RSS (``VmHWM`` of ``/proc/self/status``).  The baseline is the
same command on a 6 KB sample; ``k`` is (peak - baseline) / linkage bytes.

Inputs: the generated shapes of the amplification tests (``tests/formats/elfbuild.py``,
``arbuild.py``) and, when cached, the real torch wheel's ``torch/lib``.

Usage::

    python benchmarks/bench_memory.py [--no-torch]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys
from linkaudit.formats import filebytes
read = [0]
real = filebytes._OpenFile.pread
def pread(self, offset, length):
    read[0] += length
    return real(self, offset, length)
filebytes._OpenFile.pread = pread
from linkaudit.cli import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
# VmHWM, not ru_maxrss: a child's ru_maxrss starts from its parent's at fork, VmHWM from exec
hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"code": code, "read": read[0], "rss": hwm * 1024}))
"""

COMMANDS = {
    "check": ["check", "--format", "json"],
    "tree": ["tree", "--format", "json"],
    "show --symbols": ["show", "--symbols", "--format", "json"],
}


def measure(args: list[str]) -> dict[str, int]:
    """Exit code, bytes read and peak RSS (bytes) of ``linkaudit ARGS`` in a child process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, *args], capture_output=True, text=True, env=env, check=False)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def inputs(work: Path, torch: bool) -> dict[str, Path]:
    """Name -> path of each input measured (written into ``work``)."""
    from tests.formats.arbuild import repeated_member
    from tests.formats.elfbuild import DT_NEEDED, build, needed_into_one_string, sym, symbols_into_one_string

    def plain(count: int) -> bytes:
        dynstr = b"\0libc.so.6\0" + b"".join(b"name_%014d\0" % i for i in range(count))
        return build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + b"".join(sym(11 + 20 * i) for i in range(count)))

    shapes = {
        "60,000 plain symbols": plain(60_000),
        "600,000 plain symbols": plain(600_000),
        "20,000 DT_NEEDED into one string (refused)": needed_into_one_string(),
        "60,000 symbols into one string (refused)": symbols_into_one_string(),
        "16 symbols into one 64 KiB string (within budget)": symbols_into_one_string(16, 65_535),
        "900 DT_NEEDED into one 1 KiB string (refused)": needed_into_one_string(900, 1_200),
        "24 DT_NEEDED into one 1 KiB string (within budget)": needed_into_one_string(24, 1_200),
    }
    out = {}
    for name, data in shapes.items():
        path = work / (name.split()[0].replace(",", "") + "-" + str(abs(hash(name)) % 10_000) + ".so")
        path.write_bytes(data)
        out[name] = path
    member = work / "big.o"
    member.write_bytes(plain(60_000))
    thin = work / "libthin.a"
    thin.write_bytes(repeated_member(b"big.o", member.stat().st_size, 1500))
    out["thin archive naming a 2.6 MB member 1,500 times"] = thin
    if torch:
        from realsite import TORCH_VERSION, cache_root, fetch_torch_wheel

        lib, _reason = fetch_torch_wheel(cache_root() / f"torch-{TORCH_VERSION}")
        if lib is not None:
            out["torch 2.14.1 torch/lib (12 files, 1.0 GB)"] = lib / "lib"
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    with tempfile.TemporaryDirectory() as tmp:
        base = {
            c: measure([*argv, str(ROOT / "sample_bins/fixed/libnvrtc.so.12")])["rss"] for c, argv in COMMANDS.items()
        }
        print("baseline peak RSS: " + ", ".join(f"{c} {v / 2**20:.1f} MiB" for c, v in base.items()))
        print(f"{'input':55s} {'command':15s} {'exit':>4s} {'read MB':>8s} {'peak MiB':>9s} {'k':>6s}")
        for name, path in inputs(Path(tmp), not args.no_torch).items():
            for command, argv in COMMANDS.items():
                m = measure([*argv, str(path)])
                k = (m["rss"] - base[command]) / m["read"] if m["read"] else 0.0
                print(
                    f"{name:55s} {command:15s} {m['code']:4d} {m['read'] / 1e6:8.2f} {m['rss'] / 2**20:9.1f} {k:6.1f}"
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
