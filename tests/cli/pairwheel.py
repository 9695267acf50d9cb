"""Builders for the diff pairing tests (``test_diff_pairing_keys``, ``_stems``): a one-library
wheel, a library file, and ``diff --format json`` run."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

from tests.loader.dagbuild import Lib, elf_bytes

TAG = "cp311-cp311-manylinux_2_17_x86_64"
#: Exports of the old library, and of the new one with ``bar`` removed (an ABI break).
V1 = ("foo", "bar")
V2 = ("foo",)


def pairing_lib(path: Path, soname: str | None, exports: tuple[str, ...], needed: tuple[str, ...] = ()) -> Path:
    """An ELF shared library at ``path`` (directories made) of ``soname``, ``exports`` and ``needed``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(elf_bytes(Lib(path.name, soname=soname, exports=exports, needed=needed)))
    return path


def diff_json(run_cli, old: Path | str, new: Path | str) -> tuple[int, dict[str, Any]]:  # type: ignore[no-untyped-def]
    """``linkaudit diff --no-config --no-loader --format json OLD NEW``: (exit status, the document)."""
    r = run_cli("diff", "--no-config", "--no-loader", "--format", "json", str(old), str(new))
    return r.exit_code, json.loads(r.stdout)


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
