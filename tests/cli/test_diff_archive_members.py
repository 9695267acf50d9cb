"""Archive members in ``check`` and ``diff``: every member is a file of its own, and members of
one name (``ar q`` appends a second ``foo.o``) are told apart by their place, as ``ar``'s ``N``
count modifier names them: ``libx.a(foo.o)``, ``libx.a(foo.o#2)``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from linkaudit.formats.archive import read_archive
from tests.formats.arbuild import archive
from tests.formats.elfbuild import relocatable
from tests.link.test_link_line_bounds import _coff

A = relocatable([(b"foo", 0x12, 1)])
B = relocatable([(b"h", 0x12, 1), (b"g", 0x10, 0)])
B2 = relocatable([(b"h", 0x12, 1), (b"g", 0x10, 0), (b"k", 0x10, 0)])  # a new undefined k


def _write(path: Path, members: list[tuple[bytes, bytes]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(archive(members))
    return path


def _diff(run_cli, old: Path, new: Path) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    r = run_cli("diff", "--no-config", "--no-cache", "--no-loader", "--format", "json", str(old), str(new))
    assert r.exit_code in (0, 1), r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


@pytest.mark.parametrize(
    ("members", "names"),
    [
        ([(b"foo.o", A), (b"foo.o", B), (b"bar.o", A), (b"foo.o", B2)], ["foo.o", "foo.o#2", "bar.o", "foo.o#3"]),
        ([(b"x.obj", _coff([b"f"], [])), (b"x.obj", _coff([b"g"], [b"f"]))], ["x.obj", "x.obj#2"]),
        # a member literally named as a count would name one: the count steps past it
        ([(b"foo.o", A), (b"foo.o", B), (b"foo.o#2", B2)], ["foo.o", "foo.o#3", "foo.o#2"]),
        (
            [(b"foo.o#2", A), (b"foo.o", B), (b"foo.o", B2), (b"foo.o", A), (b"foo.o#3", B)],
            ["foo.o#2", "foo.o", "foo.o#4", "foo.o#5", "foo.o#3"],
        ),
    ],
)
def test_reader_numbers_members_of_one_name(tmp_path: Path, members, names) -> None:  # type: ignore[no-untyped-def]
    """ELF and COFF members alike: the second, third... member of a name is ``NAME#2``, ``NAME#3``."""
    data = archive(members)
    assert [b.member for b in read_archive("libx.a", data, len(data))] == names


def test_check_lists_each_member_of_one_name(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``check`` listed one file for two members named foo.o."""
    lib = _write(tmp_path / "new/libx.a", [(b"foo.o", A), (b"foo.o", B2)])
    r = run_cli("check", "--no-config", "--no-cache", "--no-loader", "--format", "json", str(lib))
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == [f"{lib}(foo.o)", f"{lib}(foo.o#2)"]
    assert doc["summary"]["files"] == 2


def test_diff_sees_every_member_of_an_archive(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Only an archive's first member reached ``diff`` (the binaries of one run were kept once per
    archive path): a change in a second member, of another name, went unseen."""
    _write(tmp_path / "old/libx.a", [(b"a.o", A), (b"b.o", B)])
    _write(tmp_path / "new/libx.a", [(b"a.o", A), (b"b.o", B2)])
    doc = _diff(run_cli, tmp_path / "old", tmp_path / "new")
    assert [(c["file"], c["undefined_added"]) for c in doc["changed"]] == [("libx.a(b.o)", ["k"])]


def test_diff_pairs_members_of_one_name_by_place(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The second foo.o changed: its new undefined k was unreported (exit 0, no ambiguity listed);
    the members swapped: each place compared with the same place, both listed, nothing dropped."""
    _write(tmp_path / "old/libx.a", [(b"foo.o", A), (b"foo.o", B)])
    _write(tmp_path / "new/libx.a", [(b"foo.o", A), (b"foo.o", B2)])
    _write(tmp_path / "swapped/libx.a", [(b"foo.o", B2), (b"foo.o", A)])
    doc = _diff(run_cli, tmp_path / "old", tmp_path / "new")
    assert [(c["file"], c["undefined_added"]) for c in doc["changed"]] == [("libx.a(foo.o#2)", ["k"])]
    assert doc["files_added"] == [] and doc["files_removed"] == [] and doc["ambiguous"] == []
    doc = _diff(run_cli, tmp_path / "old", tmp_path / "swapped")
    assert sorted(c["file"] for c in doc["changed"]) == ["libx.a(foo.o#2)", "libx.a(foo.o)"]


def test_a_member_named_like_a_count_is_diffed_apart(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """foo.o, foo.o and a member literally named foo.o#2: two were labelled foo.o#2, one never
    audited, and diff missed the literal one's new undefined symbol."""
    old = _write(tmp_path / "old/libx.a", [(b"foo.o", A), (b"foo.o", B), (b"foo.o#2", B)])
    new = _write(tmp_path / "new/libx.a", [(b"foo.o", A), (b"foo.o", B), (b"foo.o#2", B2)])
    doc = _diff(run_cli, old.parent, new.parent)
    changed = {c["file"]: c for c in doc["changed"]}
    assert list(changed) == ["libx.a(foo.o#2)"], changed


def test_two_archives_given_themselves_pair_their_members(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``diff old/libx.a new/libx.a``: every member was keyed by its whole path, so each build's
    members were all added and removed and no change was seen."""
    old = _write(tmp_path / "old/libx.a", [(b"a.o", A), (b"b.o", B)])
    new = _write(tmp_path / "new/libx.a", [(b"a.o", A), (b"b.o", B2)])
    doc = _diff(run_cli, old, new)
    assert doc["files_added"] == [] and doc["files_removed"] == []
    assert [(c["file"], c["undefined_added"]) for c in doc["changed"]] == [("libx.a(b.o)", ["k"])]
