#!/usr/bin/env python3
"""Fuzz the conda stagers: ``.conda`` (a zip of ``pkg-*.tar.zst`` and ``info-*.tar.zst``) and
``.tar.bz2``, with ``info/index.json`` and ``info/paths.json``.  An input starting with a zip
header is named ``.conda``, any other ``.tar.bz2``.  Seeds: ``fuzz/seeds/conda``
(``make_seeds.py``).  Staging collects each refused member as an ``InputError``; anything raised
is a finding.  See ``common.py``."""

from __future__ import annotations

import atheris
from common import exercise_package, run

with atheris.instrument_imports(include=["linkaudit"]):
    from packages import input_file

    import linkaudit.audit
    import linkaudit.packages.conda
    import linkaudit.packages.installation
    import linkaudit.packages.site
    import linkaudit.packages.tar  # noqa: F401

SEEDS = ["fuzz/seeds/conda/*", "fuzz/crashers/conda/*"]


def test_one_input(data: bytes) -> None:
    name = "demo-1.0-0.conda" if data.startswith(b"PK") else "demo-1.0-0.tar.bz2"
    exercise_package(input_file(data, name))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
