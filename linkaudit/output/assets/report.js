// linkaudit check --format html: draws each load with dagre (layout only), pans, zooms, collapses by
// package, shows a node's details, filters the findings table.  Every string from the data is set
// with textContent, never parsed as markup.  Nothing is fetched.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("linkaudit-data").textContent);
  const NS = "http://www.w3.org/2000/svg";
  const PLUGINS_SHOWN = 8; // plugins drawn by default when a load names at most this many
  const EVERY_EDGE = 12; // every edge drawn by default in a load of at most this many nodes
  const views = [];

  function svg(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, text, parent, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = text;
    if (cls) e.className = cls;
    if (parent) parent.appendChild(e);
    return e;
  }

  // The graph as drawn: plugins hidden or not, packages collapsed or not.
  function visible(g, opts) {
    const group = {};
    const nodes = [];
    const byId = {};
    for (const n of g.nodes) {
      if (n.kind === "plugin" && !opts.plugins) continue;
      let id = n.id;
      if (opts.collapse && n.package && n.kind !== "root") {
        id = "pkg:" + n.package;
        if (!byId[id]) {
          byId[id] = { id: id, label: n.package, package: n.package, kind: "package", members: [] };
          nodes.push(byId[id]);
        }
        byId[id].members.push(n);
      } else {
        byId[id] = n;
        nodes.push(n);
      }
      group[n.id] = id;
    }
    const extra = expected(g);
    for (const n of extra.nodes) { byId[n.id] = n; nodes.push(n); group[n.id] = n.id; }
    const edges = [];
    const seen = {};
    for (const e of g.edges.concat(extra.edges)) {
      if (!opts.every && !e.first && !e.failing) continue; // a library already loaded: the tree's edges only
      const s = group[e.source], t = group[e.target];
      if (s === undefined || t === undefined || s === t) continue;
      const key = s + "\u0000" + t;
      if (seen[key]) { seen[key].failing = seen[key].failing || e.failing; continue; }
      seen[key] = { source: s, target: t, kind: e.kind, failing: e.failing, how: e.how };
      edges.push(seen[key]);
    }
    return { nodes: nodes, edges: edges, byId: byId };
  }

  // The library a missing-provider finding expects (not in DT_NEEDED): a node of its own, reached from
  // the object with the undefined symbols by a failing edge that says how many.
  function expected(g) {
    const out = { nodes: [], edges: [] };
    DATA.findings.forEach(function (f, k) {
      if (!f.provider || DATA.graphs[f.graph] !== g || f.suppressed) return;
      const id = "x" + k;
      const family = f.provider.family ? " " + f.provider.family : "";
      out.nodes.push({ id: id, label: f.provider.name, kind: "expected", path: null, package: null,
        tried: [], symbols: f.provider.symbols, finding: f });
      out.edges.push({ source: f.node, target: id, name: f.provider.name, kind: "needed", failing: true,
        how: f.provider.symbols.length + family + " symbols undefined, no DT_NEEDED" });
    });
    return out;
  }

  // The line under a node's name: how many objects (a package collapsed), where its needs are drawn
  // (a library whose load an earlier graph drew), or the package installing it.
  function subOf(n) {
    if (n.members) return n.members.length + (n.members.length === 1 ? " object" : " objects");
    return n.shown_in ? "needs: drawn in the load of " + n.shown_in : n.package || "";
  }

  function layout(v) {
    const lg = new dagre.graphlib.Graph();
    lg.setGraph({ rankdir: "LR", nodesep: 10, ranksep: 70, marginx: 10, marginy: 10 });
    lg.setDefaultEdgeLabel(function () { return {}; });
    for (const n of v.nodes) {
      const sub = subOf(n);
      const w = Math.max(n.label.length, sub.length) * 6.4 + 18;
      lg.setNode(n.id, { width: w, height: sub ? 32 : 22 });
    }
    for (const e of v.edges) {
      // a failing edge's label gets its own place in the layout (it is drawn; the others are tooltips)
      lg.setEdge(e.source, e.target, e.failing ? { width: e.how.length * 5.6 + 6, height: 14, labelpos: "c" } : {});
    }
    dagre.layout(lg);
    return lg;
  }

  function drawEdges(layer, v, lg) {
    for (const e of v.edges) {
      const pts = lg.edge(e.source, e.target).points;
      const d = "M" + pts.map(function (p) { return p.x.toFixed(1) + "," + p.y.toFixed(1); }).join(" L");
      const cls = "edge " + e.kind + (e.failing ? " failing" : "");
      const p = svg("path", { d: d, class: cls, "marker-end": e.failing ? "url(#arrow-red)" : "url(#arrow)" }, layer);
      svg("title", {}, p).textContent = e.how;
      const at = lg.edge(e.source, e.target);
      if (e.failing && at.x !== undefined) {
        const t = svg("text", { x: at.x, y: at.y - 6, class: "elabel", "text-anchor": "middle" }, layer);
        t.textContent = e.how;
      }
    }
  }

  function drawNodes(layer, v, lg, onpath, select) {
    for (const n of v.nodes) {
      const box = lg.node(n.id);
      const g = svg("g", { class: "node k-" + n.kind + (onpath[n.id] ? " onpath" : ""), "data-id": n.id,
        transform: "translate(" + (box.x - box.width / 2) + "," + (box.y - box.height / 2) + ")" }, layer);
      svg("rect", { width: box.width, height: box.height, rx: 5 }, g);
      const t = svg("text", { x: 9, y: 15 }, g);
      t.textContent = n.label;
      const sub = subOf(n);
      if (sub) svg("text", { x: 9, y: 27, class: "pkg" }, g).textContent = sub;
      svg("title", {}, g).textContent = n.path || n.label;
      const errors = errorsAt(n);
      if (errors) {
        svg("circle", { cx: box.width, cy: 0, r: 9, class: "badge" }, g);
        svg("text", { x: box.width, y: 4, class: "badge", "text-anchor": "middle" }, g).textContent = String(errors);
      }
      g.addEventListener("click", function (ev) { ev.stopPropagation(); select(n.id); });
    }
  }

  // How many unsuppressed error findings are about the object(s) a node stands for.
  function errorsAt(n) {
    const paths = {};
    for (const m of n.members || [n]) if (m.path) paths[m.path] = true;
    return DATA.findings.filter(function (f) { return paths[f.file] && f.severity === "error" && !f.suppressed; }).length;
  }

  function defs(root) {
    const d = svg("defs", {}, root);
    for (const [id, color] of [["arrow", "#94a3b8"], ["arrow-red", "#dc2626"]]) {
      const m = svg("marker", { id: id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7,
        orient: "auto-start-reverse" }, d);
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: color }, m);
    }
  }

  function render(view) {
    const root = view.svg;
    while (root.firstChild) root.removeChild(root.firstChild);
    defs(root);
    view.v = visible(view.g, view.opts);
    const lg = layout(view.v);
    view.size = { w: lg.graph().width || 100, h: lg.graph().height || 100 };
    // a small load gets a small pane; a large one the full height, to pan and zoom in
    view.svg.style.height = Math.round(Math.max(180, Math.min(720, view.size.h * 1.3 + 40))) + "px";
    view.layer = svg("g", { class: "viewport" }, root);
    const onpath = {};
    for (const e of view.v.edges) if (e.failing) { onpath[e.source] = true; onpath[e.target] = true; }
    drawEdges(view.layer, view.v, lg);
    drawNodes(view.layer, view.v, lg, onpath, function (id) { showDetails(view, id); });
    fit(view);
  }

  function apply(view) {
    const t = view.t;
    view.layer.setAttribute("transform", "translate(" + t.x + "," + t.y + ") scale(" + t.k + ")");
  }
  function fit(view) {
    const r = view.svg.getBoundingClientRect();
    const k = Math.min(1.4, Math.min((r.width || 800) / view.size.w, (r.height || 440) / view.size.h) * 0.97);
    view.t = { k: k, x: ((r.width || 800) - view.size.w * k) / 2, y: ((r.height || 440) - view.size.h * k) / 2 };
    apply(view);
  }

  function panZoom(view) {
    let drag = null;
    view.svg.addEventListener("pointerdown", function (ev) {
      if (ev.target.closest && ev.target.closest("g.node")) return;
      drag = { x: ev.clientX - view.t.x, y: ev.clientY - view.t.y };
      view.svg.setPointerCapture(ev.pointerId);
    });
    view.svg.addEventListener("pointermove", function (ev) {
      if (!drag) return;
      view.t.x = ev.clientX - drag.x; view.t.y = ev.clientY - drag.y; apply(view);
    });
    view.svg.addEventListener("pointerup", function () { drag = null; });
    view.svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      const r = view.svg.getBoundingClientRect();
      const px = ev.clientX - r.left, py = ev.clientY - r.top;
      const f = Math.exp(-ev.deltaY * 0.0015);
      const k = Math.max(0.1, Math.min(6, view.t.k * f));
      view.t.x = px - (px - view.t.x) * (k / view.t.k); view.t.y = py - (py - view.t.y) * (k / view.t.k);
      view.t.k = k; apply(view);
    }, { passive: false });
  }

  function findingsOf(view, n) {
    if (n.finding) return [n.finding];
    const members = n.members || [n];
    const paths = {}, labels = {};
    for (const m of members) { if (m.path) paths[m.path] = true; labels[m.label] = true; }
    return DATA.findings.filter(function (f) {
      return paths[f.file] || ((f.graph === view.index || f.graph === null) && labels[f.subject] && !n.path);
    });
  }

  function list(parent, title, items) {
    if (!items.length) return;
    html("h4", title, parent);
    const ul = html("ul", null, parent);
    for (const it of items) html("li", it, ul);
  }

  function showDetails(view, id) {
    for (const g of view.svg.querySelectorAll("g.node.selected")) g.classList.remove("selected");
    const g = view.svg.querySelector('g.node[data-id="' + CSS.escape(id) + '"]');
    if (g) g.classList.add("selected");
    const n = view.v.byId[id];
    const box = view.details;
    box.textContent = "";
    html("h4", n.label, box);
    html("div", (n.kind === "package" ? "package " : n.kind) + (n.package ? " · installed by " + n.package : ""), box, "hint");
    if (n.path) html("div", n.path, box);
    if (n.shown_in) html("div", "What it loads is drawn in the load of " + n.shown_in + ", above.", box, "hint");
    const mine = {};
    for (const m of n.members || [n]) mine[m.id] = true;
    const all = view.g.edges.concat(expected(view.g).edges);
    const ins = all.filter(function (e) { return mine[e.target] && !mine[e.source]; });
    const outs = all.filter(function (e) { return mine[e.source] && !mine[e.target]; });
    const lab = function (i) { const m = view.g.nodes.find(function (x) { return x.id === i; }); return m ? m.label : i; };
    list(box, "Found", ins.map(function (e) { return e.name + " — " + e.how + " (needed by " + lab(e.source) + ")"; }));
    list(box, "Needs", outs.map(function (e) { return e.name + " → " + e.how; }));
    list(box, "Every place tried", n.tried || []);
    list(box, "Undefined symbols it would provide", n.symbols || []);
    if (n.members) list(box, "Objects", n.members.map(function (m) { return m.label; }));
    list(box, "Findings", findingsOf(view, n).map(function (f) { return f.severity + " [" + f.rule + "] " + f.subject + ": " + f.message; }));
    view.selected = id;
  }

  function initView(article) {
    const index = Number(article.dataset.graph);
    const g = DATA.graphs[index];
    const plugins = g.nodes.filter(function (n) { return n.kind === "plugin"; }).length;
    const view = { index: index, g: g, svg: article.querySelector("svg.graph"), details: article.querySelector(".details"),
      opts: { collapse: false, plugins: plugins <= PLUGINS_SHOWN, every: g.nodes.length <= EVERY_EDGE } };
    article.querySelector("input.every").checked = view.opts.every;
    article.querySelector("input.every").addEventListener("change", function (ev) { view.opts.every = ev.target.checked; render(view); });
    article.querySelector("input.plugins").checked = view.opts.plugins;
    article.querySelector("input.plugins").parentNode.append(" (" + plugins + ")");
    article.querySelector("input.plugins").addEventListener("change", function (ev) { view.opts.plugins = ev.target.checked; render(view); });
    article.querySelector("input.collapse").addEventListener("change", function (ev) { view.opts.collapse = ev.target.checked; render(view); });
    article.querySelector("button.fit").addEventListener("click", function () { fit(view); });
    panZoom(view);
    render(view);
    views[index] = view;
  }

  function packageOf(f) {
    if (f.graph === null) return "";
    const n = DATA.graphs[f.graph].nodes.find(function (m) { return m.id === f.node; });
    return (n && n.package) || "";
  }

  function options(id, values) {
    const sel = document.getElementById(id);
    for (const v of Array.from(new Set(values)).filter(Boolean).sort()) html("option", v, sel).value = v;
    return sel;
  }

  function goTo(f) {
    const view = views[f.graph];
    if (!view) return;
    if (!view.v.byId[f.node]) { view.opts.collapse = false; render(view); }
    showDetails(view, f.node);
    view.svg.scrollIntoView({ block: "center" });
  }

  function row(tbody, f) {
    const tr = html("tr", null, tbody, f.suppressed ? "sup" : "");
    html("span", f.severity, html("td", null, tr), "sev " + f.severity);
    const a = html("a", f.rule, html("td", null, tr), "rule");
    a.href = "#rule-" + f.rule;
    const file = html("td", null, tr, "file");
    if (f.graph !== null) {
      const link = html("a", f.file, file, "node-link");
      link.href = "#g" + f.graph;
      link.addEventListener("click", function (ev) { ev.preventDefault(); goTo(f); });
    } else file.textContent = f.file;
    html("td", f.pkg, tr);
    html("td", f.subject, tr);
    html("td", f.message + (f.suppressed ? " (suppressed: " + f.suppressed + ")" : ""), tr, "msg");
    f.tr = tr;
    f.text = [f.rule, f.file, f.subject, f.message, f.pkg].join(" ").toLowerCase();
  }

  function initTable() {
    const tbody = document.querySelector("#findings-table tbody");
    for (const f of DATA.findings) { f.pkg = packageOf(f); row(tbody, f); }
    const pick = {
      severity: options("f-severity", DATA.findings.map(function (f) { return f.severity; })),
      rule: options("f-rule", DATA.findings.map(function (f) { return f.rule; })),
      file: options("f-file", DATA.findings.map(function (f) { return f.file; })),
      package: options("f-package", DATA.findings.map(function (f) { return f.pkg; })),
    };
    const text = document.getElementById("f-text");
    const count = document.getElementById("f-count");
    function filter() {
      const q = text.value.toLowerCase();
      let shown = 0;
      for (const f of DATA.findings) {
        const ok = (!pick.severity.value || f.severity === pick.severity.value) && (!pick.rule.value || f.rule === pick.rule.value) &&
          (!pick.file.value || f.file === pick.file.value) && (!pick.package.value || f.pkg === pick.package.value) &&
          (!q || f.text.indexOf(q) >= 0);
        f.tr.hidden = !ok;
        if (ok) shown++;
      }
      count.textContent = shown + " of " + DATA.findings.length + " findings";
    }
    for (const k in pick) pick[k].addEventListener("change", filter);
    text.addEventListener("input", filter);
    filter();
  }

  for (const article of document.querySelectorAll("article.load")) initView(article);
  initTable();
  document.body.dataset.ready = "1";
})();
