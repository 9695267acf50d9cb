"""References, not circles: our PE reading (pefile's headers, our own directory readers) against
lief's, field by field, on every PE sample and, where fetched, the real DLLs of NVIDIA's Windows
NVRTC wheel and of the official torch 2.9.1 Windows wheel (torch_cpu.dll: 60,252 exports;
torch_python.dll: 19 imported DLLs — more than pefile's parsers return before their caps)."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import pytest

from linkaudit import read
from linkaudit.model import NeedKind

lief = pytest.importorskip("lief")

PE = Path(__file__).resolve().parents[2] / "sample_bins" / "pe"
_MACHINES = {"AMD64": "x86-64", "I386": "i386", "ARM64": "aarch64"}


def _ours(path: Path) -> dict[str, Any]:
    (b,) = read(str(path))
    imports: dict[str, list[str]] = {}
    for sym in b.symbols.iter_undefined():
        assert sym.version is not None
        imports.setdefault(sym.version.file or "", []).append(sym.name)
    return {
        "machine": b.machine,
        "dll_name": b.soname,
        "plain": [n.name for n in b.needed if n.kind is NeedKind.PLAIN],
        "delay": [n.name for n in b.needed if n.kind is NeedKind.DELAY_LOAD],
        "imports": {k: sorted(v) for k, v in imports.items()},
        "exports": sorted(s.name for s in b.symbols if s.defined),
        "forwarders": sorted(b.forwarders),
    }


def _entry_name(e: Any) -> str:
    return e.name if e.name else f"#{e.ordinal}"


def _liefs(path: Path) -> dict[str, Any]:
    b = lief.parse(str(path))
    imports: dict[str, list[str]] = {}
    for table in (b.imports, b.delay_imports):
        for d in table:
            imports.setdefault(d.name, []).extend(_entry_name(e) for e in d.entries)
    export = b.get_export() if b.has_exports else None
    entries = list(export.entries) if export is not None else []
    return {
        "machine": _MACHINES.get(str(b.header.machine).rsplit(".", 1)[-1], str(b.header.machine)),
        "dll_name": export.name if export is not None and export.name else None,
        "plain": [d.name for d in b.imports],
        "delay": [d.name for d in b.delay_imports],
        "imports": {k: sorted(v) for k, v in imports.items()},
        "exports": sorted(_entry_name(e) for e in entries),
        "forwarders": sorted(
            (_entry_name(e), f"{e.forward_information.library}.{e.forward_information.function}")
            for e in entries
            if e.is_forwarded
        ),
    }


SAMPLES = sorted(PE.rglob("*.dll"))


@pytest.mark.parametrize("path", SAMPLES, ids=[str(p.relative_to(PE)) for p in SAMPLES])
def test_samples_agree_with_lief(path: Path) -> None:
    assert _ours(path) == _liefs(path)


def _compare_wheel(wheel: Path, tmp_path: Path) -> tuple[int, int]:
    files = compared = 0
    with zipfile.ZipFile(wheel) as zf:
        for name in zf.namelist():
            if name.endswith((".dll", ".pyd")):
                target = Path(zf.extract(name, tmp_path))
                ours, theirs = _ours(target), _liefs(target)
                assert ours == theirs, name
                files += 1
                compared += sum(len(v) for v in ours["imports"].values()) + len(ours["exports"])
    print(f"PE differential vs lief: {files} files, {compared} imports and exports compared in {wheel.name}")
    return files, compared


@pytest.mark.realwheel
def test_real_windows_dlls_agree_with_lief(nvrtc_windows_wheel: Path, tmp_path: Path) -> None:
    assert _compare_wheel(nvrtc_windows_wheel, tmp_path)[1] > 300


@pytest.mark.realwheel
def test_torch_windows_dlls_agree_with_lief_past_pefiles_caps(torch_windows_wheel: Path, tmp_path: Path) -> None:
    files, compared = _compare_wheel(torch_windows_wheel, tmp_path)
    assert files >= 9 and compared > 70_000
    (cpu,) = read(str(tmp_path / "torch/lib/torch_cpu.dll"))
    assert sum(1 for s in cpu.symbols if s.defined) == 60_252  # pefile's default parse stops at 8,192
    (python,) = read(str(tmp_path / "torch/lib/torch_python.dll"))
    assert len(python.needed) == 19 and "MSVCP140.dll" in python.needed_names  # pefile's: the first 3
