"""Tarballs: plain, gzip, bzip2, xz or zstd (a conda ``.tar.bz2`` and a ``.conda``'s inner
``pkg-*.tar.zst`` among them), read as a stream member by member under a cap on every byte
decompressed, by our own reader (``tarread``: POSIX ``ustar`` with pax and GNU extensions).
"""

from __future__ import annotations

import bz2
import contextlib
import hashlib
import lzma
import os
import posixpath
from typing import IO, Any, cast

from ..cache import Key, active, tar_member_key
from ..errors import InputError
from ..formats import copies, held, sniff
from ..formats.libnames import HEAD_BYTES
from ..formats.ranges import forget
from . import limits
from .inflate import gzip_stream
from .magic import ZSTD
from .metadata import MAX_METADATA, conda_record, past_limit
from .staging import (
    CORRUPT,
    Clash,
    Listed,
    Readable,
    Refused,
    Stager,
    StagingRoot,
    install_path,
    names_root,
    safe_name,
    unsafe_reason,
)
from .tarread import TarError, TarMember, TarReader, read_up_to
from .zstdframes import CheckedStream


class Capped:
    """A read-only stream over ``decompress``, refusing to hand out more than ``limit`` bytes in all
    (every byte tarfile reads: members written or skipped, headers, long names)."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        """Up to ``n`` bytes (a chunk when ``n`` is negative).

        Raises:
            Refused: more than ``limit`` bytes were read in all.
        """
        want = limits.CHUNK if n is None or n < 0 else min(n, limits.CHUNK * 16)
        data: bytes = self.stream.read(want)
        self.count += len(data)
        if self.count > self.limit:
            raise Refused(f"decompresses to more than {self.limit} bytes (a decompression bomb?)")
        return data

    def drain(self) -> None:
        """Read what follows the end of the archive: only zero blocks may (a corrupt header in the
        middle stops tarfile quietly; the decompressor checks its CRC and length at the end).

        Raises:
            Refused: non-zero data follows the end of the archive.
        """
        while True:
            data = self.read(limits.CHUNK)
            if not data:
                return
            if data.strip(b"\0"):
                raise Refused("data after the end of the archive: a corrupt member header in the middle of it?")


def decompressed(fh: IO[bytes], head: bytes, packed: int) -> Capped:
    """``fh`` decompressed by its magic bytes (gzip, bzip2, xz, zstd, or none), capped at
    ``MAX_RATIO`` times ``packed`` (at least ``PACKAGE_FLOOR``) bytes."""
    stream: Any
    if head.startswith(b"\x1f\x8b"):
        stream = gzip_stream(fh)
    elif head.startswith(b"BZh"):
        stream = bz2.BZ2File(fh)
    elif head.startswith(b"\xfd7zXZ\x00"):
        stream = lzma.LZMAFile(fh)  # noqa: SIM115
    elif head.startswith(ZSTD):
        import zstandard

        # zstandard ends a truncated frame with an empty read: the frame walker says it is truncated.
        stream = zstandard.ZstdDecompressor().stream_reader(cast(IO[bytes], CheckedStream(fh)), read_size=limits.CHUNK)
    else:
        stream = fh
    return Capped(stream, max(limits.MAX_RATIO * max(packed, 1), limits.PACKAGE_FLOOR))


class Origin:
    """The package file a tar stream comes from: its members' cache keys (``cache.tar_member_key``).

    Args:
        path: the package file (a tarball, a conda ``.tar.bz2`` or ``.conda``).
        st: its stat, taken on the file being read.
        inner: the tar's name inside it (a ``.conda``'s ``pkg-*.tar.zst``), or ``""``.
    """

    def __init__(self, path: str, st: os.stat_result, inner: str = "") -> None:
        self.path, self.st, self.inner = path, st, inner

    def key(self, name: str, member: TarMember) -> Key | None:
        """The cache key of the member ``member`` (its safe name ``name``); ``None`` for a member
        of at most ``copies.SMALL_FILE_BYTES``, which ``read_path`` parses from memory and never
        caches (a key and its ``register`` cost more than the parse: issue 14 §1)."""
        if member.size <= copies.SMALL_FILE_BYTES:
            return None
        return tar_member_key(self.path, self.st, self.inner, name, member.size, member.mtime, member.offset, "tar")


def origin(path: str, st: os.stat_result, inner: str = "") -> Origin | None:
    """The ``Origin`` of a tar stream when the cache is on, else ``None``."""
    return Origin(path, st, inner) if active() is not None else None


def stage_tarball(stager: Stager, site: StagingRoot, label: str, path: str, kind: str = "tarball") -> None:
    """Stage the tarball at ``path`` (given as ``label``) into ``site``, its members installed as
    ``kind`` says (``"conda"``: a ``.tar.bz2`` into the prefix it shares with other conda packages,
    each member listed for clashes: ``stage_stream``); problems go to ``stager.errors``."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(8)
            fh.seek(0)
            st = os.fstat(fh.fileno())
            stream = decompressed(fh, head, st.st_size)
            stage_stream(stager, site, label, kind, stream, path, st.st_size, origin(path, st))
    except OSError as exc:
        stager.errors.append(InputError(path, exc.strerror or str(exc)))


def stage_stream(
    stager: Stager,
    site: StagingRoot,
    label: str,
    kind: str,
    fh: Capped,
    where: str,
    packed: int,
    source: Origin | None = None,
) -> None:
    """Read an uncompressed tar stream member by member (``tarread``: no seeking), decompressed by
    ``decompressed`` under a cap on every byte decompressed — skipped members and long-name
    headers included —; then read the stream to its end, so that a bad header in the middle,
    trailing data, a failed gzip CRC or a truncation is an error.
    A second member of the same name replaces the first, as ``tar -x`` does, and is reported.
    ``where`` names the archive in errors of the whole stream; ``kind`` is how members install;
    ``source``: where the stream comes from, for its members' cache keys (``None``: no cache)."""
    listed = _Listed()
    start_total = stager.budget.total
    try:
        tar = TarReader(fh)
        for members, member in enumerate(tar, 1):
            if members > limits.MAX_MEMBERS:
                raise Refused(f"lists more than {limits.MAX_MEMBERS} members")
            if member.isdir() and names_root(member.name):
                continue  # `tar -C DIR .`: the root's own entry, "./"
            name = safe_name(member.name)
            if name is None:
                stager.refuse(label, member.name or "(empty name)", unsafe_reason(member.name))
                continue
            site.claim_dirs(install_path(kind, name), label)
            linked = _is_link(stager, label, name, member, listed)
            listed.seen.add(name)
            if linked:
                continue
            limit = limits.MAX_RATIO * max(packed, 1) - (stager.budget.total - start_total)
            key = source.key(name, member) if source is not None else None
            _member(stager, site, label, kind, (name, key), tar.data(), member, listed, max(limit, 0))
        fh.drain()
    except Refused as exc:
        stager.errors.append(InputError(where, exc.reason))
    except TarError as exc:
        stager.errors.append(InputError(where, f"not a readable tar archive: {exc.reason}"))
    except CORRUPT as exc:
        stager.errors.append(InputError(where, f"not a readable tar archive, or truncated: {exc}"))
    except MemoryError:
        raise  # the run's own handler names it; never "cannot be decompressed"
    except Exception as exc:  # zstandard.ZstdError and decompressor errors of other codecs
        stager.errors.append(InputError(where, f"cannot be decompressed: {exc or type(exc).__name__}"))
    finally:
        stager.links(site, label, kind, listed.links)


class _Listed:
    """What ``stage_stream`` keeps of the members listed so far: the links to make after every
    file (``links``: name, target relative to the link's directory), the installed paths written
    (``written``), the names listed (``seen``: a hard link names an earlier one), and the hard links
    still to make to each member name (``hard``: a second member of that name must not take them)."""

    __slots__ = ("hard", "links", "seen", "written")

    def __init__(self) -> None:
        self.links: list[tuple[str, str]] = []
        self.written: set[str] = set()
        self.seen: set[str] = set()
        self.hard: dict[str, list[str]] = {}


def _is_link(stager: Stager, label: str, name: str, member: TarMember, listed: _Listed) -> bool:
    """True when ``member`` is a symlink or hard link (queued in ``listed.links``: made after every
    file) or a member never written (a device file or a FIFO, refused; a hard link to no member
    listed before it, refused: ``listed.seen``)."""
    if member.issym():
        listed.links.append((name, member.linkname))
        return True
    if member.islnk():
        target = safe_name(member.linkname)
        if target is None:
            stager.refuse(label, name, f"a hard link to {member.linkname!r}, outside the package")
            return True
        if target not in listed.seen:
            stager.refuse(label, name, f"a hard link to {member.linkname!r}, which no member listed before it is")
            return True
        listed.links.append((name, posixpath.relpath(target, posixpath.dirname(name) or ".")))
        listed.hard.setdefault(target, []).append(name)
        return True
    if member.isfifo():
        stager.refuse(label, name, "a FIFO (named pipe): never read from a package")
        return True
    if member.isdev():
        stager.refuse(label, name, "a device file")
        return True
    return False


def _member(
    stager: Stager,
    site: StagingRoot,
    label: str,
    kind: str,
    named: tuple[str, Key | None],
    src: Readable,
    member: TarMember,
    listed: _Listed,
    limit: int,
) -> None:
    """Stage one regular member (any other kind is passed over; ``named``: its safe name and
    cache key); a second member of a name written before replaces it."""
    name, key = named
    if not member.isfile():
        return
    if member.sparse_error is not None:
        stager.refuse(label, name, member.sparse_error)
        return
    if name == "info/index.json" and (kind == "conda" or label.endswith(".tar.bz2")):  # its depends, its subdir
        if member.real_size > MAX_METADATA:
            stager.refuse(label, name, past_limit(member.real_size, MAX_METADATA, "conda info/index.json"))
            return
        text = read_up_to(src, MAX_METADATA).decode("utf-8", errors="replace")
        record, why = conda_record(text)
        if record is None:
            stager.refuse(label, name, why)  # its name, subdir and depends unknown: said
            return
        site.conda_index[label] = text
        return
    rel = install_path(kind, name)
    in_prefix = kind == "conda" and rel is not None and not rel.startswith("info/")  # info/: not in the prefix
    if in_prefix and not member.sparse and stager.compare:  # a sparse file's holes are never read through
        src = summed = Summed(src)
    else:
        summed = None
    if rel is not None and rel in listed.written and site.owner.get(rel) == label:
        stager.second_copy(label, name)
        site.disown(rel)
        replaced = os.path.join(site.host, rel)
        _keep_for_links(stager, site, (label, kind), name, replaced, listed)
        forget(replaced)  # its inode may be reused by a file that is not this member
        if held.release(replaced) is None:
            with contextlib.suppress(OSError):
                os.unlink(replaced)
    size = None if member.sparse else member.real_size
    if stager.file(site, label, kind, name, src, limit, key, size) and rel is not None:
        listed.written.add(rel)
    if in_prefix and rel is not None:
        _list(stager, site, label, name, rel, summed.finish() if summed is not None else None)


def _keep_for_links(
    stager: Stager, site: StagingRoot, how: tuple[str, str], name: str, replaced: str, listed: _Listed
) -> None:
    """Before a second member of ``name`` replaces its first (the file ``replaced``), make each
    hard link listed to it a file of the first's contents: ``tar -x`` links them to the first
    file's inode, and the second member is a new file (before, the links were made to the second
    one, and the first's findings were lost).  ``how``: the package's label and kind."""
    pending = listed.hard.pop(name, None)
    if not pending:
        return
    label, kind = how
    taken = set(pending)
    listed.links[:] = [link for link in listed.links if link[0] not in taken]
    kept = held.contents(replaced)
    for link in pending:
        try:
            head = kept[:HEAD_BYTES] if kept is not None else _head(replaced)
            planned = stager.plan(site, label, kind, link, head)
            if planned is None:
                continue
            if kept is not None:
                if not held.hold(planned[0], kept):
                    held.write_file(planned[0], kept)
                stager.held.setdefault(site.host, []).append(planned[0])
            else:
                os.link(replaced, planned[0])  # one inode, as tar -x makes it
        except OSError as exc:
            stager.refuse(label, link, f"cannot be written here: {exc.strerror or exc}")
            continue
        listed.seen.add(link)
        listed.written.add(planned[1])
        container = sniff(head)
        if container is not None:
            stager.sniffed[planned[0]] = container  # the walk need not open it (a held one it cannot)


def _head(path: str) -> bytes:
    """The first ``HEAD_BYTES`` of the file ``path``.

    Raises:
        OSError: it cannot be read.
    """
    with open(path, "rb") as fh:
        return fh.read(HEAD_BYTES)


class Summed:
    """A member's data read through (``read`` as its source's): the SHA-256 and length of what was
    read, to compare two packages' copies of one path without either being on disk (a member may be
    held in memory, ``formats.held``, or not a binary and never written).  SHA-256, not CRC-32: a
    CRC is no identity of contents (4 bytes appended make any file's CRC-32 any value)."""

    __slots__ = ("sha", "size", "src")

    def __init__(self, src: Readable) -> None:
        self.src, self.sha, self.size = src, hashlib.sha256(), 0

    def read(self, n: int = -1, /) -> bytes:
        """At most ``n`` bytes of the member (``src.read``), counted."""
        data = self.src.read(n)
        self.sha.update(data)
        self.size += len(data)
        return data

    def finish(self) -> tuple[bytes, int]:
        """``(SHA-256 digest, size in bytes)`` of the whole member: the rest of it read in chunks,
        as the tar reader would skip it (the stream's caps count it either way)."""
        while self.read(limits.CHUNK):
            pass
        return self.sha.digest(), self.size


def _list(stager: Stager, site: StagingRoot, label: str, name: str, rel: str, sums: tuple[bytes, int] | None) -> None:
    """Record the member ``rel`` of the conda package ``label`` as installed into the shared
    prefix (``sums``: its SHA-256 digest and size; ``None``: not compared); a path another package
    installs too is a clash, identical when both digests and sizes agree."""
    mine = Listed(label, None, -1, name) if sums is None else Listed(label, sums[0], sums[1], name)
    first = site.listed.setdefault(rel, mine)
    if first.package == label:
        site.listed[rel] = mine  # a second copy of the package's own replaces the first (tar -x)
    else:
        same = (
            None
            if not isinstance(first.sum, bytes) or sums is None
            else first.sum == mine.sum and first.size == mine.size
        )
        stager.clashes.append(Clash(rel, first.package, label, name, same))
