"""Rendering of the image loads of ``linkaudit tree`` — PE inputs in the Windows search order, Mach-O
inputs as dyld loads them (``loader.images``): each image under the one that imported it first,
with where the search found it and why, or every place tried and why each was rejected.

JSON: one dict per load, the same shape for both loaders, under ``windows_roots`` and ``dyld_roots``
(``schema/tree.schema.json``, ``$defs/image_load``).  With ``tree --bind``, each load's imports bound
(``loader.image_binding``) and counted: ``bind_summary`` (JSON ``bind``, ``$defs/image_bind``) and
``render_image_bind_text``, the counterpart of the ELF loads' bind line.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..loader.image_binding import ImportBinding, ImportOutcome
from ..loader.images import ImageAttempt, ImageLoad, ImageLoader, ImageOutcome, ImageResolution
from ..loader.python_dlls import python_dll
from .shared import text_safe

#: Outcomes whose import binds nowhere (``NOT_JUDGED`` and ``SYSTEM``: the exports are unknown).
_UNRESOLVED = (ImportOutcome.NOT_EXPORTED, ImportOutcome.LIBRARY_NOT_FOUND, ImportOutcome.FLAT_UNRESOLVED)
#: At most this many unresolved imports are listed per load in text (JSON lists them all).
MAX_UNRESOLVED = 20

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
        dll = python_dll(res.name) if load.loader is ImageLoader.WINDOWS else None
        if dll is not None:  # present only where that Python runs the module (python-dll-version)
            only = "" if dll.version[1] is None else " only"
            return f"{res.name} (beside python.exe: {dll.builds()}{only})", False
        return f"{res.name} ({_SYSTEM[load.loader]})", False
    if res.path is None:
        return f"{res.name} => {'not found (weak: allowed)' if res.optional else 'not found'}", False
    if res.source == "loaded" or res.path in expanded:
        return f"{res.name} => {res.path} (already loaded)", False
    return f"{res.name} => {res.path} [{res.source}]", True


def _heading(load: ImageLoad) -> str:
    """How a load's heading names its loader (for dyld, with the machine: each slice of a universal
    root is loaded by itself)."""
    return _HEADINGS[load.loader] + (f", {load.machine}" if load.loader is ImageLoader.DYLD else "")


def render_image_loads_text(loads: Sequence[ImageLoad], verbose: bool = False) -> str:
    """The loads as trees, one block per root, headed by the loader (and, for dyld, the machine:
    each slice of a universal root is loaded by itself).  Iterative: chains may be long."""
    lines: list[str] = []
    for load in loads:
        if not load.resolutions:
            continue  # an image that imports nothing: nothing to draw
        lines.append(f"{load.root} [{load.kind}] ({_heading(load)})")
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


def _counts(bindings: Sequence[ImportBinding]) -> dict[str, int]:
    unresolved = [b for b in bindings if b.outcome in _UNRESOLVED]
    return {
        "imports": len(bindings),
        "bound": sum(1 for b in bindings if b.outcome is ImportOutcome.BOUND),
        "unresolved": sum(1 for b in unresolved if not b.weak),
        "weak_unresolved": sum(1 for b in unresolved if b.weak),
        "not_judged": sum(1 for b in bindings if b.outcome in (ImportOutcome.SYSTEM, ImportOutcome.NOT_JUDGED)),
        "flat": sum(1 for b in bindings if b.flat),
    }


def bind_summary(load: ImageLoad, bindings: Sequence[ImportBinding]) -> dict[str, Any]:
    """The bind counts of one load, JSON-ready: ``{"imports", "bound", "unresolved", "weak_unresolved",
    "not_judged", "flat", "images": [{"path", "imports", "bound", ...}], "unresolved_imports":
    [{"requester", "symbol", "library", "outcome", "weak", "reason"}]}``.

    ``unresolved`` counts imports that bind nowhere (not exported, library not found, a flat lookup no
    image exports), weak ones apart; ``not_judged`` those bound in a system library (Windows', the dyld
    shared cache) or one whose exports are unknown; ``flat`` the Mach-O flat lookups, whatever became
    of them.  ``images``: the same counts per image of the load that imports anything, in load order."""
    per_image: dict[str, list[ImportBinding]] = {}
    for b in bindings:
        per_image.setdefault(b.importer, []).append(b)
    return {
        **_counts(bindings),
        "images": [{"path": p, **_counts(per_image[p])} for p in load.objects if p in per_image],
        "unresolved_imports": [
            {
                "requester": b.importer,
                "symbol": b.symbol,
                "library": b.library,
                "outcome": b.outcome.value,
                "weak": b.weak,
                "reason": b.reason,
            }
            for b in bindings
            if b.outcome in _UNRESOLVED
        ],
    }


def render_image_bind_text(load: ImageLoad, bindings: Sequence[ImportBinding]) -> str:
    """The bind counts of one load as text, as ``tree --bind`` prints ELF loads': the load's line,
    one line per image that imports anything, then the strong unresolved imports (at most
    ``MAX_UNRESOLVED``), each with why.  Ends with a newline."""
    summary = bind_summary(load, bindings)
    image = load.images.get(load.root)
    root = image.display_path if image is not None and image.member else load.root

    def n(count: int, word: str) -> str:
        return f"{count} {word}{'' if count == 1 else 's'}"

    def rest(c: dict[str, Any], every: bool) -> str:
        parts = [f"{c['unresolved']} unresolved", f"{c['weak_unresolved']} weak unresolved"]
        parts.append(f"{c['not_judged']} not judged" + (" (system libraries, unknown exports)" if every else ""))
        if c["flat"]:
            parts.append(f"{c['flat']} by flat lookup")
        return ", ".join(p for p in parts if every or not p.startswith("0 "))

    lines = [
        f"{root}: {n(summary['imports'], 'import')} bound over {n(len(load.objects), 'image')} "
        f"({_heading(load)}), {summary['bound']} bound, {rest(summary, True)}"
    ]
    for i in summary["images"]:
        more = rest(i, False)
        lines.append(
            f"  {i['path'].rsplit('/', 1)[-1]}: {n(i['imports'], 'import')}, {i['bound']} bound"
            + (f", {more}" if more else "")
        )
    strong = [u for u in summary["unresolved_imports"] if not u["weak"]]
    for u in strong[:MAX_UNRESOLVED]:
        source = f"from {u['library']}" if u["library"] else "flat lookup"
        lines.append(f"  unresolved: {u['symbol']} (in {u['requester'].rsplit('/', 1)[-1]}, {source}): {u['reason']}")
    if len(strong) > MAX_UNRESOLVED:
        lines.append(f"  … (+{len(strong) - MAX_UNRESOLVED} more; --format json lists the load)")
    return "\n".join(text_safe(line) for line in lines) + "\n"
