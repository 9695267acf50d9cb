"""Where a zstd stream's frames end, read from the frame and block headers alone (no decompressing):
a stream that stops inside a frame is truncated.  ``zstandard``'s stream reader hands out what it
has and then an empty read, which ``tarfile`` takes for an empty or short archive.

Source: RFC 8878 (Zstandard Compression and the 'application/zstd' Media Type), sections 3.1.1
(frame header, blocks, content checksum) and 3.1.2 (skippable frames).
"""

from __future__ import annotations

from typing import IO

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


class TruncatedFrame(Exception):
    """The stream ended inside a frame; ``offset``: the stream's length, bytes."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"a truncated zstd stream: it ends inside a frame (after {offset} bytes)")
        self.offset = offset


class FrameWalker:
    """Follows the frame structure of the bytes fed to it.  ``finish`` raises ``TruncatedFrame``
    unless the bytes stopped between two frames (``ValueError`` for a header no zstd frame has)."""

    def __init__(self) -> None:
        self.offset = 0
        self._buf = bytearray()  # a header read so far
        self._need = 4  # bytes of the current header still to come (magic first)
        self._skip = 0  # bytes of content to pass over
        self._state = "magic"
        self._checksum = False
        self._between = True

    def feed(self, data: bytes) -> None:
        """Account for the next ``data`` of the stream."""
        view = memoryview(data)
        while view:
            if self._skip:
                n = min(self._skip, len(view))
                self._skip -= n
                view = view[n:]
                self.offset += n
                if not self._skip:
                    self._after_skip()
                continue
            n = min(self._need, len(view))
            self._between = False
            self._buf += view[:n]
            self._need -= n
            view = view[n:]
            self.offset += n
            if not self._need:
                self._header()

    def finish(self) -> None:
        """Raises ``TruncatedFrame`` when the stream stopped inside a frame."""
        if not self._between:
            raise TruncatedFrame(self.offset)

    def _expect(self, state: str, need: int) -> None:
        self._state, self._need = state, need
        self._buf.clear()
        if need == 0:
            self._header()

    def _after_skip(self) -> None:
        if self._state == "skippable" or self._state == "checksum-done":
            self._frame_done()
        elif self._state == "last-block":
            if self._checksum:
                self._expect("checksum", 4)
            else:
                self._frame_done()
        else:
            self._expect("block", 3)

    def _frame_done(self) -> None:
        self._between = True
        self._expect("magic", 4)

    def _header(self) -> None:
        buf = bytes(self._buf)
        if self._state == "magic":
            if buf == ZSTD_MAGIC:
                self._expect("descriptor", 1)
            elif buf[0] & 0xF0 == 0x50 and buf[1:] == b"\x2a\x4d\x18":
                self._expect("skippable-size", 4)
            else:
                raise ValueError(f"not a zstd frame at byte {self.offset - 4}")
        elif self._state == "skippable-size":
            self._state = "skippable"
            self._skip = int.from_bytes(buf, "little")
            if not self._skip:
                self._frame_done()
        elif self._state == "descriptor":
            self._descriptor(buf[0])
        elif self._state == "rest-of-header":
            self._expect("block", 3)
        elif self._state == "block":
            self._block(int.from_bytes(buf, "little"))
        elif self._state == "checksum":
            self._frame_done()

    def _descriptor(self, d: int) -> None:
        fcs_flag, single, self._checksum, dict_flag = d >> 6, bool(d & 0x20), bool(d & 0x04), d & 0x03
        if d & 0x08:
            raise ValueError(f"a zstd frame header with its reserved bit set at byte {self.offset - 1}")
        window = 0 if single else 1
        dict_id = (0, 1, 2, 4)[dict_flag]
        fcs = (1 if single else 0, 2, 4, 8)[fcs_flag]
        self._expect("rest-of-header", window + dict_id + fcs)

    def _block(self, header: int) -> None:
        last, kind, size = header & 1, (header >> 1) & 3, header >> 3
        if kind == 3:
            raise ValueError(f"a zstd block of the reserved type at byte {self.offset - 3}")
        self._state = "last-block" if last else "block-body"
        self._buf.clear()
        self._skip = 1 if kind == 1 else size
        if not self._skip:
            self._after_skip()


class CheckedStream:
    """A raw zstd stream handed through unchanged, its frames followed (``FrameWalker``): at its
    end, ``TruncatedFrame`` when it stops inside a frame."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.walker = FrameWalker()

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes of the raw stream.

        Raises:
            TruncatedFrame: the stream ended inside a frame.
            ValueError: a header no zstd frame has.
        """
        data = self.raw.read(n)
        if data:
            self.walker.feed(data)
        else:
            self.walker.finish()
        return data

    def readable(self) -> bool:
        """Always True (``zstandard`` asks)."""
        return True
