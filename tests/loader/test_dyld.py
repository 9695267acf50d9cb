"""dyld emulation (linkaudit/loader/dyld.py) on the committed Mach-O samples, copied into layouts:
DYLD_LIBRARY_PATH before the install name, DYLD_FALLBACK_LIBRARY_PATH after it, @executable_path,
a dylib of another architecture skipped ("wrong-machine"), the slice of a universal dylib matching
the loader's machine, every slice of a universal root loaded by itself."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from linkaudit import AuditConfig, audit, read
from linkaudit.loader.dyld import analyze_dyld, dyld_reason
from linkaudit.loader.images import ImageAttempt, ImageLoad, ImageLoader, ImageOutcome
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Kind

MACHO = Path(__file__).resolve().parents[2] / "sample_bins" / "macho"
TORCH = MACHO / "fixed/libtorch_cuda.dylib"  # x86_64; needs @rpath/libnvrtc.12.dylib, LC_RPATH @loader_path
NVRTC = MACHO / "fixed/libnvrtc.12.dylib"  # x86_64
ARM64 = MACHO / "misc/libleaky.dylib"  # arm64 only
UNIVERSAL = MACHO / "misc/universal.dylib"  # x86_64 + arm64, needs @rpath/libnvrtc.12.dylib, LC_RPATH @loader_path


def _copy(src: Path, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def _loads(*paths: Path, **options: object) -> list[ImageLoad]:
    binaries = [b for p in paths for b in read(str(p))]
    return analyze_dyld(binaries, **options)  # type: ignore[arg-type]


def _nvrtc(load: ImageLoad):  # type: ignore[no-untyped-def]
    return load.resolutions[(load.root, "@rpath/libnvrtc.12.dylib")]


def test_dyld_library_path_is_searched_by_leaf_name_before_the_install_name(tmp_path: Path) -> None:
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    _copy(NVRTC, tmp_path / "lib/libnvrtc.12.dylib")  # where LC_RPATH @loader_path finds it
    override = _copy(NVRTC, tmp_path / "override/libnvrtc.12.dylib")
    (plain,) = _loads(torch)
    assert _nvrtc(plain).path == str(tmp_path / "lib/libnvrtc.12.dylib")
    (load,) = _loads(torch, library_path=[str(tmp_path / "empty"), str(tmp_path / "override")])
    res = _nvrtc(load)
    assert res.path == str(override) and res.source == "DYLD_LIBRARY_PATH"
    assert [(a.path, a.source, a.outcome) for a in res.attempts] == [
        (str(tmp_path / "empty/libnvrtc.12.dylib"), "DYLD_LIBRARY_PATH", "missing"),
        (str(override), "DYLD_LIBRARY_PATH", "found"),
    ]
    assert load.objects == [str(torch), str(override)] and load.loader is ImageLoader.DYLD


def test_dyld_library_path_overrides_even_the_shared_cache(tmp_path: Path) -> None:
    """man dyld: DYLD_LIBRARY_PATH comes before the install name, whatever it is — /usr/lib too."""
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    (load,) = _loads(torch, library_path=[str(tmp_path / "override")])
    system = load.resolutions[(str(torch), "/usr/lib/libSystem.B.dylib")]
    assert system.system and system.source == "shared-cache"
    assert [a.path for a in system.attempts] == [str(tmp_path / "override/libSystem.B.dylib")]
    shadow = _copy(NVRTC, tmp_path / "override/libSystem.B.dylib")
    (load,) = _loads(torch, library_path=[str(tmp_path / "override")])
    system = load.resolutions[(str(torch), "/usr/lib/libSystem.B.dylib")]
    assert not system.system and system.path == str(shadow) and system.source == "DYLD_LIBRARY_PATH"


def test_fallback_library_path_only_after_the_install_name_fails(tmp_path: Path) -> None:
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    fallback = _copy(NVRTC, tmp_path / "fallback/libnvrtc.12.dylib")
    (alone,) = _loads(torch)
    assert _nvrtc(alone).path is None
    (load,) = _loads(torch, fallback_library_path=[str(tmp_path / "fallback")])
    res = _nvrtc(load)
    assert res.path == str(fallback) and res.source == "DYLD_FALLBACK_LIBRARY_PATH"
    assert [(a.source, a.outcome) for a in res.attempts] == [
        ("LC_RPATH of libtorch_cuda.dylib", "missing"),
        ("DYLD_FALLBACK_LIBRARY_PATH", "found"),
    ]
    beside = _copy(NVRTC, tmp_path / "lib/libnvrtc.12.dylib")
    (load,) = _loads(torch, fallback_library_path=[str(tmp_path / "fallback")])
    assert _nvrtc(load).path == str(beside) and len(_nvrtc(load).attempts) == 1


def test_library_not_found_names_every_place_with_its_source(tmp_path: Path) -> None:
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    config = AuditConfig(
        target=TargetEnvironment(),
        dyld_library_path=(str(tmp_path / "dlp"),),
        dyld_fallback_library_path=(str(tmp_path / "fb"),),
    )
    (finding,) = [f for f in audit([str(torch)], config).findings if f.rule == "library-not-found"]
    assert [(a["path"], a["source"]) for a in finding.evidence["attempts"]] == [
        (str(tmp_path / "dlp/libnvrtc.12.dylib"), "DYLD_LIBRARY_PATH"),
        (str(tmp_path / "lib/libnvrtc.12.dylib"), "LC_RPATH of libtorch_cuda.dylib"),
        (str(tmp_path / "fb/libnvrtc.12.dylib"), "DYLD_FALLBACK_LIBRARY_PATH"),
    ]
    assert "3 places tried" in finding.message
    _copy(NVRTC, tmp_path / "fb/libnvrtc.12.dylib")
    assert [f for f in audit([str(torch)], config).findings if f.rule == "library-not-found"] == []


def test_a_dylib_of_another_architecture_is_skipped_and_named(tmp_path: Path) -> None:
    """An arm64-only libnvrtc beside an x86_64 library: dyld skips it ("mach-o file, but is an
    incompatible architecture") and searches on; nothing else: Library not loaded."""
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    wrong = _copy(ARM64, tmp_path / "lib/libnvrtc.12.dylib")
    (load,) = _loads(torch)
    res = _nvrtc(load)
    assert res.path is None
    (tried,) = res.attempts
    assert (tried.path, tried.outcome, tried.machines) == (str(wrong), ImageOutcome.WRONG_MACHINE, ("arm64",))
    assert tried.detail == "have arm64, need x86_64"
    (finding,) = [f for f in audit([str(torch)]).findings if f.rule == "library-not-found"]
    assert (
        f"'{wrong}' (mach-o file, but is an incompatible architecture (have 'arm64', need 'x86_64'))" in finding.message
    )
    assert finding.evidence["attempts"][0]["outcome"] == "wrong-machine"
    assert finding.evidence["roots"][0]["machine"] == "x86_64"
    # the search goes on past it: a good one in the fallback directory is loaded
    good = _copy(NVRTC, tmp_path / "fb/libnvrtc.12.dylib")
    (load,) = _loads(torch, fallback_library_path=[str(tmp_path / "fb")])
    assert _nvrtc(load).path == str(good)
    assert [a.outcome for a in _nvrtc(load).attempts] == ["wrong-machine", "found"]


def test_not_a_mach_o_file_is_skipped(tmp_path: Path) -> None:
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    (tmp_path / "lib/libnvrtc.12.dylib").write_text("not a dylib\n")
    good = _copy(NVRTC, tmp_path / "fb/libnvrtc.12.dylib")
    (load,) = _loads(torch, fallback_library_path=[str(tmp_path / "fb")])
    assert _nvrtc(load).path == str(good)
    assert [a.outcome for a in _nvrtc(load).attempts] == ["invalid", "found"]
    assert dyld_reason(_nvrtc(load).attempts[0], "x86_64") == "not a mach-o file"


def test_the_slice_of_the_loaders_machine_is_loaded(tmp_path: Path) -> None:
    """A universal libnvrtc beside an x86_64 library: its x86_64 slice is the image loaded."""
    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    fat = _copy(UNIVERSAL, tmp_path / "lib/libnvrtc.12.dylib")
    (load,) = _loads(torch)
    assert _nvrtc(load).path == str(fat)
    assert load.images[str(fat)].machine == "x86_64" and load.images[str(fat)].member == "x86_64"


def test_every_slice_of_a_universal_root_is_loaded_by_its_own_machine(tmp_path: Path) -> None:
    """universal.dylib (x86_64 + arm64) beside an x86_64-only libnvrtc: the x86_64 slice loads,
    the arm64 slice (an Apple silicon Mac) does not — and the finding says why."""
    root = _copy(UNIVERSAL, tmp_path / "universal.dylib")
    nvrtc = _copy(NVRTC, tmp_path / "libnvrtc.12.dylib")
    loads = {ld.machine: ld for ld in _loads(root)}
    assert sorted(loads) == ["arm64", "x86_64"]
    assert _nvrtc(loads["x86_64"]).path == str(nvrtc)
    (tried,) = _nvrtc(loads["arm64"]).attempts
    assert _nvrtc(loads["arm64"]).path is None and tried.outcome == "wrong-machine"
    (finding,) = [f for f in audit([str(root)]).findings if f.rule == "library-not-found"]
    assert "(have 'x86_64', need 'arm64')" in finding.message
    assert [r["machine"] for r in finding.evidence["roots"]] == ["arm64"]
    # a universal dependency serves both
    _copy(UNIVERSAL, tmp_path / "libnvrtc.12.dylib")
    loads = {ld.machine: ld for ld in _loads(root)}
    for machine, load in loads.items():
        assert load.images[str(nvrtc)].machine == machine


def test_dyld_reason_for_a_fat_file_without_the_slice(tmp_path: Path) -> None:
    """misc/arm64_only.dylib is a universal file of one arm64 slice: for an x86_64 loader, dyld's
    "fat file, but missing compatible architecture" — not the thin file's wording."""
    _copy(MACHO / "fixed/libtorch_cuda.dylib", tmp_path / "libtorch_cuda.dylib")
    _copy(MACHO / "misc/arm64_only.dylib", tmp_path / "libnvrtc.12.dylib")
    (f,) = [f for f in audit([str(tmp_path)]).findings if f.rule == "library-not-found"]
    assert "(fat file, but missing compatible architecture (have (arm64), need (x86_64)))" in f.message
    thin = tmp_path / "thin"
    thin.mkdir()
    _copy(MACHO / "fixed/libtorch_cuda.dylib", thin / "libtorch_cuda.dylib")
    _copy(MACHO / "chained/libnvrtc.12.dylib", thin / "libnvrtc.12.dylib")
    (f,) = [f for f in audit([str(thin)]).findings if f.rule == "library-not-found"]
    assert "(mach-o file, but is an incompatible architecture (have 'arm64', need 'x86_64'))" in f.message
    tried = ImageAttempt("/x/libA.dylib", "install-name", ImageOutcome.WRONG_MACHINE, "fat file: ", ("arm64", "i386"))
    assert (
        dyld_reason(tried, "x86_64")
        == "fat file, but missing compatible architecture (have (arm64,i386), need (x86_64))"
    )
    assert dyld_reason(ImageAttempt("/x/libA.dylib", "install-name", ImageOutcome.MISSING), "x86_64") == "no such file"


def test_executable_path_is_the_given_executable_or_the_executable_root(tmp_path: Path) -> None:
    """@executable_path in an LC_RPATH: the --executable-path's directory for an extension module
    (the interpreter), the root's own directory for an executable; unset, nothing to try."""
    (torch,) = read(str(_copy(TORCH, tmp_path / "app/lib/libtorch_cuda.dylib")))
    nvrtc = _copy(NVRTC, tmp_path / "app/Frameworks/libnvrtc.12.dylib")
    ext = dataclasses.replace(
        torch,
        path=str(tmp_path / "app/lib/_C.so"),
        kind=Kind.PYTHON_EXTENSION,
        rpath=("@executable_path/../Frameworks",),
    )
    (load,) = analyze_dyld([ext])
    assert _nvrtc(load).path is None and _nvrtc(load).attempts == ()
    (load,) = analyze_dyld([ext], executable=str(tmp_path / "app/bin/python3"))
    assert _nvrtc(load).path == str(nvrtc)
    exe = dataclasses.replace(ext, path=str(tmp_path / "app/bin/tool"), kind=Kind.EXECUTABLE)
    (load,) = analyze_dyld([exe], executable=str(tmp_path / "elsewhere/python3"))
    assert _nvrtc(load).path == str(nvrtc) and load.kind == "executable"


def test_the_committed_executable_finds_its_dylibs_through_executable_path(tmp_path: Path) -> None:
    """misc/exe/bin/app (MH_EXECUTE) has LC_RPATH @executable_path/../lib: the executable is its own
    main executable, so lib/libtorch_cuda.dylib resolves; moved elsewhere alone, not found."""
    (app,) = read(str(MACHO / "misc/exe/bin/app"))
    assert (app.kind, app.rpath) == (Kind.EXECUTABLE, ("@executable_path/../lib",))
    assert audit([str(MACHO / "misc/exe")]).findings == ()
    _copy(MACHO / "misc/exe/bin/app", tmp_path / "app")
    (f,) = [f for f in audit([str(tmp_path / "app")]).findings if f.rule == "library-not-found"]
    assert f.subject == "@rpath/libtorch_cuda.dylib"
    assert [a["path"] for a in f.evidence["attempts"]] == [str(tmp_path.parent / "lib/libtorch_cuda.dylib")]


def test_no_lc_rpath_in_the_chain_is_said_in_dylds_words() -> None:
    """chain/torch/lib/libtorch_cuda.dylib given alone: no image of its load has an LC_RPATH."""
    (f,) = [f for f in audit([str(MACHO / "misc/chain/torch/lib/libtorch_cuda.dylib")]).findings]
    assert f.rule == "library-not-found" and "tried: no LC_RPATH's found" in f.message


def test_the_report_names_the_mach_o_and_pe_import_roots(run_cli) -> None:  # type: ignore[no-untyped-def]
    import json

    doc = json.loads(run_cli("check", "--no-config", "--format", "json", str(MACHO / "misc/chain")).stdout)
    assert doc["roots"] == [{"path": str(MACHO / "misc/chain/torch/_C.so"), "kind": "python-import", "reached": True}]
    pe = MACHO.parent / "pe/imports/app.exe"
    text = run_cli("check", "--no-config", str(pe)).stdout
    assert f"import roots: {pe} [executable]" in text


def test_a_place_longer_than_macos_path_max_is_never_opened_and_kept_short(tmp_path: Path) -> None:
    """A DYLD_LIBRARY_PATH entry of 6,000 bytes: macOS's open() refuses it (PATH_MAX 1,024), so dyld
    finds nothing there; the attempt says so, with the path's start, length and end."""
    from linkaudit.loader.dyld import MACOS_PATH_MAX

    torch = _copy(TORCH, tmp_path / "lib/libtorch_cuda.dylib")
    _copy(NVRTC, tmp_path / "lib/libnvrtc.12.dylib")
    long_dir = str(tmp_path) + "/." * 3000
    config = AuditConfig(target=TargetEnvironment(), dyld_library_path=(long_dir,))
    (load,) = analyze_dyld(list(read(str(torch))), library_path=(long_dir,))
    first = _nvrtc(load).attempts[0]
    assert first.outcome is ImageOutcome.MISSING and "PATH_MAX" in first.detail
    assert len(first.path) < 250 and first.path.endswith("/./libnvrtc.12.dylib"), first.path
    assert _nvrtc(load).path == str(tmp_path / "lib/libnvrtc.12.dylib")  # found past it, by LC_RPATH
    short = str(tmp_path / "d" / ("x" * (MACOS_PATH_MAX - len(str(tmp_path)) - 40)))
    (load,) = analyze_dyld(list(read(str(torch))), library_path=(short,))
    assert _nvrtc(load).attempts[0].path == short + "/libnvrtc.12.dylib"  # under PATH_MAX: tried as ever
    assert not [f for f in audit([str(torch)], config).findings if f.rule == "library-not-found"]
