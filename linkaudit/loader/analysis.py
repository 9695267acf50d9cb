"""The linkage analysis of one audit: loads per import root, bindings, version checks.

Built once per audit from the model and the explicit loader inputs, then read by
the rules through ``AuditContext.linkage``.  Nothing here reads the host on its
own: the ``TargetEnvironment`` and the ``FileSystemView`` are passed in.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from ..errors import InputError
from ..model import ALONE_KINDS, Binary, Kind, Libc
from ..records import dataclass
from .bindcache import BlobStore
from .binding import Bound, bind_object
from .bounds import LoadBound
from .closure import INTERPRETER, AloneLoads, Load, LoadedObject, Process, RootKind, alone_load, load_root, root_kind_of
from .fs import FileSystemView
from .ldcache import LdCache, read_ld_cache
from .ldso import SearchContext, read_system_dirs
from .part_binding import PartIndex, binds_in_parts
from .target import TargetEnvironment

if TYPE_CHECKING:  # loader.musl: imported by _analyze_musl, for musl inputs only
    from .musl import MuslAloneLoads, MuslContext, MuslProcess

#: How many roots a finding about every load holding one object names (the rest are counted).
ROOTS_SHOWN = 10


@dataclass(frozen=True, slots=True)
class Root:
    """An import root: a path to load and how.

    Attributes:
        path: the path as given or found.
        kind: how it is loaded.
        reached: False for an input that no other root's closure reaches (loaded on
            its own as a plain ``dlopen`` to check it at all).
    """

    path: str
    kind: RootKind
    reached: bool = True


@dataclass(frozen=True, slots=True)
class VersionFailure:
    """A version need the resolved provider does not define (``dl-version.c`` ``match_version``).

    Attributes:
        object: path of the object with the need.
        file: the verneed's file (a DT_NEEDED name).
        provider: path of the object that file resolved to.
        version: the version name not defined there.
        symbols: the object's references that carry that version.
    """

    object: str
    file: str
    provider: str
    version: str
    symbols: tuple[str, ...]


@dataclass(slots=True)
class LinkageAnalysis:
    """Everything the loader emulation found, for the rules.

    Attributes:
        env: the target the loads were emulated for.
        loads: one ``Load`` per root, in root order.
        roots: the roots, in order.
        audited: path of each audited object as loaded -> the input path it is.
        bindings: (root path, object path) -> where each undefined symbol binds.
        version_failures: (root path, failure) pairs.
        system_dirs: the target's built-in search directories used.
        cache_path: the ld.so.cache read, or ``None``.
        skipped: (path, reason) of inputs not emulated (musl targets: glibc's rules do not apply).
        search_context: the inputs every search used (for rules that search more, e.g. dlopen names).
        problems: inputs of the emulation that could not be read (a malformed ld.so.cache, an
            unreadable root, interpreter, ``--dlopen-global`` or ``--ld-preload`` object): the
            emulation went on without them; each becomes an ``unreadable-input`` finding.
    """

    env: TargetEnvironment
    loads: list[Load] = field(default_factory=list)
    roots: list[Root] = field(default_factory=list)
    audited: dict[str, str] = field(default_factory=dict)
    bindings: dict[tuple[str, str], list[Bound]] = field(default_factory=dict)
    version_failures: list[tuple[str, VersionFailure]] = field(default_factory=list)
    system_dirs: tuple[str, ...] = ()
    cache_path: str | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)
    search_context: SearchContext | None = None
    problems: list[InputError] = field(default_factory=list)
    _dlopen_roots: frozenset[str] | None = field(default=None, repr=False, compare=False)
    _held: _HeldIndex | None = field(default=None, repr=False, compare=False)

    def parts(self) -> list[Part]:
        """Every part of every load once, in the order the loads first hold them (``Load.below``):
        work over each load's resolutions or objects done over these is linear in what was loaded,
        not in roots times closures, and meets every key in the same first-seen order."""
        out: list[Part] = []
        seen: set[int] = set()
        for index, load in enumerate(self.loads):
            above: Load | None = None
            for part, hops in load.iter_parts():
                if id(part) in seen:
                    break  # this part and every part below it belong to an earlier load too
                seen.add(id(part))
                out.append(Part(part, index, hops, above))
                above = part
        return out

    def holders(self, shown: int = ROOTS_SHOWN) -> dict[int, Holders]:
        """id(part) -> the loads holding that part (see ``Holders``): O(parts x shown)."""
        tops: dict[int, list[int]] = {}
        for index, load in enumerate(self.loads):
            tops.setdefault(id(load), []).append(index)
        parts = sorted((p.part for p in self.parts()), key=lambda part: -part.height)
        count = {id(part): len(tops.get(id(part), ())) for part in parts}
        reached = {id(part): sum(self.roots[i].reached for i in tops.get(id(part), ())) for part in parts}
        first = {id(part): tops.get(id(part), [])[:shown] for part in parts}
        for part in parts:  # from the top down: a part's holders are its own and those of every part on it
            below = part.below
            if below is not None and id(below) in count:
                count[id(below)] += count[id(part)]
                reached[id(below)] += reached[id(part)]
                first[id(below)] = sorted({*first[id(below)], *first[id(part)]})[:shown]
        return {key: Holders(count[key], reached[key], tuple(first[key])) for key in count}

    def dlopen_roots(self) -> frozenset[str]:
        """Paths of the roots loaded as a plain ``dlopen`` (computed once: call it after the analysis)."""
        if self._dlopen_roots is None:
            self._dlopen_roots = frozenset(root.path for root in self.roots if root.kind is RootKind.DLOPEN)
        return self._dlopen_roots

    def loads_holding(self, path: str) -> list[int]:
        """Indices in ``loads`` of the loads holding an object at ``path``, in root order: found
        from the parts owning ``path`` upward (``_HeldIndex``, built once: call it after the
        analysis), not by asking every load (``driver-link`` asked it of each file: 3,000 roots,
        9M ``Load.object`` calls)."""
        if self._held is None:
            self._held = _HeldIndex(self)
        return self._held.loads_holding(path)

    def chains(self, path: str) -> list[Reach]:
        """Every way ``path`` is reached, one ``Reach`` per load that contains it, in root order."""
        out: list[Reach] = []
        for index in self.loads_holding(path):
            load, root = self.loads[index], self.roots[index]
            out.append(Reach(load.root, load.kind, root.reached, tuple(load.chain(path))))
        return out


class _HeldIndex:
    """Where the objects of a ``LinkageAnalysis`` lie among its loads' parts (built in
    O(parts' own objects)): the parts owning each path, the parts built directly on each part
    (``Load.below``) and the loads whose top part each part is."""

    __slots__ = ("above", "owners", "tops")

    def __init__(self, analysis: LinkageAnalysis) -> None:
        self.owners: dict[str, list[Load]] = {}
        self.above: dict[int, list[Load]] = {}
        self.tops: dict[int, list[int]] = {}
        for index, load in enumerate(analysis.loads):
            self.tops.setdefault(id(load), []).append(index)
        for p in analysis.parts():
            part = p.part
            if part.below is not None:
                self.above.setdefault(id(part.below), []).append(part)
            for obj in part.own_objects():
                owners = self.owners.setdefault(obj.path, [])
                if not owners or owners[-1] is not part:
                    owners.append(part)

    def loads_holding(self, path: str) -> list[int]:
        """Indices of the loads holding ``path`` in one of their parts, sorted: every load topped
        by a part owning it or by a part built (at any depth) on one; O(parts visited)."""
        found: set[int] = set()
        seen: set[int] = set()
        stack = list(self.owners.get(path, ()))
        while stack:
            part = stack.pop()
            if id(part) in seen:
                continue
            seen.add(id(part))
            found.update(self.tops.get(id(part), ()))
            stack.extend(self.above.get(id(part), ()))
        return sorted(found)


@dataclass(frozen=True, slots=True)
class Part:
    """One part of the loads (``Load.below``), as the first load holding it sees it.

    Attributes:
        part: the part (its own objects and resolutions: ``own_objects``, ``own_resolutions``).
        index: index in ``LinkageAnalysis.loads`` of the first load holding it.
        hops: how many levels deeper than its own root that load holds it.
        above: the part just above it in that load (``None`` when ``hops`` is 0).
    """

    part: Load
    index: int
    hops: int
    above: Load | None

    def objects(self) -> Iterator[LoadedObject]:
        """The part's own objects as the first load holding it sees them (parent and depth there)."""
        return self.part.own_objects(self.hops, self.above)


@dataclass(frozen=True, slots=True)
class Holders:
    """The loads holding one part.

    Attributes:
        count: how many loads hold it.
        reached: how many of them are loads of roots another root reaches (``Root.reached``).
        first: indices in ``LinkageAnalysis.loads`` of the first ones, at most ``ROOTS_SHOWN``.
    """

    count: int
    reached: int
    first: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Reach:
    """How one import root reaches an object.

    Attributes:
        root: the root's path.
        kind: how the root is loaded.
        reached: False when the root is an input no other root reaches (loaded alone).
        chain: paths from the root to the object, each needing the next.
    """

    root: str
    kind: RootKind
    reached: bool
    chain: tuple[str, ...]

    def to_dict(self, extra: tuple[str, ...] = ()) -> dict[str, object]:
        """JSON-ready ``{"root", "kind", "reached", "chain"}``, ``extra`` appended to the chain."""
        return {"root": self.root, "kind": self.kind.value, "reached": self.reached, "chain": [*self.chain, *extra]}


def would_fail(kind: RootKind, root: str, message: str, loader: str = "glibc") -> str:
    """What the user would see when loading ``root`` fails with ``message`` (glibc's wording;
    musl's loader prints its message as it is when a program cannot start)."""
    if kind is RootKind.PYTHON_IMPORT:
        return f"ImportError: {message}"
    if kind is RootKind.EXECUTABLE:
        return message if loader == "musl" else f"{root}: error while loading shared libraries: {message}"
    return f"dlopen({root}) fails: {message}"


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def default_roots(binaries: Sequence[Binary]) -> list[Root]:
    """Python extension modules and executables among the inputs; if none, every input as a plain dlopen."""
    roots = [
        Root(b.path, root_kind_of(b))
        for b in binaries
        if b.kind in (Kind.PYTHON_EXTENSION, Kind.EXECUTABLE, Kind.PIE_EXECUTABLE)
    ]
    if roots:
        return roots
    return [Root(b.path, RootKind.DLOPEN) for b in binaries if b.kind is Kind.SHARED_LIBRARY]


def analyze(
    binaries: Sequence[Binary],
    env: TargetEnvironment,
    roots: Sequence[Root] | None = None,
    fs: FileSystemView | None = None,
    cache: LdCache | None = None,
    is_driver: Callable[[str], bool] | None = None,
    bind_all: bool = False,
    verify_all: bool = False,
    store: BlobStore | None = None,
) -> LinkageAnalysis:
    """Emulate ld.so over the inputs.

    Args:
        binaries: the audited inputs (ELF only are loaded).
        env: the target environment.
        roots: import roots; default ``default_roots(binaries)``.
        fs: the file-system view (default: ``env.sysroot``).
        cache: the ld.so.cache (default: read ``etc/ld.so.cache`` under the view when
            ``env.use_cache``).
        is_driver: tells a GPU-driver library name (absent in driverless mode); default none.
        bind_all: bind every loaded object, not only the audited inputs (``tree --bind``).
        verify_all: check the version needs of every loaded object, not only the inputs
            (``tree``: the load fails whichever object's need is missing).
        store: where bindings are kept across runs (``loader.bindcache``; ``cache.active()``), or ``None``.

    Returns:
        The ``LinkageAnalysis``.

    Raises:
        InputError: the target's ``ld.so.cache`` is malformed.
    """
    fs = fs or FileSystemView(env.sysroot)
    analysis = LinkageAnalysis(env)
    elf, musl = _by_loader(binaries)
    budget = LoadBudget([*elf, *musl])
    if musl:
        musl_paths = {b.path for b in musl}
        mine = [r for r in roots if r.path in musl_paths] if roots is not None else None
        _analyze_musl(musl, env, fs, mine, analysis, bind_all, store, budget)
        if roots is not None:
            roots = [r for r in roots if r.path not in musl_paths]
    if not elf:
        return analysis
    if cache is None and env.use_cache:
        cache = _host_ld_cache(fs, analysis)
    first = elf[0]
    interp = next((b.interpreter for b in elf if b.interpreter), None) or _default_interpreter(first.machine)
    system_dirs = env.system_dirs or read_system_dirs(fs, interp, first.machine)
    analysis.system_dirs = system_dirs
    ctx = SearchContext(
        env, fs, cache, system_dirs, env.lib_for(system_dirs), is_driver or (lambda _name: False), rtld=interp
    )
    analysis.search_context = ctx
    _check_named_objects(env, fs, analysis)
    runner = _RootRunner(elf, ctx, analysis, list(roots) if roots is not None else default_roots(elf), budget)
    runner.run_all()
    _bind_and_verify(analysis, fs, runner.by_identity, bind_all, verify_all, store)
    return analysis


def _by_loader(binaries: Sequence[Binary]) -> tuple[list[Binary], list[Binary]]:
    """The ELF executables and shared objects of ``binaries`` (relocatable objects are never
    loaded): ``(glibc's, musl's)`` — musl's loader has its own rules (its path file, no cache, no
    hwcaps), ``loader.musl``, never glibc's."""
    elf: list[Binary] = []
    musl: list[Binary] = []
    for b in binaries:
        if b.format.value != "elf" or b.kind is Kind.RELOCATABLE:
            continue
        (musl if b.libc is Libc.MUSL else elf).append(b)
    return elf, musl


def _host_ld_cache(fs: FileSystemView, analysis: LinkageAnalysis) -> LdCache | None:
    """The view's ``/etc/ld.so.cache``, or ``None`` (a cache that cannot be used is a problem of
    ``analysis``, and ld.so goes on to the system directories without it); sets
    ``analysis.cache_path``."""
    cache_path = "/etc/ld.so.cache"
    try:
        cache: LdCache | None = read_ld_cache(fs.host_path(cache_path))
    except InputError as exc:
        analysis.problems.append(InputError(cache_path, exc.reason, exc.offset))
        cache = None
    analysis.cache_path = cache_path if cache is not None else None
    return cache


def _check_named_objects(env: TargetEnvironment, fs: FileSystemView, analysis: LinkageAnalysis) -> None:
    """Read the objects the options name (``--interpreter``, ``--executable``,
    ``--dlopen-global``, ``--ld-preload``); one that cannot be read is a problem of ``analysis``."""
    for option, paths in (
        ("--interpreter", (env.interpreter,) if env.interpreter else ()),
        ("--executable", (env.executable,) if env.executable else ()),
        ("--dlopen-global", env.dlopen_global),
        ("--ld-preload", env.ld_preload),
    ):
        for path in paths:
            try:
                fs.read_binary(path)
            except InputError as exc:
                analysis.problems.append(InputError(path, f"{option}: {exc.reason}", exc.offset))


class _RootRunner:
    """Loads each root in order into ``analysis`` (``loads``, ``roots``), then each input shared
    library that no load reached, alone (it is dlopened by something).

    Args:
        elf: the glibc-loaded inputs.
        ctx: the search context (its ``fs`` reads what the inputs do not hold).
        analysis: where the loads go.
        chosen: the roots, in order.
    """

    def __init__(
        self,
        elf: Sequence[Binary],
        ctx: SearchContext,
        analysis: LinkageAnalysis,
        chosen: list[Root],
        budget: LoadBudget,
    ) -> None:
        self.ctx, self.fs, self.analysis, self.chosen, self.budget = ctx, ctx.fs, analysis, chosen, budget
        env = ctx.env
        self.by_path = {b.path: b for b in elf}
        #: each input by its file's (device, inode): one file named twice is one input
        self.by_identity: dict[tuple[int, int], Binary] = {}
        for b in elf:
            ident = _identity(self.fs.host_path(_target_path(self.fs, b.path)))
            if ident is not None:
                self.by_identity.setdefault(ident, b)
        # one Python process per machine and class: an aarch64 extension is never imported into the
        # x86-64 interpreter that imported the others, nor binds to the libm it loaded
        self.python_processes: dict[tuple[str, int | None], Process] = {}
        self.python_roots = any(r.kind is RootKind.PYTHON_IMPORT for r in chosen)
        # A dlopen root loads alone, with an empty global scope: loads of single dependencies are shared.
        self.alone = not self.python_roots and not env.executable and not env.dlopen_global
        self.alone_loads = AloneLoads()
        self.noted: set[str] = set()
        self.reached: set[tuple[int, int]] = set()

    def run_all(self) -> None:
        """Every chosen root, then every input library no root reached — but a repair tool's
        vendored copy (in a ``<dist>.libs`` directory) beside Python imports: nothing dlopens it by
        path, it is loaded as a dependency or not at all (unreached: another distribution's copy of
        its SONAME was loaded first), so a load of its own would fail where no process loads it."""
        for root in self.chosen:
            self._note_reached(self.run(root))
        for ident, b in self.by_identity.items():
            if ident not in self.reached and b.kind in ALONE_KINDS:
                if self.python_roots and b.kind is Kind.SHARED_LIBRARY and _vendored(b.path):
                    continue
                self._note_reached(self.run(Root(b.path, root_kind_of(b), reached=False)))

    def _note_reached(self, load: Load | None) -> None:
        if load is not None:
            _note_reached(self.budget.new_objects(load), self.fs, self.noted, self.reached)

    def run(self, root: Root) -> Load | None:
        """Load ``root`` and record it; ``None`` (a problem recorded) when it cannot be read, or
        (listed as skipped) once the loads hold more than their budget (``LoadBudget``)."""
        fs, analysis = self.fs, self.analysis
        if self.budget.exhausted:
            analysis.skipped.append((root.path, self.budget.reason()))
            return None
        binary = self.by_path.get(root.path)
        if binary is None:
            try:
                binary = fs.read_binary(_target_path(fs, root.path))
            except InputError as exc:
                analysis.problems.append(exc)
                return None
        # A library dlopened inside a Python process has the interpreter in its global scope.
        in_python = root.kind is RootKind.DLOPEN and self.python_roots
        # Imports share one process: libraries loaded by an earlier import are reused by
        # SONAME by later ones, in root order. An input no root reaches is loaded alone,
        # in a process of its own (when it is dlopened is unknown: nothing loaded by
        # another unreached input may stand in for its own search).
        process = (
            self.python_processes.setdefault((binary.machine, binary.bits), Process())
            if root.kind is RootKind.PYTHON_IMPORT and root.reached
            else None
        )
        target = _target_path(fs, root.path)
        if root.kind is RootKind.DLOPEN and self.alone:
            load = alone_load(target, binary, self.ctx, fs.read_binary, self.alone_loads)
        else:
            load = load_root(target, binary, root.kind, self.ctx, fs.read_binary, in_python, process)
        analysis.loads.append(load)
        analysis.roots.append(root)
        return load


def _bind_and_verify(
    analysis: LinkageAnalysis,
    fs: FileSystemView,
    by_identity: Mapping[tuple[int, int], Binary],
    bind_all: bool,
    verify_all: bool,
    store: BlobStore | None,
) -> None:
    """Which loaded objects are audited inputs (``analysis.audited``), their bindings and version
    checks (and every loaded object's with ``bind_all`` / ``verify_all``), into ``analysis``."""
    bind_cache: dict[tuple[str, int, tuple[str, ...]], list[Bound]] = {}
    parts = _part_index([load for load in analysis.loads if load.loader == "glibc"], bind_all)
    for load in analysis.loads:
        in_parts = parts is not None and parts.covers(load)
        objects: Mapping[str, Binary] = _PartBinaries(load) if in_parts else _Binaries(load)
        interpreter = INTERPRETER if load.interpreter_virtual else None
        # A plain dlopen root stands for its own load only: each input that is a dependency
        # here is an input of its own, bound in its own load (and so a directory of n
        # libraries costs n bindings, not n squared).
        for obj in _root_only(load) if load.kind is RootKind.DLOPEN and not bind_all else load.iter_objects():
            ident = _identity(fs.host_path(obj.path))
            source = by_identity.get(ident) if ident is not None else None
            if source is not None:
                analysis.audited.setdefault(obj.path, source.path)
            elif not bind_all:
                if verify_all:
                    analysis.version_failures.extend(
                        (load.root, f) for f in _check_versions(load, obj.path, obj.binary, objects)
                    )
                continue
            if in_parts:  # the root of a shared load: looked up part by part, not in its whole scope
                assert parts is not None
                analysis.bindings[(load.root, obj.path)] = parts.bind_root(load, obj.binary)
            else:
                # an input with nothing undefined has nothing to bind
                needs = source is None or bool(obj.binary.symbols.undefined())
                scope = load.scope_for(obj.path) if needs else []
                analysis.bindings[(load.root, obj.path)] = bind_object(
                    obj.binary, scope, objects, interpreter, cache=bind_cache, path=obj.path, store=store
                )
            if source is not None or verify_all:
                analysis.version_failures.extend(
                    (load.root, f) for f in _check_versions(load, obj.path, obj.binary, objects)
                )


def _analyze_musl(
    musl: Sequence[Binary], env: TargetEnvironment, fs: FileSystemView, roots: Sequence[Root] | None,
    analysis: LinkageAnalysis, bind_all: bool, store: BlobStore | None = None, budget: LoadBudget | None = None,
) -> None:  # fmt: skip
    """The musl inputs, loaded as musl's ``ldso/dynlink.c`` loads them (``loader.musl``): each root,
    then each input no root reached on its own; their bindings by name (``musl_matches``).
    ``loader.musl`` is imported here: only a run with musl inputs loads it."""
    from .musl import MuslAloneLoads, MuslProcess, musl_context, musl_loader, musl_matches

    loader = next((b.interpreter for b in musl if b.interpreter and "ld-musl" in b.interpreter), None)
    ctx = musl_context(env, fs, loader or musl_loader(musl[0].machine), musl[0])
    by_identity: dict[tuple[int, int], Binary] = {}
    for b in musl:
        ident = _identity(fs.host_path(_target_path(fs, b.path)))
        if ident is not None:
            by_identity.setdefault(ident, b)
    by_path = {b.path: b for b in musl}
    process, reached = MuslProcess(), set[tuple[int, int]]()
    chosen = list(roots) if roots is not None else default_roots(musl)
    # A dlopen root loads in a process of its own: loads of single dependencies are shared; beside
    # Python extensions it is a dlopen inside the interpreter (its symbols in the global scope).
    in_python = any(r.kind is RootKind.PYTHON_IMPORT for r in chosen)
    run = _MuslRun(ctx, fs, analysis, reached, MuslAloneLoads(), budget or LoadBudget(musl), in_python)
    for root in chosen:
        binary = by_path.get(root.path)
        if binary is None:
            try:
                binary = fs.read_binary(_target_path(fs, root.path))
            except InputError as exc:
                analysis.problems.append(exc)
                continue
        shared = process if root.kind is RootKind.PYTHON_IMPORT and root.reached else None
        run(root, binary, shared)
    for ident, b in by_identity.items():  # the inputs no root reaches, each on its own (not vendored copies)
        if ident not in reached and b.kind in ALONE_KINDS and not (in_python and _vendored(b.path)):
            run(Root(b.path, root_kind_of(b), False), b, None)
    mine = [load for load in analysis.loads if load.loader == "musl"]
    parts = _part_index(mine, bind_all)
    for load in mine:
        objects = _Binaries(load)
        # A dlopen root stands for its own object only (unless every object is bound): read one.
        alone = load.kind is RootKind.DLOPEN and not bind_all
        for obj in _root_only(load) if alone else load.iter_objects():
            ident = _identity(fs.host_path(obj.path))
            source = by_identity.get(ident) if ident is not None else None
            if (source is None and not bind_all) or (
                load.kind is RootKind.DLOPEN and obj.path != load.root and not bind_all
            ):
                continue
            if source is not None:
                analysis.audited.setdefault(obj.path, source.path)
            if parts is not None and parts.covers(load):  # part by part, not its whole scope
                analysis.bindings[(load.root, obj.path)] = parts.bind_root(load, obj.binary, musl_matches)
                continue
            interpreter = INTERPRETER if load.interpreter_virtual else None
            scope = load.scope_for(obj.path) if obj.binary.symbols.undefined() else []  # nothing to bind
            analysis.bindings[(load.root, obj.path)] = bind_object(
                obj.binary, scope, objects, interpreter, path=obj.path, match=musl_matches, store=store
            )


class _MuslRun:
    """Loads musl roots into an analysis, noting the inputs they reach (device, inode): each shared
    part's objects once (``LoadBudget.new_objects``), so a chain of n roots costs n, not n squared."""

    def __init__(
        self, ctx: MuslContext, fs: FileSystemView, analysis: LinkageAnalysis, reached: set[tuple[int, int]],
        alone: MuslAloneLoads, budget: LoadBudget, in_python: bool = False,
    ) -> None:  # fmt: skip
        self.ctx, self.fs, self.analysis, self.reached, self.alone = ctx, fs, analysis, reached, alone
        self.in_python, self.budget = in_python, budget
        self.noted: set[str] = set()

    def __call__(self, root: Root, binary: Binary, process: MuslProcess | None) -> None:
        """Load one musl root (a dlopen in a process of its own: ``musl_alone_load``); once the loads
        hold more than their budget, list it as skipped instead (``LoadBudget``)."""
        from .musl import load_root_musl, musl_alone_load  # loaded already by _analyze_musl

        if self.budget.exhausted:
            self.analysis.skipped.append((root.path, self.budget.reason()))
            return

        target = _target_path(self.fs, root.path)
        if root.kind is RootKind.DLOPEN and process is None and not self.in_python:
            load = musl_alone_load(target, binary, self.ctx, self.alone)
        else:
            load = load_root_musl(target, binary, root.kind, self.ctx, process, self.in_python)
        self.analysis.loads.append(load)
        self.analysis.roots.append(root)
        _note_reached(self.budget.new_objects(load), self.fs, self.noted, self.reached)


class LoadBudget(LoadBound):
    """What the loads of one analysis hold, against a bound linear in the inputs' size
    (``bounds.LoadBound``): a root loaded once the bound is passed is not loaded, but listed as
    skipped, with the reason.

    Args:
        binaries: the inputs (their ``file_size``, bytes).
    """

    def __init__(self, binaries: Sequence[Binary]) -> None:
        super().__init__(binaries)
        self._seen: set[int] = set()

    def new_objects(self, load: Load) -> Iterator[LoadedObject]:
        """The objects of ``load``'s parts not seen before, each shared part once; the parts'
        objects and resolutions are counted against the budget."""
        above: Load | None = None
        for part, hops in load.iter_parts():
            if id(part) in self._seen:
                return  # this part and every part below it were seen with an earlier load
            self._seen.add(id(part))
            self.spent += len(part.own_resolutions())
            for obj in part.own_objects(hops, above):
                self.spent += 1
                yield obj
            above = part


def _note_reached(
    objects: Iterable[LoadedObject], fs: FileSystemView, noted: set[str], reached: set[tuple[int, int]]
) -> None:
    """Add to ``reached`` the (device, inode) of each loaded object's file, each path once
    (``noted``); a virtual object (``<interpreter>``, a policy's library) has none."""
    for obj in objects:
        if obj.path in noted or obj.path.startswith("<"):
            continue
        noted.add(obj.path)
        ident = _identity(fs.host_path(obj.path))
        if ident is not None:
            reached.add(ident)


def _vendored(path: str) -> bool:
    """True for a library in a ``<dist>.libs`` directory: where auditwheel and delvewheel put the
    libraries they vendor, renamed with a hash, reached only as another file's dependency."""
    return posixpath.basename(posixpath.dirname(path)).endswith(".libs")


def _root_only(load: Load) -> Iterator[LoadedObject]:
    """The root's own object of a plain dlopen load (the first at its path), if it was loaded."""
    obj = load.object(load.root)
    if obj is not None:
        yield obj


def _part_index(loads: Sequence[Load], bind_all: bool) -> PartIndex | None:
    """The index binding the roots of the shared dlopen loads among ``loads`` part by part
    (``loader.part_binding``), over the names those roots reference; ``None`` when there are none."""
    shared = [load for load in loads if binds_in_parts(load, bind_all)]
    if not shared:
        return None
    wanted: set[str] = set()
    for load in shared:
        for obj in _root_only(load):
            wanted.update(ref.name for ref in obj.binary.symbols.undefined() if ref.name)
    return PartIndex(shared, wanted)


class _PartBinaries(Mapping[str, Binary]):
    """Path -> ``Binary`` of a load built of parts, each path found in the first part holding it
    from the top (a root's own dependencies: the part below), with no map of the whole load."""

    def __init__(self, load: Load) -> None:
        self._load = load

    def __getitem__(self, path: str) -> Binary:
        for part, _hops in self._load.iter_parts():
            obj = part.own_object(path)
            if obj is not None:
                return obj.binary
        raise KeyError(path)

    def __iter__(self) -> Iterator[str]:
        return iter({o.path: None for o in self._load.iter_objects()})

    def __len__(self) -> int:
        return sum(1 for _path in self)


class _Binaries(Mapping[str, Binary]):
    """Path -> ``Binary`` of a load's objects (a dict over the load order), built on first use."""

    def __init__(self, load: Load) -> None:
        self._load = load
        self._map: dict[str, Binary] | None = None

    def _built(self) -> dict[str, Binary]:
        if self._map is None:
            self._map = {o.path: o.binary for o in self._load.iter_objects()}
        return self._map

    def __getitem__(self, path: str) -> Binary:
        return self._built()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def _default_interpreter(machine: str) -> str:
    return {
        "x86-64": "/lib64/ld-linux-x86-64.so.2",
        "aarch64": "/lib/ld-linux-aarch64.so.1",
        "x86": "/lib/ld-linux.so.2",
        "ppc64le": "/lib64/ld64.so.2",
        "s390x": "/lib/ld64.so.1",
        "ppc64": "/lib64/ld64.so.1",
        "arm": "/lib/ld-linux-armhf.so.3",
        "riscv64": "/lib/ld-linux-riscv64-lp64d.so.1",
        "loongarch64": "/lib64/ld-linux-loongarch-lp64d.so.1",
    }.get(machine, "/lib/ld-linux.so.2")


def _target_path(fs: FileSystemView, path: str) -> str:
    """An input path inside a sysroot becomes the target path the loader would see."""
    if fs.is_host:
        return path
    absolute = os.path.abspath(path)
    if absolute == fs.root or absolute.startswith(fs.root + os.sep):
        return "/" + os.path.relpath(absolute, fs.root)
    return path


def _check_versions(load: Load, path: str, binary: Binary, objects: Mapping[str, Binary]) -> Iterable[VersionFailure]:
    """``_dl_check_map_versions``: every non-weak version need must be defined by its file's object."""
    if not binary.version_needs:
        return
    users: dict[str, list[str]] | None = None  # the references per version name: made on the first failure
    for need in binary.version_needs:
        resolution = load.resolution(path, need.file)
        if resolution is None or resolution.path is None:
            continue  # not loaded (library-not-found) or not a DT_NEEDED (verneed-mismatch)
        provider = objects.get(resolution.path)
        if provider is None or not provider.version_definitions:
            continue  # a provider without versioning satisfies every need (match_version)
        defined = {d.name for d in provider.version_definitions}
        for v in need.versions:
            if v.weak or v.name in defined:
                continue
            if users is None:
                users = _version_users(binary)
            yield VersionFailure(path, need.file, resolution.path, v.name, tuple(sorted(users.get(v.name, []))))


def _version_users(binary: Binary) -> dict[str, list[str]]:
    """Version name -> the names of ``binary``'s undefined symbols referring to it (in table order)."""
    users: dict[str, list[str]] = {}
    for ref in binary.symbols.undefined():
        if ref.version is not None:
            users.setdefault(ref.version.name, []).append(ref.name)
    return users
