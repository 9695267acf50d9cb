"""A tar stream read member by member, forward only: POSIX ``ustar`` headers with the pax
extended headers (``x``) and GNU long names (``L``, ``K``) that stretch them.

Ours, not Python's ``tarfile``, for two reasons (issue 14 §1): ``tarfile`` spends about 33 µs
of Python per member (a ``TarInfo`` of 25 fields, a file object per member, three layers of
buffered reads), 6.7 s of a 200,000-member package; and it stops quietly at a corrupt header in
the middle of an archive, where this reader names the byte.

Sources: POSIX.1-2017 ``pax`` (the ``ustar`` header and the extended header records), GNU tar's
manual ("Basic Tar Format": the ``L``/``K`` long-name members, the GNU sparse formats, base-256
numbers).  What ``tarfile`` does is followed where the formats leave it open: a header checksum
may be taken over signed or unsigned bytes, a ``ustar`` prefix joins its name with ``/``, a
pre-POSIX regular file whose name ends in ``/`` is a directory, a directory's trailing slashes
are dropped, the first extension header before a member wins over the ones after it.

Bounds: every byte read comes from the caller's stream (``tar.Capped`` counts and caps them,
skipped data included); an extended header or long name is held in memory only up to
``MAX_EXTENDED`` bytes; a member's data is handed out without copying it whole when it is large.
"""

from __future__ import annotations

import array
import struct
import zlib
from collections.abc import Iterator
from typing import Protocol

from . import tarsparse

#: The tar block, bytes.
BLOCK = 512
#: Largest pax extended header or GNU long name held, bytes (a path is at most 4,096 bytes on
#: Linux; a pax header of a package also carries a few times, ids and perhaps ACLs).
MAX_EXTENDED = 1 << 20
#: Bytes asked of the stream at once when refilling the buffer.
READ_AHEAD = 1 << 20
#: Members up to this size are handed out from the buffer (one slice); larger ones are streamed.
BUFFERED_MEMBER = 1 << 20

_SIGNED = struct.Struct("148b8x356b")
_OCTAL = b"01234567"
#: Regular files: ``0``, the pre-POSIX ``\\0``, ``7`` (contiguous file, read as regular).
_REGULAR = frozenset((b"0", b"\0", b"7"))
_EXTENDED = frozenset((b"x", b"X", b"g", b"L", b"K"))
_NO_DATA = frozenset((b"1", b"2", b"3", b"4", b"5", b"6"))
_SPARSE = "GNU.sparse."


class Stream(Protocol):
    """What the reader reads from: ``read(n)`` returns at most ``n`` bytes, ``b""`` at the end."""

    def read(self, n: int = -1, /) -> bytes:
        """At most ``n`` bytes."""
        ...


class TarError(Exception):
    """The stream is not a readable tar archive: ``reason`` says what and at which byte."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TarMember:
    """One member as its headers say it.

    Attributes:
        name: the path, decoded as UTF-8 (undecodable bytes kept as surrogates, as ``tarfile``).
        linkname: a link's target ("" for other members).
        type: the type flag, one byte (``b"0"`` regular, ``b"2"`` symlink, ...).
        size: bytes of data following the header.
        mtime: the modification time, seconds since the epoch.
        offset: byte offset in the stream of the member's first header (its extension headers
            included, as ``tarfile`` counts it).
        sparse: a GNU sparse file (type ``S`` or pax ``GNU.sparse.*`` records): its data is the
            stored segments of a file of ``real_size`` bytes, placed by ``segments``
            (``tarsparse``: offset, size, offset, size...); ``TarReader.data`` rebuilds the file.
        real_size: the file's size (``size`` but for a sparse member).
        segments: a sparse member's map, once read, else ``None``.
        sparse_error: why a sparse member's map cannot make its file (the member is refused; its
            framing holds, so the members after it are read), else ``None``.
    """

    __slots__ = (
        "linkname",
        "mtime",
        "name",
        "offset",
        "real_size",
        "segments",
        "size",
        "sparse",
        "sparse_error",
        "type",
    )

    def __init__(self, name: str, linkname: str, type: bytes, size: int, mtime: int, offset: int) -> None:
        self.name, self.linkname, self.type = name, linkname, type
        self.size, self.mtime, self.offset = size, mtime, offset
        self.sparse = type == b"S"
        self.real_size = size
        self.segments: array.array[int] | None = None
        self.sparse_error: str | None = None

    def isfile(self) -> bool:
        """A regular file (sparse ones included: ``sparse`` says so)."""
        return self.type in _REGULAR or self.sparse

    def isdir(self) -> bool:
        """A directory."""
        return self.type == b"5"

    def issym(self) -> bool:
        """A symbolic link."""
        return self.type == b"2"

    def islnk(self) -> bool:
        """A hard link to a member listed before."""
        return self.type == b"1"

    def isfifo(self) -> bool:
        """A FIFO."""
        return self.type == b"6"

    def isdev(self) -> bool:
        """A character or block device."""
        return self.type in (b"3", b"4")


def _text(field: bytes) -> str:
    """A NUL-terminated header field as text (UTF-8, undecodable bytes as surrogates)."""
    end = field.find(b"\0")
    return (field if end < 0 else field[:end]).decode("utf-8", "surrogateescape")


def _number(field: bytes, what: str, at: int) -> int:
    """A numeric header field: octal digits (NUL- or space-padded) or GNU base-256.

    Raises:
        TarError: anything else (``int`` alone would take signs and underscores).
    """
    if field[0] in (0x80, 0xFF):  # base-256, big-endian; 0xFF: negative
        value = int.from_bytes(field[1:], "big")
        return value - (1 << (8 * (len(field) - 1))) if field[0] == 0xFF else value
    end = field.find(b"\0")
    digits = (field if end < 0 else field[:end]).strip(b" ")
    if digits.translate(None, _OCTAL):
        raise TarError(f"a member header at byte {at} has a {what} that is not a number: {digits[:12]!r}")
    return int(digits or b"0", 8)


def _checksum_ok(header: bytes, at: int) -> bool:
    """The header's stored checksum (a number) equals the sum of its bytes, unsigned or signed (old tars)."""
    try:
        stored = _number(header[148:156], "checksum", at)
    except TarError:
        return False
    # the field itself counts as eight spaces (256); the signed sum only when the unsigned fails
    if _byte_sum_is(header, stored + sum(header[148:156]) - 256):
        return True
    return bool(stored == sum(_SIGNED.unpack(header)) + 256)


def _byte_sum_is(block: bytes, total: int) -> bool:
    """Whether the bytes of ``block`` add up to ``total``, told exactly from two residues computed
    in C: Adler-32's first half (one plus the sum, modulo 65,521) and the block read as one number
    modulo 255 (256 ≡ 1); a block of fewer than 65,521 bytes adds up to less than 65,521 × 255
    (the Chinese remainder theorem).  A header's ``sum`` in Python took 2.1 µs, this 1.2 µs."""
    return (
        0 <= total <= 255 * len(block) < 255 * 65521
        and zlib.adler32(block) & 0xFFFF == (total + 1) % 65521
        and int.from_bytes(block, "big") % 255 == total % 255
    )


def is_tar_header(block: bytes) -> bool:
    """``block`` (512 bytes) is a tar header by its checksum alone — how a pre-POSIX (v7) archive,
    which has no magic, is told from other data."""
    return len(block) == BLOCK and _checksum_ok(block, 0)


def _pax_records(data: bytes, at: int) -> dict[str, str]:
    """The ``LENGTH KEYWORD=VALUE\\n`` records of a pax extended header, decoded as UTF-8.

    Raises:
        TarError: a record whose length does not frame it.
    """
    records: dict[str, str] = {}
    pairs: list[str] = []  # GNU sparse 0.0: GNU.sparse.offset and .numbytes, repeated, in order
    pos, end = 0, len(data)
    while pos < end and data[pos] != 0:
        space = data.find(b" ", pos, pos + 21)
        digits = data[pos:space] if space > pos else b"x"
        if not digits.isdigit() or not 0 < int(digits) <= end - pos:
            raise TarError(f"the pax extended header at byte {at} has a malformed record at its byte {pos}")
        stop = pos + int(digits)
        keyword, equals, value = data[space + 1 : stop - 1].partition(b"=")
        if not equals or data[stop - 1] != 0x0A:
            raise TarError(f"the pax extended header at byte {at} has a malformed record at its byte {pos}")
        key = keyword.decode("utf-8", "surrogateescape")
        if key in ("GNU.sparse.offset", "GNU.sparse.numbytes"):
            pairs.append(value.decode("ascii", "replace"))
        records[key] = value.decode("utf-8", "surrogateescape")
        pos = stop
    if pairs:
        records.setdefault("GNU.sparse.map", ",".join(pairs))
    return records


class TarReader:
    """The members of the tar stream ``stream``, in order (iterate), and their data (``data``).

    The data of a member must be read, if at all, before the next member is asked for; what is
    left of it is skipped (read and counted by ``stream``, never seeked over).

    Raises (from iteration and from the data's ``read``):
        TarError: a corrupt or truncated header, a truncated member, an empty stream, or bytes
            other than zeros after the end-of-archive block.
    """

    def __init__(self, stream: Stream) -> None:
        self._stream = stream
        self._buf = b""
        self._pos = 0  # next unread byte of _buf
        self._offset = 0  # stream offset of _buf[_pos]
        self._left = 0  # data of the current member not handed out yet, then its padding
        self._pad = 0
        self._current: TarMember | None = None
        self._sparse: dict[str, str] = {}  # the GNU.sparse.* records of the member being read

    def _fill(self, n: int) -> bool:
        """At least ``n`` unread bytes in the buffer; False when the stream ends first."""
        have = len(self._buf) - self._pos
        if have >= n:
            return True
        parts = [self._buf[self._pos :]]
        while have < n:
            chunk = self._stream.read(max(READ_AHEAD, n - have))
            if not chunk:
                break
            parts.append(chunk)
            have += len(chunk)
        self._buf, self._pos = b"".join(parts), 0
        return have >= n

    def _take(self, n: int) -> bytes:
        """The next ``n`` bytes (fewer only at the end of the stream)."""
        self._fill(n)
        out = self._buf[self._pos : self._pos + n]
        self._pos += len(out)
        self._offset += len(out)
        return out

    def _skip(self, n: int, what: str) -> None:
        """Pass over ``n`` bytes, read and discarded in chunks.

        Raises:
            TarError: the stream ends first (``what`` is said).
        """
        while n > 0:
            if self._pos >= len(self._buf) and not self._fill(1):
                raise TarError(f"truncated: the stream ends inside {what}")
            step = min(n, len(self._buf) - self._pos)
            self._pos += step
            self._offset += step
            n -= step

    def __iter__(self) -> Iterator[TarMember]:
        while True:
            self._skip(self._left + self._pad, "a member's data")
            self._left = self._pad = 0
            member = self._next_member()
            if member is None:
                return
            # links, devices, directories and FIFOs carry no data whatever their size says (as tarfile)
            self._left = 0 if member.type in _NO_DATA else member.size
            self._pad = -self._left % BLOCK
            if member.sparse:
                self._sparse_map(member)
            self._current = member
            yield member

    def _header(self) -> tuple[bytes, int] | None:
        """The next header block and its offset; ``None`` at the end-of-archive block.

        Raises:
            TarError: an empty stream, a truncated or corrupt header, data after the end.
        """
        at = self._offset
        header = self._take(BLOCK)
        if not header:
            if at == 0:
                raise TarError("empty: not a tar archive")
            return None  # the end of the stream where a header could start: tarfile accepts it
        if len(header) < BLOCK:
            raise TarError(f"truncated: the stream ends inside the member header at byte {at}")
        if not header.strip(b"\0"):
            self._end()
            return None
        if not _checksum_ok(header, at):
            if at == 0:
                raise TarError("no tar header at its start (the header checksum does not match)")
            raise TarError(f"the member header at byte {at} is corrupt (its checksum does not match)")
        return header, at

    def _end(self) -> None:
        """After the end-of-archive block, only zeros may follow in what is buffered (the
        caller's stream reads and checks the rest).

        Raises:
            TarError: a non-zero byte.
        """
        if self._buf[self._pos :].strip(b"\0"):
            raise TarError("data after the end of the archive: a corrupt member header in the middle of it?")
        self._buf, self._pos = b"", 0

    def _next_member(self) -> TarMember | None:
        """The next member with its extension headers applied; ``None`` at the end."""
        found = self._header()
        if found is None:
            return None
        header, first = found
        ext: dict[str, str] = {}
        self._sparse = {}
        while header[156:157] in _EXTENDED:
            kind, at = header[156:157], self._offset - BLOCK
            size = _number(header[124:136], "size", at)
            if not 0 <= size <= MAX_EXTENDED:
                raise TarError(f"the extension header at byte {at} declares {size} bytes (more than {MAX_EXTENDED})")
            data = self._take(size)
            if len(data) < size:
                raise TarError(f"truncated: the stream ends inside the extension header at byte {at}")
            self._skip(-size % BLOCK, "an extension header")
            if kind in (b"x", b"X"):
                records = _pax_records(data, at)
                for key in (k for k in records if k.startswith(_SPARSE)):
                    self._sparse.setdefault(key, records[key])
                if "GNU.sparse.name" in records:  # GNU's sparse pax formats: the real name
                    records["path"] = records["GNU.sparse.name"]
                for key in ("path", "linkpath", "size"):
                    if key in records:
                        ext.setdefault(key, records[key])
            elif kind in (b"L", b"K"):
                ext.setdefault("path" if kind == b"L" else "linkpath", _text(data))
            found = self._header()
            if found is None:
                raise TarError(f"truncated: the extension header at byte {at} is followed by no member")
            header = found[0]
        member = self._member(header, self._offset - BLOCK, ext)
        if member.type == b"S":
            self._old_sparse_map(header, first)
        member.offset = first
        member.sparse = member.sparse or bool(self._sparse)
        return member

    def _old_sparse_map(self, header: bytes, at: int) -> None:
        """The old GNU format's map: four entries in the ``S`` header (at 386, each a 12-byte
        offset and size), then 21 in each extension block while the byte after the entries (482
        in the header, 504 in a block) is set; the file's size at 483.  Kept as pax 0.1 writes
        them (``GNU.sparse.map``, ``GNU.sparse.size``): ``_sparse_map`` checks every format alike.

        Raises:
            TarError: the stream ends first, or a number is not one.
        """
        numbers: list[int] = []
        block, entries, more = header, range(386, 482, 24), header[482]
        while True:
            for e in entries:
                if block[e : e + 24].strip(b"\0"):
                    numbers += (
                        _number(block[e : e + 12], "sparse offset", at),
                        _number(block[e + 12 : e + 24], "sparse size", at),
                    )
            if not more:
                break
            block = self._take(BLOCK)
            if len(block) < BLOCK:
                raise TarError("truncated: the stream ends inside a GNU sparse header")
            entries, more = range(0, 504, 24), block[504]
        self._sparse["GNU.sparse.map"] = ",".join(map(str, numbers))
        self._sparse["GNU.sparse.size"] = str(_number(header[483:495], "sparse file size", at))

    def _member(self, header: bytes, at: int, ext: dict[str, str]) -> TarMember:
        """The member of ``header`` (at byte ``at``) with the extension values ``ext`` applied."""
        type_ = header[156:157]
        name = ext.get("path")
        if name is None:
            name = _text(header[0:100])
            prefix = _text(header[345:500]) if header[345] and header[257:263] == b"ustar\0" else ""
            if prefix:
                name = f"{prefix}/{name}"
        if type_ == b"\0" and name.endswith("/"):
            type_ = b"5"  # a pre-POSIX directory
        if type_ == b"5":
            name = name.rstrip("/")
        size = _number(header[124:136], "size", at)
        if "size" in ext:
            pax_size = tarsparse.decimal(ext["size"])
            if pax_size is None:
                raise TarError(
                    f"the pax extended header before byte {at} has a size that is not a number: {ext['size'][:24]!r}"
                )
            size = pax_size
        if size < 0:
            raise TarError(f"the member header at byte {at} declares a negative size")
        linkname = ext.get("linkpath")
        if linkname is None:
            linkname = _text(header[157:257]) if header[157] else ""  # a regular file's is empty
        mtime = _number(header[136:148], "mtime", at)
        return TarMember(name, linkname, type_, size, mtime, at)

    def _sparse_map(self, member: TarMember) -> None:
        """Set and check a sparse ``member``'s map: from its records (pax 0.0, 0.1, and the old GNU
        header's, kept alike), or read from the start of its data (1.0, the blocks taken off ``size``).

        A map that is missing, malformed or does not fit is the member's ``sparse_error`` (its map
        set to ``None``): the member's size still frames the archive.

        Raises:
            TarError: the stream ends inside the map.
        """
        records = self._sparse
        try:
            if records.get("GNU.sparse.major") == "1":
                member.segments = self._map_in_data(member)
                member.real_size = tarsparse.size_of(records.get("GNU.sparse.realsize"))
            else:
                member.segments = tarsparse.map_from_text(records.get("GNU.sparse.map", ""))
                member.real_size = tarsparse.size_of(records.get("GNU.sparse.size", records.get("GNU.sparse.realsize")))
            tarsparse.checked(member.segments, member.real_size, member.size)
        except ValueError as exc:
            member.segments, member.sparse_error = None, str(exc)

    def _map_in_data(self, member: TarMember) -> array.array[int]:
        """The pax 1.0 map at the start of ``member``'s data, block by block.

        Raises:
            ValueError: a line that is no number, or no map before the data ends.
        """
        lines = tarsparse.MapLines()
        while True:
            if self._left < BLOCK:
                raise ValueError("a GNU sparse map longer than the member")
            block = MemberData(self).read(BLOCK)
            if len(block) < BLOCK:
                raise ValueError("a GNU sparse map cut short")
            member.size -= BLOCK
            if lines.feed(block):
                return tarsparse.map_from_pairs(lines.numbers)

    def data(self) -> MemberData | SparseFile:
        """A reader of the data of the member last handed out (a sparse one's file rebuilt,
        ``tarsparse.SparseData``); valid until the next member is asked for."""
        member = self._current
        if member is not None and member.sparse and member.segments is not None:
            return SparseFile(tarsparse.SparseData(MemberData(self).read, member.segments, member.real_size))
        return MemberData(self)


def read_up_to(src: Stream, n: int) -> bytes:
    """Up to ``n`` bytes of a member, fewer only at its end: a member's ``read`` hands out at most
    ``READ_AHEAD`` bytes of a large member at a time, so one ``read(n)`` of more stops short (a
    conda ``info/index.json`` of 2.2 MB was cut at 1 MiB and called not JSON).

    Raises:
        TarError: the stream ends inside the member.
    """
    parts: list[bytes] = []
    got = 0
    while got < n:
        chunk = src.read(n - got)
        if not chunk:
            break
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


class MemberData:
    """One member's data: ``read(n)`` hands out at most ``n`` bytes (all when ``n`` < 0) and
    ``b""`` at its end; small members come from the reader's buffer in one slice.

    Raises (``read``):
        TarError: the stream ends inside the member.
    """

    __slots__ = ("_reader",)

    def __init__(self, reader: TarReader) -> None:
        self._reader = reader

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` more bytes of the member (the rest when ``n`` is negative)."""
        r = self._reader
        want = r._left if n is None or n < 0 else min(n, r._left)
        if want <= 0:
            return b""
        if len(r._buf) - r._pos < want and want <= BUFFERED_MEMBER and not r._fill(want):
            raise TarError(f"truncated: the stream ends inside a member's data at byte {r._offset}")
        if r._pos >= len(r._buf):  # a large member: straight from the stream
            chunk = r._stream.read(min(want, READ_AHEAD))
            if not chunk:
                raise TarError(f"truncated: the stream ends inside a member's data at byte {r._offset}")
        else:
            chunk = r._buf[r._pos : r._pos + want]
            r._pos += len(chunk)
        r._offset += len(chunk)
        r._left -= len(chunk)
        return chunk


class SparseFile:
    """A sparse member's file (``tarsparse.SparseData``), its errors as ``TarError``."""

    __slots__ = ("_data",)

    def __init__(self, data: tarsparse.SparseData) -> None:
        self._data = data

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` more bytes of the file.

        Raises:
            TarError: the stored data ends before the map does.
        """
        try:
            return self._data.read(n)
        except ValueError as exc:
            raise TarError(str(exc)) from None
