#!/usr/bin/env python3
"""Write linkaudit/packages/data/providers.json: which PyPI distributions ship each shared
library, by the library's own SONAME (read from the file, never guessed from its name).

    python scripts/gen_provider_index.py [--add] SITE [SITE...]

``--add`` keeps what the index already holds and adds what SITEs show (the index is the union of
the runs its ``generated_by`` lists). Each SONAME (ELF) or export-directory DLL name (PE: the name
the DLL records for itself, ``cudart64_13.dll``) is recorded with the platform tags of the wheels it
was read from (``platforms``; not known for what version 1 of the index recorded).

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

Version 2 added aarch64 and win_amd64 from a sample of 14 wheels per platform (the small ones:
cuda-runtime, cuda-nvrtc, curand, nvjitlink, cufft, nvtx, cuda-cupti, for CUDA 12 and 13, at the
versions of the x86_64 sites: nvidia-cuda-runtime==13.0.96 ... nvidia-cuda-cupti-cu12==12.8.90): ``pip download --no-deps --only-binary=:all: --python-version 3.11 --platform
manylinux2014_aarch64 --platform manylinux_2_17_aarch64 ... -d W/aarch64 SPEC`` (and ``--platform
win_amd64 -d W/win``), then ``pip install --no-deps --target SITE --platform P --only-binary=:all:
W/P/*.whl`` per platform and ``python scripts/gen_provider_index.py --add SITE_AARCH64 SITE_WIN
torch-site-2.14.1``. cuBLAS, cuDNN, cuSPARSE, cuSOLVER, NCCL, cuSPARSELt, cuFile and NVSHMEM (0.3 to
1 GB each per platform) were not sampled for aarch64 and win_amd64: their x86_64 SONAMEs stand for
them (the same names on aarch64); their DLL names are not in the index.

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
    from linkaudit.model import Format
    from linkaudit.packages.site import read_site

    args = sys.argv[1:]
    add = bool(args) and args[0] == "--add"
    sites = args[1:] if add else args
    if not sites:
        sys.exit(__doc__)
    sonames: dict[str, set[str]] = {}
    platforms: dict[str, set[str]] = {}
    requires: dict[str, list[str]] = {}
    runs: list[str] = []
    if add:
        old = json.loads(OUT.read_text())
        sonames = {k: set(v) for k, v in old["sonames"].items()}
        platforms = {k: set(v) for k, v in old.get("platforms", {}).items()}
        requires = dict(old["requires"])
        runs = old["generated_by"] if isinstance(old["generated_by"], list) else [old["generated_by"]]
    for given in sites:
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
                    if binary.soname and binary.format is not Format.COFF:  # an import library names its DLL
                        sonames.setdefault(binary.soname, set()).add(dist.name)
                        platforms.setdefault(binary.soname, set()).update(t.platform for t in dist.tags)
    command = "python scripts/gen_provider_index.py " + " ".join(Path(a).name for a in sites)
    document = {
        "version": 2,
        "generated_by": [*runs, command],
        "sonames": {name: sorted(dists) for name, dists in sorted(sonames.items())},
        "platforms": {name: sorted(tags) for name, tags in sorted(platforms.items()) if tags},
        "requires": dict(sorted(requires.items())),
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {OUT}: {len(sonames)} sonames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
