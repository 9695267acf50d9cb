#!/usr/bin/env python3
"""Fuzz the Mach-O reader (thin and fat files, LC_SYMTAB, chained-fixups imports, the export trie).
See ``common.py``."""

from __future__ import annotations

import contextlib

import atheris
from common import exercise, run

with atheris.instrument_imports(include=["linkaudit", "macholib"]):
    import macholib.mach_o
    import macholib.ptypes  # noqa: F401

    # the formats package imports these lazily: imported here, they are instrumented
    import linkaudit.formats.macho
    import linkaudit.formats.macho_linkedit  # noqa: F401
    from linkaudit.errors import InputError
    from linkaudit.formats import Container, read_bytes

SEEDS = ["sample_bins/macho/**/*.dylib", "sample_bins/macho/**/*.so", "sample_bins/macho/**/app"]


def test_one_input(data: bytes) -> None:
    with contextlib.suppress(InputError):
        exercise(read_bytes("fuzz.dylib", data, kind=Container.MACHO))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
