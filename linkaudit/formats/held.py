"""Package members held in memory: small binaries of a tarball never written to the staging tree
(issue 14 §1).

Staging a tarball wrote every binary member to a temporary tree, read it back, and removed it:
for 20,000 members of 5.8 KB on this project's ext4 ``/tmp``, creating, reading and removing the
files took 3.5 of 5.8 CPU seconds.  When nothing but the readers will look at the tree — the
loader emulation is off, and no reader opens files itself (``--verify``) — a member of at most
``copies.SMALL_FILE_BYTES`` is *held* instead: its bytes are kept here under the host path it
would have had, the walk (``inputs.collect``) lists it as if it were a file there, and
``formats.read_path`` parses it from memory.  Its directories are still made, so every other
path of the tree means what it did.

Identical contents are kept once (found by the bytes themselves: a dict keyed by them, Python's
hash of 6 KB three times cheaper than SHA-256, equality then compared byte for byte); a
content's SHA-256, the identity copies are parsed once by (``copies.parse_small``), is computed
when ``held`` is first asked for it.  At most ``MAX_HELD_BYTES`` of distinct contents are held
per process, past which a member is written as before.  Anything that needs the member
as a file — a symlink or hard link of the package pointing at it — asks ``write_out`` first.
"""

from __future__ import annotations

import hashlib
import os
import threading

#: Distinct bytes held at most (per process): past this, members are written to the staging tree.
MAX_HELD_BYTES = 64 << 20

_LOCK = threading.Lock()
_BYTES: dict[str, list[bytes | None]] = {}  # host path -> [bytes, SHA-256 or None]: shared by equal contents
_NAMES: dict[str, list[str]] = {}  # host directory -> the names held in it, in the order held
_CONTENTS: dict[bytes, list[bytes | None]] = {}  # contents -> their one entry
_TOTAL = [0]  # distinct bytes held


def hold(path: str, data: bytes) -> bool:
    """Keep ``data`` as the file ``path`` (a host path in a staging tree, whose directory exists
    and where no file of that name does).  False when the bytes would pass ``MAX_HELD_BYTES``:
    nothing is held and the caller writes the file."""
    cut = path.rfind("/")  # os.path.split, without its general cases
    head, name = path[: cut + 1], path[cut + 1 :]
    directory = head.rstrip("/") or head
    with _LOCK:
        entry = _CONTENTS.get(data)
        if entry is None:
            if _TOTAL[0] + len(data) > MAX_HELD_BYTES:
                return False
            entry = _CONTENTS[data] = [data, None]
            _TOTAL[0] += len(data)
        _BYTES[path] = entry
        _NAMES.setdefault(directory, []).append(name)
    return True


def held(path: str) -> tuple[bytes, bytes] | None:
    """``(SHA-256, bytes)`` of what is held as ``path`` (spelled as ``hold`` was given it), or
    ``None``; the digest computed once per content, when first asked."""
    entry = _BYTES.get(path) if _BYTES else None
    if entry is None:
        return None
    data = entry[0]
    assert data is not None
    digest = entry[1]
    if digest is None:  # two threads may both compute it: the same value
        digest = entry[1] = hashlib.sha256(data).digest()
    return digest, data


def contents(path: str) -> bytes | None:
    """The bytes held as ``path``, or ``None`` (no digest asked for)."""
    entry = _BYTES.get(path) if _BYTES else None
    return None if entry is None else entry[0]


def names_in(directory: str) -> list[str]:
    """The names held in the host directory ``directory`` (spelled as the walk joins it)."""
    if not _NAMES:
        return []
    with _LOCK:
        names = dict.fromkeys(_NAMES.get(directory, ()))  # a name held again after ``release``: once
        return [n for n in names if child(directory, n) in _BYTES]


def child(directory: str, name: str) -> str:
    """``os.path.join(directory, name)`` for a relative ``name`` (one that does not start with a
    slash), without its general cases (200,000 members: 0.2 s of joins)."""
    if not directory:
        return name
    return directory + name if directory.endswith("/") else f"{directory}/{name}"


def release(path: str) -> bytes | None:
    """Stop holding ``path`` (a second member of its name replaces it); its bytes, or ``None``."""
    with _LOCK:
        entry = _BYTES.pop(path, None)
    return None if entry is None else entry[0]


def write_out(paths: list[str]) -> None:
    """Write each held path of ``paths`` to the file system (``write_file``) and stop holding
    it; paths not held are passed over.

    Raises:
        OSError: a file cannot be created or written (what was written stays written).
    """
    for path in paths:
        data = release(path)
        if data is not None:
            write_file(path, data)


def write_file(path: str, data: bytes) -> None:
    """Create the new file ``path`` (``O_EXCL``, never through a symlink) holding ``data``.

    Raises:
        OSError: it cannot be created or written.
    """
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except BaseException:
        os.close(fd)
        os.unlink(path)
        raise
    os.close(fd)


def forget_under(root: str) -> None:
    """Stop holding every path below the directory ``root`` (its staging tree is being removed);
    the distinct bytes of no held path any more are given back."""
    prefix = root.rstrip("/") + "/"
    with _LOCK:
        for path in [p for p in _BYTES if p.startswith(prefix)]:
            del _BYTES[path]
        for directory in [d for d in _NAMES if d == root or d.startswith(prefix)]:
            del _NAMES[directory]
        live = {id(entry) for entry in _BYTES.values()}
        for data in [d for d, entry in _CONTENTS.items() if id(entry) not in live]:
            del _CONTENTS[data]
            _TOTAL[0] -= len(data)
