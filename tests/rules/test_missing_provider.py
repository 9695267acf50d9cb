from __future__ import annotations

from linkaudit.rules.data import family_index, library_stem

from ..facts import NVRTC9
from .helpers import findings


def test_seed_bug_one_finding_naming_nine_nvrtc_symbols() -> None:
    (f,) = findings("broken/libtorch_cuda.so", rule="missing-provider")
    assert f.severity.value == "error"
    assert f.evidence["family"] == "nvrtc"
    assert f.evidence["count"] == 9
    assert set(f.evidence["symbols"]) == NVRTC9
    assert f.evidence["linked_driver_libraries"] == ["libcuda.so.1"]
    assert "libnvrtc" in f.subject
    assert "libcuda.so.1" in f.message  # the over-linking context


def test_fixed_twin_has_no_missing_provider() -> None:
    assert findings("fixed/libtorch_cuda.so", rule="missing-provider") == []


def test_hash_renamed_provider_counts() -> None:
    """DT_NEEDED libnvrtc-1a2b3c4d.so.12 (a wheel-repair rename) provides the nvrtc family."""
    assert findings("misc/libverneed_mismatch.so", rule="missing-provider") == []


def test_driver_symbols_are_a_driver_question() -> None:
    """cuInit without libcuda in DT_NEEDED: reported, and the advice is not to add the link."""
    from dataclasses import replace

    from linkaudit import read
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.model import Binary, NeededLibrary
    from linkaudit.rules.missing_provider import MissingProvider

    from .helpers import SAMPLES

    (b,) = read(str(SAMPLES / "misc/libuses_driver.so"))
    unlinked: Binary = replace(
        b, needed=(*(n for n in b.needed if n.name != "libcuda.so.1"), NeededLibrary("libc.so.6"))
    )
    (f,) = list(MissingProvider().check(AuditContext((unlinked,), AuditConfig())))
    assert f.evidence["family"] == "cuda-driver"
    assert f.evidence["driver"] is True
    assert set(f.evidence["symbols"]) == {"cuInit", "cuLaunchKernel"}
    assert "do not add" in f.message


def test_weak_undefined_symbols_are_exempt() -> None:
    assert findings("misc/libweak.so", rule="missing-provider") == []


def test_family_classification_longest_prefix_and_exact_lists() -> None:
    classify = family_index().classify

    def fam(name: str) -> str | None:
        f = classify(name)
        return f.name if f else None

    assert fam("nvrtcCreateProgram") == "nvrtc"
    assert fam("cublasLtMatmul") == "cublasLt"
    assert fam("cublasCreate_v2") == "cublas"
    assert fam("cusparseLtInit") == "cusparseLt"
    assert fam("cusparseCreate") == "cusparse"
    assert fam("cuFileRead") == "cuFile"
    assert fam("cudaMalloc") == "cudart"
    assert fam("cudnnCreate") == "cudnn"
    assert fam("cuInit") == "cuda-driver"
    assert fam("cuLaunchKernel_ptsz") == "cuda-driver"
    assert fam("nvmlInit_v2") == "nvml"
    assert fam("cuSomethingNotInCudaH") is None  # no cu[A-Z]* pattern
    assert fam("malloc") is None


def test_library_stem() -> None:
    assert library_stem("libnvrtc.so.13") == "libnvrtc"
    assert library_stem("libnvrtc-1a2b3c4d.so.12") == "libnvrtc"
    assert library_stem("libnvrtc-builtins.so.13.0") == "libnvrtc-builtins"
    assert library_stem("/usr/lib/libcublasLt.so") == "libcublasLt"
    assert library_stem("nvrtc64_130_0.dll") == "nvrtc64_130_0"


def test_copies_of_one_file_are_judged_once_and_each_reported(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """30 copies of the seed-bug library in a tarball: 30 findings, equal but for the file, from
    one look at the shared symbol table (``find_missing`` ran for every copy: 0.7 s of 200,000)."""
    import io
    import tarfile

    from linkaudit import AuditConfig, audit
    from linkaudit.rules import missing_provider

    from .helpers import SAMPLES

    data = (SAMPLES / "broken/libtorch_cuda.so").read_bytes()
    tarball = tmp_path / "copies.tar"
    with tarfile.open(tarball, "w") as tf:
        for i in range(30):
            info = tarfile.TarInfo(f"lib/d{i % 3}/libtorch_cuda{i}.so")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    calls: list[str] = []
    real = missing_provider.find_missing
    monkeypatch.setattr(missing_provider, "find_missing", lambda b, r=None: calls.append(b.path) or real(b, r))
    report = audit([str(tarball)], AuditConfig(target=None))
    found = [f for f in report.findings if f.rule == "missing-provider"]
    assert len(found) == 30 and len({f.file for f in found}) == 30
    assert all(f.evidence == found[0].evidence and f.message == found[0].message for f in found)
    assert set(found[0].evidence["symbols"]) == NVRTC9
    assert len(calls) == 1
