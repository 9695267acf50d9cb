"""What every byte source of the readers shares: the ``bytes``-like surface (``len``, ``[i]``,
``[a:b]``, ``[a:b:step]`` with a positive step, ``read`` clipped to the window) over one method,
``_exact``, that each source implements (``filebytes.FileBytes``: ``pread``;
``ranges.RangeBytes``: the ranges kept of a package member)."""

from __future__ import annotations

from typing import overload


class Window:
    """A read-only window of ``size`` bytes, named ``path`` in every error."""

    __slots__ = ("_base", "path", "size")

    def __init__(self, path: str, size: int, base: int = 0) -> None:
        self.path = path
        self.size = size
        self._base = base  # where the window starts in its source

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, key: int) -> int: ...

    @overload
    def __getitem__(self, key: slice) -> bytes: ...

    def __getitem__(self, key: int | slice) -> bytes | int:
        if isinstance(key, slice):
            start, stop, step = key.indices(self.size)
            if step < 1:
                raise ValueError(f"{type(self).__name__} slices step forwards")
            data = self.read(start, stop - start)
            return data if step == 1 else data[::step]
        index = key + self.size if key < 0 else key
        if not 0 <= index < self.size:
            raise IndexError("index out of range")
        return self.read(index, 1)[0]

    def read(self, offset: int, length: int) -> bytes:
        """The bytes at ``offset`` (window-relative), at most ``length``: fewer only at the window's end.

        Raises:
            InputError: as the source's ``_exact`` (a file that shrank, bytes not kept).
        """
        if offset < 0 or length <= 0 or offset >= self.size:
            return b""
        return self._exact(offset, min(length, self.size - offset))

    def find(self, sub: bytes, start: int = 0, end: int | None = None) -> int:
        """Lowest window offset of ``sub`` in ``[start, end)``, or -1 (as ``bytes.find``).

        A one-byte ``sub`` (the NUL ending a name) is searched piece by piece of the source
        (``_piece``: a cached block, a kept range); a longer one reads the range.
        """
        start, end, _ = slice(start, end).indices(self.size)
        if start >= end:
            return -1 if sub else start
        if len(sub) != 1:
            found = self.read(start, end - start).find(sub)
            return found if found < 0 else start + found
        pos = start
        while pos < end:
            data, at = self._piece(self._base + pos, end - pos)
            stop = min(len(data), at + (end - pos))
            found = data.find(sub, at, stop)
            if found >= 0:
                return pos + found - at
            pos += stop - at
        return -1

    def _exact(self, offset: int, length: int) -> bytes:
        """Exactly ``length`` bytes at ``offset``, both inside the window."""
        raise NotImplementedError

    def _piece(self, absolute: int, want: int) -> tuple[bytes, int]:
        """The source's piece of bytes holding the source offset ``absolute`` and where in it that
        offset is (``want``: bytes still to search, for the error of a source that lacks them)."""
        raise NotImplementedError
