"""``linkaudit diff OLD NEW``: the linkage changes between two builds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """old/ has the fixed libtorch_cuda.so and libleak.so; new/ has the broken one, no libleak.so."""
    monkeypatch.chdir(tmp_path)
    for name in ("old", "new"):
        (tmp_path / name).mkdir()
        shutil.copy(SAMPLES / "misc/libabs.so", tmp_path / name)
    shutil.copy(SAMPLES / "fixed/libtorch_cuda.so", tmp_path / "old")
    shutil.copy(SAMPLES / "misc/libleak.so", tmp_path / "old")
    shutil.copy(SAMPLES / "broken/libtorch_cuda.so", tmp_path / "new")
    return tmp_path


def test_diff_reports_linkage_changes(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("diff", "--format", "json", "old", "new")
    assert r.exit_code == 1  # new error findings
    doc = json.loads(r.stdout)
    assert doc["files_removed"] == ["libleak.so"] and doc["files_added"] == []
    (torch,) = doc["changed"]
    assert torch["file"] == "libtorch_cuda.so"
    assert torch["needed_added"] == ["libcuda.so.1"] and torch["needed_removed"] == ["libnvrtc.so.12"]
    assert torch["runpath"] == {"old": ["$ORIGIN"], "new": []}
    assert "nvrtcCreateProgram" in torch["undefined_added"]
    assert "nvrtcCreateProgram@libnvrtc.so.12" in torch["undefined_removed"]
    assert {(f["rule"], f["file"]) for f in doc["findings_new"]} == {
        ("driver-link", "libtorch_cuda.so"),
        ("missing-provider", "libtorch_cuda.so"),
    }
    assert ("rpath-leak", "libleak.so") in {(f["rule"], f["file"]) for f in doc["findings_gone"]}
    text = run_cli("diff", "old", "new").stdout
    assert "  + DT_NEEDED libcuda.so.1" in text and "- file libleak.so" in text
    assert "1 removed, 1 changed; 0 version ceilings raised; 0 ABI breaks; 2 findings new" in text


def test_diff_same_build_is_clean(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("diff", "old", "old")
    assert r.exit_code == 0
    assert (
        r.stdout.splitlines()[-1]
        == "0 files added, 0 removed, 0 changed; 0 version ceilings raised; 0 ABI breaks; 0 findings new, 0 gone"
    )


def test_diff_version_raised(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(SAMPLES / "misc/libabs.so", tmp_path / "a/lib.so")
    shutil.copy(SAMPLES / "misc/libnewglibc.so", tmp_path / "b/lib.so")
    r = run_cli("diff", "--format", "json", str(tmp_path / "a/lib.so"), str(tmp_path / "b/lib.so"))
    assert r.exit_code == 1
    (change,) = json.loads(r.stdout)["changed"]
    raised = {v["new"] for v in change["versions_raised"]}
    assert any(v.startswith("GLIBC_2.") for v in raised), change
    back = run_cli("diff", "--format", "json", str(tmp_path / "b/lib.so"), str(tmp_path / "a/lib.so"))
    (change,) = json.loads(back.stdout)["changed"]
    assert change["versions_lowered"] and not change["versions_raised"]
    # two different libraries under one name: the exit status is the ABI break's, not the lowered version's
    assert back.exit_code == 1 and change["soname"] == {"old": "libnewglibc.so", "new": "libabs.so"}


def test_diff_unreadable_input_named(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    (builds / "new/libbad.so").write_bytes(b"\x7fELF\x02\x01\x01" + b"\0" * 9)
    r = run_cli("diff", "old", "new")
    assert r.exit_code == 2
    assert "libbad.so" in r.stderr and "Traceback" not in r.stderr
    assert "+ DT_NEEDED libcuda.so.1" in r.stdout  # the rest is still compared


def test_diff_of_wheelhouses_pairs_wheels_by_platform(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two dist/ directories: each member pairs with the same platform's (a musllinux member never
    with a manylinux one of the same path; a raised manylinux baseline still pairs), and a vendored
    library with a new repair hash pairs with the old one."""
    import json
    import zipfile

    from tests.loader.dagbuild import Lib, elf_bytes

    def wheel(path: Path, needed: str, digest: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("pkg/libx.so", elf_bytes(Lib("libx.so", soname="libx.so", needed=(needed,))))
            zf.writestr(f"pkg.libs/libv-{digest}.so", elf_bytes(Lib("libv.so", soname=f"libv-{digest}.so")))

    wheel(tmp_path / "old/pkg-1.0-cp312-cp312-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", "libA.so", "0a1b2c3d")
    wheel(tmp_path / "old/pkg-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", "libB.so", "0a1b2c3d")
    wheel(tmp_path / "new/pkg-1.1-cp312-cp312-manylinux_2_28_x86_64.whl", "libA.so", "fdde5778")
    r = run_cli("diff", "--format", "json", str(tmp_path / "old"), str(tmp_path / "new"))
    doc = json.loads(r.stdout)
    assert doc["changed"] == []  # the manylinux libx.so needs libA.so in both: no change
    assert doc["files_added"] == []
    assert sorted(doc["files_removed"]) == [
        "cp312-cp312-musllinux_x86_64:pkg.libs/libv-*.so",
        "cp312-cp312-musllinux_x86_64:pkg/libx.so",
    ]


def test_diff_pairs_import_library_members_by_what_they_define(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """dlltool numbers a GNU import library's members (d000076.o), and the numbers move with every
    build: members pair by the symbol they define, not by that number (scipy's win_amd64 wheels:
    70 of 2,183 lines of a release diff were renumbered members)."""
    import json

    from tests.formats.arbuild import header
    from tests.link.test_link_line_bounds import _coff

    def import_library(path: Path, numbers: tuple[int, int]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        body = b"!<arch>\n"
        for number, defined in zip(numbers, (b"PyI_dop", b"_dop_in"), strict=True):  # 8 bytes: no string table
            member = _coff([defined], [])
            body += header(b"d%06d.o/" % number, len(member)) + member + (b"\n" if len(member) % 2 else b"")
        path.write_bytes(body)

    import_library(tmp_path / "old/_dop.dll.a", (76, 77))
    import_library(tmp_path / "new/_dop.dll.a", (80, 81))
    r = run_cli("diff", "--format", "json", str(tmp_path / "old"), str(tmp_path / "new"))
    assert r.exit_code == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["files_added"] == [] and doc["files_removed"] == []


def test_diff_keeps_binaries_whose_pairing_keys_collide(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Two wheels of one platform differing in its version (manylinux_2_17 and _2_28) in each build,
    and two vendored copies differing in their hash: their pairing keys collide, and one of each was
    dropped without a word — a changed DT_NEEDED went unseen, exit 0 (stop 27's hostile round 3). Now
    colliding binaries pair under their exact names, and every change is seen."""
    import json
    import zipfile

    from tests.loader.dagbuild import Lib, elf_bytes

    def wheel(path: Path, ext_needs: tuple[str, ...], foo_needs: tuple[str, ...]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("p/_ext.cpython-312-x86_64-linux-gnu.so", elf_bytes(Lib("_ext", needed=ext_needs)))
            zf.writestr(
                "p.libs/libfoo-0123abcd.so", elf_bytes(Lib("libfoo.so", soname="libfoo-0123abcd.so", needed=foo_needs))
            )
            zf.writestr("p.libs/libfoo-89abcdef.so", elf_bytes(Lib("libfoo.so", soname="libfoo-89abcdef.so")))

    for build, extra in (("old", ()), ("new", ("libnew.so.1",))):
        wheel(tmp_path / build / "p-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", extra, extra)
        wheel(tmp_path / build / "p-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", (), ())
    r = run_cli("diff", "--format", "json", str(tmp_path / "old"), str(tmp_path / "new"))
    doc = json.loads(r.stdout)
    changed = {d["file"]: d["needed_added"] for d in doc["changed"]}
    assert changed == {
        "cp312-cp312-manylinux_2_17_x86_64:p/_ext.cpython-312-x86_64-linux-gnu.so": ["libnew.so.1"],
        "cp312-cp312-manylinux_2_17_x86_64:p.libs/libfoo-0123abcd.so": ["libnew.so.1"],
    }
    assert doc["files_added"] == [] and doc["files_removed"] == []


def test_a_vendored_librarys_hash_minor_version_and_symbol_versions_move_with_the_package() -> None:
    """pillow 12 -> 13: ``libtiff-8296d2fa.so.6.0.2`` became ``libtiff-6dc8d115.so.6.1.0`` and its
    LIBTIFF_4.0 need LIBTIFF_4.1. Shipped together, neither is a change (diff listed the name as
    removed and added and exited 1 on the raised version); a raised GLIBC still is."""
    import dataclasses

    from linkaudit import read
    from linkaudit.config.baseline import unhashed
    from linkaudit.diff import diff_binary
    from linkaudit.model import NeededLibrary, VersionNeed, VersionNeedEntry

    assert unhashed("pillow.libs/libavif-01e67780.so.16.4.1") == "pillow.libs/libavif-*.so.16"
    assert unhashed("libtiff.so.6.0.2") == "libtiff.so.6.0.2"  # not vendored: a version that matters
    base = read(str(SAMPLES / "loader/pyext/lib/libhelper.so"))[0]

    def build(tiff: str, tiff_version: str, glibc: str):  # type: ignore[no-untyped-def]
        needs = (
            VersionNeed(tiff, (VersionNeedEntry(tiff_version, 0, 2),)),
            VersionNeed("libc.so.6", (VersionNeedEntry(glibc, 0, 3),)),
        )
        needed = (NeededLibrary(tiff), NeededLibrary("libc.so.6"))
        return dataclasses.replace(base, needed=needed, version_needs=needs)

    old = build("libtiff-8296d2fa.so.6.0.2", "LIBTIFF_4.0", "GLIBC_2.3")
    same = diff_binary("x.so", old, build("libtiff-6dc8d115.so.6.1.0", "LIBTIFF_4.1", "GLIBC_2.3"))
    assert not same.changed, same
    raised = diff_binary("x.so", old, build("libtiff-6dc8d115.so.6.1.0", "LIBTIFF_4.1", "GLIBC_2.14"))
    assert raised.versions_raised == (("GLIBC_2.3", "GLIBC_2.14"),)
    moved = diff_binary("x.so", old, build("libtiff.so.6", "LIBTIFF_4.1", "GLIBC_2.3"))  # unvendored
    assert moved.needed_added == ("libtiff.so.6",) and moved.versions_raised == ((None, "LIBTIFF_4.1"),)


def test_diff_pairs_a_vendored_library_whose_hash_sits_mid_name(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """numpy 1.25.2 -> 1.26.4: auditwheel's hash after the name's part before the first dot,
    ``libopenblas64_p-r0-5007b62f.3.23.dev.so`` -> ``-0cf96a72.``: diff listed the library added and
    removed and ``+/- DT_NEEDED`` on each module needing it. A new hash is no change."""
    import zipfile

    from tests.loader.dagbuild import Lib, elf_bytes

    for build, digest in (("old", "5007b62f"), ("new", "0cf96a72")):
        blas = f"libopenblas64_p-r0-{digest}.3.23.dev.so"
        wheel = tmp_path / build / "numpy-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
        wheel.parent.mkdir()
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr("numpy/_ext.cpython-311-x86_64-linux-gnu.so", elf_bytes(Lib("_ext", needed=(blas,))))
            zf.writestr(f"numpy.libs/{blas}", elf_bytes(Lib("libopenblas.so", soname=blas)))
    r = run_cli("diff", "--format", "json", str(tmp_path / "old"), str(tmp_path / "new"))
    doc = json.loads(r.stdout)
    assert doc["changed"] == [] and doc["files_added"] == [] and doc["files_removed"] == []
    text = run_cli("diff", str(tmp_path / "old"), str(tmp_path / "new")).stdout
    assert "DT_NEEDED" not in text and "openblas" not in text
