#!/usr/bin/env python3
"""Write linkaudit/packages/data/providers.json: which PyPI distributions ship each shared
library, by the library's own SONAME (read from the file, never guessed from its name).

    python scripts/gen_provider_index.py SITE [SITE...]

Each SITE is a directory wheels were installed into (``pip install --no-deps --target SITE
nvidia-cuda-runtime==13.0.96 ...``; ``tests/realsite.py`` builds the torch 2.14.1 one with the CUDA 13
wheels): every file its distributions' RECORDs list is sniffed, and each ELF shared library's
DT_SONAME recorded against the distribution that owns it; each distribution's Requires-Dist
lines are kept too (nvidia-cudnn-cu13 requires nvidia-cublas), for what a package declares
through a provider that is not installed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
OUT = ROOT / "linkaudit/packages/data/providers.json"


def main() -> int:
    from linkaudit.errors import InputError
    from linkaudit.formats import SNIFF_BYTES, read_path, sniff
    from linkaudit.packages.site import read_site

    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sonames: dict[str, set[str]] = {}
    requires: dict[str, list[str]] = {}
    for given in sys.argv[1:]:
        site = read_site(given)
        if site is None:
            sys.exit(f"{given}: no *.dist-info")
        for dist in site.distributions:
            if not dist.name.startswith("nvidia-"):
                continue
            requires[dist.name] = list(dist.requires)
            for rel in dist.files:
                path = Path(site.root) / rel
                try:
                    with open(path, "rb") as fh:
                        if sniff(fh.read(SNIFF_BYTES)) is None:
                            continue
                    binaries = read_path(str(path))
                except (OSError, InputError):
                    continue
                for binary in binaries:
                    if binary.soname:
                        sonames.setdefault(binary.soname, set()).add(dist.name)
    document = {
        "version": 1,
        "generated_by": "python scripts/gen_provider_index.py " + " ".join(Path(a).name for a in sys.argv[1:]),
        "sonames": {name: sorted(dists) for name, dists in sorted(sonames.items())},
        "requires": dict(sorted(requires.items())),
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT}: {len(sonames)} sonames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
