"""``why SYMBOL`` for a symbol nothing uses: the objects of each load that define (export) it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..loader.image_binding import ImageBinder
from ..loader.images import ImageLoad, ImageLoader
from ..model import Binary


def _wanted(target: str) -> tuple[str, str | None]:
    """The symbol name and version ``target`` names: ``name``, ``name@VER`` or ``name@@VER``."""
    name, _, version = target.partition("@")
    return name, version.lstrip("@") or None


def elf_definitions(analysis: Any, target: str) -> list[dict[str, Any]]:
    """For each ELF load holding an object that defines symbol ``target`` (a definition ld.so may
    bind to: ``SymbolTable.definitions``), those objects in load order with their versions, and
    the one a lookup binds to first: from the global scope when one of them is in it, else from
    the root (global scope, then the root's search list).  Loads with the same definers in the
    same order are one entry, naming the first root and how many more."""
    name, version = _wanted(target)
    defining: dict[str, list[str | None]] = {}
    for part in analysis.parts():  # each object read once
        for o in part.part.own_objects():
            if o.path in defining:
                continue
            defs = o.binary.symbols.definitions().get(name, ())
            versions = [d.version for d in defs if version is None or d.version == version]
            if versions:
                defining[o.path] = versions
    if not defining:
        return []
    groups: dict[tuple[tuple[str, ...], str | None, bool], dict[str, Any]] = {}
    for load in analysis.loads:
        order = [p for p in load.distinct() if p in defining]
        if not order:
            continue
        in_global = [p for p in load.global_scope if p in defining]
        first = in_global[0] if in_global else next((p for p in load.scope_for(load.root) if p in defining), None)
        key = (tuple(order), first, bool(in_global))
        group = groups.get(key)
        if group is not None:
            group["more_roots"] += 1
            continue
        groups[key] = {
            "root": load.root,
            "kind": load.kind.value,
            "more_roots": 0,
            "definitions": [{"path": p, "versions": defining[p], "binds_first": p == first} for p in order],
            "from": "global scope" if in_global else "root",
        }
    return list(groups.values())


def image_definitions(images: list[ImageLoad], binaries: Sequence[Binary], target: str) -> list[dict[str, Any]]:
    """For each PE and Mach-O load holding an image that exports ``target`` (a Mach-O name with or
    without its leading underscore), those images in load order, the first the one a flat lookup
    binds to."""
    binder: ImageBinder | None = None
    out: list[dict[str, Any]] = []
    for load in images:
        binder = binder or ImageBinder(binaries, images)
        names = [target]
        if load.loader is ImageLoader.DYLD and target.startswith("_"):
            names.append(target[1:])
        found: list[str] = []
        for n in names:
            found.extend(p for p in binder.exporters(load, n) if p not in found)
        if found:
            out.append(
                {
                    "root": load.root,
                    "kind": load.kind,
                    "more_roots": 0,
                    "definitions": [
                        {"path": p, "versions": [None], "binds_first": i == 0} for i, p in enumerate(found)
                    ],
                    "from": "flat lookup",
                }
            )
    return out


def definition_lines(target: str, entry: dict[str, Any]) -> list[str]:
    """The text of one entry of ``elf_definitions`` / ``image_definitions``: where ``target`` is
    defined in that load, used by nothing; with several definers, each in load order and the one
    the loader binds first."""
    defs = entry["definitions"]
    more = f" (and {entry['more_roots']} more roots loading the same)" if entry["more_roots"] else ""
    if len(defs) == 1:
        return [f"{entry['root']}{more}: {target} defined in {_where(defs[0])}, used by nothing in this load"]
    lookup = {"global scope": "the global scope", "root": "the root", "flat lookup": "a flat lookup"}[entry["from"]]
    lines = [f"{entry['root']}{more}: {target} used by nothing in this load; defined in {len(defs)} objects:"]
    for d in defs:
        first = f" (a lookup from {lookup} binds here first)" if d["binds_first"] else ""
        lines.append(f"    defined in {_where(d)}{first}")
    return lines


def _where(d: dict[str, Any]) -> str:
    """``path`` with its versions when versioned (``libfoo.so (FOO_1.0)``)."""
    versions = [v for v in d["versions"] if v]
    path: str = d["path"]
    return path + (f" ({', '.join(versions)})" if versions else "")
