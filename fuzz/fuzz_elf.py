#!/usr/bin/env python3
"""Fuzz the ELF reader (shared objects, executables, relocatable objects): ``read_bytes`` as ELF, then
the symbol-table views every rule uses.  See ``common.py`` for the contract and the flags."""

from __future__ import annotations

import contextlib

import atheris
from common import exercise, run

with atheris.instrument_imports(include=["linkaudit"]):
    from linkaudit.errors import InputError
    from linkaudit.formats import Container, read_bytes

SEEDS = [
    "sample_bins/**/*.so",
    "sample_bins/**/*.so.*",
    "sample_bins/**/*.o",
    "sample_bins/corrupt/*",
    "sample_bins/misc/hello",
]


def test_one_input(data: bytes) -> None:
    with contextlib.suppress(InputError):
        exercise(read_bytes("fuzz.so", data, kind=Container.ELF))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
