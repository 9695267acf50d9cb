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


@pytest.fixture
def dylib_diamond(tmp_path: Path) -> Path:
    """The same chain of diamonds as Mach-O dylibs: each loads its level's two successors by
    ``@loader_path`` install names (the header and load commands of ``test_hostile_images``)."""
    from ..formats.test_hostile_images import ID, LOAD, _dylib_cmd, _macho

    def name(n: int, side: str) -> str:
        return f"lib{n}{side}.dylib"

    def loads(n: int) -> list[bytes]:
        return [] if n > LEVELS else [_dylib_cmd(LOAD, f"@loader_path/{name(n, s)}") for s in "ab"]

    _macho(tmp_path / "libroot.dylib", [_dylib_cmd(ID, "@rpath/libroot.dylib"), *loads(0)])
    for n in range(LEVELS + 1):
        for side in "ab":
            _macho(tmp_path / name(n, side), [_dylib_cmd(ID, f"@rpath/{name(n, side)}"), *loads(n + 1)])
    return tmp_path


def test_dyld_tree_and_why_on_a_diamond_chain_are_linear(run_cli, dylib_diamond: Path) -> None:  # type: ignore[no-untyped-def]
    """The image tree (PE and Mach-O) draws each dylib's loads once too: 2**21 paths, a few
    hundred lines, in text and JSON; ``why`` names a bounded number of chains."""
    root = str(dylib_diamond / "libroot.dylib")
    r = run_cli("tree", root)
    assert r.exit_code == 0, r.stdout
    lines = r.stdout.splitlines()
    assert sum(f"lib{LEVELS}a.dylib [install-name]" in line for line in lines) == 1
    assert sum("(already loaded)" in line for line in lines) == 2 + 4 * LEVELS - LIBRARIES
    assert len(lines) <= 1 + 2 * LIBRARIES + 2
    r = run_cli("tree", "--format", "json", root)
    assert r.stdout.count('"lib') <= 20 * LIBRARIES and r.stdout.count(f"lib{LEVELS}a.dylib") >= 1
    r = run_cli("why", "--entry", root, str(dylib_diamond), f"lib{LEVELS}a.dylib")
    chains = [line for line in r.stdout.splitlines() if f"lib{LEVELS}a.dylib" in line]
    assert 1 <= len(chains) <= LIBRARIES, r.stdout[-2000:]
    doc = run_cli("why", "--format", "json", "--entry", root, str(dylib_diamond), f"lib{LEVELS}a.dylib").stdout
    assert len(doc) < 200 * LIBRARIES * LEVELS


def test_loader_path_of_an_image_given_by_a_bare_name_is_the_current_directory(  # type: ignore[no-untyped-def]
    run_cli, dylib_diamond: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``linkaudit check libroot.dylib`` in its directory: ``@loader_path/lib0a.dylib`` is
    ``lib0a.dylib`` (was ``/lib0a.dylib``: a false library-not-found for every @loader_path
    dependency of an image named without a directory, and of what it loads)."""
    monkeypatch.chdir(dylib_diamond)
    r = run_cli("check", "libroot.dylib")
    assert r.exit_code == 0, r.stdout
    tree = run_cli("tree", "libroot.dylib").stdout
    assert "not found" not in tree and f"=> lib{LEVELS}b.dylib [install-name]" in tree
