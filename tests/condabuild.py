"""Small conda packages built in tests (``test_conda_clash``, ``test_clash_identity``): a plain tar
of members, and a ``NAME-1.0-0`` package in either format installing them."""

from __future__ import annotations

import bz2
import io
import json
import tarfile
import zipfile
from pathlib import Path

import zstandard


def tar_bytes(members: dict[str, bytes]) -> bytes:
    """An uncompressed tar holding ``members`` (name -> bytes), in order."""
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def conda_package(directory: Path, name: str, suffix: str, members: dict[str, bytes], files: bool = True) -> str:
    """A conda package ``name-1.0-0`` + ``suffix`` (``.tar.bz2`` or ``.conda``) in ``directory``
    installing ``members``, with its ``info/index.json`` (and ``info/files`` unless ``files`` is
    false); its path."""
    index = json.dumps({"name": name, "version": "1.0", "build": "0", "subdir": "linux-64", "depends": []})
    info = {"info/index.json": index.encode()}
    if files:
        info["info/files"] = "\n".join(members).encode()
    path = directory / f"{name}-1.0-0{suffix}"
    if suffix == ".tar.bz2":
        path.write_bytes(bz2.compress(tar_bytes({**info, **members})))
    else:
        compress = zstandard.ZstdCompressor().compress
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
            zf.writestr(f"pkg-{name}-1.0-0.tar.zst", compress(tar_bytes(members)))
            zf.writestr(f"info-{name}-1.0-0.tar.zst", compress(tar_bytes(info)))
    return str(path)
