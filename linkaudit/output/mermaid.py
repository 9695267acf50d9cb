"""``--format mermaid``: the loads as one Mermaid flowchart, a subgraph per import root (``output.graph``).

Valid for Mermaid's parser (``mermaid.parse``; syntax: https://mermaid.js.org/syntax/flowchart.html):
node ids are generated (``g0_n3``), every label is a quoted string in which each character outside
a safe set is an entity code (``#35;``), so a name from a binary cannot close the string or start
markup.  The same encoding as ``--format dot``: ``classDef`` per node kind, lazy edges dotted
(``-.->``), the edges on the way to what cannot be loaded red and thick (``linkStyle``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .dot import shown_in_line
from .graph import EdgeKind, LoadGraph, NodeKind
from .shared import utf8_safe

#: Mermaid class definitions per node kind.
CLASS_DEF = {
    NodeKind.ROOT: "fill:#dbeafe,stroke:#1d4ed8,stroke-width:3px",
    NodeKind.LIBRARY: "fill:#ffffff,stroke:#334155",
    NodeKind.OUTSIDE: "fill:#f1f5f9,stroke:#94a3b8,stroke-dasharray:4 3,color:#475569",
    NodeKind.MISSING: "fill:#fee2e2,stroke:#b91c1c,stroke-width:3px",
    NodeKind.DRIVER: "fill:#fde68a,stroke:#b91c1c,stroke-width:4px",
    NodeKind.PLUGIN: "fill:#f5f3ff,stroke:#7c3aed,stroke-dasharray:4 3",
}
_UNSAFE = re.compile(r"[^A-Za-z0-9 ._+\-/:@$()=\[\],]")


def quote(*lines: str) -> str:
    """``lines`` as one Mermaid quoted label, joined by ``<br/>``: every character outside a safe set
    as ``#CODE;``."""
    return '"' + "<br/>".join(_UNSAFE.sub(lambda m: f"#{ord(m.group())};", utf8_safe(t)) for t in lines) + '"'


def _graph_lines(i: int, graph: LoadGraph, first_edge: int) -> tuple[list[str], list[int]]:
    title = f"{graph.root} [{graph.kind}] ({graph.loader})"
    out = [f"  subgraph g{i}[{quote(title)}]", "    direction LR"]
    for n in graph.nodes:
        label = quote(n.label, *([n.package] if n.package else []), *shown_in_line(n))
        out.append(f"    g{i}_{n.id}[{label}]:::{n.kind.value}")
    out.append("  end")
    failing = []
    for k, e in enumerate(graph.edges):
        arrow = "-.->" if e.kind is not EdgeKind.NEEDED else "-->"
        out.append(f"  g{i}_{e.source} {arrow}|{quote(e.how)}| g{i}_{e.target}")
        if e.failing:
            failing.append(first_edge + k)
    return out, failing


def render(graphs: Sequence[LoadGraph]) -> str:
    """The flowchart of every load in ``graphs``; ends with a newline."""
    lines = ["flowchart LR"]
    failing: list[int] = []
    edges = 0
    for i, graph in enumerate(graphs):
        more, red = _graph_lines(i, graph, edges)
        lines.extend(more)
        failing.extend(red)
        edges += len(graph.edges)
    lines.extend(f"  classDef {kind.value} {style}" for kind, style in CLASS_DEF.items())
    if failing:
        lines.append(f"  linkStyle {','.join(map(str, failing))} stroke:#dc2626,stroke-width:3px")
    return "\n".join(lines) + "\n"
