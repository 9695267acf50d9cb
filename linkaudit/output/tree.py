"""Rendering of ``linkaudit tree``: the dependency tree as the loader builds it.

Each object is shown under the object whose DT_NEEDED loaded it first, with the
path it resolved to and why (which object's DT_RPATH or DT_RUNPATH,
LD_LIBRARY_PATH, ld.so.cache, system directory, already loaded); a library that
resolves nowhere is marked with the paths tried.  JSON: ``{"schema":
"linkaudit/1", "roots": [...]}`` (``schema/tree.schema.json``).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..loader.analysis import LinkageAnalysis
from ..loader.closure import Load, LoadedObject
from ..loader.ldso import Resolution, Source
from .parts import Drawn, View
from .shared import SCHEMA_VERSION, text_safe, utf8_tree


def _why(res: Resolution) -> str:
    if res.source is None:
        return ""
    if res.source in (Source.RPATH, Source.RUNPATH) and res.owner:
        return f"{res.source.value} of {res.owner.rsplit('/', 1)[-1]}"
    return res.source.value


#: Who installs a path: the distribution's name, or ``None`` (``packages.installation``).
Owners = Callable[[str], "str | None"]


def _resolution_dict(res: Resolution, verbose: bool, owners: Owners | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": res.name,
        "path": res.path,
        "found": res.found,
        "source": res.source.value if res.source else None,
        "owner": res.owner,
        "error": res.error,
    }
    if owners is not None:
        out["distribution"] = owners(res.path) if res.path else None
    if verbose or not res.found:
        out["attempts"] = [
            {"path": a.path, "source": a.source.value, "owner": a.owner, "outcome": a.outcome.value, "detail": a.detail}
            for a in res.attempts
        ]
    return out


def load_to_dict(
    load: Load, verbose: bool = False, analysis: LinkageAnalysis | None = None, owners: Owners | None = None
) -> dict[str, Any]:
    """One root's load as a JSON-ready dict (``owners``: each resolution's ``distribution`` too)."""
    resolutions = load.resolutions  # merged from the load's parts once, not once per object
    return {
        "root": load.root,
        "kind": load.kind.value,
        "global_scope": list(load.global_scope),
        "local_scope": list(load.local_scope),
        "objects": [
            {
                "path": o.path,
                "parent": o.parent,
                "source": o.source.value,
                "depth": o.depth,
                "soname": o.binary.soname,
                "dlopen_names": list(o.binary.dlopen_names),
                "needed": [
                    _resolution_dict(resolutions[(o.path, n)], verbose, owners)
                    for n in o.binary.needed_names
                    if (o.path, n) in resolutions
                ],
            }
            for o in load.objects
        ],
        "errors": [{"path": p, "message": m} for p, m in load.errors],
        "version_failures": [
            {"object": f.object, "file": f.file, "provider": f.provider, "version": f.version}
            for root, f in (analysis.version_failures if analysis is not None else [])
            if root == load.root
        ],
    }


def render_json(
    analysis: LinkageAnalysis, loads: Sequence[Load], verbose: bool = False, owners: Owners | None = None
) -> str:
    """``{"schema": "linkaudit/1", "system_dirs": [...], "roots": [...]}``."""
    doc = {
        "schema": SCHEMA_VERSION,
        "system_dirs": list(analysis.system_dirs),
        "ld_cache": analysis.cache_path,
        "driverless": analysis.env.driverless,
        "roots": [load_to_dict(ld, verbose, analysis, owners) for ld in loads],
    }
    return json.dumps(utf8_tree(doc), indent=2, ensure_ascii=False) + "\n"


def _attempt_lines(res: Resolution, prefix: str) -> list[str]:
    out = []
    for a in res.attempts:
        owner = f" of {a.owner.rsplit('/', 1)[-1]}" if a.owner else ""
        detail = f" ({a.detail})" if a.detail else ""
        out.append(f"{prefix}    tried {a.path} [{a.source.value}{owner}] {a.outcome.value}{detail}")
    return out


#: Deeper than this, a tree's lines stop moving right: the needs of a library at this depth are drawn
#: in a block of their own after the tree ("lib32.so, continued from depth 32:"), indented afresh.
MAX_DEPTH = 32


@dataclass(slots=True)
class _Walk:
    """One load's walk: what it draws (``parts.View``), what it expanded, what waits for a block of its own."""

    view: View
    verbose: bool
    owners: Owners | None
    lines: list[str]
    expanded: set[str] = field(default_factory=set)
    base: int = 0  # the depth of the block being drawn (0, or where a deep chain continues)
    deferred: deque[tuple[str, int]] = field(default_factory=deque)


def _needs(w: _Walk, path: str) -> list[str]:
    obj = w.view.index.get(path)
    return [n for n in obj.binary.needed_names if (path, n) in w.view.resolutions] if obj else []


def _found_line(w: _Walk, res: Resolution, needed: str, head: str, inner: str, depth: int) -> str | None:
    """The line of a found library; returns the path to expand below it, if any."""
    dist = w.owners(res.path) if w.owners is not None and res.path else None
    owned = f" (installed by {dist})" if dist else ""
    line = f"{head}{needed} => {res.path} [{_why(res)}]{owned}"
    expand = None
    if res.path and res.path not in w.expanded:
        w.expanded.add(res.path)
        if res.path not in w.view.index and w.view.shown_in is not None:
            line += f" (shown above, under {w.view.shown_in})"
        elif depth >= MAX_DEPTH and _needs(w, res.path):
            w.deferred.append((res.path, w.base + depth))
            line += " (its needs: continued below)"
        else:
            expand = res.path
    w.lines.append(line)
    if w.verbose:
        w.lines.extend(_attempt_lines(res, inner))
    return expand


def _walk_from(w: _Walk, start: str, prefix: str, depth: int) -> None:
    """Draw the DT_NEEDED entries of ``start`` (at ``depth``) and, depth first, of what they loaded.

    Iterative pre-order walk (no recursion: a chain of libraries can be long); each
    object is expanded once, later mentions say "already loaded" or point back.
    """
    stack: list[tuple[str, str, int, int]] = [(start, prefix, 0, depth)]
    while stack:
        path, prefix, i, depth = stack.pop()
        needs = _needs(w, path)
        if i >= len(needs):
            continue
        stack.append((path, prefix, i + 1, depth))
        needed = needs[i]
        last = i == len(needs) - 1
        head = prefix + ("└── " if last else "├── ")
        inner = prefix + ("    " if last else "│   ")
        res = w.view.resolutions[(path, needed)]
        if res.found and res.source is Source.LOADED:
            w.lines.append(f"{head}{needed} => {res.path} (already loaded)")
        elif res.found:
            expand = _found_line(w, res, needed, head, inner, depth + 1)
            if expand is not None:
                stack.append((expand, inner, 0, depth + 1))
        elif res.attempts and res.attempts[-1].outcome.value == "driver-absent":
            w.lines.append(f"{head}{needed} => not found (GPU driver library: absent in driverless mode)")
        else:
            w.lines.append(f"{head}{needed} => {'error: ' + res.error if res.error else 'not found'}")
            w.lines.extend(_attempt_lines(res, inner))


def _walk(w: _Walk, start: str, prefix: str) -> None:
    """The tree of ``start``, then a block per library whose needs lie deeper than ``MAX_DEPTH``."""
    w.expanded.add(start)
    _walk_from(w, start, prefix, 0)
    while w.deferred:
        path, w.base = w.deferred.popleft()
        w.lines.append(f"{prefix}{path.rsplit('/', 1)[-1]}, continued from depth {w.base}:")
        _walk_from(w, path, prefix, 0)


def _soft(analysis: LinkageAnalysis, objects: Sequence[LoadedObject]) -> list[tuple[str, str]]:
    """(object path, name) of each library name in .rodata of ``objects`` but the system's own."""
    return [
        (o.path, n)
        for o in objects
        # the system's own (found in the cache or system directories) are not the package's business
        if o.source not in (Source.CACHE, Source.SYSTEM, Source.POLICY)
        and o.path.rsplit("/", 1)[0] not in analysis.system_dirs
        and o.binary.interpreter is None
        and not (o.binary.soname or "").startswith("ld-")
        for n in o.binary.dlopen_names
    ]


def render_text(
    analysis: LinkageAnalysis, loads: Sequence[Load], verbose: bool = False, owners: Owners | None = None
) -> str:
    """The trees, one per root, drawn with box characters; ``owners``: each library found is
    followed by the distribution that installs it.  A library whose load an earlier root's tree
    drew (loads sharing parts, ``output.parts``) is one line "(shown above, under ROOT)"; needs
    deeper than ``MAX_DEPTH`` continue in a block of their own: the text is linear in what is drawn."""
    lines: list[str] = []
    drawn = Drawn()
    failures: dict[str, list[Any]] = {}
    for root, failure in analysis.version_failures:
        failures.setdefault(root, []).append(failure)
    for load in loads:
        if lines:
            lines.append("")
        lines.append(f"{load.root} [{load.kind.value}]")
        if load.global_scope and load.kind.value != "executable":
            names = ", ".join(p.rsplit("/", 1)[-1] for p in load.global_scope)
            lines.append(f"  global scope: {names}")
        view = drawn.view(load)
        start = load.root if load.root in view.index else (load.local_scope or load.global_scope or [""])[0]
        _walk(_Walk(view, verbose, owners, lines), start, "  ")
        soft = _soft(analysis, view.objects)
        if soft:
            lines.append("  soft dependencies (library names in .rodata, for dlopen):")
            lines.extend(f"    {name} (in {path.rsplit('/', 1)[-1]})" for path, name in soft)
        if view.cut is not None and drawn.below_any(view.cut, "soft", _names_any):
            lines.append(f"  soft dependencies of the libraries shown above: listed under {view.shown_in}")
        lines.extend(f"  error: {path}: {message}" for path, message in load.errors)
        lines.extend(
            f"  error: {f.provider}: version `{f.version}' not found (required by {f.object})"
            for f in failures.get(load.root, ())
        )
    return "\n".join(text_safe(line) for line in lines) + "\n"


def _names_any(part: Load) -> bool:
    return any(o.binary.dlopen_names for o in part.own_objects())
