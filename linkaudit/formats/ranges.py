"""A sparse byte source: the ranges of a package member that were kept while it streamed past.

A wheel's 500 MB library is never written out nor held whole: ``packages.stream`` inflates it
once and keeps only the ranges the readers need (``formats.plan``).  ``RangeBytes`` offers the
readers the interface of ``filebytes.FileBytes`` (``len``, indexing, slicing, ``find``,
``read``, ``view``) over those ranges.  A read that touches a byte that was not kept is an
``InputError`` naming the member (``MissingRange``), never silent zeros: a planning mistake
shows as an unreadable input, not as a wrong answer.

The staging tree holds a placeholder for each such member (its full size, sparse, only its
first bytes written, so that directory walks, ``stat`` and magic sniffing see what they saw
before); ``register`` ties the placeholder's (device, inode) to its ranges and
``source_of`` finds them again when ``read_path`` opens the placeholder.
"""

from __future__ import annotations

import bisect
import os
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING

from ..errors import InputError
from ..records import dataclass
from .window import Window

if TYPE_CHECKING:
    from ..cache import Key
    from ..model import Binary


class MissingRange(InputError):
    """A read touched bytes of a member that were not kept while it streamed past."""


class RangeBytes(Window):
    """A read-only window on a member's kept byte ranges.

    Args:
        path: what errors name (``PACKAGE!member``).
        size: the member's full size, bytes (``len``).
        extents: ``(offset, data)`` pairs, non-overlapping, in any order.

    Behaves like ``bytes`` for what the readers use, as ``FileBytes`` does; offsets are relative to
    the window's start (``view`` makes narrower windows: an ``ar`` member).
    """

    __slots__ = ("_data", "_starts")

    def __init__(self, path: str, size: int, extents: Iterable[tuple[int, bytes]], _base: int = 0) -> None:
        pairs = sorted((o, d) for o, d in extents if d)
        self._starts = [o for o, _ in pairs]
        self._data = [d for _, d in pairs]
        super().__init__(path, size, _base)

    @property
    def kept(self) -> int:
        """Bytes held in memory."""
        return sum(len(d) for d in self._data)

    def covers(self, offset: int, length: int) -> bool:
        """True when every byte of ``[offset, offset + length)`` (window-relative) was kept."""
        try:
            for _ in self._pieces(self._base + offset, length):
                pass
        except MissingRange:
            return False
        return True

    def _pieces(self, at: int, want: int) -> Iterable[tuple[bytes, int, int]]:
        """``(kept data, start in it, length)`` covering ``want`` absolute bytes from ``at``, in order.

        Raises:
            MissingRange: a byte of them was not kept.
        """
        i = bisect.bisect_right(self._starts, at) - 1
        while want > 0:
            if i < 0 or i >= len(self._starts) or self._starts[i] > at:
                raise self._missing(at, want)
            data = self._data[i]
            inner = at - self._starts[i]
            n = min(len(data) - inner, want)
            if n <= 0:
                raise self._missing(at, want)
            yield data, inner, n
            at += n
            want -= n
            i += 1

    def _exact(self, offset: int, length: int) -> bytes:
        """Raises ``MissingRange`` when some of those bytes were not kept."""
        parts = [data[inner : inner + n] for data, inner, n in self._pieces(self._base + offset, length)]
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def _missing(self, at: int, want: int) -> MissingRange:
        return MissingRange(
            self.path,
            f"{want} bytes at offset {at:#x} were not kept while the member was inflated (the read "
            "plan made from its headers missed them)",
            at,
        )

    def _piece(self, absolute: int, want: int) -> tuple[bytes, int]:
        """Raises ``MissingRange`` when the offset lies outside every kept range."""
        i = bisect.bisect_right(self._starts, absolute) - 1
        if i < 0 or absolute >= self._starts[i] + len(self._data[i]):
            raise self._missing(absolute, want)
        return self._data[i], absolute - self._starts[i]

    def view(self, offset: int, length: int) -> RangeBytes:
        """The window of ``length`` bytes at ``offset`` of this one, sharing the kept ranges."""
        offset = max(0, min(offset, self.size))
        out = RangeBytes.__new__(RangeBytes)
        out._starts, out._data, out.path = self._starts, self._data, self.path
        out._base = self._base + offset
        out.size = max(0, min(length, self.size - offset))
        return out


@dataclass(frozen=True)
class Member:
    """What ``read_path`` reads for a placeholder of the staging tree instead of its (sparse) bytes.

    A member with neither ``source`` nor ``binaries`` was written out whole (a tar member): the
    placeholder is read as any file, and ``key`` is its cache key instead of ``cache.file_key``
    (a fresh inode every run, never hit again).

    Attributes:
        source: the member's kept ranges, or ``None`` when ``binaries`` are known already or the
            file holds the member whole.
        key: the member's cache key (``cache.member_key``, ``cache.tar_member_key``), or ``None``
            (no cache).
        binaries: what the readers said of it, taken from the cache at staging (``path`` empty),
            read with soft dependencies; or ``None``.
    """

    source: RangeBytes | None
    key: Key | None = None
    binaries: tuple[Binary, ...] | None = None


_SOURCES: dict[tuple[int, int], tuple[str, Member]] = {}
_LOCK = threading.Lock()


def register(placeholder: str, member: Member) -> None:
    """Tie the placeholder file ``placeholder`` (its device and inode) to ``member``.

    Raises:
        OSError: the placeholder cannot be stat'ed.
    """
    st = os.stat(placeholder)
    with _LOCK:
        _SOURCES[(st.st_dev, st.st_ino)] = (placeholder, member)


def forget(placeholder: str) -> None:
    """Drop the tie of the file ``placeholder`` (about to be removed: its inode may be reused by
    a file that is no member of it); nothing when it has none or cannot be stat'ed."""
    try:
        st = os.stat(placeholder)
    except OSError:
        return
    with _LOCK:
        found = _SOURCES.get((st.st_dev, st.st_ino))
        if found is not None and found[0] == placeholder:
            del _SOURCES[(st.st_dev, st.st_ino)]


def forget_under(root: str) -> None:
    """Drop every placeholder below the directory ``root`` (the staging tree is going away)."""
    prefix = root.rstrip("/") + "/"
    with _LOCK:
        for ident in [i for i, (path, _m) in _SOURCES.items() if path.startswith(prefix)]:
            del _SOURCES[ident]


def source_of(st: os.stat_result) -> Member | None:
    """The member of the placeholder whose ``stat`` is ``st``, or ``None`` (an ordinary file)."""
    if not _SOURCES:
        return None
    found = _SOURCES.get((st.st_dev, st.st_ino))
    return found[1] if found is not None else None
