"""Rendering of ``linkaudit show``: the parsed linkage of binaries, as text or JSON.

The JSON shape is ``schema/show.schema.json``: ``{"schema": "linkaudit/1",
"binaries": [...], "errors": [...]}``, one object per ``Binary`` and one per
input that could not be read.  Text escapes bytes that are not UTF-8 and
control characters in every name (``text_safe``); JSON is valid UTF-8
(``utf8_safe``).  The symbol listing follows ``readelf -W --dyn-syms``
(binutils): Num, Value, Size, Type, Bind, Vis, Ndx, Name (with ``@``/``@@``
version as ``nm -D`` writes it); DT_FLAGS and DT_FLAGS_1 bits are named as
``readelf -d`` names them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..errors import InputError
from ..model import (
    DF_1_NOW,
    DF_BIND_NOW,
    DT_FLAGS_1_NAMES,
    DT_FLAGS_NAMES,
    Binary,
    Binding,
    Format,
    Kind,
    NeedKind,
    Symbol,
    SymbolType,
    flag_names,
)
from .shared import SCHEMA_VERSION, text_safe, utf8_tree

#: readelf's names of symbol types and bindings (binutils readelf.c get_symbol_type / get_symbol_binding).
_TYPE_NAMES: dict[int, str] = {
    SymbolType.NOTYPE: "NOTYPE",
    SymbolType.OBJECT: "OBJECT",
    SymbolType.FUNC: "FUNC",
    SymbolType.SECTION: "SECTION",
    SymbolType.FILE: "FILE",
    SymbolType.COMMON: "COMMON",
    SymbolType.TLS: "TLS",
    SymbolType.IFUNC: "IFUNC",
}
_BIND_NAMES: dict[int, str] = {
    Binding.LOCAL: "LOCAL",
    Binding.GLOBAL: "GLOBAL",
    Binding.WEAK: "WEAK",
    Binding.GNU_UNIQUE: "UNIQUE",
}
SHN_ABS, SHN_COMMON = 0xFFF1, 0xFFF2


def _ndx(section: int) -> str:
    """st_shndx as readelf prints it: UND, ABS, COM, PRC[..]/OS [..]/RSV[..] for reserved values, else the number."""
    if section == 0:
        return "UND"
    if section == SHN_ABS:
        return "ABS"
    if section == SHN_COMMON:
        return "COM"
    if 0xFF00 <= section <= 0xFF1F:
        return f"PRC[{section:#06x}]"
    if 0xFF20 <= section <= 0xFF3F:
        return f"OS [{section:#06x}]"
    if section >= 0xFF00:
        return f"RSV[{section:#06x}]"
    return str(section)


def _image_symbol_lines(b: Binary) -> list[str]:
    """A PE or Mach-O file's imports and exports: no ELF binding, type or section to show — each
    import with the library it names (or ``flat lookup``), each export with its address (an RVA for
    PE), a forwarder or re-export with its target."""
    width = 16 if (b.bits or 64) == 64 else 8
    forwards = dict(b.forwarders)
    shown = [s for s in b.symbols if not (s.defined and s.name in forwards)]  # a PE forwarder: below
    imports = sum(1 for s in shown if not s.defined)
    lines = [f"  {imports} imports, {len(shown) - imports} exports, {len(forwards)} forwarded or re-exported"]
    lines.append(f"     Num: {'Kind':<12} {'Address':<{width}} Name")
    num = 0
    for s in shown:
        num += 1
        if s.defined:
            kind, where = ("export" if not s.weak else "weak export"), f"{s.value:0{width}x}"
            name = s.name
        else:
            kind, where = ("import" if not s.weak else "weak import"), " " * width
            name = f"{s.name} (from {s.version.file})" if s.version is not None else f"{s.name} (flat lookup)"
        lines.append(f"  {num:6d}: {kind:<12} {where} {text_safe(name)}")
    for export, target in b.forwarders:
        num += 1
        lines.append(f"  {num:6d}: {'forwarder':<12} {' ' * width} {text_safe(f'{export} -> {target}')}")
    return lines


def _symbol_lines(b: Binary) -> list[str]:
    """The dynamic symbols in ``readelf -W --dyn-syms`` columns (entry 0, the null symbol, left out)."""
    if b.format not in (Format.ELF, Format.COFF):
        return _image_symbol_lines(b)
    wide = (b.bits or 64) == 64
    header = (
        "   Num:    Value          Size Type    Bind   Vis      Ndx Name"
        if wide
        else ("   Num:    Value  Size Type    Bind   Vis      Ndx Name")
    )
    width = 16 if wide else 8
    if b.format is Format.COFF:  # a COFF object's external symbols (section numbers 1-based; UND: section 0)
        lines = [f"  external symbols ({len(b.symbols)})", "  " + header]
    else:
        lines = [f"  symbol table ({len(b.symbols)} entries after the null entry 0)", "  " + header]
    for num, s in enumerate(b.symbols, start=1):
        type_name = _TYPE_NAMES.get(int(s.type), f"<unknown>: {int(s.type)}")
        bind_name = _BIND_NAMES.get(int(s.binding), f"<unknown>: {int(s.binding)}")
        name = s.display_name()
        lines.append(
            f"  {num:6d}: {s.value:0{width}x} {s.size:5d} {type_name:<7} {bind_name:<6} "
            f"{s.visibility.name:<7} {_ndx(s.section):>4} {text_safe(name)}"
        )
    return lines


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
    """One binary's linkage as a JSON-ready dict (``symbols`` adds the full symbol list; strings valid UTF-8)."""
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
        "flags_names": flag_names(b.flags, DT_FLAGS_NAMES),
        "flags_1_names": flag_names(b.flags_1, DT_FLAGS_1_NAMES),
        "bind_now": b.bind_now,
        "dlopen_names": list(b.dlopen_names),
        "forwarders": [{"export": e, "to": t} for e, t in b.forwarders],
        "min_os": b.min_os,
        "min_os_command": b.min_os_command,
        "sdk": b.sdk,
        "link_directives": list(b.link_directives),
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
    result: dict[str, Any] = utf8_tree(out)
    return result


def error_to_dict(error: InputError) -> dict[str, Any]:
    """An input that could not be read, as ``{"path", "reason", "offset"}`` (strings valid UTF-8)."""
    out: dict[str, Any] = utf8_tree({"path": error.path, "reason": error.reason, "offset": error.offset})
    return out


def render_json(
    binaries: Sequence[Binary],
    symbols: bool = False,
    errors: Sequence[InputError] = (),
    skipped: Sequence[tuple[str, str]] = (),
) -> str:
    """``{"schema": "linkaudit/1", "binaries": [...], "errors": [...], "skipped": [...]}`` as an indented JSON document.

    ``skipped`` is (path, reason) per input of a format not read yet; the key is left out when there are none.
    """
    doc: dict[str, Any] = {
        "schema": SCHEMA_VERSION,
        "binaries": [binary_to_dict(b, symbols) for b in binaries],
        "errors": [error_to_dict(e) for e in errors],
    }
    if skipped:
        doc["skipped"] = utf8_tree([{"path": p, "reason": r} for p, r in skipped])
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render_text(binaries: Sequence[Binary], symbols: bool = False) -> str:
    """A readable summary per binary, in the spirit of ``readelf -d`` and ``readelf -V`` (names escaped: ``text_safe``)."""
    lines: list[str] = []
    for b in binaries:
        if lines:
            lines.append("")
        lines.extend(text_safe(line) for line in _binary_lines(b))
        if symbols:
            lines.extend(_symbol_lines(b))
    return "\n".join(lines) + "\n" if lines else ""


def _coff_lines(b: Binary) -> list[str]:
    """The COFF part of a summary: an import member's DLL and the symbols it defines; an object's
    external symbols and its ``.drectve`` directives."""
    if b.kind is Kind.IMPORT_LIBRARY:
        names = " ".join(s.name for s in b.symbols.iter_defined())
        return [f"  DLL          {b.soname or '-'}", f"  defines      {names}"]
    lines = [f"  externals    {b.symbols.defined_count} defined, {b.symbols.undefined_count} undefined"]
    if b.link_directives:
        lines.append(f"  directives   {b.link_directives[0]}")
        lines.extend("               " + d for d in b.link_directives[1:])
    return lines


def _header(b: Binary) -> str:
    """The ``format`` line's value: container, class or bits, machine, and per format what
    tells more (Mach-O's minimum macOS and SDK, ELF's byte order and OS/ABI)."""
    if b.format is Format.PE:
        return f"PE32{'+' if b.bits == 64 else ''}, {b.machine}"
    if b.format is Format.MACHO:
        return f"Mach-O {b.bits}-bit, {b.machine}" + (f", minimum macOS {b.min_os} (SDK {b.sdk})" if b.min_os else "")
    if b.format is Format.COFF:
        what = "short import member" if b.kind is Kind.IMPORT_LIBRARY else "object"
        return f"COFF {what}, {b.machine}"
    bits = f"ELF{b.bits}" if b.bits else b.format.value
    return f"{bits} {b.endian.value}-endian, {b.machine}, OS/ABI {b.os_abi}"


def _dependency_lines(b: Binary) -> list[str]:
    """The own name, needed libraries (with their kind when not plain), rpath and runpath lines,
    in the field's own terms per format: SONAME/DT_NEEDED, install name/dylibs/LC_RPATH, DLL
    name/DLLs."""
    soname, needed, rpath = {
        Format.MACHO: ("install name", "dylibs", "LC_RPATH"),
        Format.PE: ("DLL name", "DLLs", "rpath"),
    }.get(b.format, ("soname", "needed", "rpath"))
    lines = [f"  {soname:<12} {b.soname or '-'}"]
    if b.needed:
        shown = [n.name + ("" if n.kind is NeedKind.PLAIN else f" ({n.kind.value})") for n in b.needed]
        lines.append(f"  {needed:<12} " + shown[0])
        lines.extend("               " + n for n in shown[1:])
    else:
        lines.append(f"  {needed:<12} -")
    if b.rpath and b.format is Format.MACHO:  # one LC_RPATH command per entry, duplicates shown
        lines.append(f"  {rpath:<12} {b.rpath[0]}")
        lines.extend("               " + entry for entry in b.rpath[1:])
    elif b.rpath:
        lines.append(f"  {rpath:<12} " + ":".join(b.rpath))
    if b.runpath:
        lines.append("  runpath      " + ":".join(b.runpath))
    return lines


def _flag_names(b: Binary) -> list[str]:
    """The dynamic flags set, each word with its names (``DT_FLAGS=0x8 (BIND_NOW)``), and
    ``DT_BIND_NOW`` when that tag alone asks for immediate binding."""
    flags = []
    if b.flags:
        flags.append(f"DT_FLAGS={b.flags:#x} ({' '.join(flag_names(b.flags, DT_FLAGS_NAMES))})")
    if b.flags_1:
        flags.append(f"DT_FLAGS_1={b.flags_1:#x} ({' '.join(flag_names(b.flags_1, DT_FLAGS_1_NAMES))})")
    if b.bind_now and not (b.flags & DF_BIND_NOW or b.flags_1 & DF_1_NOW):
        flags.append("DT_BIND_NOW")
    return flags


def _binary_lines(b: Binary) -> list[str]:
    """The summary lines of one binary, unescaped."""
    lines = [b.display_path, f"  format       {_header(b)}", f"  kind         {b.kind.value}"]
    if b.interpreter:
        lines.append(f"  interpreter  {b.interpreter}")
    if b.format is Format.ELF:
        lines.append(f"  libc         {b.libc.value}")
    if b.format is Format.COFF:
        return lines + _coff_lines(b)
    lines.extend(_dependency_lines(b))
    flags = _flag_names(b)
    if flags:
        lines.append("  flags        " + " ".join(flags))
    lines.append(f"  symbols      {b.symbols.defined_count} defined, {b.symbols.undefined_count} undefined")
    if b.dlopen_names:
        lines.append(f"  dlopen names {', '.join(b.dlopen_names)}  (soft dependencies: library names in .rodata)")
    for need in b.version_needs:
        names = ", ".join(v.name + (" (weak)" if v.weak else "") for v in need.versions)
        lines.append(f"  versions     {need.file}: {names}")
    defs = [d.name for d in b.version_definitions if not d.base]
    if defs:
        lines.append(f"  defines      {', '.join(defs)}")
    if b.format in (Format.PE, Format.MACHO):
        per_dll: dict[str, int] = {}
        for sym in b.symbols.iter_undefined():
            if sym.version is not None:
                per_dll[sym.version.name] = per_dll.get(sym.version.name, 0) + 1
        for dll, count in per_dll.items():
            lines.append(f"  imports      {dll}: {count} function{'s' if count != 1 else ''}")
    for export, target in b.forwarders:
        lines.append(f"  forwards     {export} -> {target}")
    return lines
