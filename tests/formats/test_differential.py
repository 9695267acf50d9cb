"""Differential tests: our ELF reading against readelf/nm and pyelftools, field by field.

Runs on every good sample binary, and on every library of the real torch wheel
where it can be fetched (marker ``realwheel``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.model import Binary

from ..tools import needs
from .differential import (
    BIND_NAMES,
    TYPE_NAMES,
    VIS_NAMES,
    binutils,
    has_section_headers,
    pyelftools_reading,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
GOOD = sorted(
    str(p.relative_to(SAMPLES))
    for p in SAMPLES.rglob("*")
    if p.is_file() and not p.is_symlink() and "corrupt" not in p.parts and p.read_bytes()[:4] == b"\x7fELF"
)


def _ours(path: str) -> Binary:
    (b,) = read(path)
    return b


def check_against_binutils(path: str) -> None:
    b = _ours(path)
    try:
        ref = binutils(path, dynamic=b.kind.value != "relocatable")
    except RuntimeError as exc:
        pytest.skip(f"binutils cannot read {path}: {exc}")
    assert list(b.needed_names) == ref.needed
    assert b.soname == ref.soname
    assert b.rpath == ref.rpath
    assert b.runpath == ref.runpath
    if any(sym.name == "__gnu_lto_slim" for sym in b.symbols):
        return  # nm reads a slim-LTO object's symbols through the LTO plugin; we name it (lto-object)
    if not has_section_headers(path):
        assert not ref.undefined and not ref.defined  # nm reads symbols through sections only
        return
    assert {s.display_name() for s in b.symbols.iter_undefined()} == ref.undefined
    ours_defined = {s.display_name() for s in b.symbols.iter_defined()}
    assert ours_defined == ref.defined
    assert b.symbols.defined_count == len(list(b.symbols.iter_defined()))


def check_against_pyelftools(path: str) -> None:
    b = _ours(path)
    ref, symbols, verneed = pyelftools_reading(path)
    assert list(b.needed_names) == ref.needed
    assert b.soname == ref.soname
    assert (b.rpath, b.runpath) == (ref.rpath, ref.runpath)
    if verneed is not None:
        assert {n.file: [v.name for v in n.versions] for n in b.version_needs} == verneed
    assert len(b.symbols) == len(symbols)
    for ours, theirs in zip(b.symbols, symbols, strict=True):
        assert ours.name == theirs.name
        assert (ours.value, ours.size) == (theirs.value, theirs.size), ours.name
        assert theirs.bind in BIND_NAMES[int(ours.binding)], ours.name
        assert theirs.type in TYPE_NAMES[int(ours.type)], ours.name
        assert VIS_NAMES[int(ours.visibility)] == theirs.visibility, ours.name
        assert (not ours.defined) == theirs.undefined, ours.name
        if theirs.version != "?":
            assert (ours.version.name if ours.version else None) == theirs.version, ours.name
            assert ours.version_hidden == theirs.hidden, ours.name


@needs("readelf", "nm")
@pytest.mark.parametrize("rel", GOOD)
def test_samples_agree_with_binutils(rel: str) -> None:
    check_against_binutils(str(SAMPLES / rel))


@pytest.mark.parametrize("rel", GOOD)
def test_samples_agree_with_pyelftools(rel: str) -> None:
    check_against_pyelftools(str(SAMPLES / rel))


def _wheel_files(lib: Path) -> list[str]:
    return sorted(str(p) for p in lib.iterdir() if p.is_file() and ".so" in p.name)


@pytest.mark.realwheel
@needs("readelf", "nm")
def test_real_wheel_agrees_with_binutils(torch_lib: Path) -> None:
    files = _wheel_files(torch_lib)
    assert len(files) >= 12
    for path in files:
        check_against_binutils(path)


@pytest.mark.realwheel
def test_real_wheel_agrees_with_pyelftools(torch_lib: Path) -> None:
    for path in _wheel_files(torch_lib):
        check_against_pyelftools(path)


#: Trusted binaries of the machine itself (skipped when absent): executables with
#: copy relocations (``stdout@GLIBC_2.2.5`` defined from a version need), glibc
#: itself (``@@`` definitions, GLIBC_PRIVATE), a large C++ library.
SYSTEM_FILES = [
    "/usr/bin/ls",
    "/usr/bin/python3",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/lib/x86_64-linux-gnu/libm.so.6",
]


@needs("readelf", "nm")
@pytest.mark.parametrize("path", SYSTEM_FILES)
def test_system_binaries_agree_with_binutils(path: str) -> None:
    """nm -D's ``name@VER`` / ``name@@VER`` on the machine's own binaries, symlinks resolved."""
    if not Path(path).exists():
        pytest.skip(f"{path} is absent here")
    real = str(Path(path).resolve())
    check_against_binutils(real)


def test_defined_symbol_versioned_from_a_need_is_single_at() -> None:
    """A copy-relocated definition (version from .gnu.version_r) is ``name@VER``, as binutils prints it."""
    from linkaudit.model import Binding, Symbol, SymbolType, SymbolVersion, Visibility

    def sym(version: SymbolVersion, hidden: bool = False) -> Symbol:
        return Symbol(
            "stdout", True, Binding.GLOBAL, SymbolType.OBJECT, Visibility.DEFAULT, 0x245E0, 8, version, hidden, 26
        )

    assert sym(SymbolVersion("GLIBC_2.2.5", "libc.so.6")).display_name() == "stdout@GLIBC_2.2.5"
    assert sym(SymbolVersion("GLIBC_2.2.5", None)).display_name() == "stdout@@GLIBC_2.2.5"
    assert sym(SymbolVersion("GLIBC_2.2.5", None), hidden=True).display_name() == "stdout@GLIBC_2.2.5"
