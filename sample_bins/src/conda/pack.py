"""Pack the sample conda package, deterministically, in both formats: ``condademo-1.0-0.tar.bz2``
(one bzip2 tarball of ``info/`` and the files) and ``condademo-1.0-0.conda`` (a zip of
``metadata.json``, ``info-*.tar.zst`` and ``pkg-*.tar.zst``), as conda-package-handling writes them.

    python3 pack.py STAGE OUT

STAGE holds ``lib/``; every tar member has mtime 0, uid/gid 0, mode 0644 (0755 for libraries), in
sorted order; the zip's entries are dated 1980-01-01 and stored uncompressed, as .conda's are.
"""

from __future__ import annotations

import bz2
import io
import json
import os
import sys
import tarfile
import zipfile

import zstandard

NAME = "condademo-1.0-0"
INDEX = {
    "name": "condademo",
    "version": "1.0",
    "build": "0",
    "build_number": 0,
    "subdir": "linux-64",
    "license": "BSD-3-Clause",
    # cuda-cudart brings libcudart.so.13; libcublas is declared but nothing needs it (overdepending)
    "depends": ["__glibc >=2.17,<3.0.a0", "cuda-cudart >=13.0,<14.0a0", "libcublas >=13.0,<14.0a0"],
}


def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.uid, info.gid = len(members[name]), 0, 0, 0
            info.mode = 0o755 if ".so" in name else 0o644
            tf.addfile(info, io.BytesIO(members[name]))
    return buf.getvalue()


def main(stage: str, out: str) -> None:
    files = {}
    for name in sorted(os.listdir(os.path.join(stage, "lib"))):
        with open(os.path.join(stage, "lib", name), "rb") as fh:
            files[f"lib/{name}"] = fh.read()
    paths = {"paths": [{"_path": p, "path_type": "hardlink"} for p in files], "paths_version": 1}
    info = {
        "info/index.json": json.dumps(INDEX, indent=2, sort_keys=True).encode() + b"\n",
        "info/paths.json": json.dumps(paths, indent=2, sort_keys=True).encode() + b"\n",
        "info/files": "".join(f"{p}\n" for p in files).encode(),
    }
    with open(os.path.join(out, f"{NAME}.tar.bz2"), "wb") as fh:
        fh.write(bz2.compress(_tar({**info, **files}), 9))
    zstd = zstandard.ZstdCompressor(level=19)
    entries = {
        "metadata.json": b'{"conda_pkg_format_version": 2}',
        f"info-{NAME}.tar.zst": zstd.compress(_tar(info)),
        f"pkg-{NAME}.tar.zst": zstd.compress(_tar(files)),
    }
    with zipfile.ZipFile(os.path.join(out, f"{NAME}.conda"), "w", zipfile.ZIP_STORED) as zf:
        for name, data in entries.items():
            entry = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            entry.external_attr = 0o644 << 16
            zf.writestr(entry, data)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
