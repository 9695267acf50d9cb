"""isa-level: the GNU property note's x86 ISA levels (GNU_PROPERTY_X86_ISA_1_NEEDED), read as glibc's
loader reads them, against what a wheel's platform tag promises (every CPU of its architecture)."""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.rules.isa_level import needed_level

from ..output.schema import validate_report
from ..tools import needs, require

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
V3 = SAMPLES / "misc/libisa_v3.so"
ELF = sorted(
    p for p in SAMPLES.rglob("*") if p.is_file() and not p.is_symlink() and "corrupt" not in p.parts
    and p.read_bytes()[:4] == b"\x7fELF"
)  # fmt: skip
_LEVEL_BIT = {"x86-64-baseline": 1, "x86-64-v2": 2, "x86-64-v3": 4, "x86-64-v4": 8}


def _readelf_bits(path: Path) -> int:
    """``readelf -n``'s "x86 ISA needed: x86-64-v2, x86-64-v3" as GNU_PROPERTY_X86_ISA_1_NEEDED bits."""
    out = subprocess.run([require("readelf"), "-nW", str(path)], capture_output=True, text=True).stdout
    found = re.search(r"x86 ISA needed: (.*)", out)
    return sum(_LEVEL_BIT[w.strip()] for w in found.group(1).split(",")) if found else 0


def test_the_note_is_read() -> None:
    (b,) = read(str(V3))
    assert b.x86_isa_needed == 4 and needed_level(b.x86_isa_needed) == "x86-64-v3"
    (plain,) = read(str(SAMPLES / "misc/libweak.so"))  # the same object, linked without -z x86-64-v3
    assert plain.x86_isa_needed == 0


@needs("readelf")
@pytest.mark.parametrize("path", ELF, ids=lambda p: str(p.relative_to(SAMPLES)))
def test_every_sample_agrees_with_readelf(path: Path) -> None:
    ours = [b.x86_isa_needed for b in read(str(path))]
    assert ours == [_readelf_bits(path)] * len(ours)


def test_levels_are_named_by_their_highest_bit() -> None:
    assert [needed_level(b) for b in (0, 1, 2, 3, 4, 6, 8, 15)] == [
        None, None, "x86-64-v2", "x86-64-v2", "x86-64-v3", "x86-64-v3", "x86-64-v4", "x86-64-v4",
    ]  # fmt: skip
    assert needed_level(1 << 5) == "x86 ISA level bit 5"


def _wheel(path: Path, member: bytes) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("m/libisa_v3.so", member)
    return path


def _isa(run_cli, *args: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    doc = json.loads(run_cli("check", "--no-config", "--no-loader", "--format", "json", *args).stdout)
    validate_report(doc)
    return [f for f in doc["findings"] if f["rule"] == "isa-level"]


def test_a_wheel_promising_every_x86_64_cpu(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    data = V3.read_bytes()
    many = _wheel(tmp_path / "m-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl", data)
    (f,) = _isa(run_cli, str(many))
    assert f["severity"] == "error" and f["subject"] == "x86-64-v3" and f["file"] == f"{many}!m/libisa_v3.so"
    assert f["evidence"] == {
        "needed": "x86-64-v3",
        "needed_bits": 4,
        "tag": "manylinux_2_17_x86_64",
        "package": str(many),
    }
    assert "CPU ISA level is lower than required" in f["message"] and "AVX2" in f["message"]
    musl = _wheel(tmp_path / "m-1.0-cp311-cp311-musllinux_1_2_x86_64.whl", data)
    (f,) = _isa(run_cli, str(musl))
    assert "musl's loader does not read the note" in f["message"] and f["evidence"]["tag"] == "musllinux_1_2_x86_64"


def test_no_promise_no_finding(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A build tree promises nothing; a file needing only the baseline breaks no promise."""
    assert _isa(run_cli, str(V3)) == []
    plain = _wheel(tmp_path / "m-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", (SAMPLES / "misc/libweak.so").read_bytes())
    assert _isa(run_cli, str(plain)) == []
