"""Conda packages given together install into one prefix: two of them writing one path is
``file-clash`` (an error naming both; a note when both copies hold the same bytes), whatever their
format (``.tar.bz2`` or ``.conda``), whether the member is a binary or not, and whether its bytes
were written to the staging tree or held in memory (``formats.held``).  Their ``info/`` files
install nothing into the prefix and never clash.  (Before: each ``.tar.bz2`` was staged into a
root of its own, and no clash between conda packages was ever found.)"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from linkaudit import audit
from linkaudit.packages import staged_inputs

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
OTHER = (SAMPLES / "misc/libweak.so").read_bytes()


def _tar(members: dict[str, bytes]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return raw.getvalue()


def _package(directory: Path, name: str, suffix: str, members: dict[str, bytes]) -> str:
    """A conda package ``name-1.0-0`` + ``suffix`` installing ``members`` (and its info/ files)."""
    index = json.dumps({"name": name, "version": "1.0", "build": "0", "subdir": "linux-64", "depends": []})
    info = {"info/index.json": index.encode(), "info/files": "\n".join(members).encode()}
    path = directory / f"{name}-1.0-0{suffix}"
    if suffix == ".tar.bz2":
        import bz2

        path.write_bytes(bz2.compress(_tar({**info, **members})))
    else:
        compress = zstandard.ZstdCompressor().compress
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
            zf.writestr(f"pkg-{name}-1.0-0.tar.zst", compress(_tar(members)))
            zf.writestr(f"info-{name}-1.0-0.tar.zst", compress(_tar(info)))
    return str(path)


FORMATS = [(".tar.bz2", ".tar.bz2"), (".conda", ".conda"), (".tar.bz2", ".conda"), (".conda", ".tar.bz2")]


@pytest.mark.parametrize(("first", "other"), FORMATS)
@pytest.mark.parametrize("hold", [False, True])
def test_conda_packages_writing_one_path_clash(tmp_path: Path, first: str, other: str, hold: bool) -> None:
    a = _package(tmp_path, "foo", first, {"lib/libfoo.so": HELPER, "include/foo.h": b"int foo(void);\n"})
    b = _package(tmp_path, "bar", other, {"lib/libfoo.so": HELPER, "include/foo.h": b"int foo(int);\n"})
    c = _package(tmp_path, "baz", other, {"lib/libfoo.so": OTHER, "lib/libbaz.so": OTHER})
    with staged_inputs([a, b, c], hold=hold) as staged:
        got = {(k.path, k.first, k.second, k.identical) for k in staged.clashes}
        assert len(staged.paths) == 1  # one prefix
    assert got == {
        ("lib/libfoo.so", a, b, True),
        ("include/foo.h", a, b, False),
        ("lib/libfoo.so", a, c, False),
    }


@pytest.mark.parametrize(("first", "other"), FORMATS)
def test_conda_clash_is_reported_as_wheels_are(tmp_path: Path, first: str, other: str) -> None:
    """An error naming both packages; identical bytes a note; the first copy is the one audited."""
    a = _package(tmp_path, "foo", first, {"lib/libfoo.so": HELPER})
    b = _package(tmp_path, "bar", other, {"lib/libfoo.so": HELPER})
    c = _package(tmp_path, "baz", other, {"lib/libfoo.so": OTHER})
    report = audit([a, b, c])
    clashes = {(f.file, f.severity.value) for f in report.findings if f.rule == "file-clash"}
    assert clashes == {(f"{b}!lib/libfoo.so", "note"), (f"{c}!lib/libfoo.so", "error")}
    text = next(f.message for f in report.findings if f.file == f"{c}!lib/libfoo.so")
    assert a in text and c in text
    assert [f.path for f in report.files] == [f"{a}!lib/libfoo.so"]
