"""``library-not-found``: a DT_NEEDED of an object in some root's closure that resolves nowhere."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..context import AuditContext
from ..loader.analysis import ROOTS_SHOWN, LinkageAnalysis, would_fail
from ..loader.ldso import Outcome
from ..model import Binary, Format
from ..records import dataclass
from ..report import Finding, Severity
from .base import Rule, preview
from .data import driver_index
from .platform_tag import LINUX_ARCHES
from .provider_hint import ProviderHint, installed_hint, provider_hint

if TYPE_CHECKING:  # loader.images: the PE and Mach-O loads' results, imported where one is reported
    from ..loader.images import ImageResolution


def attempts_evidence(attempts: Any) -> list[dict[str, Any]]:
    """The paths tried, JSON-ready: ``[{"path", "source", "owner", "outcome", "detail"}]``."""
    return [
        {"path": a.path, "source": a.source.value, "owner": a.owner, "outcome": a.outcome.value, "detail": a.detail}
        for a in attempts
    ]


def _alone_how(kind: str) -> str:
    """How an input no root reaches was loaded, in words, by its load's root kind."""
    return {"python-import": "when imported on its own", "executable": "when run"}.get(kind, "when dlopen()ed")


def _hinted_severity(requesters: Sequence[_Requester], hints: list[ProviderHint | None]) -> Severity | None:
    """The severity when the first requester has a provider hint: a note when every requester's
    package declares a dependency that brings the library (conda), a warning when no import root
    reaches a requester and every hint names an extra (a plugin's library) or an installed copy
    (found when preloaded); else None, the rule's own."""
    reached = any(r.reached for r in requesters)
    if all(h is not None and h.severity is Severity.NOTE for h in hints):
        return Severity.NOTE  # a conda package's declared dependency brings it
    if all(h is not None and h.extra is not None for h in hints) and not reached:
        return Severity.WARNING  # a plugin's library, brought by an extra of its package
    if all(h is not None and h.installed for h in hints) and not reached:
        return Severity.WARNING  # installed, found when preloaded: no import root fails
    return None


def _hint_evidence(hint: ProviderHint | None) -> dict[str, object]:
    """The evidence keys a provider hint adds (``providers``, ``declared_by``, ``extra``,
    ``installed``); none without a hint."""
    if hint is None:
        return {}
    return {
        "providers": list(hint.providers),
        "declared_by": hint.declared_by,
        "extra": hint.extra,
        "installed": list(hint.installed),
    }


class LibraryNotFound(Rule):
    id = "library-not-found"
    needs_loader = True
    severity = Severity.ERROR
    summary = "a needed library (DT_NEEDED, imported DLL, dylib load command) found nowhere when an import root is loaded, as ld.so, Windows or dyld would search"
    explain = """\
Each import root (a Python extension module, an executable, or a library that is
dlopen()ed) is loaded the way glibc's ld.so loads it: its DT_NEEDED entries
breadth-first, each searched in elf/dl-load.c's order — DT_RPATH of the
requesting object and of the objects that loaded it (only when the requester has
no DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH of the requester only,
/etc/ld.so.cache, then the ld.so's system directories, each with its
glibc-hwcaps subdirectories; $ORIGIN is the directory of the path an object was
found by. A DT_NEEDED that resolves nowhere makes the load fail:
"ImportError: libX.so: cannot open shared object file: No such file or directory".

The finding carries the chain of DT_NEEDED entries from the root to the missing
library and every path tried, in order, with why it was tried (which object's
RPATH or RUNPATH, LD_LIBRARY_PATH, cache, system directory) or skipped (wrong
ELF class or machine, DF_1_NODEFLIB). A candidate that exists but is not a
valid ELF object stops the search with an error, as ld.so does.

Common causes: a RUNPATH that does not reach a dependency of a dependency
(RUNPATH is not inherited, RPATH is); a wheel whose RPATH points into another
package that is not installed; a library that is only on the build machine.
The GPU driver's libraries are reported by driver-link instead (driverless, the
default); under --with-driver they count as system libraries of any target (a
wheel's policy, a conda prefix's sysroot) and resolve where the target has
them; found nowhere, the finding says the driver is missing and names no
package as their provider (none ships the driver). When an input
of that SONAME is in the installation but no search reaches it, the finding
says where it is installed and by which distribution: the load finds it only
when it is already loaded (ld.so matches a DT_NEEDED against the SONAMEs of
loaded objects before it searches, elf/dl-load.c), as a package's preload
arranges; a warning when only plain dlopen() roots fail.

musl binaries (PT_INTERP ld-musl-*, DT_NEEDED libc.musl-*.so.1 or libc.so, or a
wheel tagged musllinux only) are loaded as musl's ldso/dynlink.c loads them
(linkaudit/loader/musl.py): LD_LIBRARY_PATH, then the rpath (DT_RUNPATH, else
DT_RPATH) of the requester and of each object that first loaded the one before,
then etc/ld-musl-ARCH.path or /lib:/usr/local/lib:/usr/lib; no ld.so.cache; the
first file that opens wins, even of another machine. In musl's words: "Error
loading shared library libfoo.so.1: No such file or directory (needed by X)".

PE inputs are loaded as Windows loads them (linkaudit/loader/windows.py): a .pyd
searches its own directory (for the whole load), the --dll-directory
directories, then System32, where Windows' own DLLs, the UCRT, the API sets and
the DLLs beside python.exe count as present; an executable searches its own
directory, System32, then the --path directories (PATH, never searched for a
.pyd). A DLL not found is "ImportError: DLL load failed while importing X: The
specified module could not be found." A DLL of another machine (an i386 DLL for
an x86-64 .pyd) is skipped and the search goes on; when nothing else is found:
"%1 is not a valid Win32 application." (ERROR_BAD_EXE_FORMAT), and the finding
names the file skipped and both machines. An executable missing a DLL never
starts ("The code execution cannot proceed because X.dll was not found"). When
a DLL or dylib of that name is among the inputs elsewhere, the finding says
where, and which --dll-directory (or LC_RPATH) would reach it. A DLL of the Visual C++
Redistributable (msvcp140.dll, vcomp140.dll, concrt140.dll, ...) not shipped is
a warning: neither Windows nor python.org's Python provides it, so the import
works only where the Redistributable is installed (bundle it, as delvewheel
does, or state the requirement).

Mach-O inputs are loaded as dyld loads them (linkaudit/loader/dyld.py), each
slice of a universal root by itself: first the --dyld-library-path directories
(DYLD_LIBRARY_PATH, by the install name's leaf name); then @rpath/X through the
LC_RPATH entries of the loading image and then of each image above it, each
@loader_path relative to the image holding that LC_RPATH; @loader_path/X;
@executable_path (--executable-path; for a Python extension, the interpreter);
absolute install names (under /usr/lib and /System/Library: the shared cache,
always present); then the --dyld-fallback-library-path directories
(DYLD_FALLBACK_LIBRARY_PATH, by leaf name). A dylib found is loaded through its
slice of the root's architecture; one without such a slice is skipped ("mach-o
file, but is an incompatible architecture"), as dyld skips it. A weak dylib may
be missing. Not found: "Library not loaded: @rpath/libomp.dylib", with every
place tried and why it was rejected ("no LC_RPATH's found" when no image of the
chain has one). A search linkaudit stopped at its own limit (100,000 places in
one load, 250,000 in all loads of a run) is a warning naming that limit: whether
dyld finds the dylib is not known, and no failure of dyld's is claimed.
"""
    evidence = {
        "needed": "the DT_NEEDED entry that resolves nowhere",
        "requester": "the object that needs it",
        "roots": "[{root, kind, reached, chain}] the first 10 roots whose load fails (ELF: of each requester), "
        "in root order, with the chain of DT_NEEDED entries (PE and Mach-O: also machine, the loader's)",
        "roots_count": "how many loads meet it (ELF: over every requester; ``roots`` shows the first 10 of each)",
        "would_fail": "what the user would see, in the words of the loader (glibc's, or musl's for a musl load)",
        "attempts": "[{path, source, owner, outcome, detail}] every path tried, in order (the first 64)",
        "attempts_not_shown": "how many more paths were tried",
        "error": "the load-stopping error when a candidate was not a usable ELF object, else null",
        "refused_member": "{member, reason} when a path tried is a package member refused at staging (a "
        "decompression bomb, an unwritable name): the library is in the package, unread; absent otherwise",
        "unresolved_symbols": "references of the requester versioned for this library, which then bind nowhere",
        "redistributable": "PE: true for a DLL of the Visual C++ Redistributable (msvcp140.dll...): a warning",
        "providers": "the PyPI distributions that ship a library of this SONAME (the provider index), when known",
        "declared_by": "the Requires-Dist line through which the requester's distribution declares one, or null",
        "extra": "the extra it is declared under (a warning when only unreached plugins need it), or null",
        "installed": "inputs whose SONAME is the missing library: installed, but no RPATH/RUNPATH or system "
        "directory reaches them — found only when already loaded (a warning when no import root fails)",
        "requesters": "ELF: [{file, requester, chain, reached, declared_by, extra, unresolved_symbols}] every object "
        "of the installation that needs it (one finding per missing library): those an import root reaches first, "
        "each by path; the first names the file",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        yield from self._images(context)
        failures = _elf_failures(context)
        by_path = {b.path: b for b in context.binaries} if failures else {}
        by_soname: dict[str, list[Binary]] = {}
        for b in context.binaries if failures else ():
            if b.format is Format.ELF and b.soname:
                by_soname.setdefault(b.soname, []).append(b)
        refused = {e.path: e.reason for e in context.packages.errors} if failures and context.packages else {}
        for needed, requesters in failures.items():
            hints = [_hint(context, by_path, by_soname.get(needed, ()), r, needed) for r in requesters]
            yield self._elf_finding(context, by_path, needed, requesters, hints, refused)

    def _elf_finding(
        self,
        context: AuditContext,
        by_path: dict[str, Binary],
        needed: str,
        requesters: list[_Requester],
        hints: list[ProviderHint | None],
        refused: dict[str, str],
    ) -> Finding:
        """The one finding for ``needed`` missing in this installation: the first requester
        (``_primary_first``: reached from an import root, then by path) names the file, so the
        fingerprint holds from run to run; every other requester, and the chain from each root, is
        in the evidence and the message counts them."""
        first = requesters[0]
        res, top = first.res, first.roots[0]
        chain_text = " → ".join(p.rsplit("/", 1)[-1] for p in top["chain"])
        tried = len(res.attempts) + res.more_attempts
        how = _alone_how(str(top["kind"])) if not top["reached"] else f"loading {top['root']}"
        message = f"{top['would_fail']} — {how}: {chain_text}; {tried} path{'s' if tried != 1 else ''} tried"
        hint = hints[0]
        if len(requesters) > 1:
            others = [posixpath.basename(r.file) for r in requesters[1:]]
            message += f"; also needed by {len(others)} more: {preview(others)}"
        severity = None
        if hint is not None:
            message += hint.text
            severity = _hinted_severity(requesters, hints)
        unread = _refused_member(context, refused, res.attempts)
        message += f"; {unread[0]} is that library, but it was not read: {unread[1]}" if unread else ""
        message += _foreign_machine(context, by_path.get(first.file))
        return self.finding(
            first.file,
            needed,
            message,
            {
                **_hint_evidence(hint),
                "needed": needed,
                "requester": first.requester,
                "roots": [{k: v for k, v in root.items() if k != "would_fail"} for r in requesters for root in r.roots],
                "roots_count": sum(r.count for r in requesters),
                "would_fail": top["would_fail"],
                "attempts": attempts_evidence(res.attempts),
                "attempts_not_shown": res.more_attempts,
                "error": res.error,
                **({"refused_member": {"member": unread[0], "reason": unread[1]}} if unread else {}),
                "unresolved_symbols": _consequences(by_path, first, needed),
                "requesters": [
                    _requester_evidence(by_path, r, h, needed) for r, h in zip(requesters, hints, strict=True)
                ],
            },
            severity,
        )

    def _images(self, context: AuditContext) -> Iterator[Finding]:
        """A PE import no directory of the Windows search order holds, or a Mach-O dylib dyld finds
        nowhere (see ``explain``)."""
        if not context.windows and not context.dyld:
            return  # no PE or Mach-O load: neither loader's room is imported on an ELF-only run
        from ..loader.images import iter_resolution_holders

        dyld_roots = {load.root for load in context.dyld}
        # base name (lower case) -> PE and Mach-O inputs so named -> their machines (slices)
        shipped: dict[str, dict[str, set[str]]] = {}
        for b in context.binaries:
            if b.format in (Format.PE, Format.MACHO):
                by_path = shipped.setdefault(posixpath.basename(b.path).lower(), {})
                by_path.setdefault(b.path, set()).add(b.machine)

        def missing(key: tuple[str, str], res: ImageResolution) -> bool:
            # the GPU driver: driver-link reports it
            return res.path is None and not res.system and not res.optional and not driver_index().is_driver(key[1])

        loads = (*context.windows, *context.dyld)
        for (requester, name), res, held, count in iter_resolution_holders(loads, missing, ROOTS_SHOWN):
            roots = [
                {
                    "root": load.root,
                    "kind": load.kind,
                    "reached": load.reached,
                    "chain": [*load.chain(requester), name],
                    "machine": load.machine,
                }
                for load in held
            ]
            copies = shipped.get(posixpath.basename(name).lower(), {})
            dyld = roots[0]["root"] in dyld_roots
            yield self._image_finding(context, requester, name, res, roots, dyld, copies, count)

    def _image_finding(
        self,
        context: AuditContext,
        requester: str,
        name: str,
        res: ImageResolution,
        roots: list[dict[str, Any]],
        dyld: bool,
        copies: dict[str, set[str]],
        count: int,
    ) -> Finding:
        """The finding for the PE import or Mach-O dylib ``name`` of ``requester`` found nowhere,
        for the first roots whose load fails (``roots``, at most ``ROOTS_SHOWN``) of ``count``;
        ``copies``: inputs of that base name."""
        from ..loader.images import ImageOutcome
        from ..loader.windows import is_redistributable

        first = roots[0]
        stopped = bool(res.attempts) and res.attempts[-1].source == "budget"
        failure = _image_failure(first, requester, name, res, dyld) if not stopped else _stopped(requester, name, res)
        attempts = [
            {"path": a.path, "source": a.source, "owner": None, "outcome": a.outcome, "detail": a.detail}
            for a in res.attempts
        ]
        chain = " → ".join(posixpath.basename(str(p)) for p in first["chain"])
        message = f"{failure} — {chain}; {len(attempts)} place{'s' if len(attempts) != 1 else ''} tried"
        hint = _shipped_elsewhere(first, name, res, dyld, copies) if not stopped else ""
        if not hint and any(a.outcome == ImageOutcome.WRONG_MACHINE for a in res.attempts):
            hint = f"; ship a build of {posixpath.basename(name)} for {first['machine']}"
        message += hint
        wheel_hint = provider_hint(context, requester, name) if not dyld else None
        if wheel_hint is not None:
            message += wheel_hint.text  # an NVIDIA DLL: the wheel that ships it (the provider index)
        redistributable = not dyld and is_redistributable(name)
        if redistributable:
            message += (
                f". {name} is part of the Microsoft Visual C++ Redistributable, which Windows does not "
                "include and python.org's Python does not ship (only vcruntime140*.dll): it loads only "
                "where the Redistributable is installed — bundle the DLL (delvewheel repair does) or "
                "state the requirement"
            )
        evidence: dict[str, Any] = {
            "needed": name,
            "requester": requester,
            "roots": roots,
            "roots_count": count,
            "would_fail": failure,
            "attempts": attempts,
            "attempts_not_shown": 0,
            "error": None,
            "unresolved_symbols": [],
            "redistributable": redistributable,
        }
        if wheel_hint is not None:
            evidence.update(
                providers=list(wheel_hint.providers), declared_by=wheel_hint.declared_by, extra=wheel_hint.extra
            )
        warn = redistributable or stopped  # a search linkaudit stopped: its limit, not a missing library
        return self.finding(requester, name, message, evidence, Severity.WARNING if warn else None)


def _hint(
    context: AuditContext, by_path: dict[str, Binary], copies: Sequence[Binary], r: _Requester, needed: str
) -> ProviderHint | None:
    """What to add to the finding for requester ``r``: where the installation has ``needed`` when
    inputs of that SONAME and the requester's class and machine exist (``copies``:
    ``installed_hint``; never for a GPU-driver library), else who provides it (``provider_hint``)."""
    if "/" in needed:  # opened as a path, never searched: no RUNPATH, preload or copy helps
        return _slash_hint(needed)
    binary = by_path.get(r.requester) or by_path.get(r.file)
    fits = [c.path for c in copies if binary is None or (c.machine, c.bits) == (binary.machine, binary.bits)]
    if fits and not driver_index().is_driver(needed):  # a driver stub among the inputs is no provider
        return installed_hint(context, r.file, needed, sorted(fits))
    return provider_hint(context, r.file, needed)


def _slash_hint(needed: str) -> ProviderHint:
    """The hint for a DT_NEEDED with a slash: ld.so (and musl) open it as a path, never searched
    (glibc ``elf/dl-load.c`` ``_dl_map_object``) — a relative one from the working directory of the
    process, so it loads only when run from one directory.  A link names a library by its path
    when the library has no SONAME (``gcc ... lib/libb.so``)."""
    base = posixpath.basename(needed)
    where = "as an absolute path" if needed.startswith("/") else "relative to the process's working directory"
    text = (
        f"; a DT_NEEDED with a slash is opened as a path, {where}, and never searched (no RPATH/RUNPATH "
        f"applies): a link names a library by its path when it has no SONAME (or one with a slash) — "
        f"give it a plain one (-Wl,-soname,{base}) and relink"
    )
    return ProviderHint(text, (), None, None)


def _refused_member(context: AuditContext, refused: dict[str, str], attempts: Sequence[Any]) -> tuple[str, str] | None:
    """``(PACKAGE!member, reason)`` when a path ld.so tried is a package member refused at staging
    (``refused``: ``PACKAGE!member`` -> why, from the staging errors; a decompression bomb, an
    unwritable name): the library is in the package, only unread — not the missing file the
    loader's words suggest.  ``None`` otherwise."""
    staged = context.packages
    if staged is None or not refused:
        return None
    for attempt in attempts:
        label = staged.label(attempt.path)
        if label in refused:
            return label, refused[label]
    return None


@dataclass
class _Requester:
    """One object whose DT_NEEDED of a missing library resolves nowhere: its audited ``file``, the
    ``requester`` path as loaded, its resolution (every path tried) and the roots whose load fails."""

    file: str
    requester: str
    res: Any
    roots: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    reached: int = 0


def _elf_failures(context: AuditContext) -> dict[str, list[_Requester]]:
    """Each DT_NEEDED that resolves nowhere in the ld.so and musl loads -> every object that
    needs it (once per file, however many roots load it, under whatever spelling), in
    ``_primary_first`` order."""
    linkage = context.linkage
    if linkage is None:
        return {}
    seen: dict[str, dict[str, _Requester]] = {}
    for (file, needed), entry in _not_found(linkage).items():
        requester = _Requester(file, entry["requester"], entry["res"], entry["roots"], entry["count"], entry["reached"])
        seen.setdefault(needed, {})[file] = requester
    return {needed: sorted(by_file.values(), key=_primary_first) for needed, by_file in seen.items()}


def _primary_first(r: _Requester) -> tuple[bool, str]:
    """Requesters an import root reaches first (the failure a user meets on import), each by path:
    the first names the finding's file, the same from run to run."""
    return (not r.reached, r.file)


def _consequences(by_path: dict[str, Binary], r: _Requester, needed: str) -> list[str]:
    """The undefined symbols of requester ``r`` versioned for ``needed``, which then bind nowhere."""
    binary = by_path.get(r.requester) or by_path.get(r.file)
    undefined = binary.symbols.undefined() if binary is not None else ()
    return sorted({s.display_name() for s in undefined if s.version is not None and s.version.file == needed})


def _requester_evidence(
    by_path: dict[str, Binary], r: _Requester, hint: ProviderHint | None, needed: str
) -> dict[str, Any]:
    """One requester, JSON-ready: its file, the chain from its first root, how its distribution declares a provider."""
    return {
        "file": r.file,
        "requester": r.requester,
        "chain": r.roots[0]["chain"],
        "reached": any(root["reached"] for root in r.roots),
        "declared_by": hint.declared_by if hint is not None else None,
        "extra": hint.extra if hint is not None else None,
        "unresolved_symbols": _consequences(by_path, r, needed),
    }


def _stopped(requester: str, name: str, res: ImageResolution) -> str:
    """What a search stopped by linkaudit's own budget (``loader.dyld.MAX_ATTEMPTS``,
    ``MAX_TOTAL_ATTEMPTS``) says: the limit that stopped it; whether the loader finds ``name`` was
    not checked (no failure of the loader's is claimed)."""
    detail = res.attempts[-1].detail
    how = "; fewer inputs per run, or --entry for the import roots, keep within it" if "all loads" in detail else ""
    return (
        f"{name} (referenced from {posixpath.basename(requester)}) not checked: linkaudit's {detail}"
        f" — whether dyld finds it is unknown{how}"
    )


def _image_failure(first: dict[str, Any], requester: str, name: str, res: ImageResolution, dyld: bool) -> str:
    """What the first root of a failed PE or Mach-O load would see, in Windows' or dyld's words:
    dyld's "tried:" list (the first 16 places, the budget that stopped the search, "no LC_RPATH's
    found"), or Windows' error with the DLLs of another machine it skipped."""
    kind, root, machine = str(first["kind"]), str(first["root"]), str(first["machine"])
    if dyld:
        from ..loader.dyld import dyld_failure, dyld_reason

        tried = ", ".join(
            dyld_reason(a, machine) if a.source == "budget" else f"'{a.path}' ({dyld_reason(a, machine)})"
            for a in res.attempts[:16]
        ) + (f", … (+{len(res.attempts) - 16} more)" if len(res.attempts) > 16 else "")
        if len(res.attempts) > 16 and res.attempts[-1].source == "budget":
            tried += f": {res.attempts[-1].detail}"
        if not tried and name.startswith("@rpath/"):
            tried = "no LC_RPATH's found"  # dyld's reason: no image in the chain has an LC_RPATH
        elif not tried and name.startswith("@executable_path"):
            tried = "nothing: @executable_path is unknown — pass --executable-path (for a Python extension, the interpreter)"
        return dyld_failure(
            kind, root, name, f" (referenced from {posixpath.basename(requester)}; tried: {tried or 'nothing'})"
        )
    from ..loader.images import ImageOutcome
    from ..loader.windows import windows_failure

    wrong = [a for a in res.attempts if a.outcome == ImageOutcome.WRONG_MACHINE]
    failure = windows_failure(kind, root, name, bool(wrong))
    if wrong:  # dyld's "tried:" list names them already
        failure += " [" + "; ".join(f"{a.path} is for another machine ({a.detail})" for a in wrong) + "]"
    return failure


def _shipped_elsewhere(
    first: dict[str, Any], name: str, res: ImageResolution, dyld: bool, copies: dict[str, set[str]]
) -> str:
    """``"; X is among the inputs at P: ..."`` when a copy of the loader's machine that was not tried
    is among the inputs (``copies``: path -> machines), with the option or fix that would reach it
    for that loader and root kind; else ``""``."""
    tried = {a.path for a in res.attempts}
    elsewhere = sorted(p for p, machines in copies.items() if p not in tried and str(first["machine"]) in machines)
    if not elsewhere:
        return ""
    where, base = posixpath.dirname(elsewhere[0]), posixpath.basename(name)
    if dyld:
        how = f"an LC_RPATH of the loading image leading there (install_name_tool -add_rpath), or --dyld-library-path {where}"
    elif first["kind"] == "executable":
        how = f"an executable's imports are searched in its own directory, System32 and PATH — ship the DLL beside it, or --path {where}"
    else:
        how = (
            f"a .pyd import searches only its own directory and the DLL directories — --dll-directory {where}, "
            "as the package's os.add_dll_directory call would add it, or ship the DLL beside the module"
        )
    return f"; {base} is among the inputs at {elsewhere[0]}: {how}"


def _not_found(linkage: LinkageAnalysis) -> dict[tuple[str, str], dict[str, Any]]:
    """(file, DT_NEEDED) -> the first resolution that found nothing ("res"), the first loads
    holding it ("roots": root, kind, reached, chain, would_fail; at most ``ROOTS_SHOWN``), how many
    loads hold it ("count") and how many of those are reached ("reached"): one finding per file and
    DT_NEEDED, however many roots load it, under whatever spelling; each part of the loads read once."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    holders = linkage.holders()
    for part in linkage.parts():
        held = holders[id(part.part)]
        for (requester, needed), res in part.part.own_resolutions().items():
            if res.found or any(a.outcome is Outcome.DRIVER_ABSENT for a in res.attempts):
                continue  # found; or the GPU driver: driver-link reports it, with this chain
            key = (linkage.audited.get(requester, posixpath.normpath(requester)), needed)
            entry = found.setdefault(key, {"res": res, "requester": requester, "first": {}, "count": 0, "reached": 0})
            entry["count"] += held.count
            entry["reached"] += held.reached
            entry["first"].update((i, requester) for i in held.first if i not in entry["first"])
    for (_file, needed), entry in found.items():
        entry["roots"] = [_root_info(linkage, i, requester, needed, entry["res"]) for i, requester in
                          sorted(entry.pop("first").items())[:ROOTS_SHOWN]]  # fmt: skip
    return found


def _root_info(linkage: LinkageAnalysis, index: int, requester: str, needed: str, res: Any) -> dict[str, Any]:
    """How load ``index`` meets ``requester``'s DT_NEEDED ``needed`` found nowhere (``res``)."""
    load, root = linkage.loads[index], linkage.roots[index]
    if load.loader == "musl":
        from ..loader.musl import musl_load_error  # loaded already: a musl load ran

        detail = res.error.split(": ", 1)[-1] if res.error else "No such file or directory"
        message = musl_load_error(needed, requester, detail)
    else:
        message = res.error or f"{needed}: cannot open shared object file: No such file or directory"
    return {
        "root": load.root,
        "kind": load.kind.value,
        "reached": root.reached,
        "chain": [*load.chain(requester), needed],
        "would_fail": would_fail(load.kind, load.root, message, load.loader),
    }


#: ``platform.machine()`` (``uname -m``, and the names other systems give two of them) -> the ELF
#: machine as the model spells it: ``platform_tag.LINUX_ARCHES``.
_HOST_MACHINES = {arch: machine for arch, (machine, _bits, _endian) in LINUX_ARCHES.items()} | {
    "amd64": "x86-64",
    "arm64": "aarch64",
}


def _foreign_machine(context: AuditContext, binary: Binary | None) -> str:
    """The advice for a file of another machine than the auditing one judged against this machine's
    own file system (no policy, no --sysroot): its system libraries are not here to be found."""
    import platform

    linkage = context.linkage
    if binary is None or linkage is None or linkage.env.sysroot != "/" or linkage.env.system_libraries is not None:
        return ""
    host = _HOST_MACHINES.get(platform.machine().lower())
    if host is None or binary.machine == host:
        return ""
    arch = _TAG_ARCHES.get(binary.machine, binary.machine)
    return (
        f"; the file is {binary.machine} and this machine is {host}: its system libraries are not here — give its "
        f"target (--profile manylinux_2_28_{arch} --target-env policy, or another tag of {arch}) or its file "
        "system (--sysroot)"
    )


#: The model's ELF machine -> the architecture a platform tag spells (PEP 599, PEP 600): the first
#: ``platform_tag.LINUX_ARCHES`` names for it (``x86`` -> ``i686``, ``arm`` -> ``armv7l``).
_TAG_ARCHES: dict[str, str] = {}
for _arch, (_machine, _bits, _endian) in LINUX_ARCHES.items():
    _TAG_ARCHES.setdefault(_machine, _arch)
