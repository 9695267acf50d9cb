"""Turn command-line paths into the files to read.

A path is a file or a directory.  Directories are walked recursively in sorted
order; a file under a directory is a candidate when its magic bytes name a
binary format (never by its name).  Symlinks are followed once: a symlinked
directory already visited (a loop) is not entered again, a symlink loop on a
file is an error for that file, and a file reached through several names (the
``libfoo.so -> libfoo.so.1`` chain of every library directory) is read once,
under its real, non-symlink name when it has one.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .errors import InputError
from .formats import SNIFF_BYTES, SUPPORTED, Container, sniff


@dataclass(frozen=True, slots=True)
class Collected:
    """What the paths given expand to.

    Attributes:
        files: files to read, in order (named files first where given, then walk order).
        errors: inputs that cannot be read at all (missing, loops, permission denied).
        empty_dirs: directories given that hold no binary.
        skipped: binaries of a format this version does not read: (path, format).
    """

    files: tuple[str, ...]
    errors: tuple[InputError, ...]
    empty_dirs: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        return "no such file or directory"
    if exc.errno == errno.EACCES:
        return "permission denied"
    return exc.strerror or str(exc)


def _sniff_file(path: str) -> Container | None:
    with open(path, "rb", buffering=0) as fh:
        return sniff(fh.read(SNIFF_BYTES))


def collect(paths: Sequence[str]) -> Collected:
    """Expand ``paths`` into the files to audit.

    Args:
        paths: files and directories, as the user gave them.

    Returns:
        A ``Collected``; nothing is raised for a bad path: it is listed in ``errors``.
    """
    files: list[str] = []
    errors: list[InputError] = []
    empty: list[str] = []
    skipped: list[tuple[str, str]] = []
    by_inode: dict[tuple[int, int], int] = {}  # (dev, ino) -> index into files
    via_link: set[int] = set()

    def add(path: str, st: os.stat_result, is_link: bool) -> None:
        key = (st.st_dev, st.st_ino)
        idx = by_inode.get(key)
        if idx is None:
            by_inode[key] = len(files)
            files.append(path)
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
                errors.append(InputError(given, _reason(exc)))
            continue
        if stat.S_ISDIR(st.st_mode):
            if _walk(given, add, errors, skipped) == 0:
                empty.append(given)
        elif stat.S_ISREG(st.st_mode):
            add(given, st, os.path.islink(given))
        else:
            errors.append(InputError(given, "not a regular file or directory"))
    return Collected(tuple(files), tuple(errors), tuple(empty), tuple(skipped))


def _walk(
    top: str,
    add: Callable[[str, os.stat_result, bool], None],
    errors: list[InputError],
    skipped: list[tuple[str, str]],
) -> int:
    """Walk ``top``, passing each supported binary to ``add``; return how many were found."""
    found = 0
    seen_dirs: set[tuple[int, int]] = set()

    def onerror(exc: OSError) -> None:
        errors.append(InputError(exc.filename or top, f"cannot read directory: {_reason(exc)}"))

    for dirpath, dirnames, filenames in os.walk(top, onerror=onerror, followlinks=True):
        try:
            dst = os.stat(dirpath)
        except OSError as exc:
            errors.append(InputError(dirpath, _reason(exc)))
            dirnames[:] = []
            continue
        key = (dst.st_dev, dst.st_ino)
        if key in seen_dirs:
            dirnames[:] = []  # a symlinked directory already walked: a loop or a second name
            continue
        seen_dirs.add(key)
        dirnames.sort()
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            is_link = os.path.islink(path)
            try:
                st = os.stat(path)
            except OSError as exc:
                if is_link and exc.errno == errno.ENOENT:
                    errors.append(InputError(path, "broken symlink (its target does not exist)"))
                else:
                    errors.append(InputError(path, _reason(exc)))
                continue
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                continue
            try:
                kind = _sniff_file(path)
            except OSError as exc:
                errors.append(InputError(path, _reason(exc)))
                continue
            if kind is None:
                continue
            if kind not in SUPPORTED:
                skipped.append((path, kind.value))
                continue
            add(path, st, is_link)
            found += 1
    return found
