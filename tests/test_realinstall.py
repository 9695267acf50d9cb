"""Installations of real wheels from the local package index (skipped where they cannot be fetched):
jax-cuda12-plugin for cp311 beside its cp312 copy; onnxruntime-gpu 1.31.1's CUDA provider, whose
libraries come from wheels it declares under extras; torch 2.14.1's site without
nvidia-cuda-runtime."""

from __future__ import annotations

import csv
import os
import shutil
from pathlib import Path

import pytest
from conftest import platform_wheel
from realsite import cache_root, pip_download

from linkaudit import audit

pytestmark = pytest.mark.realwheel


def _download(spec: str, python: str, platform: str, folder: Path) -> Path:
    args = [spec, "--only-binary=:all:", "--platform", platform, "--python-version", python]
    found, _ = pip_download(folder, args, f"*cp{python.replace('.', '')}*.whl")
    if found is None:
        pytest.skip(f"{spec} (cp{python}) not available")
    return found


def test_jax_plugin_for_two_pythons_is_two_installations() -> None:
    folder = cache_root() / "wheels-jax"
    wheels = [_download("jax-cuda12-plugin==0.10.2", v, "manylinux_2_27_x86_64", folder) for v in ("3.11", "3.12")]
    together = audit([str(folder)])
    assert not together.has_unreadable
    assert {f.rule for f in together.findings}.isdisjoint({"unreadable-input", "file-clash"})
    assert len(together.config["installations"]) == 2
    for wheel in wheels:
        alone = audit([str(wheel)])
        mine = sorted((f.rule, f.file, f.message) for f in together.findings if f.file.startswith(f"{wheel}!"))
        assert mine == sorted((f.rule, f.file, f.message) for f in alone.findings)


def test_onnxruntime_gpu_cuda_provider_libraries_name_their_extras() -> None:
    wheel = platform_wheel(
        "onnxruntime-gpu==1.31.1", "manylinux_2_28_x86_64", "onnxruntime_gpu-1.31.1-*.whl", "wheels-ort"
    )
    report = audit([str(wheel)])
    missing = {f.subject: f for f in report.findings if f.rule == "library-not-found"}
    for name, extra in (
        ("libcudart.so.13", "cuda"),
        ("libcurand.so.10", "cuda"),
        ("libcudnn.so.9", "cudnn"),
        ("libcublas.so.13", "cudnn"),  # through nvidia-cudnn-cu13, which requires nvidia-cublas
    ):
        assert missing[name].severity.value == "warning", missing[name].message
        assert f"pip install onnxruntime-gpu[{extra}]" in missing[name].message
    nvinfer = missing["libnvinfer.so.10"]
    assert nvinfer.severity.value == "error" and "with or without an extra" in nvinfer.message


def test_torch_site_without_the_cuda_runtime(torch_site: Path, tmp_path: Path) -> None:
    """The site with every file of nvidia-cuda-runtime removed (hard links of the rest): the
    auditing machine's own libcudart.so.13 no longer hides the hole."""
    site = tmp_path / "site"
    try:
        shutil.copytree(torch_site, site, copy_function=os.link, ignore=shutil.ignore_patterns("__pycache__"))
    except OSError as exc:
        pytest.skip(f"cannot hard-link the torch site into {tmp_path}: {exc}")
    runtime = next(site.glob("nvidia_cuda_runtime-*.dist-info"))
    with open(runtime / "RECORD", newline="") as fh:
        for row in csv.reader(fh):
            path = site / row[0]
            if row and path.is_file() and not path.is_symlink():
                path.unlink()
    shutil.rmtree(runtime)
    report = audit([str(site / "torch" / "lib")])
    cudart = [f for f in report.findings if f.rule == "library-not-found" and f.subject == "libcudart.so.13"]
    # one finding for the missing library (it was 7, one per requester), every requester in it
    assert len(cudart) == 1 and cudart[0].severity.value == "error"
    requesters = cudart[0].evidence["requesters"]
    assert len(requesters) == 7 and "also needed by 6 more" in cudart[0].message
    assert all("cudart" in (r["declared_by"] or "") and r["chain"][-1] == "libcudart.so.13" for r in requesters)
    assert "nvidia-cuda-runtime" in cudart[0].message and "cuda-toolkit[" in cudart[0].message
    assert "cudart" in cudart[0].evidence["declared_by"]
    assert "undeclared-dependency" not in {f.rule for f in report.findings}
