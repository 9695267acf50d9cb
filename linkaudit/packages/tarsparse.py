"""GNU tar's sparse members: the map of where a file's data lies, in each of its formats, and the
file rebuilt from its stored segments with zeros in the holes (as ``tar -x`` writes it).

Source: GNU tar's manual, "Storing Sparse Files" (the old GNU format's map in the ``S`` header and
its extension blocks; the pax formats 0.0 — repeated ``GNU.sparse.offset``/``numbytes`` records —,
0.1 — ``GNU.sparse.map`` —, and 1.0 — the map as decimal lines at the start of the data, padded
to a block).  A map is checked before it is used: segments in order, none past the file's size,
their bytes adding up to what the archive stores.  Errors are ``ValueError`` with the reason; the
tar reader names the byte.
"""

from __future__ import annotations

import array
from collections.abc import Callable
from typing import cast

#: Bytes of zeros handed out at once for a hole.
HOLE_CHUNK = 1 << 20


def map_from_pairs(numbers: list[int]) -> array.array[int]:
    """``[offset, numbytes, offset, numbytes, ...]`` as the map (a flat array of signed 64-bit).

    Raises:
        ValueError: an odd count or a negative number.
    """
    if len(numbers) % 2 or any(n < 0 for n in numbers):
        raise ValueError("a GNU sparse map that is not pairs of offsets and sizes")
    return array.array("q", numbers)


def decimal(text: str) -> int | None:
    """``text`` as a plain decimal number of at most 20 digits, else ``None`` (``int`` alone would
    take signs, underscores and other scripts' digits) — every number of a pax record."""
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 20 else None


def size_of(text: str | None) -> int:
    """A sparse file's size from its pax record (``GNU.sparse.size`` or ``.realsize``).

    Raises:
        ValueError: none, or not a ``decimal`` number.
    """
    if text is None:
        raise ValueError("a GNU sparse member whose pax records give no size of its file")
    size = decimal(text)
    if size is None:
        raise ValueError(f"a GNU sparse member whose file size is not a number: {text[:24]!r}")
    return size


def map_from_text(text: str) -> array.array[int]:
    """The map of pax 0.1's ``GNU.sparse.map`` (``"o,n,o,n"``) or 0.0's records joined alike.

    Raises:
        ValueError: a field that is not a decimal number.
    """
    numbers = [decimal(f) for f in text.split(",") if f]
    if None in numbers:
        raise ValueError("a GNU sparse map with a field that is not a number")
    return map_from_pairs(cast(list[int], numbers))


def checked(segments: array.array[int], real_size: int, stored: int) -> array.array[int]:
    """``segments`` when they make a file of ``real_size`` bytes from ``stored`` bytes: in order,
    not overlapping, within the file, adding up to ``stored``.

    Raises:
        ValueError: what is wrong with the map.
    """
    end = 0
    total = 0
    for i in range(0, len(segments), 2):
        offset, size = segments[i], segments[i + 1]
        if offset < end or offset + size > real_size:
            raise ValueError(
                f"a GNU sparse map whose segment {i // 2} lies out of order or past the file's {real_size} bytes"
            )
        end = offset + size
        total += size
    if total != stored:
        raise ValueError(f"a GNU sparse map of {total} bytes for {stored} stored")
    return segments


class MapLines:
    """The map of the pax 1.0 format, read from the start of a member's data: decimal lines, the
    count of segments first, then each offset and size (``feed`` one block at a time)."""

    def __init__(self) -> None:
        self.numbers: list[int] = []
        self.count: int | None = None
        self._partial = b""

    def feed(self, block: bytes) -> bool:
        """Take the next block of the data; True once the map is whole.

        Raises:
            ValueError: a line that is not a decimal number.
        """
        lines = (self._partial + block).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if not line.isdigit() or len(line) > 20:
                raise ValueError("a GNU sparse map line that is not a number")
            if self.count is None:
                self.count = int(line)
            else:
                self.numbers.append(int(line))
            if len(self.numbers) == 2 * self.count:
                return True  # the rest of the block is padding
        if len(self._partial) > 20:
            raise ValueError("a GNU sparse map line that is not a number")
        return False


class SparseData:
    """The file a sparse member stands for: ``read(n)`` hands out up to ``n`` bytes of it, its
    stored segments read through ``read_stored`` and its holes as zeros; ``b""`` at its end.

    Raises (``read``):
        ValueError: the stored data ends before the map says it does.
    """

    def __init__(self, read_stored: Callable[[int], bytes], segments: array.array[int], real_size: int) -> None:
        self._read, self._segments, self._size = read_stored, segments, real_size
        self._pos = 0
        self._next = 0  # index of the next segment (pairs)

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` more bytes (the rest when ``n`` is negative)."""
        want = self._size - self._pos if n is None or n < 0 else min(n, self._size - self._pos)
        out: list[bytes] = []
        while want > 0:
            chunk = self._chunk(want)
            out.append(chunk)
            want -= len(chunk)
        return b"".join(out)

    def _chunk(self, want: int) -> bytes:
        """The next piece: stored bytes of the segment the position lies in, or zeros to the next."""
        segments, i = self._segments, self._next
        while i < len(segments) and self._pos >= segments[i] + segments[i + 1]:
            i += 2  # segments passed (empty ones included)
        self._next = i
        if i < len(segments) and self._pos >= segments[i]:
            data = self._read(min(want, segments[i] + segments[i + 1] - self._pos))
            if not data:
                raise ValueError("a sparse member whose stored data ends before its map does")
        else:
            hole_end = segments[i] if i < len(segments) else self._size
            data = bytes(min(want, hole_end - self._pos, HOLE_CHUNK))
        self._pos += len(data)
        return data
