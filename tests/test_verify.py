"""``check --verify``: lief reads every input again; zero disagreements on our samples (ELF, PE and
every slice of the Mach-O files), a doctored reading is caught field by field, and the default path
never imports lief."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.model import NeededLibrary, NeedKind, SymbolTable, linked_symbol

pytest.importorskip("lief")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"


def test_every_sample_reads_the_same_with_lief(run_cli) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run_cli("check", "--no-config", "--verify", "--format", "json", str(SAMPLES)).stdout)
    assert [f for f in doc["findings"] if f["rule"] == "reader-disagreement"] == []
    assert doc["summary"]["audited"] >= 100  # ELF (objects and no-section-header files too), PE, Mach-O


@pytest.mark.realwheel
def test_the_macos_torch_wheel_reads_the_same_with_lief(run_cli) -> None:  # type: ignore[no-untyped-def]
    from realsite import cache_root

    wheel = cache_root() / "wheels-mac" / "torch-2.9.1-cp311-none-macosx_11_0_arm64.whl"
    if not wheel.is_file():
        pytest.skip(f"{wheel.name} not cached in {wheel.parent}")
    doc = json.loads(run_cli("check", "--no-config", "--verify", "--format", "json", str(wheel)).stdout)
    assert [f for f in doc["findings"] if f["rule"] == "reader-disagreement"] == []
    assert {f["format"] for f in doc["files"]} == {"macho"} and doc["summary"]["audited"] == 12


def test_a_doctored_reading_is_caught_field_by_field() -> None:
    from linkaudit.verify import verify

    (elf,) = read(str(SAMPLES / "broken/libtorch_cuda.so"))
    (pe,) = read(str(SAMPLES / "pe/imports/helper.dll"))
    wrong_elf = dataclasses.replace(elf, needed=(NeededLibrary("libnvrtc.so.12"), *elf.needed), runpath=("/x",))
    wrong_pe = dataclasses.replace(pe, forwarders=())
    found = {(d.path, d.field) for d in verify([wrong_elf, wrong_pe, elf, pe])}
    assert found == {(elf.path, "needed"), (elf.path, "runpath"), (pe.path, "forwarders")}


def test_mach_o_slices_are_verified_each_and_a_doctored_slice_is_caught_field_by_field() -> None:
    from linkaudit.verify import verify

    x86, arm = read(str(SAMPLES / "macho/misc/universal.dylib"))
    (weak,) = read(str(SAMPLES / "macho/misc/weak/libtorch_cuda.dylib"))
    (chained,) = read(str(SAMPLES / "macho/chained/libtorch_cuda.dylib"))
    assert verify([x86, arm, weak, chained]) == []
    plain = tuple(dataclasses.replace(n, kind=NeedKind.PLAIN) for n in weak.needed)  # weak dylib read as plain
    wrong_arm = dataclasses.replace(
        arm,
        min_os="10.15",
        rpath=(),
        forwarders=(("cuInit", "@rpath/libcuda.dylib:cuInit"),),
        symbols=SymbolTable.from_symbols(
            [*arm.symbols, linked_symbol("nvrtcVersion", False, "@rpath/libnvrtc.12.dylib", False)]
        ),
    )
    found = {(d.path, d.field) for d in verify([x86, wrong_arm, dataclasses.replace(weak, needed=plain), chained])}
    assert found == {
        (arm.display_path, "min os"),
        (arm.display_path, "rpath"),
        (arm.display_path, "re-exports"),
        (arm.display_path, "imports"),
        (weak.path, "needed"),
    }
    assert arm.display_path.endswith("universal.dylib(arm64)")
    (lone,) = verify([arm])  # one slice of a universal file: lief reads two
    assert (lone.path, lone.field, lone.ours, lone.theirs) == (arm.path, "slices", ["arm64"], ["x86_64", "arm64"])
    (d,) = [d for d in verify([x86, wrong_arm]) if d.field == "imports"]
    assert (
        "nvrtcVersion -> @rpath/libnvrtc.12.dylib" in d.ours
        and "nvrtcVersion -> @rpath/libnvrtc.12.dylib" not in d.theirs
    )
    (d,) = [d for d in verify([dataclasses.replace(weak, needed=plain)]) if d.field == "needed"]
    assert (d.ours[0], d.theirs[0]) == ("@rpath/libnvrtc.12.dylib (plain)", "@rpath/libnvrtc.12.dylib (weak)")


def test_the_default_path_never_imports_lief() -> None:
    code = (
        "import sys; from linkaudit.cli import main; "
        f"main(['check', '--no-config', {str(SAMPLES / 'pe')!r}, {str(SAMPLES / 'fixed')!r}]); "
        "sys.stderr.write('LIEF' if 'lief' in sys.modules else 'CLEAN')"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stderr.endswith("CLEAN"), proc.stderr


def test_verify_without_lief_is_a_usage_error(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "lief", None)  # import lief raises ImportError
    r = run_cli("check", "--no-config", "--verify", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "pip install lief" in r.stderr
