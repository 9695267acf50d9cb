"""``check --verify``: every input read a second time by an independent library (lief), and every
disagreement with our own reading reported.

Our readers are the product (the ELF reader is ours; PE goes through pefile): this is how a user
checks them on their own files.  lief is imported here only — never on the default path: its import
alone costs about half a second, and it reads whole files into memory.

Compared, per format: ELF — DT_NEEDED in order, DT_SONAME, DT_RPATH and DT_RUNPATH entries, and
the names of the defined and of the undefined dynamic symbols; PE — the DLLs imported (plain and
delay-load), the functions imported from each, the DLL name of the export directory, the exports
and their forwarders.  Archive members and formats lief does not read are left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .model import Binary, Format, Kind, NeedKind


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One field on which the two readings of one file differ.

    Attributes:
        path: the binary's path.
        field: what was compared (``"needed"``, ``"undefined symbols"``...).
        ours: our reading, JSON-ready.
        theirs: lief's reading, JSON-ready.
    """

    path: str
    field: str
    ours: Any
    theirs: Any


def _lief() -> Any:
    try:
        import lief  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise ConfigError("--verify reads every file again with lief: pip install lief") from exc
    return lief


def _elf_fields(b: Binary) -> dict[str, Any]:
    return {
        "needed": [n.name for n in b.needed],
        "soname": b.soname,
        "rpath": list(b.rpath),
        "runpath": list(b.runpath),
        "defined symbols": sorted({s.name for s in b.symbols if s.defined and s.name}),
        "undefined symbols": sorted({s.name for s in b.symbols.iter_undefined() if s.name}),
    }


def _lief_elf(x: Any, relocatable: bool) -> dict[str, Any]:
    tags: dict[str, Any] = {}
    for e in x.dynamic_entries:
        tag = str(e.tag).rsplit(".", 1)[-1]
        if tag == "SONAME":
            tags["soname"] = e.name
        elif tag in ("RPATH", "RUNPATH"):
            tags.setdefault(tag.lower(), []).extend(e.paths)
    # An object file (ET_REL) has no dynamic symbols: ours are its .symtab, so compare those.
    symbols = list(x.symtab_symbols if relocatable else x.dynamic_symbols)
    return {
        "needed": list(x.libraries),
        "soname": tags.get("soname"),
        "rpath": tags.get("rpath", []),
        "runpath": tags.get("runpath", []),
        "defined symbols": sorted({s.name for s in symbols if s.shndx != 0 and s.name}),
        "undefined symbols": sorted({s.name for s in symbols if s.shndx == 0 and s.name}),
    }


def _pe_fields(b: Binary) -> dict[str, Any]:
    imports: dict[str, list[str]] = {}
    for sym in b.symbols.iter_undefined():
        imports.setdefault(sym.version.file if sym.version and sym.version.file else "", []).append(sym.name)
    return {
        "imported DLLs": [n.name for n in b.needed if n.kind is NeedKind.PLAIN],
        "delay-load DLLs": [n.name for n in b.needed if n.kind is NeedKind.DELAY_LOAD],
        "imports": {k: sorted(v) for k, v in imports.items()},
        "export DLL name": b.soname,
        "exports": sorted(s.name for s in b.symbols if s.defined),
        "forwarders": sorted(f"{e} -> {t}" for e, t in b.forwarders),
    }


def _entry(e: Any) -> str:
    return str(e.name) if e.name else f"#{e.ordinal}"


def _lief_pe(x: Any) -> dict[str, Any]:
    imports: dict[str, list[str]] = {}
    for table in (x.imports, x.delay_imports):
        for d in table:
            imports.setdefault(d.name, []).extend(_entry(e) for e in d.entries)
    export = x.get_export() if x.has_exports else None
    entries = list(export.entries) if export is not None else []
    return {
        "imported DLLs": [d.name for d in x.imports],
        "delay-load DLLs": [d.name for d in x.delay_imports],
        "imports": {k: sorted(v) for k, v in imports.items()},
        "export DLL name": (export.name or None) if export is not None else None,
        "exports": sorted(_entry(e) for e in entries),
        "forwarders": sorted(
            f"{_entry(e)} -> {e.forward_information.library}.{e.forward_information.function}"
            for e in entries
            if e.is_forwarded
        ),
    }


def verify(binaries: list[Binary] | tuple[Binary, ...], host_path: dict[str, str] | None = None) -> list[Disagreement]:
    """Read each binary again with lief and list every field on which the readings differ.

    Args:
        binaries: the binaries read (archive members are skipped: lief reads whole files).
        host_path: where each binary's file is on this machine, when that differs from its path.

    Returns:
        The disagreements, in input order (empty: the readings agree).

    Raises:
        ConfigError: lief is not installed.
    """
    lief = _lief()
    lief.logging.disable()  # its own warnings on stderr ("no section header") are not findings
    out: list[Disagreement] = []
    for b in binaries:
        if b.member is not None or b.format not in (Format.ELF, Format.PE):
            continue
        parsed = lief.parse((host_path or {}).get(b.path, b.path))
        if parsed is None:
            out.append(Disagreement(b.path, "readable", True, False))
            continue
        if b.format is Format.ELF:
            ours, theirs = _elf_fields(b), _lief_elf(parsed, b.kind is Kind.RELOCATABLE)
        else:
            ours, theirs = _pe_fields(b), _lief_pe(parsed)
        out.extend(Disagreement(b.path, k, ours[k], theirs[k]) for k in ours if ours[k] != theirs[k])
    return out
