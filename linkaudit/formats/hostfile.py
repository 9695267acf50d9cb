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
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks = []
        left = limit
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
