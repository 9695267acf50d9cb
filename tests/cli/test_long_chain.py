"""``tree``, ``why`` and the pictures on a long chain: lib0 needs lib1 needs ... lib299, every one a root.

Every library of a plain directory is a root (dlopened alone), and each root's load holds the rest of
the chain: drawn in full, the pictures were quadratic in the libraries (and the text's indentation
made ``tree`` cubic).  Counting tests: what is printed grows with the number of libraries.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit.output.tree import MAX_DEPTH

from ..formats.elfbuild import shared_library

N = 300


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """lib0.so needs lib1.so needs ... lib299.so, each with DT_RUNPATH $ORIGIN."""
    d = tmp_path_factory.mktemp("chain")
    for i in range(N):
        (d / f"lib{i}.so").write_bytes(shared_library(f"lib{i}.so", [f"lib{i + 1}.so"] if i + 1 < N else []))
    return d


def test_tree_draws_each_library_once_over_every_root(run_cli, chain: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", str(chain))
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    resolved = [line for line in lines if "[DT_RUNPATH of" in line]
    back = [line for line in resolved if "(shown above, under " in line]
    # lib0's tree draws lib1 .. lib299 once; each other root draws its one need, pointing back
    assert len(resolved) - len(back) == N - 1
    assert len(back) == N - 2
    assert len(lines) <= 5 * N
    assert max(map(len, lines)) <= 4 * MAX_DEPTH + 120


def test_tree_of_one_deep_root_continues_in_blocks(run_cli, chain: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--entry", str(chain / "lib0.so"), str(chain))
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert sum("[DT_RUNPATH of" in line for line in lines) == N - 1
    blocks = [line for line in lines if ", continued from depth " in line]
    assert blocks[0] == f"  lib{MAX_DEPTH}.so, continued from depth {MAX_DEPTH}:"
    assert len(blocks) == (N - 2) // MAX_DEPTH
    assert len(lines) <= N + len(blocks) + 2
    assert max(map(len, lines)) <= 4 * MAX_DEPTH + 120  # not 4 * N: the indentation stops growing
