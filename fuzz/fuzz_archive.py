#!/usr/bin/env python3
"""Fuzz the ``ar`` archive reader (GNU, BSD and thin archives, their ELF members).

The input is read as if it were ``sample_bins/objects/thin/fuzz.a``, so a thin archive's member
names resolve to the real objects beside the committed thin archive (read-only).  See ``common.py``."""

from __future__ import annotations

import contextlib

import atheris
from common import ROOT, exercise, run

with atheris.instrument_imports(include=["linkaudit"]):
    # the formats package imports these lazily: imported here, they are instrumented
    import linkaudit.formats.archive  # noqa: F401
    from linkaudit.errors import InputError
    from linkaudit.formats import Container, read_bytes

SEEDS = ["sample_bins/**/*.a"]
PATH = str(ROOT / "sample_bins/objects/thin/fuzz.a")


def test_one_input(data: bytes) -> None:
    with contextlib.suppress(InputError):
        exercise(read_bytes(PATH, data, kind=Container.ARCHIVE))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
