"""``--format dot``: the loads as one Graphviz digraph, a cluster per import root (``output.graph``).

Valid input for ``dot -Tsvg`` (the DOT language: https://graphviz.org/doc/info/lang.html): every
identifier and label is a double-quoted string with ``\\`` and ``"`` escaped and control characters
written out (``text_safe``).  The encoding is the report's: the root bold, libraries of the inputs
white, those found outside them grey, a missing library red, the GPU driver amber, lazily loaded
plugins dashed; the edges on the way to what cannot be loaded red and thick.
"""

from __future__ import annotations

from collections.abc import Sequence

from .graph import EdgeKind, GraphNode, LoadGraph, NodeKind
from .shared import text_safe

#: Graphviz node attributes per kind.
NODE_STYLE = {
    NodeKind.ROOT: 'style="rounded,filled,bold" fillcolor="#dbeafe" color="#1d4ed8" penwidth=2',
    NodeKind.LIBRARY: 'style="rounded,filled" fillcolor="#ffffff" color="#334155"',
    NodeKind.OUTSIDE: 'style="rounded,filled,dashed" fillcolor="#f1f5f9" color="#94a3b8" fontcolor="#475569"',
    NodeKind.MISSING: 'shape=octagon style="filled,bold" fillcolor="#fee2e2" color="#b91c1c" penwidth=2',
    NodeKind.DRIVER: 'shape=octagon style="filled,bold" fillcolor="#fde68a" color="#b91c1c" penwidth=3',
    NodeKind.PLUGIN: 'shape=note style="filled,dashed" fillcolor="#f5f3ff" color="#7c3aed"',
}
#: Graphviz edge attributes per kind.
EDGE_STYLE = {EdgeKind.NEEDED: "", EdgeKind.WEAK: "style=dotted", EdgeKind.LAZY: 'style=dashed color="#7c3aed"'}


def quote(*lines: str) -> str:
    """``lines`` as one DOT double-quoted string, a line each (control characters written as escapes)."""
    return '"' + "\\n".join(text_safe(t).replace("\\", "\\\\").replace('"', '\\"') for t in lines) + '"'


def shown_in_line(node: GraphNode) -> list[str]:
    """The line saying where a library's needs are drawn, when an earlier load of the picture drew them."""
    return [f"(its needs: drawn in the load of {node.shown_in})"] if node.shown_in else []


def node_label(node: GraphNode) -> str:
    """The node's label: the name, then the package that installs it where known (and where its needs
    are drawn, when another load of the picture drew them: ``GraphNode.shown_in``)."""
    return quote(node.label, *([f"({node.package})"] if node.package else []), *shown_in_line(node))


def _graph_lines(i: int, graph: LoadGraph) -> list[str]:
    title = f"{graph.root} [{graph.kind}] ({graph.loader})"
    out = [f"  subgraph cluster_{i} {{", f"    label={quote(title)};", '    color="#cbd5e1";']
    for n in graph.nodes:
        out.append(f"    g{i}_{n.id} [label={node_label(n)} {NODE_STYLE[n.kind]}];")
    for e in graph.edges:
        attrs = [f"label={quote(e.how)}", EDGE_STYLE[e.kind]]
        if e.failing:
            attrs.append('color="#dc2626" fontcolor="#b91c1c" penwidth=3')
        out.append(f"    g{i}_{e.source} -> g{i}_{e.target} [{' '.join(a for a in attrs if a)}];")
    out.append("  }")
    return out


def render(graphs: Sequence[LoadGraph]) -> str:
    """The digraph of every load in ``graphs``, a ``cluster_N`` subgraph each; ends with a newline."""
    lines = [
        "digraph linkaudit {",
        '  rankdir=LR; fontname="Helvetica"; fontsize=11;',
        '  node [shape=box fontname="Helvetica" fontsize=10];',
        '  edge [fontname="Helvetica" fontsize=8 color="#475569"];',
    ]
    for i, graph in enumerate(graphs):
        lines.extend(_graph_lines(i, graph))
    lines.append("}")
    return "\n".join(lines) + "\n"
