"""``check --format html``: one self-contained page — the summary, each import root's load drawn as
a graph (``output.graph``), the findings as a filterable table, the rules' explanations.

Everything is inline: the CSS, the script (``assets/report.js``), the layout library
(``assets/dagre.min.js``, ``@dagrejs/dagre``, MIT, see ``assets/README.md``) and the data (a JSON
``<script type="application/json">`` with ``<`` written ``\\u003c``, so no name from a binary can
close it).  Opening the file fetches nothing.  Every string from the inputs is HTML-escaped here or
set as text by the script, never parsed as markup.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from importlib.resources import files
from typing import Any

from ..report import Finding, Report, Severity
from .graph import LoadGraph, NodeKind
from .shared import text_safe

#: The vendored layout library and the page's own script and style (package data).
ASSETS = ("dagre.min.js", "report.js", "report.css")


def asset(name: str) -> str:
    """The text of one of ``ASSETS`` (``FileNotFoundError`` when the package was installed without them)."""
    return (files("linkaudit.output") / "assets" / name).read_text(encoding="utf-8")


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _e(text: object) -> str:
    return html.escape(text_safe(str(text)), quote=True)


def _safe_tree(value: Any) -> Any:
    """A JSON-ready value with every string ``text_safe`` (a name's newline or ESC shown escaped)."""
    if isinstance(value, str):
        return text_safe(value)
    if isinstance(value, dict):
        return {text_safe(str(k)): _safe_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_safe_tree(v) for v in value]
    return value


def _where(finding: Finding, graphs: Sequence[LoadGraph]) -> tuple[int, str] | None:
    """The graph and node a finding is about: the node of its file, in the first load holding it."""
    for i, g in enumerate(graphs):
        for n in g.nodes:
            if n.path == finding.file:
                return i, n.id
    return None


def _graph_dict(g: LoadGraph) -> dict[str, Any]:
    return {
        "root": g.root,
        "kind": g.kind,
        "loader": g.loader,
        "nodes": [
            {
                "id": n.id,
                "label": n.label,
                "path": n.path,
                "package": n.package,
                "kind": n.kind.value,
                "tried": n.tried,
                **({"shown_in": n.shown_in} if n.shown_in else {}),
            }
            for n in g.nodes
        ],
        "edges": [
            {
                "source": e.source,
                "target": e.target,
                "name": e.name,
                "how": e.how,
                "kind": e.kind.value,
                "failing": e.failing,
                "first": e.first,
            }
            for e in g.edges
        ],
    }


def _data(report: Report, graphs: Sequence[LoadGraph]) -> str:
    findings = []
    for f in report.findings:
        where = _where(f, graphs)
        item: dict[str, Any] = {"rule": f.rule, "severity": f.severity.value, "file": f.file, "subject": f.subject,
                "message": f.message, "suppressed": f.suppressed, "graph": where[0] if where else None,
                "node": where[1] if where else None}  # fmt: skip
        symbols = f.evidence.get("symbols")
        if f.evidence.get("expected_provider") and isinstance(symbols, (list, tuple)):
            # under-linking (missing-provider): the provider the symbols expect, drawn beside the load
            item["provider"] = {"name": f.evidence["expected_provider"], "family": f.evidence.get("family"),
                                "symbols": list(symbols)}  # fmt: skip
        findings.append(item)
    doc = {"graphs": [_graph_dict(g) for g in graphs], "findings": findings}
    return json.dumps(_safe_tree(doc), ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def _roots(report: Report, graphs: Sequence[LoadGraph]) -> str:
    """``"4 (+34 loaded alone)"``: the import roots, then the inputs no root reaches (loaded as a dlopen)."""
    if not report.roots:
        return str(len(graphs))
    alone = sum(1 for r in report.roots if not r.reached)
    return f"{len(report.roots) - alone}" + (f" (+{alone} loaded alone)" if alone else "")


def _summary(report: Report, graphs: Sequence[LoadGraph]) -> list[str]:
    counts = [(s, report.count(s)) for s in (Severity.ERROR, Severity.WARNING, Severity.NOTE)]
    planned = report.config.get("installations") or []
    audited = sum(1 for f in report.files if f.status.value == "audited")
    cells = [
        ("inputs", f"{_n(len(report.files), 'file')} ({audited} audited)"),
        ("installations", str(len(planned)) if planned else "—"),
        ("import roots", _roots(report, graphs)),
        *((s.value + "s", str(n)) for s, n in counts),
        ("suppressed", str(report.suppressed)),
        ("time taken", f"{report.seconds:.2f} s"),
    ]
    out = ['<section id="summary"><h2>Summary</h2><dl class="counts">']
    out.extend(f'<div class="c-{_e(k.split()[0])}"><dt>{_e(k)}</dt><dd>{_e(v)}</dd></div>' for k, v in cells)
    out.append("</dl>")
    errors = [f for f in report.findings if f.severity is Severity.ERROR and f.suppressed is None]
    if errors:
        out.append('<ul id="headlines">')
        for f in errors[:12]:
            symbols = f.evidence.get("symbols")
            extra = ""
            if isinstance(symbols, (list, tuple)) and symbols:
                shown = ", ".join(str(s) for s in symbols[:12])
                extra = f'<div class="symbols">{len(symbols)} symbols: <code>{_e(shown)}</code></div>'
            out.append(
                f'<li><span class="sev error">error</span> <a class="rule" href="#rule-{_e(f.rule)}">{_e(f.rule)}</a> '
                f'<b>{_e(f.subject)}</b> <span class="file">in {_e(f.file)}</span>{extra}</li>'
            )
        out.append("</ul>")
    if report.files:
        out.append("<details><summary>inputs</summary><ul>")
        out.extend(f"<li>{_e(f.path)} <i>{_e(f.status.value)}</i></li>" for f in report.files)
        out.append("</ul></details>")
    out.append("</section>")
    return out


def _counts(g: LoadGraph) -> str:
    """``"33 objects, 1 missing, 53 plugins named"``: the objects loaded (drawn here: a library whose
    load an earlier graph drew stands for the rest, named), then what is not."""
    kinds = [n.kind for n in g.nodes]
    lazy = kinds.count(NodeKind.PLUGIN)
    missing = kinds.count(NodeKind.MISSING) + sum(1 for n in g.nodes if n.kind is NodeKind.DRIVER and n.path is None)
    parts = [_n(len(kinds) - lazy - missing, "object")]
    elsewhere = sorted({n.shown_in for n in g.nodes if n.shown_in})
    if elsewhere:  # loads sharing parts (output.parts): the rest of this load is drawn with an earlier root's
        parts[0] += f" (the rest drawn in the load of {', '.join(_e(r) for r in elsewhere)})"
    if missing:
        parts.append(f"{missing} not found")
    if lazy:
        parts.append(f"{_n(lazy, 'plugin')} named")
    return ", ".join(parts)


def _loads(graphs: Sequence[LoadGraph]) -> list[str]:
    out = ['<section id="loads"><h2>Loads, per import root</h2>']
    if not graphs:
        out.append("<p>No load was emulated (no import root, or <code>--no-loader</code>).</p>")
    for i, g in enumerate(graphs):
        failing = any(e.failing for e in g.edges)
        out.append(
            f'<article class="load{" fails" if failing else ""}" id="g{i}" data-graph="{i}">'
            f"<h3>{_e(g.root)} <small>[{_e(g.kind)}] ({_e(g.loader)}) — {_counts(g)}"
            f"{', fails to load' if failing else ''}</small></h3>"
            '<div class="toolbar"><button class="fit">fit</button>'
            '<label><input type="checkbox" class="collapse"> collapse by package</label>'
            '<label><input type="checkbox" class="plugins"> lazily loaded plugins</label>'
            '<label><input type="checkbox" class="every"> every edge (also to libraries already loaded)</label>'
            '<span class="legend"><i class="k-root">root</i><i class="k-library">in the inputs</i>'
            '<i class="k-outside">outside the inputs</i><i class="k-missing">missing</i>'
            '<i class="k-driver">GPU driver</i><i class="k-expected">expected provider, not linked</i>'
            '<i class="k-plugin">plugin (dlopen, delay-load)</i>'
            '<i class="k-failing">failing path</i></span></div>'
            '<div class="pane"><svg class="graph" xmlns="http://www.w3.org/2000/svg"></svg>'
            '<aside class="details"><p class="hint">Click a node for what it needs, where it was found '
            "or every place tried, and its findings.</p></aside></div></article>"
        )
    out.append("</section>")
    return out


def _table(report: Report) -> list[str]:
    out = [
        '<section id="findings"><h2>Findings</h2><div class="filters">',
        *(
            f'<select id="f-{k}" aria-label="{k}"><option value="">every {k}</option></select>'
            for k in ("severity", "rule", "file", "package")
        ),
        '<input id="f-text" type="search" placeholder="search text"> <span id="f-count"></span></div>',
        '<table id="findings-table"><thead><tr><th>severity</th><th>rule</th><th>file</th><th>package</th>'
        "<th>subject</th><th>message</th></tr></thead><tbody></tbody></table>",
    ]
    if not report.findings:
        out.append("<p>No findings.</p>")
    out.append("</section>")
    return out


def _rules(report: Report, explanations: Mapping[str, str]) -> list[str]:
    used = sorted({f.rule for f in report.findings})
    out = ['<section id="rules"><h2>Rules</h2>']
    for rule in used:
        out.append(
            f'<details id="rule-{_e(rule)}"><summary>{_e(rule)}</summary>'
            f"<pre>{_e(explanations.get(rule, '(no explanation recorded)'))}</pre></details>"
        )
    out.append("</section>")
    return out


def render(
    report: Report,
    graphs: Sequence[LoadGraph] = (),
    explanations: Mapping[str, str] | None = None,
    color: bool | None = None,
    **_: object,
) -> str:
    """The page, one HTML5 document (``str``); ``graphs`` the loads to draw (``cli.pictures.load_graphs``),
    ``explanations`` each rule's ``explain`` text by id (``linkaudit explain RULE``); ``color`` ignored."""
    del color
    body = [
        *_summary(report, graphs),
        *_loads(graphs),
        *_table(report),
        *_rules(report, explanations or {}),
    ]
    return (
        "\n".join(
            [
                "<!DOCTYPE html>",
                '<html lang="en"><head><meta charset="utf-8">',
                '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
                "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
                "<title>linkaudit report</title>",
                f"<style>{asset('report.css')}</style></head><body>",
                f"<header><h1>linkaudit report</h1><p>{_n(len(report.findings), 'finding')} over "
                f"{_n(len(report.files), 'file')}</p></header><main>",
                *body,
                "</main>",
                f'<script type="application/json" id="linkaudit-data">{_data(report, graphs)}</script>',
                f"<script>{asset('dagre.min.js')}</script>",
                f"<script>{asset('report.js')}</script>",
                "</body></html>",
            ]
        )
        + "\n"
    )
