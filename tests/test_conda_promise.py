"""What a conda package promises is the glibc it declares (``__glibc >=X.Y``), nothing else.

A conda prefix's files were held to the whole manylinux policy of the tag made from its glibc
baseline: GLIBCXX_3.4.19 and CXXABI_1.3.7 ceilings (and that policy's list of system libraries),
though libstdc++ and libgcc_s come from conda packages, and the finding said "the platform tag
manylinux_2_17_x86_64 of .../conda-meta/cxxfoo-1.0". A lone conda package's declared
``__glibc`` was not a ceiling at all. The kind: a prefix, a lone ``.tar.bz2`` and ``.conda``
declaring it, one declaring none.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.audit import _wheel_policies
from linkaudit.packages import find_site, staged_inputs

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
HELPER = SAMPLES / "loader/pyext/lib/libhelper.so"
LIBSTDCXX = Path("/usr/lib/x86_64-linux-gnu/libstdc++.so.6")


def _prefix(tmp_path: Path, lib: Path, glibc: str = "2.17") -> Path:
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "conda-meta").mkdir()
    shutil.copy(lib, prefix / "lib" / lib.name)
    record = {
        "name": "thelib",
        "version": "1.0",
        "build": "h1234_0",
        "subdir": "linux-64",
        "depends": [f"__glibc >={glibc},<3.0.a0", "libgcc >=13"],
        "files": [f"lib/{lib.name}"],
    }
    (prefix / "conda-meta/thelib-1.0-h1234_0.json").write_text(json.dumps(record))
    return prefix


def _index(depends: list[str]) -> bytes:
    return json.dumps(
        {"name": "thelib", "version": "1.0", "build": "0", "subdir": "linux-64", "depends": depends}
    ).encode()


def _tar_bz2(path: Path, lib: Path, depends: list[str]) -> Path:
    with tarfile.open(path, "w:bz2") as tf:
        for name, data in ((f"lib/{lib.name}", lib.read_bytes()), ("info/index.json", _index(depends))):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _dot_conda(path: Path, lib: Path, depends: list[str]) -> Path:
    import zstandard

    def tar_zst(members: dict[str, bytes]) -> bytes:
        raw = io.BytesIO()
        with tarfile.open(fileobj=raw, mode="w") as tf:
            for name, data in members.items():
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        return zstandard.ZstdCompressor().compress(raw.getvalue())

    stem = path.name[: -len(".conda")]
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
        zf.writestr(f"pkg-{stem}.tar.zst", tar_zst({f"lib/{lib.name}": lib.read_bytes()}))
        zf.writestr(f"info-{stem}.tar.zst", tar_zst({"info/index.json": _index(depends)}))
    return path


def test_a_prefix_promises_its_glibc_baseline_only(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path, HELPER)
    site = find_site(str(prefix))
    assert site is not None
    from linkaudit.formats import read_path

    binaries = read_path(str(prefix / "lib/libhelper.so"))
    with staged_inputs([str(prefix)]) as staged:
        (promised,) = _wheel_policies(binaries, staged, [site]).values()
    assert promised.ceilings == ("GLIBC_2.17",)  # no GLIBCXX_3.4.19, no CXXABI_1.3.7, no GCC_
    assert promised.allowed_libraries == ()  # no manylinux list: libraries come from conda packages
    assert promised.package == str(prefix / "conda-meta/thelib-1.0-h1234_0")  # the record's whole name
    assert promised.said == f"the prefix's glibc baseline 2.17 of {prefix}/conda-meta/thelib-1.0-h1234_0"


@pytest.mark.skipif(not LIBSTDCXX.is_file(), reason="needs the host's libstdc++.so.6 (Debian: libstdc++6)")
def test_a_prefix_finding_names_the_baseline_not_a_platform_tag(tmp_path: Path) -> None:
    prefix = _prefix(tmp_path, LIBSTDCXX)
    versions = [f for f in audit([str(prefix)]).findings if f.rule == "symbol-version"]
    assert versions, "the host's libstdc++ needs a glibc above 2.17"
    assert all(f.subject.startswith("GLIBC_") for f in versions)
    assert all("the prefix's glibc baseline 2.17 of" in f.message for f in versions)
    assert not [f for f in versions if "platform tag" in f.message]


@pytest.mark.skipif(not LIBSTDCXX.is_file(), reason="needs the host's libstdc++.so.6 (Debian: libstdc++6)")
@pytest.mark.parametrize("make", [_tar_bz2, _dot_conda])
def test_a_lone_conda_package_promises_the_glibc_it_declares(tmp_path: Path, make) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("zstandard")
    suffix = ".tar.bz2" if make is _tar_bz2 else ".conda"
    declared = make(tmp_path / f"thelib-1.0-0{suffix}", LIBSTDCXX, ["__glibc >=2.17,<3.0.a0", "libgcc >=13"])
    versions = [f for f in audit([str(declared)]).findings if f.rule == "symbol-version"]
    assert versions, "the host's libstdc++ needs a glibc above 2.17"
    assert all(f.subject.startswith("GLIBC_") for f in versions)
    assert all(f"`__glibc >=2.17` of {declared}" in f.message for f in versions), [f.message for f in versions]
    (tmp_path / "none").mkdir()
    silent = make(tmp_path / "none" / f"thelib-1.0-0{suffix}", LIBSTDCXX, ["libgcc >=13"])
    assert not [f for f in audit([str(silent)]).findings if f.rule == "symbol-version"]  # declares no glibc
