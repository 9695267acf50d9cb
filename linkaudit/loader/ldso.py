"""The search for one DT_NEEDED, in the order of glibc's ``elf/dl-load.c`` (``_dl_map_object``).

For a name without a slash:

1. an object already loaded whose SONAME (or a name it was loaded by) matches is reused;
2. if the requesting object has no DT_RUNPATH: the DT_RPATH of the requesting object,
   then of the object that loaded it, and so on up the loader chain, then of the main
   executable (an object with DT_RUNPATH has no DT_RPATH: ``get-dynamic-info.h`` drops it);
3. LD_LIBRARY_PATH;
4. the DT_RUNPATH of the requesting object only;
5. ``ld.so.cache`` (skipped, for entries inside the system directories, under DF_1_NODEFLIB);
6. the ld.so's built-in system directories (skipped under DF_1_NODEFLIB).

Every directory is tried with its glibc-hwcaps subdirectories first, most capable
first.  A candidate of the wrong ELF class, byte order or machine is skipped, as
``open_verify`` skips it; one that exists but is not a valid ELF object stops the
load with an error.  A name with a slash is opened as a path (after ``$ORIGIN``
expansion).  Every path tried is recorded with why it was tried.

This module is pure: its inputs are the ``TargetEnvironment``, the
``FileSystemView`` and the ``LdCache`` passed in.
"""

from __future__ import annotations

import enum
import functools
import posixpath
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field

from ..errors import InputError
from ..model import DF_1_NODEFLIB, Binary
from ..records import dataclass
from .fs import FileSystemView
from .ldcache import LdCache, expected_cache_flags
from .modelled import modelled_library, modelled_path
from .target import FALLBACK_SYSTEM_DIRS, TargetEnvironment, expand_dst


def _is_loader_name(name: str, rtld: str | None, machine: str) -> bool:
    """Whether DT_NEEDED ``name`` is the dynamic loader itself — the target's ``rtld`` or the
    loader of the requester's own machine (``ld-linux.so.2`` NEEDed by an i386 ``libc.so.6``):
    glibc's ld.so is in every namespace before any search (``elf/rtld.c``), so a policy's list of
    system libraries never has to name it."""
    if rtld is not None and name == posixpath.basename(rtld):
        return True
    from ..config.policies import loader_for_machine  # the policy data, read only under a policy

    loader = loader_for_machine(machine)
    return loader is not None and name == posixpath.basename(loader)


class Source(enum.StrEnum):
    """Why a path was tried (or how an object was found)."""

    ROOT = "root"
    PATH = "path"  # DT_NEEDED with a slash
    LOADED = "already-loaded"
    RPATH = "DT_RPATH"
    LD_LIBRARY_PATH = "LD_LIBRARY_PATH"
    RUNPATH = "DT_RUNPATH"
    CACHE = "ld.so.cache"
    SYSTEM = "system-directory"
    PRELOAD = "LD_PRELOAD"
    DLOPEN_GLOBAL = "dlopen-global"
    POLICY = "target-policy"  # a system library of the target's policy, known by name (loader.modelled)


#: Directories the path searches of one audit may try before they stop: ld.so itself has no limit,
#: but a hostile file of 3,000 DT_NEEDED entries and a DT_RUNPATH of 3,000 directories (148 KB) is 9
#: million tries; real audits try thousands (/usr/lib/x86_64-linux-gnu: ~10,000). The dyld and musl
#: emulations stop likewise (``loader.musl.MAX_PLACES``).
MAX_PLACES = 1_000_000

#: Paths kept per resolution (a hostile file with 1,000 RPATH entries and 1,000 DT_NEEDED
#: would otherwise make a million records); the rest are counted.
MAX_ATTEMPTS = 64
#: Linux's ``PATH_MAX`` (bytes, the NUL included): ``open`` and ``stat`` of a longer path fail
#: with ``ENAMETOOLONG``; glibc's ``open_path`` then finds the directory "nonexisting" and goes on.
PATH_MAX = 4096
#: Characters of a path longer than ``PATH_MAX`` an attempt keeps from its start (and 40 from its end).
LONG_PATH_HEAD = 120


def shown_path(path: str) -> str:
    """``path`` as an attempt keeps it: whole, or when it is too long to open (``PATH_MAX`` bytes
    or more) its start, its length and its end — a 48 KB ``$ORIGIN/../..`` RUNPATH entry tried for
    each of 300 DT_NEEDED made a 15 MB report, and 20 such files ran out of memory."""
    if len(path) < PATH_MAX:
        return path
    return f"{path[:LONG_PATH_HEAD]}…[{len(path)} characters]…{path[-40:]}"


class Outcome(enum.StrEnum):
    """What came of one path tried."""

    FOUND = "found"
    MISSING = "missing"
    WRONG_CLASS = "wrong-class"
    INVALID = "invalid"
    SKIPPED_NODEFLIB = "skipped-nodeflib"
    DRIVER_ABSENT = "driver-absent"
    OUTSIDE_TARGET = "outside-target"


@dataclass(frozen=True, slots=True)
class Attempt:
    """One path the loader tried.

    Attributes:
        path: the candidate path (target path; ``$ORIGIN`` expanded, not normalised).
        source: why it was tried.
        owner: the object whose DT_RPATH/DT_RUNPATH supplied the directory, or ``None``.
        outcome: what happened.
        detail: a reason for ``wrong-class``/``invalid`` (e.g. ``"ELFCLASS32"``), else ``""``.
    """

    path: str
    source: Source
    owner: str | None
    outcome: Outcome
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Resolution:
    """How one DT_NEEDED of one object was resolved.

    Attributes:
        name: the DT_NEEDED string.
        requester: path of the object that needs it.
        path: the path it resolved to, or ``None`` when it resolved nowhere.
        source: how it was found (``None`` when not found).
        owner: the object whose search path found it (for DT_RPATH/DT_RUNPATH).
        attempts: every path tried, in order.
        error: the load-stopping error (``"invalid ELF header"``...) when a candidate was
            not a usable ELF object, else ``None``.
        more_attempts: paths tried beyond the first ``MAX_ATTEMPTS``, counted, not kept.
    """

    name: str
    requester: str
    path: str | None
    source: Source | None
    owner: str | None
    attempts: tuple[Attempt, ...]
    error: str | None = None
    more_attempts: int = 0

    @property
    def found(self) -> bool:
        """True when the name resolved to a file."""
        return self.path is not None


class Requester:
    """What the search needs to know about the requesting object and its loader chain."""

    __slots__ = ("binary", "loader", "origin", "path")

    def __init__(self, path: str, binary: Binary, loader: Requester | None, origin: str) -> None:
        self.path = path
        self.binary = binary
        self.loader = loader
        self.origin = origin


@functools.lru_cache(maxsize=1 << 16)
def origin_of(path: str) -> str:
    """``$ORIGIN`` of an object found at ``path``: its directory, symlinks not resolved (``dl-object.c``)."""
    directory = posixpath.dirname(path)
    return directory or "."


def read_system_dirs(fs: FileSystemView, interpreter: str | None, machine: str) -> tuple[str, ...]:
    """The built-in search directories of the target's ld.so.

    glibc compiles them into ld.so as one block of NUL-separated absolute paths,
    each ending in ``/`` (``elf/dl-load.c`` ``system_dirs``, from ``gen-trusted-dirs``).
    They are read from the interpreter's file (``PT_INTERP``) under the view; when it
    cannot be read the distribution-neutral ``FALLBACK_SYSTEM_DIRS`` are used.
    """
    if interpreter:
        data = fs.read_bytes(interpreter, limit=8 << 20)
        if data:
            found = _scan_system_dirs(data)
            if found:
                return found
    return FALLBACK_SYSTEM_DIRS.get(machine, ("/lib", "/usr/lib"))


#: At most this many built-in directories are taken from an ld.so (glibc builds have 2 to 6).
MAX_SYSTEM_DIRS = 16


_DIR_RUN = re.compile(rb"(?:/[\x21-\x7e]{0,250}?lib[\x21-\x7e]{0,250}?/\x00)+")


def _scan_system_dirs(data: bytes) -> tuple[str, ...]:
    """The longest run of consecutive NUL-terminated absolute ``.../lib.../`` strings (one regex pass)."""
    best = b""
    for m in _DIR_RUN.finditer(data):
        if m.end() - m.start() > len(best) and m.group(0).count(b"\0") > best.count(b"\0"):
            best = m.group(0)
    parts = [p for p in best.split(b"\0") if p][:MAX_SYSTEM_DIRS]
    return tuple(dict.fromkeys(p.decode("ascii", "replace").rstrip("/") or "/" for p in parts))


def _verify(fs: FileSystemView, path: str, want: Binary) -> tuple[Outcome, str, Binary | None]:
    """``open_verify``: is ``path`` an ELF object this requester can load?"""
    st = fs.stat(path)
    if st is None:
        return Outcome.MISSING, "", None
    if stat.S_ISDIR(st.st_mode):
        return Outcome.INVALID, "cannot read file data: Is a directory", None
    if not stat.S_ISREG(st.st_mode):
        # ld.so would open it and block (a FIFO) or read a device: the load cannot succeed.
        return Outcome.INVALID, "not a regular file (a FIFO, socket or device: ld.so would block or fail on it)", None
    try:
        candidate = fs.read_binary(path)
    except InputError as exc:
        # open_verify's words: the file is too short for an ELF header, or its header is invalid.
        head = fs.read_bytes(path, limit=64) or b""
        glibc = "file too short" if len(head) < 64 else "invalid ELF header"
        return Outcome.INVALID, f"{glibc} ({exc.reason})", None
    if candidate.bits != want.bits:
        return Outcome.WRONG_CLASS, f"ELFCLASS{candidate.bits}", None
    if candidate.endian != want.endian:
        # open_verify: a wrong data encoding is fatal, unlike a wrong class or machine.
        return Outcome.INVALID, f"ELF file data encoding not {want.endian.value}-endian", None
    if candidate.machine != want.machine:
        return Outcome.WRONG_CLASS, f"machine {candidate.machine}", None
    return Outcome.FOUND, "", candidate


#: Why a DT_NEEDED with a slash that does not start with one is not looked for: ld.so ``open()``s
#: it as written (``_dl_map_object``: a name with a slash is never searched), relative to the
#: working directory of the process, which a file cannot tell (the auditor's own told nothing).
RELATIVE_TO_CWD = "relative to the working directory of the process, which the files cannot tell"


#: Where a search looks, in order: (why, the object whose DT_RPATH/DT_RUNPATH supplied the
#: directories or ``None``, the directories with ``$ORIGIN``/``$LIB``/``$PLATFORM`` expanded).
SearchList = tuple[tuple[Source, str | None, tuple[str, ...]], ...]

#: What a path search found, without the requester: (path, source, owner, the Binary found,
#: error, attempts, attempts beyond ``MAX_ATTEMPTS``).
_Outcome = tuple[str | None, Source | None, str | None, Binary | None, str | None, tuple[Attempt, ...], int]


class SearchMemo:
    """The path searches of one audit, each distinct search done once.

    A path search is a function of the name, the expanded search list (which carries the
    owners of DT_RPATH/DT_RUNPATH entries), DF_1_NODEFLIB, the requester's class, byte order
    and machine, and the ``SearchContext`` (target, view, cache, system directories) this
    memo belongs to; the requester itself only names the ``Resolution``.  What is already
    loaded is the root's own state and is matched before the memo is asked.

    Attributes:
        searches: path searches done (memo misses).
        lookups: path searches asked for (hits and misses).
        places: directories the searches have tried (against ``MAX_PLACES``).
    """

    __slots__ = ("_direct", "_expanded", "_needed", "_outcomes", "lookups", "places", "searches")

    def __init__(self) -> None:
        self._outcomes: dict[tuple[object, ...], _Outcome] = {}
        self._direct: dict[tuple[str, str, str, int], tuple[Resolution, Binary | None, Binary]] = {}
        self._needed: dict[int, tuple[tuple[str, ...], Binary]] = {}
        self._expanded: dict[tuple[tuple[str, ...], str, str], tuple[str, ...]] = {}
        self.searches = 0
        self.lookups = 0
        self.places = 0

    def needed_names(self, binary: Binary) -> tuple[str, ...]:
        """``binary.needed_names``, built once per binary."""
        hit = self._needed.get(id(binary))
        if hit is None or hit[1] is not binary:
            hit = self._needed[id(binary)] = (binary.needed_names, binary)
        return hit[0]


@dataclass(frozen=True, slots=True)
class SearchContext:
    """The fixed inputs of every search in one load: target, view, cache, system directories.

    ``rtld`` is the dynamic linker's path (the program interpreter, ``PT_INTERP``): it is
    loaded in every process before anything else, so a DT_NEEDED naming it is reused.
    ``memo`` holds the searches done with these inputs (``SearchMemo``).
    """

    env: TargetEnvironment
    fs: FileSystemView
    cache: LdCache | None
    system_dirs: tuple[str, ...]
    lib: str
    is_driver: Callable[[str], bool]
    rtld: str | None = None
    memo: SearchMemo = field(default_factory=SearchMemo, compare=False, repr=False)


def search(
    name: str,
    requester: Requester,
    main: Requester | None,
    loaded: Mapping[str, str],
    ctx: SearchContext,
) -> tuple[Resolution, Binary | None]:
    """Resolve one DT_NEEDED ``name`` of ``requester`` the way ld.so does.

    Args:
        name: the DT_NEEDED string.
        requester: the object that needs it, with its loader chain.
        main: the main executable (for its DT_RPATH), or ``None``.
        loaded: names already loaded -> path (SONAMEs and the names they were loaded by).
        ctx: target, file-system view, cache, system directories (and the memo of searches).

    Returns:
        The ``Resolution`` (with every path tried) and the ``Binary`` found, if any.

    An object already loaded under ``name`` is reused first (the root's own state); the
    path search after it is memoised in ``ctx.memo`` by everything that decides it.
    """
    if name in loaded:
        return Resolution(name, requester.path, loaded[name], Source.LOADED, None, ()), None
    memo = ctx.memo
    want = requester.binary
    if not want.runpath:
        return _resolve(name, requester, search_list(requester, main, ctx), ctx)
    # With a DT_RUNPATH of its own the search list depends on the requester alone (not on
    # the loader chain or the executable): the whole resolution is kept per requester.
    direct = (name, requester.path, requester.origin, id(want))
    hit = memo._direct.get(direct)
    if hit is not None and hit[2] is want:
        memo.lookups += 1
        return hit[0], hit[1]
    resolution, found = _resolve(name, requester, search_list(requester, main, ctx), ctx)
    memo._direct[direct] = (resolution, found, want)
    return resolution, found


def _resolve(name: str, requester: Requester, dirs: SearchList, ctx: SearchContext) -> tuple[Resolution, Binary | None]:
    """``search`` after the already-loaded names: the memoised path search, named for ``requester``."""
    want = requester.binary
    memo = ctx.memo
    key: tuple[object, ...]
    if ctx.env.driverless and ctx.is_driver(name):
        key = ("driver", name)
    elif "/" in name:
        key = ("path", _expand(ctx, (name,), requester.origin, want.machine)[0], want.bits, want.endian, want.machine)
    else:
        key = ("search", name, dirs, bool(want.flags_1 & DF_1_NODEFLIB), want.bits, want.endian, want.machine)
    memo.lookups += 1
    outcome = memo._outcomes.get(key)
    if outcome is None:
        memo.searches += 1
        outcome = memo._outcomes[key] = _path_search(name, key, want, ctx)
    path, source, owner, found, error, attempts, more = outcome
    return Resolution(name, requester.path, path, source, owner, attempts, error, more), found


def _expand(ctx: SearchContext, dirs: tuple[str, ...], origin: str, machine: str) -> tuple[str, ...]:
    """``dirs`` with the dynamic string tokens expanded for an object whose ``$ORIGIN`` is ``origin`` (memoised)."""
    memo = ctx.memo._expanded
    key = (dirs, origin, machine)
    hit = memo.get(key)
    if hit is None:
        platform = ctx.env.platform_for(machine)
        hit = memo[key] = tuple(expand_dst(d, origin, ctx.lib, platform) for d in dirs)
    return hit


def search_list(requester: Requester, main: Requester | None, ctx: SearchContext) -> SearchList:
    """The directories ld.so tries for a name without a slash needed by ``requester``, before the cache.

    Without a DT_RUNPATH of its own: the DT_RPATH of the requester, of the object that loaded
    it, and so on up the loader chain, then of the main executable (objects with DT_RUNPATH
    have no DT_RPATH); then LD_LIBRARY_PATH; then the requester's DT_RUNPATH.
    """
    binary = requester.binary
    machine = binary.machine
    out: list[tuple[Source, str | None, tuple[str, ...]]] = []
    if not binary.runpath:
        seen_main = False
        chain: Requester | None = requester
        while chain is not None:
            if chain.binary.rpath and not chain.binary.runpath:
                out.append((Source.RPATH, chain.path, _expand(ctx, chain.binary.rpath, chain.origin, machine)))
            seen_main |= chain is main
            chain = chain.loader
        if main is not None and not seen_main and main.binary.rpath and not main.binary.runpath:
            out.append((Source.RPATH, main.path, _expand(ctx, main.binary.rpath, main.origin, machine)))
    if ctx.env.ld_library_path:
        dirs = _expand(ctx, ctx.env.ld_library_path, requester.origin, machine)
        out.append((Source.LD_LIBRARY_PATH, None, dirs))
    if binary.runpath:
        out.append((Source.RUNPATH, requester.path, _expand(ctx, binary.runpath, requester.origin, machine)))
    return tuple(out)


def _path_search(name: str, key: tuple[object, ...], want: Binary, ctx: SearchContext) -> _Outcome:
    """The search ``key`` stands for (see ``search``), as ``dl-load.c`` makes it."""
    attempts: list[Attempt] = []
    if key[0] == "driver":
        attempts.append(Attempt(name, Source.SYSTEM, None, Outcome.DRIVER_ABSENT, "GPU driver library (driverless)"))
        return None, None, None, None, None, tuple(attempts), 0
    if key[0] == "path":
        path = str(key[1])
        if not path.startswith("/"):  # open() relative to the process's working directory: not ours
            attempts.append(Attempt(path, Source.PATH, None, Outcome.MISSING, RELATIVE_TO_CWD))
            return None, None, None, None, None, tuple(attempts), 0
        outcome, detail, found = _verify(ctx.fs, path, want)
        attempts.append(Attempt(path, Source.PATH, None, outcome, detail))
        if outcome is Outcome.FOUND:
            return path, Source.PATH, None, found, None, tuple(attempts), 0
        return None, None, None, None, detail if outcome is Outcome.INVALID else None, tuple(attempts), 0
    trial = _Trial(name, want, ctx)
    for source, owner, dirs in key[2]:  # type: ignore[attr-defined]
        hit = trial.try_dirs(dirs, source, owner)
        if hit:
            return trial.result(hit, source, owner)
    return trial.defaults(bool(key[3]))


class _Trial:
    """One path search under way: the attempts recorded so far (``MAX_ATTEMPTS`` kept, the rest counted)."""

    __slots__ = ("attempts", "ctx", "hwcaps", "name", "skipped", "want")

    def __init__(self, name: str, want: Binary, ctx: SearchContext) -> None:
        self.name = name
        self.want = want
        self.ctx = ctx
        self.hwcaps = ctx.env.hwcaps_subdirs(want.machine)
        self.attempts: list[Attempt] = []
        self.skipped = 0

    def record(self, attempt: Attempt) -> None:
        """Keep ``attempt`` (or count it beyond ``MAX_ATTEMPTS``)."""
        if len(self.attempts) < MAX_ATTEMPTS:
            self.attempts.append(attempt)
        else:
            self.skipped += 1

    def done(self, path: str | None, source: Source | None, owner: str | None, found: Binary | None,
             error: str | None = None) -> _Outcome:  # fmt: skip
        """The outcome with the attempts recorded."""
        return path, source, owner, found, error, tuple(self.attempts), self.skipped

    def try_dirs(
        self, dirs: Sequence[str], source: Source, owner: str | None
    ) -> tuple[str, Binary | None, str | None] | None:
        """Try ``name`` in each directory (glibc-hwcaps subdirectories first): (path, found, error) or ``None``."""
        fs, name, memo = self.ctx.fs, self.name, self.ctx.memo
        for directory in dirs:
            memo.places += 1
            if memo.places > MAX_PLACES:
                why = f"search stopped: more than {MAX_PLACES:,} places tried in this audit"
                self.record(Attempt(posixpath.join(directory, name), source, owner, Outcome.MISSING, why))
                return None
            if not directory:
                directory = "."  # an empty entry is the current directory
            if len(directory) >= PATH_MAX:  # stat() fails: a directory that does not exist, to glibc
                why = f"a directory path of {PATH_MAX} bytes or more: the kernel refuses it (ENAMETOOLONG)"
                self.record(Attempt(shown_path(posixpath.join(directory, name)), source, owner, Outcome.MISSING, why))
                continue
            if not fs.is_dir(directory):
                # ld.so marks a directory that does not exist and never looks in it again.
                self.record(
                    Attempt(posixpath.join(directory, name), source, owner, Outcome.MISSING, "no such directory")
                )
                continue
            candidates = [posixpath.join(directory, "glibc-hwcaps", h, name) for h in self.hwcaps]
            candidates.append(posixpath.join(directory, name))
            for path in candidates:
                outcome, detail, found = _verify(fs, path, self.want)
                if outcome is Outcome.MISSING and path != candidates[-1]:
                    continue  # absent hwcaps subdirectories are not worth listing
                self.record(Attempt(path, source, owner, outcome, detail))
                if outcome is Outcome.FOUND:
                    return path, found, None
                if outcome is Outcome.INVALID:
                    return path, None, detail
        return None

    def result(self, hit: tuple[str, Binary | None, str | None], source: Source, owner: str | None) -> _Outcome:
        """The outcome of a directory that held a candidate (found, or a load-stopping error)."""
        path, found, error = hit
        if error is not None:
            return self.done(None, None, None, None, f"{path}: {error}")
        return self.done(path, source, owner, found)

    def defaults(self, nodeflib: bool) -> _Outcome:
        """The target's policy list, then ``ld.so.cache``, then the system directories.  Outside
        driverless mode (``--with-driver``) a GPU-driver library counts as one of the policy's system
        libraries: the machine's driver installs it, no wheel or conda package ever does (no policy
        lists one); it resolves where the target has it, never by the policy's model alone."""
        ctx, name, want = self.ctx, self.name, self.want
        allowed = ctx.env.system_libraries
        driver = allowed is not None and not ctx.env.driverless and ctx.is_driver(name)
        if (
            allowed is not None
            and name not in allowed
            and not driver
            and not _is_loader_name(name, ctx.rtld, want.machine)
        ):
            why = f"not one of the system libraries of the target environment ({ctx.env.system_policy or 'policy'})"
            self.record(Attempt(name, Source.SYSTEM, None, Outcome.OUTSIDE_TARGET, why))
            return self.done(None, None, None, None)
        if ctx.cache is not None:
            entry = ctx.cache.lookup(name, expected_cache_flags(want.machine, want.bits or 64), self.hwcaps)
            if entry is not None:
                if nodeflib and posixpath.dirname(entry.path) in ctx.system_dirs:
                    self.record(Attempt(entry.path, Source.CACHE, None, Outcome.SKIPPED_NODEFLIB, "DF_1_NODEFLIB"))
                else:
                    outcome, detail, found = _verify(ctx.fs, entry.path, want)
                    self.record(Attempt(entry.path, Source.CACHE, None, outcome, detail))
                    if outcome is Outcome.FOUND:
                        return self.done(entry.path, Source.CACHE, None, found)
                    if outcome is Outcome.INVALID:
                        return self.done(None, None, None, None, f"{entry.path}: {detail}")
        if nodeflib:
            dirs = ":".join(ctx.system_dirs)
            self.attempts.append(Attempt(dirs, Source.SYSTEM, None, Outcome.SKIPPED_NODEFLIB, "DF_1_NODEFLIB"))
            return self.done(None, None, None, None)
        hit = self.try_dirs(ctx.system_dirs, Source.SYSTEM, None)
        if hit:
            return self.result(hit, Source.SYSTEM, None)
        if allowed is not None and not driver:
            return self.modelled()
        return self.done(None, None, None, None)

    def modelled(self) -> _Outcome:
        """A system library of the target's policy the host has no file for (another machine's
        ``libc.so.6``, say): found in the model of the target (``loader.modelled``)."""
        path = modelled_path(self.ctx.env.system_policy or "policy", self.name)
        self.record(Attempt(path, Source.POLICY, None, Outcome.FOUND, "a system library of the target policy"))
        return self.done(path, Source.POLICY, None, modelled_library(path, self.want))
