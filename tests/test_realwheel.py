"""The main job on real input: torch 2.14.1 (CUDA 13 build) ``torch/lib``.

Skipped cleanly where ``pip download --no-deps torch==2.14.1`` cannot fetch the wheel.
Facts asserted are read off the wheel: libcaffe2_nvrtc.so NEEDs libcuda.so.1 (a
plugin PyTorch dlopens only with a GPU present); libtorch_cuda.so NEEDs
libnvrtc.so.13 and uses nine nvrtc* symbols versioned @libnvrtc.so.13;
libtorch_python.so uses six cuFile* symbols from its NEEDED libcufile.so.0;
libtorch_cuda.so sixteen cusparseLt* from libcusparseLt.so.0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linkaudit import read

from .output.schema import validate_report

pytestmark = pytest.mark.realwheel


def test_check_json_over_torch_lib(run_cli, torch_lib: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--format", "json", str(torch_lib))
    doc = json.loads(r.stdout)
    validate_report(doc)
    assert len(doc["files"]) >= 12
    assert all(f["status"] == "audited" for f in doc["files"])
    driver = [f for f in doc["findings"] if f["rule"] == "driver-link"]
    assert [(Path(f["file"]).name, f["subject"]) for f in driver] == [("libcaffe2_nvrtc.so", "libcuda.so.1")]
    assert driver[0]["evidence"]["unused"] is False  # it really calls cuLaunchKernel & co.
    assert [f for f in doc["findings"] if f["rule"] == "missing-provider"] == []
    assert r.exit_code == 1


def test_noise_families_are_provided(torch_lib: Path) -> None:
    (python,) = read(str(torch_lib / "libtorch_python.so"))
    cufile = [s for s in python.symbols.iter_undefined() if s.name.startswith("cuFile")]
    assert len(cufile) == 6 and "libcufile.so.0" in python.needed_names
    (cuda,) = read(str(torch_lib / "libtorch_cuda.so"))
    sparse_lt = [s for s in cuda.symbols.iter_undefined() if s.name.startswith("cusparseLt")]
    assert len(sparse_lt) == 16
    nvrtc = [s for s in cuda.symbols.iter_undefined() if s.name.startswith("nvrtc")]
    assert len(nvrtc) == 9 and all(s.display_name().endswith("@libnvrtc.so.13") for s in nvrtc)
    assert "libnvrtc.so.13" in cuda.needed_names and "libcuda.so.1" not in cuda.needed_names


def test_every_library_carries_the_nvidia_rpath(torch_lib: Path) -> None:
    for path in sorted(torch_lib.glob("*.so*")):
        (b,) = read(str(path))
        assert b.rpath and all(e.startswith("$ORIGIN") for e in b.rpath), path.name


def test_glibc_ceiling_of_the_manylinux_2_28_tag(run_cli, torch_lib: Path) -> None:  # type: ignore[no-untyped-def]
    """The wheel is tagged manylinux_2_28: nothing may need more than GLIBC_2.28."""
    r = run_cli(
        "check",
        "--no-loader",
        "--format",
        "json",
        "--max-version",
        "GLIBC_2.28",
        "--ignore",
        "driver-link",
        str(torch_lib),
    )
    doc = json.loads(r.stdout)
    assert [f for f in doc["findings"] if f["rule"] == "symbol-version"] == []
    assert r.exit_code == 0


def test_the_wheel_file_gives_the_findings_of_its_unpacked_tree(torch_wheel_file: Path, tmp_path: Path) -> None:
    """``check`` on the .whl itself, not extracted, finds what it finds on the tree unzip makes of it
    (every binary member; fingerprints relative to the input) under the policy the wheel's tag
    implies (manylinux_2_28: its ceilings, and its system libraries as the target environment), and
    labels members ``WHEEL!member``."""
    import zipfile

    from linkaudit import AuditConfig, VersionCeiling, audit
    from linkaudit.config.baseline import dumps
    from linkaudit.config.profiles import get_profile
    from linkaudit.formats import SNIFF_BYTES, sniff

    tree = tmp_path / "unpacked"
    with zipfile.ZipFile(torch_wheel_file) as zf:
        for info in zf.infolist():
            with zf.open(info) as member:
                if info.is_dir() or sniff(member.read(SNIFF_BYTES)) is None:
                    continue
            zf.extract(info, tree)
    from_wheel = audit([str(torch_wheel_file)])
    policy = get_profile("manylinux_2_28")
    ceilings = tuple(VersionCeiling.parse(v) for v in policy.max_versions)
    as_policy = AuditConfig(max_versions=ceilings, profile=policy.name, target_env="policy")
    from_tree = audit([str(tree)], as_policy)
    assert len(from_wheel.files) == len(from_tree.files) >= 16
    assert all(f.path.startswith(f"{torch_wheel_file}!torch/") for f in from_wheel.files)
    # rpath-outside-package speaks of packages only: torch/lib's $ORIGIN/../../nvidia/... entries.
    package_only = [f for f in from_wheel.findings if f.rule == "rpath-outside-package"]
    assert any(f.subject == "$ORIGIN/../../nvidia/cu13/lib" for f in package_only)
    same = [f for f in from_wheel.findings if f.rule != "rpath-outside-package"]
    # a member is keyed under the wheel's target (cp3xx-cp3xx-manylinux_x86_64:torch/...), a tree's file by its path
    keyed = json.loads(dumps(same, [str(torch_wheel_file)], frozenset(from_wheel.packages)))["findings"]
    assert all(":torch/" in k["file"] for k in keyed)
    untargeted = sorted((k["rule"], k["file"].partition(":")[2], k["subject"]) for k in keyed)
    tree_keys = json.loads(dumps(from_tree.findings, [str(tree)], frozenset(from_tree.packages)))["findings"]
    assert untargeted == sorted((k["rule"], k["file"], k["subject"]) for k in tree_keys)
    assert any(
        f.rule == "driver-link" and f.file.endswith("!torch/lib/libcaffe2_nvrtc.so") for f in from_wheel.findings
    )


def test_a_lone_wheels_declared_libraries_are_notes(torch_wheel_file: Path) -> None:
    """The torch wheel checked alone: libcublas.so.13 and the other CUDA libraries its Requires-Dist
    brings (cuda-toolkit[...], nvidia-cudnn-cu13, ...) are not in it, and pip installs them with it —
    a note saying so, as for a lone conda package's run requirements; never an error."""
    from linkaudit import audit

    missing = [f for f in audit([str(torch_wheel_file)]).findings if f.rule == "library-not-found"]
    cublas = [f for f in missing if f.subject == "libcublas.so.13"]
    assert cublas and "pip installs it with torch" in cublas[0].message
    assert {f.severity.value for f in missing} == {"note"}, [(f.subject, f.severity.value) for f in missing]


def test_real_windows_dlls_in_a_wheel(nvrtc_windows_wheel: Path) -> None:
    """The 90 MB nvrtc64_120_0.dll of NVIDIA's Windows wheel: imports only Windows' own DLLs, exports
    nvrtcCreateProgram & co.; the whole wheel audits clean and fast."""
    from linkaudit import audit
    from linkaudit.model import Format

    report = audit([str(nvrtc_windows_wheel)])
    assert [f for f in report.findings if f.severity.value == "error"] == []
    paths = [f.path for f in report.files]
    assert any(p.endswith("!nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll") for p in paths) and len(paths) == 3
    from linkaudit.packages import staged_inputs

    with staged_inputs([str(nvrtc_windows_wheel)]) as staged:
        dll = staged.member_path("nvidia/cuda_nvrtc/bin/nvrtc64_120_0.dll")
        assert dll is not None
        (binary,) = read(dll)
    assert binary.format is Format.PE and binary.machine == "x86-64" and binary.soname == "nvrtc64_120_0.dll"
    exported = {s.name for s in binary.symbols if s.defined}
    assert {"nvrtcCreateProgram", "nvrtcCompileProgram", "nvrtcGetPTX"} <= exported
    assert {n.name.lower() for n in binary.needed} <= {
        "user32.dll",
        "kernel32.dll",
        "advapi32.dll",
        "ole32.dll",
        "shell32.dll",
    }


def _by_rule(findings: list) -> dict[str, list]:  # type: ignore[type-arg]
    out: dict[str, list] = {}  # type: ignore[type-arg]
    for f in findings:
        out.setdefault(f.rule, []).append(f)
    return out


def test_official_torch_macos_wheel(torch_macos_wheel: Path) -> None:
    """torch 2.9.1 macosx_11_0_arm64, read off the wheel: _C's LC_RPATH keeps the build machine's
    /Users/runner/... conda env; the bundled libomp.dylib's install name is the build machine's
    Homebrew path and it needs macOS 14 (the tag promises 11); every two-level import among
    torch/lib's dylibs binds (no unresolved-symbol), every @rpath load resolves."""
    from linkaudit import audit
    from linkaudit.report import Severity

    report = audit([str(torch_macos_wheel)])
    rules = _by_rule(report.findings)
    assert sorted(rules) == ["min-os-version", "rpath-leak", "wheel-tag-mismatch"]
    (renamed,) = rules["wheel-tag-mismatch"]  # named cp311-none, its WHEEL says cp311-cp311: a note
    assert renamed.severity.value == "note" and renamed.evidence["wheel_file_tags"] == ["cp311-cp311-macosx_11_0_arm64"]
    leaks = {(f.file.split("!", 1)[1], f.evidence["tag"], f.subject) for f in rules["rpath-leak"]}
    assert leaks == {
        ("torch/_C.cpython-311-darwin.so", "LC_RPATH", "/Users/runner/work/_temp/anaconda/envs/wheel_py311/lib"),
        ("torch/lib/libomp.dylib", "LC_ID_DYLIB", "/opt/homebrew/opt/libomp/lib/libomp.dylib"),
    }
    (minos,) = rules["min-os-version"]
    assert minos.file.endswith("!torch/lib/libomp.dylib") and minos.evidence["min_os"] == "14.0"
    assert report.count(Severity.ERROR) == 2 and report.count(Severity.WARNING) == 1  # the install name: a warning
    from linkaudit.packages import staged_inputs

    with staged_inputs([str(torch_macos_wheel)]) as staged:
        path = staged.member_path("torch/lib/libtorch_python.dylib")
        assert path is not None
        (python,) = read(path)
    bound = [s for s in python.symbols.iter_undefined() if s.version is not None]
    assert sum(1 for s in bound if s.version is not None and s.version.file == "@rpath/libtorch_cpu.dylib") > 1000


def test_entry_selects_the_dyld_root_in_the_torch_macos_wheel(run_cli, torch_macos_wheel: Path) -> None:  # type: ignore[no-untyped-def]
    """``tree --entry torch/_C.cpython-311-darwin.so`` (a member path as installed) draws that one
    root, as for ELF; without it, every extension module and executable of the wheel is a root."""
    member = "torch/_C.cpython-311-darwin.so"
    every = json.loads(run_cli("tree", "--format", "json", str(torch_macos_wheel)).stdout)["dyld_roots"]
    assert len(every) > 1
    doc = json.loads(run_cli("tree", "--format", "json", "--entry", member, str(torch_macos_wheel)).stdout)
    assert [(d["root"].rsplit("!", 1)[-1], d["kind"], d["machine"]) for d in doc["dyld_roots"]] == [
        (member, "python-import", "arm64")
    ]


def test_official_torch_windows_wheel(torch_windows_wheel: Path) -> None:
    """torch 2.9.1 win_amd64 (a CPU build): every import among torch/lib's DLLs is exported by the
    DLL it names (torch_python.dll imports 5,407 functions from torch_cpu.dll's 60,252 exports);
    the extension modules find torch/lib only through the DLL directory torch's __init__ adds
    (``--dll-directory torch/lib``, a member directory of the wheel); MSVCP140.dll is the Visual C++
    Redistributable's (a warning); the .lib files are read as Windows libraries."""
    from linkaudit import AuditConfig, audit

    bare = _by_rule(audit([str(torch_windows_wheel)]).findings)
    assert {f.subject for f in bare["library-not-found"] if f.file.endswith("!torch/_C.cp311-win_amd64.pyd")} == {
        "torch_python.dll"
    }
    report = audit([str(torch_windows_wheel)], AuditConfig(dll_directories=("torch/lib",)))
    rules = _by_rule(report.findings)
    assert "unresolved-symbol" not in rules and "missing-provider" not in rules
    assert "wheel-architecture" not in rules  # every DLL, .pyd and .exe is x64, as win_amd64 says
    assert [f for f in report.findings if f.severity.value == "error"] == []
    assert {(f.subject, f.severity.value) for f in rules["library-not-found"]} == {("MSVCP140.dll", "warning")}
    # The .lib files are read as Windows libraries (issue 17): static libraries' COFF members and
    # import libraries' short import members (torch_cpu.lib: 60,255 members for torch_cpu.dll's exports).
    assert "no-binaries" not in rules and "unreadable-input" not in rules
    coff = {f.path.rsplit("!", 1)[-1] for f in report.files if f.format == "coff"}
    assert "torch/lib/torch_cpu.lib(torch_cpu.dll)" in coff
    assert any(p.startswith("torch/lib/XNNPACK.lib(") for p in coff)
