"""musl's dynamic loader, emulated: how ``ldso/dynlink.c`` finds, reuses and binds libraries.

Read from musl's ``ldso/dynlink.c`` (git.musl-libc.org, mirrored as github.com/bminor/musl;
functions named below), where it differs from glibc's ld.so (``loader.ldso``):

* ``load_library``: a name starting ``lib`` followed by ``c.``, ``pthread.``, ``rt.``, ``m.``,
  ``dl.``, ``util.`` or ``xnet.`` (``libc.so``, ``libm.so.6``, ``libc.musl-x86_64.so.1``), or
  the loader's own path, *is* the loader (musl's libc and loader are one file) and is never
  searched; so is a file found that defines both ``__libc_start_main`` and ``stdin`` (another
  libc: musl loads itself instead).
* A name with a ``/`` is opened as written (no ``$ORIGIN`` in DT_NEEDED).  Otherwise an object
  already loaded is reused when the *basename it was found under by a search* matches
  (``shortname``; DT_SONAME plays no part), then: LD_LIBRARY_PATH; then the rpath of the
  requester and of each object up its ``needed_by`` chain — the object that *first* loaded it;
  for a ``dlopen`` the chain starts at the main program — where an object's rpath is its
  DT_RUNPATH if it has one, else its DT_RPATH (``decode_dyn``: both are inherited alike);
  ``fixup_rpath``: any ``$`` other than ``$ORIGIN``/``${ORIGIN}`` voids the object's *whole*
  rpath, and ``$ORIGIN`` is the directory of the path the object was loaded by (the main
  program's real path); then the system path: ``<prefix>/etc/ld-musl-$ARCH.path`` (entries
  split on ``:`` or newline; present but unreadable: empty) where ``<prefix>`` is the loader's
  path less its last two components, else ``/lib:/usr/local/lib:/usr/lib``.  No
  ``ld.so.cache``, no hwcaps subdirectories, DF_1_NODEFLIB ignored, empty path entries skipped.
* ``path_open``: the first candidate that *opens* wins — a file of another class or machine,
  or a directory, is not skipped as glibc skips it: the load fails there (``map_library``
  checks only ``e_type``).  A file already loaded under another name (same device and inode)
  is reused.
* ``do_relocs``/``find_sym2``: a symbol binds by name to the first definition in the scope
  (the global objects, then the new object's dependencies), version names ignored, hidden
  definitions (versym bit 15) skipped.
* Its words: ``Error loading shared library libfoo.so.1: No such file or directory (needed by
  X)`` and ``Error relocating X: sym: symbol not found``.

Pure: the ``TargetEnvironment`` and ``FileSystemView`` passed in are all it reads.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
from collections import deque
from collections.abc import Sequence
from dataclasses import field

from ..errors import InputError
from ..model import Binary, Definition, Symbol
from ..records import dataclass
from .closure import INTERPRETER, Load, LoadedObject, RootKind
from .fs import FileSystemView
from .ldso import MAX_ATTEMPTS, RELATIVE_TO_CWD, Attempt, Outcome, Resolution, Source, shown_path
from .modelled import modelled_library, modelled_path
from .target import TargetEnvironment

#: The bytes of ``load_library``'s path buffer, ``char buf[2*NAME_MAX+2]``: ``path_open`` passes
#: over a ``dir/name`` that ``snprintf`` cannot fit in it (musl ``ldso/dynlink.c``).
PATH_BUFFER = 2 * 255 + 2

#: musl's ``LDSO_ARCH`` per ELF machine as ``Binary.machine`` spells it (musl ``arch/*/reloc.h``;
#: armv7 hard-float): the ``$ARCH`` of ``/lib/ld-musl-$ARCH.so.1`` and ``etc/ld-musl-$ARCH.path``.
MUSL_ARCH = {
    "x86-64": "x86_64",
    "x86": "i386",
    "aarch64": "aarch64",
    "ppc64le": "powerpc64le",
    "s390x": "s390x",
    "arm": "armhf",
    "riscv64": "riscv64",
    "loongarch64": "loongarch64",
}

#: What follows ``lib`` in the names ``load_library`` resolves to the loader itself.
_RESERVED = ("c.", "pthread.", "rt.", "m.", "dl.", "util.", "xnet.")

#: musl's built-in system path when ``etc/ld-musl-$ARCH.path`` does not exist.
DEFAULT_SYSTEM_PATH = ("/lib", "/usr/local/lib", "/usr/lib")

_DOLLAR_ORIGIN = re.compile(r"\$\{ORIGIN\}|\$ORIGIN")


def musl_loader(machine: str) -> str:
    """The musl loader's path for ``machine``: ``/lib/ld-musl-x86_64.so.1``."""
    return f"/lib/ld-musl-{MUSL_ARCH.get(machine, machine)}.so.1"


def is_loader_name(name: str, loader: str) -> bool:
    """Does DT_NEEDED ``name`` resolve to the loader itself (``load_library``'s reserved names)?"""
    return name == loader or (name.startswith("lib") and name[3:].startswith(_RESERVED))


def musl_rpath(binary: Binary, origin: str) -> tuple[str, ...] | None:
    """``fixup_rpath``: the directories of ``binary``'s rpath (DT_RUNPATH, else DT_RPATH) with
    ``$ORIGIN`` replaced by ``origin``; ``None`` when it has none or when a ``$`` other than
    ``$ORIGIN``/``${ORIGIN}`` voids it all (``$LIB``, ``$PLATFORM``...)."""
    entries = binary.runpath or binary.rpath
    if not entries:
        return None
    text = ":".join(entries)
    if "$" in _DOLLAR_ORIGIN.sub("", text):
        return None
    return tuple(e for e in re.split(r"[:\n]", _DOLLAR_ORIGIN.sub(origin, text)) if e)


def system_path(fs: FileSystemView, loader: str) -> tuple[tuple[str, ...], str]:
    """The system path and where it comes from: ``etc/ld-musl-$ARCH.path`` beside the loader's
    prefix (split on ``:`` and newlines; present but unreadable: empty), else the default."""
    parts = loader.split("/")
    prefix = "/".join(parts[:-2]) if loader.startswith("/") and len(parts) >= 3 else ""
    arch = posixpath.basename(loader)[len("ld-musl-") : -len(".so.1")]
    path_file = f"{prefix}/etc/ld-musl-{arch}.path"
    if fs.stat(path_file) is None:
        return DEFAULT_SYSTEM_PATH, "musl's built-in /lib:/usr/local/lib:/usr/lib"
    data = fs.read_bytes(path_file, limit=1 << 20)
    if data is None:
        return (), f"{path_file} (present but unreadable: no system path)"
    dirs = tuple(d for d in re.split(r"[:\n]", data.decode("utf-8", "replace")) if d)
    return dirs, path_file


@dataclass(frozen=True, slots=True)
class MuslContext:
    """The fixed inputs of every musl load: target, view, the loader, its system path.

    Attributes:
        env: the target (LD_LIBRARY_PATH, the policy's system libraries for musl).
        fs: the file-system view.
        loader: the loader's path (``/lib/ld-musl-x86_64.so.1``): PT_INTERP, or musl's for the machine.
        loader_binary: the loader as read (musl's libc), or a modelled one when the target has
            no such file here (``loader.modelled``: its definitions are unknown).
        system_dirs: the system path.
        system_source: where the system path comes from (for messages).
    """

    env: TargetEnvironment
    fs: FileSystemView
    loader: str
    loader_binary: Binary
    system_dirs: tuple[str, ...]
    system_source: str


def musl_context(env: TargetEnvironment, fs: FileSystemView, loader: str, want: Binary) -> MuslContext:
    """The ``MuslContext`` for a process whose loader is at ``loader``; ``want`` is an object
    it loads (class and machine of a modelled loader)."""
    try:
        binary = fs.read_binary(loader)
    except InputError:
        binary = modelled_library(modelled_path(env.musl_policy or "musl", posixpath.basename(loader)), want)
    dirs, source = system_path(fs, loader)
    return MuslContext(env, fs, loader, binary, dirs, source)


@dataclass(slots=True)
class MuslProcess:
    """What one process has loaded: objects by path, by the basename a search found them under
    (``shortname``), by device and inode, and each one's ``needed_by``."""

    binaries: dict[str, Binary] = field(default_factory=dict)
    shortnames: dict[str, str] = field(default_factory=dict)
    identities: dict[tuple[int, int], str] = field(default_factory=dict)
    needed_by: dict[str, str | None] = field(default_factory=dict)
    origins: dict[str, str] = field(default_factory=dict)
    tried: int = 0  # places the searches of this load have tried (against MAX_PLACES)
    open_end: bool = False  # a search went past its needing chain's rpaths (its result depends on what lies above)


#: Places one load may try before its searches stop: musl itself has no limit, but a hostile
#: ``etc/ld-musl-$ARCH.path`` of 250,000 entries times hundreds of DT_NEEDED would be tens of
#: millions of file checks (dyld's emulation stops at the same count).
MAX_PLACES = 100_000


def _failed(name: str, requester: str, attempts: list[Attempt], error: str | None = None) -> Resolution:
    return _resolved(name, requester, (None, None, None), attempts, error)


def _resolved(
    name: str, requester: str, found: tuple[str | None, Source | None, str | None], attempts: list[Attempt],
    error: str | None = None,
) -> Resolution:  # fmt: skip
    """The ``Resolution`` of ``name`` (``found``: path, source, owner) keeping the first
    ``MAX_ATTEMPTS`` attempts and counting the rest, whatever the search ended in (one past 9,500
    missing RUNPATH directories to an object loaded already kept every one: 567 MB for five 81 KB files)."""
    more = max(0, len(attempts) - MAX_ATTEMPTS)
    return Resolution(name, requester, *found, tuple(attempts[:MAX_ATTEMPTS]), error, more)


class _Search:
    """One ``load_library`` call for a name without a slash: the paths tried, in musl's order."""

    def __init__(self, name: str, requester: str, ctx: MuslContext, process: MuslProcess) -> None:
        self.name, self.requester, self.ctx, self.process = name, requester, ctx, process
        self.attempts: list[Attempt] = []

    def run(self) -> tuple[str | None, Source | None, str | None, str | None]:
        """(path, source, owner, error): the first candidate that opens, or the error that stops."""
        ctx = self.ctx
        if ctx.env.ld_library_path:
            hit = self.open_in(tuple(d for d in ctx.env.ld_library_path if d), Source.LD_LIBRARY_PATH, None)
            if hit:
                return hit
        chain: str | None = self.requester
        while chain is not None:
            binary = self.process.binaries.get(chain)
            if binary is not None:
                dirs = musl_rpath(binary, self.process.origins.get(chain, posixpath.dirname(chain) or "."))
                source = Source.RUNPATH if binary.runpath else Source.RPATH
                if dirs is None and (binary.runpath or binary.rpath):
                    why = "a $ token other than $ORIGIN voids the whole rpath (fixup_rpath)"
                    self.attempts.append(
                        Attempt(
                            shown_path(":".join(binary.runpath or binary.rpath)), source, chain, Outcome.MISSING, why
                        )
                    )
                hit = self.open_in(dirs or (), source, chain)
                if hit:
                    return hit
            chain = self.process.needed_by.get(chain)
        self.process.open_end = True
        return self.system()

    def system(self) -> tuple[str | None, Source | None, str | None, str | None]:
        """The system path; under a platform policy only its system libraries are there."""
        ctx, name = self.ctx, self.name
        allowed = ctx.env.musl_system_libraries
        if allowed is not None and name not in allowed:
            why = f"not one of the system libraries of the target environment ({ctx.env.musl_policy or 'policy'})"
            self.attempts.append(Attempt(name, Source.SYSTEM, None, Outcome.OUTSIDE_TARGET, why))
            return None, None, None, None
        hit = self.open_in(ctx.system_dirs, Source.SYSTEM, None, fitting=allowed is not None)
        if hit or allowed is None:
            return hit or (None, None, None, None)
        path = modelled_path(ctx.env.musl_policy or "musl", name)
        self.attempts.append(Attempt(path, Source.POLICY, None, Outcome.FOUND, "a system library of the target policy"))
        return path, Source.POLICY, None, None

    def open_in(
        self, dirs: Sequence[str], source: Source, owner: str | None, fitting: bool = False
    ) -> tuple[str, Source, str | None, str | None] | None:
        """``path_open``: the first ``dir/name`` that exists opens; a missing one is passed over.
        With ``fitting`` (the host's system path standing in for a policy's system), a file this
        requester could not load is passed over too: it is the host's, not the target's.  A
        ``dir/name`` that does not fit musl's path buffer (``PATH_BUFFER``) is passed over unopened."""
        for directory in dirs:
            path = f"{directory}/{self.name}"
            if len(path.encode("utf-8", "surrogateescape")) >= PATH_BUFFER:
                why = f"longer than musl's {PATH_BUFFER - 1}-byte path buffer: passed over unopened (path_open)"
                self.attempts.append(Attempt(shown_path(path), source, owner, Outcome.MISSING, why))
                continue
            self.process.tried += 1
            if self.process.tried > MAX_PLACES:
                why = f"search stopped: more than {MAX_PLACES} places tried in this load"
                self.attempts.append(Attempt(path, source, owner, Outcome.MISSING, why))
                return None
            st = self.ctx.fs.stat(path)
            if st is None:
                self.attempts.append(Attempt(path, source, owner, Outcome.MISSING))
                continue
            if fitting and _map(self.ctx, path, self.process.binaries[self.requester])[1] is None:
                self.attempts.append(Attempt(path, source, owner, Outcome.WRONG_CLASS, "the host's, not the target's"))
                continue
            self.attempts.append(Attempt(path, source, owner, Outcome.FOUND))
            return path, source, owner, None
        return None


@dataclass(slots=True)
class _Loading:
    """One root's load under way."""

    load: Load
    ctx: MuslContext
    process: MuslProcess
    queue: deque[tuple[str, int]] = field(default_factory=deque)

    def add(
        self, path: str, binary: Binary, needed_by: str | None, source: Source, depth: int, found_as: str | None
    ) -> None:
        process = self.process
        process.binaries[path] = binary
        process.needed_by[path] = needed_by
        process.origins.setdefault(path, posixpath.dirname(path) or ".")
        if found_as is not None:
            process.shortnames.setdefault(found_as, path)
        ident = _identity(self.ctx.fs, path)
        if ident is not None:
            process.identities.setdefault(ident, path)
        self.load.add_object(LoadedObject(path, binary, needed_by, source, depth))
        self.queue.append((path, depth))

    def loader_object(self, parent: str, depth: int) -> str:
        """The loader itself, once per load (its path)."""
        ctx = self.ctx
        path = ctx.loader_binary.path  # the loader's path, or its modelled stand-in's
        if self.load.object(path) is None:
            self.process.binaries.setdefault(path, ctx.loader_binary)
            self.load.add_object(LoadedObject(path, ctx.loader_binary, parent, Source.LOADED, depth))
        return path

    def resolve(self, name: str, requester: str, depth: int) -> None:
        """``load_library(name, requester)`` and what comes of it."""
        ctx, process, load = self.ctx, self.process, self.load
        if is_loader_name(name, ctx.loader):
            path = self.loader_object(requester, depth + 1)
            load.resolutions[(requester, name)] = Resolution(name, requester, path, Source.LOADED, None, ())
            return
        found: tuple[str | None, Source | None, str | None, str | None]
        if "/" in name:  # opened as written (no $ORIGIN in DT_NEEDED), a relative one in the process's cwd
            absolute = name.startswith("/")
            exists = absolute and ctx.fs.stat(name) is not None
            detail = "" if absolute else RELATIVE_TO_CWD
            attempts = [Attempt(name, Source.PATH, None, Outcome.FOUND if exists else Outcome.MISSING, detail)]
            found = (name, Source.PATH, None, None) if exists else (None, None, None, None)
        elif name in process.shortnames:
            load.resolutions[(requester, name)] = Resolution(
                name, requester, process.shortnames[name], Source.LOADED, None, ()
            )
            self._reuse(process.shortnames[name], requester, depth)
            return
        else:
            search = _Search(name, requester, ctx, process)
            found, attempts = search.run(), search.attempts
        self._opened(name, requester, depth, found, attempts)

    def _opened(self, name: str, requester: str, depth: int,
                found: tuple[str | None, Source | None, str | None, str | None], attempts: list[Attempt]) -> None:  # fmt: skip
        """The candidate that opened (or none): reuse by identity, map it, or fail as musl fails."""
        ctx, process, load = self.ctx, self.process, self.load
        path, source, owner, _error = found
        if path is None or source is None:
            load.resolutions[(requester, name)] = _failed(name, requester, attempts)
            load.errors.append((requester, musl_load_error(name, requester)))
            return
        if source is Source.POLICY:
            binary = modelled_library(path, process.binaries[requester])
        else:
            ident = _identity(ctx.fs, path)
            if ident is not None and ident in process.identities:
                same = process.identities[ident]
                if "/" not in name:
                    process.shortnames.setdefault(name, same)
                load.resolutions[(requester, name)] = _resolved(name, requester, (same, Source.LOADED, None), attempts)
                self._reuse(same, requester, depth)
                return
            error, mapped = _map(ctx, path, process.binaries[requester])
            if mapped is None:
                load.resolutions[(requester, name)] = _failed(name, requester, attempts, f"{path}: {error}")
                load.errors.append((requester, musl_load_error(name, requester, error)))
                return
            binary = mapped
            if _is_libc(binary):  # another libc found: musl loads itself instead (load_library)
                loader = self.loader_object(requester, depth + 1)
                load.resolutions[(requester, name)] = _resolved(
                    name, requester, (loader, Source.LOADED, None), attempts
                )
                return
        load.resolutions[(requester, name)] = _resolved(name, requester, (path, source, owner), attempts)
        self.add(path, binary, requester, source, depth + 1, None if "/" in name else name)

    def _reuse(self, path: str, parent: str, depth: int) -> None:
        """An object already in the process joins this load's list (once) with its own dependencies."""
        if self.load.object(path) is None:
            binary = self.process.binaries[path]
            self.load.add_object(LoadedObject(path, binary, parent, Source.LOADED, depth + 1))
            self.queue.append((path, depth + 1))

    def drain(self) -> None:
        """``load_deps``: every DT_NEEDED of every object, in load order (breadth-first)."""
        while self.queue:
            path, depth = self.queue.popleft()
            for needed in self.process.binaries[path].needed_names:
                if (path, needed) not in self.load.resolutions:
                    self.resolve(needed, path, depth)


def _identity(fs: FileSystemView, path: str) -> tuple[int, int] | None:
    st = fs.stat(path) if not path.startswith("<") else None
    return (st.st_dev, st.st_ino) if st is not None else None


def _map(ctx: MuslContext, path: str, want: Binary) -> tuple[str, Binary | None]:
    """``map_library`` on the candidate: ("", the object) or (the reason the load fails there)."""
    st = ctx.fs.stat(path)
    if st is not None and os.path.isdir(ctx.fs.host_path(path)):
        return "Is a directory (musl opens the first candidate and fails on it)", None
    try:
        binary = ctx.fs.read_binary(path)
    except InputError as exc:
        return f"Exec format error ({exc.reason})", None
    if binary.format.value != "elf" or (binary.machine, binary.bits, binary.endian) != (
        want.machine,
        want.bits,
        want.endian,
    ):
        return (
            f"Exec format error: {binary.machine} ELF{binary.bits} object where {want.machine} ELF{want.bits} is "
            "loaded — musl does not skip it as glibc does; the load fails"
        ), None
    return "", binary


def _is_libc(binary: Binary) -> bool:
    """Defines ``__libc_start_main`` and ``stdin``: a C library (musl's or glibc's)."""
    defs = binary.symbols.definitions()
    return "__libc_start_main" in defs and "stdin" in defs


def musl_load_error(name: str, requester: str, error: str = "No such file or directory") -> str:
    """musl's words for a DT_NEEDED that cannot be loaded (``load_direct_deps``)."""
    return f"Error loading shared library {name}: {error} (needed by {requester})"


def musl_relocation_error(path: str, symbol: str) -> str:
    """musl's words for a reference that binds nowhere (``do_relocs``)."""
    return f"Error relocating {path}: {symbol}: symbol not found"


def musl_matches(ref: Symbol, provider: Binary, definitions: tuple[Definition, ...]) -> bool:
    """``find_sym2``: any non-hidden definition of the name binds; versions play no part."""
    return any(not d.hidden for d in definitions)


def load_root_musl(
    root_path: str,
    root: Binary,
    kind: RootKind,
    ctx: MuslContext,
    process: MuslProcess | None = None,
    in_python: bool = False,
) -> Load:
    """Load one root and its dependencies as musl does.

    Args:
        root_path: the root's path; ``$ORIGIN`` is its directory (an executable's: its real path).
        root: the parsed root.
        kind: an executable is the main program (``needed_by`` chains end at it); a Python
            import or a ``dlopen`` is opened by path from the main program (the interpreter: a
            generic one has no rpath), its dependencies searched up their own chain.
        ctx: the loader's fixed inputs.
        process: shared by imports in one Python process (objects stay loaded); ``None``: its own.
        in_python: a ``dlopen`` made inside a Python process (the inputs hold Python extensions):
            the interpreter is in its global scope, as for an import.

    Returns:
        The ``Load`` (``loader`` ``"musl"``); load-stopping errors are recorded, never raised.
    """
    load = Load(root_path, kind, loader="musl")
    process = process or MuslProcess()
    loading = _Loading(load, ctx, process)
    if kind is RootKind.EXECUTABLE:
        loading.add(root_path, root, None, Source.ROOT, 0, None)
        with contextlib.suppress(InputError):  # $ORIGIN of the main program: its real path
            process.origins[root_path] = posixpath.dirname(ctx.fs.real_path(root_path))
        loading.drain()
        load.global_scope = [o.path for o in load.objects]
        return load
    if kind is RootKind.PYTHON_IMPORT or (kind is RootKind.DLOPEN and in_python):
        # The interpreter's global scope holds musl's loader, which is its libc (ldso/dynlink.c).
        load.global_scope.append(INTERPRETER)
        load.global_scope.append(loading.loader_object(INTERPRETER, 1))
        load.interpreter_virtual = True
    ident = _identity(ctx.fs, root_path)
    if ident is not None and ident in process.identities:
        loading._reuse(process.identities[ident], root_path, -1)
    else:
        loading.add(root_path, root, None, Source.ROOT, 0, None)
    loading.drain()
    load.local_scope = [o.path for o in load.objects]
    return load


class MuslAloneLoads:
    """The loads of musl libraries dlopened alone, shared between roots (``musl_alone_load``).

    Attributes:
        loads: path -> the load of that path dlopened alone.
        looking_up: DT_NEEDED name -> the parts whose own resolutions look it up.
        holding: (device, inode) -> the parts whose own objects are that file.
        searches: ``load_library`` calls made (a count: each part's own, once).
    """

    __slots__ = ("_facts", "holding", "loads", "looking_up", "searches")

    def __init__(self) -> None:
        self.loads: dict[str, Load] = {}
        self.looking_up: dict[str, list[Load]] = {}
        self.holding: dict[tuple[int, int], list[Load]] = {}
        self._facts: dict[int, tuple[Load, int, bool, frozenset[tuple[int, int]]]] = {}
        self.searches = 0

    def add(self, path: str, load: Load, tried: int, open_end: bool, fs: FileSystemView) -> Load:
        """Keep ``load`` as the load of ``path`` dlopened alone; ``tried``: the places its searches
        tried in a process of its own; ``open_end``: one of them went past its needing chain."""
        self.loads[path] = load
        for _requester, name in load.own_resolutions():
            self.looking_up.setdefault(name, []).append(load)
        own = frozenset(i for o in load.own_objects() if (i := _identity(fs, o.path)) is not None)
        for ident in own:
            self.holding.setdefault(ident, []).append(load)
        self._facts[id(load)] = (load, tried, open_end, own)
        return load

    def tried(self, load: Load) -> int:
        """Places the searches of ``load`` tried, in a process of its own."""
        return self._facts[id(load)][1]

    def open_end(self, load: Load) -> bool:
        """True when a search of ``load`` went past its needing chain (to the system path)."""
        return self._facts[id(load)][2]

    def shares(self, below: Load, name: str, ident: tuple[int, int] | None) -> bool:
        """True when no part of ``below`` looks up ``name`` or holds the file ``ident``: each asked the
        cheaper way round, as ``closure.AloneLoads.shares`` asks it."""
        depth = below.height + 1
        lookers = self.looking_up.get(name, ())
        if len(lookers) <= depth:
            if any(below.holds_part(part) for part in lookers):
                return False
        elif any(looked == name for part, _hops in below.iter_parts() for _r, looked in part.own_resolutions()):
            return False
        if ident is None:
            return True
        holders = self.holding.get(ident, ())
        if len(holders) <= depth:
            return not any(below.holds_part(part) for part in holders)
        return not any(ident in self._facts[id(part)][3] for part, _hops in below.iter_parts())


#: What a library's own part is when dlopened alone: the resolution of its one DT_NEEDED, the
#: library found, the places tried and whether that search went past the library's own rpath.
_OwnPart = tuple[Resolution, Binary, int, bool]


def _single_dependency(path: str, binary: Binary, ctx: MuslContext, loads: MuslAloneLoads) -> _OwnPart | None:
    """The one DT_NEEDED of ``path`` dlopened alone, searched and found as a new object; ``None``
    when it has another shape (none or several, a name with a slash, the loader, already loaded)."""
    needed = binary.needed_names
    if len(needed) != 1 or "/" in needed[0] or is_loader_name(needed[0], ctx.loader) or path == ctx.loader:
        return None
    process = MuslProcess()
    load = Load(path, RootKind.DLOPEN, loader="musl")
    loading = _Loading(load, ctx, process)
    loading.add(path, binary, None, Source.ROOT, 0, None)
    loading.queue.clear()
    loading.resolve(needed[0], path, 0)
    loads.searches += 1
    resolution = load.own_resolutions().get((path, needed[0]))
    objects = load.objects
    if (
        resolution is None
        or resolution.path is None
        or resolution.source in (None, Source.LOADED, Source.POLICY)
        or load.errors
        or len(objects) != 2
        or objects[1].path != resolution.path
    ):
        return None
    return resolution, objects[1].binary, process.tried, process.open_end


def _alone(path: str, binary: Binary, ctx: MuslContext, loads: MuslAloneLoads) -> Load:
    """``load_root_musl`` of ``path`` dlopened in a process of its own, kept in ``loads``."""
    process = MuslProcess()
    load = load_root_musl(path, binary, RootKind.DLOPEN, ctx, process)
    loads.searches += len(load.own_resolutions())
    return loads.add(path, load, process.tried, process.open_end, ctx.fs)


def _composes(path: str, binary: Binary, own: _OwnPart, below: Load, loads: MuslAloneLoads, ctx: MuslContext) -> bool:
    """Whether ``path``'s load is its own part over ``below`` one level deeper (see ``musl_alone_load``)."""
    resolution, _found, tried, _open = own
    if tried + loads.tried(below) > MAX_PLACES:
        return False
    if (binary.runpath or binary.rpath) and loads.open_end(below):
        return False
    return loads.shares(below, resolution.name, _identity(ctx.fs, path))


def musl_alone_load(root_path: str, root: Binary, ctx: MuslContext, loads: MuslAloneLoads) -> Load:
    """``load_root_musl(root_path, root, RootKind.DLOPEN, ctx)``, sharing the loads of single dependencies.

    A library dlopened in a process of its own whose one DT_NEEDED (no slash, not the loader) a
    search finds as a new object loads as itself over the load of that dependency dlopened alone,
    one level deeper (``Load.on_top``), when nothing that decides that load differs between the two
    processes (musl ``ldso/dynlink.c``, ``load_library``):

    * no part of it looks up the name the library needs it by (an object is reused by the name a
      search found it under: in the library's process that name is taken);
    * no object of it is the library's own file (reused by device and inode);
    * the library has no rpath, or none of its searches went past its needing chain (musl's
      search goes on up ``needed_by``: the library's DT_RUNPATH/DT_RPATH would come next);
    * the places tried, the library's and its own, stay within ``MAX_PLACES`` (counted per process).

    Otherwise ``load_root_musl`` builds it.  Walks the chain of single dependencies iteratively.
    """
    pending: list[tuple[str, Binary, _OwnPart]] = []
    seen: set[str] = set()
    path, binary = root_path, root
    while True:
        hit = loads.loads.get(path)
        first = next(iter(hit.own_objects()), None) if hit is not None else None
        if hit is not None and first is not None and first.binary is binary:
            load = hit
            break
        own = None if path in seen else _single_dependency(path, binary, ctx, loads)
        seen.add(path)
        if own is None:
            load = _alone(path, binary, ctx, loads)
            break
        pending.append((path, binary, own))
        assert own[0].path is not None
        path, binary = own[0].path, own[1]
    while pending:
        path, binary, own = pending.pop()
        if _composes(path, binary, own, load, loads, ctx):
            shared = Load.on_top(path, binary, own[0], load, loader="musl")
            load = loads.add(path, shared, own[2] + loads.tried(load), own[3] or loads.open_end(load), ctx.fs)
        else:
            load = _alone(path, binary, ctx, loads)
    return load
