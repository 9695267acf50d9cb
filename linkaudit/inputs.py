"""Turn command-line paths into the files to read.

A path is a file or a directory.  Directories are walked recursively in sorted
order (depth first, an explicit stack: no recursion limit however deep the
tree); a file under a directory is a candidate when its magic bytes name a
binary format (never by its name).  Symlinks are followed once: a symlinked
directory already visited (a loop) is not entered again, a symlink loop on a
file is an error for that file, and a file reached through several names (the
``libfoo.so -> libfoo.so.1`` chain of every library directory) is read once,
under its real, non-symlink name when it has one.

A symlinked directory is entered only when its real path stays inside the real
path of the directory given: a package holding ``x -> /`` (or a walk of
``/proc/self``, whose ``root`` links to ``/``) must not drag in the rest of the
host.  Such links are listed in ``Collected.outside`` and otherwise skipped.
A symlinked *file* pointing outside is still audited: it is a file the package
ships — except in a venv given by its root (``pyvenv.cfg``, PEP 405), whose
``bin/python`` links to the base interpreter it was made from: not part of it.

A dangling symlink found under a directory given (``libfoo.so -> libfoo.so.1`` whose target
was not packaged: build trees and installed prefixes hold many) is passed over, as ``ldconfig``
passes over it, and listed in ``Collected.broken_links``; named on the command line, it is an
unreadable input.
"""

from __future__ import annotations

import errno
import itertools
import os
import stat
from collections.abc import Callable, Mapping, Sequence

from .errors import InputError
from .formats import SNIFF_BYTES, SUPPORTED, Container, held, sniff
from .formats.filebytes import os_reason
from .formats.libnames import HEAD_BYTES, library_named, not_a_library
from .records import dataclass


@dataclass(frozen=True, slots=True)
class Collected:
    """What the paths given expand to.

    Attributes:
        files: files to read, in order (named files first where given, then walk order).
        errors: inputs that cannot be read at all (missing, loops, permission denied).
        empty_dirs: directories given that hold no binary.
        skipped: binaries of a format this version does not read: (path, format).
        outside: symlinked directories not entered because their real path
            leaves the directory given: (path, real path).
        broken_links: dangling symlinks found under a directory given, passed over:
            (path, target as written in the link).
        sizes: each of ``files``' size in bytes when it was found (``read_paths`` sends no small
            file to a worker without a ``stat`` of its own; the reader stats again).
    """

    files: tuple[str, ...]
    errors: tuple[InputError, ...]
    empty_dirs: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]
    outside: tuple[tuple[str, str], ...] = ()
    broken_links: tuple[tuple[str, str], ...] = ()
    sizes: tuple[int, ...] = ()


def _head(path: str, size: int) -> bytes:
    """The first ``size`` bytes of the file ``path`` (fewer when it is shorter).

    Raises:
        OSError: it cannot be opened or read.
    """
    # O_NONBLOCK: a file swapped for a FIFO after the stat must not hang the walk.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def _sniff_file(path: str) -> Container | None:
    return sniff(_head(path, SNIFF_BYTES))


def collect(paths: Sequence[str], sniffed: Mapping[str, Container] | None = None) -> Collected:
    """Expand ``paths`` into the files to audit.

    Args:
        paths: files and directories, as the user gave them.
        sniffed: what files found in the walk are, known already (a staged tar member, sniffed
            as it was written: ``Staged.sniffed``); these are not opened again.

    Returns:
        A ``Collected``; nothing is raised for a bad path: it is listed in ``errors``.
    """
    files: list[str] = []
    sizes: list[int] = []
    errors: list[InputError] = []
    empty: list[str] = []
    skipped: list[tuple[str, str]] = []
    outside: list[tuple[str, str]] = []
    broken: list[tuple[str, str]] = []
    by_inode: dict[tuple[int, int], int] = {}  # (dev, ino) -> index into files
    via_link: set[int] = set()
    refused: dict[tuple[int, int], int] = {}  # (dev, ino) -> index into errors: named like a library, not one

    def add(path: str, st: os.stat_result, is_link: bool, binary: bool = True) -> None:
        key = (st.st_dev, st.st_ino)
        if not binary:
            _refuse_library(path, st, is_link, errors, refused)
            return
        idx = by_inode.get(key)
        if idx is None:
            by_inode[key] = len(files)
            files.append(path)
            sizes.append(st.st_size)
            if is_link:
                via_link.add(len(files) - 1)
        elif idx in via_link and not is_link:
            files[idx] = path  # prefer the real name over a symlink to it
            via_link.discard(idx)

    for given in paths:
        try:
            st = os.stat(given)
        except OSError as exc:
            if os.path.islink(given) and exc.errno == errno.ENOENT:
                errors.append(InputError(given, "broken symlink (its target does not exist)"))
            else:
                errors.append(InputError(given, os_reason(exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            if _walk(given, add, errors, skipped, (outside, broken), sniffed or {}) == 0:
                empty.append(given)
        elif stat.S_ISREG(st.st_mode):
            add(given, st, os.path.islink(given))
        else:
            errors.append(InputError(given, "not a regular file or directory"))
    return Collected(
        tuple(files), tuple(errors), tuple(empty), tuple(skipped), tuple(outside), tuple(broken), tuple(sizes)
    )


def _passed_over(path: str, name: str, kind: tuple[bool, bool], root: str, venv: tuple[bool, bool]) -> str | None:
    """Where an entry the walk passes over leads, or ``None`` to walk it: a symlinked directory
    leaving ``root``; in a venv (``venv``: root is one, the entry is in its ``bin``), a symlinked
    file leaving it too and the base interpreter, linked or copied (PEP 405; ``--copies``).
    ``kind``: (is a symlink, is a directory)."""
    is_link, is_dir = kind
    if venv[1] and not is_dir and name.lower().startswith(("python", "pypy")):
        return os.path.realpath(path)
    if is_link and (is_dir or venv[0]):
        real = os.path.realpath(path)
        if not _inside(real, root):
            return real
    return None


def _is_dir(entry: Entry) -> bool:
    """``entry`` is a directory, or a symlink to one (False when it cannot be stat'ed)."""
    try:
        return entry.is_dir()
    except OSError:
        return False


def _refuse_library(
    path: str, st: os.stat_result, is_link: bool, errors: list[InputError], refused: dict[tuple[int, int], int]
) -> None:
    """A file named like a shared library that holds no binary (``libnames.not_a_library``): an
    unreadable input, named once per file (by its real name over a symlink's); a GNU ld linker
    script is passed over."""
    key = (st.st_dev, st.st_ino)
    idx = refused.get(key)
    if idx is not None:
        if not is_link and errors[idx].path != path:
            errors[idx] = InputError(path, errors[idx].reason)
        return
    try:
        reason = not_a_library(_head(path, HEAD_BYTES) if st.st_size else b"")
    except OSError as exc:
        reason = os_reason(exc)
    if reason is not None:
        refused[key] = len(errors)
        errors.append(InputError(path, reason))


def _file_type(mode: int) -> str:
    """What a file that is not a regular file is, in a reason's words."""
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), never read"
    if stat.S_ISSOCK(mode):
        return "a socket, never read"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device file, never read"
    return "not a regular file"


def _link_target(path: str) -> str:
    """The target written in the symlink ``path`` ('' when it cannot be read back)."""
    try:
        return os.readlink(path)
    except OSError:
        return ""


def _inside(path: str, root: str) -> bool:
    """True when the real path ``path`` is ``root`` or lies under it (both real, absolute)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _walk(
    top: str,
    add: Callable[[str, os.stat_result, bool, bool], None],
    errors: list[InputError],
    skipped: list[tuple[str, str]],
    passed_over: tuple[list[tuple[str, str]], list[tuple[str, str]]],
    sniffed: Mapping[str, Container],
) -> int:
    """Walk ``top`` depth first in sorted order, passing each supported binary to ``add``; return how many were found.

    Iterative (an explicit stack of directories still to read), so a tree of any
    depth walks; each directory is entered once by (st_dev, st_ino), and a
    symlinked directory only when its real path stays inside ``top``'s.
    ``passed_over``: the lists of symlinked directories leaving ``top`` and of dangling
    symlinks, each (path, where it points); ``sniffed``: as ``collect``'s.
    """
    found = 0
    seen_dirs: set[tuple[int, int]] = set()
    root = os.path.realpath(top)
    venv = os.path.isfile(os.path.join(top, "pyvenv.cfg"))
    stack = [top]
    while stack:
        dirpath = stack.pop()
        entries = _read_dir(dirpath, seen_dirs, errors)
        if entries is None:
            continue
        listed: list[Entry] = list(entries)
        names = held.names_in(dirpath)
        if names:  # members of a package held in memory (``formats.held``): listed as its files
            listed = sorted([*entries, *(_HeldEntry(dirpath, n) for n in names)], key=lambda e: e.name)
        subdirs, count = _scan_dir(dirpath, listed, root, add, errors, skipped, passed_over, sniffed, venv)
        found += count
        stack.extend(reversed(subdirs))
    return found


_HELD_INODES = itertools.count(1)


class _HeldEntry:
    """A package member held in memory (``formats.held``), listed in its directory's entries as
    the walk lists a regular file: ``name``, ``path``, never a link or a directory, and
    ``held_stat``, a stat of a regular file of its size on device -1 with an inode of its own
    (``collect`` tells files apart by device and inode)."""

    def __init__(self, directory: str, name: str) -> None:
        self.name, self.path = name, held.child(directory, name)
        kept = held.contents(self.path)
        size = len(kept) if kept is not None else 0
        mode = stat.S_IFREG | 0o644
        self.held_stat = os.stat_result((mode, next(_HELD_INODES), -1, 1, 0, 0, size, 0, 0, 0))

    def is_symlink(self) -> bool:
        """False: a held member is no link."""
        return False

    def is_dir(self) -> bool:
        """False: a held member is no directory."""
        return False


#: What the walk lists of a directory: its entries, and members held in memory as if there.
Entry = os.DirEntry[str] | _HeldEntry


def _read_dir(dirpath: str, seen_dirs: set[tuple[int, int]], errors: list[InputError]) -> list[os.DirEntry[str]] | None:
    """The entries of directory ``dirpath`` sorted by name, or None when it was already walked (by
    (st_dev, st_ino), recorded in ``seen_dirs``: a symlink loop or a second name) or cannot be
    read (an ``InputError`` appended to ``errors``)."""
    try:
        dst = os.stat(dirpath)
    except OSError as exc:
        errors.append(InputError(dirpath, os_reason(exc)))
        return None
    key = (dst.st_dev, dst.st_ino)
    if key in seen_dirs:
        return None  # a symlinked directory already walked: a loop or a second name
    seen_dirs.add(key)
    try:
        with os.scandir(dirpath) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        errors.append(InputError(dirpath, f"cannot read directory: {os_reason(exc)}"))
        return None


def _scan_dir(
    dirpath: str,
    entries: Sequence[Entry],
    root: str,
    add: Callable[[str, os.stat_result, bool, bool], None],
    errors: list[InputError],
    skipped: list[tuple[str, str]],
    passed_over: tuple[list[tuple[str, str]], list[tuple[str, str]]],
    sniffed: Mapping[str, Container],
    venv: bool = False,
) -> tuple[list[str], int]:
    """One directory's ``entries``: each supported binary goes to ``add``; returns the
    subdirectories to walk (a symlinked one only when its real path stays inside ``root``) and how
    many binaries were found. Unsupported formats go to ``skipped``; symlinked directories leaving
    ``root`` and dangling symlinks to ``passed_over``; unreadable files to ``errors``; a file
    in ``sniffed`` is not opened to be sniffed again; with ``venv`` (``root`` is a venv's), a
    symlinked file leaving ``root`` and the base interpreter in its ``bin`` (linked or copied,
    ``--copies``) are passed over as a directory leaving it is."""
    outside, broken = passed_over
    found = 0
    subdirs: list[str] = []
    interpreters = venv and os.path.realpath(dirpath) in (os.path.join(root, "bin"), os.path.join(root, "Scripts"))
    for entry in entries:
        path = entry.path  # os.path.join(dirpath, entry.name): what scandir and _HeldEntry spell
        is_link = entry.is_symlink()
        is_dir = _is_dir(entry)
        leaving = _passed_over(path, entry.name, (is_link, is_dir), root, (venv, interpreters))
        if leaving is not None:
            outside.append((path, leaving))
            continue
        if is_dir:
            subdirs.append(path)
            continue
        try:
            st = entry.held_stat if isinstance(entry, _HeldEntry) else os.stat(path)
        except OSError as exc:
            if is_link and exc.errno == errno.ENOENT:
                broken.append((path, _link_target(path)))  # as ldconfig: passed over, not an error
            else:
                errors.append(InputError(path, os_reason(exc)))
            continue
        if not stat.S_ISREG(st.st_mode):
            if library_named(entry.name):  # a FIFO, socket or device the loader would be asked to map
                errors.append(InputError(path, f"named like a shared library, but {_file_type(st.st_mode)}"))
            continue
        try:
            kind = sniffed.get(path) or (_sniff_file(path) if st.st_size else None)
        except OSError as exc:
            errors.append(InputError(path, os_reason(exc)))
            continue
        if kind is None:
            if library_named(entry.name):  # the loader will be asked to open it
                add(path, st, is_link, False)
            continue
        if kind not in SUPPORTED:
            skipped.append((path, kind.value))
            continue
        add(path, st, is_link, True)
        found += 1
    return subdirs, found
