"""``unresolved-external``: a Windows link (``--link-line`` naming COFF objects) that fails with LNK2019.

The link is emulated by ``linkaudit.link.coff``; the messages are link.exe's own
(``x.obj : error LNK2019: unresolved external symbol S referenced in function F``; ``LNK2001``
where no referencing function is known; ``LNK1120`` for the count), each symbol grouped with the
library its family expects (``rules/data/cuda.toml``) and — the seed's shape — the GPU driver's
import library named where that family's belongs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..context import AuditContext
from ..model import Binary, Kind
from ..report import Finding, Severity
from .base import COFF_ONLY, Rule, preview
from .data import SymbolFamily, driver_index, family_index
from .windows_link import windows_link

if TYPE_CHECKING:  # the COFF link is imported only with a link line (start-up: a plain ELF check)
    from ..link.coff import CoffLink, Reference


def link_exe_line(name: str, ref: Reference) -> str:
    """One line of link.exe's output for a reference to the unresolved ``name``."""
    where = os.path.basename(ref.binary.display_path) if ref.binary is not None else "LINK"
    if ref.function is not None:
        return f"{where} : error LNK2019: unresolved external symbol {name} referenced in function {ref.function}"
    return f"{where} : error LNK2001: unresolved external symbol {name}"


def lld_link_line(name: str, ref: Reference) -> str:
    """lld-link's words for the same reference (``COFF/SymbolTable.cpp``): ``undefined symbol: S``,
    an ``__imp_`` one as ``__declspec(dllimport) S``, then where it is referenced."""
    shown = f"__declspec(dllimport) {name[6:]}" if name.startswith("__imp_") else name
    if ref.binary is None:
        return f"<root>: undefined symbol: {shown}"
    where = os.path.basename(ref.binary.display_path) + (f":({ref.function})" if ref.function else "")
    return f"undefined symbol: {shown} (referenced by {where})"


def _expected(fam: SymbolFamily) -> str:
    """The library a family's symbols come from, in Windows terms: its import library and DLLs."""
    dlls = [p for p in fam.providers if not p.startswith("lib")]
    return f"{fam.name}.lib ({fam.description}: {', '.join(d + '.dll' for d in dlls)})"


def driver_libraries(link: CoffLink, binaries: list[Binary]) -> list[str]:
    """The libraries of the link whose import members all name a GPU driver's DLL and that
    provide none of the link's symbols (``cuda.lib``: ``nvcuda.dll``)."""
    drivers = driver_index()
    dlls: dict[str, set[str]] = {}
    for b in binaries:
        if b.kind is Kind.IMPORT_LIBRARY and b.soname:
            dlls.setdefault(os.path.realpath(b.path), set()).add(b.soname)
    used = {os.path.realpath(p) for p in link.provider.values()}
    out = []
    for library in link.libraries:
        names = dlls.get(os.path.realpath(library))
        if names and all(drivers.is_driver(n) for n in names) and os.path.realpath(library) not in used:
            out.append(library)
    return out


class UnresolvedExternal(Rule):
    id = "unresolved-external"
    formats = COFF_ONLY
    severity = Severity.ERROR
    summary = "a Windows link (--link-line of COFF objects and .lib files) leaves an external unresolved: LNK2019"
    explain = """\
link.exe (and lld-link) take every object of the command line, then pull from the
libraries (static libraries and import libraries) each member that defines a symbol
still unresolved, until nothing more is pulled. A reference that no object and no
library member defines fails the link: "error LNK2019: unresolved external symbol
nvrtcCreateProgram referenced in function f" (LNK2001 when no function is known:
data, /INCLUDE), then "fatal error LNK1120: N unresolved externals".

This is the seed bug's Windows half: the objects call NVRTC, the link line names the
driver's import library (cuda.lib, nvcuda.dll) where nvrtc.lib belongs. Each finding
names the library the symbol's family comes from; a driver import library on the line
that provides none of the link's symbols is named as the likely mix-up. A library the
line names that was not read (kernel32.lib, the CRT) is unknown: while there is one,
the finding is a warning, as that library may define the symbol. Give every library
of the line (or its directory) as an input to make the prediction exact.
"""
    evidence = {
        "symbol": "the unresolved external (decorated, as the objects reference it)",
        "referenced_by": "[{object, function}] every reference (function null: LNK2001)",
        "link_exe": "link.exe's error lines for it",
        "expected_provider": "the import library (and DLLs) the symbol's family comes from, or null",
        "driver_libraries": "driver import libraries on the line that provide nothing",
        "unknown_libraries": "libraries the line names that were not read",
        "unresolved_count": "how many externals the link leaves unresolved (LNK1120)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        link = windows_link(context)
        binaries = list(context.binaries)
        if link is None or not link.unresolved:
            return
        families = family_index()
        drivers = driver_libraries(link, binaries)
        count = len(link.unresolved)
        for name, refs in link.unresolved.items():
            fam = families.classify(name[6:] if name.startswith("__imp_") else name)
            expected = _expected(fam) if fam is not None else None
            yield self._finding(link, name, refs, expected, drivers, count)

    def _finding(
        self, link: CoffLink, name: str, refs: list[Reference], expected: str | None, drivers: list[str], count: int
    ) -> Finding:
        lines = [link_exe_line(name, r) for r in refs]
        words = lines if link.linker.value == "link.exe" else [lld_link_line(name, r) for r in refs]
        message = words[0] + (f" (and {len(lines) - 1} more references)" if len(lines) > 1 else "")
        if link.linker.value == "link.exe":
            message += f"; the link fails with LNK1120: {count} unresolved external{'s' if count != 1 else ''}"
        else:
            message += f"; the link fails ({count} undefined symbol{'s' if count != 1 else ''})"
        if expected is not None:
            message += f"; expected from {expected}"
            if drivers:
                message += (
                    f", but the link line names {preview([os.path.basename(d) for d in drivers])}, the GPU "
                    "driver's import library, which "
                    "provides none of the objects' references: the build system named the driver where "
                    "the family's library belongs"
                )
        if link.unknown:
            message += f"; unless a library that was not read defines it ({preview(list(link.unknown))})"
        first = next((r.binary for r in refs if r.binary is not None), None)
        where = first if first is not None else (link.objects[0] if link.objects else "link line")
        return self.finding(
            where,
            name,
            message,
            {
                "symbol": name,
                "referenced_by": [
                    {"object": r.binary.display_path if r.binary else None, "function": r.function} for r in refs
                ],
                "link_exe": lines,
                "expected_provider": expected,
                "driver_libraries": drivers,
                "unknown_libraries": list(link.unknown),
                "unresolved_count": count,
            },
            Severity.WARNING if link.unknown else Severity.ERROR,
        )
