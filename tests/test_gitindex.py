"""``--source DIR``: which wrappers git tracks, read from the checkout's index — git is never run.

``git ls-files`` in a tree handed to us runs what its ``.git/config`` says (``core.fsmonitor``: any
shell command, run before listing): the input was executed.  The index reader lists what
``git ls-files --recurse-submodules`` lists, for index versions 2, 3 (extended flags) and 4 (prefix
compressed paths), SHA-1 and SHA-256 repositories, a subdirectory of a checkout and a submodule,
and says nothing (``None``) of an index it cannot read.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from tools import needs, require

from linkaudit.link.gitindex import UnreadableIndex, entries, tracked_files
from linkaudit.link.sources import scan


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(cwd), "GIT_ALLOW_PROTOCOL": "file"}
    return subprocess.run(
        [require("git"), "-c", "protocol.file.allow=always", *args], cwd=cwd, env=env, check=True, capture_output=True
    ).stdout.decode()


def _repo(path: Path, *init: str) -> Path:
    path.mkdir(parents=True)
    _git(path, "init", "-q", *init)
    for name in ("a.cpp.AVX2.cpp", "sub dir/b.cpp.DEFAULT.cpp.DEFAULT.cpp", "sub dir/deeper/c.txt", "zz.c"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(name)
    _git(path, "add", ".")
    _git(path, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    return path


def _ls_files(top: Path) -> set[str]:
    listed = _git(top, "ls-files", "-z", "--recurse-submodules").split("\0")
    return {os.path.normpath(os.path.join(top, p)) for p in listed if p}


@needs("git")
@pytest.mark.parametrize("version", ["2", "3", "4"])
def test_the_index_lists_what_git_lists(tmp_path: Path, version: str) -> None:
    repo = _repo(tmp_path / "r")
    (repo / "later.cpp.AVX512.cpp").write_text("x")
    _git(repo, "add", "-N", "later.cpp.AVX512.cpp")  # intent to add: an extended flag (version 3 and 4)
    _git(repo, "update-index", "--index-version", version)
    assert tracked_files(str(repo)) == _ls_files(repo)
    assert tracked_files(str(repo / "sub dir")) == _ls_files(repo / "sub dir")  # a subdirectory of the checkout
    assert tracked_files(str(tmp_path)) is None  # no checkout here


@needs("git")
def test_sha256_repository_and_submodule(tmp_path: Path) -> None:
    try:
        repo = _repo(tmp_path / "r", "--object-format=sha256")
    except subprocess.CalledProcessError:
        pytest.skip("this git has no SHA-256 repositories (git 2.29 and later)")
    assert tracked_files(str(repo)) == _ls_files(repo)
    outer = _repo(tmp_path / "outer")
    inner = _repo(tmp_path / "inner")
    _git(outer, "submodule", "add", "-q", str(inner), "third_party/inner")
    got = tracked_files(str(outer))
    assert got == _ls_files(outer) and str(outer / "third_party/inner/zz.c") in got


@needs("git")
def test_a_source_tree_runs_nothing_its_git_config_names(tmp_path: Path) -> None:
    """``core.fsmonitor`` is a command ``git ls-files`` runs: reading the index runs nothing, and
    the wrappers' tracked flags are still known."""
    repo = _repo(tmp_path / "src")
    (repo / "new.cpp.AVX2.cpp.AVX2.cpp").write_text("x")  # a stacked wrapper git does not track
    marker = tmp_path / "ran"
    _git(repo, "config", "core.fsmonitor", f"touch {marker}; false")
    found = {Path(s.path).name: s.tracked for s in scan(str(repo))}
    assert not marker.exists()
    assert found == {"a.cpp.AVX2.cpp": True, "b.cpp.DEFAULT.cpp.DEFAULT.cpp": True, "new.cpp.AVX2.cpp.AVX2.cpp": False}


@needs("git")
def test_an_index_it_cannot_read_says_nothing(tmp_path: Path) -> None:
    repo = _repo(tmp_path / "r")
    _git(repo, "update-index", "--split-index")
    assert tracked_files(str(repo)) is None  # entries in a shared index file
    index = repo / ".git/index"
    for data in (b"", b"DIRC", b"DIRC\0\0\0\x05\0\0\0\x01", b"DIRC\0\0\0\x02\xff\xff\xff\xff" + bytes(100)):
        index.write_bytes(data)
        assert tracked_files(str(repo)) is None


def test_entries_refuse_what_runs_past_the_end() -> None:
    header = b"DIRC" + (4).to_bytes(4, "big") + (2).to_bytes(4, "big")
    entry = bytes(40 + 20) + (1).to_bytes(2, "big") + b"\xff\xff\xff\xff\x7f"  # a varint past 64 bits
    for data in (header + entry, header + bytes(62) + b"abc"):
        with pytest.raises(UnreadableIndex):
            entries(data)


def _entry(name: bytes, mode: int = 0o100644) -> bytes:
    """One version 2 index entry: zero stat data but ``mode``, a zero object id, ``name`` NUL-padded."""
    body = bytes(24) + mode.to_bytes(4, "big") + bytes(12) + bytes(20) + len(name).to_bytes(2, "big") + name
    return body + b"\0" * (8 - len(body) % 8)


def _index(names: list[tuple[bytes, int]]) -> bytes:
    data = b"DIRC" + (2).to_bytes(4, "big") + len(names).to_bytes(4, "big") + b"".join(_entry(*n) for n in names)
    return data + bytes(20)


def _checkout(tmp_path: Path, names: list[tuple[bytes, int]]) -> Path:
    root = tmp_path / "co"
    (root / ".git").mkdir(parents=True)
    (root / ".git/index").write_bytes(_index(names))
    return root


@pytest.mark.parametrize("which", [".git/index", ".git/config", ".git", ".git/index -> /dev/zero"])
def test_git_files_that_are_not_regular_files_are_never_waited_on(tmp_path: Path, which: str) -> None:
    """A FIFO as ``.git/index``, ``.git/config`` or ``.git`` (``--source`` hung for ever, opening it
    to read), or an index that is a device (read to the 256 MiB cap): nothing known, at once."""
    import signal

    root = _checkout(tmp_path, [(b"a.c", 0o100644)])
    name = which.split(" ")[0]
    if name == ".git":
        (root / ".git/index").unlink()
        (root / ".git").rmdir()
    else:
        (root / name).unlink(missing_ok=True)
    if "->" in which:
        os.symlink("/dev/zero", root / name)
    else:
        os.mkfifo(root / name)

    class Hung(BaseException):  # not an OSError, which tracked_files takes for "nothing known"
        pass

    def hung(*_: object) -> None:
        raise Hung(f"tracked_files waited on {which}")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)  # a hang fails this test, not the suite
    try:
        got = tracked_files(str(root))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert got == ({str(root / "a.c")} if name == ".git/config" else None)


def test_submodules_that_lead_back_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Gitlinks named ``.``, ``./.``, ``././.`` ... each lead back to the checkout itself: read once
    (4 of them read it 4**8 times: 286 s from an 80 KB index)."""
    from linkaudit.link import gitindex

    links = [(b"." + b"/." * i, gitindex.GITLINK) for i in range(4)]
    root = _checkout(tmp_path, [*links, (b"src/a.c", 0o100644)])
    reads: list[str] = []
    real = gitindex.entries
    monkeypatch.setattr(gitindex, "entries", lambda data, oid=20: reads.append("x") or real(data, oid))
    assert tracked_files(str(root)) == {str(root / "src/a.c")}
    assert len(reads) == 1


def test_a_version_4_index_cannot_spell_paths_past_path_max(tmp_path: Path) -> None:
    """Version 4 builds each path from the one before: entries that each drop a byte and add one
    spelled 20,000 paths of 100 KB from a 1.4 MB index (1.98 GB; MemoryError, exit 3 under a
    limit).  A path longer than PATH_MAX is refused: the index says nothing."""
    from linkaudit.link.gitindex import MAX_PATH_BYTES

    def v4(name: bytes, drop: int) -> bytes:
        return (
            bytes(24)
            + (0o100644).to_bytes(4, "big")
            + bytes(32)
            + len(name).to_bytes(2, "big")
            + bytes([drop])
            + name
            + b"\0"
        )

    body = v4(b"a" * (MAX_PATH_BYTES - 2), 0) + b"".join(v4(b"b", 1) for _ in range(3))
    header = b"DIRC" + (4).to_bytes(4, "big") + (4).to_bytes(4, "big")
    assert [len(n) for n, _ in entries(header + body + bytes(20))] == [MAX_PATH_BYTES - 2] * 4
    longer = v4(b"a" * (MAX_PATH_BYTES - 2), 0) + v4(b"bb", 0)
    with pytest.raises(UnreadableIndex, match="PATH_MAX"):
        entries(b"DIRC" + (4).to_bytes(4, "big") + (2).to_bytes(4, "big") + longer + bytes(20))
