#!/usr/bin/env python3
"""Rebuild the tiny wheels under sample_bins/wheels/ from sample_bins/src/.

    python3 sample_bins/build_wheels.py

Deterministic (same toolchain: gcc, binutils; see README.md): the libraries are built with the
flags of build.sh, the wheels written with fixed timestamps and modes, members in a fixed order,
RECORD last.  Nothing built is executed.  Needs: gcc, binutils (Debian: gcc binutils libc6-dev).

dist/: one project, ``pkg`` 1.0, as cibuildwheel leaves it — wheels for cp311, cp312 and an abi3
wheel (cp311-abi3), each with an extension module ``pkg/mod.*.so`` that NEEDs ``libhelper.so``
shipped in ``pkg.libs/`` (RUNPATH ``$ORIGIN/../pkg.libs``, as auditwheel repairs).  The cp311 and
cp312 wheels ship the same ``libhelper.so``; the abi3 wheel another build of it.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
OUT = HERE / "wheels"
CFLAGS = ["-O1", "-g0", "-fno-ident", "-fPIC", f"-ffile-prefix-map={SRC}=src", f"-fdebug-prefix-map={SRC}=src"]
LDFLAGS = ["-Wl,--build-id=none", "-Wl,-z,noseparate-code", "-Wl,-s", "-Wl,--no-as-needed", "-Wl,--hash-style=gnu"]
STAMP = (1980, 1, 1, 0, 0, 0)


def _cc(work: Path, out: Path, source: Path, *args: str) -> bytes:
    """Compile and link one shared library; its bytes."""
    env = {**os.environ, "SOURCE_DATE_EPOCH": "0", "LC_ALL": "C", "TZ": "UTC"}
    flags = [*CFLAGS, f"-ffile-prefix-map={work}=build", f"-fdebug-prefix-map={work}=build"]
    subprocess.run(["gcc", "-shared", *flags, *LDFLAGS, "-o", str(out), str(source), *args], check=True, env=env)
    return out.read_bytes()


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def write_wheel(path: Path, members: dict[str, bytes], dist_info: str, metadata: str, tags: list[str]) -> None:
    """Write a wheel: ``members``, then ``dist_info``'s METADATA, WHEEL and RECORD (PEP 427)."""
    files = dict(members)
    files[f"{dist_info}/METADATA"] = metadata.encode()
    wheel = "Wheel-Version: 1.0\nGenerator: linkaudit-fixtures\nRoot-Is-Purelib: false\n"
    files[f"{dist_info}/WHEEL"] = (wheel + "".join(f"Tag: {t}\n" for t in tags)).encode()
    record = [_record_line(n, d) for n, d in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, STAMP)
            info.external_attr = (0o755 if name.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)


def build_dist(work: Path) -> None:
    """dist/: pkg 1.0 for cp311, cp312 and cp311-abi3."""
    helper = _cc(work, work / "libhelper.so", SRC / "loader/helper.c", "-Wl,-soname,libhelper.so")
    helper_v2 = _cc(work, work / "v2/libhelper.so", SRC / "wheels/helper_v2.c", "-Wl,-soname,libhelper.so")
    module = _cc(
        work, work / "mod.so", SRC / "loader/pymod.c", "-Wl,--enable-new-dtags,-rpath,$ORIGIN/../pkg.libs",
        f"-L{work}", "-l:libhelper.so",
    )  # fmt: skip
    metadata = "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n"
    init = b"from .mod import *  # noqa\n"
    dist = OUT / "dist"
    dist.mkdir(parents=True)
    for tag, suffix, lib in (
        ("cp311-cp311-manylinux_2_17_x86_64", "cpython-311-x86_64-linux-gnu", helper),
        ("cp312-cp312-manylinux_2_17_x86_64", "cpython-312-x86_64-linux-gnu", helper),
        ("cp311-abi3-manylinux_2_17_x86_64", "abi3", helper_v2),
    ):
        members = {"pkg/__init__.py": init, f"pkg/mod.{suffix}.so": module, "pkg.libs/libhelper.so": lib}
        write_wheel(dist / f"pkg-1.0-{tag}.whl", members, "pkg-1.0.dist-info", metadata, [tag])


def main() -> int:
    if shutil.which("gcc") is None:
        print("build_wheels.py: needs gcc (apt-get install gcc binutils libc6-dev)", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix="linkaudit-wheels.") as tmp:
        work = Path(tmp)
        (work / "v2").mkdir()
        if OUT.exists():
            shutil.rmtree(OUT)
        build_dist(work)
    for path in sorted(OUT.rglob("*.whl")):
        print(f"{path.relative_to(HERE)}  {hashlib.sha256(path.read_bytes()).hexdigest()[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
