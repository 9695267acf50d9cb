"""Windows static-link emulation: which externals a link.exe / lld-link link of COFF objects and
libraries leaves unresolved (LNK2019 / LNK2001), which it defines twice (LNK2005), and which
library (and DLL) provides each symbol.

The link takes every object of the line whole; a library member (a COFF object of a static
library, or one symbol's short import member, with its ``__imp_`` twin) is pulled when it defines
a symbol still unresolved, its own references then searched for in turn.  Where several libraries
define a symbol the two linkers part ways:

* **link.exe** (Microsoft "LINK input files"; the default): the libraries are searched in
  command-line order with wrap-around — a symbol left unresolved when an object is brought in
  from a library is searched for in that library first, then in the following libraries, then
  from the start of the line, until a whole round pulls nothing;
* **lld-link** (``COFF/SymbolTable.cpp``; llvm-project PR 85290): a symbol is taken from the first
  library of the line (in the order libraries were added) that defines it.

Libraries searched: the line's libraries, then its ``/DEFAULTLIB`` options, then each object's
``/DEFAULTLIB`` directives as the object is loaded, less ``/NODEFAULTLIB`` (the line's or an
object's; every one, or those named).  A library the audit did not read (``kernel32.lib``, the
CRT) is *unknown*: anything it may define is not proven missing.  ``/INCLUDE`` (line or
directive) makes a symbol a reference; ``/ALTERNATENAME:from=to`` sends ``from`` to ``to``.  A
weak external (``IMAGE_SYM_CLASS_WEAK_EXTERNAL``) resolves to its alternate when nothing defines
it; link.exe searches the libraries for the weak symbol itself only when its aux record says
``IMAGE_WEAK_EXTERN_SEARCH_LIBRARY``, lld-link never (a weak alias never pulls a lazy member).

Duplicates follow the COMDAT selection of the sections holding the definitions (Microsoft PE/COFF
specification, "COMDAT Sections"; lld's ``handleComdatSelection``): ``ANY`` and ``LARGEST`` keep
one copy; ``NODUPLICATES`` is a duplicate; ``SAME_SIZE`` and ``EXACT_MATCH`` are when size (and
checksum) differ; ``ASSOCIATIVE`` follows its section's; two selections that differ are a
duplicate except ANY with LARGEST or EXACT_MATCH; a COMDAT beside a plain definition is one.

Pure: it reads the model and the parsed link line, nothing else.
"""

from __future__ import annotations

import bisect
import enum
import os
from collections.abc import Sequence
from dataclasses import field

from ..model import Binary, Binding, ComdatSection, Format, Kind
from ..records import dataclass
from .line import LinkInput

#: ``IMAGE_WEAK_EXTERN_SEARCH_LIBRARY``: link.exe searches the libraries for the weak symbol.
SEARCH_LIBRARY = 2
#: ``IMAGE_COMDAT_SELECT_*``.
NODUPLICATES, ANY, SAME_SIZE, EXACT_MATCH, ASSOCIATIVE, LARGEST = 1, 2, 3, 4, 5, 6
SELECTION_NAMES = {1: "NODUPLICATES", 2: "ANY", 3: "SAME_SIZE", 4: "EXACT_MATCH", 5: "ASSOCIATIVE", 6: "LARGEST"}


class Linker(enum.Enum):
    """Whose library search order the link follows."""

    LINK_EXE = "link.exe"
    LLD_LINK = "lld-link"


@dataclass(frozen=True, slots=True)
class Reference:
    """Where a reference comes from: an object (``binary.display_path``) and, when a relocation
    shows it, the function making it; ``binary`` ``None`` for ``/INCLUDE`` on the line."""

    binary: Binary | None
    function: str | None


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A symbol the link defines twice (LNK2005): the definition kept first and the one after.

    Attributes:
        name: the symbol (decorated).
        first: the object (or library member) whose definition the link took first.
        second: the one defining it again.
        sections: the sections of the two definitions (``".text$mn"``, ``"ABS"``).
        why: what makes it a duplicate: ``"defined twice"``, ``"NODUPLICATES COMDAT"``, ``"SAME_SIZE
            COMDAT of 4 and 8 bytes"``, ``"EXACT_MATCH COMDAT with different contents"``,
            ``"COMDAT selections ANY and NODUPLICATES"``, ``"a COMDAT and a plain definition"``.
    """

    name: str
    first: Binary
    second: Binary
    why: str
    sections: tuple[str, str] = ("", "")


@dataclass(frozen=True, slots=True)
class CoffLink:
    """The outcome of one emulated link.

    Attributes:
        linker: whose search order was followed.
        objects: the objects of the line, in order.
        libraries: the libraries searched (path or name as found), in search order.
        unknown: the libraries the audit did not read, in search order.
        unresolved: each unresolved external and every reference to it, in first-reference order.
        provider: for each resolved symbol a library member provides, the library (its path).
        dll: for each symbol an import member provides, the DLL.
        pulled: the library members the link pulls (static-library objects, import records), in order.
        duplicates: the symbols defined twice, in the order the second definitions were loaded.
    """

    linker: Linker
    objects: tuple[Binary, ...]
    libraries: tuple[str, ...]
    unknown: tuple[str, ...]
    unresolved: dict[str, list[Reference]] = field(default_factory=dict)
    provider: dict[str, str] = field(default_factory=dict)
    dll: dict[str, str] = field(default_factory=dict)
    pulled: tuple[Binary, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()


def has_coff_objects(binaries: Sequence[Binary], line: Sequence[LinkInput]) -> bool:
    """True when the link line names at least one COFF object among ``binaries``."""
    paths = {_key(e.path) for e in line if e.path}
    return any(
        b.format is Format.COFF and b.kind is Kind.RELOCATABLE and b.member is None and _key(b.path) in paths
        for b in binaries
    )


def _key(path: str) -> str:
    return os.path.realpath(path)


def _stem(name: str) -> str:
    base = os.path.basename(name.replace("\\", "/")).lower()
    return base[:-4] if base.endswith(".lib") else base[:-2] if base.endswith(".a") else base


@dataclass(frozen=True, slots=True)
class _Unit:
    """What one pull brings in: a static library's object, or one import member's symbols."""

    library: str
    binary: Binary
    names: tuple[str, ...]


class _Library:
    """One library of the search: its units by the symbols they define (first unit wins, as the
    linker member lists them); ``known`` False for a library the audit did not read."""

    def __init__(self, name: str, members: Sequence[Binary] | None) -> None:
        self.name = name
        self.known = members is not None
        self.index: dict[str, _Unit] = {}
        for b in members or ():
            if b.kind is Kind.IMPORT_LIBRARY:
                self._imports(b)
            else:
                unit = _Unit(name, b, tuple(s.name for s in b.symbols if s.defined))
                for n in unit.names:
                    self.index.setdefault(n, unit)

    def _imports(self, b: Binary) -> None:
        """Each symbol of a folded import record with its ``__imp_`` twin, as one member defines them."""
        names = {s.name for s in b.symbols if s.defined}
        for n in names:
            base = n[6:] if n.startswith("__imp_") else n
            twins = tuple(t for t in (base, "__imp_" + base) if t in names)
            self.index.setdefault(n, _Unit(self.name, b, twins))


class _Link:
    """The state of one emulated link: what is defined, what is needed, the libraries in order."""

    def __init__(self, linker: Linker, line: Sequence[LinkInput], by_path: dict[str, list[Binary]]) -> None:
        self.linker = linker
        self.by_path = by_path
        self.by_stem = {_stem(p): p for p in by_path}
        self.defined: dict[str, Binary] = {}
        self.needed: dict[str, list[Reference]] = {}
        self._needed_at: dict[str, int] = {}  # name -> its place in ``needed``
        self.searchable: dict[str, None] = {}  # needed names a library may be searched for, in order
        self.alternates: dict[str, str] = {}
        self.weak: dict[str, tuple[str, int]] = {}
        self.loaded: list[Binary] = []
        self.pulled: list[Binary] = []
        self.taken: set[int] = set()
        self.provider: dict[str, str] = {}
        self.dll: dict[str, str] = {}
        options = [e.option for e in line]
        self.no_defaults = "nodefaultlib" in options
        self.dropped = {_stem(o.split(":", 1)[1]) for o in options if o.startswith("nodefaultlib:")}
        self.libraries: list[_Library] = []
        self.defined_by: dict[str, list[int]] = {}  # name -> positions of the libraries whose index has it
        self.seen: set[str] = set()
        for e in line:
            if e.path and e.path.lower().endswith((".lib", ".a")):  # .dll.a: a GNU import library
                self.add_library(e.path, default=False)
        for e in line:
            if e.option.startswith("defaultlib:"):
                self.add_library(e.option.split(":", 1)[1], default=True)
            elif e.option.startswith("include:"):
                self.need(e.option.split(":", 1)[1], Reference(None, None))
            elif e.option.startswith("alternatename:"):
                source, _eq, target = e.option.split(":", 1)[1].partition("=")
                self.alternates.setdefault(source, target)

    def add_library(self, name: str, default: bool) -> None:
        """Append a library to the search (a default library unless ``/NODEFAULTLIB`` drops it;
        each library once, names compared case-insensitively, with or without ``.lib``)."""
        stem = _stem(name)
        if stem in self.seen or (default and (self.no_defaults or stem in self.dropped)):
            return
        self.seen.add(stem)
        path = name if not default or name.lower().endswith(".lib") else name + ".lib"
        found = self.by_path.get(_key(path))
        if not found and stem in self.by_stem:  # named without its directory: a library read elsewhere
            found = self.by_path[self.by_stem[stem]]
        members = found if found and found[0].member is not None else None
        library = _Library(path, members)
        for n in library.index:  # the libraries defining each name, by position (ascending)
            self.defined_by.setdefault(n, []).append(len(self.libraries))
        self.libraries.append(library)

    def need(self, name: str, ref: Reference, searchable: bool = True) -> None:
        if name not in self.needed:
            self._needed_at[name] = len(self._needed_at)
        self.needed.setdefault(name, []).append(ref)
        if searchable and name not in self.defined:
            self.searchable[name] = None

    def load(self, b: Binary, unit: _Unit | None = None) -> None:
        """Bring in an object (or a library unit): its definitions, references and directives."""
        if unit is not None:
            if id(b) not in self.taken:
                self.taken.add(id(b))
                self.pulled.append(b)
            for n in unit.names:
                self.provider.setdefault(n, unit.library)
                if b.soname:  # an import member, or a GNU import library's object
                    self.dll.setdefault(n, b.soname)
                self.defined.setdefault(n, b)
            if b.kind is Kind.IMPORT_LIBRARY:
                return
        self.loaded.append(b)
        self._directives(b)
        for sym in b.symbols:
            if sym.defined:
                self.defined.setdefault(sym.name, b)
        weak = {w.name: (w.alternate, w.search) for w in b.weak_externals}
        functions: dict[str, list[str | None]] = {}
        for symbol, function in b.referenced_from:
            functions.setdefault(symbol, []).append(function)
        for sym in b.symbols:
            if sym.defined:
                continue
            if sym.name in weak:
                self.weak.setdefault(sym.name, weak[sym.name])
                alternate, search = weak[sym.name]
                self.need(alternate, Reference(b, None))
                if search == SEARCH_LIBRARY and self.linker is Linker.LINK_EXE and sym.name not in self.defined:
                    self.searchable[sym.name] = None
            elif sym.binding != Binding.WEAK:
                for f in functions.get(sym.name) or [None]:
                    self.need(sym.name, Reference(b, f))

    def _directives(self, b: Binary) -> None:
        for directive in b.link_directives:
            option, _colon, argument = directive.partition(":")
            option = option.upper()
            if option == "/INCLUDE":
                self.need(argument, Reference(b, None))
            elif option == "/ALTERNATENAME":
                source, _eq, target = argument.partition("=")
                self.alternates.setdefault(source, target)
            elif option == "/NODEFAULTLIB":
                if argument:
                    self.dropped.add(_stem(argument))
                else:
                    self.no_defaults = True
        for directive in b.link_directives:
            if directive.upper().startswith("/DEFAULTLIB:"):
                self.add_library(directive.split(":", 1)[1], default=True)

    def missing(self) -> list[str]:
        """The names still to be searched for: undefined, searchable, with ``/ALTERNATENAME`` targets.

        Names once defined stay defined: ``searchable`` is pruned of them as it is read, so a search
        of N rounds over N libraries costs N x N lookups of the few names still missing, not N x N x
        every name ever needed (a chain of 2,000 one-object libraries: 221 s)."""
        defined = self.defined
        out = [n for n in self.searchable if n not in defined]
        if len(out) < len(self.searchable):
            self.searchable = dict.fromkeys(out)
        if self.alternates:
            if len(self.alternates) < len(self.needed):  # the CRT's few dozen /ALTERNATENAMEs, in needed order
                order = self.needed
                named = sorted((n for n in self.alternates if n in order and n not in defined), key=self._position)
            else:
                named = [n for n in self.needed if n in self.alternates and n not in defined]
            out += [self.alternates[n] for n in named]
        return [n for n in dict.fromkeys(out) if n not in defined]

    def _position(self, name: str) -> int:
        """Where ``name`` was first needed (``needed``'s insertion order)."""
        return self._needed_at[name]

    def scan(self, library: _Library) -> bool:
        """Pull from ``library`` until it defines nothing more that is missing; True if it pulled."""
        pulled = False
        while True:
            units = [library.index[n] for n in self.missing() if n in library.index]
            if not units:
                return pulled
            for unit in units:
                if not all(n in self.defined for n in unit.names):
                    self.load(unit.binary, unit)
                    pulled = True

    def search(self) -> None:
        """Pull library members in the linker's order until nothing more is pulled."""
        if self.linker is Linker.LLD_LINK:
            while True:
                units = []
                for n in self.missing():
                    at = self.defined_by.get(n)
                    if at:  # the first library of the line that defines it
                        units.append(self.libraries[at[0]].index[n])
                if not units:
                    return
                for unit in units:
                    if not all(n in self.defined for n in unit.names):
                        self.load(unit.binary, unit)
        position, idle = 0, 0
        while self.libraries and idle < len(self.libraries):  # one whole round pulling nothing ends it
            count = len(self.libraries)
            # the libraries before the next that defines a missing name pull nothing: passed over at
            # once, each counted idle, as a visit would (a chain of N libraries: N rounds of N visits)
            gap = self._to_next_pull(position, count)
            if gap is None or idle + gap >= count:
                return
            idle += gap
            position = (position + gap) % count
            idle = 1 if self.scan(self.libraries[position]) else idle + 1
            position = (position + 1) % len(self.libraries)

    def _to_next_pull(self, position: int, count: int) -> int | None:
        """How many libraries from ``position`` (of the first ``count``, cyclically) come before the
        first whose index defines a missing name (0: this one), or ``None`` when none does."""
        best: int | None = None
        for n in self.missing():
            at = self.defined_by.get(n)
            if not at:
                continue
            i = bisect.bisect_left(at, position)
            if i < len(at) and at[i] < count:
                gap = at[i] - position
            elif at[0] < count:
                gap = at[0] + count - position
            else:
                continue
            if best is None or gap < best:
                best = gap
                if gap == 0:
                    break
        return best

    def unresolved(self) -> dict[str, list[Reference]]:
        out: dict[str, list[Reference]] = {}
        for name, refs in self.needed.items():
            if name in self.defined or self.alternates.get(name) in self.defined:
                continue
            out[name] = refs
        return out


def link_coff(binaries: Sequence[Binary], line: Sequence[LinkInput], linker: Linker | None = None) -> CoffLink:
    """Emulate the link of ``line`` over the inputs read (``binaries``).

    Args:
        binaries: every binary read: the line's objects, and the members of its libraries.
        line: the parsed link line (``link.line.read_link_line``).
        linker: whose library search order to follow; ``None``: the line's ``linker:NAME`` option
            entry (``--linker``), else link.exe's.

    Returns:
        The ``CoffLink``: unresolved externals with their references, duplicates, providers,
        unknown libraries.
    """
    if linker is None:
        named = [e.option.split(":", 1)[1] for e in line if e.option.startswith("linker:")]
        linker = Linker(named[-1]) if named else Linker.LINK_EXE
    by_path: dict[str, list[Binary]] = {}
    for b in binaries:
        if b.format is Format.COFF:
            by_path.setdefault(_key(b.path), []).append(b)
    state = _Link(linker, line, by_path)
    objects = [m for e in line if e.path for m in by_path.get(_key(e.path), []) if m.member is None]
    for obj in objects:
        state.load(obj)
    state.search()
    return CoffLink(
        linker,
        tuple(objects),
        tuple(lib.name for lib in state.libraries),
        tuple(lib.name for lib in state.libraries if not lib.known),
        state.unresolved(),
        state.provider,
        state.dll,
        tuple(state.pulled),
        tuple(duplicates(state.loaded)),
    )


def _definitions(b: Binary) -> list[tuple[str, str, ComdatSection | None]]:
    """The external definitions of an object that may clash: not common, not weak, each with its
    section's name and COMDAT (an ``ASSOCIATIVE`` one replaced by the section it goes with)."""
    comdats = {c.section: c for c in b.comdats}
    names = b.section_names
    out = []
    for sym in b.symbols.strong_definitions():
        if not sym.name or sym.section == 0xFFF2 or sym.name.startswith("."):
            continue
        comdat = comdats.get(sym.section)
        for _ in range(8):  # an associative chain, bounded
            if comdat is None or comdat.selection != ASSOCIATIVE:
                break
            comdat = comdats.get(comdat.associated)
        where = "ABS" if sym.section == 0xFFF1 else names[sym.section] if sym.section < len(names) else ""
        out.append((sym.name, where, comdat))
    return out


def clash(first: ComdatSection | None, second: ComdatSection | None) -> str | None:
    """Why two definitions of one symbol fail the link, or ``None`` when the linker keeps one."""
    if first is None and second is None:
        return "defined twice"
    if first is None or second is None:
        return "a COMDAT and a plain definition"
    a, b = first.selection, second.selection
    if a != b:
        if {a, b} in ({ANY, LARGEST}, {ANY, EXACT_MATCH}):
            return None
        return f"COMDAT selections {SELECTION_NAMES.get(a, a)} and {SELECTION_NAMES.get(b, b)}"
    if a == NODUPLICATES:
        return "NODUPLICATES COMDAT"
    if a == SAME_SIZE and first.size != second.size:
        return f"SAME_SIZE COMDAT of {first.size} and {second.size} bytes"
    if a == EXACT_MATCH and (first.size, first.checksum) != (second.size, second.checksum):
        return "EXACT_MATCH COMDAT with different contents"
    return None


def duplicates(loaded: Sequence[Binary]) -> list[Duplicate]:
    """The LNK2005 duplicates among the objects a link loads, in load order (each name once)."""
    first: dict[str, tuple[Binary, str, ComdatSection | None]] = {}
    out: list[Duplicate] = []
    reported: set[str] = set()
    for b in loaded:
        for name, section, comdat in _definitions(b):
            if name not in first:
                first[name] = (b, section, comdat)
                continue
            leader, leader_section, leader_comdat = first[name]
            why = clash(leader_comdat, comdat)
            if why is not None and name not in reported:
                reported.add(name)
                out.append(Duplicate(name, leader, b, why, (leader_section, section)))
    return out
