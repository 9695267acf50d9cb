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

Flat lookups (``-undefined dynamic_lookup``, ``-flat_namespace``) name no library and are not
bound here: they bind to whatever the process has loaded.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..model import Binary, Format, NeedKind
from .dyld import SHARED_CACHE_PREFIXES
from .images import ImageLoad

#: Forwarders and re-exports followed at most this deep (a loop between hostile files ends).
MAX_DEPTH = 16


@dataclass(frozen=True, slots=True)
class UnboundImports:
    """Imports of one image that the library they name does not export.

    Attributes:
        importer: the image importing them.
        library: the name it imports from, as written (a DLL name; an install name).
        provider: the path of the copy of that library judged.
        symbols: the import names, sorted (Mach-O names without the leading underscore).
        weak: delay-load (PE) or weak (Mach-O) imports: they fail at the first call, or bind to NULL.
    """

    importer: Binary
    library: str
    provider: str
    symbols: tuple[str, ...]
    weak: bool


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
        for load in loads:
            for (requester, name), res in load.resolutions.items():
                image = load.images.get(res.path) if res.path else None
                if image is not None:
                    self.loaded.setdefault((requester, load.machine or image.machine, self._key(name)), image)

    def _key(self, name: str) -> str:
        return posixpath.basename(name).lower() if self.fmt is Format.PE else name

    def find(self, name: str, requester: Binary) -> Binary | None:
        """The copy of library ``name`` that ``requester``'s imports bind to, or ``None`` (unknown)."""
        if self.fmt is Format.MACHO and name.startswith(SHARED_CACHE_PREFIXES):
            return None
        hit = self.loaded.get((requester.path, requester.machine, self._key(name)))
        if hit is not None:
            return hit
        copies = self.by_name.get(self._key(name)) or self.by_name.get(posixpath.basename(name), [])
        near = posixpath.dirname(requester.path)
        same = [c for c in copies if c.machine == requester.machine]  # another machine's copy is never loaded
        return next((c for c in same if posixpath.dirname(c.path) == near), same[0] if same else None)


class _Exports:
    """Export lookups with forwarders and re-exports followed, each library's tables built once."""

    def __init__(self, libraries: _Libraries) -> None:
        self.libraries = libraries
        self.tables: dict[int, tuple[frozenset[str], dict[str, str]]] = {}

    def has(self, lib: Binary, name: str, depth: int = 0) -> bool:
        """True when ``lib`` exports ``name``, or ``depth`` ran out (a loop: assume it does)."""
        if depth > MAX_DEPTH:
            return True
        table = self.tables.get(id(lib))
        if table is None:
            table = self.tables[id(lib)] = (frozenset(s.name for s in lib.symbols.iter_defined()), dict(lib.forwarders))
        defined, forwarders = table
        if self.libraries.fmt is Format.PE:
            if name not in defined:
                return False
            forwarded = forwarders.get(name)
            if forwarded is None:
                return True
            dll, _, target = forwarded.rpartition(".")
            other = self.libraries.find(dll + ".dll", lib)
            return other is None or self.has(other, target, depth + 1)
        if name in defined:
            return True
        forwarded = forwarders.get(name)
        if forwarded is not None:
            install_name, _, target = forwarded.partition(":")
            other = self.libraries.find(install_name, lib)
            return other is None or self.has(other, target, depth + 1)
        for need in lib.needed:
            if need.kind is NeedKind.REEXPORT:
                other = self.libraries.find(need.name, lib)
                if other is None or self.has(other, name, depth + 1):
                    return True  # a re-exported dylib that is not judged may provide it
        return False


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
    for binary in binaries:
        if binary.format is not fmt:
            continue
        missing: dict[tuple[str, str, bool], list[str]] = {}
        for sym in binary.symbols.iter_undefined():
            library = sym.version.file if sym.version is not None else None
            if not library:
                continue  # a flat lookup
            provider = libraries.find(library, binary)
            if provider is None or exports.has(provider, sym.name):
                continue
            missing.setdefault((library, provider.path, sym.weak), []).append(sym.name)
        for (library, provider_path, weak), names in missing.items():
            out.append(UnboundImports(binary, library, provider_path, tuple(sorted(names)), weak))
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
