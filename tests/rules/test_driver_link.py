from __future__ import annotations

from linkaudit.rules.data import driver_api, driver_libraries

from .helpers import findings


def test_seed_bug_reports_unused_driver_link() -> None:
    (f,) = findings("broken/libtorch_cuda.so", rule="driver-link")
    assert f.severity.value == "error"
    assert f.subject == "libcuda.so.1"
    assert f.evidence["unused"] is True and f.evidence["used_count"] == 0
    assert "unused" in f.message and "driver" in f.message


def test_used_driver_link_lists_the_symbols() -> None:
    (f,) = findings("misc/libuses_driver.so", rule="driver-link")
    assert f.evidence["unused"] is False
    assert f.evidence["used_symbols"] == ["cuInit", "cuLaunchKernel"]
    assert "unused" not in f.message


def test_fixed_twin_and_driver_itself_are_clean() -> None:
    assert findings("fixed/libtorch_cuda.so", rule="driver-link") == []
    # the driver stub provides libcuda; it does not NEED it
    assert findings("driver/libcuda.so.1", rule="driver-link") == []


def test_driver_library_patterns() -> None:
    libs = driver_libraries()

    def is_driver(name: str) -> bool:
        return any(d.matches(name) for d in libs)

    for name in (
        "libcuda.so.1",
        "libcuda.so",
        "libnvidia-ml.so.1",
        "libnvidia-ptxjitcompiler.so.1",
        "libcudadebugger.so.1",
        "libnvcuvid.so.1",
        "libnvidia-encode.so.1",
        "NVCUDA.DLL",
        "nvml.dll",
    ):
        assert is_driver(name), name
    for name in (
        "libcudart.so.13",
        "libcufile.so.0",
        "libnvrtc.so.13",
        "libcublas.so.13",
        "libnvvm.so.4",
        "libcudnn.so.9",
        "libcuda_stub.a",
        "cudart64_13.dll",
    ):
        assert not is_driver(name), name


def test_driver_api_lists_are_exact() -> None:
    cuda = driver_api("cuda_driver_api").symbols
    assert {"cuInit", "cuLaunchKernel", "cuMemAlloc_v2", "cuGetProcAddress_v2", "cuLaunchKernel_ptsz"} <= cuda
    assert not {"cuFileRead", "cublasCreate_v2", "cudaMalloc", "CUdevice"} & cuda
    nvml = driver_api("nvml_api").symbols
    assert {"nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlShutdown"} <= nvml


def test_pe_and_mach_o_driver_links_say_who_fails_without_a_driver(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A .pyd importing nvcuda.dll: Python's "DLL load failed while importing"; the same DLL beside
    a .pyd that does not reach it: a plugin (a note); the macOS seed bug: dyld's "Library not loaded"."""
    import shutil
    from pathlib import Path

    from linkaudit import audit

    samples = Path(__file__).resolve().parents[2] / "sample_bins"
    shutil.copy(samples / "pe/driver/plain_driver.dll", tmp_path / "_drv.pyd")
    (f,) = [f for f in audit([str(tmp_path)]).findings if f.rule == "driver-link"]
    assert f.severity.value == "error"
    assert (
        f.evidence["would_fail"]
        == "ImportError: DLL load failed while importing _drv: The specified module could not be found."
    )
    assert f.evidence["roots"] == [
        {
            "root": str(tmp_path / "_drv.pyd"),
            "kind": "python-import",
            "reached": True,
            "chain": ["_drv.pyd", "nvcuda.dll"],
        }
    ]
    (tmp_path / "_drv.pyd").rename(tmp_path / "plugin.dll")
    shutil.copy(samples / "pe/fixed/torch_cuda.dll", tmp_path / "_C.pyd")
    shutil.copy(samples / "pe/fixed/nvrtc64_120_0.dll", tmp_path / "nvrtc64_120_0.dll")
    (f,) = [f for f in audit([str(tmp_path)]).findings if f.rule == "driver-link"]
    assert f.severity.value == "note" and "no import root's load reaches this file" in f.message
    (f,) = [f for f in audit([str(samples / "macho/broken")]).findings if f.rule == "driver-link"]
    assert f.evidence["would_fail"] == "Library not loaded: @rpath/libcuda.dylib"
    assert f.evidence["roots"][0]["chain"] == ["libtorch_cuda.dylib", "libcuda.dylib"]


def test_an_elf_plugin_is_one_among_the_libraries_the_imports_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A library linking libcuda that no import loads is a plugin (a note) only when it lies among
    the libraries the imports do load (torch/lib's libcaffe2_nvrtc.so); given with an unrelated
    extension module that loads nothing beside it, it is judged as if given alone: an error (before:
    a note, so a pre-commit hook's verdict hung on which other files were staged)."""
    import shutil
    from pathlib import Path

    from linkaudit import audit
    from tests.loader.dagbuild import Lib, write

    samples = Path(__file__).resolve().parents[2] / "sample_bins"
    unrelated = samples / "ext_libc/_libconly.cpython-311-x86_64-linux-gnu.so"

    def severity(*paths: Path) -> str:
        (f,) = [f for f in audit([str(p) for p in paths]).findings if f.rule == "driver-link"]
        return f.severity.value

    alone = tmp_path / "alone"
    alone.mkdir()
    shutil.copy(samples / "broken/libtorch_cuda.so", alone)
    shutil.copy(unrelated, alone)
    assert severity(alone / "libtorch_cuda.so") == "error"
    assert severity(alone / "libtorch_cuda.so", alone / unrelated.name) == "error"
    assert severity(alone) == "error"
    package = tmp_path / "pkg"
    (package / "lib").mkdir(parents=True)
    shutil.copy(samples / "broken/libtorch_cuda.so", package / "lib")
    write(str(package / "lib"), [Lib("libsib.so", soname="libsib.so")])
    extension = Lib("_C.cpython-311-x86_64-linux-gnu.so", needed=("libsib.so",), runpath=("$ORIGIN/lib",))
    write(str(package), [extension])
    assert severity(package) == "note"  # the import loads lib/libsib.so: lib/ is where its libraries lie


def test_the_roots_reaching_a_driver_link_are_found_once_not_per_load(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``n`` libraries each linking libcuda.so.1, each its own dlopen root: ``LinkageAnalysis.chains``
    asked every load whether it holds each file (n x n ``Load.object`` calls: 3,000 roots, 9M
    calls, 3 s of 3.8).  The loads holding a path are now found from the parts owning it upward:
    the calls grow with n, and a file reached through another root's dependency (a load built
    on the load of its dependency: ``Load.below``) still names that root and its chain."""
    from linkaudit import audit
    from linkaudit.loader.closure import Load
    from tests.loader.dagbuild import Lib, write

    def calls(n: int) -> tuple[int, dict[str, object], str]:
        directory = tmp_path / f"n{n}"
        directory.mkdir()
        libs = [Lib(f"l{i}.so", soname=f"l{i}.so", needed=("libcuda.so.1",)) for i in range(n)]
        libs.append(Lib("libtop.so", soname="libtop.so", needed=("l0.so",), runpath=("$ORIGIN",)))
        write(str(directory), libs)
        count = 0
        real = Load.object

        def counted(self: Load, path: str) -> object:
            nonlocal count
            count += 1
            return real(self, path)

        monkeypatch.setattr(Load, "object", counted)
        found = [f for f in audit([str(directory)]).findings if f.rule == "driver-link"]
        monkeypatch.setattr(Load, "object", real)
        assert len(found) == n
        (first,) = [f for f in found if f.file.endswith("/l0.so")]
        return count, first.evidence, str(directory)

    small, evidence, at = calls(20)
    large, _, _ = calls(80)
    assert large <= 4 * 1.5 * small + 50, (small, large)  # n x n would be ~16x
    roots = evidence["roots"]
    assert isinstance(roots, list)
    assert [r["chain"] for r in roots] == [
        [f"{at}/l0.so", "libcuda.so.1"],
        [f"{at}/libtop.so", f"{at}/l0.so", "libcuda.so.1"],
    ]
