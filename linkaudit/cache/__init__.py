"""A content-keyed cache of what files say: the ``Binary`` records the readers built, on disk.

Where: ``$LINKAUDIT_CACHE_DIR``, else the user cache directory (``platformdirs``), under
``binaries-v{READER_VERSION}``; the CLI turns it on (``--no-cache`` off), the library only
when ``configure`` is called.

Keys (issue 14 §2):
- a file by its fast key ``(st_dev, st_ino, st_size, st_mtime_ns, st_ctime_ns)`` — trusted only
  when the file's mtime and ctime are older than the entry by more than ``GRANULARITY_NS``
  (git's "racy" rule: an entry written within the file's timestamp granularity of its last
  change cannot tell a later change of the same size from none); otherwise the entry's content
  hash (SHA-256) is compared with the file's, and an entry that matches is refreshed;
- a package member by its container's fast key plus the member's name, CRC-32, compressed and
  inflated sizes from the zip central directory (no member is hashed); a tar member (a conda
  ``.tar.bz2``, a ``.conda``'s ``pkg-*.tar.zst``, a tarball) by its container's fast key, the
  inner tar's name, and the member's name, size, mtime and offset in the stream; a racy
  container is compared by its own content hash.

Entries are a fixed binary layout (``codec``: a header, a JSON part for the structured fields,
a blob of the symbol tables' raw columns; never pickle or marshal: loading one runs no code),
written to a temporary file and renamed into place (concurrent runs never see half an entry), validated field by
field like any input: a corrupt, foreign or stale entry is a miss and is rewritten.  The
cache is bounded (``MAX_BYTES``): the least recently used entries (by mtime, touched on each
hit) are evicted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import hashlib
import os
import posixpath
import re
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import field

from ..model import Binary
from ..records import dataclass
from .codec import READER_VERSION, Entry, Heads, pack, unpack

__all__ = [
    "READER_VERSION",
    "Cache",
    "CacheInfo",
    "Key",
    "active",
    "configure",
    "file_key",
    "member_key",
    "narrowed",
    "tar_member_key",
    "unusable",
]

#: Timestamp granularity assumed for every file system (FAT's is 2 s; ext4, XFS, tmpfs: 1 ns).
GRANULARITY_NS = 2_000_000_000
#: Bytes the cache may hold before the least recently used entries are evicted.
MAX_BYTES = 2 << 30
#: Largest entry read back (a bigger file in the cache is foreign: ignored).
MAX_ENTRY_BYTES = 512 << 20
#: The names the cache writes: ``XX/<sha256>.bin``, a package member's ``XX/<sha256>-0.bin`` /
#: ``-1.bin`` (``member_variant``: read without / with soft dependencies) and, while writing,
#: ``XX/.tmp-<name>-PID-THREAD``.  info, clear and eviction see exactly these.
_FOLDER = re.compile(r"[0-9a-f]{2}")
_ENTRY = re.compile(r"[0-9a-f]{64}(?:-[01])?\.bin")
_TMP = re.compile(r"\.tmp-[0-9a-f]{64}(?:-[01])?-\d+-\d+")
_ENV = "LINKAUDIT_CACHE_DIR"


@dataclass(frozen=True)
class Key:
    """What one cache entry is looked up by.

    Attributes:
        name: the entry's file name (hex SHA-256 of everything that identifies the content).
        stamp: the change times of the file (or container) the entry describes, ns: trusted
            only when the entry was written more than ``GRANULARITY_NS`` after the later one.
        content: computes the content hash when the stamp cannot be trusted (racy).
    """

    name: str
    stamp: int
    content: Callable[[], str] = field(compare=False, repr=False)


def _digest(*parts: object) -> str:
    return hashlib.sha256(repr((READER_VERSION, *parts)).encode()).hexdigest()


def fd_hash(fd: int, size: int) -> str:
    """SHA-256 (hex) of the first ``size`` bytes of the open file ``fd``, read with ``pread``."""
    h = hashlib.sha256()
    offset = 0
    while offset < size:
        chunk = os.pread(fd, min(1 << 22, size - offset), offset)
        if not chunk:
            break
        h.update(chunk)
        offset += len(chunk)
    return h.hexdigest()


def path_hash(path: str) -> str:
    """SHA-256 (hex) of the file at ``path`` (a racy container); ``""`` when it cannot be read."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return ""
    try:
        return fd_hash(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _fast(st: os.stat_result) -> tuple[int, ...]:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def file_key(fd: int, st: os.stat_result, what: str) -> Key:
    """The key of the open regular file ``fd`` (``st``: its ``fstat``); ``what``: how it is read
    (``read_path``'s options), part of the key."""
    return Key(_digest("file", _fast(st), what), max(st.st_mtime_ns, st.st_ctime_ns), lambda: fd_hash(fd, st.st_size))


def member_key(container: str, st: os.stat_result, member: str, crc: int, packed: int, size: int, what: str) -> Key:
    """The key of the member ``member`` of the package file ``container`` (``st``: its stat), by
    the central directory's CRC-32 and sizes."""
    return _contained(container, st, "member", member, crc, packed, size, what)


def tar_member_key(
    container: str, st: os.stat_result, inner: str, member: str, size: int, mtime: float, offset: int, what: str
) -> Key:
    """The key of the member ``member`` of a tar stream in the package file ``container`` (``st``:
    its stat; ``inner``: the tar's name inside it, a ``.conda``'s ``pkg-*.tar.zst``, or ``""``),
    by the member's size, mtime and header offset in the uncompressed stream (tar has no CRC-32:
    any change of the package's bytes changes its fast key, or its content hash when racy)."""
    return _contained(container, st, "tar-member", inner, member, size, mtime, offset, what)


def narrowed(key: Key, *facts: object) -> Key:
    """``key`` of an entry narrowed by ``facts`` (how its file is read: the name it is read
    under, soft dependencies or not), its stamp and content hash the same."""
    return dataclasses.replace(key, name=_digest(key.name, *facts))


def _contained(container: str, st: os.stat_result, *facts: object) -> Key:
    """A key made of the container's fast key and ``facts``; racy, it is compared by the
    container's content hash."""
    fast = _fast(st)
    return Key(
        _digest(*facts[:1], fast, *facts[1:]),
        max(st.st_mtime_ns, st.st_ctime_ns),
        lambda: _container_hash(container, fast),
    )


@functools.lru_cache(maxsize=64)
def _container_hash(container: str, fast: tuple[int, ...]) -> str:
    """``path_hash`` of a racy container, once per (path, stat): each of its members asks."""
    return path_hash(container)


def member_variant(name: str, soft_dependencies: bool) -> str:
    """The entry name of a member's binaries read with or without soft dependencies."""
    return f"{name}-{int(soft_dependencies)}"


@dataclass(frozen=True, slots=True)
class CacheInfo:
    """What ``linkaudit cache info`` shows.

    Attributes:
        root: the cache's directory.
        entries: entries held.
        size: their bytes on disk.
        limit: ``MAX_BYTES``.
    """

    root: str
    entries: int
    size: int
    limit: int


class Cache:
    """The entries under one directory (created on first write).

    Args:
        root: the directory (``default_root()``).
        max_bytes: the LRU bound, bytes.
    """

    def __init__(self, root: str, max_bytes: int = MAX_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self.hits = 0
        self.misses = 0
        #: Entries written, and the scans of the whole cache (``entries``) made.
        self.puts = 0
        self.scans = 0
        #: Bytes held as last counted plus those written since (``None``: not counted yet).
        self._held: int | None = None
        self._lock = threading.Lock()

    def _path(self, name: str) -> str:
        return os.path.join(self.root, name[:2], name + ".bin")

    def holds(self, key: Key) -> bool:
        """Whether an entry file is there for ``key`` (a regular file, not followed through a
        symlink): what deciding where to read needs, not a promise — ``get`` still validates it."""
        path = self._path(key.name)
        folder = _open_folder(os.path.dirname(path))
        if folder is None:
            return False
        try:
            return stat.S_ISREG(os.lstat(os.path.basename(path), dir_fd=folder).st_mode)
        except OSError:
            return False
        finally:
            os.close(folder)

    def get(self, key: Key, path: str = "") -> tuple[Binary, ...] | None:
        """The binaries stored under ``key``, their ``path`` set to ``path`` (an entry stores none), or
        ``None`` (absent, corrupt, foreign, stale, racy and changed).  Never raises."""
        found = self._lookup(key, path)
        return found.binaries if found is not None else None

    def get_heads(self, key: Key) -> Heads | None:
        """The first bytes of a package's members stored under ``key`` (``put_heads``), or ``None``."""
        found = self._lookup(key)
        return found.heads if found is not None else None

    def _lookup(self, key: Key, path: str = "") -> Entry | None:
        """The valid entry of ``key``, its stamp trusted or its content compared (then refreshed)."""
        file = self._path(key.name)
        raw = _load(file)
        found = unpack(raw, key.name, path) if raw is not None else None
        written = found.written if found is not None else 0
        if found is not None and key.stamp + GRANULARITY_NS >= found.written:
            content = key.content()
            if not content or content != found.content:
                found = None
            else:  # trusted by stamp from now on (an entry that cannot be packed again stays as it is)
                with contextlib.suppress(MemoryError, ValueError, OverflowError):
                    now = time.time_ns()
                    if self._write(key.name, pack(key.name, now, content, found.binaries, found.heads)):
                        written = now
        with self._lock:
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
        _name_contents(key.name, written, found.binaries)
        _touch(file)  # most recently used
        return found

    def put(self, key: Key, binaries: tuple[Binary, ...]) -> None:
        """Store ``binaries`` under ``key`` (atomically); failures to write are ignored."""
        self._store(key, binaries, None)

    def put_heads(self, key: Key, heads: Heads) -> None:
        """Store the first bytes of a package's members (name -> (CRC-32, size, bytes)) under ``key``."""
        self._store(key, None, heads)

    def _store(self, key: Key, binaries: tuple[Binary, ...] | None, heads: Heads | None) -> None:
        """Write the entry; a file gone or changed since it was read (its content hash cannot be
        taken) or an entry too large to encode leaves the cache as it was."""
        now = time.time_ns()
        try:
            content = key.content() if key.stamp + GRANULARITY_NS >= now else None
            written = self._write(key.name, pack(key.name, now, content, binaries, heads))
        except (OSError, MemoryError, ValueError):
            return
        if written:
            _name_contents(key.name, now, binaries)
        self._account(written)

    def get_blob(self, name: str) -> bytes | None:
        """The bytes of the entry ``name`` (hex SHA-256 of what it answers) as ``put_blob`` stored
        them, or ``None``: the caller validates them like any input (``loader.bindcache``)."""
        file = self._path(name)
        data = _load(file)
        with self._lock:
            if data is None:
                self.misses += 1
                return None
            self.hits += 1
        _touch(file)  # most recently used
        return data

    def put_blob(self, name: str, data: bytes) -> None:
        """Store ``data`` as the entry ``name`` (atomically, evicted like the others); failures to
        write are ignored."""
        self._account(self._write(name, data))

    def _account(self, written: int) -> None:
        """Count an entry of ``written`` bytes just written; evict when the bound is passed."""
        with self._lock:
            self.puts += 1
            due = self._held is None or self._held + written > self.max_bytes
            if not due and self._held is not None:
                self._held += written
        if due:
            self.evict(self.max_bytes - self.max_bytes // 8)

    def _write(self, name: str, data: bytes) -> int:
        """Write one entry atomically; the bytes written (0: it could not be written, or it is
        larger than ``MAX_ENTRY_BYTES``: an entry never read back is never written)."""
        if len(data) > MAX_ENTRY_BYTES:
            return 0
        path = self._path(name)
        tmp = f".tmp-{name}-{os.getpid()}-{threading.get_ident()}"
        try:
            os.makedirs(self.root, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(os.path.dirname(path), 0o755)
        except OSError:
            return 0
        folder = _open_folder(os.path.dirname(path))
        if folder is None:
            return 0  # a symlink or a file planted where the folder goes: never written through
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644, dir_fd=folder)
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(data)
                # atomic: a reader sees the old entry or the new one, never half
                os.replace(tmp, os.path.basename(path), src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                os.unlink(tmp, dir_fd=folder)
                raise
        except OSError:
            return 0
        finally:
            os.close(folder)
        return len(data)

    def _own_files(self) -> Iterator[tuple[str, os.stat_result, bool]]:
        """``(path, lstat, is_entry)`` of every file this cache writes and nothing else: an entry
        ``XX/<64 hex>.bin`` or a leftover ``XX/.tmp-<64 hex>-PID-THREAD`` in a two-hex-digit folder,
        each a regular file (no symlink followed, the root's own included): ``clear`` and eviction
        never remove a file the cache did not make, whatever was planted in its folder."""
        try:
            if not stat.S_ISDIR(os.lstat(self.root).st_mode):
                return
            folders = sorted(os.listdir(self.root))
        except OSError:
            return
        for folder in folders:
            where = os.path.join(self.root, folder)
            try:
                if not _FOLDER.fullmatch(folder) or not stat.S_ISDIR(os.lstat(where).st_mode):
                    continue
                names = sorted(os.listdir(where))
            except OSError:
                continue
            for name in names:
                entry, tmp = _ENTRY.fullmatch(name), _TMP.fullmatch(name)
                if (entry is None or not name.startswith(folder)) and tmp is None:
                    continue
                path = os.path.join(where, name)
                try:
                    st = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode):
                    yield path, st, entry is not None

    def entries(self) -> list[tuple[float, int, str]]:
        """``(mtime, size, path)`` of every entry, oldest first: a scan of the whole cache."""
        with self._lock:
            self.scans += 1
        return sorted((st.st_mtime, st.st_size, path) for path, st, is_entry in self._own_files() if is_entry)

    def evict(self, down_to: int | None = None) -> int:
        """Once the cache holds more than ``max_bytes``, remove the least recently used entries
        until it holds at most ``down_to`` (default ``max_bytes``); how many.

        Writes call it with an eighth of ``max_bytes`` to spare, and only when the bytes counted
        at the last scan plus those written since pass ``max_bytes``: a scan of the whole cache
        per 64 writes made a cold run over N files O(N^2) (625 scans of up to 40,000 entries).
        """
        entries = self.entries()
        total = sum(size for _t, size, _p in entries)
        removed = 0
        target = self.max_bytes if down_to is None or total <= self.max_bytes else down_to
        for _t, size, path in entries:
            if total <= target:
                break
            try:
                os.unlink(path)
            except OSError:
                continue
            total -= size
            removed += 1
        with self._lock:
            self._held = total
        return removed

    def info(self) -> CacheInfo:
        """How many entries, how many bytes."""
        entries = self.entries()
        return CacheInfo(self.root, len(entries), sum(size for _t, size, _p in entries), self.max_bytes)

    def clear(self) -> int:
        """Remove every entry (and leftover temporary files); how many entries."""
        count = 0
        for path, _st, is_entry in list(self._own_files()):
            try:
                os.unlink(path)
            except OSError:
                continue
            count += is_entry
        with self._lock:
            self._held = None
        return count


def _name_contents(name: str, written: int, binaries: tuple[Binary, ...] | None) -> None:
    """Give each of an entry's records its identity (``SymbolTable.set_identity``): the entry's name,
    the time it was written (an entry file is never changed in place, only replaced) and the
    record's position in it."""
    for k, binary in enumerate(binaries or ()):
        binary.symbols.set_identity(f"{name}.{written}.{k}")


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _open_folder(folder: str) -> int | None:
    """A descriptor of the entry folder ``folder`` (``ROOT/XX``), or ``None`` when it is absent or
    not a real directory: a symlink planted there (a cache restored from an untrusted run) is never
    followed, so no entry is read from or written into another directory, where ``clear`` and
    eviction, which skip symlinked folders, would never find it."""
    try:
        return os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW)
    except OSError:
        return None


def _touch(path: str) -> None:
    """Mark the entry file ``path`` most recently used (its mtime), through its folder, no symlink
    followed; a failure is ignored (the entry is only evicted sooner)."""
    folder = _open_folder(os.path.dirname(path))
    if folder is None:
        return
    try:
        with contextlib.suppress(OSError):
            os.utime(os.path.basename(path), dir_fd=folder, follow_symlinks=False)
    finally:
        os.close(folder)


def _load(path: str) -> bytes | None:
    """The bytes of the entry file ``path``, or ``None`` (absent, not a regular file, too large,
    or more than the memory at hand: an entry is never worth failing the run).
    Opened without blocking (a FIFO planted in the cache is never waited on) and read to its size,
    never a ``MAX_ENTRY_BYTES`` buffer up front."""
    folder = _open_folder(os.path.dirname(path))
    if folder is None:
        return None
    try:
        fd = os.open(os.path.basename(path), os.O_RDONLY | os.O_NONBLOCK | _NOFOLLOW, dir_fd=folder)
    except OSError:
        return None
    finally:
        os.close(folder)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            data = f.read(st.st_size + 1)
        if len(data) > MAX_ENTRY_BYTES:
            return None
    except (OSError, MemoryError):
        return None
    finally:
        if fd >= 0:
            os.close(fd)
    return data


def default_root(environ: dict[str, str] | None = None) -> str:
    """``$LINKAUDIT_CACHE_DIR``, else the user cache directory's ``linkaudit``; with the reader version."""
    env = os.environ if environ is None else environ
    base = env.get(_ENV) or _xdg_cache_dir(env)
    if not base:
        import platformdirs

        base = platformdirs.user_cache_dir("linkaudit", appauthor=False)
    return os.path.join(base, f"binaries-v{READER_VERSION}")


def _xdg_cache_dir(env: Mapping[str, str]) -> str | None:
    """``platformdirs.user_cache_dir("linkaudit")`` on Linux when the answer is plain: an absolute
    ``$XDG_CACHE_HOME``, else an absolute ``$HOME``'s ``.cache`` (``platformdirs.unix``, XDG Base
    Directory); ``None`` for anything else (other systems, Android, no usable variable), which
    ``platformdirs`` answers.  Importing ``platformdirs`` costs ``pathlib``, ``tempfile``,
    ``shutil`` and the compressors: about 10 ms of every run (``tests/test_startup.py``)."""
    if sys.platform != "linux" or hasattr(sys, "getandroidapilevel") or "ANDROID_DATA" in env:
        return None
    xdg = env.get("XDG_CACHE_HOME", "")
    if posixpath.isabs(xdg):
        return posixpath.join(xdg, "linkaudit")
    home = env.get("HOME")
    if home is None or not posixpath.isabs(home):
        return None
    return posixpath.join(home.rstrip("/") + "/.cache", "linkaudit")


def unusable(root: str) -> str | None:
    """Why no cache can live at the directory ``root`` — ``"PATH: the OS's reason"`` (a regular
    file there or above it, a directory not writable, a file system refusing) — or ``None``.
    Found by doing what a write does: the directory made (with its parents), then a file created
    in it and removed; raises nothing."""
    try:
        if os.path.lexists(root) and not os.path.isdir(root):
            return f"{root}: {os.strerror(errno.ENOTDIR)}"
        os.makedirs(root, exist_ok=True)
        probe = os.path.join(root, f".probe-{os.getpid()}-{threading.get_ident()}")
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644))
        os.unlink(probe)
    except OSError as exc:
        return f"{exc.filename or root}: {exc.strerror or exc}"
    except ValueError as exc:  # a NUL in the variable
        return f"{root!r}: {exc}"
    return None


_ACTIVE: Cache | None = None
#: A cache turned on but not yet looked at: its directory and what to tell when it is unusable.
_PENDING: tuple[str, Callable[[str], None]] | None = None
_PENDING_LOCK = threading.Lock()


def configure(enabled: bool, root: str | None = None, warn: Callable[[str], None] | None = None) -> Cache | None:
    """Turn the cache on (at ``root``, by default ``default_root()``) or off; the active cache.

    With ``warn``, the directory is checked (``unusable``) when the cache is first used, not now
    (a command's own ``--no-cache`` is read after this): an unusable one is told to ``warn``
    (``"PATH: reason"``), once, and the run goes uncached; ``None`` is returned until then."""
    global _ACTIVE, _PENDING
    with _PENDING_LOCK:
        _PENDING = None
        if enabled and warn is not None:
            _ACTIVE, _PENDING = None, (root or default_root(), warn)
        else:
            _ACTIVE = Cache(root or default_root()) if enabled else None
        return _ACTIVE


def active() -> Cache | None:
    """The cache reads go through, or ``None`` (off, or its directory unusable)."""
    global _ACTIVE, _PENDING
    if _PENDING is not None:
        with _PENDING_LOCK:
            if _PENDING is not None:
                (root, warn), _PENDING = _PENDING, None
                reason = unusable(root)
                if reason is None:
                    _ACTIVE = Cache(root)
                else:
                    warn(reason)
    return _ACTIVE
