"""Windows static-link emulation: which externals a link.exe / lld-link link of COFF objects and
libraries leaves unresolved (LNK2019 / LNK2001), and which DLL each resolved import comes from.

The link takes every object of the line whole; a library member (a COFF object of a static
library, or a short import member of an import library) is pulled when it defines a symbol still
unresolved, its own references then searched for in turn, until nothing more is pulled.  Whether a
symbol ends up resolved does not depend on the search order: link.exe searches the libraries in
command-line order with wrap-around and lld-link from the start of the line, and both reach every
library (Microsoft "LINK input files"; lld's ``COFF/SymbolTable.cpp``); the order decides only
*which* library provides a symbol several provide (``provider`` below: the first on the line).

Libraries searched: the line's libraries, then its ``/DEFAULTLIB`` options, then the objects'
``/DEFAULTLIB`` directives, less ``/NODEFAULTLIB`` (every one, or those named).  A library that the
audit did not read (``kernel32.lib``, the CRT) is *unknown*: anything it may define is not proven
missing.  ``/INCLUDE`` (line or directive) makes a symbol a reference; a weak external resolves to
its alternate, ``/ALTERNATENAME:from=to`` sends ``from`` to ``to``.

Pure: it reads the model and the parsed link line, nothing else.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..model import Binary, Binding, Format, Kind
from .line import LinkInput


@dataclass(frozen=True, slots=True)
class Reference:
    """Where a reference comes from: an object (``binary.display_path``) and, when a relocation
    shows it, the function making it; ``binary`` ``None`` for ``/INCLUDE`` on the line."""

    binary: Binary | None
    function: str | None


@dataclass(frozen=True, slots=True)
class CoffLink:
    """The outcome of one emulated link.

    Attributes:
        objects: the objects of the line, in order.
        libraries: the libraries searched (path or name as found), in search order.
        unknown: the libraries the audit did not read, in search order.
        unresolved: each unresolved external and every reference to it, in first-reference order.
        provider: for each resolved symbol a library member provides, the library (its path).
        dll: for each symbol an import member provides, the DLL.
        pulled: the library members the link pulls, in order.
    """

    objects: tuple[Binary, ...]
    libraries: tuple[str, ...]
    unknown: tuple[str, ...]
    unresolved: dict[str, list[Reference]] = field(default_factory=dict)
    provider: dict[str, str] = field(default_factory=dict)
    dll: dict[str, str] = field(default_factory=dict)
    pulled: tuple[Binary, ...] = ()


def has_coff_objects(binaries: Sequence[Binary], line: Sequence[LinkInput]) -> bool:
    """True when the link line names at least one COFF object among ``binaries``."""
    paths = {_key(e.path) for e in line if e.path}
    return any(
        b.format is Format.COFF and b.kind is Kind.RELOCATABLE and b.member is None and _key(b.path) in paths
        for b in binaries
    )


def _key(path: str) -> str:
    return os.path.realpath(path)


def _library_order(line: Sequence[LinkInput], objects: Sequence[Binary]) -> list[str]:
    """The libraries searched, in order: the line's, its ``/DEFAULTLIB``s, the objects' directives,
    less ``/NODEFAULTLIB`` (names compared case-insensitively, with or without ``.lib``)."""
    named = [e.path for e in line if e.path and e.path.lower().endswith(".lib")]
    defaults = [e.option.split(":", 1)[1] for e in line if e.option.startswith("defaultlib:")]
    for obj in objects:
        defaults.extend(d.split(":", 1)[1] for d in obj.link_directives if d.upper().startswith("/DEFAULTLIB:"))
    options = [e.option for e in line]
    if "nodefaultlib" in options:
        defaults = []
    dropped = {_stem(o.split(":", 1)[1]) for o in options if o.startswith("nodefaultlib:")}
    out: dict[str, None] = dict.fromkeys(named)
    seen = {_stem(p) for p in named}
    for name in defaults:
        stem = _stem(name)
        if stem not in dropped and stem not in seen:
            seen.add(stem)
            out[name if name.lower().endswith(".lib") else name + ".lib"] = None
    return list(out)


def _stem(name: str) -> str:
    base = os.path.basename(name.replace("\\", "/")).lower()
    return base[:-4] if base.endswith(".lib") else base


def link_coff(binaries: Sequence[Binary], line: Sequence[LinkInput]) -> CoffLink:
    """Emulate the link of ``line`` over the inputs read (``binaries``).

    Args:
        binaries: every binary read: the line's objects, and the members of its libraries.
        line: the parsed link line (``linker.read_link_line``).

    Returns:
        The ``CoffLink``: unresolved externals with their references, providers, unknown libraries.
    """
    by_path: dict[str, list[Binary]] = {}
    by_stem: dict[str, str] = {}
    for b in binaries:
        if b.format is Format.COFF:
            by_path.setdefault(_key(b.path), []).append(b)
            by_stem.setdefault(_stem(b.path), b.path)
    objects = [m for e in line if e.path for m in by_path.get(_key(e.path), []) if m.member is None]
    libraries = _library_order(line, objects)
    members: list[tuple[str, Binary]] = []
    unknown = []
    for lib in libraries:
        found = by_path.get(_key(lib))
        if not found and _stem(lib) in by_stem:  # named without its directory: a library read elsewhere
            found = by_path.get(_key(by_stem[_stem(lib)]))
        if not found or found[0].member is None:
            unknown.append(lib)
        else:
            members.extend((lib, m) for m in found)
    return _resolve(objects, libraries, unknown, members, line)


def _resolve(
    objects: list[Binary], libraries: list[str], unknown: list[str], members: list[tuple[str, Binary]],
    line: Sequence[LinkInput],
) -> CoffLink:  # fmt: skip
    """The fixed point: take the objects, pull members for what is still unresolved."""
    link = CoffLink(tuple(objects), tuple(libraries), tuple(unknown))
    defined: set[str] = set()
    needed: dict[str, list[Reference]] = {}
    alternates: dict[str, str] = {}
    pulled: list[Binary] = []
    for e in line:
        if e.option.startswith("include:"):
            needed.setdefault(e.option.split(":", 1)[1], []).append(Reference(None, None))
        elif e.option.startswith("alternatename:"):
            source, _eq, target = e.option.split(":", 1)[1].partition("=")
            alternates.setdefault(source, target)

    def take(b: Binary, library: str | None) -> None:
        functions: dict[str, list[str | None]] = {}
        for symbol, function in b.referenced_from:
            functions.setdefault(symbol, []).append(function)
        for directive in b.link_directives:
            option, _colon, argument = directive.partition(":")
            if option.upper() == "/INCLUDE":
                needed.setdefault(argument, []).append(Reference(b, None))
            elif option.upper() == "/ALTERNATENAME":
                source, _eq, target = argument.partition("=")
                alternates.setdefault(source, target)
        for sym in b.symbols:
            if sym.defined:
                defined.add(sym.name)
                if library is not None:
                    link.provider.setdefault(sym.name, library)
                    if b.kind is Kind.IMPORT_LIBRARY and b.soname:
                        link.dll.setdefault(sym.name, b.soname)
            elif sym.binding != Binding.WEAK:
                refs = needed.setdefault(sym.name, [])
                refs.extend(Reference(b, f) for f in functions.get(sym.name) or [None])

    for obj in objects:
        take(obj, None)
    taken: set[int] = set()
    changed = True
    while changed:
        changed = False
        missing = {n for n in needed if n not in defined}
        missing |= {alternates[n] for n in missing if n in alternates}
        for library, member in members:
            if id(member) in taken or not missing:
                continue
            if any(s.defined and s.name in missing for s in member.symbols):
                taken.add(id(member))
                pulled.append(member)
                take(member, library)
                missing = {n for n in missing if n not in defined}
                changed = True
    for name, refs in needed.items():
        if name not in defined and alternates.get(name) not in defined:
            link.unresolved[name] = refs
    return CoffLink(link.objects, link.libraries, link.unknown, link.unresolved, link.provider, link.dll, tuple(pulled))
