"""The members of tar-based packages (a conda ``.tar.bz2``, a ``.conda``'s ``pkg-*.tar.zst``) are
cached by their package's key plus their name, size, mtime and offset (``cache.tar_member_key``),
not by the staged file's own (a new inode every run, never hit again): a second check of an
unchanged package parses no member and writes no entry, and reports as ``--no-cache``."""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path

import pytest

from linkaudit import formats
from linkaudit.cache import Cache

CONDA = Path(__file__).resolve().parent.parent / "sample_bins/conda"


@pytest.fixture(autouse=True)
def _small_files_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample's members are tiny: lower the threshold under which files are never cached."""
    monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 0)


class Counts:
    """Parses of the package's members (``formats.read_bytes``) and entries written for them
    (``Cache.put``) in this process; the host's libc, read for the sysroot, aside."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.parses, self.puts = 0, 0
        real_read, real_put = formats.read_bytes, Cache.put

        def read(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            self.parses += "/lib/libconda" in path
            return real_read(path, *args, **kwargs)

        def put(cache, key, binaries):  # type: ignore[no-untyped-def]
            self.puts += any("/lib/libconda" in b.path for b in binaries)
            return real_put(cache, key, binaries)

        monkeypatch.setattr(formats, "read_bytes", read)
        monkeypatch.setattr(Cache, "put", put)

    def take(self) -> tuple[int, int]:
        """``(parses, puts)`` since the last call."""
        counts = self.parses, self.puts
        self.parses, self.puts = 0, 0
        return counts


def _report(run_cli, *args: str) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = run_cli(*args, "--format", "json", "--no-config", "--jobs", "1")
    report = json.loads(result.stdout)
    report["summary"].pop("seconds", None)
    return report  # type: ignore[no-any-return]


def _plain(run_cli, package: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return _report(run_cli, "--no-cache", "check", str(package))


@pytest.mark.parametrize("name", ["condademo-1.0-0.tar.bz2", "condademo-1.0-0.conda"])
def test_a_second_check_of_a_conda_package_parses_no_member(run_cli, tmp_path: Path, monkeypatch, name: str) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "c"))
    package = CONDA / name
    plain = _plain(run_cli, package)
    counts = Counts(monkeypatch)
    assert _report(run_cli, "check", str(package)) == plain
    parses, puts = counts.take()
    assert parses == puts == 2  # lib/libcondademo.so, lib/libcondahelper.so
    entries = sorted((tmp_path / "c").rglob("*.bin"))
    assert _report(run_cli, "check", str(package)) == plain
    assert counts.take() == (0, 0)  # every member found by its package's key
    assert sorted((tmp_path / "c").rglob("*.bin")) == entries


def _repacked(source: Path, dest: Path, change: str | None) -> None:
    """``source`` (a ``.tar.bz2``) written again to ``dest``, members in order with their names,
    sizes and mtimes; ``change``: the member one byte of which (in a run of zero padding,
    never read) is changed."""
    out = io.BytesIO()
    with tarfile.open(source) as tf, tarfile.open(fileobj=out, mode="w:bz2") as new:
        for info in tf.getmembers():
            data = tf.extractfile(info).read() if info.isfile() else b""  # type: ignore[union-attr]
            if info.name == change:
                at = data.index(b"\0" * 64, 0x100) + 32
                data = data[:at] + b"\1" + data[at + 1 :]
            new.addfile(info, io.BytesIO(data) if info.isfile() else None)
    dest.write_bytes(out.getvalue())


def test_a_changed_package_is_parsed_again(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """One byte of a member changed, its name, size and mtime the same: the package file's key
    changed (here its ctime and content: it was just written, so racy), and so every member's."""
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "c"))
    package = tmp_path / "condademo-1.0-0.tar.bz2"
    _repacked(CONDA / package.name, package, None)
    plain = _plain(run_cli, package)
    counts = Counts(monkeypatch)
    assert _report(run_cli, "check", str(package)) == plain
    assert counts.take() == (2, 2)
    st = package.stat()
    _repacked(CONDA / package.name, package, "lib/libcondademo.so")
    os.utime(package, ns=(st.st_atime_ns, st.st_mtime_ns))  # the same mtime: the change is in ctime and bytes
    assert _report(run_cli, "check", str(package)) == plain  # the byte changed is padding
    parses, puts = counts.take()
    assert parses == 2 and puts == 2  # neither member trusted from the old package's entries


def test_a_whole_member_read_under_another_name_has_another_key(tmp_path: Path) -> None:
    """The readers take a file's kind from its name (``copies.path_traits``): a member read
    through a symlink of another name is looked up under a key of its own."""
    from linkaudit.cache import tar_member_key
    from linkaudit.formats import _key
    from linkaudit.formats.ranges import Member

    staged = tmp_path / "mod.cpython-311-x86_64-linux-gnu.so"
    staged.write_bytes(b"\x7fELF")
    st = staged.stat()
    member = Member(None, tar_member_key(str(staged), st, "", "lib/x", 4, 0, 512, "tar"))
    one = _key(-1, st, str(staged), True, member)
    assert one.name != _key(-1, st, str(tmp_path / "mod.so"), True, member).name
    assert one.name != _key(-1, st, str(staged), False, member).name
    assert one.name == _key(-1, st, str(tmp_path / "other" / staged.name), True, member).name


def test_a_replaced_member_is_forgotten(tmp_path: Path) -> None:
    """A tar member replaced by a second copy of its name is removed: its tie goes first, so a
    later file given its inode is never read by the old member's key."""
    from linkaudit.cache import tar_member_key
    from linkaudit.formats.ranges import Member, forget, register, source_of

    staged = tmp_path / "libx.so"
    staged.write_bytes(b"\x7fELF")
    register(str(staged), Member(None, tar_member_key(str(staged), staged.stat(), "", "x", 4, 0, 0, "tar")))
    assert source_of(staged.stat()) is not None
    forget(str(staged))
    assert source_of(staged.stat()) is None
