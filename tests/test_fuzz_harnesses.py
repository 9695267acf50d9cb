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
PACKAGE_SEEDS = sorted(p for kind in ("wheel", "tar", "conda") for p in (ROOT / "fuzz/seeds" / kind).iterdir())


def test_every_reader_has_a_harness() -> None:
    assert HARNESSES == ["archive", "conda", "config", "elf", "ldcache", "macho", "pe", "tar", "wheel"]


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


def test_run_all_runs_every_harness() -> None:
    """CI runs ``fuzz/run_all.sh``: a harness left out of its list would never run there."""
    script = (ROOT / "fuzz/run_all.sh").read_text()
    listed = re.search(r"^for harness in ([a-z ]+); do$", script, re.M)
    assert listed and sorted(listed.group(1).split()) == HARNESSES


@pytest.mark.parametrize("path", PACKAGE_SEEDS, ids=lambda p: p.name)
def test_package_seeds_stage_a_library_cleanly(path: Path) -> None:
    """The stager harnesses start from packages whose library is staged with nothing refused, so
    mutation starts inside the member, link and metadata paths, not at the first header check."""
    from linkaudit.packages import staged_inputs

    with staged_inputs([str(path)]) as staged:
        assert staged.errors == []
        written = [os.path.join(w, f) for top in staged.paths for w, _d, fs in os.walk(top) for f in fs]
        assert any(
            staged.label(p).endswith("!lib/libhelper.so") or staged.label(p).endswith("!demo/libhelper.so")
            for p in written
        )


def test_package_seeds_are_what_make_seeds_writes(tmp_path: Path) -> None:
    """The committed package seeds are rebuilt byte for byte by ``fuzz/make_seeds.py``'s generator."""
    sys.path.insert(0, str(ROOT / "fuzz"))
    try:
        from packages import write_package_seeds
    finally:
        sys.path.remove(str(ROOT / "fuzz"))
    write_package_seeds(tmp_path)
    made = {p.relative_to(tmp_path): p.read_bytes() for p in tmp_path.glob("*/*")}
    committed = {p.relative_to(ROOT / "fuzz/seeds"): p.read_bytes() for p in PACKAGE_SEEDS}
    assert made == committed and len(made) == 8


CRASHERS = sorted(p for p in (ROOT / "fuzz/crashers").glob("*/*") if p.is_file())


@pytest.mark.parametrize("crasher", CRASHERS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_crasher_now_runs_clean(crasher: Path) -> None:
    """Each input a harness once failed on (``fuzz/crashers/HARNESS/``, also its seeds) runs
    through that harness without a finding: libFuzzer executes the files it is given once."""
    pytest.importorskip("atheris", reason="needs atheris (pip install '.[fuzz]')")
    r = subprocess.run(
        [sys.executable, str(ROOT / "fuzz" / f"fuzz_{crasher.parent.name}.py"), str(crasher)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"Executed {crasher}" in r.stderr
