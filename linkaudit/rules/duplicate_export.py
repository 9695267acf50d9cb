"""``duplicate-export``: two or more libraries of one process export the same strong symbols (one
finding per set of libraries, not per pair)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from typing import TYPE_CHECKING, TypeVar

from ..context import AuditContext
from ..loader.ldso import Source
from ..model import Binary, Format, Kind
from ..report import Finding, Severity
from .base import Rule, preview

if TYPE_CHECKING:
    from ..loader.analysis import LinkageAnalysis
    from ..loader.closure import Load, LoadedObject

_KINDS = (Kind.SHARED_LIBRARY, Kind.PYTHON_EXTENSION)
#: The C and C++ runtimes' names (statically linked libstdc++/libgcc pieces appear in many
#: libraries and are harmless duplicates): reserved ``__`` names, ``std::``, ``__gnu_cxx::``,
#: ``__cxxabiv1::`` (Itanium mangling: _ZSt, _ZNSt, _ZNKSt, _ZTISt/_ZTSSt/_ZTVSt, _ZN9__gnu_cxx...).
RUNTIME_PREFIXES = (
    "__", "_ZSt", "_ZNSt", "_ZNKSt", "_ZTISt", "_ZTSSt", "_ZTVSt", "_ZTTSt", "_ZNSs", "_ZNKSs", "_ZNSi", "_ZNSo",
    "_ZN9__gnu_cxx", "_ZNK9__gnu_cxx", "_ZN10__cxxabiv1", "_ZTIN10__cxxabiv1", "_ZGVZNSt", "_ZGVNSt",
)  # fmt: skip
#: The Itanium C++ ABI's special names of vague linkage, meant to exist once per library that
#: uses them and to be merged by the loader's binding ("Vague Linkage", Itanium C++ ABI §5.2;
#: mangling §5.1.4): typeinfo (_ZTI), typeinfo name (_ZTS), vtable (_ZTV), VTT (_ZTT),
#: construction vtable (_ZTC), guard variable (_ZGV), reference temporary (_ZGR), a local static
#: of an inline function (_ZZ), thread_local init and wrapper (_ZTH, _ZTW).  Builds without
#: -fvisibility-inlines-hidden or GNU_UNIQUE export them as plain strong symbols from every
#: C++ library: the copy the loader binds first is the one all share, by design.
VAGUE_LINKAGE_PREFIXES = ("_ZTI", "_ZTS", "_ZTV", "_ZTT", "_ZTC", "_ZGV", "_ZGR", "_ZZ", "_ZTH", "_ZTW")


def exports(binary: Binary) -> frozenset[str]:
    """Strong, unversioned, default-visibility functions and objects a library exports.

    Left out, as not meant to be unique or not ours to judge: weak and GNU_UNIQUE
    symbols (vague linkage: inline functions, template instances, typeinfo), symbols
    with a version (a versioned interface is shared on purpose), the C and C++
    runtimes' names (``RUNTIME_PREFIXES``, ``_init``/``_fini``) and C++ special names of
    vague linkage exported as strong symbols (``VAGUE_LINKAGE_PREFIXES``).
    """
    return frozenset(n for n in binary.symbols.strong_export_names() if not _runtime(n))


def _runtime(name: str) -> bool:
    """A name of the C or C++ runtime (see ``RUNTIME_PREFIXES``), or a C++ name of vague linkage
    (``VAGUE_LINKAGE_PREFIXES``)."""
    return (
        name.startswith(RUNTIME_PREFIXES)
        or name.startswith(VAGUE_LINKAGE_PREFIXES)
        or name in ("_init", "_fini", "_edata", "_end", "_etext")
    )


#: Counts of the work ``duplicate_sets`` did in this process (for the counting tests):
#: ``libraries`` whose export set was read, ``sets`` of exporters examined (the distinct sets of
#: libraries exporting one name), ``memberships`` (library, group) tests, ``decoded`` export names
#: decoded after the hash filter (``_export_names``).
WORK = {"libraries": 0, "sets": 0, "memberships": 0, "decoded": 0}


#: The libraries of each group that are among the paths given: (root or ``None``, those paths).
Groups = Callable[[Set[str]], Iterable[tuple[str | None, Set[str]]]]


def _exporter_sets(libraries: Mapping[str, Binary]) -> dict[tuple[str, ...], set[str]]:
    """The sets of two or more libraries (sorted paths) that export one name, each with the names
    (runtime names left out) exactly that set exports: one index of name -> libraries."""
    names_of = _export_names(libraries)
    # per library: two paths may share one table (copies of one content read once: formats.copies)
    repeated = {n for n in _repeated(names_of[id(lib.symbols)] for lib in libraries.values()) if not _runtime(n)}
    exporters: dict[str, list[str]] = {}
    for path in sorted(libraries):
        for name in names_of[id(libraries[path].symbols)] & repeated:
            exporters.setdefault(name, []).append(path)
    sets: dict[tuple[str, ...], set[str]] = {}
    for name, paths in exporters.items():
        sets.setdefault(tuple(paths), set()).add(name)
    return sets


_H = TypeVar("_H")


def _repeated(groups: Iterable[Set[_H]]) -> set[_H]:
    """The items that stand in two or more of ``groups`` (one pass; CPython intersects with the smaller set)."""
    seen: set[_H] = set()
    repeated: set[_H] = set()
    for group in groups:
        repeated |= seen & group
        seen |= group
    return repeated


def _export_names(libraries: Mapping[str, Binary]) -> dict[int, frozenset[str]]:
    """Per distinct symbol table (``id``), its strong export names that may be exported elsewhere too.

    When every table has a ``DT_GNU_HASH`` chain covering its exports, the exports' stored hashes are
    compared first (C speed, no name decoded: ``SymbolTable.strong_export_keys``) and only the names
    whose hash two or more tables store are decoded — a name two libraries export has the same hash
    in both, so no shared name is lost (as for ld.so, a table whose stored hashes lie about its names
    is read as it reads it).  Otherwise every strong export name is decoded.
    """
    tables: dict[int, Binary] = {}
    for lib in libraries.values():
        tables.setdefault(id(lib.symbols), lib)
    WORK["libraries"] += len(tables)
    if len(libraries) < 2:
        return {i: frozenset() for i in tables}  # nothing to share a name with
    keys = {i: lib.symbols.strong_export_keys() for i, lib in tables.items()}
    if any(k is None for k in keys.values()):
        return {i: lib.symbols.strong_export_names() for i, lib in tables.items()}
    key_sets = {i: frozenset(k or ()) for i, k in keys.items()}
    # per library, as for the names
    repeated = _repeated(key_sets[id(lib.symbols)] for lib in libraries.values())
    out = {i: lib.symbols.strong_export_names(among=repeated) for i, lib in tables.items()}
    WORK["decoded"] += sum(map(len, out.values()))
    return out


def duplicate_sets(libraries: Mapping[str, Binary], groups: Groups) -> dict[tuple[str, ...], tuple[set[str], set[str]]]:
    """The libraries that share strong exports within some group, grouped by name set.

    Args:
        libraries: path -> every library that may be in a group (more is harmless).
        groups: gives, for a set of paths, which of them each group (a load's closure, or all
            the inputs) holds, with the group's root.

    Returns:
        the libraries (sorted paths, two or more) exporting some names that a group holds two or
        more of -> (those names, runtime names left out; the roots of the groups holding two or
        more of them, ``None`` left out).  Names exported by the same libraries are one entry:
        N libraries exporting one name give one entry of N, not N(N-1)/2 pairs.

    Cost: the exported names once, plus, per distinct set of exporters, its libraries times
    the groups each is in; never a loop over pairs.
    """
    sets = _exporter_sets(libraries)
    if not sets:
        return {}
    member_of: dict[str, list[int]] = {}
    roots: list[str | None] = []
    for index, (root, held) in enumerate(groups({path for paths in sets for path in paths})):
        roots.append(root)
        for path in held:
            member_of.setdefault(path, []).append(index)
    out: dict[tuple[str, ...], tuple[set[str], set[str]]] = {}
    for paths, names in sets.items():
        WORK["sets"] += 1
        held_by: dict[int, list[str]] = {}
        for path in paths:
            WORK["memberships"] += len(member_of.get(path, ()))
            for index in member_of.get(path, ()):
                held_by.setdefault(index, []).append(path)
        together = [index for index, held in held_by.items() if len(held) > 1]
        if not together:
            continue
        key = tuple(sorted({path for index in together for path in held_by[index]}))
        symbols, where = out.setdefault(key, (set(), set()))
        symbols |= names
        where |= {root for root in (roots[i] for i in together) if root is not None}
    return out


def _held(load: Load, wanted: Set[str]) -> dict[str, LoadedObject]:
    """The objects of ``load`` at the ``wanted`` paths (each path's first, as ``Load.object`` finds
    it), the cheaper way round: each wanted path looked up through the load's parts, or the load's
    objects walked once when the wanted paths outnumber its parts (10,000 copies of one library,
    each dlopened alone, all exporting the same names)."""
    if len(wanted) <= load.height + 1:
        return {p: obj for p in wanted if (obj := load.object(p)) is not None}
    found: dict[str, LoadedObject] = {}
    for obj in load.iter_objects():
        if obj.path in wanted:
            found.setdefault(obj.path, obj)
    return found


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
            found = _held(load, wanted)
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
"__") are not counted, nor the C++ names of vague linkage a build may export as
plain strong symbols from every C++ library (typeinfo _ZTI/_ZTS, vtables
_ZTV/_ZTT/_ZTC, guard variables _ZGV, local statics of inline functions _ZZ,
thread_local wrappers _ZTH/_ZTW): the loader binds them all to one copy by
design (Itanium C++ ABI, "Vague Linkage"). The functions of one static archive
linked twice are still counted, and say it.
"""
    evidence = {
        "libraries": "the libraries exporting the symbols (all of them: one finding per set, not per pair)",
        "symbols": "the symbols every one of them exports",
        "count": "how many",
        "roots": "the import roots whose closure holds two or more of them",
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

        for paths, (symbols, roots) in sorted(duplicate_sets(libraries, groups).items()):
            exported = sorted(symbols)
            yield self.finding(
                paths[-1],
                paths[0],
                _message(paths, exported),
                {"libraries": list(paths), "symbols": exported, "count": len(exported), "roots": sorted(roots)},
            )


def _message(paths: tuple[str, ...], exported: list[str]) -> str:
    """The finding's text: two libraries by name; three or more as the last and a preview of the
    others (the evidence lists them all), so the text stays short however many export a name."""
    what = f"{len(exported)} strong symbol{'s' if len(exported) != 1 else ''} ({preview(exported, 4)})"
    if len(paths) == 2:
        who, which = f"{paths[1]} and {paths[0]} both", "both"
    else:
        others = list(paths[:-1])
        who, which = f"{paths[-1]} and {len(others)} other libraries ({preview(others, 3)}) all", "each"
    return (
        f"{who} export {what}: every reference binds to one copy while each library may use its own "
        f"— one static archive linked into {which}?"
    )
