"""Rendering of the Windows loads of ``linkaudit tree`` (PE inputs): each DLL under the image that
imported it first, with where the search found it and why, or every place tried."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..loader.images import ImageLoad
from . import text_safe


def windows_load_to_dict(load: ImageLoad) -> dict[str, Any]:
    """One Windows load as a JSON-ready dict: root, kind, and every import resolution."""
    return {
        "root": load.root,
        "kind": load.kind,
        "objects": list(load.objects),
        "imports": [
            {
                "requester": requester,
                "name": name,
                "path": res.path,
                "source": res.source,
                "system": res.system,
                "attempts": [{"path": a.path, "source": a.source, "outcome": a.outcome} for a in res.attempts],
            }
            for (requester, name), res in load.resolutions.items()
        ],
    }


def render_windows_text(loads: Sequence[ImageLoad], verbose: bool = False) -> str:
    """The loads as trees, one block per root (iterative: chains of DLLs may be long)."""
    lines: list[str] = []
    for load in loads:
        if not load.resolutions:
            continue  # an image that imports nothing: nothing to draw
        lines.append(f"{load.root} [{load.kind}] (Windows search order)")
        children: dict[str, list[tuple[str, str]]] = {}
        for (requester, name), _res in load.resolutions.items():
            children.setdefault(requester, []).append((requester, name))
        expanded = {load.root}
        stack: list[tuple[str, str]] = [(load.root, "  ")]
        while stack:
            image, prefix = stack.pop()
            entries = children.get(image, [])
            pending: list[tuple[str, str]] = []
            for i, key in enumerate(entries):
                res = load.resolutions[key]
                last = i == len(entries) - 1
                branch = "└── " if last else "├── "
                if res.system:
                    lines.append(f"{prefix}{branch}{res.name} (Windows: present)")
                elif res.path is None:
                    lines.append(f"{prefix}{branch}{res.name} => not found")
                    lines.extend(
                        f"{prefix}{'    ' if last else '│   '}    tried {a.path} [{a.source}]" for a in res.attempts
                    )
                elif res.source == "loaded" or res.path in expanded:
                    lines.append(f"{prefix}{branch}{res.name} => {res.path} (already loaded)")
                else:
                    lines.append(f"{prefix}{branch}{res.name} => {res.path} [{res.source}]")
                    if verbose:
                        lines.extend(
                            f"{prefix}{'    ' if last else '│   '}    tried {a.path} [{a.source}] {a.outcome}"
                            for a in res.attempts
                        )
                    expanded.add(res.path)
                    pending.append((res.path, prefix + ("    " if last else "│   ")))
            stack.extend(reversed(pending))
        lines.append("")
    return "\n".join(text_safe(line) for line in lines)
