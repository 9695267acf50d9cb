#!/usr/bin/env python3
"""Write linkaudit/packages/data/providers.json: which PyPI distributions ship each shared
library, by the library's own SONAME (read from the file, never guessed from its name).

    python scripts/gen_provider_index.py SITE [SITE...]

The shipped index was made from two sites (x86_64; 4.1 s, 74 MB RSS for both):

* ``~/.cache/linkaudit-tests/torch-site-2.14.1`` (``python tests/realsite.py DIR``: the CUDA 13 wheels
  torch 2.14.1 pins; 3.2 GB of nvidia/);
* a CUDA 12 site (4.4 GB; about 3.5 min to install from the local index), made with
  ``pip download --no-deps --only-binary=:all: --python-version 3.11 --platform manylinux_2_28_x86_64
  --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
  -d W nvidia-cublas-cu12==12.9.2.10 nvidia-cuda-cupti-cu12==12.8.90 nvidia-cuda-nvrtc-cu12==12.9.86
  nvidia-cuda-runtime-cu12==12.9.79 nvidia-cufft-cu12==11.4.1.4 nvidia-cufile-cu12==1.14.1.1
  nvidia-curand-cu12==10.3.10.19 nvidia-cusolver-cu12==11.7.5.82 nvidia-cusparse-cu12==12.5.10.65
  nvidia-nvjitlink-cu12==12.9.86 nvidia-nvtx-cu12==12.9.79 nvidia-cudnn-cu12 nvidia-nccl-cu12
  nvidia-cusparselt-cu12`` (one spec per command: 2.3 GB) then ``pip install --no-deps --target SITE W/*.whl``.

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
