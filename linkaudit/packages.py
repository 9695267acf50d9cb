"""Packages as inputs: wheels (``.whl``), conda packages (``.conda``, ``.tar.bz2``) and plain tarballs.

A package given on the command line is recognised by its magic bytes (zip ``PK\\x03\\x04``, gzip,
bzip2, xz, zstd, or a POSIX tar header) and *staged*: only the members that are binaries (their
own magic bytes say ELF, Mach-O, PE or ``ar``) and the symlinks between members are written,
streamed, into a private temporary directory laid out as the package installs — a wheel's files
at the root of a ``site-packages``, a conda package's at the root of its prefix, a wheel's
``NAME.data/purelib`` and ``platlib`` merged into that root.  Python sources, headers and data are
never written.  The audit (and the loader emulation, so that ``$ORIGIN`` resolves against the
member layout) then runs on the staged tree, and every path is reported as
``PACKAGE!member`` (``dist/torch-2.14.1-....whl!torch/lib/libc10.so``).

Several wheels given together are staged into one ``site-packages`` — the virtual site they make
once installed side by side, so that torch's ``$ORIGIN/../../nvidia/cu13/lib`` finds the files of
the ``nvidia-*`` wheels given with it — and several conda packages into one prefix.

Hostile archives are refused member by member, each refusal an ``InputError`` naming
``PACKAGE!member`` and the reason, while every other member is still audited:

* names that are absolute, carry a drive letter, a ``..`` component, a NUL or a backslash-separated
  ``..`` (path traversal);
* symlinks whose target leaves the package (checked on the name, then again on the real path of
  what was created), links to a missing member, device files;
* decompression bombs: a member larger than ``MAX_MEMBER_BYTES``, a zip member expanding more than
  ``MAX_RATIO`` times its compressed size, more than ``MAX_TOTAL_BYTES`` written in all, or more
  than ``MAX_MEMBERS`` members — sizes counted on the bytes actually decompressed, never taken
  from headers;
* corrupt archives (a bad CRC, a truncated stream) end with an error for the member or the
  archive.

Sources: the wheel format (PEP 427, binary distribution format: ``.data`` directories), conda's
package format (``.conda``: an uncompressed zip of ``info-*.tar.zst`` and ``pkg-*.tar.zst``;
``.tar.bz2``: one bzip2 tarball), POSIX ``ustar``.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import os
import posixpath
import re
import shutil
import stat
import tarfile
import tempfile
import threading
import zipfile
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from .errors import InputError
from .formats import SNIFF_BYTES, sniff

#: Largest member written, bytes (libtorch_cuda.so is about 1.6 GB).
MAX_MEMBER_BYTES = 8 << 30
#: Largest total written for one audit, bytes.
MAX_TOTAL_BYTES = 64 << 30
#: Largest expansion of one zip member over its compressed size, for members above 1 MiB
#: (ELF libraries compress 2-10x; a zip bomb expands 1000x and more).
MAX_RATIO = 200
#: Smallest per-package budget, bytes (a tiny package of a few small libraries is never a bomb).
PACKAGE_FLOOR = 64 << 20
#: Most members one package may list.
MAX_MEMBERS = 1_000_000
#: Threads that decompress a zip's binary members at once (bounded by the CPUs).
WORKERS = min(4, os.cpu_count() or 1)

_CHUNK = 1 << 20
#: What a corrupt member raises while it is decompressed (bz2 raises OSError).
_CORRUPT = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, OSError, EOFError, ValueError, RuntimeError)
_ZIP = b"PK\x03\x04"
_COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")


def package_kind(path: str) -> str | None:
    """``"zip"`` (a wheel or a ``.conda``), ``"tarball"`` (plain or compressed: a conda
    ``.tar.bz2`` among them) or ``None``: what the file at ``path`` is, by its first bytes — or,
    for a file named ``*.whl`` / ``*.conda``, by the zip end-of-archive record that installers read.

    Never raises: an unreadable file is ``None`` and is reported by the ordinary reader.
    """
    try:
        # Non-blocking and checked to be a regular file: a FIFO named x.whl is never waited on.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.read(fd, 512)
    except OSError:
        return None
    finally:
        os.close(fd)
    if head.startswith(_ZIP):
        return "zip"
    if path.endswith((".whl", ".conda")) and zipfile.is_zipfile(path):
        # Named as a package and a zip by its end-of-archive record: a zip behind a prefix (an ELF
        # stub, a self-extractor) is what pip and conda read, whatever the first bytes say.
        return "zip"
    if head.startswith(_COMPRESSED) or (len(head) >= 262 and head[257:262] == b"ustar"):
        return "tarball"
    return None


def _zip_kind(zf: zipfile.ZipFile) -> str:
    """``"conda"`` for a zip holding ``pkg-*.tar.zst`` (conda's v2 format), else ``"wheel"``."""
    return "conda" if any(n.startswith("pkg-") and n.endswith(".tar.zst") for n in zf.namelist()) else "wheel"


def _safe_name(name: str) -> str | None:
    """The member name as a relative POSIX path, or ``None`` when it may not be written.

    Refused: empty, absolute (``/x``, ``C:/x``, ``\\\\x``), a ``..`` component (also with
    backslashes), a NUL.
    """
    if not name or "\0" in name:
        return None
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[/\\]", name):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." or ".." in p.split("\\") for p in parts):
        return None
    return "/".join(parts)


@dataclass
class _Site:
    """One staging root: a ``site-packages`` (wheels), a prefix (conda) or a tarball's own root."""

    host: str
    name: str = ""  # how a path no package installs is labelled: "site-packages", "prefix", the tarball
    labels: list[str] = field(default_factory=list)
    owner: dict[str, str] = field(default_factory=dict)  # member path or its directory -> package label
    dirs: dict[str, list[str]] = field(default_factory=dict)  # every directory packages install into -> them
    _known: list[str] | None = None

    def known_paths(self) -> list[str]:
        """Every path a package installs here (files and their directories), longest first."""
        if self._known is None or len(self._known) != len(self.owner):
            self._known = sorted(self.owner, key=len, reverse=True)
        return self._known

    def claim_dirs(self, rel: str | None, label: str) -> None:
        """Record that ``label`` installs into the directories above the member ``rel``."""
        parent = posixpath.dirname(rel) if rel else ""
        while parent:
            owners = self.dirs.setdefault(parent, [])
            if label in owners:
                break  # its parents are recorded already
            owners.append(label)
            parent = posixpath.dirname(parent)


@dataclass
class Staged:
    """The inputs after staging.

    Attributes:
        paths: the inputs to audit: each package replaced by its staging root (once per root),
            every other path unchanged, in the order given.
        errors: members and packages refused or unreadable, each naming ``PACKAGE!member``.
        packages: the packages staged, as given.
    """

    paths: list[str]
    errors: list[InputError]
    packages: list[str]
    _sites: list[_Site] = field(default_factory=list)
    _pattern: re.Pattern[str] | None = None

    def member_path(self, entry: str) -> str | None:
        """The staged host path of ``entry`` when it names a package member — ``PACKAGE!member``
        with a package given, or a member path as installed (``torch/_C.cpython-311-x86_64-linux-gnu.so``)
        that some package staged — else ``None``."""
        package, sep, member = entry.partition("!")
        for site in self._sites:
            if sep and package not in site.labels:
                continue
            rel = posixpath.normpath(member if sep else entry)
            if rel.startswith(("/", "../")) or rel == "..":
                continue
            if rel in site.owner and (not sep or site.owner[rel] == package):
                return os.path.join(site.host, rel)
        return None

    def holds_packages(self, directory: str) -> bool:
        """True when a package staged was found inside the directory given ``directory``."""
        prefix = directory.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in self.packages)

    def package_of(self, path: str) -> str | None:
        """The package (as given) a staged host ``path`` was written from, or ``None``."""
        for site in self._sites:
            if path.startswith(site.host + "/"):
                return _owner(site, path[len(site.host) + 1 :])
        return None

    def site_of(self, path: str) -> tuple[str, str] | None:
        """``(staging root, path relative to it)`` of a host ``path`` inside a staging root
        (``"."`` for the root itself), or ``None`` when it is outside every one."""
        normal = os.path.normpath(path)
        for site in self._sites:
            if normal == site.host or normal.startswith(site.host + "/"):
                return site.host, os.path.relpath(normal, site.host)
        return None

    def directory_owners(self, path: str) -> list[str]:
        """The packages that install files into the host directory ``path`` (or below it), in input order."""
        where = self.site_of(path)
        if where is None:
            return []
        site = next(s for s in self._sites if s.host == where[0])
        return list(site.dirs.get(where[1], ()))

    def label(self, text: str, quote: Callable[[str], str] | None = None) -> str:
        """``text`` with every staged host path written ``PACKAGE!member`` (the staging root
        alone as ``PACKAGE``); text without one is returned unchanged.  ``quote`` escapes each
        replacement for the document it goes into (a rendered JSON or text report)."""
        if not self._sites or not any(s.host in text for s in self._sites):
            return text
        if self._pattern is None:
            roots = "|".join(re.escape(s.host) for s in sorted(self._sites, key=lambda s: -len(s.host)))
            self._pattern = re.compile(rf"({roots})(/[^\s'\"(),;:\[\]{{}}\\]*)?")
        by_host = {s.host: s for s in self._sites}
        out: list[str] = []
        done = 0
        for match in self._pattern.finditer(text):
            if match.start() < done:
                continue
            site = by_host[match.group(1)]
            end = match.end()
            # A member name may hold characters the pattern stops at (a space, a quote, brackets):
            # the longest path the package really installs wins over the pattern's guess.
            at = match.end(1)
            for known in site.known_paths():
                stop = at + len(known) + 1
                if stop <= end:
                    break  # longest first: the rest are no longer than the pattern's match
                if text.startswith("/" + known, at) and (stop == len(text) or not text[stop].isalnum()):
                    end = stop
                    break
            rel = text[match.end(1) : end].strip("/")
            if rel:
                rel = posixpath.normpath(rel)  # torch/lib/../../nvidia/x -> nvidia/x, and its owner
                rel = "" if rel == "." else rel
            owner = _owner(site, rel)
            label = f"{owner}!{rel}" if rel else owner
            out.append(text[done : match.start()])
            out.append(quote(label) if quote is not None else label)
            done = end
        out.append(text[done:])
        return "".join(out)


def _owner(site: _Site, rel: str) -> str:
    """The package a staged path belongs to: the owner of the path or of its nearest directory;
    a path no package installs (a search-path attempt into nvidia/cu13/lib when no nvidia wheel
    was given) is labelled with the site itself (``site-packages``, ``prefix``)."""
    probe = rel
    while probe:
        owner = site.owner.get(probe)
        if owner is not None:
            return owner
        probe = posixpath.dirname(probe)
    return site.name or "+".join(site.labels)


class Progress(Protocol):
    """Told how staging goes, for a progress bar: bytes of binary members expected, then written."""

    def expect(self, nbytes: int) -> None:
        """``nbytes`` more bytes are about to be written (a zip's sizes as its directory states them)."""

    def advance(self, nbytes: int) -> None:
        """``nbytes`` more bytes were written."""


class _Budget:
    """Bytes written so far for one audit, against ``MAX_TOTAL_BYTES`` (members are written by
    several threads at once); reported to ``progress`` as they are written."""

    def __init__(self, progress: Progress | None = None) -> None:
        self.total = 0
        self.progress = progress
        self._lock = threading.Lock()

    def add(self, n: int) -> int:
        """Count ``n`` more bytes; the new total."""
        with self._lock:
            self.total += n
            if self.progress is not None:
                self.progress.advance(n)
            return self.total


class _Refused(Exception):
    """A member that may not be written; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _PackageBudget:
    """Bytes written for one package, against ``MAX_RATIO`` times its size on disk (at least
    ``PACKAGE_FLOOR``): overlapping zip members — many directory entries sharing one compressed
    stream — each pass the per-member ratio, but not this."""

    def __init__(self, packed: int) -> None:
        self.limit = max(MAX_RATIO * packed, PACKAGE_FLOOR)
        self.total = 0
        self._lock = threading.Lock()

    def add(self, n: int) -> bool:
        """Count ``n`` more bytes; False once the package is over its limit."""
        with self._lock:
            self.total += n
            return self.total <= self.limit


def _write(
    src: IO[bytes],
    head: bytes,
    dest: str,
    budget: _Budget,
    limit_ratio: int | None,
    package: _PackageBudget | None = None,
) -> None:
    """Stream ``head`` + the rest of ``src`` to the new file ``dest`` (never through a symlink),
    counting the bytes against the member, package and total caps; ``limit_ratio`` is the largest
    size allowed (``None``: no ratio check)."""
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    written = 0
    try:
        with os.fdopen(fd, "wb") as out:
            chunk = head or src.read(_CHUNK)
            while chunk:
                written += len(chunk)
                total = budget.add(len(chunk))
                if written > MAX_MEMBER_BYTES:
                    raise _Refused(f"larger than {MAX_MEMBER_BYTES} bytes when decompressed (a decompression bomb?)")
                if limit_ratio is not None and written > max(limit_ratio, 1 << 20):
                    raise _Refused(f"expands more than {MAX_RATIO} times its compressed size (a decompression bomb?)")
                if total > MAX_TOTAL_BYTES:
                    raise _Refused(f"the packages expand to more than {MAX_TOTAL_BYTES} bytes in all")
                if package is not None and not package.add(len(chunk)):
                    raise _Refused(
                        f"the package expands to more than {MAX_RATIO} times its size (a decompression bomb?)"
                    )
                out.write(chunk)
                chunk = src.read(_CHUNK)
    except BaseException:
        os.unlink(dest)
        raise


def _disown(site: _Site, rel: str) -> None:
    """Forget the member ``rel`` (refused after it was planned); its directories stay owned."""
    site.owner.pop(rel, None)


def _mkdirs(root: str, rel_dir: str) -> str:
    """Create ``rel_dir`` under ``root`` as real directories (refusing any component that is not one)."""
    path = root
    for part in [p for p in rel_dir.split("/") if p]:
        path = os.path.join(path, part)
        try:
            os.mkdir(path, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                raise _Refused(f"{rel_dir}: a parent directory is a file or a symlink in the package") from None
    return path


def _install_path(kind: str, name: str) -> str | None:
    """Where a member lands once installed: a wheel's ``X.data/purelib|platlib/...`` at the root,
    its other ``.data`` schemes (scripts, headers, data) not at all; everything else as named."""
    if kind == "wheel":
        parts = name.split("/")
        if len(parts) > 2 and parts[0].endswith(".data"):
            return "/".join(parts[2:]) if parts[1] in ("purelib", "platlib") else None
    return name


class _Stager:
    def __init__(self, budget: _Budget) -> None:
        self.budget = budget
        self.errors: list[InputError] = []

    def _refuse(self, label: str, member: str, reason: str) -> None:
        self.errors.append(InputError(f"{label}!{member}", reason))

    def _plan(self, site: _Site, label: str, kind: str, name: str, head: bytes) -> tuple[str, str] | None:
        """``(host destination, installed path)`` of a member whose first bytes are ``head``, with
        its directories made; ``None`` when it is not a binary, not installed, or refused."""
        if sniff(head) is None:
            return None  # not a binary: never written
        if head.startswith(b"!<thin>\n"):
            self._refuse(label, name, "a thin archive: its members are files outside the package, never read from it")
            return None
        rel = _install_path(kind, name)
        if rel is None:
            return None
        if rel in site.owner and site.owner[rel] != label:
            self._refuse(label, name, f"also installed by {site.owner[rel]}: two packages write {rel}")
            return None
        try:
            directory = _mkdirs(site.host, posixpath.dirname(rel))
        except _Refused as exc:
            self._refuse(label, name, exc.reason)
            return None
        except OSError as exc:
            self._refuse(label, name, f"cannot be written here: {exc.strerror or exc}")
            return None
        dest = os.path.join(directory, posixpath.basename(rel))
        if os.path.lexists(dest):
            return None  # a second copy of one member name: the first one stays, as unzip keeps it
        self._own(site, rel, label)  # claimed now: a later member of the same name is a duplicate
        return dest, rel

    def _file(self, site: _Site, label: str, kind: str, name: str, src: IO[bytes], ratio: int | None) -> bool:
        """Plan and write one member read from the stream ``src`` (tar members, in order); True
        when it was written."""
        head = src.read(SNIFF_BYTES)
        planned = self._plan(site, label, kind, name, head)
        if planned is None:
            return False
        try:
            _write(src, head, planned[0], self.budget, ratio)
        except _Refused as exc:
            self._refuse(label, name, exc.reason)
        except OSError as exc:  # a name too long for this file system, and the like
            self._refuse(label, name, f"cannot be written here: {exc.strerror or exc}")
        else:
            return True
        _disown(site, planned[1])
        return False

    @staticmethod
    def _own(site: _Site, rel: str, label: str) -> None:
        site.owner.setdefault(rel, label)
        parent = posixpath.dirname(rel)
        while parent and parent not in site.owner:
            site.owner[parent] = label
            parent = posixpath.dirname(parent)

    def _links(self, site: _Site, label: str, kind: str, links: list[tuple[str, str]]) -> None:
        """Create the symlinks after every file, checked twice: the target, taken lexically from
        the link's directory, stays inside the package; and the created link's real path too."""
        for name, target in links:
            rel = _install_path(kind, name)
            if rel is None:
                continue
            if "\0" in target:
                self._refuse(label, name, "a symlink whose target holds a NUL byte")
                continue
            if target.startswith("/"):
                self._refuse(label, name, f"a symlink to the absolute path {target[:200]!r}, outside the package")
                continue
            lexical = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
            if lexical == ".." or lexical.startswith("../"):
                self._refuse(label, name, f"a symlink to {target!r}, which leaves the package")
                continue
            try:
                directory = _mkdirs(site.host, posixpath.dirname(rel))
            except _Refused as exc:
                self._refuse(label, name, exc.reason)
                continue
            dest = os.path.join(directory, posixpath.basename(rel))
            if os.path.lexists(dest):
                continue
            if not target:
                self._refuse(label, name, "a symlink with an empty target")
                continue
            try:
                os.symlink(target, dest)
            except OSError as exc:
                self._refuse(label, name, f"a symlink that cannot be made here: {exc.strerror or exc}")
                continue
            real = os.path.realpath(dest)
            if not (real == site.host or real.startswith(site.host + "/")):
                os.unlink(dest)
                self._refuse(label, name, f"a symlink to {target!r}, which resolves outside the package")
                continue
            if os.path.exists(dest):
                self._own(site, rel, label)
            else:
                os.unlink(dest)  # a link to a member that is not a binary (or missing): nothing to audit

    def zip(self, site: _Site, label: str, kind: str, zf: zipfile.ZipFile, packed: int) -> None:
        """Stage the members of the open zip ``zf`` (``packed``: its size on disk, bytes)."""
        infos = zf.infolist()
        if len(infos) > MAX_MEMBERS:
            self.errors.append(InputError(label, f"lists {len(infos)} members, more than {MAX_MEMBERS}"))
            return
        links: list[tuple[str, str]] = []
        jobs: list[tuple[zipfile.ZipInfo, str, str, str]] = []
        for info in infos:
            if info.is_dir():
                continue
            name = _safe_name(info.filename)
            if name is None:
                self._refuse(label, info.filename or "(empty name)", _unsafe_reason(info.filename))
                continue
            site.claim_dirs(_install_path(kind, name), label)
            # A zip member whose mode says symlink is written by pip as a regular file holding the
            # target text: it is sniffed like any other member, never made a link.
            try:
                if kind == "conda" and name.startswith("pkg-") and name.endswith(".tar.zst"):
                    self._conda_inner(site, label, zf, info, packed)
                    continue
                if kind == "conda":
                    continue  # info-*.tar.zst and metadata.json
                with zf.open(info) as src:
                    head = src.read(SNIFF_BYTES)
                rel = _install_path(kind, name)
                earlier = next((i for i, job in enumerate(jobs) if job[3] == rel), None) if rel else None
                if earlier is not None:
                    # pip, like unzip, keeps the last copy of a name: audit that one, and say so.
                    reason = "a second member of this name: installers keep the last copy, audited here"
                    self._refuse(label, name, reason)
                    jobs[earlier] = (info, name, jobs[earlier][2], jobs[earlier][3])
                    continue
                planned = self._plan(site, label, kind, name, head)
                if planned is not None:
                    jobs.append((info, name, *planned))
            except (*_CORRUPT, NotImplementedError) as exc:
                self._refuse(label, name, f"cannot be decompressed: {exc}")
        self._extract_all(zf, site, label, jobs, _PackageBudget(packed))
        self._links(site, label, kind, links)

    def _extract_all(
        self,
        zf: zipfile.ZipFile,
        site: _Site,
        label: str,
        jobs: list[tuple[zipfile.ZipInfo, str, str, str]],
        package: _PackageBudget,
    ) -> None:
        """Decompress and write the planned zip members, on up to ``WORKERS`` threads (zlib
        releases the GIL while it inflates); refusals are recorded in member order, so the result
        is the same as a serial run."""

        def one(job: tuple[zipfile.ZipInfo, str, str, str]) -> str | None:
            info, _name, dest, _rel = job
            try:
                with zf.open(info) as src:
                    _write(src, b"", dest, self.budget, MAX_RATIO * max(info.compress_size, 1), package)
            except _Refused as exc:
                return exc.reason
            except (*_CORRUPT, NotImplementedError) as exc:
                return f"cannot be decompressed: {exc}"
            return None

        if self.budget.progress is not None:
            self.budget.progress.expect(sum(job[0].file_size for job in jobs))
        workers = min(WORKERS, len(jobs))
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                outcomes = list(pool.map(one, jobs))
        else:
            outcomes = [one(job) for job in jobs]
        for (_info, name, _dest, rel), reason in zip(jobs, outcomes, strict=True):
            if reason is not None:
                self._refuse(label, name, reason)
                _disown(site, rel)

    def _conda_inner(self, site: _Site, label: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo, packed: int) -> None:
        """Stage the ``pkg-*.tar.zst`` of a ``.conda`` (``packed``: the ``.conda``'s size on disk:
        the sizes its zip directory states are not trusted)."""
        with zf.open(info) as raw:
            self._tar_stream(site, label, "conda", _decompressed(raw, b"\x28\xb5\x2f\xfd", packed), label, packed)

    def tar(self, site: _Site, label: str, path: str) -> None:
        """Stage a tarball (plain, gzip, bzip2, xz or zstd; a conda ``.tar.bz2`` among them)."""
        try:
            with open(path, "rb") as fh:
                head = fh.read(8)
                fh.seek(0)
                packed = os.fstat(fh.fileno()).st_size
                self._tar_stream(site, label, "tarball", _decompressed(fh, head, packed), path, packed)
        except OSError as exc:
            self.errors.append(InputError(path, exc.strerror or str(exc)))

    def _tar_stream(self, site: _Site, label: str, kind: str, fh: _Capped, where: str, packed: int) -> None:
        """Read an uncompressed tar stream member by member (``r|``: no seeking), decompressed by
        ``_decompressed`` under a cap on every byte decompressed — skipped members and long-name
        headers included —; then read the stream to its end, so that a bad header in the middle
        (where tarfile stops quietly), trailing data, a failed gzip CRC or a truncation is an error.
        A second member of the same name replaces the first, as ``tar -x`` does, and is reported."""
        links: list[tuple[str, str]] = []
        members = 0
        start_total = self.budget.total
        written: set[str] = set()
        try:
            with tarfile.open(fileobj=fh, mode="r|") as tf:  # type: ignore[call-overload]
                for member in tf:
                    members += 1
                    if members > MAX_MEMBERS:
                        raise _Refused(f"lists more than {MAX_MEMBERS} members")
                    name = _safe_name(member.name)
                    if name is None:
                        self._refuse(label, member.name or "(empty name)", _unsafe_reason(member.name))
                        continue
                    site.claim_dirs(_install_path(kind, name), label)
                    if member.issym():
                        links.append((name, member.linkname))
                        continue
                    if member.islnk():
                        target = _safe_name(member.linkname)
                        if target is None:
                            self._refuse(label, name, f"a hard link to {member.linkname!r}, outside the package")
                            continue
                        links.append((name, posixpath.relpath(target, posixpath.dirname(name) or ".")))
                        continue
                    if member.isdev():
                        self._refuse(label, name, "a device file")
                        continue
                    if not member.isfile():
                        continue
                    src = tf.extractfile(member)
                    if src is None:
                        continue
                    rel = _install_path(kind, name)
                    if rel is not None and rel in written and site.owner.get(rel) == label:
                        self._refuse(
                            label, name, "a second member of this name: installers keep the last copy, audited here"
                        )
                        _disown(site, rel)
                        with contextlib.suppress(OSError):
                            os.unlink(os.path.join(site.host, rel))
                    limit = MAX_RATIO * max(packed, 1) - (self.budget.total - start_total)
                    if self._file(site, label, kind, name, src, max(limit, 0)) and rel is not None:
                        written.add(rel)
            fh.drain()
        except _Refused as exc:
            self.errors.append(InputError(where, exc.reason))
        except (tarfile.TarError, *_CORRUPT) as exc:
            self.errors.append(InputError(where, f"not a readable tar archive, or truncated: {exc}"))
        except Exception as exc:  # zstandard.ZstdError and decompressor errors of other codecs
            self.errors.append(InputError(where, f"cannot be decompressed: {exc}"))
        finally:
            self._links(site, label, kind, links)


class _Capped:
    """A read-only stream over ``decompress``, refusing to hand out more than ``limit`` bytes in all
    (every byte tarfile reads: members written or skipped, headers, long names)."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.stream = stream
        self.limit = limit
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        want = _CHUNK if n is None or n < 0 else min(n, _CHUNK * 16)
        data: bytes = self.stream.read(want)
        self.count += len(data)
        if self.count > self.limit:
            raise _Refused(f"decompresses to more than {self.limit} bytes (a decompression bomb?)")
        return data

    def drain(self) -> None:
        """Read what follows the end of the archive: only zero blocks may (a corrupt header in the
        middle stops tarfile quietly; the decompressor checks its CRC and length at the end)."""
        while True:
            data = self.read(_CHUNK)
            if not data:
                return
            if data.strip(b"\0"):
                raise _Refused("data after the end of the archive: a corrupt member header in the middle of it?")


def _decompressed(fh: IO[bytes], head: bytes, packed: int) -> _Capped:
    """``fh`` decompressed by its magic bytes (gzip, bzip2, xz, zstd, or none), capped at
    ``MAX_RATIO`` times ``packed`` (at least ``PACKAGE_FLOOR``) bytes."""
    stream: Any
    if head.startswith(b"\x1f\x8b"):
        stream = gzip.GzipFile(fileobj=fh, mode="rb")
    elif head.startswith(b"BZh"):
        stream = bz2.BZ2File(fh)
    elif head.startswith(b"\xfd7zXZ\x00"):
        stream = lzma.LZMAFile(fh)  # noqa: SIM115
    elif head.startswith(b"\x28\xb5\x2f\xfd"):
        import zstandard

        stream = zstandard.ZstdDecompressor().stream_reader(fh, read_size=_CHUNK)
    else:
        stream = fh
    return _Capped(stream, max(MAX_RATIO * max(packed, 1), PACKAGE_FLOOR))


def _unsafe_reason(name: str) -> str:
    """Why ``_safe_name`` refused ``name``, in words."""
    if not name:
        return "an empty member name"
    if "\0" in name:
        return "a member name holding a NUL byte"
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[/\\]", name):
        return "an absolute member name"
    return "a member name that climbs out of the package with '..'"


#: How paths of a shared staging root that no package installs are labelled.
_SITE_NAMES = {"wheel": "site-packages", "conda": "prefix"}

#: File names of packages picked up inside a directory given (a wheelhouse, a conda-bld output).
PACKAGE_SUFFIXES = (".whl", ".conda", ".tar.bz2")


def _packages_under(top: str) -> list[str]:
    """The packages below the directory ``top``, by name (``PACKAGE_SUFFIXES``), sorted; symlinked
    directories are not followed (the binary walk decides what a link may reach)."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        out.extend(os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(PACKAGE_SUFFIXES))
    return out


@contextmanager
def staged_inputs(
    paths: list[str], is_package: Callable[[str], str | None] = package_kind, progress: Progress | None = None
) -> Iterator[Staged]:
    """Stage every package among ``paths`` for the audit; the temporary tree is removed on exit.

    Args:
        progress: told the bytes expected and written (a progress bar), or ``None``.
        paths: the inputs as given; a path that is a regular file and a package (``package_kind``)
            is staged, every other path passes through unchanged.

    Yields:
        A ``Staged``: the paths to audit, the members refused, and ``label`` to write staged
        paths back as ``PACKAGE!member``.
    """
    kinds = {}
    found: list[str] = []  # packages found by name in the directories given
    real: set[str] = set()  # one package given twice (two spellings, a symlink) is staged once
    dropped: set[str] = set()

    def take(path: str, kind: str | None) -> bool:
        if kind is None or path in kinds:
            return False
        key = os.path.realpath(path)
        if key in real:
            dropped.add(path)
            return False
        real.add(key)
        kinds[path] = kind
        return True

    for p in paths:
        try:
            mode = os.stat(p).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            take(p, is_package(p))
        elif stat.S_ISDIR(mode):
            for candidate in _packages_under(p):
                if candidate not in kinds and take(candidate, is_package(candidate)):
                    found.append(candidate)
    if not kinds:
        yield Staged(list(paths), [], [])
        return
    paths = list(dict.fromkeys(p for p in [*paths, *found] if p not in dropped))
    tmp = tempfile.mkdtemp(prefix="linkaudit-")
    try:
        budget = _Budget(progress)
        stager = _Stager(budget)
        sites: dict[str, _Site] = {}
        out: list[str] = []

        def site_for(key: str, label: str) -> _Site:
            site = sites.get(key)
            if site is None:
                host = os.path.join(os.path.realpath(tmp), key)
                os.mkdir(host, 0o700)
                site = sites[key] = _Site(host, _SITE_NAMES.get(key, label))
                out.append(host)
            site.labels.append(label)
            return site

        for p in paths:
            kind = kinds.get(p)
            if kind is None:
                out.append(p)
            elif kind == "tarball":
                stager.tar(site_for(f"tarball{len(sites)}", p), p, p)
            else:
                try:
                    zf = zipfile.ZipFile(p)
                except (*_CORRUPT, zipfile.LargeZipFile) as exc:
                    stager.errors.append(InputError(p, f"not a readable zip archive: {exc}"))
                    continue
                with zf:
                    kind = _zip_kind(zf)
                    stager.zip(site_for(kind, p), p, kind, zf, os.path.getsize(p))
        yield Staged(out, stager.errors, list(kinds), list(sites.values()))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
