"""Small files are read whole, parsed once per content and never cached on disk
(``formats.copies``; issue 14 §1): counted, not timed — parses per distinct content, cache
entries written, and the records of every copy equal to a read of its own."""

from __future__ import annotations

import dataclasses
import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest

from linkaudit import formats
from linkaudit.cache.codec import encode_binary
from linkaudit.errors import InputError
from linkaudit.formats import copies, read_path

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
HELPER = SAMPLES / "loader/pyext/lib/libhelper.so"
PYEXT = SAMPLES / "loader/pyext/mod.cpython-311-x86_64-linux-gnu.so"


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths the readers parse (each call of ``formats._read``), in order."""
    seen: list[str] = []
    real = formats._read

    def counting(path, kind, buf, soft):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path, kind, buf, soft)

    monkeypatch.setattr(formats, "_read", counting)
    return seen


def _own_read(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[object] | str:
    """``_read`` of ``path`` alone, the ordinary way (``FileBytes``, no memo)."""
    with monkeypatch.context() as m:
        m.setattr(copies, "SMALL_FILE_BYTES", 0)
        return _read(path)


def _read(path: Path) -> list[object] | str:
    """The records ``read_path`` gives (every field: ``encode_binary``), or its error."""
    try:
        return [encode_binary(b) for b in read_path(str(path))]
    except InputError as exc:
        return f"{type(exc).__name__}: {exc.path}: {exc.reason} @ {exc.offset}"


def test_copies_of_one_content_are_parsed_once(tmp_path: Path, parses: list[str]) -> None:
    for i in range(40):
        shutil.copyfile(HELPER, tmp_path / f"lib{i}.so")
        shutil.copyfile(SAMPLES / "broken/libtorch_cuda.so", tmp_path / f"libcuda_copy{i}.so")
    read = [read_path(str(p)) for p in sorted(tmp_path.iterdir())]
    assert len(parses) == 2  # one per distinct content (80 before)
    assert [b.path for bs in read for b in bs] == [str(p) for p in sorted(tmp_path.iterdir())]


def test_every_copy_reads_as_it_would_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every small sample (malformed ones included) under its own name and under others that
    change what the readers take from a path (an extension suffix, ``PyInit_<module>``, ``.pyd``,
    ``.so``): the records, or the error, equal those of the file read alone."""
    samples = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and 0 < p.stat().st_size <= copies.SMALL_FILE_BYTES)
    assert len(samples) > 50
    names = ["mod.cpython-311-x86_64-linux-gnu.so", "mod.so", "mod.pyd", "MOD.PYD", "libx.so", "x.dylib", "x"]
    for i, sample in enumerate(samples):
        for j, name in enumerate([sample.name, *names]):
            copy = tmp_path / f"{i}-{j}" / name
            copy.parent.mkdir()
            shutil.copyfile(sample, copy)
            assert _read(copy) == _own_read(copy, monkeypatch), (sample, name)


def test_a_python_extension_copy_keeps_its_kind(tmp_path: Path) -> None:
    kinds = {}
    for name in ["mod.cpython-311-x86_64-linux-gnu.so", "mod.so", "other.so"]:
        shutil.copyfile(PYEXT, tmp_path / name)
        (binary,) = read_path(str(tmp_path / name))
        kinds[name] = binary.kind.value
    assert kinds["mod.so"] == kinds["mod.cpython-311-x86_64-linux-gnu.so"] != kinds["other.so"]


def test_small_files_write_no_cache_entry(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses) -> None:  # type: ignore[no-untyped-def]
    """A tarball of 60 copies of one library, checked with the cache on: one parse, no entry
    written (60 of each before), and the report of ``--no-cache``."""
    stored: list[str] = []
    real = formats.cached_read

    def counting(store, key, path, read):  # type: ignore[no-untyped-def]
        stored.append(path)
        return real(store, key, path, read)

    monkeypatch.setattr(formats, "cached_read", counting)
    tarball = tmp_path / "many-1.0.tar.gz"
    data = HELPER.read_bytes()
    with tarfile.open(tarball, "w:gz") as tf:
        for i in range(60):
            info = tarfile.TarInfo(f"lib/d{i % 5}/lib{i}.so")
            info.size, info.mode = len(data), 0o755
            tf.addfile(info, io.BytesIO(data))
    argv = ["check", "--no-config", "--format", "json", str(tarball)]
    cached = json.loads(run_cli(*argv).stdout)
    assert len([p for p in parses if "/lib/d" in p]) == 1  # the host's libc is read too (the loader)
    assert not [p for p in stored if "/lib/d" in p]  # the host's libraries (large) are looked up
    copies.forget()
    plain = json.loads(run_cli("--no-cache", *argv).stdout)
    for report in (cached, plain):
        report["summary"].pop("seconds", None)
    assert cached == plain and cached["summary"]["audited"] == 60


def test_the_remembered_contents_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(copies, "MAX_REMEMBERED", 3)
    data = HELPER.read_bytes()
    for i in range(10):
        (tmp_path / f"lib{i}.so").write_bytes(data + bytes([i]))  # ten contents
        read_path(str(tmp_path / f"lib{i}.so"))
    assert len(copies._PARSED) == 3


def test_a_copy_is_its_own_record(tmp_path: Path) -> None:
    """The records handed to a copy are the first copy's but for ``path`` (frozen: nothing to share wrongly)."""
    shutil.copyfile(HELPER, tmp_path / "liba.so")
    shutil.copyfile(HELPER, tmp_path / "libb.so")
    (a,) = read_path(str(tmp_path / "liba.so"))
    (b,) = read_path(str(tmp_path / "libb.so"))
    assert a.path != b.path and encode_binary(dataclasses.replace(a, path=b.path)) == encode_binary(b)
    assert a.symbols is b.symbols  # one table: rules keyed by the table (duplicate-export) see it once


def test_copies_sharing_one_table_are_still_duplicate_exports(tmp_path: Path) -> None:
    """Copies of one small library share one parsed symbol table; two paths exporting the same
    strong names are a duplicate-export all the same (the hash-key filter counted repeats per
    table, not per library, and reported nothing for them)."""
    from linkaudit import AuditConfig, audit

    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(HELPER, tmp_path / "a/libhelper.so")
    shutil.copy(HELPER, tmp_path / "b/libhelper2.so")
    first, second = (read_path(str(tmp_path / p))[0] for p in ("a/libhelper.so", "b/libhelper2.so"))
    assert first.symbols is second.symbols  # the case at hand: one table, two libraries
    report = audit([str(tmp_path)], AuditConfig(target=None))
    (finding,) = [f for f in report.findings if f.rule == "duplicate-export"]
    assert "helper_scale" in finding.message


def test_small_tar_members_get_no_cache_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Staging a tarball of 60 small copies and one member over ``SMALL_FILE_BYTES`` with the
    cache on: one cache key (``tar_member_key``) and one placeholder tie (``register``), for the
    large member only (61 of each before: every small member's key was dead, as ``read_path``
    parses a small file from memory and never caches it)."""
    from linkaudit.cache import Cache
    from linkaudit.packages import staged_inputs, staging, tar

    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(tar, "active", lambda: Cache(str(tmp_path / "cache")))
    keys: list[str] = []
    ties: list[str] = []
    real_key, real_register = tar.tar_member_key, staging.register
    monkeypatch.setattr(tar, "tar_member_key", lambda *a: keys.append(a[3]) or real_key(*a))
    monkeypatch.setattr(staging, "register", lambda p, m: ties.append(p) or real_register(p, m))
    data = HELPER.read_bytes()
    large = data + bytes(copies.SMALL_FILE_BYTES)
    tarball = tmp_path / "many-1.0.tar.gz"
    with tarfile.open(tarball, "w:gz") as tf:
        for i, blob in enumerate([data] * 60 + [large]):
            info = tarfile.TarInfo(f"lib/d{i % 5}/lib{i}.so")
            info.size, info.mode = len(blob), 0o755
            tf.addfile(info, io.BytesIO(blob))
    with staged_inputs([str(tarball)]) as staged:
        assert not staged.errors
        root = Path(staged.paths[0])
        assert len(list(root.glob("lib/d*/lib*.so"))) == 61
    assert keys == ["lib/d0/lib60.so"]
    assert len(ties) == 1 and ties[0].endswith("lib/d0/lib60.so")


def test_with_path_is_replace() -> None:
    """``Binary.with_path`` (a slot copy) equals ``dataclasses.replace(binary, path=...)`` on every sample read."""
    samples = [p for p in SAMPLES.rglob("*.so") if p.is_file()][:40]
    for sample in samples:
        try:
            binaries = read_path(str(sample))
        except InputError:
            continue
        for b in binaries:
            moved = b.with_path("elsewhere/x.so")
            assert moved == dataclasses.replace(b, path="elsewhere/x.so") and moved.symbols is b.symbols


def test_with_path_copies_every_field() -> None:
    """Every field of ``Binary`` is carried by ``with_path`` (its one line a field is written by
    hand: a field added without its line, or two lines swapped, fails here), each the very object."""
    from linkaudit.model import Binary

    original = object.__new__(Binary)
    marks = {f.name: object() for f in dataclasses.fields(Binary)}
    for name, mark in marks.items():
        object.__setattr__(original, name, mark)
    moved = original.with_path("elsewhere/x.so")
    assert moved.path == "elsewhere/x.so"
    assert all(getattr(moved, name) is mark for name, mark in marks.items() if name != "path")


def test_the_mach_o_magics_are_the_readers() -> None:
    """``path_traits`` keys a Mach-O ``.so`` by its module name (a dylib exporting
    ``_PyInit_<module>`` is an extension): it knows a Mach-O file by the reader's own magics."""
    from linkaudit.formats import macho

    assert {*macho.THIN_MAGICS, *macho.FAT_MAGICS} == copies.MACHO_MAGICS
