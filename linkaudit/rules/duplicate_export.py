"""``duplicate-export``: two libraries of one process export the same strong symbol."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from typing import TYPE_CHECKING

from ..context import AuditContext
from ..loader.ldso import Source
from ..model import Binary, Format, Kind
from ..report import Finding, Severity
from .base import Rule, preview

if TYPE_CHECKING:
    from ..loader.analysis import LinkageAnalysis
    from ..loader.closure import LoadedObject

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


#: Counts of the work ``duplicate_pairs`` did in this process (for the counting tests):
#: ``libraries`` whose export set was read, ``pairs`` of exporters examined (each one shared
#: name of two libraries, counted once per name and pair), ``memberships`` (pair, group) tests.
WORK = {"libraries": 0, "pairs": 0, "memberships": 0}


#: The libraries of each group that are among the paths given: (root or ``None``, those paths).
Groups = Callable[[Set[str]], Iterable[tuple[str | None, Set[str]]]]


def duplicate_pairs(
    libraries: Mapping[str, Binary], groups: Groups
) -> dict[tuple[str, str], tuple[set[str], set[str]]]:
    """The pairs of libraries that share a strong export, and the groups holding both.

    Args:
        libraries: path -> every library that may be in a group (more is harmless).
        groups: gives, for a set of paths, which of them each group (a load's closure, or all
            the inputs) holds, with the group's root.

    Returns:
        (first path, second path), sorted -> (the names both export, without runtime names;
        the roots of the groups that hold both, ``None`` left out) for every pair some group
        holds together.

    One index of exported name -> libraries over the distinct libraries; only names two or
    more libraries export are looked at, and only for the libraries of those pairs are the
    groups asked (cost: the exported names once, plus collisions times the groups).
    """
    names_of: dict[int, frozenset[str]] = {}
    seen: set[str] = set()
    repeated: set[str] = set()
    for lib in libraries.values():
        names = names_of.get(id(lib.symbols))
        if names is None:
            WORK["libraries"] += 1
            names = names_of[id(lib.symbols)] = lib.symbols.strong_export_names()
        repeated |= seen & names  # CPython walks the smaller set
        seen |= names
    repeated = {n for n in repeated if not _runtime(n)}
    exporters: dict[str, list[str]] = {}
    for path, lib in libraries.items():
        for name in names_of[id(lib.symbols)] & repeated:
            exporters.setdefault(name, []).append(path)
    shared: dict[tuple[str, str], set[str]] = {}
    for name, paths in exporters.items():
        ordered = sorted(paths)
        for i, first in enumerate(ordered):
            for second in ordered[i + 1 :]:
                WORK["pairs"] += 1
                shared.setdefault((first, second), set()).add(name)
    if not shared:
        return {}
    member_of: dict[str, set[int]] = {}
    roots: list[str | None] = []
    for index, (root, held) in enumerate(groups({path for pair in shared for path in pair})):
        roots.append(root)
        for path in held:
            member_of.setdefault(path, set()).add(index)
    out: dict[tuple[str, str], tuple[set[str], set[str]]] = {}
    for (first, second), symbols in shared.items():
        a, b = member_of.get(first, set()), member_of.get(second, set())
        WORK["memberships"] += min(len(a), len(b))
        together = a & b
        if together:
            out[(first, second)] = (symbols, {root for root in (roots[i] for i in together) if root is not None})
    return out


def _load_groups(linkage: LinkageAnalysis) -> tuple[dict[str, Binary], Groups]:
    """The libraries of the loads (the package's own: not found in the system directories or
    the cache) and the groups of each load, for ``duplicate_pairs``."""
    system_dirs = set(linkage.system_dirs)
    libraries: dict[str, Binary] = {}
    known: set[str] = set()
    for part in linkage.parts():  # each shared part once: the libraries are what the loads hold
        for obj in part.objects():
            if obj.path in known:
                continue
            known.add(obj.path)
            if obj.binary.kind in _KINDS and obj.path.rsplit("/", 1)[0] not in system_dirs:
                libraries[obj.path] = obj.binary

    def own(obj: LoadedObject) -> bool:
        return obj.source not in (Source.CACHE, Source.SYSTEM, Source.POLICY)

    def groups(paths: Set[str]) -> Iterable[tuple[str | None, Set[str]]]:
        wanted = paths & libraries.keys()
        for load in linkage.loads:
            found = {p: obj for p in wanted if (obj := load.object(p)) is not None}  # O(wanted x parts)
            held = {
                p
                for p, obj in found.items()
                if own(obj)
                or any(o.path == p and own(o) for o in load.iter_objects())  # a second copy, found otherwise
            }
            yield load.root, held

    return libraries, groups


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
        linkage = context.linkage
        if linkage is not None and linkage.loads:
            libraries, groups = _load_groups(linkage)
        else:
            # ELF only: a PE import names its DLL (and Mach-O's two-level namespace its dylib), so a
            # second definition elsewhere interposes on nothing.
            libraries = {}
            for b in context.binaries:
                if b.kind in _KINDS and b.format is Format.ELF:
                    libraries.setdefault(b.path, b)

            def groups(paths: Set[str]) -> Iterable[tuple[str | None, Set[str]]]:
                return [(None, paths & libraries.keys())]

        pairs = duplicate_pairs(libraries, groups)
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
