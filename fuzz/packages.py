"""Small packages for the stager harnesses' seeds (``make_seeds.py``) and their input files.

Deterministic: fixed member times and modes, no compression timestamps, so running
``make_seeds.py`` again rewrites the same bytes.  Each package holds a small ELF library from
``sample_bins/`` (and a symlink to it), so the stagers' member, link and metadata paths are all
reached from the first seed.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import tarfile
import tempfile
import zipfile
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / "sample_bins/loader/pyext/lib/libhelper.so"
_EPOCH = (1980, 1, 1, 0, 0, 0)

WHEEL_META = {
    "demo-1.0.dist-info/METADATA": (
        b"Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nRequires-Dist: nvidia-cuda-runtime-cu12\n"
        b'Requires-Dist: cupy ; extra == "gpu"\nProvides-Extra: gpu\n'
    ),
    "demo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\n",
    "demo-1.0.dist-info/RECORD": b"demo/libhelper.so,,\ndemo/__init__.py,,\ndemo-1.0.dist-info/RECORD,,\n",
}
CONDA_INFO = {
    "info/index.json": b'{"name": "demo", "version": "1.0", "subdir": "linux-64", "depends": ["libgcc-ng >=12"]}',
    "info/paths.json": b'{"paths": [{"_path": "lib/libhelper.so", "path_type": "hardlink"}], "paths_version": 1}',
}


def wheel_bytes() -> bytes:
    """A wheel: a library, a zip symlink to it (pip writes its target text), a directory entry
    before its file, and the dist-info."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("demo/", _EPOCH), b"")
        members = {"demo/__init__.py": b"", "demo/libhelper.so": LIB.read_bytes(), **WHEEL_META}
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name, _EPOCH), data, zipfile.ZIP_DEFLATED)
        link = zipfile.ZipInfo("demo/helper.link", _EPOCH)  # not named like a library: see formats.libnames
        link.external_attr = 0o120777 << 16
        zf.writestr(link, b"libhelper.so")
    return buf.getvalue()


def tar_bytes(members: dict[str, bytes]) -> bytes:
    """An uncompressed POSIX tar of ``members``, a symlink and a hard link to the first member."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        first = None
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o755, 0
            tf.addfile(info, io.BytesIO(data))
            first = first or name
        for kind, name in ((tarfile.SYMTYPE, "lib/libhelper.so.1"), (tarfile.LNKTYPE, "lib/libhelper-copy.so")):
            info = tarfile.TarInfo(name)
            info.type, info.mtime = kind, 0
            info.linkname = "libhelper.so" if kind == tarfile.SYMTYPE else str(first)
            tf.addfile(info)
    return buf.getvalue()


COMPRESSIONS = {
    "tar": lambda b: b,
    "tar.gz": lambda b: gzip.compress(b, mtime=0),
    "tar.bz2": bz2.compress,
    "tar.xz": lzma.compress,
    "tar.zst": lambda b: zstandard.ZstdCompressor().compress(b),
}


def conda_bytes() -> bytes:
    """A ``.conda``: ``metadata.json``, ``pkg-*.tar.zst`` (the library) and ``info-*.tar.zst``."""
    zstd = zstandard.ZstdCompressor()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr(zipfile.ZipInfo("metadata.json", _EPOCH), b'{"conda_pkg_format_version": 2}')
        zf.writestr(
            zipfile.ZipInfo("pkg-demo-1.0-0.tar.zst", _EPOCH),
            zstd.compress(tar_bytes({"lib/libhelper.so": LIB.read_bytes()})),
        )
        zf.writestr(zipfile.ZipInfo("info-demo-1.0-0.tar.zst", _EPOCH), zstd.compress(tar_bytes(CONDA_INFO)))
    return buf.getvalue()


def write_package_seeds(seeds: Path) -> None:
    """Write ``seeds/wheel``, ``seeds/tar`` (every compression) and ``seeds/conda``."""
    lib = {"lib/libhelper.so": LIB.read_bytes()}
    (seeds / "wheel").mkdir(parents=True, exist_ok=True)
    (seeds / "wheel/demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl").write_bytes(wheel_bytes())
    (seeds / "tar").mkdir(parents=True, exist_ok=True)
    for suffix, compress in COMPRESSIONS.items():
        (seeds / f"tar/demo.{suffix}").write_bytes(compress(tar_bytes(lib)))
    (seeds / "conda").mkdir(parents=True, exist_ok=True)
    (seeds / "conda/demo-1.0-0.conda").write_bytes(conda_bytes())
    (seeds / "conda/demo-1.0-0.tar.bz2").write_bytes(bz2.compress(tar_bytes({**lib, **CONDA_INFO})))


#: One private directory per harness process for the input file (a package is staged from a path).
_DIR = tempfile.mkdtemp(prefix="fuzz-package-")


def input_file(data: bytes, name: str) -> str:
    """``data`` written to ``name`` in this process's private directory; its path."""
    path = os.path.join(_DIR, name)
    with open(path, "wb") as fh:
        fh.write(data)
    return path
