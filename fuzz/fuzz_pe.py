#!/usr/bin/env python3
"""Fuzz the PE reader (imports, delay-load imports, exports and forwarders; pefile reads the headers).
See ``common.py``."""

from __future__ import annotations

import contextlib

import atheris
from common import exercise, run

with atheris.instrument_imports(include=["linkaudit", "pefile"]):
    import pefile  # noqa: F401

    # the formats package imports these lazily: imported here, they are instrumented
    import linkaudit.formats.pe
    import linkaudit.formats.pe_directories  # noqa: F401
    from linkaudit.errors import InputError
    from linkaudit.formats import Container, read_bytes

SEEDS = ["sample_bins/pe/**/*.dll", "sample_bins/pe/**/*.exe", "sample_bins/pe/**/*.pyd"]


def test_one_input(data: bytes) -> None:
    with contextlib.suppress(InputError):
        exercise(read_bytes("fuzz.dll", data, kind=Container.PE))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
