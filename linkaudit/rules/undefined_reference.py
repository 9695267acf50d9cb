"""``undefined-reference``: an ELF link (``--link-line``) that ld refuses: an executable, or a shared
library linked with ``-z defs`` / ``--no-undefined``, whose objects reference a symbol that no
object, archive member or shared library of the line defines.

The objects and archive members come from ``link.elf.pulled`` (ld's archive rule); a shared library
on the line provides its exported dynamic symbols, never those of its own DT_NEEDED libraries (ld
says ``DSO missing from command line``; GNU ld 2.40 reports the reference even with
``--copy-dt-needed-entries`` and ``-rpath-link``, as the differential shows); ``--as-needed``
changes which DT_NEEDED entries are written, never what resolves.  A shared library without ``-z defs`` may leave symbols undefined (no
finding).  Libraries the audit did not read — a ``-l`` in none of the ``-L`` directories, and the
compiler driver's default libraries (libc, libgcc, crt objects) unless ``-nostdlib`` — are unknown:
the findings are then warnings naming them.  Words: GNU ld's ``undefined reference to `sym'`` and
lld's ``undefined symbol: sym`` (``ld(1)`` "-z defs"; lld ``ELF/Relocations.cpp``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..context import AuditContext
from ..link.elf import pulled
from ..model import Binary, Binding, Format, Kind
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule, preview
from .data import SymbolFamily, family_index

DEFAULT_LIBRARIES = "the compiler driver's default libraries (libc, libgcc, crt objects)"
#: Symbols the linker itself defines (GNU ld's default linker scripts and ``elf.c``; lld's
#: ``ELF/Writer.cpp`` ``addReservedSymbols``); ``__start_SEC`` / ``__stop_SEC`` too.
LINKER_DEFINED = frozenset(
    {
        "_GLOBAL_OFFSET_TABLE_", "_DYNAMIC", "__ehdr_start", "__executable_start", "_etext", "etext",
        "_edata", "edata", "_end", "end", "__bss_start", "__dso_handle", "_PROCEDURE_LINKAGE_TABLE_",
        "__init_array_start", "__init_array_end", "__fini_array_start", "__fini_array_end",
        "__preinit_array_start", "__preinit_array_end", "__GNU_EH_FRAME_HDR", "_TLS_MODULE_BASE_",
    }
)  # fmt: skip


def _provided(line_paths: set[str], binaries: list[Binary]) -> set[str]:
    """The names the line's shared libraries export (their DT_NEEDED libraries' not: see above)."""
    on_line = [
        b
        for b in binaries
        if b.format is Format.ELF and b.kind is not Kind.RELOCATABLE and os.path.realpath(b.path) in line_paths
    ]
    return {s.name for b in on_line for s in b.symbols if s.defined and s.binding != Binding.LOCAL}


def _reserved(name: str) -> bool:
    return name in LINKER_DEFINED or name.startswith(("__start_", "__stop_"))


class UndefinedReference(Rule):
    id = "undefined-reference"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "an ELF link (--link-line: an executable, or -shared with -z defs) leaves a symbol undefined"
    explain = """\
ld links an executable only when every reference is defined, and a shared library
too when linked with -z defs (--no-undefined): "undefined reference to `sym'" (lld:
"undefined symbol: sym"). With --link-line, linkaudit takes the line's objects,
the archive members ld would pull and the shared libraries' exported symbols, and
names each reference nothing defines, with the library the symbol's family comes
from. The seed's Linux build, linked with -z defs, fails here: its objects call
nvrtc*, and the line names libcuda.so (the driver) where libnvrtc.so belongs.
Libraries the audit cannot read (a -l found in no -L directory, libc and the other
default libraries of the compiler driver unless -nostdlib) are unknown: the
finding is then a warning naming them.
"""
    evidence = {
        "symbol": "the undefined symbol",
        "referenced_by": "the objects (archive members as archive(member)) referencing it",
        "ld": "GNU ld's words",
        "lld": "lld's words",
        "expected_provider": "the library the symbol's family comes from, or null",
        "unknown_libraries": "libraries of the link the audit did not read",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        line = context.config.link_line
        options = {e.option for e in line}
        paths = {os.path.realpath(e.path) for e in line if e.path}
        binaries = list(context.binaries)
        elf_objects = [b for b in binaries if b.format is Format.ELF and b.kind is Kind.RELOCATABLE]
        if not any(b.member is None and os.path.realpath(b.path) in paths for b in elf_objects):
            return
        if "shared" in options and "defs" not in options:
            return
        linked = [b for b in pulled(binaries, line) if b.format is Format.ELF]
        defined = _provided(paths, binaries)
        defined |= {s.name for b in linked for s in b.symbols if s.defined and s.binding != Binding.LOCAL}
        refs: dict[str, list[Binary]] = {}
        for b in linked:
            for s in b.symbols.iter_undefined():
                if s.name and s.binding == Binding.GLOBAL and s.name not in defined and not _reserved(s.name):
                    refs.setdefault(s.name, []).append(b)
        unknown = [o.split(":", 1)[1] for o in sorted(options) if o.startswith("unknown-library:")]
        unknown += [] if "nostdlib" in options else [DEFAULT_LIBRARIES]
        families = family_index()
        for name, objects in refs.items():
            yield self._finding(name, objects, unknown, families.classify(name))

    def _finding(self, name: str, objects: list[Binary], unknown: list[str], fam: SymbolFamily | None) -> Finding:
        where = [os.path.basename(b.display_path) for b in objects]
        ld = [f"{w}: undefined reference to `{name}'" for w in where]
        lld = f"undefined symbol: {name} (referenced by {preview(where, 3)})"
        message = ld[0] + (f" (and {len(ld) - 1} more objects)" if len(ld) > 1 else "") + "; the link fails"
        expected = None
        if fam is not None:
            providers = [p for p in fam.providers if p.startswith("lib")]
            expected = f"{providers[0].rstrip('*')}.so" if providers else fam.name
            message += f"; expected from {expected} ({fam.description})"
        if unknown:
            message += f"; unless a library that was not read defines it ({preview(unknown, 3)})"
        evidence = {
            "symbol": name,
            "referenced_by": [b.display_path for b in objects],
            "ld": ld,
            "lld": lld,
            "expected_provider": expected,
            "unknown_libraries": unknown,
        }
        return self.finding(objects[0], name, message, evidence, Severity.WARNING if unknown else None)
