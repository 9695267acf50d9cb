"""conda packages: ``.conda`` (an uncompressed zip of ``info-*.tar.zst`` and ``pkg-*.tar.zst``)
and ``.tar.bz2`` (one bzip2 tarball, staged by ``tar``).  Members install at the root of the
prefix.  Source: conda's package format (conda-package-handling, "The .conda file format").
"""

from __future__ import annotations

import os
import zipfile

from .magic import ZSTD
from .metadata import MAX_METADATA, conda_record
from .staging import CORRUPT, Stager, StagingRoot, safe_name, unsafe_reason
from .tar import Capped, Origin, decompressed, origin, stage_stream
from .tarread import TarReader, read_up_to
from .zipped import listed_members

#: The most bytes decompressed looking for a ``.tar.bz2``'s ``info/index.json`` before staging
#: (conda-build writes ``info/`` first; a package that puts it last, past this, is planned as one
#: whose depends are unknown).
MAX_INDEX_PEEK = 16 << 20


def is_conda_zip(zf: zipfile.ZipFile) -> bool:
    """True for a zip holding ``pkg-*.tar.zst`` (conda's v2 format)."""
    return any(n.startswith("pkg-") and n.endswith(".tar.zst") for n in zf.namelist())


def stage_conda_zip(stager: Stager, site: StagingRoot, label: str, zf: zipfile.ZipFile, packed: int) -> None:
    """Stage the ``pkg-*.tar.zst`` members of the ``.conda`` open as ``zf`` (``packed``: its size
    on disk, bytes: the sizes its zip directory states are not trusted), and of ``info-*.tar.zst``
    for its ``info/index.json``; ``metadata.json`` holds no binary."""
    infos = listed_members(stager, label, zf)
    for info in infos:
        if info.is_dir():
            continue
        name = safe_name(info.filename)
        if name is None:
            stager.refuse(label, info.filename or "(empty name)", unsafe_reason(info.filename))
            continue
        site.claim_dirs(name, label)
        if not (name.startswith(("pkg-", "info-")) and name.endswith(".tar.zst")):
            continue  # info-*: for info/index.json (tar.stage_stream keeps it)
        try:
            with zf.open(info) as raw:
                source = _origin(label, name)
                stage_stream(stager, site, label, "conda", decompressed(raw, ZSTD, packed), label, packed, source)
        except (*CORRUPT, NotImplementedError) as exc:
            stager.refuse(label, name, f"cannot be decompressed: {exc}")


def _origin(label: str, inner: str) -> Origin | None:
    """The ``.conda`` file ``label``'s inner tar ``inner`` as the origin of its members' cache
    keys (the ``.conda``'s own stat, as ``members.Members`` takes a wheel's); ``None`` when the
    cache is off or the file cannot be stat'ed."""
    try:
        return origin(label, os.stat(label), inner)
    except OSError:
        return None


def read_depends(path: str) -> tuple[str, ...] | None:
    """The package names the conda package at ``path`` (``.conda`` or ``.tar.bz2``) depends on,
    read from its ``info/index.json`` ``depends`` before staging (virtual ``__glibc`` and the like
    left out; a spec ``"dep >=1"`` names ``dep``).  ``None`` when it cannot be read: no index
    among the first ``MAX_INDEX_PEEK`` bytes of a ``.tar.bz2``, no ``info-*.tar.zst`` in a
    ``.conda``, a corrupt file (staging says why then).  Source: conda's package format."""
    try:
        with open(path, "rb") as fh:
            packed = os.fstat(fh.fileno()).st_size
            if not path.endswith(".conda"):
                head = fh.read(8)
                fh.seek(0)
                return _index_depends(decompressed(fh, head, packed))
            with zipfile.ZipFile(fh) as zf:
                inner = next((n for n in zf.namelist() if n.startswith("info-") and n.endswith(".tar.zst")), None)
                if inner is None:
                    return None
                with zf.open(inner) as raw:
                    return _index_depends(decompressed(raw, ZSTD, packed))
    except MemoryError:
        raise
    except Exception:  # any codec's error: depends unknown, staging names the problem
        return None


def _index_depends(stream: Capped) -> tuple[str, ...] | None:
    """The ``depends`` names of the first ``info/index.json`` in the tar ``stream``, else ``None``."""
    stream.limit = min(stream.limit, MAX_INDEX_PEEK)
    tar = TarReader(stream)
    for member in tar:
        if safe_name(member.name) != "info/index.json" or not member.isfile():
            continue
        if member.real_size > MAX_METADATA:
            return None
        record, _why = conda_record(read_up_to(tar.data(), MAX_METADATA).decode("utf-8", errors="replace"))
        if record is None:
            return None
        specs = record.get("depends")
        specs = specs if isinstance(specs, list) else []
        return tuple(d.split()[0] for d in specs if isinstance(d, str) and d.strip() and not d.startswith("__"))
    return None
