#!/usr/bin/env python3
"""Fuzz the tarball stager: plain, gzip, bzip2, xz and zstd tarballs (the compression is found by
its magic bytes), their symlinks, hard links and special members.  Seeds: ``fuzz/seeds/tar``
(``make_seeds.py``).  Staging collects each refused member as an ``InputError``; anything raised
is a finding.  See ``common.py``."""

from __future__ import annotations

import atheris
from common import exercise_package, run

with atheris.instrument_imports(include=["linkaudit"]):
    from packages import input_file

    import linkaudit.audit
    import linkaudit.packages.installation
    import linkaudit.packages.tar
    import linkaudit.packages.zstdframes  # noqa: F401

SEEDS = ["fuzz/seeds/tar/*", "fuzz/crashers/tar/*"]


def test_one_input(data: bytes) -> None:
    exercise_package(input_file(data, "package.tar"))


if __name__ == "__main__":
    run(test_one_input, SEEDS)
