"""The provider index (version 2) for aarch64 and win_amd64: SONAMEs and export-directory DLL names
read from a sample of the real NVIDIA wheels per platform (``scripts/gen_provider_index.py``), with
the platform tags of the wheels each name was read from; validated on load."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.loader.target import TargetEnvironment
from linkaudit.packages import providers as index

PE = Path(__file__).resolve().parents[1] / "sample_bins/pe"


def test_aarch64_and_windows_names_are_in_the_index() -> None:
    names, platforms = index.providers(), index.provider_platforms()
    assert names["libcudart.so.13"] == ("nvidia-cuda-runtime",)
    assert {"manylinux2014_aarch64", "manylinux_2_17_x86_64"} <= set(platforms["libcudart.so.13"])
    assert "manylinux_2_27_aarch64" in platforms["libcurand.so.10"]
    # DLL names as the export directory records them, looked up in lower case as Windows compares
    assert names["cudart64_13.dll"] == ("nvidia-cuda-runtime",) and platforms["cudart64_13.dll"] == ("win_amd64",)
    assert names["nvjitlink_130_0.dll"] == ("nvidia-nvjitlink",)
    assert names["nvrtc64_120_0.dll"] == ("nvidia-cuda-nvrtc-cu12",)
    # an import library (cuda.lib of the runtime wheel) names the driver's DLL: never recorded as shipped
    assert "nvcuda.dll" not in names


def test_a_missing_nvidia_dll_names_the_wheel_that_ships_it(tmp_path: Path) -> None:
    wheel = tmp_path / "pkg-1.0-py3-none-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for module in ("_C", "_D"):  # two requesters: the second met a name the first's hint had shadowed
            pyd = f"pkg/{module}.cp311-win_amd64.pyd"
            zf.writestr(pyd, (PE / "fixed/torch_cuda.dll").read_bytes())  # imports nvrtc64_120_0.dll
        zf.writestr("pkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
        zf.writestr("pkg-1.0.dist-info/RECORD", "")
    report = audit([str(wheel)], AuditConfig(target=TargetEnvironment()))
    missing, other = [f for f in report.findings if f.rule == "library-not-found"]
    assert missing.subject.lower() == other.subject.lower() == "nvrtc64_120_0.dll"
    assert missing.evidence["providers"] == ["nvidia-cuda-nvrtc-cu12"]
    assert "which no dependency of pkg declares: add nvidia-cuda-nvrtc-cu12 to its Requires-Dist" in missing.message


@pytest.mark.parametrize(
    "text",
    ['{"version": 3, "sonames": {}}', '{"version": 2, "sonames": {}, "platforms": {"a.so": "x"}}', "[]"],
)
def test_a_bad_index_is_refused_on_load(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(index, "_index_text", lambda: text)
    for cached in (index.providers, index.provider_platforms):
        cached.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"providers\.json"):
            index.providers()
            index.provider_platforms()
    finally:
        for cached in (index.providers, index.provider_platforms):
            cached.cache_clear()
