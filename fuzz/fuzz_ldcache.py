#!/usr/bin/env python3
"""Fuzz the ``ld.so.cache`` reader (old, new and old+new layouts, extensions, hwcaps) and its lookups.
Seeds: ``fuzz/seeds/ldcache`` (written by ``make_seeds.py``) and the host's own cache.  See ``common.py``."""

from __future__ import annotations

import atheris
from common import run

with atheris.instrument_imports(include=["linkaudit"]):
    from linkaudit.errors import InputError
    from linkaudit.loader.ldcache import expected_cache_flags, parse_ld_cache

SEEDS = ["fuzz/seeds/ldcache/*"]
NAMES = ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libz.so.1", "")
FLAGS = (expected_cache_flags("x86-64", 64), expected_cache_flags("aarch64", 64), None)


def test_one_input(data: bytes) -> None:
    try:
        cache = parse_ld_cache(data, "fuzz/ld.so.cache")
    except InputError:
        return
    for name in NAMES:
        cache.lookup_all(name)
        for flags in FLAGS:
            cache.lookup(name, flags, ("x86-64-v3", "x86-64-v2"))


if __name__ == "__main__":
    run(test_one_input, SEEDS, extra=["/etc/ld.so.cache"])  # the host's cache: a real seed, never committed
