#!/usr/bin/env python3
"""Write ``linkaudit/rules/data/stable_abi.json``: the symbols of CPython's Stable ABI.

The source of truth is CPython's ``Misc/stable_abi.toml`` (its ``[function.NAME]`` and
``[data.NAME]`` items, with ``added``, ``ifdef`` and ``abi_only``).  Give that file, or let the
script take the same data from the ``abi3info`` wheel (``pip download --no-deps abi3info``: the
package abi3audit reads, generated from that file), which is what the committed data was made
from.  Only names and the release each was added in are kept: what ``abi3-symbol`` needs.

Usage::

    python scripts/gen_stable_abi.py [--toml cpython/Misc/stable_abi.toml | --abi3info WHEEL]
"""

from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import re
import subprocess
import sys
import tempfile
import tomllib

OUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "linkaudit", "rules", "data", "stable_abi.json"
)

Entry = dict[str, object]


def from_toml(path: str) -> dict[str, Entry]:
    """name -> {"kind", "added", "abi_only", "ifdef"} from CPython's ``Misc/stable_abi.toml``."""
    with open(path, "rb") as fh:
        data = tomllib.load(fh)
    out: dict[str, Entry] = {}
    for kind in ("function", "data"):
        for name, item in data.get(kind, {}).items():
            out[name] = {
                "kind": kind,
                "added": item["added"],
                "abi_only": bool(item.get("abi_only")),
                "ifdef": item.get("ifdef"),
            }
    return out


def from_abi3info(wheel: str) -> dict[str, Entry]:
    """The same from the ``abi3info`` wheel's generated tables (imported from the wheel itself)."""
    code = (
        "import json, abi3info\n"
        "out = {}\n"
        "for kind, table in (('function', abi3info.FUNCTIONS), ('data', abi3info.DATAS)):\n"
        "    for sym, item in table.items():\n"
        "        out[sym.name] = {'kind': kind, 'added': f'{item.added.major}.{item.added.minor}',\n"
        "                         'abi_only': bool(getattr(item, 'abi_only', False)),\n"
        "                         'ifdef': item.ifdef.name if item.ifdef else None}\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": wheel},
                          capture_output=True, text=True, check=True)  # fmt: skip
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def main(argv: list[str] | None = None) -> int:
    """Read the Stable ABI and write ``OUT``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toml", help="CPython's Misc/stable_abi.toml")
    parser.add_argument("--abi3info", help="an abi3info wheel (default: pip download it)")
    parser.add_argument("--date", default=datetime.date.today().isoformat())
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.toml:
            symbols, source = from_toml(args.toml), "CPython Misc/stable_abi.toml"
        else:
            wheel = args.abi3info
            if wheel is None:
                subprocess.run(
                    [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, "abi3info"], check=True
                )
                wheel = glob.glob(os.path.join(tmp, "abi3info-*.whl"))[0]
            version = re.match(r"abi3info-([^-]+)-", os.path.basename(wheel))
            symbols = from_abi3info(wheel)
            source = f"abi3info {version.group(1) if version else '?'} (generated from CPython Misc/stable_abi.toml)"
    doc = {"schema": 1, "source": source, "generated": args.date, "generator": "scripts/gen_stable_abi.py",
           "symbols": dict(sorted(symbols.items()))}  # fmt: skip
    with open(OUT, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=0, sort_keys=False)
        fh.write("\n")
    print(f"{OUT}: {len(symbols)} symbols from {source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
