#!/usr/bin/env python3
"""Write the committed seeds of the harnesses whose inputs ``sample_bins/`` does not hold.

* ``seeds/ldcache/``: ``ld.so.cache`` files in every layout the reader knows (old, new, old+new;
  big-endian; glibc-hwcaps entries and extensions), built by the test suite's own builder
  (``tests/loader/test_ldcache.py``, after glibc's ``elf/cache.c``);
* ``seeds/config/``: configuration files using every key (``linkaudit.toml`` and a
  ``pyproject.toml`` marked ``#pyproject``, as ``fuzz_config.py`` reads them);
* ``seeds/wheel/``, ``seeds/tar/``, ``seeds/conda/``: small packages (``packages.py`` beside this
  script) for the stager harnesses: a wheel with its dist-info, tarballs in every compression,
  a ``.conda`` and a conda ``.tar.bz2``, each holding a small ELF library from ``sample_bins/``.

Deterministic: running it again rewrites the same bytes.  Usage: ``python fuzz/make_seeds.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from packages import write_package_seeds  # noqa: E402

from tests.loader.test_ldcache import E, build  # noqa: E402

LIBS = [
    E("libc.so.6", "/lib/x86_64-linux-gnu/libc.so.6"),
    E("libm.so.6", "/lib/x86_64-linux-gnu/libm.so.6", osversion=0x00030200),
    E("libz.so.1", "/usr/lib/x86_64-linux-gnu/libz.so.1"),
    E("libm.so.6", "/lib/glibc-hwcaps/x86-64-v3/libm.so.6", subdir="x86-64-v3", isa_level=3),
    E("libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", hwcap=1 << 20),
]
PLAIN = [x for x in LIBS if x.subdir is None and not x.hwcap]

CONFIGS = {
    "severities.toml": '[severity]\nrpath-leak = "error"\ndriver-link = "warning"\n',
    "suppress.toml": (
        '[[suppress]]\nrule = "driver-link"\nfile = "broken/*.so"\nsubject = "libcuda.so*"\n'
        'reason = "dlopen()ed only on GPU hosts"\n'
    ),
    "versions.toml": (
        'profile = "manylinux_2_28_x86_64"\nmax_versions = ["GLIBC_2.17", "GLIBCXX_3.4.19"]\n'
        'ignore = ["rpath-leak"]\nentries = ["torch/_C*.so"]\n'
    ),
    "needed.toml": (
        '[[forbidden-needed]]\nfile = "*"\nneeded = "libnvrtc.so*"\nreason = "use the static NVRTC"\n\n'
        '[[required-needed]]\nfile = "lib/*.so"\nneeded = "libc.so.6"\nreason = "glibc builds"\n'
    ),
    "pyproject.toml": '#pyproject\n[project]\nname = "x"\n\n[tool.linkaudit]\nignore = ["rpath-leak"]\n',
}


def main() -> None:
    caches = ROOT / "fuzz/seeds/ldcache"
    caches.mkdir(parents=True, exist_ok=True)
    (caches / "new.cache").write_bytes(build(LIBS))
    (caches / "new-bare.cache").write_bytes(build(PLAIN, generator=None))
    (caches / "old.cache").write_bytes(build(PLAIN, "old"))
    (caches / "old-new.cache").write_bytes(build(LIBS, "old+new"))
    (caches / "new-big.cache").write_bytes(build(PLAIN, big=True))
    configs = ROOT / "fuzz/seeds/config"
    configs.mkdir(parents=True, exist_ok=True)
    for name, text in CONFIGS.items():
        (configs / name).write_text(text)
    write_package_seeds(ROOT / "fuzz/seeds")


if __name__ == "__main__":
    main()
