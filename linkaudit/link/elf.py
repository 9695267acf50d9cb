"""The ELF static link: which objects and archive members one link combines.

GNU ld (and lld, gold) take loose object files whole and pull an archive member
only when it defines a symbol that is still undefined at that point; an archive
is rescanned until it pulls nothing more (``ld(1)``, "-l namespec"; archives are
not revisited later unless grouped).  This module is pure: it reads the model.

Sources: ``ld(1)``; the System V ABI "Archive File" chapter; GNU ld's
``elf_link_add_archive_symbols``.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..model import Binary, Binding, Kind
from ..records import dataclass

if TYPE_CHECKING:  # the link-line reader (with shlex) is imported only with a link line (start-up)
    from .line import LinkInput

#: ``st_shndx`` of a COMMON symbol (gABI ``SHN_COMMON``).
SHN_COMMON = 0xFFF2


@dataclass(frozen=True, slots=True)
class Definition:
    """One strong or common definition of a global symbol in a relocatable object.

    Attributes:
        name: the symbol name (mangled).
        binary: the object (``binary.member`` set for an archive member).
        section: the section it is defined in (``".text"``, ``"COMMON"``, ``"ABS"``).
        common: a COMMON symbol (tentative definition, ``-fcommon``).
    """

    name: str
    binary: Binary
    section: str
    common: bool


def definitions(binary: Binary) -> list[Definition]:
    """Global definitions of a relocatable object that the linker could find twice.

    Left out: undefined, local and weak symbols, and symbols in COMDAT groups (the linker
    keeps one copy per group signature: inline functions, template instantiations).
    """
    if binary.kind is not Kind.RELOCATABLE:
        return []
    out = []
    names = binary.section_names
    comdat = binary.comdat_sections
    symbol_names, shndx, types = binary.symbols.strong_definition_columns()
    for name, index, kind in zip(symbol_names, shndx, types, strict=True):
        if not name or index in comdat:
            continue
        common = index == SHN_COMMON or kind == 5  # STT_COMMON
        if common:
            section = "COMMON"
        elif index == 0xFFF1:
            section = "ABS"
        else:
            section = names[index] if index < len(names) else f"section {index}"
        out.append(Definition(name, binary, section, common))
    return out


def _key(path: str) -> str:
    """A path's identity for matching link-line entries to inputs: its real path."""
    return os.path.realpath(path)


def pulled(binaries: Sequence[Binary], order: Iterable[LinkInput | str] | None = None) -> list[Binary]:
    """The objects and archive members one link combines, each as often as the link takes it.

    Args:
        binaries: the inputs read (relocatable objects, archive members with ``member``,
            and shared libraries, whose exports satisfy references without being linked in).
        order: the link line's inputs in order; ``None`` takes every loose object, then the
            archives in input order.

    Returns:
        Loose objects whole (once per mention), and the archive members the link pulls —
        a member is pulled when it defines a symbol a strong (not weak) reference still
        needs; an archive is rescanned until it pulls nothing more; a ``--start-group``
        group is rescanned as a whole; ``--whole-archive`` takes every member.
    """
    objects = [b for b in binaries if b.kind in (Kind.RELOCATABLE, Kind.SHARED_LIBRARY, Kind.PYTHON_EXTENSION)]
    by_path: dict[str, list[Binary]] = {}
    for b in objects:
        by_path.setdefault(_key(b.path), []).append(b)
    entries = _link_entries(objects, order)
    link = _Link()
    i = 0
    while i < len(entries):
        entry = entries[i]
        if entry.group:
            group = [e for e in entries[i:] if e.group == entry.group]
            i += len(group)
            link.scan([by_path.get(_key(e.path), []) for e in group if e.path], set())
            continue
        i += 1
        members = by_path.get(_key(entry.path), []) if entry.path else []
        if not members:
            continue
        if members[0].kind is not Kind.RELOCATABLE:
            link.take(members[0], link_in=False)  # a shared library: its exports satisfy references
            continue
        if members[0].member is None:
            link.take(members[0])
            continue
        if entry.whole:
            for member in members:
                link.take(member)
            continue
        link.scan([members], set())
    return link.out


def _link_entries(objects: list[Binary], order: Iterable[LinkInput | str] | None) -> list[LinkInput]:
    """The link line's inputs in order (a bare path as a plain ``LinkInput``); without ``order``,
    every loose relocatable object, then every archive, each once, in input order."""
    from .line import LinkInput

    if order is None:
        loose = [b.path for b in objects if b.member is None and b.kind is Kind.RELOCATABLE]
        archives = [b.path for b in objects if b.member is not None]
        return [LinkInput(p) for p in dict.fromkeys(loose + archives)]
    return [item if isinstance(item, LinkInput) else LinkInput(item) for item in order]


class _Link:
    """The state of one link as :func:`pulled` walks its line: the global symbols defined so far,
    the strong references still undefined, and the objects linked in (in link order)."""

    __slots__ = ("defined", "indexes", "out", "undefined")

    def __init__(self) -> None:
        self.undefined: set[str] = set()
        self.defined: set[str] = set()
        self.out: list[Binary] = []
        self.indexes: dict[int, tuple[list[Binary], dict[str, list[int]]]] = {}  # id(archive) -> it, its index

    def take(self, b: Binary, link_in: bool = True, fresh: list[str] | None = None) -> None:
        """Add ``b``'s global symbols to the link (``link_in``: and ``b`` itself to the output; a
        shared library's exports satisfy references without being linked in). Weak references
        pull no archive member (``ld(1)``), so only strong ones are left undefined; ``fresh``
        collects the names that became undefined."""
        if link_in:
            self.out.append(b)
        defined, undefined = self.defined, self.undefined
        for sym in b.symbols:
            if not sym.name or sym.binding == Binding.LOCAL:
                continue
            if sym.defined:
                defined.add(sym.name)
                undefined.discard(sym.name)
            elif sym.binding != Binding.WEAK and sym.name not in defined and sym.name not in undefined:
                undefined.add(sym.name)  # weak references pull no archive member (ld(1))
                if fresh is not None:
                    fresh.append(sym.name)

    def index(self, members: list[Binary]) -> dict[str, list[int]]:
        """Each name ``members`` define strongly (GLOBAL or GNU_UNIQUE) -> the positions of the
        members defining it, in archive order: the archive symbol table ``ld`` looks names up in
        (System V ABI "Archive File"), built once per archive."""
        cached = self.indexes.get(id(members))
        if cached is not None:
            return cached[1]
        found: dict[str, list[int]] = {}
        for position, member in enumerate(members):
            for name in member.symbols.strong_definition_columns()[0]:
                if name:
                    found.setdefault(name, []).append(position)
        self.indexes[id(members)] = (members, found)  # the list kept alive: its id stays its own
        return found

    def scan(self, archives: list[list[Binary]], taken: set[int]) -> None:
        """Pull from ``archives`` (one archive, or a ``--start-group`` group as a whole) every member
        that defines a still-undefined symbol, rescanning until nothing more is pulled; ``taken``:
        the ids of the members already pulled.

        GNU ld walks the archive symbol table in member order, pulls a member when a name it
        defines is undefined at that point, and walks again while a walk pulled something
        (``elf_link_add_archive_symbols``).  The members pulled, and their order, are those of
        that walk, found without it: a heap of (walk, position, name) for every member defining a
        name that is undefined — the names undefined at the start, then each name a pulled member
        leaves undefined — behind the last pull in this walk, or in the next one.  An entry whose
        name was defined meanwhile is dropped; each name becomes undefined once (a defined name
        stays defined), so the work is linear in the archives' definitions and the pulls.
        """
        members = [m for archive in archives for m in archive]
        where = self.index(archives[0]) if len(archives) == 1 else self._merged(archives)
        heap: list[tuple[int, int, str]] = []
        undefined = self.undefined
        names = undefined if len(undefined) < len(where) else [n for n in where if n in undefined]
        _queue(heap, names, where, 0, 0)
        while heap:
            walk, position, name = heapq.heappop(heap)
            member = members[position]
            if id(member) in taken or name not in undefined:
                continue  # pulled for another name, or the name was defined since
            taken.add(id(member))
            fresh: list[str] = []
            self.take(member, fresh=fresh)
            _queue(heap, fresh, where, walk, position + 1)

    def _merged(self, archives: list[list[Binary]]) -> dict[str, list[int]]:
        """The indexes of a group's archives as one, over the positions of its members end to end."""
        merged: dict[str, list[int]] = {}
        offset = 0
        for archive in archives:
            for name, positions in self.index(archive).items():
                merged.setdefault(name, []).extend(offset + p for p in positions)
            offset += len(archive)
        return merged


def _queue(
    heap: list[tuple[int, int, str]], names: Iterable[str], where: dict[str, list[int]], walk: int, cursor: int
) -> None:
    """Add to ``heap`` the members ``where`` says define ``names``: in this ``walk`` at or after
    ``cursor``, else in the next one."""
    for name in names:
        for at in where.get(name, ()):
            heapq.heappush(heap, (walk if at >= cursor else walk + 1, at, name))
