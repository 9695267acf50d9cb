"""Objects and archives: ``duplicate-definition``, ``common-symbol``, ``stacked-codegen``, ``lto-object``.

They read relocatable objects (``.o``, archive members) from the model and the link
the ``linkaudit.link.elf`` emulation says one link combines.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from functools import cache
from typing import TYPE_CHECKING

from ..context import AuditContext
from ..lazyre import LazyPattern
from ..link.elf import Definition, definitions, pulled
from ..model import Binary, Format, Kind
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule, preview
from .windows_link import windows_link

if TYPE_CHECKING:  # the COFF link is imported only with a link line (start-up: a plain ELF check)
    from ..link.coff import CoffLink, Duplicate, Linker

#: A generated suffix repeated: ``X.cpp.DEFAULT.cpp.DEFAULT.cpp`` (a generator wrapping its own output).
STACKED = LazyPattern(r"(\.[A-Za-z0-9_]+\.(?:cpp|cc|cxx|c|cu))\1+")


@cache
def demangle(name: str) -> str:
    """The C++ name of an Itanium-mangled symbol (``cpp_demangle``), or ``name`` itself."""
    if not name.startswith("_Z"):
        return name
    try:
        from cpp_demangle import demangle as _demangle  # type: ignore[import-not-found]
    except ImportError:  # pragma: no cover - a declared dependency; stay usable without it
        return name
    try:
        return str(_demangle(name))
    except Exception:
        return name


def where(b: Binary) -> str:
    """``archive(member)`` or the object's path."""
    return b.display_path


def _file_of(b: Binary, real: dict[str, str]) -> str:
    """The file an object's bytes come from: the object, a thin archive's member file, or ``archive(member)``.

    ``real`` memoises ``os.path.realpath`` per path for one check: an archive's members share its path.
    """
    path = b.member_file if b.member_file is not None else b.path
    resolved = real.get(path)
    if resolved is None:
        resolved = real[path] = os.path.realpath(path)
    if b.member_file is not None or b.member is None:
        return resolved
    return f"{resolved}({b.member})"


#: The last audit's decoded definitions: (its binaries, id(object) -> definitions). Both rules
#: of this module read every object's definitions; an object is decoded once per audit.
_decoded: list[tuple[tuple[Binary, ...], dict[int, list[Definition]]]] = []


def _definitions(context: AuditContext, b: Binary) -> list[Definition]:
    """``link.elf.definitions(b)``, decoded once per audit (``context.binaries`` identifies it)."""
    if not _decoded or _decoded[0][0] is not context.binaries:
        _decoded[:] = [(context.binaries, {})]
    memo = _decoded[0][1]
    found = memo.get(id(b))
    if found is None:
        found = memo[id(b)] = definitions(b)
    return found


def _stacked(b: Binary) -> str | None:
    text = b.member or b.path.rsplit("/", 1)[-1]
    m = STACKED.search(text)
    return m.group(0) if m else None


def _clash(
    all_defs: list[Definition], times: Counter[int], muldefs: bool
) -> tuple[list[Definition], str, Severity] | None:
    """The definitions of one name that the link as given combines — every time an object is
    linked counts (``times``: a file named twice clashes with itself; a thin archive's member and
    the same file named loose are two copies) — with ``"link-line"`` and the severity (a warning
    under ``-z muldefs``); ``None`` when fewer than two."""
    clash = [d for d in all_defs for _ in range(times[id(d.binary)])]
    if len(clash) < 2:
        return None
    return clash, "link-line", Severity.WARNING if muldefs else Severity.ERROR


#: glibc's start files (csu), of which GCC's driver links exactly one (its ``STARTFILE_SPEC``:
#: ``crt1.o``, ``Scrt1.o`` for PIE, ``gcrt1.o``/``grcrt1.o`` for ``-pg``, ``rcrt1.o`` for
#: static-pie, ``Mcrt1.o``): alternatives side by side in a library directory, never linked together.
START_FILES = frozenset({"crt1.o", "Scrt1.o", "gcrt1.o", "grcrt1.o", "rcrt1.o", "Mcrt1.o"})


def _one_start_file(defs: list[Definition]) -> list[Definition]:
    """``defs`` with the loose start files after the first left out (``START_FILES``)."""
    out, started = [], False
    for d in defs:
        if d.binary.member is None and os.path.basename(d.binary.path) in START_FILES:
            if started:
                continue
            started = True
        out.append(d)
    return out


def _clash_unlinked(all_defs: list[Definition], real: dict[str, str]) -> tuple[list[Definition], str, Severity] | None:
    """Without a link line: the definitions of one name in distinct files (one file reached twice,
    a loose object that is also a thin archive's member, is one definition); loose objects are
    linked together (an error) — the C runtime's alternative start files excepted, of which a link
    takes one —, archive members only if the link pulls both (a warning)."""
    defs = _one_start_file(list({_file_of(d.binary, real): d for d in reversed(all_defs)}.values())[::-1])
    if len(defs) < 2:
        return None
    loose = [d for d in defs if d.binary.member is None]
    if len(loose) >= 2:
        return loose, "objects", Severity.ERROR
    return defs, "archive-members", Severity.WARNING


def _pulled_on_demand(
    context: AuditContext,
    name: str,
    label: str,
    places: list[str],
    clash: list[Definition],
    names_of: dict[int, set[str]],
) -> str:
    """The message of archive members that clash only if the link pulls both: what reference
    would pull each (``names_of``: each object's defined names, memoised by ``id``)."""
    triggers = []
    for d in clash:
        own = names_of.get(id(d.binary))
        if own is None:
            own = names_of[id(d.binary)] = {x.name for x in _definitions(context, d.binary)}
        others = sorted(own - {name})
        if d.binary.member is not None and others:
            triggers.append(f"{where(d.binary)} is pulled by a reference to {preview(others, 2)}")
    return (
        f"{label} is defined in {preview(places, 3)}: archive members are pulled on demand, so "
        "the link fails only if it pulls two of them"
        + (f" — {'; '.join(triggers[:3])}" if triggers else "")
        + "; give --link-line to decide"
    )


def _stacked_cause(clash: list[Definition]) -> tuple[dict[str, list[str]] | None, str]:
    """``(evidence cause, message tail)`` when an object's name repeats a generated suffix (stale
    generated sources), else ``(None, "")``."""
    stacked = sorted({s for d in clash if (s := _stacked(d.binary))})
    if not stacked:
        return None, ""
    cause = {"stacked_suffixes": stacked, "objects": [where(d.binary) for d in clash if _stacked(d.binary)]}
    return cause, (
        f"; cause: stale generated sources ({', '.join(stacked)} repeated in an object name): the "
        "code generator wrapped its own output — clean the source tree, not only build/"
    )


class DuplicateDefinition(Rule):
    id = "duplicate-definition"
    severity = Severity.ERROR
    summary = "a strong global symbol defined in two objects one link combines (`multiple definition`)"
    explain = """\
A global, non-weak, non-COMMON symbol defined in two objects that one link
combines makes the link fail with "multiple definition of `symbol'" — after a
build that may have taken hours. Loose objects (named, or found under a build
directory given) are taken as linked together. Archive members are pulled only
on demand (a member is linked when it defines a symbol still undefined at that
point; ld rescans an archive until it pulls nothing more), so two members clash
only when the link pulls both: with --link-line FILE (a response file, a CMake
link.txt, a compile_commands.json command) linkaudit emulates that and reports
exactly the duplicates of that link as errors; without one, member-versus-member
duplicates are warnings that say when the link would pull both.

Symbols in COMDAT groups (inline functions, template instantiations) are not
duplicates: the linker keeps one copy per group. A Windows --link-line (COFF objects,
static libraries) gives link.exe's "LNK2005: S already defined in a.obj", honouring
each COMDAT's selection: ANY and LARGEST keep one copy, NODUPLICATES is an error,
SAME_SIZE and EXACT_MATCH are when the copies differ (--linker lld-link: its order
and words, "duplicate symbol: S"). The finding names the symbol
demangled and mangled, and every object (archive and member) that defines it,
with its section. When an object's name repeats a generated suffix
(X.cpp.DEFAULT.cpp.DEFAULT.cpp.o) the stale code generation is named as the cause
(see stacked-codegen).
"""
    evidence = {
        "symbol": "the mangled name",
        "demangled": "the C++ name (same as symbol for C)",
        "definitions": "[{object, member, section}] every definition",
        "link": "objects (loose objects, linked together) | link-line | archive-members (only if the link pulls both)",
        "cause": "the stacked generated file names behind it, when there are; for a Windows link, "
        "{linker, reason}: whose order the link followed and why the two definitions clash (COMDAT selection)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        windows = windows_link(context)
        if windows is not None:
            yield from self._coff(windows)
        # ELF objects below: a COFF link (LNK2005, COMDAT selection) is the Windows link's question.
        objects = [b for b in context.binaries if b.kind is Kind.RELOCATABLE and b.format is Format.ELF]
        if len(objects) < 2:
            return
        link_line = context.config.link_line
        muldefs = any(e.option == "muldefs" for e in link_line)
        times: Counter[int] = Counter(id(b) for b in pulled(context.binaries, link_line)) if link_line else Counter()
        by_name: dict[str, list[Definition]] = {}
        for b in objects:
            for d in _definitions(context, b):
                if not d.common:
                    by_name.setdefault(d.name, []).append(d)
        names_of: dict[int, set[str]] = {}  # id(object) -> the names it defines, for the objects that clash
        real: dict[str, str] = {}
        # Without a link line a name defined once clashes with nothing (with one, an object linked twice may).
        named = sorted(by_name.items() if link_line else ((n, ds) for n, ds in by_name.items() if len(ds) > 1))
        for name, all_defs in named:
            clashing = _clash(all_defs, times, muldefs) if link_line else _clash_unlinked(all_defs, real)
            if clashing is None:
                continue
            clash, link, severity = clashing
            places = [f"{where(d.binary)} ({d.section})" for d in clash]
            pretty = demangle(name)
            label = f"`{pretty}'" + (f" ({name})" if pretty != name else "")
            if link == "link-line" and muldefs:
                message = (
                    f"multiple definition of {label}: defined in {preview(places, 3)}; the link allows it "
                    "(--allow-multiple-definition / -z muldefs) and keeps the first — the others are dead code"
                )
            elif severity is Severity.ERROR:
                message = f"multiple definition of {label}: defined in {preview(places, 3)} — the link fails"
            else:
                message = _pulled_on_demand(context, name, label, places, clash, names_of)
            cause, because = _stacked_cause(clash)
            yield self.finding(
                clash[0].binary,
                name,
                message + because,
                {
                    "symbol": name,
                    "demangled": pretty,
                    "definitions": [
                        {"object": d.binary.path, "member": d.binary.member, "section": d.section} for d in clash
                    ],
                    "link": link,
                    "cause": cause,
                },
                severity,
            )

    def _coff(self, link: CoffLink) -> Iterator[Finding]:
        """LNK2005 for each symbol the emulated Windows link defines twice (``link.coff.duplicates``)."""
        for d in link.duplicates:
            yield self.finding(
                d.second,
                d.name,
                f"{coff_duplicate_line(d, link.linker)} ({d.why}); the link fails"
                + (
                    " with LNK1169: one or more multiply defined symbols found"
                    if link.linker.value == "link.exe"
                    else ""
                ),
                {
                    "symbol": d.name,
                    "demangled": d.name,
                    "definitions": [
                        {"object": b.path, "member": b.member, "section": section}
                        for b, section in zip((d.first, d.second), d.sections, strict=True)
                    ],
                    "link": "link-line",
                    "cause": {"linker": link.linker.value, "reason": d.why},
                },
            )


def coff_duplicate_line(d: Duplicate, linker: Linker) -> str:
    """The linker's own words for a duplicate: link.exe's ``b.obj : error LNK2005: S already defined
    in a.obj`` (a library member as ``x.lib(m.obj)``), or lld-link's ``duplicate symbol: S``."""
    first, second = (os.path.basename(b.display_path) for b in (d.first, d.second))
    if linker.value == "lld-link":
        return f"duplicate symbol: {d.name} (defined at {first} and at {second})"
    return f"{second} : error LNK2005: {d.name} already defined in {first}"


class CommonSymbol(Rule):
    id = "common-symbol"
    formats = ELF_ONLY
    severity = Severity.WARNING
    summary = "the same COMMON symbol in several objects: links today, fails with -fno-common (GCC 10+, Clang 11+)"
    explain = """\
A tentative definition (`int counter;` at file scope, typically in a header) is
emitted as a COMMON symbol under -fcommon, and the linker merges the COMMON
symbols of all objects into one variable. Since GCC 10 and Clang 11, -fno-common
is the default: the same source then yields a strong definition in every object
that includes the header, and the link fails with "multiple definition". Define
the variable in one .c file and declare it `extern` in the header.
"""
    evidence = {"symbol": "the symbol", "objects": "the objects with a COMMON definition of it"}

    def check(self, context: AuditContext) -> Iterator[Finding]:
        by_name: dict[str, list[Definition]] = {}
        for b in context.binaries:
            if b.format is not Format.ELF:
                continue  # -fcommon / -fno-common: the GCC and Clang question on ELF
            for d in _definitions(context, b):
                if d.common:
                    by_name.setdefault(d.name, []).append(d)
        for name, defs in sorted(by_name.items()):
            if len({id(d.binary) for d in defs}) < 2:
                continue
            places = [where(d.binary) for d in defs]
            yield self.finding(
                defs[0].binary,
                name,
                f"COMMON symbol `{name}' in {len(places)} objects ({preview(places, 3)}): merged by the linker "
                "today; recompiled with -fno-common (the default since GCC 10) it is a multiple definition",
                {"symbol": name, "objects": places},
            )


class StackedCodegen(Rule):
    id = "stacked-codegen"
    severity = Severity.ERROR
    summary = "an object or source name that repeats a generated suffix (X.cpp.DEFAULT.cpp.DEFAULT.cpp.o)"
    explain = """\
Per-CPU-capability code generation (PyTorch's ATen writes Activation.cpp.DEFAULT.cpp
and Activation.cpp.AVX2.cpp wrappers) puts its outputs in the source tree. A
stale tree makes the next configure wrap its own outputs again
(Activation.cpp.DEFAULT.cpp.DEFAULT.cpp ...), and two objects then define the same
strong symbol: the final link fails with "multiple definition". Wiping build/
does not help — the stale wrappers live in the source tree (and in submodules).
Delete the generated wrappers from the source tree (git clean -xfd in the
checkout and its submodules, after checking what it removes).

With --source DIR the generated wrapper files found in the source tree are listed,
and whether git tracks them.
"""
    evidence = {
        "name": "the object or source name",
        "stacked": "the repeated suffix",
        "source_files": "with --source: generated wrappers in the source tree [{path, stacked, tracked}]",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        sources = [{"path": s.path, "stacked": s.stacked, "tracked": s.tracked} for s in context.generated_sources]
        seen = set()
        for b in context.binaries:
            if b.kind is not Kind.RELOCATABLE:
                continue
            suffix = _stacked(b)
            name = b.member or b.path.rsplit("/", 1)[-1]
            if suffix is None or name in seen:
                continue
            seen.add(name)
            message = (
                f"{name} repeats the generated suffix {suffix}: a code generator wrapped its own output "
                "(stale generated sources in the source tree; cleaning build/ does not remove them)"
            )
            if sources:
                stale = [str(s["path"]) for s in sources if s["stacked"]]
                untracked = [str(x["path"]) for x in sources if x["stacked"] and x["tracked"] is False]
                message += (
                    f"; {len(stale)} stacked wrapper{'s' if len(stale) != 1 else ''} in the source tree: "
                    f"{preview(stale, 3)}"
                )
                if untracked:
                    message += f" ({len(untracked)} not tracked by git: leftovers of an earlier build)"
            yield self.finding(b, name, message, {"name": name, "stacked": suffix, "source_files": sources})


class LtoObject(Rule):
    id = "lto-object"
    severity = Severity.NOTE
    summary = "an LTO object whose symbols the readers cannot see (GCC slim LTO: only .gnu.lto_* sections)"
    explain = """\
A GCC slim-LTO object (-flto without -ffat-lto-objects) carries no machine code
and no real symbol table: its symbols live in .gnu.lto_* sections in GCC's
intermediate language, read only by the linker plugin. Duplicate and common-symbol
analysis cannot see them, so the object is named rather than silently passed.
Build with -ffat-lto-objects to let linkaudit see the symbols.
"""
    evidence = {"sections": "the .gnu.lto_* sections found"}

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for b in context.binaries:
            if b.kind is not Kind.RELOCATABLE:
                continue
            lto = [n for n in b.section_names if n.startswith(".gnu.lto_")]
            if lto and any(s.name == "__gnu_lto_slim" for s in b.symbols):  # the symbols only with LTO sections
                yield self.finding(
                    b,
                    "__gnu_lto_slim",
                    "a GCC slim-LTO object: its symbols are in GCC's intermediate language, not visible to "
                    "the duplicate analysis (build with -ffat-lto-objects to include it)",
                    {"sections": lto[:8]},
                )
