"""``tree`` and ``why`` on a diamond-shaped DAG: each object's subtree printed once, repeats marked.

A chain of 20 diamonds has 2**21 paths from the root to each of the last two libraries; printing
every path would never finish.  Counting tests: the output grows with the number of libraries.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..formats.elfbuild import diamond_chain

LEVELS = 20
LIBRARIES = 2 * (LEVELS + 1)


@pytest.fixture
def diamond(tmp_path: Path) -> Path:
    for name, data in diamond_chain(LEVELS).items():
        (tmp_path / name).write_bytes(data)
    return tmp_path


def test_tree_expands_each_library_once_and_marks_the_repeats(run_cli, diamond: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", str(diamond / "libroot.so"))
    assert r.exit_code == 0, r.stdout
    lines = r.stdout.splitlines()
    expanded = [line for line in lines if "[DT_RUNPATH of" in line]
    repeats = [line for line in lines if "(already loaded)" in line]
    # every library resolved (and its subtree drawn) exactly once; every other edge a marked repeat
    assert sorted(line.split("=>")[0].split()[-1] for line in expanded) == sorted(
        f"lib{n}{s}.so" for n in range(LEVELS + 1) for s in "ab"
    )
    edges = 2 + 2 * 2 * LEVELS  # the root's two, two from each library above the last level
    assert len(repeats) == edges - LIBRARIES
    assert len(lines) <= 1 + 2 * LIBRARIES + 2


def test_tree_json_is_as_small(run_cli, diamond: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--format", "json", str(diamond / "libroot.so"))
    assert r.exit_code == 0
    assert r.stdout.count('"lib') <= 20 * LIBRARIES  # linear in the libraries, not 2**21 paths


def test_why_prints_a_bounded_number_of_chains(run_cli, diamond: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", "--entry", str(diamond / "libroot.so"), str(diamond), f"lib{LEVELS}a.so")
    assert r.exit_code == 0, r.stdout
    chains = [line for line in r.stdout.splitlines() if f"lib{LEVELS}a.so" in line]
    assert 1 <= len(chains) <= LIBRARIES
    doc = json.loads(
        run_cli(
            "why", "--format", "json", "--entry", str(diamond / "libroot.so"), str(diamond), f"lib{LEVELS}a.so"
        ).stdout
    )
    assert len(json.dumps(doc)) < 200 * LIBRARIES * LEVELS
