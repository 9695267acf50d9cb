"""Whole reads of small host files that cannot block: a thin archive's members, ``ld.so.cache``.

Opened non-blocking and checked to be regular before a byte is read, so a FIFO or a device
named where a file is expected is refused, never waited on.
"""

from __future__ import annotations

import errno
import os
import stat


def read_regular_file(path: str, limit: int) -> bytes:
    """Up to ``limit`` bytes of the regular file at host ``path``.

    Raises:
        OSError: it cannot be opened, or is not a regular file (``ENODEV``-like
            ``OSError`` with a message), without ever blocking on a FIFO or device.
    """
    return read_within(path, limit, cut=True)[0]


def read_within(path: str, limit: int, cut: bool = False) -> tuple[bytes, int]:
    """``(bytes, size)`` of the regular file at host ``path``: all of it when it holds at most
    ``limit`` bytes; else (``cut`` false) no bytes and its size, judged by the file opened — its
    ``fstat``, and what is read of it (one byte past ``limit``: a file growing while read is
    past the limit, never cut at it); with ``cut``, its first ``limit`` bytes.

    Raises:
        OSError: it cannot be opened, or is not a regular file (``ENODEV``-like
            ``OSError`` with a message), without ever blocking on a FIFO or device.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_size > limit and not cut:
            return b"", info.st_size
        chunks = []
        left = limit if cut else limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            return b"", max(info.st_size, len(data))
        return data, len(data)
    finally:
        os.close(fd)
