"""A read-only file-system view for the loader emulation: the host, or a sysroot taken as ``/``.

Paths handed in and out are *target* paths (absolute, as the loader would see
them).  Under a sysroot, absolute symlink targets are resolved inside the root,
as they would be on the target, and ``..`` never climbs above it.  Binaries are
parsed once per real file and cached for the whole run.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat

from ..errors import InputError
from ..formats import read_path
from ..formats.hostfile import read_regular_file
from ..formats.ranges import source_of
from ..model import Binary

#: As the kernel's limit on symlinks followed in one lookup (``ELOOP``).
MAX_SYMLINKS = 40


def identity(st: os.stat_result) -> str:
    """Which file ``st`` is while a view lasts: its device and inode, and its size, mtime and ctime
    (ns). A build tree written while it is audited frees inodes and reuses them for other files
    (``unlink`` then ``open(O_CREAT)``): keyed by inode alone, liba.so was given libb.so's
    symbols; a new file in a reused inode has another ctime, almost always another size."""
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}"


class FileSystemView:
    """The target's file system, read-only.

    Args:
        root: host directory that is ``/`` on the target (``"/"`` for the host itself).
    """

    __slots__ = ("_binaries", "_failures", "_stat_cache", "root")

    def __init__(self, root: str = "/") -> None:
        self.root = os.path.abspath(root)
        self._binaries: dict[str, Binary] = {}
        self._failures: dict[str, InputError] = {}
        self._stat_cache: dict[str, os.stat_result | None] = {}

    @property
    def is_host(self) -> bool:
        """True when the view is the host's own ``/``."""
        return self.root == "/"

    def host_path(self, path: str) -> str:
        """The host path of target ``path`` with symlinks resolved inside the root.

        On the host this is ``path`` itself (the kernel resolves symlinks).

        Raises:
            InputError: a symlink loop.
        """
        if self.is_host:
            return path
        return self._resolve(path)

    def _resolve(self, path: str) -> str:
        # Components in order; ".." is applied after the symlinks before it are followed,
        # as the kernel does (never collapsed as text first).
        parts = [p for p in path.split("/") if p]
        resolved: list[str] = []
        hops = 0
        while parts:
            part = parts.pop(0)
            if part == ".":
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = os.path.join(self.root, *resolved, part)
            try:
                is_link = stat.S_ISLNK(os.lstat(candidate).st_mode)
            except OSError:
                resolved.append(part)
                resolved.extend(p for p in parts if p not in (".",))
                break
            if not is_link:
                resolved.append(part)
                continue
            hops += 1
            if hops > MAX_SYMLINKS:
                raise InputError(path, "symlink loop (too many levels of symbolic links) inside the sysroot")
            target = os.readlink(candidate)
            if target.startswith("/"):
                resolved = []
            parts = [p for p in target.split("/") if p] + parts
        return os.path.join(self.root, *resolved)

    def real_path(self, path: str) -> str:
        """Target ``path`` with every symlink resolved (absolute), as ``/proc/self/exe`` gives it.

        Raises:
            InputError: a symlink loop inside the sysroot.
        """
        if self.is_host:
            return os.path.realpath(path)
        host = self._resolve(os.path.abspath(path) if not path.startswith("/") else path)
        return "/" + os.path.relpath(host, self.root) if host != self.root else "/"

    def stat(self, path: str) -> os.stat_result | None:
        """``os.stat`` of target ``path`` (following symlinks), or ``None`` when it does not exist."""
        cached = self._stat_cache.get(path, False)
        if cached is not False:
            return cached  # type: ignore[return-value]
        try:
            result: os.stat_result | None = os.stat(self.host_path(path))
        except (OSError, InputError):
            result = None
        self._stat_cache[path] = result
        return result

    def is_file(self, path: str) -> bool:
        """True when target ``path`` exists and is a regular file (after symlinks)."""
        st = self.stat(path)
        return st is not None and stat.S_ISREG(st.st_mode)

    def is_dir(self, path: str) -> bool:
        """True when target ``path`` exists and is a directory (after symlinks)."""
        st = self.stat(path)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def remember(self, binary: Binary) -> None:
        """Seed the cache with a binary already parsed from the host path ``binary.path``, when the
        file there is still of the size it was read at (a package member's placeholder: always).
        A file replaced since it was read (a build tree written while it is audited) is read
        again when the loader needs it, never taken for the one read before."""
        try:
            st = os.stat(binary.path) if self.is_host else None
        except OSError:
            return
        if st is not None and (st.st_size == binary.file_size or source_of(st) is not None):
            self._binaries.setdefault(identity(st), binary)

    def read_binary(self, path: str) -> Binary:
        """Parse the binary at target ``path`` (cached per real file; the record carries ``path``).

        Raises:
            InputError: missing, unreadable or malformed; the error names ``path``.
        """
        host = self.host_path(path)
        st = self.stat(path)
        if st is None:
            raise InputError(path, os.strerror(errno.ENOENT).lower())
        key = identity(st)
        failure = self._failures.get(key)
        if failure is not None:
            raise InputError(path, failure.reason, failure.offset)
        binary = self._binaries.get(key)
        if binary is None:
            try:
                binary = read_path(host, soft_dependencies=False)[0]
            except InputError as exc:
                self._failures[key] = exc
                raise InputError(path, exc.reason, exc.offset) from exc
            self._binaries[key] = binary
        if binary.path != path:
            binary = dataclasses.replace(binary, path=path)
        return binary

    def read_bytes(self, path: str, limit: int = 1 << 26) -> bytes | None:
        """Up to ``limit`` bytes of target ``path``, or ``None`` if it is not a readable regular file.

        Opened non-blocking and checked to be a regular file before reading: a FIFO or
        a device named by a hostile input is never waited on or read from.
        """
        try:
            return read_regular_file(self.host_path(path), limit)
        except (OSError, InputError):
            return None
