"""The load of one import root as a graph, the shape the pictures draw (``dot``, ``mermaid``, ``html``).

Nodes are the loaded objects (label: the DT_SONAME, the install name or the DLL name; the package
that installs it where known) plus one node per library that resolved nowhere and per library named
for a lazy load (ELF: a name in ``.rodata`` for ``dlopen``; PE: a delay-load import; Mach-O:
LC_LAZY_LOAD_DYLIB).  Edges are the DT_NEEDED / LC_LOAD_DYLIB / import entries, each labelled with how
it resolved (``DT_RPATH of libX``, ``DT_RUNPATH of libX``, ``ld.so.cache``, ``system-directory``,
``LC_RPATH of X``, the Windows search step).  The edges on the way from the root to a library that
is missing (or is the GPU driver, absent without one) are ``failing``: they are the chain behind
"cannot open shared object file" / "Library not loaded" / "DLL load failed".

Built from the loader's records (``loader.closure.Load`` for ld.so and musl, ``loader.images.ImageLoad``
for Windows and dyld); decides nothing: which names are the driver's is the caller's ``is_driver``
(``rules.data.driver_index().is_driver``), who installs a path the caller's ``owners``.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Sequence

from ..loader.closure import Load, LoadedObject
from ..loader.images import ImageLoad, ImageResolution
from ..loader.ldso import Resolution, Source
from ..model import NeedKind
from ..records import dataclass
from .parts import Drawn

#: Who installs a path: the distribution's name, or ``None`` (``packages.installation``).
Owners = Callable[[str], "str | None"]
#: Whether a library name is one only the GPU driver installs.
IsDriver = Callable[[str], bool]

#: How an object found outside the inputs was found (the system's, not the package's).
_OUTSIDE = (Source.CACHE, Source.SYSTEM, Source.POLICY, Source.LD_LIBRARY_PATH)


class NodeKind(enum.StrEnum):
    """How a node is drawn: the root, a library of the inputs, one found outside them (the system's,
    the auditing machine's), one found nowhere, the GPU driver, a lazily loaded plugin."""

    ROOT = "root"
    LIBRARY = "library"
    OUTSIDE = "outside"
    MISSING = "missing"
    DRIVER = "driver"
    PLUGIN = "plugin"


class EdgeKind(enum.StrEnum):
    """A load-time dependency (DT_NEEDED, LC_LOAD_DYLIB, an import), one that may be missing (Mach-O
    LC_LOAD_WEAK_DYLIB), or a lazy one (``dlopen``, delay-load, LC_LAZY_LOAD_DYLIB)."""

    NEEDED = "needed"
    WEAK = "weak"
    LAZY = "lazy"


@dataclass(frozen=True, slots=True)
class GraphNode:
    """One object of a load.

    Attributes:
        id: unique within its graph (``n0``, ``n1``...).
        label: DT_SONAME / install name / DLL name (else the file name; a missing one: the name asked for).
        path: where it was found, or ``None`` (missing, a plugin, a system DLL by name).
        package: the distribution that installs it, or ``None`` where unknown.
        kind: how it is drawn.
        tried: for a missing library, every place tried, one ``"PATH [SOURCE] OUTCOME"`` each.
        shown_in: the root of the graph drawing what this library loads, when an earlier graph of the
            picture drew it (``output.parts``: loads sharing parts); then its needs are not drawn here.
    """

    id: str
    label: str
    path: str | None
    package: str | None
    kind: NodeKind
    tried: tuple[str, ...] = ()
    shown_in: str | None = None


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """One dependency: ``source`` needs ``name``, found as ``target`` because of ``how``.

    Attributes:
        source, target: node ids.
        name: the name as written (the DT_NEEDED entry, the install name, the DLL name).
        how: how it resolved: the search step (``DT_RPATH of libX``, ``ld.so.cache``, ``LC_RPATH of X``,
            ``application-directory``...), ``already-loaded``, ``not found`` or ``dlopen`` / ``delay-load``.
        kind: needed, weak or lazy.
        failing: on the chain from the root to a library the load cannot find.
        first: the edge by which the target was loaded first (the text tree's edge); the others
            name a library already loaded.
    """

    source: str
    target: str
    name: str
    how: str
    kind: EdgeKind
    failing: bool = False
    first: bool = True


@dataclass(frozen=True, slots=True)
class LoadGraph:
    """One root's load: ``loader`` is ``glibc``, ``musl``, ``windows`` or ``dyld``; ``kind`` how the root
    is loaded (``python-import``, ``executable``, ``dlopen``); nodes in load order (the root first)."""

    root: str
    kind: str
    loader: str
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]

    def node(self, node_id: str) -> GraphNode:
        """The node of id ``node_id`` (``KeyError`` when none)."""
        for n in self.nodes:
            if n.id == node_id:
                return n
        raise KeyError(node_id)


def _base(path: str) -> str:
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class _Builder:
    """Nodes by key (a path, or ``?name`` for a library found nowhere), edges in order; ``parents``
    the first requester of each node, for the failing chains."""

    def __init__(self, owners: Owners | None) -> None:
        self.owners = owners
        self.nodes: dict[str, GraphNode] = {}
        self.edges: list[GraphEdge] = []
        self.parents: dict[str, str] = {}

    def add(
        self,
        key: str,
        label: str,
        path: str | None,
        kind: NodeKind,
        tried: tuple[str, ...] = (),
        shown_in: str | None = None,
    ) -> str:
        node = self.nodes.get(key)
        if node is None:
            package = self.owners(path) if self.owners is not None and path else None
            node = GraphNode(f"n{len(self.nodes)}", label, path, package, kind, tried, shown_in)
            self.nodes[key] = node
        return node.id

    def link(self, source: str, target: str, name: str, how: str, kind: EdgeKind = EdgeKind.NEEDED) -> None:
        first = target not in self.parents
        self.parents.setdefault(target, source)
        self.edges.append(GraphEdge(source, target, name, how, kind, first=first))

    def graph(self, root: str, kind: str, loader: str, fails: frozenset[str] = frozenset()) -> LoadGraph:
        """The graph, with the edges on the way to each missing or driver node marked failing (and to
        the nodes of ``fails``: libraries whose load, drawn in another graph, fails)."""
        failing: set[tuple[str, str]] = set()
        stops = {n.id for n in self.nodes.values() if n.kind in (NodeKind.MISSING, NodeKind.DRIVER)} | fails
        for e in self.edges:
            if e.target in stops and e.kind is EdgeKind.NEEDED:
                failing.add((e.source, e.target))
                child, seen = e.source, {e.target}
                while child in self.parents and child not in seen:
                    seen.add(child)
                    failing.add((self.parents[child], child))
                    child = self.parents[child]
        edges = tuple(
            GraphEdge(e.source, e.target, e.name, e.how, e.kind, (e.source, e.target) in failing, e.first)
            for e in self.edges
        )
        return LoadGraph(root, kind, loader, tuple(self.nodes.values()), edges)


def _elf_how(res: Resolution) -> str:
    if not res.found:
        if res.attempts and res.attempts[-1].outcome.value == "driver-absent":
            return "not found: GPU driver absent"
        return "not found" if not res.error else f"error: {res.error}"
    if res.source in (Source.RPATH, Source.RUNPATH) and res.owner:
        return f"{res.source.value} of {_base(res.owner)}"
    return res.source.value if res.source else ""


def _elf_missing(b: _Builder, name: str, res: Resolution, is_driver: IsDriver) -> str:
    tried = tuple(
        f"{a.path} [{a.source.value}{' of ' + _base(a.owner) if a.owner else ''}] {a.outcome.value}"
        + (f" ({a.detail})" if a.detail else "")
        for a in res.attempts
    )
    absent = bool(res.attempts) and res.attempts[-1].outcome.value == "driver-absent"
    kind = NodeKind.DRIVER if absent or is_driver(name) else NodeKind.MISSING
    return b.add(f"?{name}", name, None, kind, tried)


def elf_graph(
    load: Load,
    is_driver: IsDriver,
    owners: Owners | None = None,
    system_dirs: Sequence[str] = (),
    drawn: Drawn | None = None,
) -> LoadGraph:
    """The graph of one ld.so (or musl) load: an edge per DT_NEEDED entry of every object loaded,
    and a lazy edge per library name an object outside the system holds for ``dlopen``.

    Args:
        load: from ``loader.analysis`` (``LinkageAnalysis.loads``).
        is_driver: whether a library name is the GPU driver's (drawn apart, found or not).
        owners: who installs each path, for the node's package.
        system_dirs: the target's system directories: an object there is drawn as outside the inputs.
        drawn: the picture's parts drawn so far (``output.parts``): the library at the top of a part an
            earlier graph drew is one node (``shown_in`` that graph's root), its needs not drawn again.
    """
    view = (drawn or Drawn(share=False)).view(load)
    b = _Builder(owners)
    for o in view.objects:
        b.add(o.path, o.binary.soname or _base(o.path), o.path, _elf_kind(load, o, is_driver, system_dirs))
    fails: set[str] = set()
    if view.cut is not None and view.cut_object is not None:
        o = view.cut_object
        node = b.add(o.path, o.binary.soname or _base(o.path), o.path, _elf_kind(load, o, is_driver, system_dirs),
                     shown_in=view.shown_in)  # fmt: skip
        if drawn is not None and drawn.below_any(view.cut, "fails", lambda part: _part_fails(part, is_driver)):
            fails.add(node)
    for o in view.objects:
        me = b.nodes[o.path].id
        for name in o.binary.needed_names:
            res = view.resolutions.get((o.path, name))
            if res is None:
                continue
            if res.found and res.path:
                target = b.add(res.path, name, res.path, NodeKind.OUTSIDE)
            else:
                target = _elf_missing(b, name, res, is_driver)
            b.link(me, target, name, _elf_how(res))
        if b.nodes[o.path].kind in (NodeKind.ROOT, NodeKind.LIBRARY):
            _plugins(b, me, o.binary.dlopen_names, "dlopen (name in .rodata)")
    return b.graph(load.root, load.kind.value, load.loader, frozenset(fails))


def _elf_kind(load: Load, o: LoadedObject, is_driver: IsDriver, system_dirs: Sequence[str]) -> NodeKind:
    """How an object of an ELF load is drawn: the root, the driver, the system's own, or the inputs'."""
    if o.path == load.root:
        return NodeKind.ROOT
    if is_driver(o.binary.soname or _base(o.path)):
        return NodeKind.DRIVER
    # the system's own: found in the cache or a system directory, or the dynamic loader itself
    outside = o.source in _OUTSIDE or o.path.rsplit("/", 1)[0] in system_dirs or _is_loader(o.binary.soname)
    return NodeKind.OUTSIDE if outside else NodeKind.LIBRARY


def _part_fails(part: Load, is_driver: IsDriver) -> bool:
    """True when a part of a load (``Load.below``) holds a library found nowhere or the GPU driver's."""
    return any(not r.found for r in part.own_resolutions().values()) or any(
        is_driver(o.binary.soname or _base(o.path)) for o in part.own_objects()
    )


def _plugins(b: _Builder, source: str, names: Iterable[str], how: str) -> None:
    """Lazy edges from ``source`` to each library it loads later (a node by name, unless loaded)."""
    names = tuple(names)
    if not names:
        return  # most objects name none: no index of the nodes (that made a long chain quadratic)
    loaded = {n.label: key for key, n in b.nodes.items()}
    for name in names:
        key = loaded.get(name, f"~{name}")
        target = b.add(key, name, None, NodeKind.PLUGIN)
        b.link(source, target, name, how, EdgeKind.LAZY)


def _image_how(res: ImageResolution) -> str:
    if res.system:
        return "system"
    if res.path is None:
        return "not found (weak: allowed)" if res.optional else "not found"
    return res.source or ""


def image_graph(load: ImageLoad, is_driver: IsDriver, owners: Owners | None = None) -> LoadGraph:
    """The graph of one Windows or dyld load: an edge per import (LC_LOAD_DYLIB and its kin, an
    imported DLL) with the search step that found it, and a lazy edge per delay-load import (PE) or
    LC_LAZY_LOAD_DYLIB (Mach-O), which the loader resolves at the first call.

    Args:
        load: from ``loader.windows.analyze_windows`` or ``loader.dyld.analyze_dyld``.
        is_driver: whether a library name is the GPU driver's (``nvcuda.dll``, ``libcuda.dylib``).
        owners: who installs each path, for the node's package.
    """
    b = _Builder(owners)
    b.add(load.root, _base(load.root), load.root, NodeKind.ROOT)
    for (requester, name), res in load.resolutions.items():
        me = b.add(requester, _base(requester), requester, NodeKind.LIBRARY)
        if res.path is not None and not res.system:
            kind = NodeKind.DRIVER if is_driver(_base(name)) else NodeKind.LIBRARY
            target = b.add(res.path, name, res.path, kind)
        elif res.system:
            target = b.add(res.path or f"={name}", name, res.path, NodeKind.OUTSIDE)
        else:
            tried = tuple(
                f"{a.path} [{a.source}] {a.outcome}" + (f" ({a.detail})" if a.detail else "") for a in res.attempts
            )
            kind = NodeKind.DRIVER if is_driver(_base(name)) else NodeKind.MISSING
            target = b.add(f"?{name}", name, None, kind, tried)
        b.link(me, target, name, _image_how(res), EdgeKind.WEAK if res.optional else EdgeKind.NEEDED)
    lazy = (NeedKind.DELAY_LOAD, NeedKind.LAZY)
    for path in list(load.objects):
        image = load.images.get(path)
        if image is not None and path in b.nodes:
            names = [n.name for n in image.needed if n.kind in lazy]
            _plugins(b, b.nodes[path].id, names, "delay-load" if image.format.value == "pe" else "LC_LAZY_LOAD_DYLIB")
    return b.graph(load.root, load.kind, load.loader.value)


def restrict(graph: LoadGraph, targets: Sequence[str]) -> LoadGraph:
    """Only the chains from the root to the nodes ``targets`` names (node ids): every node from which
    one of them is reached, and the edges between those (for ``why --format dot``)."""
    into: dict[str, list[GraphEdge]] = {}
    for e in graph.edges:
        into.setdefault(e.target, []).append(e)
    keep = set(targets)
    todo = list(targets)
    while todo:
        for e in into.get(todo.pop(), []):
            if e.source not in keep:
                keep.add(e.source)
                todo.append(e.source)
    nodes = tuple(n for n in graph.nodes if n.id in keep)
    edges = tuple(e for e in graph.edges if e.source in keep and e.target in keep)
    return LoadGraph(graph.root, graph.kind, graph.loader, nodes, edges)


def _is_loader(soname: str | None) -> bool:
    """The dynamic loader itself (``ld-linux-x86-64.so.2``, ``ld-musl-x86_64.so.1``): the system's."""
    return (soname or "").startswith("ld-")
