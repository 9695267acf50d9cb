"""A one-library wheel for the diff pairing tests (``test_diff_pairing_keys``, ``_stems``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from tests.loader.dagbuild import Lib, elf_bytes

TAG = "cp311-cp311-manylinux_2_17_x86_64"


def pairing_wheel(path: Path, exports: tuple[str, ...], tag: str = TAG) -> Path:
    """A wheel at ``path`` (its version from its file name) holding ``pkg/libp.so`` (SONAME
    libp.so, exporting ``exports``, needing a library nowhere: a finding to pair), tagged ``tag``."""
    version = path.name.split("-")[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    lib = Lib("libp.so", soname="libp.so", exports=exports, needed=("libmissing.so.7",))
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("pkg/libp.so", elf_bytes(lib))
        zf.writestr(f"pkg-{version}.dist-info/METADATA", f"Metadata-Version: 2.1\nName: pkg\nVersion: {version}\n")
        zf.writestr(f"pkg-{version}.dist-info/WHEEL", f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n")
        zf.writestr(f"pkg-{version}.dist-info/RECORD", "")
    return path
