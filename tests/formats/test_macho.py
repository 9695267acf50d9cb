"""The Mach-O reader on the committed samples (sample_bins/macho/, built by sample_bins/build_macho.sh):
thin and universal files, install names, LC_RPATH, minimum OS, two-level and flat imports; the seed
bug in Mach-O form; duplicate and leaked LC_RPATH entries; hostile variants."""

from __future__ import annotations

import dataclasses
import json
import struct
import subprocess
from pathlib import Path

import pytest

from linkaudit import audit, read
from linkaudit.errors import InputError
from linkaudit.model import Format, Kind, SymbolTable

from ..tools import find_tool, needs

MACHO = Path(__file__).resolve().parents[2] / "sample_bins" / "macho"


def test_thin_and_universal_files() -> None:
    (fixed,) = read(str(MACHO / "fixed/libtorch_cuda.dylib"))
    assert (fixed.format, fixed.machine, fixed.bits, fixed.kind) == (Format.MACHO, "x86_64", 64, Kind.SHARED_LIBRARY)
    assert fixed.soname == "@rpath/libtorch_cuda.dylib" and fixed.rpath == ("@loader_path",)
    assert [n.name for n in fixed.needed] == ["@rpath/libnvrtc.12.dylib", "/usr/lib/libSystem.B.dylib"]
    assert (fixed.min_os, fixed.sdk) == ("11.0", "11.0")
    imports = {(s.name, s.version.file if s.version else None) for s in fixed.symbols.iter_undefined()}
    assert ("nvrtcCreateProgram", "@rpath/libnvrtc.12.dylib") in imports  # the leading underscore is Mach-O's
    assert [s.name for s in fixed.symbols if s.defined] == ["torch_cuda_compile"]
    slices = read(str(MACHO / "misc/universal.dylib"))
    assert [(b.machine, b.display_path.rsplit("(", 1)[-1]) for b in slices] == [
        ("x86_64", "x86_64)"),
        ("arm64", "arm64)"),
    ]
    (broken,) = read(str(MACHO / "broken/libtorch_cuda.dylib"))
    imported = {s.name: s.version.file if s.version else None for s in broken.symbols.iter_undefined()}
    assert imported["nvrtcCreateProgram"] == "@rpath/libcuda.dylib"  # two-level, bound to the driver
    for flat in ("flat_lookup", "flat_namespace"):  # -undefined dynamic_lookup; -flat_namespace
        (b,) = read(str(MACHO / "misc" / flat / "libtorch_cuda.dylib"))
        assert {s.name: s.version for s in b.symbols.iter_undefined()}["nvrtcCreateProgram"] is None, flat
    (weak,) = read(str(MACHO / "misc/weak/libtorch_cuda.dylib"))
    assert (weak.needed[0].name, weak.needed[0].kind.value) == ("@rpath/libnvrtc.12.dylib", "weak")
    assert all(s.weak for s in weak.symbols.iter_undefined() if s.name.startswith("nvrtc"))


def test_the_seed_bug_in_mach_o_form_and_its_fix(run_cli) -> None:  # type: ignore[no-untyped-def]
    """broken/ binds nvrtc* (two-level) to @rpath/libcuda.dylib, the CUDA driver on macOS: driver-link
    and missing-provider, as in the ELF and PE forms; left to flat lookup, missing-provider alone."""
    doc = json.loads(run_cli("check", "--no-config", "--format", "json", str(MACHO / "broken")).stdout)
    driver, finding = doc["findings"]
    assert (driver["rule"], driver["subject"], driver["severity"]) == ("driver-link", "@rpath/libcuda.dylib", "error")
    assert driver["message"].startswith("LC_LOAD_DYLIB names @rpath/libcuda.dylib, the CUDA driver API")
    assert finding["rule"] == "missing-provider" and finding["subject"] == "libnvrtc*.dylib"
    assert finding["evidence"]["symbols"] == ["nvrtcCompileProgram", "nvrtcCreateProgram"]
    assert "2 imports of the nvrtc family" in finding["message"]
    assert 'dyld stops the load: "Symbol not found: _nvrtcCompileProgram' in finding["message"]
    flat = json.loads(run_cli("check", "--no-config", "--format", "json", str(MACHO / "misc/flat_lookup")).stdout)
    assert [(f["rule"], f["subject"]) for f in flat["findings"]] == [("missing-provider", "libnvrtc*.dylib")]
    assert "and no dylib load command (LC_LOAD_DYLIB) provides them" in flat["findings"][0]["message"]
    fixed = run_cli("check", "--no-config", str(MACHO / "fixed"))
    assert fixed.exit_code == 0 and "0 errors, 0 warnings, 0 notes" in fixed.stdout


def test_leaked_and_duplicate_lc_rpath() -> None:
    (leaky,) = read(str(MACHO / "misc/libleaky.dylib"))
    report = audit([str(MACHO / "misc/libleaky.dylib")])
    rules = {(f.rule, f.subject, f.severity.value) for f in report.findings}
    assert ("rpath-leak", "/Users/runner/work/pytorch/build/lib", "error") in rules
    assert ("duplicate-rpath", "@loader_path", "warning") in rules  # SDK 11: a warning
    leaked_id = "/Users/runner/work/pytorch/build/lib/libleaky.dylib"
    (install,) = [f for f in report.findings if f.subject == leaked_id]
    assert (install.rule, install.severity.value, install.evidence["tag"]) == ("rpath-leak", "warning", "LC_ID_DYLIB")
    assert "set it to @rpath/libleaky.dylib (install_name_tool -id)" in install.message
    # @rpath/ install names and load commands, and the shared cache's, are not leaks.
    fixed = audit([str(MACHO / "fixed")]).findings
    assert [f for f in fixed if f.rule == "rpath-leak"] == []
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.rules.duplicate_rpath import DuplicateRpath

    new_sdk = dataclasses.replace(leaky, sdk="15.2")
    (f,) = DuplicateRpath().check(AuditContext((new_sdk,), AuditConfig()))
    assert f.severity.value == "error" and "dyld refuses to load it" in f.message


@needs("llvm-otool")
def test_install_names_and_rpaths_agree_with_llvm_otool() -> None:
    otool = find_tool("llvm-otool").path
    assert otool is not None
    for path in sorted(MACHO.rglob("*.dylib")):
        for binary in read(str(path)):
            arch = ["-arch", "arm64" if binary.machine == "arm64" else "x86_64"]
            listing = subprocess.run([otool, *arch, "-L", str(path)], capture_output=True, text=True).stdout
            names = [line.strip().split(" (compatibility")[0] for line in listing.splitlines()[1:] if line.strip()]
            ours = ([binary.soname] if binary.soname else []) + [n.name for n in binary.needed]
            assert names == ours, (path, binary.machine)
            loads = subprocess.run([otool, *arch, "-l", str(path)], capture_output=True, text=True).stdout
            rpaths = [ln.split()[1] for ln in loads.splitlines() if ln.strip().startswith("path ")]
            assert rpaths == list(binary.rpath), (path, binary.machine)


@pytest.mark.parametrize("cut", [8, 28, 64, 200, 600])
def test_truncated_mach_o_files_are_named(tmp_path: Path, cut: int) -> None:
    bad = tmp_path / "bad.dylib"
    bad.write_bytes((MACHO / "fixed/libtorch_cuda.dylib").read_bytes()[:cut])
    try:
        read(str(bad))
    except InputError as exc:
        assert exc.path == str(bad) and exc.reason
    report = audit([str(tmp_path), str(MACHO / "fixed")])
    assert sum(f.status.value == "audited" for f in report.files) >= 2


def test_min_os_version_from_the_ceiling_or_the_wheel_tag(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The samples are built for macOS 11.0: fine under macos=11.0 (--profile macos-11), an error under
    macos=10.15; a wheel tagged macosx_10_15 promises 10.15 by itself (delocate's check)."""
    import zipfile

    assert run_cli("check", "--no-config", "--profile", "macos-11", str(MACHO / "fixed")).exit_code == 0
    r = run_cli("check", "--no-config", "--format", "json", "--max-version", "macos=10.15", str(MACHO / "fixed"))
    found = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "min-os-version"]
    assert r.exit_code == 1 and len(found) == 2 and found[0]["evidence"]["ceiling"] == "macos=10.15"
    whl = tmp_path / "pkg-1.0-py3-none-macosx_10_15_x86_64.whl"
    with zipfile.ZipFile(whl, "w") as zf:
        zf.write(MACHO / "fixed/libtorch_cuda.dylib", "pkg/libtorch_cuda.dylib")
        zf.write(MACHO / "fixed/libnvrtc.12.dylib", "pkg/libnvrtc.12.dylib")
    doc = json.loads(run_cli("check", "--no-config", "--format", "json", str(whl)).stdout)
    (f, _) = [x for x in doc["findings"] if x["rule"] == "min-os-version"]
    assert f["evidence"]["ceiling_source"] == f"the platform tag macosx_10_15_x86_64 of {whl}"
    for bad in ("macos=eleven", "macos=11.0.0.0"):
        assert run_cli("check", "--no-config", "--max-version", bad, str(MACHO / "fixed")).exit_code == 2


def test_dyld_resolves_rpath_through_lc_rpath_or_names_every_place_tried(tmp_path: Path) -> None:
    """@rpath/libnvrtc.12.dylib through LC_RPATH @loader_path: found beside the library in fixed/;
    copied alone, or the universal file in misc/, not found, with the place tried; libSystem is in
    the shared cache (present)."""
    assert [f for f in audit([str(MACHO / "fixed")]).findings if f.rule == "library-not-found"] == []
    alone = tmp_path / "libtorch_cuda.dylib"
    alone.write_bytes((MACHO / "fixed/libtorch_cuda.dylib").read_bytes())
    (finding,) = [f for f in audit([str(alone)]).findings if f.rule == "library-not-found"]
    assert finding.subject == "@rpath/libnvrtc.12.dylib"
    assert [a["path"] for a in finding.evidence["attempts"]] == [str(tmp_path / "libnvrtc.12.dylib")]
    assert finding.evidence["attempts"][0]["source"] == "LC_RPATH of libtorch_cuda.dylib"
    assert finding.message.startswith("Library not loaded: @rpath/libnvrtc.12.dylib")
    (alone.parent / "libnvrtc.12.dylib").write_bytes((MACHO / "fixed/libnvrtc.12.dylib").read_bytes())
    assert [f for f in audit([str(alone)]).findings if f.rule == "library-not-found"] == []
    universal = [f for f in audit([str(MACHO / "misc/universal.dylib")]).findings if f.rule == "library-not-found"]
    assert [f.file for f in universal] == [str(MACHO / "misc/universal.dylib")]
    weak = audit([str(MACHO / "misc/weak")]).findings  # a weak dylib may be missing
    assert [f for f in weak if f.rule == "library-not-found" and f.severity.value != "note"] == []


def test_dyld_rpath_of_an_image_above_and_loader_path_of_its_holder(tmp_path: Path) -> None:
    """libtorch_cuda in lib/ has LC_RPATH @loader_path (lib/); libnvrtc sits in lib/ too — but the
    @rpath search also tries the LC_RPATH of the image that loaded libtorch_cuda, each relative to its
    holder: the pure function, on synthetic records."""
    from linkaudit.loader.dyld import analyze_dyld
    from linkaudit.model import NeededLibrary

    (torch,) = read(str(MACHO / "fixed/libtorch_cuda.dylib"))
    (nvrtc,) = read(str(MACHO / "fixed/libnvrtc.12.dylib"))
    (tmp_path / "app" / "deps").mkdir(parents=True)
    (tmp_path / "app" / "lib").mkdir()
    (tmp_path / "app" / "deps" / "libnvrtc.12.dylib").write_bytes(b"")
    ext = dataclasses.replace(
        torch,
        path=str(tmp_path / "app" / "_C.so"),
        kind=Kind.PYTHON_EXTENSION,
        needed=(NeededLibrary("@rpath/libtorch_cuda.dylib"),),
        rpath=("@loader_path/lib", "@loader_path/deps"),
    )
    lib = dataclasses.replace(
        torch, path=str(tmp_path / "app" / "lib" / "libtorch_cuda.dylib"), rpath=("@loader_path",)
    )
    (tmp_path / "app" / "lib" / "libtorch_cuda.dylib").write_bytes(b"")
    images = {lib.path: [lib], str(tmp_path / "app" / "deps" / "libnvrtc.12.dylib"): [nvrtc]}
    (load,) = [ld for ld in analyze_dyld([ext], read=lambda p: images[p]) if ld.root == ext.path]
    res = load.resolutions[(lib.path, "@rpath/libnvrtc.12.dylib")]
    # lib's own LC_RPATH (@loader_path = lib/) first, then _C.so's, each relative to _C.so's directory
    assert [a.path for a in res.attempts] == [
        str(tmp_path / "app" / "lib" / "libnvrtc.12.dylib"),
        str(tmp_path / "app" / "lib" / "libnvrtc.12.dylib"),
        str(tmp_path / "app" / "deps" / "libnvrtc.12.dylib"),
    ]
    assert res.path == str(tmp_path / "app" / "deps" / "libnvrtc.12.dylib") and res.source == "LC_RPATH of _C.so"


def rules_of(*paths: Path) -> list[tuple[str, str, str]]:
    return sorted((f.rule, f.subject, f.severity.value) for f in audit([str(p) for p in paths]).findings)


def test_binding_follows_reexports_and_names_the_symbol_a_dylib_lacks() -> None:
    """reexport/: nvrtc* imported from an umbrella that re-exports libnvrtc (LC_REEXPORT_DYLIB): bound,
    no finding.  missing_symbol/: libnvrtc found but lacking nvrtcCompileProgram: dyld's message.
    The same client with the umbrella alone (its re-exported dylib not shipped): not judged."""
    assert rules_of(MACHO / "misc/reexport") == []
    ((rule, subject, severity),) = rules_of(MACHO / "misc/missing_symbol")
    assert (rule, subject, severity) == ("unresolved-symbol", "nvrtcCompileProgram", "error")
    (f,) = audit([str(MACHO / "misc/missing_symbol")]).findings
    assert f.file == str(MACHO / "misc/missing_symbol/libtorch_cuda.dylib")
    assert f.message.endswith(
        '"Symbol not found: _nvrtcCompileProgram, referenced from: libtorch_cuda.dylib, expected in: libnvrtc.12.dylib"'
    )
    assert f.evidence["symbols"] == ["nvrtcCompileProgram"] and f.evidence["weak"] is False


def test_umbrella_without_its_reexported_dylib_is_library_not_found_only(tmp_path: Path) -> None:
    for name in ("libcuda_umbrella.dylib", "libtorch_cuda.dylib"):
        (tmp_path / name).write_bytes((MACHO / "misc/reexport" / name).read_bytes())
    assert [r for r, _s, _v in rules_of(tmp_path)] == ["library-not-found"]
    # Shipped, but an older libnvrtc behind the umbrella: the re-export is followed to it.
    (tmp_path / "libnvrtc.12.dylib").write_bytes((MACHO / "misc/missing_symbol/libnvrtc.12.dylib").read_bytes())
    (f,) = audit([str(tmp_path)]).findings
    assert (f.rule, f.subject, f.file) == (
        "unresolved-symbol",
        "nvrtcCompileProgram",
        str(tmp_path / "libtorch_cuda.dylib"),
    )
    assert "from @rpath/libcuda_umbrella.dylib" in f.message


def test_weak_dylib_flat_namespace_and_rpath_of_the_loading_extension() -> None:
    """weak/: a missing LC_LOAD_WEAK_DYLIB is allowed; flat_namespace/: imports name no dylib (and
    libnvrtc is linked: no finding); chain/: libtorch_cuda.dylib has no LC_RPATH and finds libnvrtc
    only through _C.so's LC_RPATH @loader_path/lib, relative to _C.so."""
    assert [r for r in rules_of(MACHO / "misc/weak") if r[2] != "note"] == []
    assert rules_of(MACHO / "misc/flat_namespace") == []
    assert rules_of(MACHO / "misc/chain") == []
    (lib,) = read(str(MACHO / "misc/chain/torch/lib/libtorch_cuda.dylib"))
    assert lib.rpath == ()
    alone = rules_of(MACHO / "misc/chain/torch/lib")  # without the extension above it: not found
    assert ("library-not-found", "@rpath/libnvrtc.12.dylib", "error") in alone


def test_chained_fixups_sample_is_audited_like_the_classic_one(run_cli) -> None:  # type: ignore[no-untyped-def]
    (b,) = read(str(MACHO / "chained/libtorch_cuda.dylib"))
    assert (b.machine, b.min_os, b.rpath) == ("arm64", "12.0", ("@loader_path",))
    assert rules_of(MACHO / "chained") == []
    r = run_cli("check", "--no-config", "--format", "json", "--max-version", "macos=11.0", str(MACHO / "chained"))
    assert r.exit_code == 1
    assert sorted(f["file"].rsplit("/", 1)[-1] for f in json.loads(r.stdout)["findings"]) == [
        "libnvrtc.12.dylib",
        "libtorch_cuda.dylib",
    ]


def test_install_names_and_dylib_loads_by_absolute_path() -> None:
    """LC_LOAD_DYLIB by a Homebrew path of the build machine: an error; an installed framework (a
    framework Python, CUDA.framework): not rpath-leak's (library-not-found judges whether it is
    there); the shared cache and @rpath/: nothing.  cuInit imported from CUDA.framework is the
    driver API from the driver (driver-link), not a missing provider."""
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.model import NeededLibrary, NeedKind, linked_symbol
    from linkaudit.rules.missing_provider import MissingProvider
    from linkaudit.rules.rpath_leak import RpathLeak

    (fixed,) = read(str(MACHO / "fixed/libtorch_cuda.dylib"))
    cuda = "/Library/Frameworks/CUDA.framework/Versions/A/CUDA"
    needed = (
        NeededLibrary("/opt/homebrew/opt/libomp/lib/libomp.dylib", NeedKind.PLAIN),
        NeededLibrary("/Library/Frameworks/Python.framework/Versions/3.11/Python", NeedKind.WEAK),
        NeededLibrary(cuda, NeedKind.PLAIN),
        NeededLibrary("/usr/lib/libc++.1.dylib", NeedKind.PLAIN),
        NeededLibrary("@rpath/libnvrtc.12.dylib", NeedKind.PLAIN),
    )
    symbols = SymbolTable.from_symbols([linked_symbol("cuInit", False, cuda), *fixed.symbols])
    binary = dataclasses.replace(fixed, needed=needed, symbols=symbols)
    found = list(RpathLeak().check(AuditContext((binary,), AuditConfig())))
    assert [(f.subject, f.severity.value, f.evidence["tag"], f.evidence["index"]) for f in found] == [
        ("/opt/homebrew/opt/libomp/lib/libomp.dylib", "error", "LC_LOAD_DYLIB", 0),
    ]
    assert found[0].message.endswith("dyld loads the dylib from exactly that path (install_name_tool -change)")
    assert list(MissingProvider().check(AuditContext((binary,), AuditConfig()))) == []
    rules = {f.rule for f in audit([str(MACHO / "fixed")]).findings}
    assert "rpath-leak" not in rules


def test_each_slice_binds_to_the_copy_of_its_own_machine(tmp_path: Path) -> None:
    """A universal importer beside an x86_64-only libnvrtc lacking nvrtcCompileProgram: the x86_64
    slice is judged against it (unresolved-symbol); the arm64 slice finds no arm64 copy (a
    wrong-machine attempt, library-not-found) and is never judged against the x86_64 one."""
    (tmp_path / "universal.dylib").write_bytes((MACHO / "misc/universal.dylib").read_bytes())
    (tmp_path / "libnvrtc.12.dylib").write_bytes((MACHO / "misc/missing_symbol/libnvrtc.12.dylib").read_bytes())
    found = audit([str(tmp_path)]).findings
    unresolved = [f for f in found if f.rule == "unresolved-symbol"]
    assert [(f.file, f.subject) for f in unresolved] == [
        (str(tmp_path / "universal.dylib") + "(x86_64)", "nvrtcCompileProgram")
    ]
    (missing,) = [f for f in found if f.rule == "library-not-found"]
    assert missing.subject == "@rpath/libnvrtc.12.dylib"
    assert [a["outcome"] for a in missing.evidence["attempts"]] == ["wrong-machine"]


def test_weak_bound_imports_of_the_wrong_family_are_still_missing_providers() -> None:
    """nvrtc* bound (two-level) to the driver through a weak dylib: weak does not make the wrong
    library right — missing-provider, as for the plain link in broken/."""
    from linkaudit.config import AuditConfig
    from linkaudit.context import AuditContext
    from linkaudit.model import NeededLibrary, NeedKind, linked_symbol
    from linkaudit.rules.missing_provider import MissingProvider

    (broken,) = read(str(MACHO / "broken/libtorch_cuda.dylib"))
    weak = [
        linked_symbol(s.name, s.defined, s.version.file if s.version else None, weak=not s.defined, value=s.value)
        for s in broken.symbols
    ]
    needed = tuple(NeededLibrary(n.name, NeedKind.WEAK) if "libcuda" in n.name else n for n in broken.needed)
    binary = dataclasses.replace(broken, symbols=SymbolTable.from_symbols(weak), needed=needed)
    (f,) = MissingProvider().check(AuditContext((binary,), AuditConfig()))
    assert f.subject == "libnvrtc*.dylib" and f.evidence["symbols"] == ["nvrtcCompileProgram", "nvrtcCreateProgram"]


def test_symbols_re_exported_by_name_in_the_export_trie_are_followed() -> None:
    """An umbrella with no LC_REEXPORT_DYLIB whose trie re-exports nvrtcCreateProgram by name
    (EXPORT_SYMBOL_FLAGS_REEXPORT, forwarders ``"INSTALL_NAME:symbol"``): an import of it binds
    through to libnvrtc; nvrtcCompileProgram, not re-exported, does not."""
    from linkaudit.loader.image_binding import unbound_imports
    from linkaudit.model import NeededLibrary, NeedKind

    client, umbrella, nvrtc = (
        read(str(MACHO / "misc/reexport" / n))[0]
        for n in ("libtorch_cuda.dylib", "libcuda_umbrella.dylib", "libnvrtc.12.dylib")
    )
    by_name = dataclasses.replace(
        umbrella,
        needed=(NeededLibrary("@rpath/libnvrtc.12.dylib", NeedKind.PLAIN),),
        forwarders=(("nvrtcCreateProgram", "@rpath/libnvrtc.12.dylib:nvrtcCreateProgram"),),
    )
    (unbound,) = unbound_imports([client, by_name, nvrtc], [], Format.MACHO)
    assert unbound.symbols == ("nvrtcCompileProgram",) and unbound.reason == "absent"
    renamed = dataclasses.replace(by_name, forwarders=(("nvrtcCreateProgram", "@rpath/libnvrtc.12.dylib:gone"),))
    (unbound,) = unbound_imports([client, renamed, nvrtc], [], Format.MACHO)
    assert unbound.symbols == ("nvrtcCompileProgram", "nvrtcCreateProgram")


MH_BUNDLE, MH_DYLIB = 8, 6


def _dylib_module(directory: Path, name: str) -> Path:
    """``misc/chain/torch/_C.so`` (an MH_BUNDLE exporting ``_PyInit__C``) with its header's
    ``filetype`` patched to MH_DYLIB, as Rust/PyO3 (maturin) links every extension module, saved as
    ``name``."""
    data = bytearray((MACHO / "misc/chain/torch/_C.so").read_bytes())
    assert struct.unpack_from("<I", data, 12)[0] == MH_BUNDLE
    struct.pack_into("<I", data, 12, MH_DYLIB)
    path = directory / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("_C.cpython-312-darwin.so", Kind.PYTHON_EXTENSION),
        ("_C.abi3.so", Kind.PYTHON_EXTENSION),
        ("_C.so", Kind.PYTHON_EXTENSION),
        ("_D.cpython-312-darwin.so", Kind.SHARED_LIBRARY),  # exports no PyInit__D: no module named _D
        ("_C.dylib", Kind.SHARED_LIBRARY),  # no extension suffix: importlib never loads it
    ],
)
def test_an_mh_dylib_named_and_exporting_as_a_module_is_a_python_extension(
    tmp_path: Path, name: str, kind: Kind
) -> None:
    """CPython's importlib dlopen()s any file named with an extension suffix (``.cpython-312-darwin.so``,
    ``.abi3.so``, ``.so``) whatever its filetype, and calls ``PyInit_<module>``: an MH_DYLIB so named
    that exports ``_PyInit_<module>`` is an extension module (it was a plain library: a ``[dlopen]``
    root).  The same bytes under each name in one run: the small-file memo keys on the module name."""
    first = tmp_path / "first"
    first.mkdir()
    for other in ("_C.cpython-312-darwin.so", "_D.cpython-312-darwin.so"):  # read first, remembered
        read(str(_dylib_module(first, other)))
    path = _dylib_module(tmp_path, name)
    (binary,) = read(str(path))
    assert (binary.kind, binary.soname) == (kind, None)
    report = audit([str(path)])
    wanted = "python-import" if kind is Kind.PYTHON_EXTENSION else "dlopen"
    assert [(r.path, r.kind) for r in report.roots] == [(str(path), wanted)]


@pytest.mark.realwheel
def test_real_pyo3_modules_are_python_imports(tmp_path: Path) -> None:
    """orjson's macOS module (PyO3: an MH_DYLIB exporting ``_PyInit_orjson``) is imported, as its
    Linux wheels' modules are; skips when the wheel is not cached (``wheels-mac``)."""
    from realsite import cache_root

    wheels = sorted((cache_root() / "wheels-mac").glob("orjson-3.13.0-cp312-cp312-macosx_*.whl"))
    if not wheels:
        pytest.skip("orjson 3.13.0 macOS wheel not cached in wheels-mac")
    report = audit([str(wheels[0])])
    module = f"{wheels[0]}!orjson/orjson.cpython-312-darwin.so"
    assert {r.kind for r in report.roots if r.path.startswith(module)} == {"python-import"}
