"""Rendering of ``linkaudit show``: the parsed linkage of binaries, as text or JSON.

The JSON shape is ``schema/show.schema.json``: ``{"schema": "linkaudit/1",
"binaries": [...]}``, one object per ``Binary``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..model import Binary, Symbol
from . import SCHEMA_VERSION


def _symbol(sym: Symbol) -> dict[str, Any]:
    return {
        "name": sym.name,
        "defined": sym.defined,
        "binding": sym.binding.name.lower() if hasattr(sym.binding, "name") else int(sym.binding),
        "type": sym.type.name.lower() if hasattr(sym.type, "name") else int(sym.type),
        "visibility": sym.visibility.name.lower(),
        "value": sym.value,
        "size": sym.size,
        "version": sym.version.name if sym.version else None,
        "version_file": sym.version.file if sym.version else None,
        "version_hidden": sym.version_hidden,
    }


def binary_to_dict(b: Binary, symbols: bool = False) -> dict[str, Any]:
    """One binary's linkage as a JSON-ready dict (``symbols`` adds the full symbol list)."""
    out: dict[str, Any] = {
        "path": b.display_path,
        "format": b.format.value,
        "kind": b.kind.value,
        "machine": b.machine,
        "bits": b.bits,
        "endian": b.endian.value,
        "os_abi": b.os_abi,
        "interpreter": b.interpreter,
        "libc": b.libc.value,
        "soname": b.soname,
        "needed": [{"name": n.name, "kind": n.kind.value} for n in b.needed],
        "rpath": list(b.rpath),
        "runpath": list(b.runpath),
        "flags": b.flags,
        "flags_1": b.flags_1,
        "bind_now": b.bind_now,
        "defined_symbols": b.symbols.defined_count,
        "undefined_symbols": b.symbols.undefined_count,
        "version_needs": [
            {
                "file": n.file,
                "versions": [{"name": v.name, "flags": v.flags, "weak": v.weak, "index": v.index} for v in n.versions],
            }
            for n in b.version_needs
        ],
        "version_definitions": [
            {"name": d.name, "index": d.index, "flags": d.flags, "base": d.base, "parents": list(d.parents)}
            for d in b.version_definitions
        ],
    }
    if symbols:
        out["symbols"] = [_symbol(s) for s in b.symbols]
    return out


def render_json(binaries: Sequence[Binary], symbols: bool = False) -> str:
    """``{"schema": "linkaudit/1", "binaries": [...]}`` as an indented JSON document."""
    doc = {"schema": SCHEMA_VERSION, "binaries": [binary_to_dict(b, symbols) for b in binaries]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_text(binaries: Sequence[Binary], symbols: bool = False) -> str:
    """A readable summary per binary, in the spirit of ``readelf -d`` and ``readelf -V``."""
    lines: list[str] = []
    for b in binaries:
        if lines:
            lines.append("")
        lines.append(b.display_path)
        bits = f"ELF{b.bits}" if b.bits else b.format.value
        lines.append(f"  format       {bits} {b.endian.value}-endian, {b.machine}, OS/ABI {b.os_abi}")
        lines.append(f"  kind         {b.kind.value}")
        if b.interpreter:
            lines.append(f"  interpreter  {b.interpreter}")
        lines.append(f"  libc         {b.libc.value}")
        lines.append(f"  soname       {b.soname or '-'}")
        if b.needed:
            lines.append("  needed       " + b.needed[0].name)
            lines.extend("               " + n.name for n in b.needed[1:])
        else:
            lines.append("  needed       -")
        if b.rpath:
            lines.append("  rpath        " + ":".join(b.rpath))
        if b.runpath:
            lines.append("  runpath      " + ":".join(b.runpath))
        flags = []
        if b.bind_now:
            flags.append("BIND_NOW")
        if b.flags:
            flags.append(f"DT_FLAGS={b.flags:#x}")
        if b.flags_1:
            flags.append(f"DT_FLAGS_1={b.flags_1:#x}")
        if flags:
            lines.append("  flags        " + " ".join(flags))
        lines.append(f"  symbols      {b.symbols.defined_count} defined, {b.symbols.undefined_count} undefined")
        for need in b.version_needs:
            names = ", ".join(v.name + (" (weak)" if v.weak else "") for v in need.versions)
            lines.append(f"  versions     {need.file}: {names}")
        defs = [d.name for d in b.version_definitions if not d.base]
        if defs:
            lines.append(f"  defines      {', '.join(defs)}")
        if symbols:
            lines.append("  symbol table")
            for s in b.symbols:
                flag = "U" if not s.defined else ("W" if s.weak else "T" if s.type == 2 else "D")
                lines.append(f"    {flag} {s.display_name()}")
    return "\n".join(lines) + "\n"
