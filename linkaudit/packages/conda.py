"""conda packages: ``.conda`` (an uncompressed zip of ``info-*.tar.zst`` and ``pkg-*.tar.zst``)
and ``.tar.bz2`` (one bzip2 tarball, staged by ``tar``).  Members install at the root of the
prefix.  Source: conda's package format (conda-package-handling, "The .conda file format").
"""

from __future__ import annotations

import os
import zipfile

from .magic import ZSTD
from .staging import CORRUPT, Stager, StagingRoot, safe_name, unsafe_reason
from .tar import Origin, decompressed, origin, stage_stream
from .zipped import listed_members


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
