"""cupy-cuda12x 14.2.0: its CUDA libraries come with its extra ``ctk``
(``cuda-toolkit[cublas,cudart,cufft,curand,cusolver,cusparse,nvrtc]==12.*``). The meta-package's
version is the one the specifier allows: with the highest (13.0.3) picked whatever the specifier,
libcufft.so.11, libnvrtc.so.12, libcublas.so.12 and libcusolver.so.11 were "declared by no
dependency" (CUDA 13's wheels ship other SONAMEs)."""

from __future__ import annotations

import pytest
from packaging.tags import Tag
from realsite import cache_root, pip_download

from linkaudit import audit
from linkaudit.packages.metadata import Distribution
from linkaudit.packages.requirements import closure, marker_environment

CTK = 'cuda-toolkit[cublas,cudart,cufft,curand,cusolver,cusparse,nvrtc]==12.*; extra == "ctk"'


def test_a_meta_package_is_followed_at_the_version_its_specifier_allows() -> None:
    env = marker_environment(Tag("cp311", "cp311", "manylinux2014_x86_64"))
    cupy = Distribution("cupy-cuda12x", "14.2.0", "cupy.dist-info", requires=(CTK,), extras=("ctk",))
    found = closure("cupy-cuda12x", {"cupy-cuda12x": cupy}, env, ("ctk",))
    assert {"nvidia-cufft-cu12", "nvidia-cublas-cu12", "nvidia-cuda-nvrtc-cu12"} <= set(found)
    assert "nvidia-cufft" not in found and "nvidia-cublas" not in found  # CUDA 13's
    torch = Distribution("torch", "2.14.1", "t.dist-info", requires=("cuda-toolkit[cufft]==13.0.3",))
    assert "nvidia-cufft" in closure("torch", {"torch": torch}, env)


@pytest.mark.realwheel
def test_cupy_cuda12x_names_its_extra_for_every_cuda_library() -> None:
    args = ["cupy-cuda12x==14.2.0", "--only-binary=:all:", "--python-version", "3.11"]
    args += ["--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64"]
    wheel, reason = pip_download(cache_root() / "wheels-cupy", args, "cupy_cuda12x-14.2.0-*.whl")
    if wheel is None:
        pytest.skip(f"cupy-cuda12x 14.2.0 not available: {reason}")
    report = audit([str(wheel)])
    missing = {f.subject: f for f in report.findings if f.rule == "library-not-found"}
    for name in ("libcublas.so.12", "libcufft.so.11", "libcurand.so.10", "libcusolver.so.11", "libcusparse.so.12"):
        assert "pip install cupy-cuda12x[ctk]" in missing[name].message, missing[name].message
    assert "pip install cupy-cuda12x[ctk]" in missing["libnvrtc.so.12"].message
    # cuTENSOR and NCCL: no extra brings them
    assert "with or without an extra" in missing["libcutensor.so.2"].message
    assert "add nvidia-nccl-cu12 to its Requires-Dist" in missing["libnccl.so.2"].message
    assert sum(f.rule == "symbol-version" for f in report.findings) == 22  # the wheel's tag-derived errors
