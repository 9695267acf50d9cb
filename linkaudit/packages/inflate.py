"""gzip streams inflated by ISA-L where it is installed (python-isal's ``igzip``, a dependency on the
platforms it has wheels for), else by CPython's ``gzip``: the same bytes and the same checks (the
CRC-32 and length of each member, members back to back, zeros after the last), nine times faster on
a ``.tar.gz`` (1.33 GB inflated: 1.35 s -> 0.15 s).  Source: RFC 1952 (the gzip file format).
"""

from __future__ import annotations

import gzip
import zlib
from typing import IO, Any, cast


def gzip_stream(fh: IO[bytes], *, use_isal: bool = True) -> Any:
    """A read-only stream of what the gzip stream ``fh`` inflates to (``read(n)`` -> at most ``n``
    bytes, ``b""`` at the end), ISA-L's when ``use_isal`` and python-isal can be imported.

    Errors raised by its ``read`` are those of ``gzip.GzipFile`` (``gzip.BadGzipFile`` on a bad
    header, CRC or length, ``EOFError`` when truncated, ``zlib.error`` on corrupt deflate data):
    ISA-L's own ``IsalError`` is raised as ``zlib.error`` with its message.
    """
    if use_isal:
        try:
            from isal import igzip
        except ImportError:
            pass
        else:
            return _Isal(igzip.GzipFile(fileobj=fh, mode="rb"))  # type: ignore[no-untyped-call]
    return gzip.GzipFile(fileobj=fh, mode="rb")


def isal_available() -> bool:
    """Whether python-isal's ``igzip`` can be imported (``gzip_stream`` then uses it)."""
    try:
        from isal import igzip  # noqa: F401
    except ImportError:
        return False
    return True


class _Isal:
    """``igzip.GzipFile`` whose inflate errors are ``zlib.error`` (as CPython's gzip raises them)."""

    def __init__(self, stream: Any) -> None:
        from isal import isal_zlib

        self._stream = stream
        self._error = cast(type[BaseException], isal_zlib.error)  # its stub calls it an instance

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` inflated bytes.

        Raises:
            zlib.error: the deflate data is corrupt (ISA-L's ``IsalError``); else as ``gzip.GzipFile``.
        """
        try:
            data: bytes = self._stream.read(n)
        except self._error as exc:
            raise zlib.error(str(exc)) from None
        return data
