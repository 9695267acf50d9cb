"""``check --verify``: lief reads every input again; zero disagreements on our samples, a doctored
reading is caught field by field, and the default path never imports lief."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.model import NeededLibrary

pytest.importorskip("lief")

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"


def test_every_sample_reads_the_same_with_lief(run_cli) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run_cli("check", "--no-config", "--verify", "--format", "json", str(SAMPLES)).stdout)
    assert [f for f in doc["findings"] if f["rule"] == "reader-disagreement"] == []
    assert doc["summary"]["audited"] >= 100  # ELF (objects and no-section-header files too) and PE


def test_a_doctored_reading_is_caught_field_by_field() -> None:
    from linkaudit.verify import verify

    (elf,) = read(str(SAMPLES / "broken/libtorch_cuda.so"))
    (pe,) = read(str(SAMPLES / "pe/imports/helper.dll"))
    wrong_elf = dataclasses.replace(elf, needed=(NeededLibrary("libnvrtc.so.12"), *elf.needed), runpath=("/x",))
    wrong_pe = dataclasses.replace(pe, forwarders=())
    found = {(d.path, d.field) for d in verify([wrong_elf, wrong_pe, elf, pe])}
    assert found == {(elf.path, "needed"), (elf.path, "runpath"), (pe.path, "forwarders")}


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
