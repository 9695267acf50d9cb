"""The ELF reader on the committed sample binaries: fields as readelf shows them."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.model import Binding, Endian, Format, Kind, Libc, SymbolType

from ..facts import NVRTC9, START_FILES


def one(path: Path):  # type: ignore[no-untyped-def]
    binaries = read(str(path))
    assert len(binaries) == 1
    return binaries[0]


def test_broken_seed_library(samples: Path) -> None:
    b = one(samples / "broken/libtorch_cuda.so")
    assert b.format is Format.ELF
    assert (b.machine, b.bits, b.endian) == ("x86-64", 64, Endian.LITTLE)
    assert b.kind is Kind.SHARED_LIBRARY
    assert b.soname == "libtorch_cuda.so"
    assert b.needed_names == ("libcuda.so.1", "libc.so.6")
    assert b.rpath == () and b.runpath == ()
    assert b.libc is Libc.GLIBC
    undefined = {s.name for s in b.symbols.iter_undefined()} - START_FILES
    assert undefined == NVRTC9 | {"malloc", "free", "strlen"}
    for s in b.symbols.iter_undefined():
        if s.name in NVRTC9:
            # unresolved at link time, so the linker wrote STT_NOTYPE, as readelf shows
            assert s.version is None and s.binding is Binding.GLOBAL and s.type is SymbolType.NOTYPE


def test_fixed_twin_versions_name_the_file(samples: Path) -> None:
    b = one(samples / "fixed/libtorch_cuda.so")
    assert b.needed_names == ("libnvrtc.so.12", "libc.so.6")
    assert b.runpath == ("$ORIGIN",)
    need = {n.file: [v.name for v in n.versions] for n in b.version_needs}
    assert need["libnvrtc.so.12"] == ["libnvrtc.so.12"]
    nvrtc = [s for s in b.symbols.iter_undefined() if s.name in NVRTC9]
    assert len(nvrtc) == 9
    assert {s.display_name() for s in nvrtc} == {f"{n}@libnvrtc.so.12" for n in NVRTC9}
    assert all(s.version is not None and s.version.file == "libnvrtc.so.12" for s in nvrtc)


def test_version_definitions_of_the_nvrtc_stub(samples: Path) -> None:
    b = one(samples / "fixed/libnvrtc.so.12")
    assert b.soname == "libnvrtc.so.12"
    defs = [(d.name, d.base) for d in b.version_definitions]
    assert defs == [("libnvrtc.so.12", True), ("libnvrtc.so.12", False)]
    defined = {s.display_name() for s in b.symbols.iter_defined()}
    assert {f"{n}@@libnvrtc.so.12" for n in NVRTC9} <= defined


def test_extension_module(samples: Path) -> None:
    b = one(samples / "ext/_C.cpython-311-x86_64-linux-gnu.so")
    assert b.kind is Kind.PYTHON_EXTENSION
    assert b.soname is None
    assert b.runpath == ("$ORIGIN/lib",)
    assert b.needed_names[0] == "libshim.so"
    assert "PyInit__C" in {s.name for s in b.symbols.iter_defined()}


def test_weak_undefined_symbol(samples: Path) -> None:
    b = one(samples / "misc/libweak.so")
    by_name = {s.name: s for s in b.symbols.iter_undefined()}
    assert by_name["optional_hook"].binding is Binding.WEAK and by_name["optional_hook"].weak
    assert by_name["required_hook"].binding is Binding.GLOBAL


def test_pie_executable_has_interpreter(samples: Path) -> None:
    b = one(samples / "misc/hello")
    assert b.kind is Kind.PIE_EXECUTABLE
    assert b.interpreter == "/lib64/ld-linux-x86-64.so.2"
    assert b.libc is Libc.GLIBC


def test_relr_version_need_used_by_no_symbol(samples: Path) -> None:
    b = one(samples / "misc/librelr.so")
    names = {v.name for n in b.version_needs for v in n.versions}
    assert "GLIBC_ABI_DT_RELR" in names
    used = {s.version.name for s in b.symbols.iter_undefined() if s.version}
    assert "GLIBC_ABI_DT_RELR" not in used


def test_rpath_entries_as_written(samples: Path) -> None:
    assert one(samples / "misc/libleak.so").rpath == (
        "/home/builder/pytorch/build/lib",
        "/usr/local/cuda/lib64/stubs",
        "$ORIGIN",
    )
    assert one(samples / "misc/libabs.so").runpath == ("/opt/vendor/lib",)


@pytest.mark.parametrize("stripped", ["misc/libnoshdr.so"])
def test_no_section_headers_gnu_hash(samples: Path, stripped: str) -> None:
    """Without section headers the dynamic segment (DT_GNU_HASH) gives the same linkage."""
    full, bare = one(samples / "misc/libnewglibc.so"), one(samples / stripped)
    assert bare.needed_names == full.needed_names
    assert bare.soname == full.soname
    assert bare.version_needs == full.version_needs
    assert [s.display_name() for s in bare.symbols] == [s.display_name() for s in full.symbols]


def test_no_section_headers_sysv_hash(samples: Path) -> None:
    """DT_HASH's nchain sizes the symbol table when nothing else can."""
    b = one(samples / "misc/libsysvhash.so")
    assert len(b.symbols) == 11  # nchain 12, minus the null entry
    assert {"getrandom", "reallocarray"} <= {s.name for s in b.symbols.iter_undefined()}
    assert {v.name for n in b.version_needs for v in n.versions} >= {"GLIBC_2.25", "GLIBC_2.26"}


@pytest.mark.parametrize(
    ("name", "machine", "bits", "endian", "versions"),
    [
        ("lib32le.so", "x86", 32, Endian.LITTLE, {"GLIBC_2.0", "GLIBC_2.1.3"}),
        ("lib64be.so", "s390x", 64, Endian.BIG, {"GLIBC_2.2", "GLIBC_2.4"}),
        ("lib32be.so", "ppc", 32, Endian.BIG, {"GLIBC_2.0", "GLIBC_2.1.3", "GLIBC_2.4"}),
    ],
)
def test_other_classes_and_byte_orders(
    samples: Path, name: str, machine: str, bits: int, endian: Endian, versions: set[str]
) -> None:
    b = one(samples / "arch" / name)
    assert (b.machine, b.bits, b.endian) == (machine, bits, endian)
    assert b.soname == name
    assert b.needed_names == ("libc.so.6",)
    assert {v.name for n in b.version_needs for v in n.versions} == versions
    defined = {s.name for s in b.symbols.iter_defined()}
    assert "arch_name" in defined
    undefined = {s.display_name() for s in b.symbols.iter_undefined()}
    assert any(u.startswith("memcpy@GLIBC_") for u in undefined)


def test_symbol_table_counts_are_consistent(samples: Path) -> None:
    b = one(samples / "broken/libtorch_cuda.so")
    t = b.symbols
    assert t.undefined_count == len(list(t.iter_undefined()))
    assert t.defined_count == len(list(t.iter_defined()))
    assert len(t) == len(list(t))


def test_symbol_table_from_symbols_round_trips(samples: Path) -> None:
    """The constructor the Mach-O and PE readers will use gives the same views back."""
    from linkaudit.model import SymbolTable

    b = one(samples / "fixed/libtorch_cuda.so")
    symbols = list(b.symbols)
    rebuilt = SymbolTable.from_symbols(symbols)
    assert [(s.name, s.defined, s.binding, s.version.name if s.version else None) for s in rebuilt] == [
        (s.name, s.defined, s.binding, s.version.name if s.version else None) for s in symbols
    ]
