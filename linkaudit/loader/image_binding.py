"""Binding the imports of PE and Mach-O images: each import names the library it binds to (a PE
import its DLL; a Mach-O two-level import the dylib of its library ordinal), which must export it.

Pure functions of the model and the image loads (``loader.images``).  Which copy of a library is
judged: the one the loader emulation found for that importer, else an input of that name in the
importer's own directory, else any input of that name.  A library outside the inputs that no load
read is not judged (its exports are unknown), nor is a Mach-O dylib of the dyld shared cache.

How an export is followed (Microsoft's PE format specification, "Export Address Table":
forwarders; Apple's ``mach-o/loader.h`` and dyld: ``LC_REEXPORT_DYLIB``, trie re-exports):

* PE: a forwarder ``"DLL.function"`` (``"DLL.#N"`` by ordinal) is looked up in that DLL;
* Mach-O: a symbol the dylib defines, or re-exports by name (``forwarders``, ``"INSTALL:symbol"``),
  or that a dylib it re-exports whole (``LC_REEXPORT_DYLIB``) exports, recursively.

Flat lookups (``-undefined dynamic_lookup``, ``-flat_namespace``) name no library: ``unbound_imports``
does not judge them (they bind to whatever the process has loaded); ``ImageBinder`` binds them to the
first image of the load, in load order, that exports them (dyld's flat namespace, ``man dyld``:
"the first image [in load order] that exports the symbol"), and says so.

``ImageBinder`` / ``bind_import`` answer, for one import of one image in one load, which image
provides it and through which forwarders or re-exports, or why none does (``ImportOutcome``).  They
and ``unbound_imports`` share one lookup (``_Exports.lookup``): PE and Mach-O alike.
"""

from __future__ import annotations

import enum
import os
import posixpath
from collections.abc import Iterable, Sequence

from ..model import Binary, Format, NeedKind, Symbol
from ..records import dataclass
from .dyld import SHARED_CACHE_PREFIXES
from .images import ImageLoad, ImageLoader, iter_resolutions

#: Forwarders and re-exports followed at most this deep by recursion: each (library, name) is searched
#: once per outermost lookup (``_Exports.searched``), so the depth bounds the recursion only.  A PE
#: forwarder chain goes on past it in a loop (``_Exports._beyond``: a ring of any length is the loop it
#: is); Mach-O re-exports deeper than this are not judged (``UnboundImports.reason`` ``"deep"``).
MAX_DEPTH = 64


@dataclass(frozen=True, slots=True)
class UnboundImports:
    """Imports of one image that the library they name does not export.

    Attributes:
        importer: the image importing them.
        library: the name it imports from, as written (a DLL name; an install name).
        provider: the path of the copy of that library judged.
        symbols: the import names, sorted (Mach-O names without the leading underscore).
        weak: delay-load (PE) or weak (Mach-O) imports: they fail at the first call, or bind to NULL.
        reason: ``"absent"`` (not exported), ``"loop"`` (forwarders or re-exports lead back to where
            they started), ``"forward-missing"`` (a PE forwarder to a DLL that is neither among
            the inputs nor the system's: ``via`` names it), or ``"deep"`` (Mach-O re-exports nested
            deeper than ``MAX_DEPTH``: not followed further, not judged).
        via: for ``"forward-missing"``, the DLL the forwarder names; else ``""``.
    """

    importer: Binary
    library: str
    provider: str
    symbols: tuple[str, ...]
    weak: bool
    reason: str = "absent"
    via: str = ""


class ImportOutcome(enum.StrEnum):
    """What became of one import in one load (``ImageBinder.bind``)."""

    #: an image of the load (or of the inputs, for a forwarder target) provides it
    BOUND = "bound"
    #: the library it names was loaded, but neither it nor the forwarders and re-exports it leads to
    #: export it: Windows stops the load ("The procedure entry point X could not be located"), dyld
    #: too ("Symbol not found"); a weak Mach-O import binds to NULL, a PE delay-load import fails
    #: at its first call
    NOT_EXPORTED = "not-exported"
    #: the library it names was not found in this load (the load fails; a weak dylib may be missing:
    #: its imports bind to NULL)
    LIBRARY_NOT_FOUND = "library-not-found"
    #: the library is the system's (Windows' own DLLs, the dyld shared cache): present, exports not
    #: on disk, not judged
    SYSTEM = "system"
    #: the library (or a forwarder or re-export target) is neither loaded nor among the inputs, or
    #: forwarders go deeper than ``MAX_DEPTH``: its exports are unknown, not judged
    NOT_JUDGED = "not-judged"
    #: a Mach-O flat lookup that no image of an executable's load exports, and the load holds no
    #: system library that might (in any other load the host process's images may: ``NOT_JUDGED``)
    FLAT_UNRESOLVED = "flat-unresolved"


@dataclass(frozen=True, slots=True)
class ImportBinding:
    """Where one import of one image binds in one load.

    Attributes:
        importer: path of the importing image.
        symbol: the import's name (Mach-O: without the leading underscore; PE by ordinal: ``#N``).
        library: the library it names, as written (a DLL name; an install name), or ``None`` for a
            Mach-O flat lookup (``-undefined dynamic_lookup``, ``-flat_namespace``).
        outcome: an ``ImportOutcome``.
        provider: path of the image that provides it (``BOUND`` only), else ``None``.
        provider_symbol: the name it has there (a PE forwarder or Mach-O re-export may rename it),
            ``None`` unless ``BOUND``.
        via: every image looked in, in order, as ``(path, name looked up)``: the named library's image
            first (for a flat lookup, the image found), then each forwarder's or re-export's target;
            for ``BOUND`` it ends at the provider, for ``NOT_EXPORTED`` at the image lacking it.
        weak: a weak Mach-O import, or a PE delay-load import.
        reason: for anything but a plain two-level bind, one sentence saying how (a flat lookup) or
            why none (in the loader's words where it has them).
    """

    importer: str
    symbol: str
    library: str | None
    outcome: ImportOutcome
    provider: str | None
    provider_symbol: str | None
    via: tuple[tuple[str, str], ...]
    weak: bool
    reason: str

    @property
    def flat(self) -> bool:
        """True for a Mach-O flat lookup (the import names no library)."""
        return self.library is None


#: What a library name stands for, for one requester (``_Libraries.locate``); ``_WEAK_MISSING``: a
#: weak dylib (``LC_LOAD_WEAK_DYLIB``) not found, which dyld allows.
_IMAGE, _SYSTEM, _MISSING, _WEAK_MISSING, _UNKNOWN = "image", "system", "missing", "weak-missing", "unknown"


class _Libraries:
    """The copies of each library among the inputs, and where the loads found each import."""

    def __init__(self, binaries: Sequence[Binary], loads: Iterable[ImageLoad], fmt: Format) -> None:
        self.fmt = fmt
        self.by_name: dict[str, list[Binary]] = {}
        for b in binaries:
            if b.format is fmt:
                self.by_name.setdefault(self._key(b.path), []).append(b)
                if fmt is Format.MACHO and b.soname:
                    self.by_name.setdefault(b.soname, []).append(b)
        # (requester, the load's machine, name): each slice of a universal root is a load of its own
        self.loaded: dict[tuple[str, str, str], Binary] = {}
        self.not_found: set[tuple[str, str, str]] = set()  # searched for and found nowhere
        self._found: dict[tuple[str, str, str], tuple[Binary | None]] = {}  # find's answers
        self._copies: dict[str, dict[tuple[str, str | None], Binary]] = {}  # name -> (machine, directory) -> copy
        for load, (requester, name), res in iter_resolutions(loads):  # a part shared by loads once
            image = load.images.get(res.path) if res.path else None
            if image is not None:
                self.loaded.setdefault((requester, load.machine or image.machine, self._key(name)), image)
            elif res.path is None and not res.system:
                self.not_found.add((requester, load.machine, self._key(name)))

    def _key(self, name: str) -> str:
        return posixpath.basename(name).lower() if self.fmt is Format.PE else name

    def find(self, name: str, requester: Binary) -> Binary | None:
        """The copy of library ``name`` that ``requester``'s imports bind to, or ``None`` (unknown)."""
        if self.fmt is Format.MACHO and name.startswith(SHARED_CACHE_PREFIXES):
            return None
        key = (requester.path, requester.machine, self._key(name))
        hit = self.loaded.get(key)
        if hit is not None:
            return hit
        if key in self.not_found and key not in self.loaded:
            return None  # library-not-found reports it; another directory's copy is not the one loaded
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = (self._nearest(name, requester),)
        return found[0]

    def _nearest(self, name: str, requester: Binary) -> Binary | None:
        """The copy of ``name`` of ``requester``'s machine in its own directory, else the first of
        its machine among the inputs, else ``None``: by index, not a scan of every copy (800
        directories each holding a.dll and b.dll forwarding to each other: quadratic)."""
        key = self._key(name)
        key = key if key in self.by_name else posixpath.basename(name)
        index = self._copies.get(key)
        if index is None:
            index = self._copies[key] = {}
            for c in self.by_name.get(key, []):  # another machine's copy is never loaded
                index.setdefault((c.machine, posixpath.dirname(c.path)), c)
                index.setdefault((c.machine, None), c)
        return index.get((requester.machine, posixpath.dirname(requester.path))) or index.get((requester.machine, None))

    def locate(self, name: str, requester: Binary, load: ImageLoad | None = None) -> tuple[str, Binary | None]:
        """What library ``name`` of ``requester`` stands for: ``(_IMAGE, the image)``; ``(_SYSTEM,
        None)`` for the system's (Windows' own DLLs, the dyld shared cache); ``(_MISSING, None)`` when
        ``load`` searched for it and found nothing (``_WEAK_MISSING``: a weak dylib); ``(_UNKNOWN,
        None)`` when nothing says.

        ``load``'s own resolution of the name comes first; then ``find``."""
        if load is not None:
            res = load.resolutions.get((requester.path, name))
            if res is not None:
                if res.system:
                    return _SYSTEM, None
                if res.path is None:
                    return (_WEAK_MISSING if res.optional else _MISSING), None
                image = load.images.get(res.path)
                if image is not None:
                    return _IMAGE, image
        if self.fmt is Format.MACHO and name.startswith(SHARED_CACHE_PREFIXES):
            return _SYSTEM, None
        if self.fmt is Format.PE:
            from .windows import is_system_dll

            if is_system_dll(name):
                return _SYSTEM, None
        hit = self.find(name, requester)
        return (_IMAGE, hit) if hit is not None else (_UNKNOWN, None)


@dataclass(frozen=True, slots=True)
class _Lookup:
    """One export lookup followed through forwarders and re-exports: ``state`` is ``"found"``,
    ``"absent"`` (not exported), or what stopped it (``_SYSTEM``, ``_MISSING``, ``_UNKNOWN``,
    ``"deep"``); ``via`` the images looked in with the name looked up; ``library`` the library
    name that stopped it."""

    state: str
    via: tuple[tuple[Binary, str], ...]
    library: str = ""


class _Exports:
    """Export lookups with forwarders and re-exports followed, each library's tables built once."""

    def __init__(self, libraries: _Libraries) -> None:
        self.libraries = libraries
        self.tables: dict[int, tuple[frozenset[str], dict[str, str]]] = {}
        # (library, name, load) -> the lookup, each computed once: re-exports fanning out to the
        # same dylibs stay linear; ``active``: the lookups in progress, to tell a loop
        self.memo: dict[tuple[int, str, int], _Lookup] = {}
        self.active: set[tuple[int, str, int]] = set()
        # one flag per lookup in progress: set when a result under it met a loop or ran out of depth,
        # which depend on where the walk started, so neither it nor anything above it is memoised
        self.tainted: list[bool] = []
        # the lookups one outermost lookup has made: each is made once per outermost lookup, as dyld
        # searches each re-exported image once per symbol lookup (``alreadySearched``); without it,
        # dylibs re-exporting one another in a mesh are searched along every path: (K-1)! paths
        self.searched: set[tuple[int, str, int]] = set()
        # the outermost lookups that met a loop or the depth, each made once (1,000 imports of a
        # name forwarded around a ring of 20 DLLs walked the ring 1,000 times)
        self.outer: dict[tuple[int, str, int], _Lookup] = {}
        # PE: where each forwarder chain past ``MAX_DEPTH`` ends (``_beyond``), per (DLL, name, load)
        self.beyond: dict[tuple[int, str, int], _Lookup] = {}

    def _table(self, lib: Binary) -> tuple[frozenset[str], dict[str, str]]:
        table = self.tables.get(id(lib))
        if table is None:
            table = self.tables[id(lib)] = (frozenset(lib.symbols.defined_names()), dict(lib.forwarders))
        return table

    def found_here(self, lib: Binary, name: str) -> bool:
        """True when ``lib`` itself exports ``name`` and (PE) does not forward it: the lookup ends
        there, ``"found"``, whatever the load (as ``lookup`` says, without following anything)."""
        defined, forwarders = self._table(lib)
        return name in defined and (self.libraries.fmt is not Format.PE or name not in forwarders)

    def lookup(self, lib: Binary, name: str, depth: int = 0, load: ImageLoad | None = None) -> _Lookup:
        """Follow ``name`` from ``lib``: PE forwarders; Mach-O definitions, re-exports by name, then the
        dylibs it re-exports whole in load-command order (the first that provides it, or that is not
        judged, decides — as dyld searches them).  Libraries are located in ``load`` first.  A lookup
        that comes back to one in progress, or to one this outermost lookup already made and that
        found nothing, is a ``"loop"`` (it leads nowhere new): each (library, name) is searched once
        per outermost lookup, as dyld's ``alreadySearched``, so a mesh of K dylibs re-exporting one
        another costs K searches, not (K-1)!."""
        key = (id(lib), name, id(load))
        done = self.memo.get(key)
        if done is not None:
            return done
        outermost = not self.tainted
        if outermost:  # an outermost lookup starts from nothing: its answer, loop or not, is its own
            done = self.outer.get(key)
            if done is not None:
                return done
        if depth <= MAX_DEPTH and self.found_here(lib, name):  # the common case: no walk to guard
            done = self.memo[key] = _Lookup("found", ((lib, name),))
            return done
        if key in self.active or key in self.searched:  # in progress, or searched in vain this lookup
            if self.tainted:
                self.tainted[-1] = True
            return _Lookup("loop", ((lib, name),))
        self.active.add(key)
        self.searched.add(key)
        self.tainted.append(False)
        try:
            result = self._lookup(lib, name, depth, load)
        finally:
            self.active.discard(key)
            tainted = self.tainted.pop()
            if outermost:
                self.searched.clear()
        if tainted or result.state in ("loop", "deep"):
            if self.tainted:
                self.tainted[-1] = True
            elif outermost:
                self.outer[key] = result  # the next import of it from the outside: not walked again
        else:
            self.memo[key] = result
        return result

    def _lookup(self, lib: Binary, name: str, depth: int, load: ImageLoad | None) -> _Lookup:
        here = ((lib, name),)
        if depth > MAX_DEPTH:
            return self._beyond(lib, name, load) if self.libraries.fmt is Format.PE else _Lookup("deep", here)
        defined, forwarders = self._table(lib)
        if self.libraries.fmt is Format.PE:
            if name not in defined:
                return _Lookup("absent", here)
            forwarded = forwarders.get(name)
            if forwarded is None:
                return _Lookup("found", here)
            dll, _, target = forwarded.rpartition(".")
            return self._follow(here, dll + ".dll", target, lib, depth, load)
        if name in defined:
            return _Lookup("found", here)
        forwarded = forwarders.get(name)
        if forwarded is not None:
            install_name, _, target = forwarded.partition(":")
            return self._follow(here, install_name, target, lib, depth, load)
        looped = False
        for need in lib.needed:
            if need.kind is NeedKind.REEXPORT:
                sub = self._follow(here, need.name, name, lib, depth, load)
                if sub.state == "loop":
                    looped = True  # back to a dylib being searched: nothing new there
                elif sub.state != "absent":
                    return sub  # a re-exported dylib that is not judged may provide it
        return _Lookup("loop" if looped else "absent", here)

    def _beyond(self, lib: Binary, name: str, load: ImageLoad | None) -> _Lookup:
        """PE: the forwarder chain from ``(lib, name)`` past ``MAX_DEPTH``, followed in a loop (an
        export forwards to one place: a chain, not a tree) keeping the (DLL, name) pairs it visits,
        until it comes back to one — a ring, however long: ``"loop"`` — or ends (found, not
        exported, a DLL missing or the system's).  ``via``: the pair it starts at and the one it
        ends at.  Each pair visited keeps that answer (``self.beyond``): the pairs past the depth
        are walked once per load in all, linear in the forwarders.  Microsoft's PE format
        specification, "Export Address Table": a forwarder names ``DLL.function`` or ``DLL.#N``."""
        first = (lib, name)
        seen: list[tuple[int, str, int]] = []
        visited: set[tuple[int, str, int]] = set()
        while True:
            key = (id(lib), name, id(load))
            end = self.beyond.get(key)
            if end is not None:
                break
            if key in visited:
                end = _Lookup("loop", ((lib, name),))
                break
            visited.add(key)
            seen.append(key)
            defined, forwarders = self._table(lib)
            forwarded = forwarders.get(name) if name in defined else None
            if forwarded is None:
                end = _Lookup("found" if name in defined else "absent", ((lib, name),))
                break
            dll, _, target = forwarded.rpartition(".")
            state, other = self.libraries.locate(dll + ".dll", lib, load)
            if other is None:
                end = _Lookup(state, ((lib, name),), dll + ".dll")
                break
            lib, name = other, target
        for key in seen:
            self.beyond[key] = end
        last = end.via[-1]
        via = (first,) if last[0] is first[0] and last[1] == first[1] else (first, last)
        return _Lookup(end.state, via, end.library)

    def _follow(
        self,
        here: tuple[tuple[Binary, str], ...],
        library: str,
        name: str,
        lib: Binary,
        depth: int,
        load: ImageLoad | None,
    ) -> _Lookup:
        state, other = self.libraries.locate(library, lib, load)
        if other is None:
            return _Lookup(state, here, library)
        sub = self.lookup(other, name, depth + 1, load)
        return _Lookup(sub.state, here + sub.via, sub.library)


class ImageBinder:
    """Binds the imports of PE and Mach-O images in their loads: one ``_Libraries`` and ``_Exports``
    per format, each library's export table built once for every load.

    Args:
        binaries: the inputs (libraries outside a load are looked for among them: a forwarder's DLL).
        loads: every image load of the run (``analyze_windows`` and ``analyze_dyld``).
    """

    def __init__(self, binaries: Sequence[Binary], loads: Iterable[ImageLoad]) -> None:
        loads = list(loads)
        self._lookups: dict[ImageLoader, tuple[_Libraries, _Exports]] = {}
        for loader, fmt in ((ImageLoader.WINDOWS, Format.PE), (ImageLoader.DYLD, Format.MACHO)):
            libraries = _Libraries(binaries, [ld for ld in loads if ld.loader is loader], fmt)
            self._lookups[loader] = (libraries, _Exports(libraries))

    def bind(self, load: ImageLoad, importer: str, symbol: Symbol) -> ImportBinding:
        """Where the import ``symbol`` of the image at ``importer`` binds in ``load``.

        A PE import and a Mach-O two-level import bind in the library they name, as the load found
        it (else a copy among the inputs: a delay-loaded DLL, a forwarder's target), following PE
        forwarders and Mach-O re-exports (``LC_REEXPORT_DYLIB``, export-trie re-exports); a Mach-O
        flat lookup binds to the first image of the load, in load order, that exports it.

        Raises:
            KeyError: ``importer`` is not an image of ``load``.
        """
        libraries, exports = self._lookups[load.loader]
        image = load.images[importer]
        library = symbol.version.file if symbol.version is not None and symbol.version.file else None
        name = symbol.name
        weak = symbol.weak
        dyld = load.loader is ImageLoader.DYLD
        if library is None:
            return self._flat(load, importer, name, weak, exports)
        state, lib = libraries.locate(library, image, load)
        if lib is None:
            return self._stopped(importer, name, library, weak, dyld, state, library, ())
        found = exports.lookup(lib, name, 0, load)
        via = tuple((b.path, n) for b, n in found.via)
        if found.state == "found":
            provider, provider_symbol = found.via[-1]
            return ImportBinding(
                importer, name, library, ImportOutcome.BOUND, provider.path, provider_symbol, via, weak, ""
            )
        if found.state == "absent":
            where, missing = found.via[-1]
            base = posixpath.basename(where.path)
            if dyld:
                reason = f"Symbol not found: _{missing}, referenced from: {posixpath.basename(importer)}, expected in: {base}"
                reason += " (a weak import: bound to NULL)" if weak else ""
            else:
                reason = f"The procedure entry point {missing} could not be located in the dynamic link library {base}"
                reason += " (a delay-load import: its first call fails)" if weak else ""
            return ImportBinding(importer, name, library, ImportOutcome.NOT_EXPORTED, None, None, via, weak, reason)
        return self._stopped(importer, name, library, weak, dyld, found.state, found.library, via)

    @staticmethod
    def _stopped(
        importer: str,
        name: str,
        library: str,
        weak: bool,
        dyld: bool,
        state: str,
        stopped_at: str,
        via: tuple[tuple[str, str], ...],
    ) -> ImportBinding:
        """An import whose lookup reached a library whose exports are not judged, or not found."""
        if state == _SYSTEM:
            where = "the dyld shared cache" if dyld else "Windows"
            outcome, reason = ImportOutcome.SYSTEM, f"{stopped_at} is part of {where}: its exports are not judged"
        elif state == _MISSING:
            outcome, reason = ImportOutcome.LIBRARY_NOT_FOUND, f"{stopped_at} was not found in this load"
        elif state == _WEAK_MISSING:
            outcome = ImportOutcome.LIBRARY_NOT_FOUND
            reason = f"{stopped_at} was not found in this load: a weak dylib, allowed; its imports bind to NULL"
        elif state == "deep":
            outcome = ImportOutcome.NOT_JUDGED
            reason = f"forwarders or re-exports deeper than {MAX_DEPTH}: not judged"
        elif state == "loop":
            outcome = ImportOutcome.NOT_EXPORTED
            chain = " → ".join(posixpath.basename(path) for path, _n in via)
            reason = f"its forwarders or re-exports only lead back where they started ({chain}): nothing exports it"
        elif weak and not dyld and not via:
            outcome = ImportOutcome.NOT_JUDGED
            reason = (
                f"{stopped_at} is delay-loaded (at the first call) and not among the inputs: its exports are unknown"
            )
        else:
            outcome = ImportOutcome.NOT_JUDGED
            reason = f"{stopped_at} is neither loaded nor among the inputs: its exports are unknown"
        return ImportBinding(importer, name, library, outcome, None, None, via, weak, reason)

    def _flat(self, load: ImageLoad, importer: str, name: str, weak: bool, exports: _Exports) -> ImportBinding:
        """A Mach-O flat lookup: the first image of the load, in load order, that exports ``name``."""
        for path in load.objects:
            image = load.images.get(path)
            if image is None:
                continue
            found = exports.lookup(image, name, 0, load)
            if found.state == "found":
                provider, provider_symbol = found.via[-1]
                return ImportBinding(
                    importer,
                    name,
                    None,
                    ImportOutcome.BOUND,
                    provider.path,
                    provider_symbol,
                    tuple((b.path, n) for b, n in found.via),
                    weak,
                    "flat lookup: the first image of the load that exports it",
                )
        if load.kind != "executable" or any(res.system for res in load.resolutions.values()):
            return ImportBinding(
                importer,
                name,
                None,
                ImportOutcome.NOT_JUDGED,
                None,
                None,
                (),
                weak,
                "flat lookup: no image of the load on disk exports it; another image of the process may "
                "(the dyld shared cache, the executable — for an extension module the Python interpreter): "
                "not judged",
            )
        return ImportBinding(
            importer,
            name,
            None,
            ImportOutcome.FLAT_UNRESOLVED,
            None,
            None,
            (),
            weak,
            "flat lookup: no image of the load exports it, and it loads no system library that might",
        )

    def exporters(self, load: ImageLoad, name: str) -> list[str]:
        """The images of ``load``, in load order, that export ``name`` (following forwarders and
        re-exports to an image that defines it): the candidates of a flat lookup."""
        _libraries, exports = self._lookups[load.loader]
        out = []
        for path in load.objects:
            image = load.images.get(path)
            if image is not None and exports.lookup(image, name, 0, load).state == "found":
                out.append(path)
        return out

    def bind_load(self, load: ImageLoad) -> list[ImportBinding]:
        """Every import of every image of ``load`` (PE or Mach-O), images in load order, imports in
        symbol-table order."""
        out: list[ImportBinding] = []
        for path in load.objects:
            image = load.images.get(path)
            if image is None:
                continue
            out.extend(self.bind(load, path, sym) for sym in image.symbols.iter_undefined())
        return out


def bind_import(load: ImageLoad, importer: str, symbol: Symbol, binaries: Sequence[Binary] = ()) -> ImportBinding:
    """Which image provides the import ``symbol`` of the image at ``importer`` in ``load``, following
    PE forwarders and Mach-O re-exports, or why none does (``ImportBinding.outcome``, ``reason``).

    A one-off: ``ImageBinder`` builds each library's tables once for many imports.

    Args:
        load: a Windows or dyld load (``analyze_windows``, ``analyze_dyld``).
        importer: the path of an image of ``load``.
        symbol: one of its undefined symbols (``Binary.symbols.iter_undefined()``).
        binaries: the inputs, where libraries outside the load are looked for (a forwarder's DLL).

    Raises:
        KeyError: ``importer`` is not an image of ``load``.
    """
    return ImageBinder(binaries, [load]).bind(load, importer, symbol)


def _beside(found: _Lookup, listings: dict[str, frozenset[str]]) -> bool:
    """True when the DLL a forwarder names (``found.library``) is a file beside the DLL that forwards
    to it — found there by the search the Windows loader runs for it, though not among the inputs.
    ``listings``: each directory's names, lower-cased, listed once (a listing per import of 4,000
    DLLs forwarding along a chain to a missing one was quadratic: 14 s)."""
    directory = posixpath.dirname(found.via[-1][0].path) or "."
    names = listings.get(directory)
    if names is None:
        try:
            names = frozenset(n.lower() for n in os.listdir(directory))
        except OSError:
            names = frozenset()
        listings[directory] = names
    return found.library.lower() in names


def unbound_imports(binaries: Sequence[Binary], loads: Iterable[ImageLoad], fmt: Format) -> list[UnboundImports]:
    """Every import of a ``fmt`` input (PE or Mach-O) that the library it names does not export.

    Args:
        binaries: the inputs (those of another format are ignored).
        loads: the loader emulation's loads for ``fmt`` (``analyze_windows`` / ``analyze_dyld``).
        fmt: ``Format.PE`` or ``Format.MACHO``.

    Returns:
        One ``UnboundImports`` per importer, library and weakness, in input order.
    """
    libraries = _Libraries(binaries, loads, fmt)
    exports = _Exports(libraries)
    out: list[UnboundImports] = []
    listings: dict[str, frozenset[str]] = {}
    for binary in binaries:
        if binary.format is not fmt:
            continue
        missing: dict[tuple[str, str, bool, str, str], list[str]] = {}
        providers: dict[str, Binary | None] = {}  # library name -> its copy, found once per importer
        for sym in binary.symbols.iter_undefined():
            library = sym.version.file if sym.version is not None else None
            if not library:
                continue  # a flat lookup
            if library not in providers:
                providers[library] = libraries.find(library, binary)
            provider = providers[library]
            if provider is None or exports.found_here(provider, sym.name):
                continue
            found = exports.lookup(provider, sym.name)
            if found.state in ("absent", "loop", "deep"):
                reason, via = found.state, ""
            elif fmt is Format.PE and found.state == _UNKNOWN and found.library and not _beside(found, listings):
                reason, via = "forward-missing", found.library  # Windows loads a forwarder's DLL to bind it
            else:
                continue
            missing.setdefault((library, provider.path, sym.weak, reason, via), []).append(sym.name)
        for (library, provider_path, weak, reason, via), names in missing.items():
            out.append(UnboundImports(binary, library, provider_path, tuple(sorted(names)), weak, reason, via))
    return out


def reexported_by(binaries: Sequence[Binary]) -> dict[str, tuple[str, ...]]:
    """Mach-O: install name -> the install names its dylib re-exports (``LC_REEXPORT_DYLIB``),
    transitively, for the dylibs among ``binaries``; a dylib that re-exports nothing is absent."""
    direct: dict[str, list[str]] = {}
    for b in binaries:
        if b.format is Format.MACHO and b.soname:
            names = [n.name for n in b.needed if n.kind is NeedKind.REEXPORT]
            if names:
                direct.setdefault(b.soname, []).extend(names)
    out: dict[str, tuple[str, ...]] = {}
    for name in direct:
        seen: list[str] = []
        todo = list(direct[name])
        while todo:
            other = todo.pop(0)
            if other not in seen:
                seen.append(other)
                todo.extend(direct.get(other, ()))
        out[name] = tuple(seen)
    return out
