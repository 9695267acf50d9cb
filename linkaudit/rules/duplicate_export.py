"""``duplicate-export``: two libraries of one process export the same strong symbol."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..loader.ldso import Source
from ..model import Binary, Format, Kind
from ..report import Finding, Severity
from .base import Rule, preview

_KINDS = (Kind.SHARED_LIBRARY, Kind.PYTHON_EXTENSION)
#: The C and C++ runtimes' names (statically linked libstdc++/libgcc pieces appear in many
#: libraries and are harmless duplicates): reserved ``__`` names, ``std::``, ``__gnu_cxx::``,
#: ``__cxxabiv1::`` (Itanium mangling: _ZSt, _ZNSt, _ZNKSt, _ZTISt/_ZTSSt/_ZTVSt, _ZN9__gnu_cxx...).
RUNTIME_PREFIXES = (
    "__", "_ZSt", "_ZNSt", "_ZNKSt", "_ZTISt", "_ZTSSt", "_ZTVSt", "_ZTTSt", "_ZNSs", "_ZNKSs", "_ZNSi", "_ZNSo",
    "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx", "_ZN10__cxxabiv1", "_ZTIN10__cxxabiv1", "_ZGVZNSt", "_ZGVNSt",
)  # fmt: skip


def exports(binary: Binary) -> frozenset[str]:
    """Strong, unversioned, default-visibility functions and objects a library exports.

    Left out, as not meant to be unique or not ours to judge: weak and GNU_UNIQUE
    symbols (vague linkage: inline functions, template instances, typeinfo), symbols
    with a version (a versioned interface is shared on purpose), and the C and C++
    runtimes' names (``RUNTIME_PREFIXES``, ``_init``/``_fini``).
    """
    return frozenset(n for n in binary.symbols.strong_export_names() if not _runtime(n))


def _runtime(name: str) -> bool:
    """A name of the C or C++ runtime (see ``RUNTIME_PREFIXES``)."""
    return name.startswith(RUNTIME_PREFIXES) or name in ("_init", "_fini", "_edata", "_end", "_etext")


class DuplicateExport(Rule):
    id = "duplicate-export"
    severity = Severity.WARNING
    summary = "two libraries of one process export the same strong symbol (one static archive linked into both?)"
    explain = """\
When two shared libraries loaded into one process both export the same strong
global function or object, the dynamic linker binds every reference to the first
copy in lookup order — while each library's own calls (with -Bsymbolic or
protected visibility) may still use its own copy. State kept in such a symbol is
then split between the copies: the classic sign of one static archive (NCCL,
protobuf, a logging library) linked into two libraries. Link the archive into
one library and make the other depend on it, or hide the archive's symbols
(-Wl,--exclude-libs,ALL, a version script).

Checked within each import root's closure (the loader emulation), among the
package's own libraries (not those found in the system directories or the
cache); without the loader, among the shared libraries given. Weak and unique
symbols (vague linkage), versioned interfaces and runtime names (starting with
"__") are not counted.
"""
    evidence = {
        "libraries": "the libraries exporting the symbols",
        "symbols": "the symbols exported by both",
        "count": "how many",
        "roots": "the import roots whose closure holds both",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        groups: list[tuple[str | None, list[Binary]]] = []
        linkage = context.linkage
        if linkage is not None and linkage.loads:
            for load in linkage.loads:
                libs = [
                    o.binary
                    for o in load.objects
                    if o.binary.kind in _KINDS
                    and o.source not in (Source.CACHE, Source.SYSTEM)
                    and o.path.rsplit("/", 1)[0] not in linkage.system_dirs
                ]
                groups.append((load.root, libs))
        else:
            # ELF only: a PE import names its DLL (and Mach-O's two-level namespace its dylib), so a
            # second definition elsewhere interposes on nothing.
            groups.append((None, [b for b in context.binaries if b.kind in _KINDS and b.format is Format.ELF]))
        pairs: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
        cache: dict[int, frozenset[str]] = {}

        def names_of(lib: Binary) -> frozenset[str]:
            found = cache.get(id(lib.symbols))
            if found is None:
                # unfiltered here: the runtime names are dropped from the (small) intersections
                found = cache[id(lib.symbols)] = lib.symbols.strong_export_names()
            return found

        for root, libs in groups:
            distinct = list({lib.path: lib for lib in libs}.values())
            for i, first_lib in enumerate(distinct):
                first_names = names_of(first_lib)
                if not first_names:
                    continue
                for second_lib in distinct[i + 1 :]:
                    shared = {n for n in first_names & names_of(second_lib) if not _runtime(n)}
                    if not shared:
                        continue
                    first, second = sorted((first_lib.path, second_lib.path))
                    symbols, roots = pairs.setdefault((first, second), (set(), set()))
                    symbols |= shared
                    if root is not None:
                        roots.add(root)
        for (first, second), (symbols, roots) in sorted(pairs.items()):
            exported = sorted(symbols)
            yield self.finding(
                second,
                first,
                f"{second} and {first} both export {len(exported)} strong symbol{'s' if len(exported) != 1 else ''} "
                f"({preview(exported, 4)}): every reference binds to one copy while each library may use "
                "its own — one static archive linked into both?",
                {"libraries": [first, second], "symbols": exported, "count": len(exported), "roots": sorted(roots)},
            )
