"""Load order and lookup scopes per import root, as glibc builds them.

An import root is loaded with its NEEDED closure breadth-first
(``elf/dl-deps.c`` ``_dl_map_object_deps``); every DT_NEEDED is resolved with
``ldso.search`` in that order, so an object already loaded under a matching
SONAME is reused, exactly as ld.so reuses it.  Each root gets one ``Load``:

* *executable*: the global scope is the executable, then the ``LD_PRELOAD`` objects,
  then its NEEDED closure breadth-first; every object looks symbols up there.
* *Python import* (``dlopen(RTLD_NOW | RTLD_LOCAL)`` from the interpreter): symbols
  are looked up first in the global scope — the interpreter (which provides the
  ``Py*``/``_Py*`` API), its NEEDED closure, and objects opened with
  ``RTLD_GLOBAL`` — then in the module's own breadth-first search list.
* *plain dlopen*: like a Python import, without an interpreter.

Sources: glibc ``elf/dl-deps.c``, ``elf/dl-open.c`` (``dl_open_worker``: the new
object's ``l_scope`` is the global scope followed by its own search list),
``elf/rtld.c`` (LD_PRELOAD placement), ``ld.so(8)``.
"""

from __future__ import annotations

import contextlib
import enum
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from typing import NamedTuple

from ..errors import InputError
from ..model import Binary, Kind
from ..records import dataclass
from .ldso import Requester, Resolution, SearchContext, Source, origin_of, search
from .modelled import modelled_library


class RootKind(enum.StrEnum):
    """How an import root is loaded."""

    EXECUTABLE = "executable"
    PYTHON_IMPORT = "python-import"
    DLOPEN = "dlopen"


def root_kind_of(binary: Binary) -> RootKind:
    """The default way ``binary`` is loaded: executables run, extension modules are imported, the rest dlopened."""
    if binary.kind in (Kind.EXECUTABLE, Kind.PIE_EXECUTABLE):
        return RootKind.EXECUTABLE
    if binary.kind is Kind.PYTHON_EXTENSION:
        return RootKind.PYTHON_IMPORT
    return RootKind.DLOPEN


class LoadedObject(NamedTuple):
    """One object in a root's load (a named tuple: a load of n objects makes n of them per root).

    Attributes:
        path: the path it was found by (``$ORIGIN`` is its directory).
        binary: the parsed object.
        parent: path of the object whose DT_NEEDED loaded it (``None`` for roots,
            preloads and the interpreter).
        source: how it was found.
        depth: breadth-first depth from the root (0 for the root).
    """

    path: str
    binary: Binary
    parent: str | None
    source: Source
    depth: int


#: Name of the virtual object standing for a generic CPython interpreter.
INTERPRETER = "<python interpreter>"

#: The DT_NEEDED entries of a generic CPython interpreter on glibc (python.org's and the manylinux
#: images' ``python3.x``; ``libpthread``/``libdl`` before glibc 2.34): loaded with it, so in the
#: global scope of every import (``__cxa_finalize``, ``memcpy``... bind there).
INTERPRETER_NEEDED = ("libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2")


class Load:
    """The load of one import root.

    A load built on the load of its root's single dependency (``alone_load``) stores only its
    own *part* — the root's object and its DT_NEEDED resolution — and ``below``, the load of
    that dependency dlopened alone, which it holds one level deeper.  A chain of n libraries so
    stores n parts, not n(n+1)/2 objects and resolutions.  ``objects``, ``resolutions``,
    ``local_scope`` and ``distinct()`` are still the whole load (rebuilt on each call for a load
    with ``below``: O(closure)); work over every load reads each part once (``iter_parts``,
    ``loader.analysis.distinct_parts``).

    Attributes:
        root: path of the root.
        kind: how it is loaded.
        objects: every object loaded for it, in load order (the root's search list
            after any global objects).
        global_scope: paths of the global scope, in lookup order.
        local_scope: paths of the root's own search list, in lookup order
            (empty for executables: everything is global).
        resolutions: (requester path, DT_NEEDED) -> ``Resolution``.
        errors: load-stopping errors ``(path, message)`` (an invalid candidate, an unreadable root).
        interpreter_virtual: True when the global scope starts with a generic
            interpreter that provides the ``Py*``/``_Py*`` API.
        loader: the loader emulated: ``"glibc"`` (``loader.ldso``) or ``"musl"`` (``loader.musl``).
        below: the load this one is built on, or ``None`` (then every field is this load's own).
        link: how the root's DT_NEEDED found ``below``'s root (its source here), when ``below`` is set.
    """

    __slots__ = (
        "_height",
        "_index",
        "_jump",
        "_local_scope",
        "_objects",
        "_resolutions",
        "below",
        "errors",
        "global_scope",
        "interpreter_virtual",
        "kind",
        "link",
        "loader",
        "root",
    )  # fmt: skip

    def __init__(self, root: str, kind: RootKind, *, loader: str = "glibc") -> None:
        self.root, self.kind, self.loader = root, kind, loader
        self.global_scope: list[str] = []
        self.errors: list[tuple[str, str]] = []
        self.interpreter_virtual = False
        self.below: Load | None = None
        self.link: Source | None = None
        self._objects: list[LoadedObject] = []
        self._resolutions: dict[tuple[str, str], Resolution] = {}
        self._local_scope: list[str] = []
        self._index: dict[str, LoadedObject] = {}
        self._height = 0  # parts below this one
        self._jump: Load = self  # a part further down (skew-binary jump pointers: O(log n) ancestor tests)

    def __repr__(self) -> str:
        return f"Load({self.root!r}, {self.kind.value}, parts={sum(1 for _ in self.iter_parts())})"

    def iter_parts(self) -> Iterator[tuple[Load, int]]:
        """This load's parts, top first, as ``(part, hops)``: the part's objects sit ``hops`` levels deeper here."""
        part: Load | None = self
        hops = 0
        while part is not None:
            yield part, hops
            part, hops = part.below, hops + 1

    def own_objects(self, hops: int = 0, above: Load | None = None) -> Iterator[LoadedObject]:
        """This part's own objects as the load ``hops`` levels above sees them (``above``: the part
        just above it there, whose root needs this part's root)."""
        for i, o in enumerate(self._objects):
            if not hops:
                yield o
            elif i == 0 and above is not None:
                yield LoadedObject(o.path, o.binary, above.root, above.link or Source.SYSTEM, hops)
            else:
                yield LoadedObject(o.path, o.binary, o.parent, o.source, o.depth + hops)

    @classmethod
    def on_top(cls, path: str, binary: Binary, resolution: Resolution, below: Load, loader: str = "glibc") -> Load:
        """The load of ``path`` dlopened alone, needing one library found by ``resolution`` whose own
        load dlopened alone is ``below``: its own part (the root's object and that resolution) over
        ``below`` one level deeper, ``below``'s errors its errors.  The caller has checked that the
        loads compose (``alone_load``, ``loader.musl.musl_alone_load``)."""
        load = cls(path, RootKind.DLOPEN, loader=loader)
        load.add_object(LoadedObject(path, binary, None, Source.ROOT, 0))
        load._set_below(below, resolution.source or Source.SYSTEM)
        load._local_scope = [path]
        load._resolutions = {(path, resolution.name): resolution}
        load.errors = list(below.errors)
        return load

    def _set_below(self, below: Load, link: Source) -> None:
        self.below, self.link, self._height = below, link, below._height + 1
        jump = below._jump
        self._jump = jump._jump if below._height - jump._height == jump._height - jump._jump._height else below

    @property
    def height(self) -> int:
        """How many parts lie below this one (0 without ``below``)."""
        return self._height

    def has_own(self, path: str) -> bool:
        """True when this part's own objects hold ``path``."""
        return path in self._index

    def holds_part(self, part: Load) -> bool:
        """True when ``part`` is one of this load's parts (O(log parts))."""
        node = self
        while node._height > part._height:
            node = node._jump if node._jump._height >= part._height else node.below  # type: ignore[assignment]
        return node is part

    def own_resolutions(self) -> Mapping[tuple[str, str], Resolution]:
        """This part's own resolutions (do not modify)."""
        return self._resolutions

    def own_scope(self) -> list[str]:
        """This part's own entries of the root's search list, in lookup order (do not modify): the
        load's ``local_scope`` is every part's, top first."""
        return self._local_scope

    def own_object(self, path: str) -> LoadedObject | None:
        """The first of this part's own objects at ``path`` (as the part stores it), or ``None``."""
        return self._index.get(path)

    def iter_objects(self) -> Iterator[LoadedObject]:
        """Every object of the load, in load order (``objects`` without building a list)."""
        above: Load | None = None
        for part, hops in self.iter_parts():
            yield from part.own_objects(hops, above)
            above = part

    @property
    def objects(self) -> list[LoadedObject]:
        """Every object loaded for it, in load order (the list itself when ``below`` is ``None``)."""
        return self._objects if self.below is None else list(self.iter_objects())

    @objects.setter
    def objects(self, value: list[LoadedObject]) -> None:
        self._objects = value

    @property
    def resolutions(self) -> dict[tuple[str, str], Resolution]:
        """(requester path, DT_NEEDED) -> ``Resolution`` (the dict itself when ``below`` is ``None``)."""
        if self.below is None:
            return self._resolutions
        out: dict[tuple[str, str], Resolution] = {}
        for part, _hops in self.iter_parts():
            out.update(part._resolutions)
        return out

    @resolutions.setter
    def resolutions(self, value: dict[tuple[str, str], Resolution]) -> None:
        self._resolutions = value

    @property
    def local_scope(self) -> list[str]:
        """Paths of the root's own search list, in lookup order (the list itself when ``below`` is ``None``)."""
        if self.below is None:
            return self._local_scope
        return [path for part, _hops in self.iter_parts() for path in part._local_scope]

    @local_scope.setter
    def local_scope(self, value: list[str]) -> None:
        self._local_scope = value

    def resolution(self, requester: str, needed: str) -> Resolution | None:
        """How ``requester``'s DT_NEEDED ``needed`` resolved in this load, or ``None`` (O(parts))."""
        for part, _hops in self.iter_parts():
            found = part._resolutions.get((requester, needed))
            if found is not None:
                return found
        return None

    def add_object(self, obj: LoadedObject) -> None:
        """Append ``obj`` to the load order."""
        self._objects.append(obj)
        self._index.setdefault(obj.path, obj)

    def distinct(self) -> Mapping[str, LoadedObject]:
        """Path -> the first object loaded at that path, in load order (do not modify)."""
        if self.below is None:
            return self._index
        out: dict[str, LoadedObject] = {}
        for obj in self.iter_objects():
            out.setdefault(obj.path, obj)
        return out

    def object(self, path: str) -> LoadedObject | None:
        """The loaded object at ``path``, or ``None`` (O(parts))."""
        above: Load | None = None
        for part, hops in self.iter_parts():
            obj = part._index.get(path)
            if obj is not None:
                return obj if not hops else next(o for o in part.own_objects(hops, above) if o.path == path)
            above = part
        return None

    def chain(self, path: str) -> list[str]:
        """The chain of parents from the root to ``path`` (inclusive): O(parts + chain)."""
        roots: list[str] = []
        for part, _hops in self.iter_parts():
            if path in part._index:
                return roots + part._own_chain(path)
            roots.append(part.root)
        return [path]

    def _own_chain(self, path: str) -> list[str]:
        by_path = self._index
        out = [path]
        seen = {path}
        current = by_path.get(path)
        while current is not None and current.parent is not None and current.parent not in seen:
            out.append(current.parent)
            seen.add(current.parent)
            current = by_path.get(current.parent)
        out.reverse()
        return out

    def scope_for(self, path: str) -> list[str]:
        """Lookup scope of an object loaded for this root: global, then the root's search list."""
        if self.kind is RootKind.EXECUTABLE:
            return self.global_scope
        local = self.local_scope
        if not self.global_scope:
            return list(local)
        return self.global_scope + [p for p in local if p not in self.global_scope]


def _names_of(binary: Binary, path: str, requested: str | None) -> list[str]:
    names = [path]
    if requested:
        names.append(requested)
    if binary.soname:
        names.append(binary.soname)
    return names


@dataclass(slots=True)
class Process:
    """What the imports made in one Python process share.

    Objects a module's load brought in stay loaded: a later import that needs the same
    SONAME (or name) reuses them without searching, whatever its own RPATH says — but
    sibling extension modules do not provide symbols to each other (each is opened
    ``RTLD_LOCAL``; its scope is the global scope plus its own search list).

    Attributes:
        loaded: names (SONAMEs, names loaded by, paths) -> path, for the whole process.
        requesters: path -> search state of every object loaded.
        global_objects: the objects of the global scope once loaded (``None`` before).
        global_scope: paths of the global scope, in lookup order.
        interpreter_virtual: the global scope starts with a generic interpreter.
        main: the interpreter's search state, when a real one is given.
        global_errors: errors met loading the global scope.
    """

    loaded: dict[str, str] = field(default_factory=dict)
    requesters: dict[str, Requester] = field(default_factory=dict)
    global_objects: list[LoadedObject] | None = None
    global_scope: list[str] = field(default_factory=list)
    interpreter_virtual: bool = False
    main: Requester | None = None
    global_errors: list[tuple[str, str]] = field(default_factory=list)


def load_root(
    root_path: str,
    root: Binary,
    kind: RootKind,
    ctx: SearchContext,
    read_global: Callable[[str], Binary],
    in_python: bool = False,
    process: Process | None = None,
) -> Load:
    """Load one import root and its NEEDED closure breadth-first.

    Args:
        root_path: the root's path (as found/given; ``$ORIGIN`` is its directory).
        root: the parsed root.
        kind: how it is loaded.
        ctx: search inputs (target, view, cache, system directories).
        read_global: reads an ``LD_PRELOAD`` / ``--dlopen-global`` / interpreter path
            (raises ``InputError``).
        in_python: a plain ``dlopen`` made inside a Python process (the interpreter is
            in the global scope, as for an import).
        process: the Python process this import or dlopen happens in, shared with the
            roots loaded before it (``None``: a process of its own).

    Returns:
        The ``Load``; load-stopping errors are recorded in it, never raised.
    """
    loading = _Loading(Load(root_path, kind), ctx, read_global, process if kind is not RootKind.EXECUTABLE else None)
    loading.load_rtld((root.interpreter if kind is RootKind.EXECUTABLE else None) or ctx.rtld)
    if kind is RootKind.EXECUTABLE:
        return loading.executable(root_path, root)
    loading.global_scope(kind is RootKind.PYTHON_IMPORT or in_python, root)
    return loading.local(root_path, root)


class _Loading:
    """One root's load in progress (``load_root``): the breadth-first queue, the names loaded and
    their requesters — the process's, shared with the roots before it, when ``process`` is given.

    Args:
        load: the ``Load`` being filled.
        ctx: search inputs.
        read_global: reads a preload, ``--dlopen-global``, interpreter or executable path.
        process: the Python process the root is loaded in, or ``None`` (a process of its own).
    """

    def __init__(
        self, load: Load, ctx: SearchContext, read_global: Callable[[str], Binary], process: Process | None
    ) -> None:
        self.load, self.ctx, self.read_global, self.process = load, ctx, read_global, process
        self.loaded: dict[str, str] = process.loaded if process is not None else {}
        self.requesters: dict[str, Requester] = process.requesters if process is not None else {}
        self.queue: deque[tuple[str, Binary, Requester | None, int]] = deque()
        self.main: Requester | None = None

    def add(
        self,
        path: str,
        binary: Binary,
        parent: Requester | None,
        source: Source,
        depth: int,
        requested: str | None,
        scope: list[str] | None,
    ) -> Requester:
        """Load ``binary`` at ``path`` (asked for as ``requested``), into ``scope`` and the queue."""
        requester = Requester(path, binary, parent, origin_of(path))
        self.requesters[path] = requester
        loaded = self.loaded
        loaded.setdefault(path, path)  # the names of _names_of, without a list per object
        if requested:
            loaded.setdefault(requested, path)
        if binary.soname:
            loaded.setdefault(binary.soname, path)
        self.load.add_object(LoadedObject(path, binary, parent.path if parent else None, source, depth))
        if scope is not None:
            scope.append(path)
        self.queue.append((path, binary, requester, depth))
        return requester

    def drain(self, scope: list[str] | None) -> None:
        """Search the DT_NEEDED entries of everything queued, breadth-first, adding what is found
        to ``scope``; a name found already loaded still joins this search list (dl-deps.c), once."""
        load, ctx, requesters, queue = self.load, self.ctx, self.requesters, self.queue
        members = set(scope) if scope is not None else set()
        while queue:
            path, binary, requester, depth = queue.popleft()
            assert requester is not None
            resolutions = load.resolutions
            for needed in ctx.memo.needed_names(binary):
                resolution, found = search(needed, requester, self.main, self.loaded, ctx)
                resolutions.setdefault((path, needed), resolution)
                if resolution.error is not None:
                    load.errors.append((path, f"error while loading {needed}: {resolution.error}"))
                if resolution.path is None:
                    continue
                if resolution.source is Source.LOADED:
                    if scope is not None and resolution.path not in members and resolution.path in requesters:
                        members.add(resolution.path)
                        scope.append(resolution.path)
                        reused = requesters[resolution.path]
                        if load.object(resolution.path) is None:  # loaded by an earlier import
                            load.add_object(
                                LoadedObject(resolution.path, reused.binary, path, Source.LOADED, depth + 1)
                            )
                        queue.append((resolution.path, reused.binary, reused, depth + 1))
                    continue
                assert found is not None
                self.add(
                    resolution.path, found, requester, resolution.source or Source.SYSTEM, depth + 1, needed, scope
                )
                members.add(resolution.path)

    def load_rtld(self, rtld: str | None) -> None:
        """The dynamic linker itself is loaded first in every process (rtld.c): a DT_NEEDED naming
        it (by SONAME or PT_INTERP path) is reused, never searched."""
        if not rtld or rtld in self.loaded:
            return
        try:
            rtld_binary = self.read_global(rtld)
        except InputError:
            return
        self.requesters[rtld] = Requester(rtld, rtld_binary, None, origin_of(rtld))
        for name in _names_of(rtld_binary, rtld, None):
            self.loaded.setdefault(name, rtld)

    def executable(self, root_path: str, root: Binary) -> Load:
        """Load the executable ``root`` with the preloads after it, into the global scope."""
        load = self.load
        main = self.main = self.add(root_path, root, None, Source.ROOT, 0, None, load.global_scope)
        # The kernel gives ld.so the executable's real path (/proc/self/exe): its
        # $ORIGIN has symlinks resolved, unlike every library's (dl-origin.c).
        with contextlib.suppress(InputError):
            main.origin = origin_of(self.ctx.fs.real_path(root_path))
        self.queue.clear()
        for preload in self.ctx.env.ld_preload:
            # ld.so: "cannot be preloaded: ignored"; the analysis reports the unreadable file.
            with contextlib.suppress(InputError):
                self.add(preload, self.read_global(preload), None, Source.PRELOAD, 0, None, load.global_scope)
        self.queue.appendleft((root_path, root, main, 0))
        self.drain(load.global_scope)
        load.local_scope = []
        return load

    def add_global(self, path: str, source: Source = Source.ROOT) -> Requester | None:
        """Load ``path`` and its closure into the global scope; errors are recorded, not raised."""
        try:
            requester = self.add(path, self.read_global(path), self.main, source, 0, None, self.load.global_scope)
        except InputError:
            return None  # the analysis reports the unreadable file; the load goes on without it
        self.drain(self.load.global_scope)
        return requester

    def global_scope(self, python: bool, root: Binary) -> None:
        """The global scope of an import or a plain dlopen, made once per process: the interpreter
        (``python``: an import, or a dlopen inside Python) or ``--executable``, then
        ``--dlopen-global``; a later root of the process copies it."""
        load, env, process = self.load, self.ctx.env, self.process
        if process is not None and process.global_objects is not None:
            for obj in process.global_objects:
                load.add_object(obj)
            load.global_scope = list(process.global_scope)
            load.interpreter_virtual = process.interpreter_virtual
            load.errors.extend(process.global_errors)
            self.main = process.main
            return
        if python:
            if env.interpreter:
                self.main = self.add_global(env.interpreter)
            else:
                load.global_scope.append(INTERPRETER)
                load.interpreter_virtual = True
                for path, found, parent, source, name in _interpreter_needed(root, self.ctx, self.loaded):
                    self.add(path, found, parent, source, 1, name, load.global_scope)
                self.drain(load.global_scope)
        elif env.executable:
            self.main = self.add_global(env.executable)
        for path in env.dlopen_global:
            if path not in self.loaded:
                self.add_global(path, Source.DLOPEN_GLOBAL)
        if process is not None:
            process.global_objects = list(load.objects)
            process.global_scope = list(load.global_scope)
            process.interpreter_virtual = load.interpreter_virtual
            process.global_errors = list(load.errors)
            process.main = self.main

    def local(self, root_path: str, root: Binary) -> Load:
        """Load the root and its closure into its local scope."""
        load = self.load
        if root_path in self.loaded and self.loaded[root_path] in self.requesters:
            # Already in the process (an earlier import loaded it): nothing new is loaded, but
            # its search list is still its whole dependency closure (dl-deps.c).
            previous = self.requesters[self.loaded[root_path]]
            if load.object(previous.path) is None:
                load.add_object(LoadedObject(previous.path, previous.binary, None, Source.LOADED, 0))
            load.local_scope.append(previous.path)
            self.queue.append((previous.path, previous.binary, previous, 0))
        else:
            self.add(root_path, root, self.main, Source.ROOT, 0, None, load.local_scope)
        self.drain(load.local_scope)
        return load


def _interpreter_needed(
    root: Binary, ctx: SearchContext, loaded: Mapping[str, str]
) -> Iterator[tuple[str, Binary, Requester, Source, str]]:
    """Search the generic interpreter's ``INTERPRETER_NEEDED`` as ld.so does for the executable
    (no DT_RPATH; the cache, the system directories; a policy's libraries the host lacks are
    modelled, ``loader.modelled``), for a machine of ``root``'s: (path, binary, the interpreter as
    requester, source, name) of each one found, lazily (the caller loads each before the next
    search, so ``loaded`` grows).  A name not found is left out: the interpreter, not the import,
    would fail to start, and the interpreter is not audited."""
    interpreter = Requester(INTERPRETER, modelled_library(INTERPRETER, root), None, "/")
    for name in INTERPRETER_NEEDED:
        resolution, found = search(name, interpreter, None, loaded, ctx)
        if resolution.path is not None and found is not None:
            yield resolution.path, found, interpreter, resolution.source or Source.SYSTEM, name


class AloneLoads:
    """The loads of libraries dlopened alone, shared between roots (``alone_load``).

    Attributes:
        loads: path -> the load of that path dlopened alone.
        looking_up: DT_NEEDED name -> the parts whose own resolutions look it up.
        holding: path -> the parts whose own objects hold it.
    """

    __slots__ = ("holding", "loads", "looking_up")

    def __init__(self) -> None:
        self.loads: dict[str, Load] = {}
        self.looking_up: dict[str, list[Load]] = {}
        self.holding: dict[str, list[Load]] = {}

    def add(self, path: str, load: Load) -> Load:
        """Keep ``load`` as the load of ``path`` dlopened alone and index its own part."""
        self.loads[path] = load
        for _requester, name in load._resolutions:
            self.looking_up.setdefault(name, []).append(load)
        for held in load._index:
            self.holding.setdefault(held, []).append(load)
        return load

    def shares(self, below: Load, names: Iterable[str], path: str) -> bool:
        """True when no part of ``below`` looks up one of ``names`` or holds ``path``.

        Each question is asked the cheaper way round: through the loads known to look the name up
        (or hold the path), each tested for being a part of ``below`` (O(log parts)), or through
        ``below``'s own parts when those are fewer — many libraries needing ``libc.so.6``, each
        dlopened alone, made the first way quadratic, a long chain the second."""
        depth = below.height + 1
        for name in names:
            lookers = self.looking_up.get(name, ())
            if len(lookers) <= depth:
                if any(below.holds_part(part) for part in lookers):
                    return False
            elif any(looked == name for part, _hops in below.iter_parts() for _r, looked in part._resolutions):
                return False
        holders = self.holding.get(path, ())
        if len(holders) <= depth:
            return not any(below.holds_part(part) for part in holders)
        return not any(path in part._index for part, _hops in below.iter_parts())


def alone_load(root_path: str, root: Binary, ctx: SearchContext, read_global: Callable[[str], Binary],
               loads: AloneLoads) -> Load:  # fmt: skip
    """``load_root(root_path, root, RootKind.DLOPEN, ctx, read_global)`` for a library dlopened in a
    process of its own with an empty global scope (no interpreter, executable or ``--dlopen-global``:
    the caller's to check), sharing the loads of single dependencies.

    A library with one DT_NEEDED, no DT_RPATH its dependencies would inherit, whose need is
    searched (not already loaded) and found, loads exactly as: itself, then the load of that
    dependency dlopened alone, one level deeper — when no name that dependency's load looks up
    is one the library adds (its path, its SONAME, the name it needs by).  Then the dependency's
    load is taken from ``loads`` (filled here) instead of searched again, and the library's load
    stores only its own part on top of it (``Load.below``); otherwise ``load_root`` builds it.  Closures do not compose in general
    (the first object loaded under a name wins): nothing else is shared.
    """
    rtld_names = _rtld_names(ctx, read_global)
    pending: list[tuple[str, Binary, Resolution]] = []
    seen: set[str] = set()
    path, binary = root_path, root
    while True:
        hit = loads.loads.get(path)
        if hit is not None and hit._objects and hit._objects[0].binary is binary:
            load = hit
            break
        step = None if path in seen else _single_dependency(path, binary, ctx, rtld_names)
        seen.add(path)
        if step is None:
            load = loads.add(path, load_root(path, binary, RootKind.DLOPEN, ctx, read_global))
            break
        resolution, found = step
        pending.append((path, binary, resolution))
        assert resolution.path is not None
        path, binary = resolution.path, found
    while pending:
        path, binary, resolution = pending.pop()
        shared = _on_top_of(path, binary, resolution, load, loads)
        load = loads.add(path, shared or load_root(path, binary, RootKind.DLOPEN, ctx, read_global))
    return load


def _rtld_names(ctx: SearchContext, read_global: Callable[[str], Binary]) -> dict[str, str]:
    """The names the dynamic linker is loaded under in a process of a plain dlopen (see ``load_root``)."""
    loaded: dict[str, str] = {}
    if ctx.rtld:
        with contextlib.suppress(InputError):
            for name in _names_of(read_global(ctx.rtld), ctx.rtld, None):
                loaded.setdefault(name, ctx.rtld)
    return loaded


def _single_dependency(
    path: str, binary: Binary, ctx: SearchContext, rtld_names: dict[str, str]
) -> tuple[Resolution, Binary] | None:
    """Where the one DT_NEEDED of ``path`` is found when it is dlopened alone, if its load may be shared."""
    needed = ctx.memo.needed_names(binary)
    if len(needed) != 1 or (binary.rpath and not binary.runpath) or path in rtld_names:
        return None
    loaded = dict(rtld_names)
    for name in _names_of(binary, path, None):
        loaded.setdefault(name, path)
    resolution, found = search(needed[0], Requester(path, binary, None, origin_of(path)), None, loaded, ctx)
    if resolution.path is None or resolution.error is not None or found is None or resolution.source is Source.LOADED:
        return None
    return resolution, found


def _on_top_of(path: str, binary: Binary, resolution: Resolution, below: Load, loads: AloneLoads) -> Load | None:
    """The load of ``path`` (needing one library, found by ``resolution``) made of ``below``, that
    library's own load, one level deeper; ``None`` when a name ``below`` looks up is one ``path``'s
    load adds (its path, SONAME, or the name it needs by), so the loads would differ."""
    added = {path, resolution.name, *([binary.soname] if binary.soname else [])}
    if not loads.shares(below, added, path):
        return None
    return Load.on_top(path, binary, resolution, below)
