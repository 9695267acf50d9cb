"""``tree``, ``why`` and the pictures on a long chain: lib0 needs lib1 needs ... lib299, every one a root.

Every library of a plain directory is a root (dlopened alone), and each root's load holds the rest of
the chain: drawn in full, the pictures were quadratic in the libraries (and the text's indentation
made ``tree`` cubic).  Counting tests: what is printed grows with the number of libraries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from tools import needs, require

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
    # (lib298's need, lib299, needs nothing: drawn as it is, no pointer)
    assert len(back) == N - 3
    assert len(resolved) - len(back) == N
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


def _html_data(run_cli, chain: Path, out: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    r = run_cli("check", str(chain), "--format", "html", "-o", str(out))
    assert r.exit_code in (0, 1), r.stderr
    data = re.search(r'<script type="application/json" id="linkaudit-data">(.*?)</script>', out.read_text(), re.S)
    assert data is not None
    return json.loads(data.group(1))  # type: ignore[no-any-return]


def test_html_draws_each_library_once_over_every_root(run_cli, chain: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = _html_data(run_cli, chain, tmp_path / "report.html")
    graphs = data["graphs"]
    assert len(graphs) == N  # a graph per root still
    assert sum(len(g["nodes"]) for g in graphs) <= 3 * N
    assert sum(len(g["edges"]) for g in graphs) <= 3 * N
    first = graphs[0]["root"]
    assert len(graphs[0]["nodes"]) == N  # lib0's load: the whole chain
    # every other root: itself and its need, whose own needs are drawn in lib0's graph
    pointing = [n for g in graphs[1:] for n in g["nodes"] if n.get("shown_in")]
    assert len(pointing) == N - 3 and {n["shown_in"] for n in pointing} == {first}
    assert (tmp_path / "report.html").stat().st_size < 4000 * N


@pytest.mark.parametrize("fmt", ["dot", "mermaid"])
def test_dot_and_mermaid_draw_each_library_once(run_cli, chain: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--format", fmt, str(chain))
    assert r.exit_code == 0, r.stderr
    nodes = re.findall(r"^    g\d+_n\d+ ?\[", r.stdout, re.M)
    assert N <= len(nodes) <= 3 * N
    assert r.stdout.count("(its needs: drawn in the load of ") == N - 3


@needs("chromium")
def test_html_of_shared_loads_in_a_browser(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from browser import browser
    from report_page import open_report

    for i in range(4):
        (tmp_path / f"lib{i}.so").write_bytes(shared_library(f"lib{i}.so", [f"lib{i + 1}.so"] if i < 3 else []))
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "report.html"
    data = _html_data(run_cli, tmp_path, out)
    assert [len(g["nodes"]) for g in data["graphs"]] == [4, 2, 2, 1]
    with browser(require("chromium")) as b:
        open_report(b, out)
        assert b.errors == [] and b.blocked == []
        assert b.evaluate("document.querySelectorAll('#g1 g.node').length") == 2
        sub = b.evaluate("[...document.querySelectorAll('#g1 g.node text.pkg')].map(t => t.textContent)")
        assert sub == [f"needs: drawn in the load of {tmp_path}/lib0.so"]
        assert "drawn in the load of" in b.evaluate("document.querySelector('#g1 h3').textContent")
        b.click("#g1 g.node.k-library")
        assert "What it loads is drawn in the load of" in b.evaluate("document.querySelector('#g1 .details').innerText")
        assert b.errors == []


def test_why_tells_a_shared_chain_for_the_first_roots_and_counts_the_rest(run_cli, chain: Path) -> None:  # type: ignore[no-untyped-def]
    from linkaudit.cli.why import MAX_CHAIN
    from linkaudit.loader.analysis import ROOTS_SHOWN

    r = run_cli("why", str(chain), f"lib{N - 1}.so")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    told = [line for line in lines if f"=> {chain}/lib{N - 1}.so [DT_RUNPATH of lib{N - 2}.so]" in line]
    assert len(told) == ROOTS_SHOWN and told[0].startswith(f"{chain}/lib0.so [dlopen]: lib0.so → lib1.so → ")
    assert f"… ({N - 12} more) → " in told[0]  # not N names on one line
    assert lines[-1] == f"    and {N - 1 - ROOTS_SHOWN} more roots load it the same way (lib{N - 2}.so → lib{N - 1}.so)"
    assert len(lines) == ROOTS_SHOWN + 1 and max(map(len, lines)) < 40 * MAX_CHAIN + len(str(chain)) * 2
    doc = json.loads(run_cli("why", "--format", "json", str(chain), f"lib{N - 1}.so").stdout)
    chains = doc["library_chains"]
    assert len(chains) == ROOTS_SHOWN and chains[-1]["more_roots"] == N - 1 - ROOTS_SHOWN
    assert chains[0]["chain"] == [f"{chain}/lib{i}.so" for i in range(N - 1)] + [f"lib{N - 1}.so"]  # json: every step
