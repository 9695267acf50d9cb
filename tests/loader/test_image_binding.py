"""``loader.image_binding.ImageBinder`` / ``bind_import``: where one import of one PE or Mach-O image
binds in one load, following forwarders and re-exports, or why nowhere (sample_bins/pe, sample_bins/macho)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.inputs import collect
from linkaudit.loader.dyld import analyze_dyld
from linkaudit.loader.image_binding import ImageBinder, ImportBinding, ImportOutcome, bind_import, unbound_imports
from linkaudit.loader.images import ImageLoad
from linkaudit.loader.windows import analyze_windows
from linkaudit.model import Binary, Format

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def _loads(*dirs: str) -> tuple[list[Binary], list[ImageLoad]]:
    binaries = [b for f in collect([str(SAMPLES / d) for d in dirs]).files for b in read(f)]
    return binaries, [*analyze_windows(binaries, (), ()), *analyze_dyld(binaries, None)]


def _bind(directory: str, importer: str, symbol: str, machine: str | None = None) -> ImportBinding:
    """The binding of ``symbol`` imported by the file named ``importer`` in the load it is the root of."""
    binaries, loads = _loads(directory)
    load = next(ld for ld in loads if ld.root.endswith("/" + importer) and (machine is None or ld.machine == machine))
    sym = next(s for s in load.images[load.root].symbols.iter_undefined() if s.name == symbol)
    return bind_import(load, load.root, sym, binaries)


def test_pe_direct_import_binds_to_the_dll() -> None:
    b = _bind("pe/fixed", "torch_cuda.dll", "nvrtcGetPTX")
    assert b.outcome is ImportOutcome.BOUND and b.library == "nvrtc64_120_0.dll"
    assert b.provider is not None and b.provider.endswith("pe/fixed/nvrtc64_120_0.dll")
    assert b.provider_symbol == "nvrtcGetPTX" and len(b.via) == 1 and not b.flat


def test_pe_forwarder_is_followed_to_its_dll() -> None:
    b = _bind("pe/imports", "app.exe", "forwarded_fn")
    assert b.outcome is ImportOutcome.BOUND
    assert b.provider is not None and b.provider.endswith("pe/imports/nvrtc64_120_0.dll")
    assert b.provider_symbol == "nvrtcGetPTX"
    assert [(Path(p).name, n) for p, n in b.via] == [
        ("helper.dll", "forwarded_fn"),
        ("nvrtc64_120_0.dll", "nvrtcGetPTX"),
    ]


def test_pe_import_not_exported_in_windows_words() -> None:
    b = _bind("pe/imports", "app.dll", "absent_fn")
    assert b.outcome is ImportOutcome.NOT_EXPORTED and b.provider is None
    assert b.reason == "The procedure entry point absent_fn could not be located in the dynamic link library helper.dll"


def test_pe_seed_bug_names_the_driver_missing() -> None:
    b = _bind("pe/broken", "torch_cuda.dll", "nvrtcGetPTX")
    assert b.outcome is ImportOutcome.LIBRARY_NOT_FOUND and b.library == "nvcuda.dll"


def test_pe_delay_load_outside_the_inputs_is_not_judged() -> None:
    b = _bind("pe/driver", "delay_driver.dll", "cuInit")
    assert b.outcome is ImportOutcome.NOT_JUDGED and b.weak and "delay-loaded" in b.reason


def test_macho_two_level_import_through_rpath_of_the_loading_extension() -> None:
    binaries, loads = _loads("macho/misc/chain")
    (load,) = [ld for ld in loads if ld.root.endswith("_C.so")]
    lib = next(p for p in load.objects if p.endswith("lib/libtorch_cuda.dylib"))
    sym = next(s for s in load.images[lib].symbols.iter_undefined() if s.name == "nvrtcCompileProgram")
    b = bind_import(load, lib, sym, binaries)
    assert b.outcome is ImportOutcome.BOUND and b.library == "@rpath/libnvrtc.12.dylib"
    assert b.provider is not None and b.provider.endswith("chain/torch/lib/libnvrtc.12.dylib")


def test_macho_reexport_is_followed_to_the_reexported_dylib() -> None:
    b = _bind("macho/misc/reexport", "libtorch_cuda.dylib", "nvrtcCreateProgram")
    assert b.outcome is ImportOutcome.BOUND and b.library == "@rpath/libcuda_umbrella.dylib"
    assert b.provider is not None and b.provider.endswith("reexport/libnvrtc.12.dylib")
    assert [Path(p).name for p, _n in b.via] == ["libcuda_umbrella.dylib", "libnvrtc.12.dylib"]


def test_macho_symbol_not_found_in_dyld_words() -> None:
    b = _bind("macho/misc/missing_symbol", "libtorch_cuda.dylib", "nvrtcCompileProgram")
    assert b.outcome is ImportOutcome.NOT_EXPORTED
    assert b.reason == (
        "Symbol not found: _nvrtcCompileProgram, referenced from: libtorch_cuda.dylib, expected in: libnvrtc.12.dylib"
    )


def test_macho_flat_lookup_binds_to_the_first_image_exporting_it() -> None:
    b = _bind("macho/misc/flat_namespace", "libtorch_cuda.dylib", "nvrtcCreateProgram")
    assert b.flat and b.library is None
    assert b.outcome is ImportOutcome.BOUND and "flat lookup" in b.reason
    assert b.provider is not None and b.provider.endswith("flat_namespace/libnvrtc.12.dylib")


def test_macho_flat_lookup_nobody_exports_is_not_judged_in_a_dlopen() -> None:
    b = _bind("macho/misc/flat_lookup", "libtorch_cuda.dylib", "nvrtcCreateProgram")
    assert b.flat and b.outcome is ImportOutcome.NOT_JUDGED and b.provider is None


def test_macho_shared_cache_and_weak_dylib() -> None:
    assert _bind("macho/fixed", "libtorch_cuda.dylib", "dyld_stub_binder").outcome is ImportOutcome.SYSTEM
    weak = _bind("macho/misc/weak", "libtorch_cuda.dylib", "nvrtcCreateProgram")
    assert weak.outcome is ImportOutcome.LIBRARY_NOT_FOUND and "weak dylib" in weak.reason


@pytest.mark.parametrize("machine", ["x86_64", "arm64"])
def test_each_slice_binds_in_its_own_load(machine: str) -> None:
    b = _bind("macho/misc/universal.dylib", "universal.dylib", "nvrtcCreateProgram", machine)
    assert b.outcome is ImportOutcome.LIBRARY_NOT_FOUND


def test_unbound_imports_agrees_with_the_binder() -> None:
    """One lookup for both: every import ``unbound_imports`` reports is NOT_EXPORTED in a load (pe/machine
    left out: its helper.dll is i386, so the load finds none, where ``unbound_imports`` judges another copy)."""
    binaries, loads = _loads("pe/imports", "pe/fixed", "pe/broken", "pe/driver", "macho")
    binder = ImageBinder(binaries, loads)
    not_exported = {
        (b.importer, b.symbol) for ld in loads for b in binder.bind_load(ld) if b.outcome is ImportOutcome.NOT_EXPORTED
    }
    reported = {
        (u.importer.path, name)
        for fmt in (Format.PE, Format.MACHO)
        for u in unbound_imports(binaries, loads, fmt)
        for name in u.symbols
    }
    assert reported and reported <= not_exported
    assert {(Path(p).name, s) for p, s in not_exported} >= {
        ("app.dll", "absent_fn"),
        ("app.exe", "absent_fn"),
        ("libtorch_cuda.dylib", "nvrtcCompileProgram"),
    }


def test_unbound_imports_locates_each_library_once_and_walks_only_what_is_not_exported_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Per importer, each library it names is located once (it was located again for every import:
    7,137 times for the 9 torch macOS files), and only an import its library does not itself
    export is looked up through forwarders and re-exports (a lookup per import made a record each)."""
    from linkaudit.loader import image_binding

    binaries, loads = _loads("pe/imports", "pe/fixed", "pe/broken", "pe/driver", "macho")
    finds: list[tuple[int, str]] = []  # made by unbound_imports itself (not by a walk's locate)
    walked: list[str] = []
    inside: list[bool] = []
    real_find, real_lookup = image_binding._Libraries.find, image_binding._Exports.lookup
    real_locate = image_binding._Libraries.locate

    def find(self, name, requester):  # type: ignore[no-untyped-def]
        if not inside:
            finds.append((id(requester), name))
        return real_find(self, name, requester)

    def locate(self, name, requester, load=None):  # type: ignore[no-untyped-def]
        inside.append(True)
        try:
            return real_locate(self, name, requester, load)
        finally:
            inside.pop()

    def lookup(self, lib, name, depth=0, load=None):  # type: ignore[no-untyped-def]
        if depth == 0:
            walked.append(name)
        return real_lookup(self, lib, name, depth, load)

    monkeypatch.setattr(image_binding._Libraries, "find", find)
    monkeypatch.setattr(image_binding._Exports, "lookup", lookup)
    monkeypatch.setattr(image_binding._Libraries, "locate", locate)
    reported = [u for fmt in (Format.PE, Format.MACHO) for u in unbound_imports(binaries, loads, fmt)]
    imports = [
        (id(b), s.version.file)
        for b in binaries
        if b.format in (Format.PE, Format.MACHO)
        for s in b.symbols.iter_undefined()
        if s.version is not None and s.version.file
    ]
    assert sorted(finds) == sorted(set(imports))  # each importer's libraries, once
    assert len(imports) > 2 * len(walked) >= 2 * sum(len(u.symbols) for u in reported) > 0
