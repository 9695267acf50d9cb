"""``check --verify``: every input read a second time by an independent library (lief), and every
disagreement with our own reading reported.

Our readers are the product (the ELF reader is ours; PE headers go through pefile, its import and
export directories through ``formats.pe_directories``; Mach-O load commands through macholib, its
symbol tables through ``formats.macho_linkedit``): this is how a user checks them on their own
files.  lief is imported here only — never on the default path: its import
alone costs about half a second, and it reads whole files into memory.

Compared, per format: ELF — DT_NEEDED in order, DT_SONAME, DT_RPATH and DT_RUNPATH entries, and
the names of the defined and of the undefined dynamic symbols; PE — the DLLs imported (plain and
delay-load), the functions imported from each, the DLL name of the export directory, the exports
and their forwarders; Mach-O, per slice of a universal file — the machine, the install name
(``LC_ID_DYLIB``), the needed dylibs with their kind (weak, re-export, upward, lazy) in load-command
order, the ``LC_RPATH`` entries in order, the minimum OS and SDK, the imports with the dylib each
binds to (the two-level library ordinal; none for flat lookup) and whether weak, the exports (weak
definitions marked) and the export trie's re-exports.  Archive members and formats lief does not
read are left out.

Where lief's own API reads a Mach-O file differently from what dyld does, lief's lower-level
readings are used instead (the evidence, on the macOS torch wheel, is in
``tests/formats/test_macho_lief.py``): imports are what lief decodes from the bind opcodes or the
chained fixups (its ``imported_symbols`` also lists unbound ``nlist`` entries, and for a symbol also
in the weak-bind table, which names no library, it keeps that entry); exports come from its export
trie reader (its ``exported_symbols`` leaves out what only the trie names), the ``nlist`` table
only where a slice has no trie.
"""

from __future__ import annotations

from typing import Any

from .errors import ConfigError
from .model import Binary, Binding, Format, Kind, NeedKind
from .records import dataclass


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
        raise ConfigError(
            "--verify reads every file again with lief: pip install lief (or native-linkage-auditor[verify])"
        ) from exc
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


def _macho_fields(b: Binary) -> dict[str, Any]:
    def weak(flag: bool) -> str:
        return " [weak]" if flag else ""

    return {
        "machine": b.machine,
        "install name": b.soname,
        "needed": [f"{n.name} ({n.kind.value})" for n in b.needed],
        "rpath": list(b.rpath),
        "min os": b.min_os,
        "min os command": b.min_os_command,
        "sdk": b.sdk,
        "imports": sorted(
            {
                f"{s.name} -> {s.version.file if s.version and s.version.file else '(flat lookup)'}"
                f"{weak(s.binding is Binding.WEAK)}"
                for s in b.symbols.iter_undefined()
            }
        ),
        "exports": sorted(f"{s.name}{weak(s.binding is Binding.WEAK)}" for s in b.symbols if s.defined),
        "re-exports": sorted(f"{e} -> {t}" for e, t in b.forwarders),
    }


#: lief's ``CPU_TYPE`` names -> Apple's architecture names (``mach/machine.h``, ``mach-o/arch.h``).
_LIEF_MACHINES = {
    "X86_64": "x86_64",
    "ARM64": "arm64",
    "X86": "i386",
    "ARM": "arm",
    "ARM64_32": "arm64_32",
    "POWERPC": "ppc",
    "POWERPC64": "ppc64",
}
#: (Apple's name of the CPU type, ``cpusubtype`` without its capability byte) -> the subtype's own name.
_LIEF_SUBTYPES = {("x86_64", 8): "x86_64h", ("arm64", 2): "arm64e"}


def _lief_arch(x: Any) -> str:
    """The architecture of lief's Mach-O binary ``x``, spelled as Apple spells it."""
    name = _enum_name(x.header.cpu_type)
    base = _LIEF_MACHINES.get(name, name)
    return _LIEF_SUBTYPES.get((base, int(x.header.cpu_subtype) & 0x00FFFFFF), base)


#: Library ordinals that name no dylib (``mach-o/loader.h``): self, weak lookup, flat lookup, main
#: executable — as 8-bit values, and as lief gives bind opcodes' special ordinals (signed).
_SPECIAL_ORDINALS = frozenset({0, 0xFD, 0xFE, 0xFF, -1, -2, -3})
_N_WEAK_REF, _N_WEAK_DEF = 0x40, 0x80


def _enum_name(value: Any) -> str:
    return str(value).rsplit(".", 1)[-1]


def _lief_version(parts: Any) -> str:
    major, minor, patch = list(parts)
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def _no_underscore(name: str) -> str:
    return name[1:] if name.startswith("_") else name


def _lief_macho(x: Any) -> dict[str, Any]:
    """lief's reading of one Mach-O slice ``x``, in the fields of :func:`_macho_fields`."""
    needs = {"LOAD_DYLIB", "LOAD_WEAK_DYLIB", "REEXPORT_DYLIB", "LOAD_UPWARD_DYLIB", "LAZY_LOAD_DYLIB"}
    kinds = {"LOAD_DYLIB": "plain", "LOAD_WEAK_DYLIB": "weak", "REEXPORT_DYLIB": "reexport"}
    kinds |= {"LOAD_UPWARD_DYLIB": "upward", "LAZY_LOAD_DYLIB": "lazy"}
    commands = [(c.name, _enum_name(c.command)) for c in x.libraries]
    needed = [name for name, kind in commands if kind in needs]
    min_os = sdk = command = None
    if x.has_build_version:
        min_os, sdk = _lief_version(x.build_version.minos), _lief_version(x.build_version.sdk)
        command = "LC_BUILD_VERSION"
    elif x.has_version_min and _enum_name(x.version_min.command) == "VERSION_MIN_MACOSX":
        min_os, sdk = _lief_version(x.version_min.version), _lief_version(x.version_min.sdk)
        command = "LC_VERSION_MIN_MACOSX"
    exports, reexports = _lief_macho_exports(x)
    return {
        "machine": _lief_arch(x),
        "install name": next((name for name, kind in commands if kind == "ID_DYLIB"), None),
        "needed": [f"{name} ({kinds[kind]})" for name, kind in commands if kind in needs],
        "rpath": [r.path for r in x.rpaths],
        "min os": min_os,
        "min os command": command,
        "sdk": sdk,
        "imports": _lief_macho_imports(x, needed),
        "exports": sorted(exports),
        "re-exports": sorted(reexports),
    }


def _weak_mark(flag: bool) -> str:
    """`` [weak]`` after a weak import or definition, as the fields are compared; else nothing."""
    return " [weak]" if flag else ""


def _lief_macho_imports(x: Any, needed: list[str]) -> list[str]:
    """lief's imports of slice ``x``, sorted: ``name -> library[ [weak]]``, the library by its
    ordinal into ``needed`` (the dylib load commands), or ``(flat lookup)`` without two-level
    namespace. Taken from the binds (bind opcodes or chained fixups; not the weak-bind
    coalescing table), else from the symbol table."""
    twolevel = "TWOLEVEL" in {_enum_name(f) for f in x.header.flags_list}

    def library(ordinal: int) -> str:
        if not twolevel or ordinal in _SPECIAL_ORDINALS:
            return "(flat lookup)"
        return needed[ordinal - 1] if ordinal <= len(needed) else f"#ordinal {ordinal}"

    bound: dict[str, tuple[int, bool]] = {}
    for bi in x.bindings:  # bind opcodes or chained fixups; not the weak-bind (coalescing) table
        if bi.has_symbol and _enum_name(getattr(bi, "binding_class", "")) != "WEAK":
            bound.setdefault(bi.symbol.name, (bi.library_ordinal, bi.weak_import))
    if x.has_dyld_chained_fixups:
        entries = [(name, ordinal, is_weak) for name, (ordinal, is_weak) in bound.items()]
    else:
        entries = [
            (s.name, *bound.get(s.name, (s.library_ordinal, bool(s.description & _N_WEAK_REF))))
            for s in x.imported_symbols
        ]
    return sorted({f"{_no_underscore(n)} -> {library(o)}{_weak_mark(w)}" for n, o, w in entries})


def _lief_macho_exports(x: Any) -> tuple[list[str], list[str]]:
    """lief's exports of slice ``x`` (``name[ [weak]]``) and re-exports (``name -> library:target``),
    unsorted: from the export trie (LC_DYLD_EXPORTS_TRIE or LC_DYLD_INFO's) when there is one,
    else from the symbol table."""
    if x.has_dyld_exports_trie:
        trie: list[Any] | None = list(x.dyld_exports_trie.exports)
    elif x.has_dyld_info and x.dyld_info.export_info[1]:
        trie = list(x.dyld_info.exports)
    else:
        trie = None
    exports = [
        f"{_no_underscore(s.name)}{_weak_mark(bool(s.description & _N_WEAK_DEF))}"
        for s in (x.exported_symbols if trie is None else ())
    ]
    reexports = []
    for info in trie or ():
        name, flags = info.symbol.name, {_enum_name(f) for f in info.flags_list}
        if "REEXPORT" in flags:
            target = info.alias.name if info.alias is not None and info.alias.name else name
            lib = info.alias_library.name if info.alias_library is not None else "?"
            reexports.append(f"{_no_underscore(name)} -> {lib}:{_no_underscore(target)}")
        else:
            exports.append(f"{_no_underscore(name)}{_weak_mark('WEAK_DEFINITION' in flags)}")
    return exports, reexports


def verify(binaries: list[Binary] | tuple[Binary, ...], host_path: dict[str, str] | None = None) -> list[Disagreement]:
    """Read each binary again with lief and list every field on which the readings differ.

    Args:
        binaries: the binaries read (archive members are skipped: lief reads whole files).  The
            slices of a universal Mach-O file (``member``: the slice's machine) are compared with
            lief's slices of that file, in file order, when the first of them comes.
        host_path: where each binary's file is on this machine, when that differs from its path.

    Returns:
        The disagreements, in input order (empty: the readings agree): ``path`` is the file, or
        for a slice of a universal file its ``display_path`` (``fat.dylib(arm64)``); a file lief
        cannot read (or raises on) is field ``"readable"`` (theirs: ``False``, or lief's error);
        Mach-O slices lief counts differently, ``"slices"`` (both readings: the machines).

    Raises:
        ConfigError: lief is not installed.
    """
    lief = _lief()
    lief.logging.disable()  # its own warnings on stderr ("no section header") are not findings
    out: list[Disagreement] = []
    slices: dict[str, list[Binary]] = {}  # Mach-O: a universal file's slices (``member``: the slice)
    for b in binaries:
        if b.format is Format.MACHO:
            slices.setdefault(b.path, []).append(b)
    for b in binaries:
        host = (host_path or {}).get(b.path, b.path)
        try:
            if b.format is Format.MACHO:
                if b is slices[b.path][0]:
                    out.extend(_verify_macho(lief, slices[b.path], host))
                continue
            if b.member is not None or b.format not in (Format.ELF, Format.PE):
                continue
            out.extend(_verify_one(lief, b, host))
        except Exception as exc:  # lief raising on a hostile file is lief failing to read it
            out.append(Disagreement(b.path, "readable", True, f"lief failed: {type(exc).__name__}: {exc}"))
    return out


def _verify_one(lief: Any, b: Binary, host: str) -> list[Disagreement]:
    """One ELF or PE file against lief's reading of it."""
    parsed = lief.parse(host)
    if parsed is None:
        return [Disagreement(b.path, "readable", True, False)]
    if b.format is Format.ELF:
        ours, theirs = _elf_fields(b), _lief_elf(parsed, b.kind is Kind.RELOCATABLE)
    else:
        ours, theirs = _pe_fields(b), _lief_pe(parsed)
    return [Disagreement(b.path, k, ours[k], theirs[k]) for k in ours if ours[k] != theirs[k]]


def _verify_macho(lief: Any, ours_slices: list[Binary], host: str) -> list[Disagreement]:
    """One Mach-O file's slices (ours, in file order) against lief's, field by field."""
    path = ours_slices[0].path
    fat = lief.MachO.parse(host)
    if fat is None:
        return [Disagreement(path, "readable", True, False)]
    theirs_slices = [fat.at(i) for i in range(len(fat))]
    if len(theirs_slices) != len(ours_slices):
        machines = [_lief_arch(x) for x in theirs_slices]
        return [Disagreement(path, "slices", [b.machine for b in ours_slices], machines)]
    out: list[Disagreement] = []
    for b, x in zip(ours_slices, theirs_slices, strict=True):
        ours, theirs = _macho_fields(b), _lief_macho(x)
        out.extend(Disagreement(b.display_path, k, ours[k], theirs[k]) for k in ours if ours[k] != theirs[k])
    return out
