"""What every linkaudit fuzz harness shares: instrumented imports, the seed corpus, libFuzzer's flags.

A harness is a script ``fuzz_NAME.py`` that defines ``test_one_input(data: bytes)`` — call one
reader entry point on ``data`` and let it return or raise the reader's named error (``InputError``;
``ConfigError`` for the configuration file) — and calls ``run(test_one_input, SEEDS)``.  Any other
exception, a hang past ``-timeout`` or memory past ``-rss_limit_mb`` is a finding: libFuzzer stops
and writes the input as ``crash-*``/``timeout-*``/``oom-*`` under ``-artifact_prefix``.

The readers are imported under ``atheris.instrument_imports()`` (in each harness, before
``run``): without it libFuzzer has no coverage signal and mutates at random.

Seeds: ``SEEDS`` are globs under the repository (``sample_bins/``, ``fuzz/seeds/``); unless the
command line names corpus directories, they are copied into a fresh temporary directory that
libFuzzer then grows (the committed files are never written).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import atheris

if TYPE_CHECKING:
    from linkaudit.model import Binary

ROOT = Path(__file__).resolve().parents[1]
#: Flags every run gets unless the command line sets them: the memory and time budget of one input.
DEFAULTS = ("-rss_limit_mb=1024", "-timeout=20", "-max_len=262144")


def seed_files(globs: Sequence[str]) -> list[Path]:
    """The files under the repository root matching ``globs`` (regular files, sorted, no duplicates)."""
    found = {p for g in globs for p in ROOT.glob(g) if p.is_file() and not p.is_symlink()}
    return sorted(found)


def exercise(binaries: Sequence[Binary]) -> None:
    """What the audit asks of every binary a reader returns: its names, definitions, undefined symbols."""
    for binary in binaries:
        table = binary.symbols
        table.definitions()
        table.undefined()
        table.strong_export_names()
        for symbol in table:
            symbol.display_name()


def exercise_package(path: str) -> None:
    """What the audit asks of a package at ``path`` before any binary is read: stage it (members
    refused are collected, never raised), find its sites, build the installation model (owners,
    declared dependencies from METADATA / RECORD / WHEEL / index.json / paths.json) and write every
    staged path back as ``PACKAGE!member``.  Imported here, after the harness's instrumented imports."""
    from linkaudit.audit import sites_among
    from linkaudit.packages import staged_inputs
    from linkaudit.packages.installation import installation_model

    with staged_inputs([path]) as staged:
        installation_model(staged, sites_among(staged))
        for top in staged.paths:
            for where, _dirs, files in os.walk(top):
                for name in files:
                    staged.label(os.path.join(where, name))


def run(test_one_input: Callable[[bytes], None], seeds: Sequence[str], extra: Sequence[str] = ()) -> None:
    """Run libFuzzer on ``test_one_input`` with this process's arguments, seeded from ``seeds``
    (globs under the repository) and the ``extra`` files that exist (absolute paths, never committed)."""
    argv = list(sys.argv)
    for flag in DEFAULTS:
        if not any(a.startswith(flag.split("=")[0] + "=") for a in argv[1:]):
            argv.append(flag)
    if not any(not a.startswith("-") for a in argv[1:]):
        corpus = tempfile.mkdtemp(prefix=f"{Path(argv[0]).stem}-")
        found = seed_files(seeds) + [Path(p) for p in extra if os.path.isfile(p)]
        for i, path in enumerate(found):
            shutil.copyfile(path, os.path.join(corpus, f"{i:04d}-{path.name}"))
        argv.append(corpus)
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()
