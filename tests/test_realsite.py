"""Loader emulation on a real installed site: torch 2.14.1 and the nvidia-* wheels its RPATHs point into.

Skipped cleanly where ``pip install --no-deps --target`` cannot get the wheels offline.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.realwheel


def test_installed_site_imports_without_a_driver(run_cli, torch_site: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(torch_site)
    r = run_cli("check", "--format", "json", "torch")
    doc = json.loads(r.stdout)
    assert [f for f in doc["findings"] if f["rule"] == "library-not-found"] == []
    (driver,) = [f for f in doc["findings"] if f["rule"] == "driver-link"]
    assert driver["file"] == "torch/lib/libcaffe2_nvrtc.so" and driver["severity"] == "note"
    assert [f for f in doc["findings"] if f["severity"] == "error"] == []
    assert r.exit_code == 0


def _mirror_without(site: Path, tmp: Path, missing: str) -> Path:
    """A copy of the site made of file symlinks in real directories, without ``missing``.

    Directories are real so that ``$ORIGIN/../../nvidia`` is resolved inside the mirror.
    """
    for top in ("torch", "nvidia"):
        for dirpath, _dirs, files in os.walk(site / top):
            rel = Path(dirpath).relative_to(site)
            (tmp / rel).mkdir(parents=True, exist_ok=True)
            for name in files:
                if str(rel / name) == missing:
                    continue
                os.symlink(Path(dirpath) / name, tmp / rel / name)
    return tmp


def test_missing_nvrtc_is_reported_with_the_chain_from_the_extension(
    run_cli, torch_site: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    mirror = _mirror_without(torch_site, tmp_path, "nvidia/cu13/lib/libnvrtc.so.13")
    monkeypatch.chdir(mirror)
    r = run_cli("check", "--format", "json", "torch")
    doc = json.loads(r.stdout)
    missing = [f for f in doc["findings"] if f["rule"] == "library-not-found" and f["subject"] == "libnvrtc.so.13"]
    from_c = [
        f
        for f in missing
        if any(x["root"].endswith("_C.cpython-311-x86_64-linux-gnu.so") for x in f["evidence"]["roots"])
    ]
    assert from_c, missing
    f = from_c[0]
    root = next(x for x in f["evidence"]["roots"] if x["root"].endswith("_C.cpython-311-x86_64-linux-gnu.so"))
    assert [Path(p).name for p in root["chain"]] == [
        "_C.cpython-311-x86_64-linux-gnu.so",
        "libtorch_python.so",
        "libtorch_cuda.so",
        "libnvrtc.so.13",
    ]
    tried = [a for a in f["evidence"]["attempts"] if a["source"] == "DT_RPATH"]
    assert any(a["path"].endswith("nvidia/cu13/lib/libnvrtc.so.13") for a in tried)
    assert f["evidence"]["would_fail"].startswith("ImportError: libnvrtc.so.13: cannot open shared object file")
    # one root cause, one finding: the nine nvrtc references travel with it
    assert len(f["evidence"]["unresolved_symbols"]) == 9
    assert not [
        x for x in doc["findings"] if x["rule"] == "unresolved-symbol" and x["file"] == "torch/lib/libtorch_cuda.so"
    ]
    assert r.exit_code == 1


def test_duplicate_exports_of_the_real_site_are_the_two_known_static_libraries(
    run_cli, torch_site: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """Examined: cpuinfo is linked into libc10.so and libtorch.so; tensorpipe and gloo into libtorch_cpu.so
    and libtorch_cuda.so. Runtime names (std::, __gnu_cxx::, __*) are not counted."""
    monkeypatch.chdir(torch_site)
    doc = json.loads(run_cli("check", "--format", "json", "torch").stdout)
    pairs = {
        tuple(f["evidence"]["libraries"]): f["evidence"]["symbols"]
        for f in doc["findings"]
        if f["rule"] == "duplicate-export"
    }
    assert set(pairs) == {
        ("torch/lib/libc10.so", "torch/lib/libtorch.so"),
        ("torch/lib/libtorch_cpu.so", "torch/lib/libtorch_cuda.so"),
    }
    assert all(s.startswith("cpuinfo_") for s in pairs[("torch/lib/libc10.so", "torch/lib/libtorch.so")])
    assert all(
        "tensorpipe" in s or "gloo" in s for s in pairs[("torch/lib/libtorch_cpu.so", "torch/lib/libtorch_cuda.so")]
    )


def test_whole_site_says_the_truth_of_libraries_found_only_when_preloaded(
    run_cli, torch_site: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    """The whole site: libcufile_rdma.so.1 and libcusolverMg.so.12 have no RUNPATH, so dlopen()ed
    alone they miss DT_NEEDED libraries that are installed beside them (torch preloads those):
    warnings saying where they are installed, never "not installed" or "add nvidia-cufile to its
    own Requires-Dist"."""
    monkeypatch.chdir(torch_site)
    doc = json.loads(run_cli("check", "--format", "json", ".").stdout)
    missing = {f["subject"]: f for f in doc["findings"] if f["rule"] == "library-not-found"}
    cufile, cublas = missing["libcufile.so.0"], missing["libcublas.so.13"]
    assert "(from nvidia-cufile, the same distribution)" in cufile["message"]
    assert "Requires-Dist" not in cufile["message"] and cufile["severity"] == "warning"
    assert "libcublas.so.13 is installed here" in cublas["message"] and "not installed" not in cublas["message"]
    assert "from nvidia-cublas, which nvidia-cusolver declares" in cublas["message"]
    installed = {s for s, f in missing.items() if f["evidence"].get("installed")}
    assert installed == {"libcufile.so.0", "libcublas.so.13", "libcublasLt.so.13", "libnvJitLink.so.13"}
    assert all(missing[s]["severity"] == "warning" for s in installed)
    assert all(f["evidence"]["installed"] == [] for s, f in missing.items() if s not in installed)
