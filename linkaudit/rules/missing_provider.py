"""``missing-provider``: undefined symbols of a known library family that no DT_NEEDED provides."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from ..context import AuditContext
from ..model import Binary, Binding, Format, Kind
from ..report import Finding, Severity
from .base import Rule, preview
from .data import SymbolFamily, driver_index, family_index, library_stem
from .terms import needed_entry


def bound_imports(binary: Binary, names: list[str]) -> bool:
    """True when ``names`` are imports bound to a library (PE; Mach-O two-level), not flat lookups."""
    wanted = set(names)
    return any(s.version is not None and s.name in wanted for s in binary.symbols.iter_undefined())


def _names_a_file(version: str) -> bool:
    """True for a version named after a library file (``libnvrtc.so.13``), as NVIDIA's version scripts do."""
    return ".so" in version or version.lower().endswith(".dll")


def _expected(fam: SymbolFamily, binary: Binary) -> str:
    """The provider to name in messages: the family's first stem, spelled for the binary's format
    (``libnvrtc.so*``; for PE the first Windows stem, ``nvrtc64_*.dll``)."""
    if binary.format is Format.PE:
        stem = next((p for p in fam.providers if not p.startswith("lib")), fam.providers[0])
        return f"{stem}.dll"
    stem = fam.providers[0]
    if binary.format is Format.MACHO:
        return f"{stem}*.dylib"
    return f"{stem}.so*" if binary.format is Format.ELF else stem


_Missing = tuple[str, list[str], SymbolFamily | None]


def find_missing(binary: Binary, reexports: Mapping[str, tuple[str, ...]] | None = None) -> dict[str, _Missing]:
    """Undefined, non-weak symbols of ``binary`` whose family no DT_NEEDED provides.

    A PE import, and a Mach-O two-level import, names the library it binds to: of a known family,
    that library must be the family's — or, for Mach-O, re-export it (``reexports``: install name
    -> the install names its dylib re-exports, as ``loader.image_binding.reexported_by`` gives).

    Returns:
        family key -> (expected provider, display names ``name@ver``, family or ``None``
        when the family comes from a version naming a file).
    """
    classify = family_index().classify
    needed = binary.needed_names
    stems = {library_stem(n) for n in needed}
    missing: dict[str, _Missing] = {}
    for sym in binary.symbols.iter_undefined():
        bound = sym.version.file if sym.version is not None else None
        names_library = binary.format is Format.PE or (binary.format is Format.MACHO and bound)
        if not sym.name or (sym.binding == Binding.WEAK and not names_library):
            continue  # a weak ELF reference may stay unbound; a weak or delay-load import still names its library
        if names_library:
            # The import names the library it binds to: of a known family, it must be that family's.
            fam = classify(sym.name)
            if fam is None or bound is None or fam.provided_by(bound):
                continue
            if any(fam.provided_by(r) for r in (reexports or {}).get(bound, ())):
                continue  # a Mach-O umbrella re-exporting the family's dylib
            missing.setdefault(fam.name, (_expected(fam, binary), [], fam))[1].append(sym.name)
            continue
        version = sym.version
        if version is not None and _names_a_file(version.name):
            # First evidence: the version names the providing file.
            stem = library_stem(version.name)
            if stem in stems:
                continue
            fam = classify(sym.name)
            if fam is not None and not fam.provided_by(version.name):
                fam = None
            key, expected = (fam.name if fam else stem), version.name
        else:
            fam = classify(sym.name)
            if fam is None or any(fam.provided_by(n) for n in needed):
                continue
            key, expected = fam.name, _expected(fam, binary)
        missing.setdefault(key, (expected, [], fam))[1].append(sym.display_name())
    return missing


def _what_is_missing(binary: Binary, key: str, expected: str, symbols: list[str], fam: SymbolFamily | None) -> str:
    """The finding's first sentence: ``symbols`` (sorted) of family ``fam`` (None: versioned for the
    library ``key``) that nothing provides, expected from ``expected``; for PE and Mach-O imports
    bound to a library that lacks them, the loader's own words when it stops the load."""
    noun = "import" if binary.format in (Format.PE, Format.MACHO) else "undefined symbol"
    count = f"{len(symbols)} {noun}{'s' if len(symbols) != 1 else ''}"
    if binary.format in (Format.PE, Format.MACHO) and fam is not None and bound_imports(binary, symbols):
        importers = sorted(
            {
                sym.version.file
                for sym in binary.symbols.iter_undefined()
                if sym.version is not None and sym.version.file and sym.name in set(symbols)
            }
        )
        if binary.format is Format.PE:
            stop = (
                f'Windows stops the load: "The procedure entry point {symbols[0]} could not be '
                f'located in the dynamic link library {importers[0]}"'
            )
        else:
            stop = f'dyld stops the load: "Symbol not found: _{symbols[0]}, expected in: {importers[0]}"'
        return (
            f"{count} of the {fam.name} family ({fam.description}: {preview(symbols)}) imported from "
            f"{', '.join(importers)}, which does not provide them: expected {expected}. {stop}"
        )
    if fam is not None:
        return (
            f"{count} of the {fam.name} family ({fam.description}: {preview(symbols)}) and no "
            f"{needed_entry(binary.format)} provides them: expected {expected}"
        )
    return (
        f"{count} versioned for {expected} ({preview(symbols)}) and no {needed_entry(binary.format)} is a {key} library"
    )


def _advice(fmt: Format, fam: SymbolFamily | None, linked_drivers: list[str]) -> str:
    """The message's tail ("" when none applies): for a driver family, reach the symbols lazily
    rather than link the driver (in format ``fmt``'s words); else the driver libraries the file
    links instead, which provide none of them."""
    if fam is not None and fam.driver:
        lazily = {
            Format.PE: "do not import the driver's DLL — reach them through cuGetProcAddress, "
            "LoadLibrary/GetProcAddress or a delay-load import",
            Format.MACHO: "do not link the driver's dylib — reach them through cuGetProcAddress or dlopen",
        }.get(fmt, "do not add the DT_NEEDED — reach them through cuGetProcAddress or dlopen")
        return f"; these are driver symbols: the GPU driver provides them, so {lazily}"
    if linked_drivers:
        return (
            f"; the file links {', '.join(linked_drivers)} instead, which provides none of "
            "them (a build system naming the wrong library)"
        )
    return ""


def _unresolved_in(context: AuditContext, binary: Binary, symbols: list[str]) -> list[str]:
    """The import roots in whose load any of ``symbols`` (``name@version``) of ``binary`` binds
    nowhere: the unresolved-symbol consequences this root cause explains (sorted)."""
    linkage = context.linkage
    assert linkage is not None
    names = {s.split("@", 1)[0] for s in symbols}
    return sorted(
        {
            root
            for (root, obj), bounds in linkage.bindings.items()
            if linkage.audited.get(obj) == binary.path
            and any(b.provider is None and b.symbol.name in names for b in bounds)
        }
    )


class MissingProvider(Rule):
    id = "missing-provider"
    severity = Severity.ERROR
    summary = "undefined symbols or imports of a known library family that no needed library (DT_NEEDED, DLL, dylib) of that family provides"
    explain = """\
Every undefined, non-weak symbol must be defined by some library the loader
loads. When a library uses, say, nvrtcCreateProgram but no DT_NEEDED entry is a
libnvrtc, the symbol resolves only by accident (another library happened to load
libnvrtc first into the global scope) or not at all: "undefined symbol:
nvrtcCreateProgram" at import, or "unresolved external symbol" at link time on
Windows. This is under-linking; it often comes together with over-linking (a
wrong library in DT_NEEDED instead of the right one — the PyTorch seed case:
libcuda.so.1 linked where libnvrtc was meant).

The expected provider of a symbol is found from, in order: its symbol version,
when the version names a file (nvrtcCreateProgram@libnvrtc.so.13); membership of
an exact driver API list (the CUDA driver API generated from cuda.h; NVML); the
longest matching name prefix of the family table (nvrtc* -> libnvrtc,
cublasLt* -> libcublasLt, cublas* -> libcublas, cuFile* -> libcufile,
cuda* -> libcudart, ...). Hash-renamed copies made by wheel-repair tools
(libnvrtc-1a2b3c4d.so.12) count as providers. Weak undefined symbols are exempt.

When the family is a driver API (libcuda, NVML), adding the DT_NEEDED is the
wrong fix: reach those symbols through cuGetProcAddress or dlopen.

The family table is data: linkaudit/rules/data/cuda.toml.
"""
    evidence = {
        "family": "family name (nvrtc, cublas, cuda-driver, ... or a library stem from a symbol version)",
        "expected_provider": "what the symbols need: a library stem or glob list",
        "symbols": "the undefined symbols of the family (name@version where versioned)",
        "count": "number of such symbols",
        "needed": "the file's DT_NEEDED entries",
        "driver": "true when only a GPU driver provides the family",
        "linked_driver_libraries": "DT_NEEDED entries that name driver libraries (over-linking context)",
        "unresolved_in": "import roots in whose load these symbols bind nowhere (the unresolved-symbol findings this explains)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        """One finding per family (or versioned library) whose undefined symbols no needed library
        provides, for each file but object files (archive members: the final link resolves them)."""
        drivers = driver_index()
        reexports: dict[str, tuple[str, ...]] = {}
        if any(b.format is Format.MACHO for b in context.binaries):
            from ..loader.image_binding import reexported_by  # the PE / Mach-O binder: not on an ELF-only run

            reexports = reexported_by(context.binaries)
        # copies of one file share their symbol table (``formats.copies``): judged once
        answers: dict[tuple[int, tuple[str, ...], Format], tuple[object, dict[str, _Missing]]] = {}
        for binary in context.binaries:
            if binary.kind is Kind.RELOCATABLE:
                continue  # an object file (an archive member): its symbols are resolved by the final link
            needed = binary.needed_names
            same = (id(binary.symbols), needed, binary.format)
            answer = answers.get(same)
            if answer is None:  # the table is kept with its answer: its id names no other table meanwhile
                answer = answers[same] = (binary.symbols, find_missing(binary, reexports))
            missing = answer[1]
            if not missing:
                continue
            linked_drivers = [n for n in needed if drivers.is_driver(n)]
            for key, (expected, found, fam) in missing.items():
                symbols = sorted(found)
                message = _what_is_missing(binary, key, expected, symbols, fam) + _advice(
                    binary.format, fam, linked_drivers
                )
                evidence: dict[str, object] = {
                    "family": key,
                    "expected_provider": expected,
                    "symbols": symbols,
                    "count": len(symbols),
                    "needed": list(needed),
                    "driver": bool(fam and fam.driver),
                    "linked_driver_libraries": linked_drivers,
                }
                if context.linkage is not None:
                    evidence["unresolved_in"] = _unresolved_in(context, binary, symbols)
                yield self.finding(binary, expected, message, evidence)
