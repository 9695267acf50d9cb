"""The atheris harnesses of ``fuzz/`` start, load their seeds and run a few inputs cleanly.

Not fuzzing (``fuzz/run_all.sh`` does that): a check that the harnesses have not rotted as the
readers change.  Skipped without atheris (``pip install '.[fuzz]'``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HARNESSES = sorted(p.stem.removeprefix("fuzz_") for p in (ROOT / "fuzz").glob("fuzz_*.py"))


def test_every_reader_has_a_harness() -> None:
    assert HARNESSES == ["archive", "config", "elf", "ldcache", "macho", "pe"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness_runs(harness: str, tmp_path: Path) -> None:
    pytest.importorskip("atheris", reason="needs atheris (pip install '.[fuzz]')")
    r = subprocess.run(
        [sys.executable, str(ROOT / "fuzz" / f"fuzz_{harness}.py"), "-runs=40", f"-artifact_prefix={tmp_path}/"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert re.search(r"^Done \d+ runs", r.stderr, re.M)  # the seeds, then 40 inputs
    assert not list(tmp_path.iterdir())  # no crash-*, timeout-* or oom-* input left
