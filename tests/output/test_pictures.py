"""The pictures: ``tree --format dot|mermaid`` and ``check --format html``, on ELF, PE and Mach-O samples.

The graphs are checked for what they say (the driver node, the failing chain, how each library was
found); ``dot -Tsvg`` must accept every DOT document (graphviz), Mermaid's own parser every
flowchart, and headless Chromium must load the HTML report with no console error and no request
outside ``file:``/``data:``/``blob:``, draw the expected nodes and edges, filter the table and show
a node's details on a real click (``tests/browser.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from tools import needs, require

from linkaudit.output import dot, mermaid
from linkaudit.output.graph import EdgeKind, GraphEdge, GraphNode, LoadGraph, NodeKind

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bins"
MERMAID = ROOT / "tests" / "assets" / "mermaid" / "mermaid.min.js"
#: One input per format and loader: ELF (ld.so), PE (Windows search order), Mach-O (dyld).
INPUTS = {
    "elf": "sample_bins/broken",
    "pe": "sample_bins/pe/driver",
    "macho": "sample_bins/macho/fixed",
    "pe-imports": "sample_bins/pe/imports",
}
#: A graph whose names would break a careless writer: quotes, a newline, markup, DOT and Mermaid syntax.
HOSTILE = LoadGraph(
    'root "}\n<script>',
    "dlopen",
    "glibc",
    (
        GraphNode("n0", 'lib"a}.so\n-->', '/x/lib"a}.so', 'pkg"];', NodeKind.ROOT),
        GraphNode("n1", "lib|b;%%.so <b>#x</b>", None, None, NodeKind.MISSING, ("/x [DT_RPATH] missing",)),
    ),
    (GraphEdge("n0", "n1", "lib|b", 'not "found" |x|', EdgeKind.NEEDED, True),),
)


def _picture(run_cli, fmt: str, path: str) -> str:  # type: ignore[no-untyped-def]
    result = run_cli("tree", str(ROOT / path), "--format", fmt)
    assert result.exit_code in (0, 1), result.output
    return str(result.stdout)


def test_broken_sample_graph_draws_the_driver_and_the_failing_edge(run_cli) -> None:  # type: ignore[no-untyped-def]
    text = _picture(run_cli, "dot", INPUTS["elf"])
    assert 'label="libcuda.so.1" shape=octagon' in text and 'fillcolor="#fde68a"' in text
    # the root's DT_NEEDED on the driver is the failing edge, red; libc's is not
    assert 'g0_n0 -> g0_n3 [label="not found: GPU driver absent" color="#dc2626"' in text
    assert 'g0_n0 -> g0_n1 [label="ld.so.cache"];' in text
    flow = _picture(run_cli, "mermaid", INPUTS["elf"])
    assert 'g0_n3["libcuda.so.1"]:::driver' in flow and "linkStyle 0 stroke:#dc2626" in flow


def test_image_graphs_say_how_each_import_resolved(run_cli) -> None:  # type: ignore[no-untyped-def]
    pe = _picture(run_cli, "dot", INPUTS["pe"])
    # a delay-load import of the driver is a lazy edge (allowed); a plain one fails
    assert 'label="delay-load" style=dashed' in pe
    assert 'label="nvcuda.dll" shape=octagon' in pe
    macho = _picture(run_cli, "dot", INPUTS["macho"])
    assert "LC_RPATH of" in macho and "@rpath/libnvrtc.12.dylib" in macho
    assert "#dc2626" not in macho  # the fixed sample loads: nothing failing


def test_hostile_names_stay_inside_their_strings() -> None:
    text = dot.render([HOSTILE])
    # the newline in the name is an escape, shown as \n; the package is the label's second line
    assert 'label="lib\\"a}.so\\\\n-->\\n(pkg\\"];)"' in text and "\n-->" not in text
    flow = mermaid.render([HOSTILE])
    assert "<script>" not in flow and '"lib#34;a#125;.so#10;--#62;' in flow and "#124;" in flow


@needs("dot")
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_dot_accepts_every_graph(run_cli, name: str) -> None:  # type: ignore[no-untyped-def]
    for text in (_picture(run_cli, "dot", INPUTS[name]), dot.render([HOSTILE])):
        svg = subprocess.run([require("dot"), "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
        assert svg.returncode == 0 and not svg.stderr, svg.stderr
        nodes = len(re.findall(r"^ +g\d+_n\d+ \[label=", text, re.M))
        assert (svg.stdout.count('class="node"'), svg.stdout.count('class="edge"')) == (nodes, text.count(" -> "))


@needs("dot")
def test_dot_rejects_what_is_not_dot() -> None:
    """The check above can fail: dot does refuse a broken document."""
    bad = dot.render([HOSTILE]).replace('\\"a', '"a', 1)
    assert (
        subprocess.run([require("dot"), "-Tsvg"], input=bad, capture_output=True, text=True, timeout=60).returncode != 0
    )


@needs("chromium")
def test_mermaid_parser_accepts_every_flowchart(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from browser import browser

    charts = [_picture(run_cli, "mermaid", p) for p in INPUTS.values()] + [mermaid.render([HOSTILE])]
    page = tmp_path / "mermaid.html"
    page.write_text(f'<!DOCTYPE html><meta charset="utf-8"><script src="{MERMAID.as_uri()}"></script>')
    with browser(require("chromium")) as b:
        b.open(page.as_uri(), "typeof mermaid === 'object'")
        for chart in charts:
            ok = b.evaluate(f"mermaid.parse({json.dumps(chart)}).then(r => !!r)", await_promise=True)
            assert ok is True, chart
        with pytest.raises(RuntimeError):  # the parser does reject what is not a flowchart
            b.evaluate(f"mermaid.parse({json.dumps(charts[0].replace('-->', '-- >', 1) + ' ]]')})", await_promise=True)
        assert not b.errors and not b.blocked


def test_why_draws_only_the_chains_to_its_target(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("why", str(ROOT / INPUTS["elf"]), "libcuda.so.1", "--format", "dot")
    nodes = re.findall(r"^ +(g\d+_n\d+) \[label=\"([^\"]*)\"", result.stdout, re.M)
    assert [label for _id, label in nodes] == ["libtorch_cuda.so", "libcuda.so.1"]  # libc is not on the way
    assert result.stdout.count(" -> ") == 1 and "#dc2626" in result.stdout
    macho = run_cli("why", str(ROOT / INPUTS["macho"]), "libnvrtc.12.dylib", "--format", "mermaid").stdout
    assert "@rpath/libnvrtc.12.dylib" in macho and "LC_RPATH of" in macho and "libSystem" not in macho
