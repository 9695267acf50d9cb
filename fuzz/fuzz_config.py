#!/usr/bin/env python3
"""Fuzz the configuration-file reader (``linkaudit.toml``; ``[tool.linkaudit]`` of ``pyproject.toml``
when the input starts with ``#pyproject``): it returns settings or raises ``ConfigError``.
Seeds: ``fuzz/seeds/config`` (written by ``make_seeds.py``).  See ``common.py``."""

from __future__ import annotations

import contextlib
import os
import tempfile

import atheris
from common import run

with atheris.instrument_imports(include=["linkaudit"]):
    from linkaudit.config.file import load_config
    from linkaudit.errors import ConfigError
    from linkaudit.rules import rule_ids

SEEDS = ["fuzz/seeds/config/*"]
KNOWN = frozenset(rule_ids())
DIR = tempfile.mkdtemp(prefix="fuzz-config-")


def test_one_input(data: bytes) -> None:
    name = "pyproject.toml" if data.startswith(b"#pyproject") else "linkaudit.toml"
    path = os.path.join(DIR, name)
    with open(path, "wb") as fh:
        fh.write(data)
    with contextlib.suppress(ConfigError):
        load_config(path, KNOWN)


if __name__ == "__main__":
    run(test_one_input, SEEDS)
