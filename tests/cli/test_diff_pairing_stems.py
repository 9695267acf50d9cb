"""``linkaudit diff``: files of two releases paired across the kinds of input — a shared library
whose file name carries its version (by its stem), a wheel given alone against a wheelhouse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli.pairwheel import TAG, V1, V2, diff_json, pairing_lib, pairing_wheel

# --- a shared library whose file name carries its version -----------------------------------


@pytest.mark.parametrize(
    ("old_name", "new_name", "new_soname"),
    [
        ("libfoo.so.1.2.3", "libfoo.so.1.2.4", "libfoo.so.1"),  # a patch release: export removed
        ("libfoo.so.1.2.3", "libfoo.so.2.0.0", "libfoo.so.2"),  # a SONAME bump
        ("libfoo.so.1", "libfoo.so.2", "libfoo.so.2"),
    ],
)
def test_versioned_file_names_pair_by_library_stem(run_cli, tmp_path: Path, old_name, new_name, new_soname) -> None:  # type: ignore[no-untyped-def]
    """libfoo.so.1.2.3 -> libfoo.so.1.2.4 (export bar removed) was "1 added, 1 removed, 0 ABI
    breaks", exit 0: now the one unpaired library of each build of stem lib/libfoo.so pairs, and
    its removed export (and SONAME change) is an ABI break, exit 1."""
    pairing_lib(tmp_path / "old/lib" / old_name, "libfoo.so.1", V1)
    pairing_lib(tmp_path / "new/lib" / new_name, new_soname, V2)
    code, doc = diff_json(run_cli, tmp_path / "old", tmp_path / "new")
    assert code == 1, doc
    assert doc["files_added"] == [] and doc["files_removed"] == []
    [changed] = doc["changed"]
    assert changed["file"] == f"lib/{old_name} -> {new_name}"
    assert changed["exports_removed"] == ["bar"]
    if new_soname != "libfoo.so.1":
        assert changed["soname"] == {"old": "libfoo.so.1", "new": new_soname}


@pytest.mark.parametrize("soname", [None, "libplug.so.1"])
def test_stem_is_the_file_names_with_or_without_a_soname(run_cli, tmp_path: Path, soname) -> None:  # type: ignore[no-untyped-def]
    """libplug.so.1.2.3 -> libplug.so.1.2.4 built without a SONAME was "1 added, 1 removed", the
    removed export missed, exit 0 (the stem came from the SONAME alone): the file name pairs."""
    pairing_lib(tmp_path / "old/lib/libplug.so.1.2.3", soname, V1)
    pairing_lib(tmp_path / "new/lib/libplug.so.1.2.4", soname, V2)
    code, doc = diff_json(run_cli, tmp_path / "old", tmp_path / "new")
    assert code == 1, doc
    assert doc["files_added"] == [] and doc["files_removed"] == []
    [changed] = doc["changed"]
    assert changed["file"] == "lib/libplug.so.1.2.3 -> libplug.so.1.2.4"
    assert changed["exports_removed"] == ["bar"]


def test_unrelated_file_names_sharing_a_soname_stem_do_not_pair(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libalpha.so.1 and libomega.so.2 whose SONAMEs are libzeta.so.1 / libzeta.so.2 were paired
    and reported an ABI break: two file names of different stems are two libraries."""
    pairing_lib(tmp_path / "old/lib/libalpha.so.1", "libzeta.so.1", V1)
    pairing_lib(tmp_path / "new/lib/libomega.so.2", "libzeta.so.2", V2)
    code, doc = diff_json(run_cli, tmp_path / "old", tmp_path / "new")
    assert code == 0, doc
    assert doc["changed"] == []
    assert doc["files_removed"] == ["lib/libalpha.so.1"] and doc["files_added"] == ["lib/libomega.so.2"]


def test_file_name_without_so_falls_back_to_its_soname(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A file name with no ``.so`` part (``plugin-1.bin``) is stemmed by its SONAME."""
    pairing_lib(tmp_path / "old/lib/plugin-1.bin", "libplug.so.1", V1)
    pairing_lib(tmp_path / "new/lib/plugin-2.bin", "libplug.so.2", V2)
    code, doc = diff_json(run_cli, tmp_path / "old", tmp_path / "new")
    assert code == 1, doc
    assert [c["file"] for c in doc["changed"]] == ["lib/plugin-1.bin -> plugin-2.bin"]


def test_install_tree_with_soname_symlinks_pairs(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A CMake install tree, libfoo.so -> libfoo.so.1 -> libfoo.so.1.2.x: the real files pair."""
    for build, version, exports in (("old", "1.2.3", V1), ("new", "1.2.4", V2)):
        real = pairing_lib(tmp_path / build / "lib" / f"libfoo.so.{version}", "libfoo.so.1", exports)
        os.symlink(real.name, real.parent / "libfoo.so.1")
        os.symlink("libfoo.so.1", real.parent / "libfoo.so")
    code, doc = diff_json(run_cli, tmp_path / "old", tmp_path / "new")
    assert code == 1, doc
    assert [c["exports_removed"] for c in doc["changed"]] == [["bar"]]
    assert doc["files_added"] == [] and doc["files_removed"] == []


def test_stem_pairing_needs_one_candidate_each_and_same_directory(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two candidates in the new build (libfoo.so.1.2.4 and libfoo.so.2.0.0), or the other in
    another directory, or an executable: nothing is guessed, each stays added or removed."""
    pairing_lib(tmp_path / "old/lib/libfoo.so.1.2.3", "libfoo.so.1", V1)
    pairing_lib(tmp_path / "new/lib/libfoo.so.1.2.4", "libfoo.so.1", V2)
    pairing_lib(tmp_path / "new/lib/libfoo.so.2.0.0", "libfoo.so.2", V2)
    pairing_lib(tmp_path / "old/lib/libbar.so.1.0", "libbar.so.1", V1)
    pairing_lib(tmp_path / "new/lib64/libbar.so.1.1", "libbar.so.1", V2)
    code, doc = diff_json(run_cli, tmp_path / "old", tmp_path / "new")
    assert code == 0, doc
    assert doc["changed"] == []
    assert doc["files_removed"] == ["lib/libbar.so.1.0", "lib/libfoo.so.1.2.3"]
    assert doc["files_added"] == ["lib/libfoo.so.1.2.4", "lib/libfoo.so.2.0.0", "lib64/libbar.so.1.1"]


# --- a wheel given alone against a wheelhouse ----------------------------------------------


def test_wheel_given_alone_pairs_with_a_wheelhouse(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``diff OLD.whl dist/``: the lone wheel keyed pkg/libp.so, the wheelhouse's member
    cp311-cp311-manylinux_x86_64:pkg/libp.so, so nothing paired (findings "new", the removed
    export missed); now the lone wheel takes its tag triple, either way round."""
    old = pairing_wheel(tmp_path / f"pkg-1.0-{TAG}.whl", V1)
    house = tmp_path / "dist"
    pairing_wheel(house / f"pkg-1.1-{TAG}.whl", V2)
    for a, b in ((old, house), (house, old)):
        code, doc = diff_json(run_cli, a, b)
        assert code == 1 if a == old else code == 0, doc
        [changed] = doc["changed"]
        assert changed["file"] == "cp311-cp311-manylinux_x86_64:pkg/libp.so"
        assert doc["files_added"] == [] and doc["files_removed"] == [], doc
        assert doc["findings_new"] == [] and doc["findings_gone"] == []


def test_two_wheels_given_still_pair_by_member_path(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two wheels given themselves (of two platforms) still pair by member path alone."""
    old = pairing_wheel(tmp_path / f"pkg-1.0-{TAG}.whl", V1)
    new = pairing_wheel(
        tmp_path / "pkg-1.1-cp311-cp311-musllinux_1_2_x86_64.whl", V2, "cp311-cp311-musllinux_1_2_x86_64"
    )
    code, doc = diff_json(run_cli, old, new)
    assert code == 1 and [c["file"] for c in doc["changed"]] == ["pkg/libp.so"]
