"""Static-link emulation: which objects and archive members one link combines.

GNU ld (and lld, gold) take loose object files whole and pull an archive member
only when it defines a symbol that is still undefined at that point; an archive
is rescanned until it pulls nothing more (``ld(1)``, "-l namespec"; archives are
not revisited later unless grouped).  This module is pure: it reads the model.

Sources: ``ld(1)``; the System V ABI "Archive File" chapter; GNU ld's
``elf_link_add_archive_symbols``.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .errors import ConfigError
from .model import Binary, Binding, Kind

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
    for sym in binary.symbols.strong_definitions():
        if not sym.name or sym.section in binary.comdat_sections:
            continue
        common = sym.section == SHN_COMMON or int(sym.type) == 5
        if common:
            section = "COMMON"
        elif sym.section == 0xFFF1:
            section = "ABS"
        else:
            section = names[sym.section] if sym.section < len(names) else f"section {sym.section}"
        out.append(Definition(sym.name, binary, section, common))
    return out


class LinkInput(NamedTuple):
    """One input of a link line: an object or archive path, and whether ``--whole-archive`` applies."""

    path: str
    whole: bool = False


def read_link_line(path: str) -> list[LinkInput]:
    """The inputs of a link line, from a response file or a command (``@file`` contents, a
    ``link.txt``, or the ``command`` of ``compile_commands.json``), in order.

    Objects and archives named by path are kept; ``-lNAME`` and ``-l:FILE`` are resolved
    against the ``-L`` directories (and the line's own directory) as ld does — a shared
    ``libNAME.so`` found first means no archive is pulled; ``-Wl,--whole-archive`` ...
    ``--no-whole-archive`` marks archives whose every member is linked. Other options are
    dropped (``--start-group`` rescans are not emulated).

    Raises:
        ConfigError: the file cannot be read or parsed.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(1 << 20)
    except OSError as exc:
        raise ConfigError(f"--link-line {path}: cannot read: {exc.strerror or exc}") from exc
    try:
        tokens = shlex.split(text, comments=False)
    except ValueError as exc:
        raise ConfigError(f"--link-line {path}: cannot parse: {exc}") from exc
    base = os.path.dirname(path)
    search: list[str] = []
    for i, token in enumerate(tokens):  # -L applies to every -l of the line, wherever it stands
        if token == "-L" and i + 1 < len(tokens):
            search.append(os.path.join(base, tokens[i + 1]))
        elif token.startswith("-L") and len(token) > 2:
            search.append(os.path.join(base, token[2:]))
    search.append(base or ".")
    out: list[LinkInput] = []
    whole = False
    skip_next = False
    for token in tokens:
        if skip_next:
            skip_next = False
            continue
        if token in ("-o", "-L", "-T", "-Xlinker", "-soname", "-MF"):
            skip_next = True
            continue
        if token.startswith("-Wl,"):
            for part in token[4:].split(","):
                if part == "--whole-archive":
                    whole = True
                elif part == "--no-whole-archive":
                    whole = False
            continue
        if token.startswith("-l") and len(token) > 2:
            found = _find_library(token[2:], search)
            if found is not None:
                out.append(LinkInput(found, whole))
            continue
        if token.startswith("-"):
            continue
        if token.endswith((".o", ".obj", ".a", ".lo")):
            out.append(LinkInput(os.path.normpath(os.path.join(base, token)), whole))
    return out


def _find_library(spec: str, search: Sequence[str]) -> str | None:
    """``-lNAME`` / ``-l:FILE`` as ld resolves it: the first directory holding ``libNAME.so`` or
    ``libNAME.a`` (shared first); ``None`` for a shared library or nothing found."""
    names = [spec[1:]] if spec.startswith(":") else [f"lib{spec}.so", f"lib{spec}.a"]
    for directory in search:
        for name in names:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return os.path.normpath(candidate) if candidate.endswith(".a") else None
    return None


def pulled(binaries: Sequence[Binary], order: Iterable[LinkInput | str] | None = None) -> list[Binary]:
    """The objects and archive members one link combines.

    Args:
        binaries: the relocatable objects read (archive members carry ``member``).
        order: the link line's inputs in order (paths of objects and archives); ``None``
            takes every loose object, then the archives in input order.

    Returns:
        Loose objects whole, and the archive members the link pulls, in link order.
    """
    objects = [b for b in binaries if b.kind is Kind.RELOCATABLE]
    by_path: dict[str, list[Binary]] = {}
    for b in objects:
        by_path.setdefault(os.path.normpath(b.path), []).append(b)
    if order is None:
        loose = [os.path.normpath(b.path) for b in objects if b.member is None]
        archives = [os.path.normpath(b.path) for b in objects if b.member is not None]
        order = list(dict.fromkeys(loose + archives))
    undefined: set[str] = set()
    defined: set[str] = set()
    out: list[Binary] = []

    def take(b: Binary) -> None:
        out.append(b)
        for sym in b.symbols:
            if not sym.name or sym.binding == Binding.LOCAL:
                continue
            if sym.defined:
                defined.add(sym.name)
                undefined.discard(sym.name)
            elif sym.name not in defined:
                undefined.add(sym.name)

    for item in order:
        entry = item if isinstance(item, LinkInput) else LinkInput(item)
        members = by_path.get(os.path.normpath(entry.path), [])
        if not members:
            continue
        if members[0].member is None:
            take(members[0])
            continue
        if entry.whole:
            for member in members:
                take(member)
            continue
        changed = True
        taken: set[int] = set()
        while changed and undefined:  # rescan the archive until it pulls nothing more
            changed = False
            for i, member in enumerate(members):
                if i in taken:
                    continue
                if any(sym.defined and sym.name in undefined for sym in member.symbols if sym.name):
                    taken.add(i)
                    take(member)
                    changed = True
    return out
