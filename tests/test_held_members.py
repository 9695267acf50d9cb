"""A tarball's small binary members held in memory (``formats.held``) audit exactly as written ones.

Without the loader emulation only the readers look at a staged tree, so members of at most
``copies.SMALL_FILE_BYTES`` are never written (issue 14 §1: creating, reading and removing 20,000
files cost 3.5 of 5.8 CPU seconds).  Each tarball below is audited twice with the loader off, once
with holding turned off (``MAX_HELD_BYTES = 0``: every member written, as before), and the reports
must be equal; counting tests say what was held and written.
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.formats import held
from linkaudit.packages import staging

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
MOD = (SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so").read_bytes()
NVRTC = (SAMPLES / "fixed/libnvrtc.so.12").read_bytes()
LARGE = HELPER + bytes(70 << 10)  # past SMALL_FILE_BYTES: written and read as before
NO_LOADER = AuditConfig(target=None)


def _info(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def _tarball(path: Path, members: list[tuple[str, bytes] | tarfile.TarInfo], mode: str = "w:gz") -> str:
    with tarfile.open(path, mode) as tf:  # type: ignore[call-overload]
        for m in members:
            if isinstance(m, tarfile.TarInfo):
                tf.addfile(m)
                continue
            info = tarfile.TarInfo(m[0])
            info.size = len(m[1])
            tf.addfile(info, io.BytesIO(m[1]))
    return str(path)


PLAIN = [
    ("lib/libhelper.so", HELPER),
    ("lib/copy/libhelper.so", HELPER),
    ("pkg/mod.cpython-311-x86_64-linux-gnu.so", MOD),
    ("lib/libnvrtc.so.12", NVRTC),
    ("lib/large.so", LARGE),
    ("lib/with space (1).so", HELPER),
    ("README", b"not a binary"),
    ("lib/libfake.so", b"INPUT(-lc)\n"),
    ("lib/libtwice.so", MOD),
    ("lib/libtwice.so", HELPER),  # a second member of one name replaces the first
    ("lib/libempty.so", b""),
]
LINKED = [
    *PLAIN,
    _info("lib/libhelper.so.1", tarfile.SYMTYPE, "libhelper.so"),
    _info("lib/hard.so", tarfile.LNKTYPE, "lib/copy/libhelper.so"),
    _info("lib/dangling.so", tarfile.SYMTYPE, "nothing.so"),
]
HOSTILE = [
    _info("lib/dir", tarfile.SYMTYPE, "../../.."),
    ("lib/dir/escaped.so", HELPER),
    ("lib/libhelper.so", HELPER),
    ("lib/libhelper.so/below.so", HELPER),  # a file where a directory would be
    ("../outside.so", HELPER),
    ("lib/libzero.so", b"\x7fELF" + bytes(20 << 20)),
]


def _both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, paths: list[str], config: AuditConfig = NO_LOADER):  # type: ignore[no-untyped-def]
    """The reports with members held and with every member written."""
    kept = audit(paths, config)
    monkeypatch.setattr(held, "MAX_HELD_BYTES", 0)
    written = audit(paths, config)
    return kept, written


def _same(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.files == b.files
    assert a.findings == b.findings
    assert replace(a, seconds=0) == replace(b, seconds=0)


@pytest.mark.parametrize("members", [PLAIN, LINKED, HOSTILE], ids=["plain", "links", "hostile"])
@pytest.mark.parametrize("suffix", [".tar.gz", ".tar"])
def test_held_members_audit_as_written_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, members, suffix) -> None:  # type: ignore[no-untyped-def]
    tarball = _tarball(tmp_path / f"pkg{suffix}", members, "w:gz" if suffix == ".tar.gz" else "w")
    kept, written = _both(tmp_path, monkeypatch, [tarball])
    _same(kept, written)
    assert any(f.status.value == "audited" for f in kept.files)
    assert held.names_in(str(tmp_path)) == [] and not held._BYTES  # nothing held after the run


def test_several_tarballs_and_a_directory_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    one = _tarball(tmp_path / "one.tar.gz", PLAIN)
    two = _tarball(tmp_path / "two.tar.gz", LINKED)
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "libhelper.so").write_bytes(HELPER)
    kept, written = _both(tmp_path, monkeypatch, [one, str(loose), two])
    _same(kept, written)
    assert {f.path for f in kept.files} >= {
        f"{one}!lib/libhelper.so",
        f"{two}!lib/libhelper.so",
        str(loose / "libhelper.so"),
    }


def _counted(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], list[str]]:
    holds: list[str] = []
    writes: list[str] = []
    real_hold, real_write = held.hold, staging.write_member

    def hold(path: str, data: bytes) -> bool:
        holds.append(path)
        return real_hold(path, data)

    def write(src, head, dest, *args, **kwargs):  # type: ignore[no-untyped-def]
        writes.append(dest)
        return real_write(src, head, dest, *args, **kwargs)

    monkeypatch.setattr(held, "hold", hold)
    monkeypatch.setattr(staging, "write_member", write)
    return holds, writes


def test_small_members_are_never_written_without_the_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tarball = _tarball(tmp_path / "pkg.tar.gz", PLAIN)
    holds, writes = _counted(monkeypatch)
    audit([tarball], NO_LOADER)
    # every small binary held (the replaced one too, then released); only the large one written
    assert len(holds) == 7 and [Path(w).name for w in writes] == ["large.so"]


def test_members_are_written_with_the_loader(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader emulation, the rules after it and ``--verify`` open staged files themselves."""
    tarball = _tarball(tmp_path / "pkg.tar.gz", PLAIN)
    holds, writes = _counted(monkeypatch)
    audit([tarball])
    audit([tarball], replace(NO_LOADER, verify=True))
    assert holds == [] and len(writes) == 16  # 8 binary members, twice


def test_held_bytes_are_bounded_and_shared_by_equal_contents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal contents are held once; past ``MAX_HELD_BYTES`` members are written, not held."""
    copies = [(f"lib/d{i}/libhelper.so", HELPER) for i in range(50)]
    distinct = [(f"lib/x{i}/lib.so", HELPER + bytes([i]) * 64) for i in range(10)]
    tarball = _tarball(tmp_path / "many.tar.gz", [*copies, *distinct])
    monkeypatch.setattr(held, "MAX_HELD_BYTES", len(HELPER) * 5)
    holds, writes = _counted(monkeypatch)
    report = audit([tarball], NO_LOADER)
    assert len(holds) == 60
    assert len(writes) == 0  # a member past the limit is written by ``held.write_file``
    assert sum(f.status.value == "audited" for f in report.files) == 60


def test_each_content_held_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal members are found by their bytes (a dict keyed by them), and a content's SHA-256 —
    the identity copies are parsed once by — is computed once, when first asked: 60 members of 3
    contents, 3 digests (it was one a member: 3.6 µs each, 0.7 s of 200,000)."""
    import hashlib

    members = [(f"lib/d{i}/lib{i}.so", (HELPER, MOD, NVRTC)[i % 3]) for i in range(60)]
    tarball = _tarball(tmp_path / "three.tar.gz", members)
    real = hashlib.sha256
    hashed: list[int] = []

    def counted(data: bytes = b"", *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        hashed.append(len(data))
        return real(data, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(held.hashlib, "sha256", counted)
    report = audit([tarball], NO_LOADER)
    assert sum(f.status.value == "audited" for f in report.files) == 60
    assert sorted(hashed) == sorted({len(HELPER), len(MOD), len(NVRTC)})
