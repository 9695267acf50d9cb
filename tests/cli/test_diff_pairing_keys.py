"""``linkaudit diff`` and baselines: the keys files of two releases pair by — a release tarball's
versioned top directory, a raised abi3 floor, a repair hash written after a dot left out."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from linkaudit.config.baseline import original_names, relative_file, targeted_file, unhashed
from tests.cli.pairwheel import V1, V2, diff_json, pairing_lib, pairing_wheel
from tests.loader.dagbuild import Lib, elf_bytes

# --- a release tarball's versioned top directory -------------------------------------------


def _tarball(path: Path, members: dict[str, bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return path


def _tar_release(tmp_path: Path, version: str, exports: tuple[str, ...]) -> Path:
    lib = elf_bytes(Lib("libfoo.so", soname="libfoo.so.1", exports=exports, needed=("libmissing.so.7",)))
    return _tarball(tmp_path / f"libfoo-{version}-linux-x86_64.tar.gz", {f"libfoo-{version}/lib/libfoo.so": lib})


def test_tarballs_with_versioned_top_directory_pair(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libfoo-1.0-linux-x86_64.tar.gz (libfoo-1.0/lib/libfoo.so) vs 1.1's: nothing paired, the
    removed export unseen and every finding new; now lib/libfoo.so pairs, as the trees given as
    directories do, and a baseline of 1.0 accepts 1.1's same finding."""
    old, new = _tar_release(tmp_path, "1.0", V1), _tar_release(tmp_path, "1.1", V2)
    code, doc = diff_json(run_cli, old, new)
    assert code == 1, doc
    assert [(c["file"], c["exports_removed"]) for c in doc["changed"]] == [("lib/libfoo.so", ["bar"])]
    assert doc["files_added"] == [] and doc["findings_new"] == [] and doc["findings_gone"] == []
    baseline = tmp_path / "bl.json"
    assert run_cli("check", "--no-config", str(old), "--write-baseline", str(baseline)).exit_code == 0
    assert '"file": "lib/libfoo.so"' in baseline.read_text()
    r = run_cli("check", "--no-config", str(new), "--baseline", str(baseline))
    assert r.exit_code == 0, r.stdout


def test_top_directory_kept_unless_named_for_the_tarball() -> None:
    """Only a top directory the tarball is named for (with a version) is left out: a conda
    package's lib/, another project's directory, a file at the top stay."""
    packages = {
        "d/libfoo-1.0-linux-x86_64.tar.gz",
        "cuda_nvrtc-linux-x86_64-12.4.127-archive.tar.xz",
        "zlib-1.3-h4ab18f5_1.tar.bz2",
        "other-2.0.tgz",
        "libfoo-1.0.tar",
        "libfoo-1.0-src.tar",
    }
    cases = {
        "d/libfoo-1.0-linux-x86_64.tar.gz!libfoo-1.0/lib/libfoo.so": "lib/libfoo.so",
        "cuda_nvrtc-linux-x86_64-12.4.127-archive.tar.xz!cuda_nvrtc-linux-x86_64-12.4.127-archive/lib/x.so": "lib/x.so",
        "zlib-1.3-h4ab18f5_1.tar.bz2!lib/libz.so.1": "lib/libz.so.1",
        "other-2.0.tgz!libfoo-2.0/lib/libfoo.so": "libfoo-2.0/lib/libfoo.so",
        "libfoo-1.0.tar!libfoo-1.0.so": "libfoo-1.0.so",
        "libfoo-1.0-src.tar!libfoo-1.0-s/x.so": "libfoo-1.0-s/x.so",  # not the name's part before - _ .
    }
    for file, key in cases.items():
        assert relative_file(file, [], packages) == key, file


# --- wheels ---------------------------------------------------------------------------------


# --- a raised abi3 floor --------------------------------------------------------------------


def test_abi3_floor_raised_still_pairs(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """cp38-abi3 -> cp39-abi3 (as cryptography's releases raise it): diff paired nothing and a
    baseline's entries matched nothing; now the floor is left out of the key (abi3-manylinux_x86_64:),
    and a baseline written with the floor in its keys still matches."""
    old = tmp_path / "d1.0"
    pairing_wheel(old / "pkg-1.0-cp38-abi3-manylinux_2_17_x86_64.whl", V1, "cp38-abi3-manylinux_2_17_x86_64")
    new = tmp_path / "d1.1"
    pairing_wheel(new / "pkg-1.1-cp39-abi3-manylinux_2_17_x86_64.whl", V2, "cp39-abi3-manylinux_2_17_x86_64")
    code, doc = diff_json(run_cli, old, new)
    assert code == 1, doc
    assert [c["file"] for c in doc["changed"]] == ["abi3-manylinux_x86_64:pkg/libp.so"]
    assert doc["files_added"] == [] and doc["findings_new"] == []
    baseline = tmp_path / "bl.json"
    assert run_cli("check", "--no-config", str(old), "--write-baseline", str(baseline)).exit_code == 0
    assert '"file": "abi3-manylinux_x86_64:pkg/libp.so"' in baseline.read_text()
    assert run_cli("check", "--no-config", str(new), "--baseline", str(baseline)).exit_code == 0
    older = baseline.read_text().replace('"abi3-manylinux', '"cp38-abi3-manylinux')  # written before
    baseline.write_text(older)
    r = run_cli("check", "--no-config", str(new), "--baseline", str(baseline))
    assert r.exit_code == 0, r.stdout


def test_abi3_key_exact_and_other_abis_keep_their_python_tag() -> None:
    packages = {"a/pkg-1-cp38-abi3-manylinux_2_17_x86_64.whl", "a/pkg-1-cp311-cp311-win_amd64.whl"}
    abi3 = "a/pkg-1-cp38-abi3-manylinux_2_17_x86_64.whl!pkg/m.so"
    assert targeted_file(abi3, ["a"], packages) == "abi3-manylinux_x86_64:pkg/m.so"
    assert targeted_file(abi3, ["a"], packages, exact=True) == "cp38-abi3-manylinux_2_17_x86_64:pkg/m.so"
    assert (
        targeted_file("a/pkg-1-cp311-cp311-win_amd64.whl!pkg/m.pyd", ["a"], packages)
        == "cp311-cp311-win_amd64:pkg/m.pyd"
    )


# --- a repair hash written after a dot ------------------------------------------------------


@pytest.mark.parametrize("sep", [".", "-"])
def test_repair_hash_after_a_dot_or_a_dash_is_unhashed(sep: str) -> None:
    """torchvision's wheels name vendored libraries libjpeg.185109e6.so.8 (older auditwheel):
    recognised as the -hash form is, and both written alike."""
    assert unhashed(f"pkg.libs/libjpeg{sep}185109e6.so.8") == "pkg.libs/libjpeg-*.so.8"
    assert unhashed(f"libz{sep}915b4635.so.1.3.1") == "libz-*.so.1"
    assert original_names(f"libjpeg{sep}185109e6.so.8") == ("libjpeg.so.8",)
    for plain in ("libfoo.so.1", "libfoo.so.1.2.3", "libfoo.deadbeef.txt", "libfoo.DEADBEEF.so", "x.1234567.so"):
        assert unhashed(plain) == plain and original_names(plain) == ()


@pytest.mark.parametrize("sep", [".", "-"])
def test_vendored_library_with_new_hash_pairs(run_cli, tmp_path: Path, sep: str) -> None:  # type: ignore[no-untyped-def]
    """Two releases whose vendored libjpeg only changed its repair hash: no file added or removed,
    no DT_NEEDED change (was: libjpeg.185109e6.so.8 removed, libjpeg.67fb65bd.so.8 added)."""
    for h in ("185109e6", "67fb65bd"):
        name = f"libjpeg{sep}{h}.so.8"
        pairing_lib(tmp_path / h / "pkg.libs" / name, name, ("j",))
        pairing_lib(tmp_path / h / "pkg/_m.cpython-311-x86_64-linux-gnu.so", None, ("PyInit__m",), (name,))
    code, doc = diff_json(run_cli, tmp_path / "185109e6", tmp_path / "67fb65bd")
    assert code == 0, doc
    assert doc["files_added"] == [] and doc["files_removed"] == [] and doc["changed"] == []
