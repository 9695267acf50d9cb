"""Which files a git checkout tracks, read from its index file — git itself is never run.

``git ls-files`` in a tree the user hands us runs whatever that tree's ``.git/config`` names
(``core.fsmonitor`` is a shell command git runs before listing): an input executed.  The index
(``.git/index``) lists every tracked path; this module reads it as data, bounded by its size.

Format (git's ``Documentation/gitformat-index.txt``): a 12-byte header ``DIRC``, version (2, 3
or 4), entry count; each entry 40 bytes of stat data, an object id (20 bytes, 32 in a SHA-256
repository), 16 bits of flags (``0x4000``: 16 more of extended flags, version 3 and later) and
the path: NUL-padded to a multiple of 8 bytes from the entry's start (versions 2 and 3), or, in
version 4, a varint of bytes to drop from the previous path's end and a NUL-terminated suffix.
A split index (extension ``link``) keeps entries in a shared file: not read (``None``).
Submodules (mode 160000 entries) are read from their own index, as ``--recurse-submodules`` does.
"""

from __future__ import annotations

import os
import struct

from ..formats.hostfile import read_regular_file

#: Largest index read, bytes (a checkout of Chromium: about 50 MB).
MAX_INDEX_BYTES = 256 << 20
#: Submodules read within submodules, at most (git's own recursion is unbounded).
MAX_DEPTH = 8
#: Tracked paths listed in all, at most (``sources.MAX_FILES``).
MAX_PATHS = 500_000
#: Longest path an entry may name, bytes (Linux's PATH_MAX, its NUL included): no checkout holds a
#: longer one, and a version 4 index builds each path from the one before it — 20,000 entries of
#: 65 bytes each spelled a 100 KB path (1.98 GB of names from a 1.4 MB index).
MAX_PATH_BYTES = 4096
#: The files of a git directory read whole, at most (``.git`` as a ``gitdir:`` file, ``commondir``,
#: ``config``).
MAX_SMALL_FILE = 1 << 20
#: An entry's mode of a submodule (a gitlink).
GITLINK = 0o160000
#: Stat data and mode before the object id: ctime, mtime (8 each), dev, ino, mode, uid, gid, size.
_STAT = 40


class UnreadableIndex(ValueError):
    """The index cannot be read as git writes it (``tracked_files`` then knows nothing of what is tracked)."""


def tracked_files(top: str) -> set[str] | None:
    """The tracked files at or below the directory ``top`` (absolute, normalised paths), submodules
    included; ``None`` when ``top`` is in no git checkout or its index cannot be read (too large,
    malformed, a split index)."""
    root = _checkout_root(os.path.abspath(top))
    if root is None:
        return None
    out: set[str] = set()
    try:
        _read_checkout(root, out, 0)
    except (UnreadableIndex, OSError):
        return None
    prefix = os.path.normpath(os.path.abspath(top)).rstrip("/") + "/"
    return {p for p in out if p.startswith(prefix)}


def _checkout_root(start: str) -> str | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a directory or a ``gitdir:`` file)."""
    here = start
    while True:
        if os.path.lexists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _git_dir(root: str) -> str:
    """The git directory of the checkout at ``root``: ``root/.git``, or where its ``gitdir:`` file points.

    Raises:
        UnreadableIndex: a ``.git`` file that says no ``gitdir:``.
    """
    dot = os.path.join(root, ".git")
    if os.path.isdir(dot):
        return dot
    line = read_regular_file(dot, 4096).split(b"\n", 1)[0].strip()  # never a FIFO's open: it would wait
    if not line.startswith(b"gitdir:"):
        raise UnreadableIndex(f"{dot}: no gitdir line")
    where = os.fsdecode(line[len(b"gitdir:") :].strip())
    return os.path.normpath(os.path.join(root, where))


def _sha256(git_dir: str) -> bool:
    """True when the repository's object ids are SHA-256 (``extensions.objectFormat``)."""
    places = [git_dir]
    try:  # a worktree: the main repository's config
        common = read_regular_file(os.path.join(git_dir, "commondir"), 4096)
        places.append(os.path.join(git_dir, os.fsdecode(common.strip())))
    except OSError:
        pass
    for place in places:
        try:
            text = read_regular_file(os.path.join(place, "config"), MAX_SMALL_FILE)
        except OSError:
            continue
        if b"objectformat=sha256" in text.lower().replace(b" ", b"").replace(b"\t", b""):
            return True
    return False


def _read_checkout(root: str, out: set[str], depth: int, read: set[str] | None = None) -> None:
    """Add the tracked paths of the checkout at ``root`` (and its submodules) to ``out``; ``read``:
    the real paths of the checkouts read so far, each read once (gitlinks named ``.``, ``./.``, ...
    each led back to the root: K of them read it K**8 times).  Git's files are read only when
    they are regular files (a FIFO is never opened blocking).

    Raises:
        UnreadableIndex: the index is malformed, too large or split; OSError: it cannot be read.
    """
    read = set() if read is None else read
    read.add(os.path.realpath(root))
    git_dir = _git_dir(root)
    path = os.path.join(git_dir, "index")
    data = read_regular_file(path, MAX_INDEX_BYTES + 1)
    if len(data) > MAX_INDEX_BYTES:
        raise UnreadableIndex(f"{path}: larger than {MAX_INDEX_BYTES} bytes")
    for name, mode in entries(data, 32 if _sha256(git_dir) else 20):
        if len(out) >= MAX_PATHS:
            raise UnreadableIndex(f"more than {MAX_PATHS} tracked paths")
        full = os.path.normpath(os.path.join(root, os.fsdecode(name)))
        if mode == GITLINK:
            if depth < MAX_DEPTH and os.path.realpath(full) not in read and os.path.lexists(os.path.join(full, ".git")):
                _read_checkout(full, out, depth + 1, read)
            continue
        out.add(full)


def entries(data: bytes, oid_size: int = 20) -> list[tuple[bytes, int]]:
    """The (path, mode) of each entry of the index file ``data``, in order.

    Raises:
        UnreadableIndex: not an index of version 2, 3 or 4, an entry past the end, or a split index.
    """
    if len(data) < 12 or data[:4] != b"DIRC":
        raise UnreadableIndex("not a git index (no DIRC signature)")
    version, count = struct.unpack_from(">II", data, 4)
    if version not in (2, 3, 4) or count > len(data) // (_STAT + oid_size + 2):
        raise UnreadableIndex(f"git index version {version} with {count} entries")
    out: list[tuple[bytes, int]] = []
    pos, previous = 12, b""
    for _ in range(count):
        if pos + _STAT + oid_size + 2 > len(data):
            raise UnreadableIndex("an entry past the end of the index")
        mode = struct.unpack_from(">I", data, pos + 24)[0]
        flags = struct.unpack_from(">H", data, pos + _STAT + oid_size)[0]
        start = pos + _STAT + oid_size + 2 + (2 if version >= 3 and flags & 0x4000 else 0)
        if version == 4:
            drop, start = _varint(data, start)
            end = data.find(b"\0", start)
            if end < 0 or drop > len(previous):
                raise UnreadableIndex("a version 4 path past the end of the index")
            if len(previous) - drop + end - start >= MAX_PATH_BYTES:
                raise UnreadableIndex(f"a path longer than {MAX_PATH_BYTES - 1} bytes (PATH_MAX)")
            name = previous[: len(previous) - drop] + data[start:end]
            pos = end + 1
        else:
            end = data.find(b"\0", start)
            if end < 0:
                raise UnreadableIndex("a path past the end of the index")
            name = data[start:end]
            pos += (end - pos + 8) & ~7  # NUL-padded to a multiple of 8 from the entry's start
        out.append((name, mode))
        previous = name
    if b"link" in _extensions(data, pos):
        raise UnreadableIndex("a split index (its entries are in a shared index file)")
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """Git's offset varint at ``pos`` (``varint.c``: each continuation adds one before shifting)
    and the position after it.

    Raises:
        UnreadableIndex: it runs past the end or past 64 bits.
    """
    if pos >= len(data):
        raise UnreadableIndex("a varint past the end of the index")
    byte = data[pos]
    value = byte & 0x7F
    while byte & 0x80:
        pos += 1
        if pos >= len(data) or value >= 1 << 57:
            raise UnreadableIndex("a varint past the end of the index")
        byte = data[pos]
        value = ((value + 1) << 7) | (byte & 0x7F)
    return value, pos + 1


def _extensions(data: bytes, pos: int) -> list[bytes]:
    """The signatures of the extensions from ``pos`` to the trailing checksum (what can be framed)."""
    out = []
    while pos + 8 <= len(data) - 20:
        signature = data[pos : pos + 4]
        size = struct.unpack_from(">I", data, pos + 4)[0]
        out.append(signature)
        pos += 8 + size
    return out
