"""Rendering of ``linkaudit tree``: the dependency tree as the loader builds it.

Each object is shown under the object whose DT_NEEDED loaded it first, with the
path it resolved to and why (which object's DT_RPATH or DT_RUNPATH,
LD_LIBRARY_PATH, ld.so.cache, system directory, already loaded); a library that
resolves nowhere is marked with the paths tried.  JSON: ``{"schema":
"linkaudit/1", "roots": [...]}`` (``schema/tree.schema.json``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ..loader.analysis import LinkageAnalysis
from ..loader.closure import Load
from ..loader.ldso import Resolution, Source
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
                    _resolution_dict(load.resolutions[(o.path, n)], verbose, owners)
                    for n in o.binary.needed_names
                    if (o.path, n) in load.resolutions
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


def _walk(load: Load, start: str, prefix: str, verbose: bool, lines: list[str], owners: Owners | None = None) -> None:
    """Draw the DT_NEEDED entries of ``start`` and, depth first, of what they loaded.

    Iterative pre-order walk (no recursion: a chain of libraries can be long); each
    object is expanded once, later mentions say "already loaded" or point back.
    """
    expanded = {start}
    needs_of: dict[str, list[str]] = {}
    stack: list[tuple[str, str, int]] = [(start, prefix, 0)]
    while stack:
        path, prefix, i = stack.pop()
        needs = needs_of.get(path)
        if needs is None:
            obj = load.object(path)
            needs = [n for n in obj.binary.needed_names if (path, n) in load.resolutions] if obj else []
            needs_of[path] = needs
        if i >= len(needs):
            continue
        stack.append((path, prefix, i + 1))
        needed = needs[i]
        last = i == len(needs) - 1
        branch = "└── " if last else "├── "
        inner = prefix + ("    " if last else "│   ")
        res = load.resolutions[(path, needed)]
        if res.found and res.source is Source.LOADED:
            lines.append(f"{prefix}{branch}{needed} => {res.path} (already loaded)")
        elif res.found:
            dist = owners(res.path) if owners is not None and res.path else None
            owned = f" (installed by {dist})" if dist else ""
            lines.append(f"{prefix}{branch}{needed} => {res.path} [{_why(res)}]{owned}")
            if verbose:
                lines.extend(_attempt_lines(res, inner))
            if res.path and res.path not in expanded:
                expanded.add(res.path)
                stack.append((res.path, inner, 0))
        elif res.attempts and res.attempts[-1].outcome.value == "driver-absent":
            lines.append(f"{prefix}{branch}{needed} => not found (GPU driver library: absent in driverless mode)")
        else:
            lines.append(f"{prefix}{branch}{needed} => {'error: ' + res.error if res.error else 'not found'}")
            lines.extend(_attempt_lines(res, inner))


def render_text(
    analysis: LinkageAnalysis, loads: Sequence[Load], verbose: bool = False, owners: Owners | None = None
) -> str:
    """The trees, one per root, drawn with box characters; ``owners``: each library found is
    followed by the distribution that installs it."""
    lines: list[str] = []
    for load in loads:
        if lines:
            lines.append("")
        lines.append(f"{load.root} [{load.kind.value}]")
        if load.global_scope and load.kind.value != "executable":
            names = ", ".join(p.rsplit("/", 1)[-1] for p in load.global_scope)
            lines.append(f"  global scope: {names}")
        start = load.root if load.object(load.root) else (load.local_scope or load.global_scope or [""])[0]
        _walk(load, start, "  ", verbose, lines, owners)
        soft = [
            (o.path, n)
            for o in load.objects
            # the system's own (found in the cache or system directories) are not the package's business
            if o.source not in (Source.CACHE, Source.SYSTEM, Source.POLICY)
            and o.path.rsplit("/", 1)[0] not in analysis.system_dirs
            and o.binary.interpreter is None
            and not (o.binary.soname or "").startswith("ld-")
            for n in o.binary.dlopen_names
        ]
        if soft:
            lines.append("  soft dependencies (library names in .rodata, for dlopen):")
            lines.extend(f"    {name} (in {path.rsplit('/', 1)[-1]})" for path, name in soft)
        for path, message in load.errors:
            lines.append(f"  error: {path}: {message}")
        for root, failure in analysis.version_failures:
            if root == load.root:
                lines.append(
                    f"  error: {failure.provider}: version `{failure.version}' not found (required by {failure.object})"
                )
    return "\n".join(text_safe(line) for line in lines) + "\n"
