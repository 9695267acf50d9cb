"""Rendering of the image loads of ``linkaudit tree`` — PE inputs in the Windows search order, Mach-O
inputs as dyld loads them (``loader.images``): each image under the one that imported it first,
with where the search found it and why, or every place tried and why each was rejected.

JSON: one dict per load, the same shape for both loaders, under ``windows_roots`` and ``dyld_roots``
(``schema/tree.schema.json``, ``$defs/image_load``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..loader.images import ImageAttempt, ImageLoad, ImageLoader, ImageOutcome, ImageResolution
from . import text_safe

#: How each loader's heading names its search, and what "present in the system" means there.
_HEADINGS = {ImageLoader.WINDOWS: "Windows search order", ImageLoader.DYLD: "dyld"}
_SYSTEM = {ImageLoader.WINDOWS: "Windows: present", ImageLoader.DYLD: "dyld shared cache: present"}


def image_load_to_dict(load: ImageLoad) -> dict[str, Any]:
    """One load as a JSON-ready dict: ``{"root", "kind", "loader", "machine", "objects", "imports":
    [{"requester", "name", "path", "source", "system", "optional", "attempts": [{"path", "source",
    "outcome", "detail"}]}]}``."""
    return {
        "root": load.root,
        "kind": load.kind,
        "loader": load.loader.value,
        "machine": load.machine,
        "objects": list(load.objects),
        "imports": [
            {
                "requester": requester,
                "name": name,
                "path": res.path,
                "source": res.source,
                "system": res.system,
                "optional": res.optional,
                "attempts": [
                    {"path": a.path, "source": a.source, "outcome": str(a.outcome), "detail": a.detail}
                    for a in res.attempts
                ],
            }
            for (requester, name), res in load.resolutions.items()
        ],
    }


def _tried(attempts: Sequence[ImageAttempt], indent: str, with_outcome: bool) -> list[str]:
    out = []
    for a in attempts:
        why = f" {a.outcome}" if with_outcome or a.outcome != ImageOutcome.MISSING else ""
        detail = f" ({a.detail})" if a.detail else ""
        out.append(f"{indent}    tried {a.path} [{a.source}]{why}{detail}")
    return out


def _line(load: ImageLoad, res: ImageResolution, expanded: set[str]) -> tuple[str, bool]:
    """The text after the branch for one import, and whether its image is drawn below it."""
    if res.system:
        return f"{res.name} ({_SYSTEM[load.loader]})", False
    if res.path is None:
        return f"{res.name} => {'not found (weak: allowed)' if res.optional else 'not found'}", False
    if res.source == "loaded" or res.path in expanded:
        return f"{res.name} => {res.path} (already loaded)", False
    return f"{res.name} => {res.path} [{res.source}]", True


def render_image_loads_text(loads: Sequence[ImageLoad], verbose: bool = False) -> str:
    """The loads as trees, one block per root, headed by the loader (and, for dyld, the machine:
    each slice of a universal root is loaded by itself).  Iterative: chains may be long."""
    lines: list[str] = []
    for load in loads:
        if not load.resolutions:
            continue  # an image that imports nothing: nothing to draw
        heading = _HEADINGS[load.loader] + (f", {load.machine}" if load.loader is ImageLoader.DYLD else "")
        lines.append(f"{load.root} [{load.kind}] ({heading})")
        children: dict[str, list[tuple[str, str]]] = {}
        for requester, name in load.resolutions:
            children.setdefault(requester, []).append((requester, name))
        expanded = {load.root}
        # Pre-order, iteratively: (image, prefix, index of its next import).
        stack: list[tuple[str, str, int]] = [(load.root, "  ", 0)]
        while stack:
            image, prefix, i = stack.pop()
            entries = children.get(image, [])
            if i >= len(entries):
                continue
            stack.append((image, prefix, i + 1))
            res = load.resolutions[entries[i]]
            last = i == len(entries) - 1
            inner = prefix + ("    " if last else "│   ")
            text, descend = _line(load, res, expanded)
            lines.append(f"{prefix}{'└── ' if last else '├── '}{text}")
            if res.path is None and not res.system:
                lines.extend(_tried(res.attempts, inner, False))
            elif verbose or any(a.outcome == ImageOutcome.WRONG_MACHINE for a in res.attempts):
                lines.extend(_tried(res.attempts, inner, True))
            if descend and res.path is not None:
                expanded.add(res.path)
                stack.append((res.path, inner, 0))
        lines.append("")
    return "\n".join(text_safe(line) for line in lines)
