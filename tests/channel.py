"""A generated channel: many tiny wheels and conda packages made of sample_bins members.

Used by the cluster tests (tests/test_cluster.py) and benchmarks/bench_cluster.py.  Deterministic:
package ``i`` always holds the same members, so two runs audit the same bytes.  Every package
holds a library from ``sample_bins``; one in three holds one with findings (a driver link, a
leaked RUNPATH, a too-new glibc symbol), so reports compare findings, not only file lists.
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bins"

#: Members a package may hold, by the name it installs them as: the clean ones and the faulty ones.
CLEAN = ("loader/pyext/lib/libhelper.so", "fixed/libnvrtc.so.12", "misc/libweak.so")
FAULTY = ("broken/libtorch_cuda.so", "misc/libleak.so", "misc/libnewglibc.so")


def _members(i: int) -> dict[str, bytes]:
    """What package ``i`` installs: ``lib/NAME`` paths and their bytes."""
    chosen = [CLEAN[i % len(CLEAN)]]
    if i % 3 == 0:
        chosen.append(FAULTY[(i // 3) % len(FAULTY)])
    return {f"lib/{Path(m).name}": (SAMPLES / m).read_bytes() for m in chosen}


def _wheel(path: Path, name: str, members: dict[str, bytes]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, data in members.items():
            zf.writestr(f"{name}/{member}", data)
        zf.writestr(f"{name}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        zf.writestr(f"{name}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n")


def _tar(members: dict[str, bytes], name: str) -> bytes:
    out = io.BytesIO()
    index = json.dumps({"name": name, "version": "1.0", "build": "0", "build_number": 0}).encode()
    with tarfile.open(fileobj=out, mode="w") as tf:
        for member, data in {**members, "info/index.json": index}.items():
            info = tarfile.TarInfo(member)
            info.size, info.mtime = len(data), 0
            tf.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _conda(path: Path, name: str, members: dict[str, bytes]) -> None:
    import zstandard

    compress = zstandard.ZstdCompressor().compress
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("metadata.json", b'{"conda_pkg_format_version": 2}')
        zf.writestr(f"pkg-{name}-1.0-0.tar.zst", compress(_tar(members, name)))
        zf.writestr(f"info-{name}-1.0-0.tar.zst", compress(_tar({}, name)))


def make_channel(directory: Path, count: int) -> list[Path]:
    """Write ``count`` packages into ``directory`` (created): even ``i`` a manylinux wheel
    ``pkgNNNNN``, odd ``i`` a ``.conda`` package; returns their paths in order."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        name = f"pkg{i:05d}"
        if i % 2 == 0:
            path = directory / f"{name}-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
            _wheel(path, name, _members(i))
        else:
            path = directory / f"{name}-1.0-0.conda"
            _conda(path, name, _members(i))
        paths.append(path)
    return paths
