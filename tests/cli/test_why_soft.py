"""``why LIBRARY`` names each file keeping LIBRARY's name in .rodata once (linkaudit/cli/why.py
``_soft_lines``), however many roots and paths reach it: torch-site's libcuda.so.1 printed 6 lines
twice, word for word (one per root: ``torch/lib/../../nvidia/cu13/lib/x`` and ``nvidia/cu13/lib/x``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

SAMPLE = Path(__file__).resolve().parents[2] / "sample_bins/dlopen/libdlopens.so"
SOFT = " keeps the name libcuda.so in .rodata"


def _soft(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if "keeps the name" in line]


def test_one_file_reached_by_two_roots_and_paths_is_named_once(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "lib").mkdir()
    (tmp_path / "x").mkdir()
    shutil.copy(SAMPLE, tmp_path / "lib")
    direct, dotted = tmp_path / "lib/libdlopens.so", f"{tmp_path}/x/../lib/libdlopens.so"
    r = run_cli("why", "--entry", str(direct), "--entry", dotted, str(tmp_path), "libcuda.so")
    assert _soft(r.stdout) == [
        "libdlopens.so" + SOFT + ": a soft dependency it may dlopen() (not a DT_NEEDED, so not loaded with it)"
    ]
    assert r.exit_code == 0


def test_two_files_of_one_name_are_told_apart_by_path(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        shutil.copy(SAMPLE, tmp_path / d)
    a, b = tmp_path / "a/libdlopens.so", tmp_path / "b/libdlopens.so"
    r = run_cli("why", "--entry", str(a), "--entry", str(b), str(tmp_path), "libcuda.so")
    lines = _soft(r.stdout)
    assert len(lines) == 2 and lines[0].startswith(str(a) + SOFT) and lines[1].startswith(str(b) + SOFT)


@pytest.mark.realwheel
def test_torch_site_prints_no_line_twice(run_cli, torch_site: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(torch_site), "libcuda.so.1")
    lines = r.stdout.splitlines()
    assert len(_soft(r.stdout)) > 6 and len(lines) == len(set(lines))
