#!/usr/bin/env python3
"""Fuzz the wheel stager (zip members, symlinks, data directories, the dist-info's METADATA,
RECORD and WHEEL) and what the installation model reads of it.  The input is a file named like a
wheel; seeds: ``fuzz/seeds/wheel`` (``make_seeds.py``).  Staging collects each refused member as
an ``InputError``; anything raised is a finding.  See ``common.py``."""

from __future__ import annotations

import atheris
from common import exercise_package, run

with atheris.instrument_imports(include=["linkaudit"]):
    from packages import input_file

    import linkaudit.audit
    import linkaudit.packages.installation
    import linkaudit.packages.wheel
    import linkaudit.packages.zipped  # noqa: F401

SEEDS = ["fuzz/seeds/wheel/*", "fuzz/crashers/wheel/*"]
NAME = "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"


def test_one_input(data: bytes) -> None:
    exercise_package(input_file(data, NAME))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
