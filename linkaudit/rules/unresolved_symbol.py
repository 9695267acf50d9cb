"""``unresolved-symbol``: an undefined symbol that binds nowhere in its lookup scope."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from ..context import AuditContext
from ..loader.analysis import LinkageAnalysis
from ..loader.closure import RootKind
from ..model import Binary, Format
from ..report import Finding, Severity
from .base import Rule, preview
from .data import driver_api, driver_libraries
from .missing_provider import find_missing

#: Weak references every GCC-built object carries for optional runtime hooks
#: (crtstuff.c: the transactional-memory clone table, gprof, GCJ); never findings.
TOOLCHAIN_HOOKS = frozenset(
    {"__gmon_start__", "_ITM_deregisterTMCloneTable", "_ITM_registerTMCloneTable", "_Jv_RegisterClasses"}
)
#: Itanium C++ ABI thread_local initialisation functions (``_ZTH<var>``): referenced
#: weakly, absent when the variable needs no dynamic initialisation. Never findings.
TLS_INIT_PREFIX = "_ZTH"


def _explained(binary: Binary, driverless: bool) -> set[str]:
    """Symbols another finding reports as the root cause: missing-provider's families and,
    in driverless mode, the exports of the GPU-driver libraries the file links (driver-link)."""
    names = {name.split("@", 1)[0] for _e, found, _f in find_missing(binary).values() for name in found}
    if driverless:
        for lib in driver_libraries():
            if lib.api is not None and any(lib.matches(n) for n in binary.needed_names):
                names |= driver_api(lib.api).symbols
    return names


def failed_needs(linkage: LinkageAnalysis) -> dict[tuple[str, str], set[str]]:
    """(root, object path) -> the object's DT_NEEDED names that resolved nowhere in that load, for
    the objects bound (``linkage.bindings``); each part of a load read once."""
    out: dict[tuple[str, str], set[str]] = {}
    by_root = {ld.root: ld for ld in linkage.loads}
    failed_in: dict[int, dict[str, set[str]]] = {}  # id(part) -> requester -> names found nowhere
    for part in linkage.parts():
        for (requester, needed), res in part.part.own_resolutions().items():
            if not res.found:
                failed_in.setdefault(id(part.part), {}).setdefault(requester, set()).add(needed)
    for root, obj in linkage.bindings:
        load = by_root.get(root)
        for piece, _hops in load.iter_parts() if load is not None else ():
            names = failed_in.get(id(piece), {}).get(obj)
            if names:
                out.setdefault((root, obj), set()).update(names)
            if piece.has_own(obj):
                break  # the part holding the object holds its resolutions
    return out


def stopped_roots(linkage: LinkageAnalysis) -> set[str]:
    """Roots whose load stops: an error, or a DT_NEEDED found nowhere or not usable (each part once)."""
    stops: dict[int, bool] = {}
    for own in sorted((p.part for p in linkage.parts()), key=lambda part: part.height):  # bottom up
        below = own.below
        stops[id(own)] = (below is not None and stops.get(id(below), False)) or any(
            not res.found or res.error for res in own.own_resolutions().values()
        )
    return {ld.root for ld in linkage.loads if ld.errors or stops.get(id(ld), False)}


def _unbound(linkage: LinkageAnalysis, by_path: dict[str, Binary]) -> dict[tuple[str, bool], dict[str, list[str]]]:
    """(audited file, weak) -> {symbol display name: [roots in whose load it binds nowhere]}, in
    binding order, leaving out what another finding reports as the cause: a stopped load, a
    missing provider family or driver export (:func:`_explained`), a library found nowhere, a
    missing symbol version, and the toolchain's optional hooks."""
    explained: dict[str, set[str]] = {}
    grouped: dict[tuple[str, bool], dict[str, list[str]]] = {}
    # A load that stops — a candidate that is no usable ELF object, or a DT_NEEDED found nowhere
    # (ld.so fails the dlopen before it relocates anything) — binds nothing: library-not-found
    # reports the cause, and the user never meets these symbols until it is fixed.
    stopped = stopped_roots(linkage)
    failed = failed_needs(linkage)
    # (root, object) -> versions version-not-found reports: their references bind nowhere as a consequence.
    missing_versions: dict[tuple[str, str], set[str]] = {}
    for root, failure in linkage.version_failures:
        missing_versions.setdefault((root, failure.object), set()).add(failure.version)
    for (root, obj), bounds in linkage.bindings.items():
        if root in stopped:
            continue  # the load stops with an error first (library-not-found reports it)
        file = linkage.audited.get(obj, obj)
        if file not in explained:
            binary = by_path.get(file)
            explained[file] = _explained(binary, linkage.env.driverless) if binary is not None else set()
        missing_files = failed.get((root, obj), set())
        for b in bounds:
            if b.provider is not None or b.symbol.name in explained[file]:
                continue
            if b.symbol.version is not None and b.symbol.version.file in missing_files:
                continue  # its library was not found: library-not-found reports it, with these symbols
            if b.symbol.version is not None and b.symbol.version.name in missing_versions.get((root, obj), ()):
                continue  # its version is missing: version-not-found reports it, with these symbols
            if b.symbol.name in TOOLCHAIN_HOOKS or (b.symbol.weak and b.symbol.name.startswith(TLS_INIT_PREFIX)):
                continue
            roots = grouped.setdefault((file, b.symbol.weak), {}).setdefault(b.symbol.display_name(), [])
            if root not in roots:
                roots.append(root)
    return grouped


def _missing_needed(linkage: LinkageAnalysis) -> dict[str, set[str]]:
    """Audited file -> its DT_NEEDED names found nowhere, in some load (a likely provider)."""
    missing: dict[str, set[str]] = {}
    for part in linkage.parts():
        for (req, needed), res in part.part.own_resolutions().items():
            if not res.found and req in linkage.audited:
                missing.setdefault(linkage.audited[req], set()).add(needed)
    return missing


def _strong_message(
    file: str,
    count: str,
    names: list[str],
    roots: list[str],
    kinds: dict[str, RootKind],
    loaders: dict[str, str],
    missing_libs: list[str],
) -> str:
    """The error's message for non-weak ``names`` of ``file`` that bind nowhere in the loads of
    ``roots``: what the user meets (musl's relocation error, Python's ImportError, or a lazy
    binding's failure at first call) and the missing libraries that may provide them."""
    lazy_only = all(kinds[r] is RootKind.EXECUTABLE for r in roots)
    verb = "binds" if len(names) == 1 else "bind"
    message = f"{count} {verb} nowhere in the load scope: {preview(names)}"
    if any(loaders[r] == "musl" for r in roots):
        from ..loader.musl import musl_relocation_error  # loaded already: a musl load ran

        first = names[0].split("@", 1)[0]
        message += f" — {'ImportError: ' if kinds[roots[0]] is RootKind.PYTHON_IMPORT else ''}"
        message += musl_relocation_error(file, first)
    elif any(kinds[r] is RootKind.PYTHON_IMPORT for r in roots):
        message += f" — ImportError: undefined symbol: {names[0].split('@', 1)[0]}"
    elif lazy_only:
        message += " — a function fails when first called (at load time under BIND_NOW)"
    if missing_libs:
        message += f"; {', '.join(missing_libs)} could not be found and may be their provider"
    return message


#: The APIs a host program defines for the plugins it loads, by their names' prefixes: perl's for
#: its XS modules (``perlapi``: ``Perl_*``, ``PL_*`` variables; ``auto/*/*.so``), the debugger's
#: ``proc_service`` for glibc's ``libthread_db`` (``<proc_service.h>``: ``ps_*``).  An object whose
#: every unbound strong symbol is one of them binds them in the host, not in its DT_NEEDED.
HOST_APIS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("perl's API", ("Perl_", "PL_", "perl_")),
    ("the debugger's proc_service interface", ("ps_",)),
)


def host_api(names: list[str]) -> str | None:
    """The host API (``HOST_APIS``) every name in ``names`` belongs to, or ``None``."""
    for what, prefixes in HOST_APIS:
        if names and all(n.split("@", 1)[0].startswith(prefixes) for n in names):
            return what
    return None


class UnresolvedSymbol(Rule):
    id = "unresolved-symbol"
    needs_loader = True
    severity = Severity.ERROR
    summary = "an undefined symbol that binds nowhere in its lookup scope (note when weak)"
    explain = """\
Every undefined symbol of an audited object is bound the way glibc's
elf/dl-lookup.c binds it: searched scope by scope, object by object, in load
order — for a Python extension module first the global scope (the interpreter,
which provides the Py*/_Py* C API, its libraries, and objects opened with
RTLD_GLOBAL), then the module's own breadth-first search list. A versioned
reference needs a definition of that version (an object without versioning
satisfies it by name); an unversioned one binds to the base or default
definition. A symbol that binds nowhere fails the load under RTLD_NOW — every
Python import: "ImportError: libX.so: undefined symbol: foo" — and, in an
executable bound lazily, fails when first called.

A weak undefined symbol may stay unbound (a note). Symbols explained by a
missing-provider finding (a known family with no DT_NEEDED of that family), and
the GPU driver's exports used by a file that links the driver (driver-link, in
driverless mode), are reported there, once, as the root cause; so are references versioned for a library
that was not found (library-not-found lists them). Compiler hooks
(__gmon_start__, the TM clone table, weak _ZTH thread_local initialisers) are
not findings. Interpreter-provided symbols of
extension modules are not findings. An object whose every unbound symbol is of
an API a host program defines for the plugins it loads — perl's (Perl_*, PL_*:
an XS module under auto/), a debugger's proc_service (ps_*: glibc's
libthread_db) — is a note: that program binds them.

PE and Mach-O: an import names the library it binds to (its DLL; the dylib of
its two-level library ordinal). The copy judged is the one the loader emulation
found (Windows: the importer's directory, a --dll-directory...; dyld: LC_RPATH,
DYLD_LIBRARY_PATH...), else the input of that name in the importer's directory,
else any input of that name (DLL names compared without case, as Windows does).
Every import must be among its exports — following PE forwarders, and Mach-O
re-exports (LC_REEXPORT_DYLIB, re-exported symbols of the export trie) — or
the load stops: Windows' "The procedure entry point X could not be located in
the dynamic link library Y", dyld's "Symbol not found: _X, referenced from:
A, expected in: B". Delay-load imports fail at their first call instead, and
weak Mach-O imports bind to NULL (notes). Libraries of the dyld shared cache
(/usr/lib, /System/Library) are not judged: their exports are not on disk.
Flat lookups (-undefined dynamic_lookup, -flat_namespace) name no library;
missing-provider covers those of a known family.
"""
    evidence = {
        "symbols": "the symbols that bind nowhere (name@version where versioned)",
        "count": "number of such symbols",
        "roots": "[{root, kind}] the loads in which they bind nowhere",
        "missing_libraries": "DT_NEEDED entries of the file that resolved nowhere (a likely cause), if any",
        "weak": "true for weak references (a note: allowed to stay unbound)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        """One finding per audited file and strength (weak or not) whose undefined symbols bind
        nowhere in some ELF load, plus the PE / Mach-O import ones (:meth:`_image_imports`)."""
        yield from self._image_imports(context)
        linkage = context.linkage
        if linkage is None:
            return
        kinds = {ld.root: ld.kind for ld in linkage.loads}
        loaders = {ld.root: ld.loader for ld in linkage.loads}
        grouped = _unbound(linkage, {b.path: b for b in context.binaries})
        missing = _missing_needed(linkage) if grouped else {}
        for (file, weak), symbols in grouped.items():
            names = sorted(symbols)
            roots = sorted({r for rs in symbols.values() for r in rs})
            missing_libs = sorted(missing.get(file, ()))
            count = f"{len(names)} undefined symbol{'s' if len(names) != 1 else ''}"
            host = None if weak else host_api(names)
            if weak:
                verb = "binds" if len(names) == 1 else "bind"
                message = f"{count} (weak) {verb} nowhere: {preview(names)}; allowed, the code must check for NULL"
            elif host is not None:
                message = f"{count} of {host} ({preview(names)}), which it leaves to the program that loads it"
            else:
                message = _strong_message(file, count, names, roots, kinds, loaders, missing_libs)
            yield self.finding(
                file,
                names[0] if len(names) == 1 else f"{len(names)} symbols",
                message,
                {
                    "symbols": names,
                    "count": len(names),
                    "roots": [{"root": r, "kind": kinds[r].value} for r in roots],
                    "missing_libraries": missing_libs,
                    "weak": weak,
                },
                Severity.NOTE if weak or host is not None else None,
            )

    def _image_imports(self, context: AuditContext) -> Iterator[Finding]:
        """PE and Mach-O imports that the library they name does not export (see ``explain``)."""
        if not context.windows and not context.dyld:
            return  # no PE or Mach-O load: the image binder is never imported on an ELF-only run
        from ..loader.image_binding import MAX_DEPTH, unbound_imports

        for fmt, loads in ((Format.PE, context.windows), (Format.MACHO, context.dyld)):
            for unbound in unbound_imports(context.binaries, loads, fmt):
                names = list(unbound.symbols)
                lib = posixpath.basename(unbound.provider)
                count = f"{len(names)} import{'s' if len(names) != 1 else ''} from {unbound.library}"
                if fmt is Format.PE:
                    when = "its first call fails" if unbound.weak else "Windows stops the load"
                    message = (
                        f"{count} that it does not export ({preview(names)}): {when}: "
                        f'"The procedure entry point {names[0]} could not be located in the dynamic link '
                        f'library {lib}"'
                    )
                elif unbound.weak:
                    message = (
                        f"{count} ({unbound.provider}) that it does not export ({preview(names)}): weak "
                        "imports, bound to NULL — the code must check before calling"
                    )
                else:
                    message = (
                        f"{count} ({unbound.provider}) that it does not export ({preview(names)}): dyld stops "
                        f'the load: "Symbol not found: _{names[0]}, referenced from: '
                        f'{posixpath.basename(unbound.importer.path)}, expected in: {lib}"'
                    )
                if unbound.reason == "loop":
                    message += (
                        " — its forwarders or re-exports lead back where they started "
                        f"({'forwarder' if fmt is Format.PE else 'LC_REEXPORT_DYLIB'} loop), so nothing exports it"
                    )
                elif unbound.reason == "forward-missing":  # Windows loads the forwarder's DLL to bind it
                    message = (
                        f"{count} that it forwards to {unbound.via} ({preview(names)}), which is neither among "
                        f"the inputs nor Windows' own: the load fails — \"The specified module could not be "
                        f'found" ({unbound.via})'
                    )
                elif unbound.reason == "deep":
                    message = (
                        f"{count} ({unbound.provider}) not judged ({preview(names)}): its re-exports "
                        f"(LC_REEXPORT_DYLIB) nest deeper than {MAX_DEPTH} and were not followed further"
                    )
                severity = Severity.WARNING if unbound.reason == "deep" else None
                yield self.finding(
                    unbound.importer,
                    names[0] if len(names) == 1 else f"{len(names)} symbols",
                    message,
                    {"symbols": names, "count": len(names), "roots": [], "missing_libraries": [], "weak": unbound.weak},
                    Severity.NOTE if unbound.weak else severity,
                )
