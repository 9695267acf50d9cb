from __future__ import annotations

from .helpers import findings


def test_build_tree_rpath_is_an_error_absolute_a_warning() -> None:
    by_entry = {f.evidence["entry"]: f for f in findings("misc/libleak.so", rule="rpath-leak")}
    assert set(by_entry) == {"/home/builder/pytorch/build/lib", "/usr/local/cuda/lib64/stubs"}  # $ORIGIN is fine
    assert all(f.severity.value == "error" for f in by_entry.values())
    assert by_entry["/usr/local/cuda/lib64/stubs"].evidence["tag"] == "DT_RPATH"
    (f,) = findings("misc/libabs.so", rule="rpath-leak")
    assert (f.severity.value, f.evidence["reason"], f.evidence["tag"]) == ("warning", "absolute", "DT_RUNPATH")


def test_origin_relative_runpath_is_clean() -> None:
    assert findings("fixed/libtorch_cuda.so", "ext/_C.cpython-311-x86_64-linux-gnu.so", rule="rpath-leak") == []


def test_verneed_naming_a_file_not_needed() -> None:
    (f,) = findings("misc/libverneed_mismatch.so", rule="verneed-mismatch")
    assert f.subject == "libnvrtc.so.12"
    assert f.evidence["needed"] == ["libnvrtc-1a2b3c4d.so.12", "libc.so.6"]
    assert "dl-version.c" in f.message


def test_consistent_verneed_is_clean() -> None:
    assert findings("fixed/libtorch_cuda.so", "misc/libnewglibc.so", rule="verneed-mismatch") == []
