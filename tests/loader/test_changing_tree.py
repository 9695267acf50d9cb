"""A build tree written while it is audited: the loader never takes one file's records for another's.

A file the loader knew by its inode alone was given another file's symbols when that inode was
freed and reused (``unlink`` then create, as build systems and ``cp`` do): ``duplicate-export``
said liba.so exported ``fb``, which only libb.so ever defined. The view now knows a file by its
inode with its size, mtime and ctime, and seeds itself with an input only while that input's file
still has the size it was read at.
"""

from __future__ import annotations

from pathlib import Path

from linkaudit.formats import read_path
from linkaudit.loader.fs import FileSystemView

from .dagbuild import Lib, elf_bytes

LIBA = elf_bytes(Lib("liba.so", "liba.so", exports=("fa",)))
LIBB = elf_bytes(Lib("liba.so", "liba.so", exports=("fb", "fb2", "fb3")))  # another size


def _exports(binary) -> set[str]:  # type: ignore[no-untyped-def]
    return {s.name for s in binary.symbols if s.defined and s.name in ("fa", "fb")}


def test_an_input_rewritten_after_it_was_read_is_read_again(tmp_path: Path) -> None:
    """Read, then rewritten in place (the same inode, another size) before the loader starts:
    the loader reads what is there now, not the record read before."""
    path = tmp_path / "liba.so"
    path.write_bytes(LIBA)
    read = read_path(str(path))[0]
    assert _exports(read) == {"fa"} and len(LIBA) != len(LIBB)
    path.write_bytes(LIBB)  # truncated and written: the inode stays
    fs = FileSystemView()
    fs.remember(read)
    assert _exports(fs.read_binary(str(path))) == {"fb"}


def test_a_file_changed_after_the_loader_read_it_is_not_the_same_file(tmp_path: Path) -> None:
    """Remembered while unchanged, then rewritten in its inode: a new view of it (a later stat)
    finds a file of another size and ctime, read anew."""
    path = tmp_path / "liba.so"
    path.write_bytes(LIBA)
    fs = FileSystemView()
    fs.remember(read_path(str(path))[0])
    assert _exports(fs.read_binary(str(path))) == {"fa"}  # remembered: the same file
    path.write_bytes(LIBB)
    later = FileSystemView()
    later._binaries.update(fs._binaries)  # what a view keyed by inode alone would still hold
    assert _exports(later.read_binary(str(path))) == {"fb"}


def test_a_file_gone_between_the_walk_and_its_read_says_so(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A file the walk listed and a build removed before it was read: an unreadable input saying
    the tree changed while check ran ("no such file or directory" alone read as a wrong path given);
    the other file is audited."""
    import importlib
    import json

    audit_module = importlib.import_module("linkaudit.audit")

    (tmp_path / "liba.so").write_bytes(LIBA)
    (tmp_path / "libgone.so").write_bytes(LIBB)
    real = audit_module.read_paths

    def removed_first(paths, *args, **kwargs):  # type: ignore[no-untyped-def]
        (tmp_path / "libgone.so").unlink()
        return real(paths, *args, **kwargs)

    monkeypatch.setattr(audit_module, "read_paths", removed_first)
    r = run_cli("check", "--no-config", "--no-cache", "--format", "json", str(tmp_path))
    doc = json.loads(r.stdout)
    (gone,) = [f for f in doc["findings"] if f["rule"] == "unreadable-input"]
    assert gone["file"] == str(tmp_path / "libgone.so") and "gone when read" in gone["message"]
    assert [f["path"] for f in doc["files"] if f["status"] == "audited"] == [str(tmp_path / "liba.so")]
    assert r.exit_code == 2
