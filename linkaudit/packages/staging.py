"""What every container kind shares: member names checked, members written under budgets into a
staging root laid out as the package installs, symlinks between members made and checked.

A member is written only when its first bytes say it is a binary (``formats.sniff``): Python
sources, headers and data are never written.  Each refusal is an ``InputError`` naming
``PACKAGE!member`` and the reason; every other member is still staged.
"""

from __future__ import annotations

import contextlib
import errno
import lzma
import os
import posixpath
import re
import stat
import threading
import zipfile
import zlib
from dataclasses import field
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..errors import InputError
from ..formats import SNIFF_BYTES, Container, held, sniff
from ..formats.copies import SMALL_FILE_BYTES
from ..formats.libnames import HEAD_BYTES, library_named, not_a_library
from ..formats.ranges import Member, register
from ..records import dataclass
from . import limits

if TYPE_CHECKING:
    from ..cache import Key

#: What a corrupt member raises while it is decompressed (bz2 raises OSError).
CORRUPT = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, EOFError, ValueError, RuntimeError)
#: The characters where a staged path in a text is taken to end (a regular-expression class body).
STOP_CHARS = r"\s'\"(),;:\[\]{}\\"
_STOP = re.compile(f"[{STOP_CHARS}]")
#: A symlink member whose name a file or directory member already holds (links are made after
#: every file): not made, and said — ``tar -x`` keeps whichever member comes last.  (A second link
#: of one name, as the two tars of a ``.conda`` may both list, keeps the first, as before.)
SYMLINK_TAKEN = (
    "a symlink member of a name a file or directory member also has (tar -x keeps whichever comes last): "
    "not made; the other member is audited here"
)


def parent_of(rel: str) -> str:
    """``posixpath.dirname(rel)`` without its ``os.fspath`` and separator look-ups: asked four times
    a member (200,000 members: 0.3 s)."""
    head = rel[: rel.rfind("/") + 1]
    return head.rstrip("/") if head.strip("/") else head


def safe_name(name: str) -> str | None:
    """The member name as a relative POSIX path, or ``None`` when it may not be written.

    Refused: empty, absolute (``/x``, ``C:/x``, ``\\\\x``), a ``..`` component (also with
    backslashes), a NUL, longer than ``limits.MAX_NAME_BYTES`` or deeper than ``limits.MAX_NAME_DEPTH``.
    """
    if not name or "\0" in name or len(name) > limits.MAX_NAME_BYTES or name.count("/") > limits.MAX_NAME_DEPTH:
        return None
    if name[0] in "/\\" or (name[1:2] == ":" and name[2:3] in ("/", "\\") and name[0].isascii() and name[0].isalpha()):
        return None  # absolute: /x, \\x, C:/x, C:\\x
    parts = name.split("/")
    if "\\" not in name and "" not in parts and "." not in parts and ".." not in parts:
        return name  # already a plain relative path (nearly every member: 200,000 names, 0.3 s)
    parts = [p for p in parts if p not in ("", ".")]
    if not parts or any(p == ".." or ".." in p.split("\\") for p in parts):
        return None
    return "/".join(parts)


def names_root(name: str) -> bool:
    """True when ``name`` is a relative name of the package's root itself (``.``, ``./``, ``./.``):
    the directory entry ``tar -C DIR .`` writes first, which installs nothing."""
    return bool(name) and not name.startswith(("/", "\\")) and all(p in ("", ".") for p in name.split("/"))


def unsafe_reason(name: str) -> str:
    """Why ``safe_name`` refused ``name``, in words."""
    if not name:
        return "an empty member name"
    if "\0" in name:
        return "a member name holding a NUL byte"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[/\\]", name):
        return "an absolute member name"
    if len(name) > limits.MAX_NAME_BYTES:
        return f"a member name of {len(name)} characters: longer than a path may be (PATH_MAX, {limits.MAX_NAME_BYTES + 1} bytes)"
    if name.count("/") > limits.MAX_NAME_DEPTH:
        return f"a member name nested {name.count('/')} directories deep (more than {limits.MAX_NAME_DEPTH})"
    if names_root(name):
        return "a member that is not a directory but names the package's root itself"
    return "a member name that climbs out of the package with '..'"


def install_path(kind: str, name: str) -> str | None:
    """Where a member lands once installed: a wheel's ``X.data/purelib|platlib/...`` at the root,
    its other ``.data`` schemes (scripts, headers, data) not at all; everything else as named.
    Source: PEP 427 (the ``.data`` directory)."""
    if kind == "wheel":
        parts = name.split("/")
        if len(parts) > 2 and parts[0].endswith(".data"):
            return "/".join(parts[2:]) if parts[1] in ("purelib", "platlib") else None
    return name


class Listed(NamedTuple):
    """A path a package installs into a staging root, as far as clashes compare it.

    Attributes:
        package: the package, as given.
        sum: a conda member's SHA-256 digest as read; a wheel member's CRC-32 as its zip
            directory states it (only a hint: two equal CRCs are confirmed by hashing both
            members' bytes, ``wheel._same_bytes``); ``None``: not known.
        size: its size in bytes (``-1``: not known).
        member: its name in the package (a wheel's ``NAME.data/purelib/...`` included).
    """

    package: str
    sum: bytes | int | None
    size: int
    member: str


@dataclass
class StagingRoot:
    """One staging root: a ``site-packages`` (wheels), a prefix (conda) or a tarball's own root.

    Attributes:
        host: the root's absolute path on this machine.
        name: how a path no package installs is labelled (``site-packages``, ``prefix``, the tarball).
        labels: the packages staged here, as given.
        owner: member path (or a directory above one) -> the package that installs it.
        dirs: every directory packages install into -> those packages, in input order (an ordered
            set: the keys of a dict).
        listed: every path a wheel or conda package installs here (not only binaries) -> the first
            package to install it and what it holds (``Listed``), for clashes.
        links: each symlink (or tar hard link) a package installs here that leads to a file or a
            directory inside the root -> the path it resolves to (relative to the root).
    """

    host: str
    name: str = ""
    labels: list[str] = field(default_factory=list)
    owner: dict[str, str] = field(default_factory=dict)
    dirs: dict[str, dict[str, None]] = field(default_factory=dict)
    listed: dict[str, Listed] = field(default_factory=dict)
    files: set[str] = field(default_factory=set)
    made: set[str] = field(default_factory=set)
    dist_files: dict[str, dict[str, str]] = field(default_factory=dict)
    conda_index: dict[str, str] = field(default_factory=dict)  # conda package -> its info/index.json
    links: dict[str, str] = field(default_factory=dict)
    _past: dict[str, list[str]] = field(default_factory=dict)
    _past_size: int = -1

    def paths_past_stop(self, prefix: str) -> list[str]:
        """The paths a package installs here (files and directories) that hold a character the
        label pattern stops at (``STOP_CHARS``: a space, a quote, a bracket...) and spell
        ``prefix`` before the first one, longest first.  Indexed once (again only after more
        paths were owned): a lookup, not a scan of every path."""
        if self._past_size != len(self.owner):
            index: dict[str, list[str]] = {}
            for known in self.owner:
                stop = _STOP.search(known)
                if stop is not None:
                    index.setdefault(known[: stop.start()], []).append(known)
            for paths in index.values():
                paths.sort(key=len, reverse=True)
            self._past, self._past_size = index, len(self.owner)
        return self._past.get(prefix, [])

    def claim_dirs(self, rel: str | None, label: str) -> None:
        """Record that ``label`` installs into the directories above the member ``rel``."""
        parent = parent_of(rel) if rel else ""
        while parent:
            owners = self.dirs.setdefault(parent, {})  # an ordered set: a test of a list was a scan
            if label in owners:
                break  # its parents are recorded already
            owners[label] = None
            parent = parent_of(parent)

    def own(self, rel: str, label: str, parent: str | None = None) -> None:
        """Record that ``label`` installs ``rel`` (and, unless owned already, its directories;
        ``parent``: ``parent_of(rel)`` when the caller has it)."""
        self.owner.setdefault(rel, label)
        parent = parent_of(rel) if parent is None else parent
        while parent and parent not in self.owner:
            self.owner[parent] = label
            parent = parent_of(parent)

    def file_above(self, rel: str, parent: str | None = None) -> str | None:
        """The nearest directory above ``rel`` that is a file planned or written here, or ``None``
        (at once for a directory made here: no file is planned where one was made, ``plan``;
        ``parent``: ``parent_of(rel)`` when the caller has it)."""
        parent = parent_of(rel) if parent is None else parent
        if parent in self.made:
            return None
        while parent:
            if parent in self.files:
                return parent
            parent = parent_of(parent)
        return None

    def disown(self, rel: str) -> None:
        """Forget the member ``rel`` (refused after it was planned); its directories stay owned."""
        self.owner.pop(rel, None)
        self.files.discard(rel)

    def owner_of(self, rel: str) -> str:
        """The package a staged path belongs to: the owner of the path or of its nearest directory;
        a path no package installs (a search-path attempt into nvidia/cu13/lib when no nvidia wheel
        was given) is labelled with the root itself (``site-packages``, ``prefix``); the root itself,
        when one package was staged into it, with that package."""
        probe = rel
        while probe:
            owner = self.owner.get(probe)
            if owner is not None:
                return owner
            probe = parent_of(probe)
        if not rel and len(self.labels) == 1:
            return self.labels[0]  # the root of one package's staging is that package
        return self.name or "+".join(self.labels)


@dataclass(frozen=True, slots=True)
class Clash:
    """Two packages staged together install one path.

    Attributes:
        path: the path, as installed (relative to the staging root).
        first: the package that installs it first (kept in the staged tree), as given.
        second: the other package, as given.
        member: the member's name in ``second``.
        identical: True when both copies hold the same bytes (a conda member's SHA-256 and size
            as read; for wheels, the zip directories' CRC-32 and size agreeing and then both
            members' bytes hashed alike), False when they differ, ``None`` when not compared.
    """

    path: str
    first: str
    second: str
    member: str
    identical: bool | None


class Readable(Protocol):
    """A member's bytes as a stream: ``read(n)`` returns at most ``n`` bytes, ``b""`` at its end
    (a zip member's file object, ``tarread.MemberData``)."""

    def read(self, n: int = -1, /) -> bytes:
        """At most ``n`` bytes."""
        ...


class Progress(Protocol):
    """Told how staging goes, for a progress bar: bytes of binary members expected, then written."""

    def expect(self, nbytes: int) -> None:
        """``nbytes`` more bytes are about to be written (a zip's sizes as its directory states them)."""

    def advance(self, nbytes: int) -> None:
        """``nbytes`` more bytes were written."""


class Budget:
    """Bytes written so far for one audit, against ``MAX_TOTAL_BYTES`` (members are written by
    several threads at once); reported to ``progress`` as they are written."""

    def __init__(self, progress: Progress | None = None) -> None:
        self.total = 0
        self.progress = progress
        self._lock = threading.Lock()

    def add(self, n: int) -> int:
        """Count ``n`` more bytes; the new total."""
        with self._lock:
            self.total += n
            if self.progress is not None:
                self.progress.advance(n)
            return self.total


class Refused(Exception):
    """A member that may not be written; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class PackageBudget:
    """Bytes staged for one package, against ``MAX_RATIO`` times its size on disk (at least
    ``PACKAGE_FLOOR``): many members, each under the per-member ratio, do not add up to a bomb.
    A zip member's declared size is reserved before it is inflated (``reserve``), so a bomb is
    refused before a byte of it is written."""

    def __init__(self, packed: int) -> None:
        self.limit = max(limits.MAX_RATIO * packed, limits.PACKAGE_FLOOR)
        self.total = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> bool:
        """Count ``n`` more bytes; False once the package is over its limit."""
        with self._lock:
            self.total += n
            return self.total <= self.limit

    def reserve(self, n: int) -> bool:
        """Count ``n`` bytes about to be written, unless that passes the limit (then False, nothing counted)."""
        with self._lock:
            if self.total + n > self.limit:
                return False
            self.total += n
            return True

    @property
    def left(self) -> int:
        """Bytes still allowed."""
        return max(self.limit - self.total, 0)


def write_member(
    src: Readable,
    head: bytes,
    dest: str,
    budget: Budget,
    limit_ratio: int | None,
    package: PackageBudget | None = None,
    cap: int | None = None,
) -> None:
    """Stream ``head`` + the rest of ``src`` to the new file ``dest`` (never through a symlink),
    counting the bytes against the member, package and total caps; ``limit_ratio`` is the largest
    size allowed (``None``: no ratio check); ``cap``: the size reserved for it (a zip member's
    declared size): not a byte more is inflated.

    Raises:
        Refused: a cap was passed (``dest`` is removed).
        OSError: ``dest`` cannot be created or written.
    """
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    counter = Inflated(budget, limit_ratio, package, cap)
    try:
        chunk = head or src.read(limits.CHUNK)
        while chunk:
            counter.add(len(chunk))
            view = memoryview(chunk)
            while view:  # a plain write: no buffered file object per member (issue 14 §1)
                view = view[os.write(fd, view) :]
            chunk = src.read(counter.next_read())
    except BaseException:
        os.close(fd)
        os.unlink(dest)
        raise
    os.close(fd)


def hold_member(src: Readable, head: bytes, dest: str, counter: Inflated, size: int) -> None:
    """Read the rest of a member of ``size`` bytes (at most ``SMALL_FILE_BYTES``) from ``src``
    after ``head``, counted by ``counter``, and hold it as ``dest`` (``formats.held``); written to
    ``dest`` instead when the held bytes are at their limit.

    Raises:
        Refused: a cap was passed (nothing is held or written).
        OSError: ``dest`` cannot be created or written.
    """
    data = head + src.read(max(size - len(head), 0)) if len(head) < size else head
    counter.add(len(data))
    if not held.hold(dest, data):
        held.write_file(dest, data)


class Inflated:
    """The bytes of one member inflated so far, against the member, package and total caps
    (``write_member``'s arguments); ``add`` raises ``Refused`` once one is passed."""

    def __init__(
        self, budget: Budget, limit_ratio: int | None, package: PackageBudget | None = None, cap: int | None = None
    ) -> None:
        self.budget, self.limit_ratio, self.package, self.cap = budget, limit_ratio, package, cap
        self.written = 0

    def next_read(self) -> int:
        """How many bytes to read next: a chunk, never more than one byte past the cap."""
        return limits.CHUNK if self.cap is None else max(min(limits.CHUNK, self.cap - self.written + 1), 1)

    def add(self, n: int) -> None:
        """Count ``n`` more bytes.

        Raises:
            Refused: a cap was passed.
        """
        self.written += n
        total = self.budget.add(n)
        if self.written > limits.MAX_MEMBER_BYTES:
            raise Refused(f"larger than {limits.MAX_MEMBER_BYTES} bytes when decompressed (a decompression bomb?)")
        if self.cap is not None and self.written > self.cap:
            raise Refused(f"inflates past the {self.cap} bytes its zip entry declares (a decompression bomb?)")
        if self.limit_ratio is not None and self.written > max(self.limit_ratio, limits.RATIO_FLOOR):
            raise Refused(f"expands more than {limits.MAX_RATIO} times its compressed size (a decompression bomb?)")
        if total > limits.MAX_TOTAL_BYTES:
            raise Refused(f"the packages expand to more than {limits.MAX_TOTAL_BYTES} bytes in all")
        if self.package is not None and not self.package.add(n):
            raise Refused(f"the package expands to more than {limits.MAX_RATIO} times its size (a decompression bomb?)")


def make_dirs(root: str, rel_dir: str, made: set[str] | None = None) -> str:
    """Create ``rel_dir`` under ``root`` as real directories; the host path made.  ``made``: the
    directories made before, each component (nothing replaces a directory made: files are created with
    ``O_EXCL``, links beside existing names never), skipped without a system call.

    Raises:
        Refused: a component exists and is not a directory (a file or a symlink of the package).
    """
    if made is not None and rel_dir in made:
        return held.child(root, rel_dir) if rel_dir else root
    path, rel = root, ""
    for part in [p for p in rel_dir.split("/") if p]:
        path, rel = os.path.join(path, part), f"{rel}/{part}" if rel else part
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                raise Refused(f"{rel_dir}: a parent directory is a file or a symlink in the package") from None
        if made is not None:
            made.add(rel)
    if made is not None:
        made.add(rel_dir)
    return path


#: Members of one package refused by name; past it, counted in one error (200,000 refused zip
#: symlinks made 200,000 findings: 1.35 GB for the text report, 2.35 GB for JSON).
MAX_REFUSALS_NAMED = 1000


class Stager:
    """Writes members into staging roots and collects what it refused (``errors``); ``whole``:
    every member written out whole (for readers that open files themselves: ``--verify``),
    else a wheel's ELF members are kept as ranges in memory (``members``); ``hold``: a tar member
    of at most ``copies.SMALL_FILE_BYTES`` is held in memory, never written (``formats.held``:
    for runs where only the readers look at the tree, without the loader emulation)."""

    def __init__(self, budget: Budget, whole: bool = False, hold: bool = False) -> None:
        self.budget = budget
        self.whole = whole
        self.hold = hold and not whole  # small tar members held in memory (``formats.held``)
        self.compare = True  # conda members hashed for clashes (False: no second conda package staged)
        self.errors: list[InputError] = []
        self.clashes: list[Clash] = []
        self.refused: dict[str, int] = {}  # package -> members refused
        self.sniffed: dict[str, Container] = {}  # host path written -> what its first bytes are
        self.held: dict[str, list[str]] = {}  # staging root -> the host paths held in it (``hold``)
        self._not_libraries: dict[tuple[str, str], int] = {}  # (package, member) -> its error's index
        self._withdrawn: set[int] = set()  # indices of ``errors`` a later copy of the member made moot
        #: (package, member name) -> how many members of that name the package holds (2 or more):
        #: installers keep the last copy, the one staged and audited (``second_copy``).
        self.copies: dict[tuple[str, str], int] = {}

    def second_copy(self, label: str, member: str) -> None:
        """Record another member of ``label`` named ``member`` (a ``file-clash`` of the package with
        itself, ``rules.file_clash.copies_finding``): the last copy is the one staged and audited,
        the earlier ones are not — never an unreadable input (the file is read, the last copy)."""
        key = (label, member)
        self.copies[key] = self.copies.get(key, 1) + 1

    def refuse(self, label: str, member: str, reason: str) -> bool:
        """Record the member ``member`` of ``label`` as refused for ``reason``: each of the first
        ``MAX_REFUSALS_NAMED`` of a package by name, the rest counted (``all_errors`` says how
        many).  True when it was named (its error is the last of ``errors``)."""
        count = self.refused[label] = self.refused.get(label, 0) + 1
        if count > MAX_REFUSALS_NAMED:
            return False
        self.errors.append(InputError(f"{label}!{member}", reason))
        return True

    def all_errors(self) -> list[InputError]:
        """``errors``, and for each package with more refusals than were named, one error that counts them."""
        more = [
            InputError(
                label,
                f"{count - MAX_REFUSALS_NAMED} more members refused, not named one by one (the first {MAX_REFUSALS_NAMED} are)",
            )
            for label, count in self.refused.items()
            if count > MAX_REFUSALS_NAMED
        ]
        return [*(e for i, e in enumerate(self.errors) if i not in self._withdrawn), *more]

    def plan(self, site: StagingRoot, label: str, kind: str, name: str, head: bytes) -> tuple[str, str] | None:
        """``(host destination, installed path)`` of a member whose first bytes are ``head``, with
        its directories made; ``None`` when it is not a binary, not installed, or refused."""
        if sniff(head) is None:  # not a binary: never written
            if library_named(name) and install_path(kind, name) is not None:
                reason = not_a_library(head)  # one the loader will be asked to open: said, not dropped
                if reason is not None and self.refuse(label, name, reason):
                    self._not_libraries[(label, name)] = len(self.errors) - 1
            return None
        if head.startswith(b"!<thin>\n"):
            self.refuse(label, name, "a thin archive: its members are files outside the package, never read from it")
            return None
        rel = install_path(kind, name)
        if rel is None:
            return None
        if rel in site.owner and site.owner[rel] != label:
            if rel not in site.listed:  # a wheel's member was compared already (``listed``)
                self.clashes.append(Clash(rel, site.owner[rel], label, name, None))
            return None
        parent = parent_of(rel)
        above = site.file_above(rel, parent)
        if above is not None:  # as make_dirs says it once the file is written (tar members)
            self.refuse(label, name, f"{above}: a parent directory is a file in the package")
            return None
        try:
            directory = make_dirs(site.host, parent, site.made)
        except Refused as exc:
            self.refuse(label, name, exc.reason)
            return None
        except OSError as exc:
            self.refuse(label, name, f"cannot be written here: {exc.strerror or exc}")
            return None
        dest = held.child(directory, rel[rel.rfind("/") + 1 :])  # os.path.join(directory, basename(rel))
        if rel in site.files:  # known without a system call: files and directories are only made here
            return None  # a second copy of one member name: the first one stays, as unzip keeps it
        if rel in site.made:
            self.refuse(label, name, f"a file where the package installs a directory: other members are below {rel}/")
            return None
        site.own(rel, label, parent)  # claimed now: a later member of the same name is a duplicate
        site.files.add(rel)
        earlier = self._not_libraries.pop((label, name), None)
        if earlier is not None:  # an earlier member of this name held no library: this one replaces it
            self._withdrawn.add(earlier)
            self.refused[label] -= 1
            self.second_copy(label, name)
        return dest, rel

    def file(
        self,
        site: StagingRoot,
        label: str,
        kind: str,
        name: str,
        src: Readable,
        ratio: int | None,
        key: Key | None,
        size: int | None = None,
    ) -> bool:
        """Plan and write one member read from the stream ``src`` (tar members, in order); True
        when it was written (or held: ``hold``).  ``key``: its cache key (``cache.tar_member_key``),
        tied to the file written (``formats.ranges.register``) so that the reader looks it up by
        that key, not by the new file's own; ``None``: no cache.  ``size``: the member's size in
        bytes when its header says it plainly (not a sparse file), else ``None`` (never held)."""
        holding = self.hold and size is not None and size <= SMALL_FILE_BYTES
        whole = src.read(size) if holding and size is not None else b""  # one read: a member held is kept whole
        head = whole[:SNIFF_BYTES] if holding else src.read(SNIFF_BYTES)
        container = sniff(head)
        if container is None and library_named(name):  # enough to tell why it is none (libnames)
            head = whole[:HEAD_BYTES] if holding else head + src.read(HEAD_BYTES - len(head))
        planned = self.plan(site, label, kind, name, head)
        if planned is None:
            return False
        try:
            if holding:
                hold_member(src, whole, planned[0], Inflated(self.budget, ratio), len(whole))
                self.held.setdefault(site.host, []).append(planned[0])
            else:
                write_member(src, head, planned[0], self.budget, ratio)
        except Refused as exc:
            self.refuse(label, name, exc.reason)
        except OSError as exc:  # a name too long for this file system, and the like
            self.refuse(label, name, f"cannot be written here: {exc.strerror or exc}")
        else:
            if key is not None:
                with contextlib.suppress(OSError):  # not stat'able: read by its own key
                    register(planned[0], Member(None, key))
            if container is not None:
                self.sniffed[planned[0]] = container  # the walk need not open it again
            return True
        site.disown(planned[1])
        return False

    def links(self, site: StagingRoot, label: str, kind: str, links: list[tuple[str, str]]) -> None:
        """Create the symlinks after every file, then check them: the target, taken lexically from
        the link's directory, stays inside the package; once every link is made, each one's real
        path too; a link that resolves to nothing is dropped (its target is not a binary, so never
        written), a symlink loop refused."""
        if links:  # a link checks and reads its target as a file: the members held are written first
            held.write_out(self.held.pop(site.host, []))
        made: list[tuple[str, str, str, str]] = []
        refused: set[str] = set()  # links not made or taken away: a link through one dangles
        for name, target in links:
            rel = install_path(kind, name)
            if rel is None or self._link_clashes(site, label, kind, name, rel):
                continue
            reason = _link_target_problem(rel, target)
            if reason is not None:
                self.refuse(label, name, reason)
                refused.add(rel)
                continue
            said = self.refused.get(label, 0)
            dest = self._link(label, site, name, rel, target)
            if dest is not None:
                made.append((name, rel, target, dest))
            elif self.refused.get(label, 0) > said:  # refused (not an earlier link of the name, which stays)
                refused.add(rel)
        # every real path before any link is taken away: one leading through another that leaves
        # is said to leave too, not found dangling behind it
        reals = [_real_path(dest) for *_, dest in made]
        inside = []
        for (name, rel, target, dest), real in zip(made, reals, strict=True):
            if real is not None and (real == site.host or real.startswith(site.host + "/")):
                inside.append((name, rel, target, dest))
                if real != site.host:
                    site.links[rel] = real[len(site.host) + 1 :]  # dropped again if it dangles (``_resolve``)
                continue
            os.unlink(dest)
            refused.add(rel)
            if real is None:
                self.refuse(
                    label,
                    name,
                    f"a symlink to {target!r} that leads through more than {MAX_LINK_HOPS} symlinks: "
                    "the kernel stops there (ELOOP), so nothing loads it",
                )
            else:
                self.refuse(label, name, f"a symlink to {target!r}, which resolves outside the package")
        self._resolve(site, label, inside, refused)

    def _link_clashes(self, site: StagingRoot, label: str, kind: str, name: str, rel: str) -> bool:
        """True when another package of the shared root lists the path ``rel`` the link ``name`` of
        ``label`` installs (a file, a link, binary or not): a ``file-clash`` naming both, not
        compared (a conda package's recorded here; a wheel's by ``wheel._list``, which lists every
        entry), and the link not made — the first package's copy is the one audited.  A conda
        package's link is listed, so that a later package's member of its path clashes with it."""
        listed = kind == "conda" and not rel.startswith("info/")  # info/: not in the prefix
        first = site.listed.get(rel)
        if first is None:
            if listed:
                site.listed[rel] = Listed(label, None, -1, name)
            return False
        if first.package == label:
            return False
        if listed:
            self.clashes.append(Clash(rel, first.package, label, name, None))
        return True

    def _resolve(self, site: StagingRoot, label: str, made: list[tuple[str, str, str, str]], refused: set[str]) -> None:
        """Own each link that leads to a file; refuse the symlink loops and the links that dangle
        because their path leads through a link refused (``refused``: their paths); drop the rest."""
        outcomes = []
        for *_, dest in made:
            try:
                os.stat(dest)
                outcomes.append(0)
            except OSError as exc:
                outcomes.append(exc.errno or -1)
        dangling: dict[str, tuple[str, str]] = {}
        for (name, rel, target, dest), errno_ in zip(made, outcomes, strict=True):
            if errno_ == 0:
                site.own(rel, label)
                continue
            site.links.pop(rel, None)
            os.unlink(dest)
            if errno_ == errno.ELOOP:
                self.refuse(label, name, f"a symlink loop: {rel} -> {target!r} never reaches a file (ELOOP)")
            else:
                dangling[rel] = (name, target)
        self._name_blocked(label, dangling, refused)

    def _name_blocked(self, label: str, dangling: dict[str, tuple[str, str]], refused: set[str]) -> None:
        """Refuse each dangling link whose target's path leads through a refused link, naming it,
        down chains of up to ``MAX_LINK_HOPS`` links (breadth first from the refused links, each
        dangling link looked at once: linear in the links and their path lengths); the others point
        at members that are not binaries (never written): nothing to audit, dropped without a word."""
        trie = _Trie([*refused, *dangling])  # the links a path may lead through
        through: dict[str, list[str]] = {}  # a link -> the dangling links whose target's path passes it
        for rel, (_name, target) in dangling.items():
            for via in trie.along(_lexical_target(rel, target)):
                through.setdefault(via, []).append(rel)
        frontier = sorted(r for r in refused if r in through)
        for _hop in range(MAX_LINK_HOPS):
            blocked: list[str] = []
            for via in frontier:
                for rel in through.get(via, ()):
                    if rel in dangling:
                        name, target = dangling.pop(rel)
                        self.refuse(
                            label, name, f"a symlink to {target!r}, which leads through {via}, a symlink refused here"
                        )
                        blocked.append(rel)
            if not blocked:
                return
            frontier = blocked

    def _link(self, label: str, site: StagingRoot, name: str, rel: str, target: str) -> str | None:
        """Make one symlink ``rel`` -> ``target`` whose target passed the lexical checks; its host
        path, or ``None`` when it was not made."""
        try:
            directory = make_dirs(site.host, parent_of(rel), site.made)
        except Refused as exc:
            self.refuse(label, name, exc.reason)
            return None
        dest = os.path.join(directory, posixpath.basename(rel))
        if os.path.lexists(dest):
            if not os.path.islink(dest):  # a file or directory member holds the name; an earlier link: kept
                self.refuse(label, name, SYMLINK_TAKEN)
            return None
        if not target:
            self.refuse(label, name, "a symlink with an empty target")
            return None
        try:
            os.symlink(target, dest)
        except OSError as exc:
            self.refuse(label, name, f"a symlink that cannot be made here: {exc.strerror or exc}")
            return None
        return dest


#: How many links deep a dangling link is traced back to a refused one (the kernel's ``ELOOP`` bound).
MAX_LINK_HOPS = 40


class _Trie:
    """Paths (``a/b/c``) by their components, to find the ones a longer path leads through in time
    linear in that path (no prefix strings made: a target may be megabytes of ``a/a/a...``)."""

    def __init__(self, paths: list[str]) -> None:
        self._root: dict[str, Any] = {}
        for path in paths:
            node = self._root
            for part in path.split("/"):
                node = node.setdefault(part, {})
            node[""] = path  # no component is empty: the path itself ends here

    def along(self, path: str) -> list[str]:
        """The paths stored that ``path`` is or leads through, shortest first."""
        found: list[str] = []
        node: dict[str, Any] | None = self._root
        for part in path.split("/"):
            node = node.get(part) if part and node is not None else None
            if node is None:
                break
            if "" in node:
                found.append(node[""])
        return found


def _real_path(path: str) -> str | None:
    """``os.path.realpath(path)`` (an absolute host path) without recursion, following at most
    ``MAX_LINK_HOPS`` symlinks in all, as the kernel does (``ELOOP``); ``None`` past that.  A
    component that does not exist is taken as written, and the rest after it, as ``realpath`` does;
    a link met twice (a loop) ends the walk there, as ``realpath`` does.
    (``realpath`` recurses once per link: a tarball's chain of 1,000 links raised RecursionError,
    and a chain of 900 cost 900 x 900 steps.)"""
    resolved = "/"
    pending = [p for p in reversed(path.split("/")) if p]
    hops = 0
    followed: set[str] = set()
    while pending:
        part = pending.pop()
        if part == ".":
            continue
        if part == "..":
            resolved = posixpath.dirname(resolved)
            continue
        candidate = posixpath.join(resolved, part)
        try:
            is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
        except OSError:
            is_link = False
        if not is_link:
            resolved = candidate
            continue
        if candidate in followed:  # a loop: where it loops, as realpath says (the caller's stat: ELOOP)
            return posixpath.join(candidate, *reversed(pending))
        followed.add(candidate)
        hops += 1
        if hops > MAX_LINK_HOPS:
            return None
        target = os.readlink(candidate)
        if target.startswith("/"):
            resolved = "/"
        pending.extend(p for p in reversed(target.split("/")) if p)
    return resolved


def _lexical_target(rel: str, target: str) -> str:
    """Where the symlink ``rel`` -> ``target`` points, taken from the link's directory on the names
    alone (``..`` collapsed as text, no link followed), relative to the package's root."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))


def _link_target_problem(rel: str, target: str) -> str | None:
    """Why the symlink ``rel`` -> ``target`` may not be made, judged on the names alone, or ``None``."""
    if "\0" in target:
        return "a symlink whose target holds a NUL byte"
    if target.startswith("/"):
        return f"a symlink to the absolute path {target[:200]!r}, outside the package"
    lexical = _lexical_target(rel, target)
    if lexical == ".." or lexical.startswith("../"):
        return f"a symlink to {target!r}, which leaves the package"
    return None
