"""Tarballs found in a directory given: a ``.tar.bz2`` is conda's format by its name and is staged
as a conda package, found or given; every other tarball (``.tar``, ``.tar.gz``, ``.tgz``,
``.tar.xz``, ``.tar.zst``, ...: sdists, release and source archives) is named, not staged — the
directory is never said to hold nothing when it holds one, and the note says how to audit it."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from linkaudit import audit

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
BROKEN = (SAMPLES / "broken/libtorch_cuda.so").read_bytes()  # driver-link errors
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()


def _tar(path: Path, members: dict[str, bytes], mode: str) -> Path:
    with tarfile.open(path, mode) as tf:  # type: ignore[call-overload]
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


RELEASES = [
    ("libfoo-1.0-linux-x86_64.tar.gz", "w:gz"),
    ("libfoo-1.0-linux-x86_64.tgz", "w:gz"),
    ("libfoo-1.0-linux-x86_64.tar.xz", "w:xz"),
    ("libfoo-1.0-linux-x86_64.tar", "w"),
]


@pytest.mark.parametrize(("name", "mode"), RELEASES)
def test_a_directory_of_release_tarballs_names_them_and_says_how_to_audit_them(
    run_cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    name: str,
    mode: str,
) -> None:
    rel = tmp_path / "rel"
    rel.mkdir()
    tarball = _tar(rel / name, {"lib/libtorch_cuda.so": BROKEN}, mode)
    given = audit([str(tarball)])  # by name: audited, its errors found
    assert [f.path for f in given.files] == [f"{tarball}!lib/libtorch_cuda.so"]
    assert any(f.rule == "driver-link" for f in given.findings)
    report = audit([str(rel)])
    notes = [f for f in report.findings if f.rule == "no-binaries"]
    assert len(notes) == 1 and notes[0].file == str(rel)
    assert "nothing to audit" not in notes[0].message and "holds no binary" not in notes[0].message
    assert str(tarball) in notes[0].message and f"linkaudit check {tarball}" in notes[0].message
    assert list(notes[0].evidence["tarballs"]) == [str(tarball)]
    r = run_cli("check", "--no-config", "--no-cache", "--format", "json", str(rel))
    assert r.exit_code == 0 and '"tarballs"' in r.stdout  # the schema-checked JSON carries them


def test_tarballs_beside_other_files_are_named_and_the_count_is_kept(tmp_path: Path) -> None:
    top = tmp_path / "dl"
    (top / "sub").mkdir(parents=True)
    (top / "README").write_text("no binary here\n")
    names = [_tar(top / f"r{i}.tar.gz", {"lib/libhelper.so": HELPER}, "w:gz") for i in range(4)]
    names.append(_tar(top / "sub" / "src.tar.xz", {"README": b"x"}, "w:xz"))
    note = next(f for f in audit([str(top)]).findings if f.rule == "no-binaries")
    assert "5 tarballs" in note.message and "and 2 more" in note.message
    assert sorted(note.evidence["tarballs"]) == sorted(map(str, names))


def test_a_binary_or_a_wheel_beside_a_tarball_is_audited_and_no_note_is_made(tmp_path: Path) -> None:
    """A dist/ holding an sdist beside the binaries: the binaries audited, the sdist not staged
    (slow, and no part of what a wheelhouse check means), and no note for it."""
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "libhelper.so").write_bytes(HELPER)
    _tar(dist / "pkg-1.0.tar.gz", {"pkg-1.0/lib/libtorch_cuda.so": BROKEN}, "w:gz")
    report = audit([str(dist)])
    assert [f.path for f in report.files] == [str(dist / "libhelper.so")]
    assert not [f for f in report.findings if f.rule in ("no-binaries", "driver-link")]


def test_a_tar_bz2_in_a_directory_is_staged_as_a_conda_package_as_when_given(tmp_path: Path) -> None:
    """One rule by name: ``.tar.bz2`` is conda's format, in a directory as on the command line
    (conda-bld's output); it is audited, with or without an ``info/index.json``."""
    top = tmp_path / "bld"
    top.mkdir()
    bz2 = _tar(top / "libfoo-1.0-linux-x86_64.tar.bz2", {"lib/libtorch_cuda.so": BROKEN}, "w:bz2")
    found = audit([str(top)])
    assert [f.path for f in found.files] == [f"{bz2}!lib/libtorch_cuda.so"]
    assert not [f for f in found.findings if f.rule == "no-binaries"]
    given = audit([str(bz2)])
    assert [f.path for f in given.files] == [f.path for f in found.files]
