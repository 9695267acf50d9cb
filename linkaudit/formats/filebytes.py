"""Reads that cannot fault: a file's bytes through ``os.pread``, never through a memory map.

A page of a mapped file that lies past the file's end when touched raises SIGBUS, which Python
cannot turn into an exception: a file truncated by another process while it is read (a build
tree changing under a CI audit) would kill the whole run.  ``FileBytes`` looks like the bytes
of the file to the readers (``len``, indexing, slicing, ``find``) but reads only the ranges
asked for, with ``pread``.  A read that comes back short inside the size the file had when it
was opened means that the file shrank: an ``InputError`` naming the file, which the audit turns
into an ``unreadable-input`` finding before going on with the other inputs.

Small reads (headers, single records, names) are served from a few cached 64 KiB blocks, so
neighbouring fields cost one system call; large reads (a symbol table, a string table) go
straight to ``pread`` and are not cached.  The readers read about 1.3% of the bytes of the torch
wheel's libraries this way.
"""

from __future__ import annotations

import errno
import os
import stat
import struct

from ..errors import InputError
from .ranges import RangeBytes
from .window import Window

#: Bytes of one cached block (the unit of small reads).
BLOCK = 64 * 1024
#: Reads of at most this many bytes go through the block cache.
SMALL = 4096
#: Blocks kept per open file (the oldest is dropped first).
CACHED_BLOCKS = 16


class _OpenFile:
    """What every view of one open file shares: the descriptor, the path, the size at open, the cache."""

    __slots__ = ("blocks", "end", "fd", "path")

    def __init__(self, fd: int, path: str, end: int) -> None:
        self.fd = fd
        self.path = path
        self.end = end
        self.blocks: dict[int, bytes] = {}

    def pread(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at absolute ``offset`` (inside the size at open).

        Raises:
            InputError: the file now ends before ``offset + length`` (it shrank while being
                read), or the read failed (an I/O error).
        """
        parts: list[bytes] = []
        got = 0
        while got < length:
            try:
                chunk = os.pread(self.fd, length - got, offset + got)
            except OSError as exc:
                raise InputError(self.path, f"read error: {exc.strerror or exc}", offset + got) from exc
            if not chunk:
                raise InputError(
                    self.path,
                    f"the file shrank while being read: it ends before byte {offset + got:#x} "
                    f"of the {self.end} bytes it had when opened",
                    offset + got,
                )
            parts.append(chunk)
            got += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def block(self, index: int) -> bytes:
        """Block ``index`` of the file (``BLOCK`` bytes, the last one shorter), cached."""
        data = self.blocks.get(index)
        if data is None:
            start = index * BLOCK
            data = self.pread(start, min(BLOCK, self.end - start))
            if len(self.blocks) >= CACHED_BLOCKS:
                del self.blocks[next(iter(self.blocks))]
            self.blocks[index] = data
        return data


class FileBytes(Window):
    """A read-only window on a file's bytes, read on demand with ``pread``.

    Behaves like ``bytes`` for what the readers use: ``len``, ``[i]`` (an ``int``), ``[a:b]`` and
    ``[a:b:step]`` with a positive step (``bytes``, clipped to the window as slicing clips), ``find``.  Offsets are
    relative to the window's start.

    Attributes:
        path: the file's path, as opened (named by every error).
        size: the window's length in bytes (the file's size when opened, for the whole file).
    """

    __slots__ = ("_file",)

    def __init__(self, file: _OpenFile, base: int, size: int) -> None:
        super().__init__(file.path, size, base)
        self._file = file

    def _exact(self, offset: int, length: int) -> bytes:
        start = self._base + offset
        if length > SMALL:
            return self._file.pread(start, length)
        first, last = start // BLOCK, (start + length - 1) // BLOCK
        at = start - first * BLOCK
        data = self._file.block(first)
        if first == last:
            return data[at : at + length]
        return data[at:] + self._file.block(last)[: start + length - last * BLOCK]

    def _piece(self, absolute: int, want: int) -> tuple[bytes, int]:
        index = absolute // BLOCK
        return self._file.block(index), absolute - index * BLOCK

    def view(self, offset: int, length: int) -> FileBytes:
        """The window of ``length`` bytes at ``offset`` of this one (an ``ar`` member), sharing the file."""
        offset = max(0, min(offset, self.size))
        return FileBytes(self._file, self._base + offset, max(0, min(length, self.size - offset)))


#: What the readers take: a file's bytes, in memory, read on demand, or a member's kept ranges.
Buffer = bytes | FileBytes | RangeBytes


def open_file(path: str) -> tuple[int, os.stat_result]:
    """Open ``path`` read-only without blocking (a FIFO or device never blocks the run) and stat it.

    The caller closes the descriptor.

    Raises:
        InputError: it cannot be opened (missing, unreadable, a symlink loop) or is not a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise InputError(path, os_reason(exc)) from exc
    try:
        st = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise InputError(path, os_reason(exc)) from exc
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise InputError(path, "not a regular file")
    return fd, st


def file_bytes(fd: int, path: str, size: int) -> FileBytes:
    """The whole of the open file ``fd`` (``size`` bytes when opened) as ``FileBytes``."""
    return FileBytes(_OpenFile(fd, path, size), 0, size)


#: What the readers raise for a malformed table besides ``InputError``: each becomes one
#: ``InputError`` (``fault_reason``), for a whole file (``formats.read_bytes``) and for an archive's
#: member (``archive``) alike.
READER_FAULTS = (struct.error, IndexError, ValueError, OverflowError, MemoryError)


def fault_reason(exc: BaseException, what: str, size: int) -> str:
    """The sentence an ``InputError`` gives for a reader's fault (``READER_FAULTS``) in a file of
    ``size`` bytes whose format is ``what`` (``"ELF"``, ``"PE"``...)."""
    if isinstance(exc, MemoryError):
        return f"too large to read: a table of this {size}-byte file does not fit in memory"
    return f"malformed {what} file: {exc}"


#: ``os_reason`` of ENOENT.
NO_SUCH_FILE = "no such file or directory"


def os_reason(exc: OSError) -> str:
    """The sentence an ``InputError`` gives for an ``OSError`` of ``open``/``stat``."""
    if exc.errno == errno.ELOOP:
        return "symlink loop (too many levels of symbolic links)"
    if exc.errno == errno.ENOENT:
        return NO_SUCH_FILE
    if exc.errno == errno.EACCES:
        return "permission denied"
    if exc.errno == errno.EISDIR:
        return "is a directory"
    return exc.strerror or str(exc)
