"""A link member of one conda package (hard or symbolic) installing a path another package of the
prefix installs (a file, binary or not, or a link) is a ``file-clash`` naming both packages, as two
files are — whichever package is staged first — never the linking package's own "a symlink member
of a name a file or directory member also has" unreadable input (before: foo's hard-linked
``lib/libh.so`` against bar's file ``lib/libh.so`` was foo's unreadable-input, and bar went unnamed;
a link against an earlier package's link, or against a file that is no binary, was said nowhere)."""

from __future__ import annotations

import bz2
import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard

from linkaudit import AuditConfig, audit

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
OTHER = (SAMPLES / "misc/libweak.so").read_bytes()
PATH = "lib/libh.so"


def _tar(members: list[tuple[str, bytes] | tarfile.TarInfo]) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tf:
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
                continue
            info = tarfile.TarInfo(m[0])
            info.size = len(m[1])
            tf.addfile(info, io.BytesIO(m[1]))
    return raw.getvalue()


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def _package(directory: Path, name: str, suffix: str, members: list[tuple[str, bytes] | tarfile.TarInfo]) -> str:
    index = ("info/index.json", json.dumps({"name": name, "version": "1.0", "build": "0"}).encode())
    path = directory / f"{name}-1.0-0{suffix}"
    if suffix == ".tar.bz2":
        path.write_bytes(bz2.compress(_tar([*members, index])))
    else:
        compress = zstandard.ZstdCompressor().compress
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("metadata.json", '{"conda_pkg_format_version": 2}')
            zf.writestr(f"pkg-{name}-1.0-0.tar.zst", compress(_tar(members)))
            zf.writestr(f"info-{name}-1.0-0.tar.zst", compress(_tar([index])))
    return str(path)


def _foo(kind: bytes) -> list[tuple[str, bytes] | tarfile.TarInfo]:
    target = "lib/libfoo.so" if kind == tarfile.LNKTYPE else "libfoo.so"  # a hard link names a member
    return [("lib/libfoo.so", HELPER), _link(PATH, target, kind)]


OTHERS = {
    "binary": [(PATH, OTHER)],
    "ld-script": [(PATH, b"/* GNU ld script */\nINPUT(libfoo.so)\n")],  # no binary, passed over
    "symlink": [("lib/libbar.so", OTHER), _link(PATH, "libbar.so", tarfile.SYMTYPE)],
}


@pytest.mark.parametrize("suffix", [".conda", ".tar.bz2"])
@pytest.mark.parametrize("kind", [tarfile.LNKTYPE, tarfile.SYMTYPE], ids=["hardlink", "symlink"])
@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("link_first", [False, True], ids=["file-first", "link-first"])
def test_a_link_clashing_with_another_packages_member_is_a_file_clash_naming_both(
    tmp_path: Path, suffix: str, kind: bytes, other: str, link_first: bool
) -> None:
    foo = _package(tmp_path, "foo", suffix, _foo(kind))
    bar = _package(tmp_path, "bar", suffix, OTHERS[other])
    first, second = (foo, bar) if link_first else (bar, foo)
    report = audit([first, second], AuditConfig(target=None))
    assert not [f for f in report.findings if f.rule == "unreadable-input"], report.findings
    clashes = [f for f in report.findings if f.rule == "file-clash"]
    assert [(f.evidence["path"], list(f.evidence["packages"])) for f in clashes] == [(PATH, [first, second])]
    assert clashes[0].severity.value == "error" and first in clashes[0].message and second in clashes[0].message
    assert all(f.status.value == "audited" for f in report.files)


def test_a_link_of_the_package_itself_over_its_own_file_is_still_its_own_error(tmp_path: Path) -> None:
    """Within one package the link is not made and said so (tar -x keeps whichever comes last)."""
    foo = _package(tmp_path, "foo", ".conda", [(PATH, HELPER), _link(PATH, "libfoo.so", tarfile.SYMTYPE)])
    report = audit([foo], AuditConfig(target=None))
    assert not [f for f in report.findings if f.rule == "file-clash"]
    assert any(f.rule == "unreadable-input" and "symlink member" in f.message for f in report.findings)
