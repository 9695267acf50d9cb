#!/usr/bin/env python3
"""Write linkaudit/packages/data/meta_packages.json: the Requires-Dist lines of the meta-packages
that install no file of their own but pull NVIDIA's wheels through extras (``cuda-toolkit``), read
from the real wheels on the package index.

    python scripts/gen_meta_packages.py [--download-dir DIR]

Each wheel is fetched with ``pip download --no-deps`` (a few KB each; seconds) and only its
``*.dist-info/METADATA`` is read.  Stdlib only (and pip).
"""

from __future__ import annotations

import argparse
import email.parser
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

#: The meta-packages and versions read: CUDA 12 and 13.
SPECS = ("cuda-toolkit==12.9.2", "cuda-toolkit==13.0.3")
OUT = Path(__file__).resolve().parents[1] / "linkaudit/packages/data/meta_packages.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--download-dir", type=Path)
    args = parser.parse_args()
    work = args.download_dir or Path(tempfile.mkdtemp(prefix="linkaudit-meta-"))
    packages: dict[str, dict[str, list[str]]] = {}
    for spec in SPECS:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(work), spec], check=True)
    for wheel in sorted(work.glob("*.whl")):
        with zipfile.ZipFile(wheel) as zf:
            name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            headers = email.parser.HeaderParser().parsestr(zf.read(name).decode("utf-8"), headersonly=True)
        project = headers["Name"].lower().replace("_", "-")
        packages.setdefault(project, {})[headers["Version"]] = list(headers.get_all("Requires-Dist") or [])
    document = {"version": 1, "generated_by": "python scripts/gen_meta_packages.py", "packages": packages}
    OUT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"wrote {OUT} ({sum(len(v) for v in packages.values())} versions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
