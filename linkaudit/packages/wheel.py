"""Wheels (``.whl``): a zip whose members install at the root of a ``site-packages``, its
``NAME.data/purelib`` and ``platlib`` merged into that root.  Binary members are inflated on a
few threads (zlib releases the GIL).  Source: PEP 427 (binary distribution format).
"""

from __future__ import annotations

import hashlib
import zipfile
from concurrent.futures import ThreadPoolExecutor

from ..errors import InputError
from ..formats import SNIFF_BYTES, sniff
from ..formats.libnames import HEAD_BYTES, library_named
from . import limits
from .inflate import open_zip_member
from .members import Members
from .metadata import MAX_METADATA, MAX_RECORD, past_limit, wheel_tag_problems
from .staging import (
    CORRUPT,
    Clash,
    Listed,
    PackageBudget,
    Refused,
    Stager,
    StagingRoot,
    install_path,
    safe_name,
    unsafe_reason,
    write_member,
)
from .zipped import listed_members

#: The ``.dist-info`` files kept, with the largest size read of each.
_METADATA_LIMITS = {"METADATA": MAX_METADATA, "WHEEL": MAX_METADATA, "RECORD": MAX_RECORD}

#: One member to inflate: (its zip entry, its name, host destination, installed path, first bytes).
Job = tuple[zipfile.ZipInfo, str, str, str, bytes]


def stage_wheel(stager: Stager, site: StagingRoot, label: str, zf: zipfile.ZipFile, packed: int) -> None:
    """Stage the binary members of the wheel open as ``zf`` (``packed``: its size on disk, bytes)
    into ``site``; refusals go to ``stager.errors``."""
    jobs: list[Job] = []
    planned: dict[str, int] = {}  # installed path -> its index in jobs
    package = PackageBudget(packed)
    members = Members(label)
    known, heads = members.heads(), {}
    for info in listed_members(stager, label, zf):
        if info.is_dir():
            continue
        name = safe_name(info.filename)
        if name is None:
            stager.refuse(label, info.filename or "(empty name)", unsafe_reason(info.filename))
            continue
        rel = install_path("wheel", name)
        site.claim_dirs(rel, label)
        if rel is not None:
            _list(stager, site, (label, zf), info, name, rel)
            if _keep_metadata(stager, site, label, zf, info, name):
                continue  # refused: said once
        # A zip member whose mode says symlink is written by pip as a regular file holding the
        # target text: it is sniffed like any other member, never made a link.
        try:
            head = _head(zf, info, known.get(name))
            heads[name] = (info.CRC, info.file_size, head)
            if sniff(head) is None and library_named(name):
                with open_zip_member(zf, info) as src:  # enough to tell why it is none (libnames); rare
                    head = src.read(HEAD_BYTES)
                if rel is not None and _zip_symlink(info):
                    stager.refuse(label, name, _zip_symlink_reason(head))
                    continue
            _plan_member(stager, site, label, info, name, head, jobs, planned, package)
        except (*CORRUPT, NotImplementedError) as exc:
            stager.refuse(label, name, f"cannot be decompressed: {exc}")
    if heads != known:
        members.save_heads(heads)
    _extract_all(stager, zf, site, label, jobs, members)


def _zip_symlink(info: zipfile.ZipInfo) -> bool:
    """True when the member's Unix mode (the high half of ``external_attr``) says symlink."""
    return (info.external_attr >> 16) & 0o170000 == 0o120000


def _zip_symlink_reason(target: bytes) -> str:
    """Why a member named like a library whose zip mode says symlink cannot be loaded: pip writes
    no symlink from a wheel, but a regular file holding the target's text (``target``)."""
    said = target[:200].decode("utf-8", errors="replace")
    return (
        f"a symlink in the zip (to {said!r}): pip installs it as a regular file holding that text, "
        "which the loader refuses (glibc: 'invalid ELF header'); a wheel cannot hold symlinks — ship "
        "the library under the name it is loaded by (its SONAME)"
    )


def _head(zf: zipfile.ZipFile, info: zipfile.ZipInfo, known: tuple[int, int, bytes] | None) -> bytes:
    """The member's first ``SNIFF_BYTES``: from ``known`` (the cache's, when its CRC-32 and size
    are the entry's), else inflated."""
    if known is not None and known[:2] == (info.CRC, info.file_size):
        return known[2]
    with open_zip_member(zf, info) as src:
        return src.read(SNIFF_BYTES)


def _keep_metadata(
    stager: Stager, site: StagingRoot, label: str, zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str
) -> bool:
    """Keep the text of the wheel's own ``X.dist-info/METADATA``, ``WHEEL`` and ``RECORD`` for what
    the wheel declares and owns.  One larger than its limit, or that cannot be inflated, is refused
    (``stager.refuse``: its tags, requirements or files unknown, said): True then."""
    directory, _, base = name.partition("/")
    if not directory.endswith(".dist-info") or base not in _METADATA_LIMITS or "/" in base:
        return False
    if info.file_size > _METADATA_LIMITS[base]:
        stager.refuse(label, name, past_limit(info.file_size, _METADATA_LIMITS[base], f".dist-info/{base}"))
        return True
    try:
        text = zf.read(info).decode("utf-8", errors="replace")
    except (*CORRUPT, NotImplementedError) as exc:
        stager.refuse(label, name, f"cannot be decompressed: {exc}")
        return True
    files = site.dist_files.setdefault(label, {})
    files.setdefault("where", directory)
    if files["where"] == directory:
        files[base] = text
        if base == "WHEEL":  # each Tag line not read is said; the others are
            stager.errors.extend(InputError(f"{label}!{name}", why) for why in wheel_tag_problems(text))
    return False


def _list(
    stager: Stager, site: StagingRoot, wheel: tuple[str, zipfile.ZipFile], info: zipfile.ZipInfo, name: str, rel: str
) -> None:
    """Record the member ``rel`` as installed by the wheel ``wheel`` (as given, and open); a path
    another package of the installation installs too is a clash, identical when both members
    hold the same bytes: their zip directories' CRC-32 and size agree (else they differ), and
    then their bytes hash alike (``_same_bytes``; a CRC is no identity: 4 bytes appended make
    any CRC-32)."""
    label, zf = wheel
    mine = Listed(label, info.CRC, info.file_size, name)
    first = site.listed.setdefault(rel, mine)
    if first.package == label:
        return
    same: bool | None = None  # a conda member's (never in a wheels' site): not compared
    if isinstance(first.sum, int):
        same = first.sum == mine.sum and first.size == mine.size and _same_bytes(first, zf, info)
    stager.clashes.append(Clash(rel, first.package, label, name, same))


def _same_bytes(first: Listed, zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bool | None:
    """True when the member ``info`` of the open ``zf`` holds the same bytes as the wheel
    ``first``'s member (opened again by its path as given), by SHA-256; ``None`` when either
    cannot be read whole (corrupt, gone, or inflating past ``limits.MAX_RATIO`` times its
    compressed size: a bomb is never hashed)."""
    try:
        with zipfile.ZipFile(first.package) as other:
            theirs = other.getinfo(first.member)
            if theirs.file_size != info.file_size:
                return False
            return _digest(other, theirs) == _digest(zf, info)
    except (*CORRUPT, NotImplementedError, OSError, KeyError, Refused):
        return None


def _digest(zf: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """The SHA-256 digest of the member ``info`` of ``zf``, read in chunks.

    Raises:
        Refused: it inflates past ``limits.MAX_RATIO`` times its compressed size.
    """
    if info.file_size > limits.MAX_RATIO * max(info.compress_size, 1) + limits.CHUNK:
        raise Refused("inflates past the ratio limit")
    sha = hashlib.sha256()
    with open_zip_member(zf, info) as src:
        while chunk := src.read(limits.CHUNK):
            sha.update(chunk)
    return sha.digest()


def _plan_member(
    stager: Stager,
    site: StagingRoot,
    label: str,
    info: zipfile.ZipInfo,
    name: str,
    head: bytes,
    jobs: list[Job],
    planned: dict[str, int],
    package: PackageBudget,
) -> None:
    """Sniff one member (its first bytes ``head``) and queue it in ``jobs`` when it is a binary to write, its declared size
    reserved against ``package`` (``planned``: installed path -> index of its job)."""
    rel = install_path("wheel", name)
    if rel is not None and sniff(head) is not None:
        reason = _declared_too_large(info, package)
        if reason is not None:
            stager.refuse(label, name, reason)
            return
    earlier = planned.get(rel) if rel else None
    if earlier is not None:
        # pip, like unzip, keeps the last copy of a name: audit that one, and say so.
        stager.second_copy(label, name)
        jobs[earlier] = (info, name, jobs[earlier][2], jobs[earlier][3], head)
        return
    destination = stager.plan(site, label, "wheel", name, head)
    if destination is not None:
        planned[destination[1]] = len(jobs)
        jobs.append((info, name, *destination, head))


def _declared_too_large(info: zipfile.ZipInfo, package: PackageBudget) -> str | None:
    """Why a binary member may not be inflated at all, judged on the size its entry declares
    (zipfile inflates no more than that), or ``None`` with that size reserved in ``package``."""
    declared = info.file_size
    if declared > limits.MAX_MEMBER_BYTES:
        return f"declares {declared} bytes, more than {limits.MAX_MEMBER_BYTES}: refused before inflating it"
    if declared > max(limits.MAX_RATIO * max(info.compress_size, 1), limits.RATIO_FLOOR):
        return (
            f"declares {declared} bytes from {info.compress_size} compressed, more than {limits.MAX_RATIO} times "
            "its compressed size (a decompression bomb?): refused before inflating it"
        )
    if not package.reserve(declared):
        return (
            f"declares {declared} bytes: the package would expand to more than {limits.MAX_RATIO} times its size "
            f"({package.left} bytes left; a decompression bomb?): refused before inflating it"
        )
    return None


def _extract_all(
    stager: Stager, zf: zipfile.ZipFile, site: StagingRoot, label: str, jobs: list[Job], members: Members
) -> None:
    """Inflate the planned zip members, on up to ``WORKERS`` threads: each one found in the cache
    (``cache.member_key``) only placed, an ELF file streamed to its kept ranges, any other written
    out; refusals are recorded in member order, so the result is the same as a serial run."""

    def one(job: Job) -> str | None:
        info, name, dest, _rel, head = job
        try:
            if members.place_cached(info, name, dest, head) or members.stream(zf, info, name, dest, head, stager):
                return None
            with open_zip_member(zf, info) as src:
                write_member(src, b"", dest, stager.budget, None, cap=info.file_size)
        except Refused as exc:
            return exc.reason
        except (*CORRUPT, NotImplementedError) as exc:
            return f"cannot be decompressed: {exc}"
        return None

    if stager.budget.progress is not None:
        stager.budget.progress.expect(sum(job[0].file_size for job in jobs))
    workers = min(limits.WORKERS, len(jobs))
    if workers > 1:
        with ThreadPoolExecutor(workers) as pool:
            outcomes = list(pool.map(one, jobs))
    else:
        outcomes = [one(job) for job in jobs]
    for (_info, name, _dest, rel, _head), reason in zip(jobs, outcomes, strict=True):
        if reason is not None:
            stager.refuse(label, name, reason)
            site.disown(rel)
