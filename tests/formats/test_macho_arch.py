"""Mach-O architectures are spelled as Apple's tools (``lipo``, ``otool``, dyld) and the macOS wheel
tags spell them — ``x86_64``, ``x86_64h``, ``arm64``, ``arm64e``, ``i386`` — in the model, in text
and in JSON, and so in a universal file's slice names (``libfoo.dylib(x86_64)``); never ELF's
``x86-64``.  x86_64h and arm64e are told apart by the header's ``cpusubtype``: the variants here are
the committed samples with that field patched (in the fat header and in the slice alike)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.formats.macho import arch_name, cpu_family

MACHO = Path(__file__).resolve().parents[2] / "sample_bins" / "macho"
X86_64, ARM64 = 0x01000007, 0x0100000C
X86_64_H, ARM64E_PTRAUTH = 8, 0x80000002  # CPU_SUBTYPE_X86_64_H; CPU_SUBTYPE_ARM64E | CPU_SUBTYPE_PTRAUTH_ABI


@pytest.mark.parametrize(
    ("cputype", "subtype", "name"),
    [
        (7, 3, "i386"),
        (X86_64, 3, "x86_64"),
        (X86_64, 0x80000003, "x86_64"),  # CPU_SUBTYPE_LIB64 is a capability bit, not a subtype
        (X86_64, X86_64_H, "x86_64h"),
        (ARM64, 0, "arm64"),
        (ARM64, ARM64E_PTRAUTH, "arm64e"),
        (0x0200000C, 1, "arm64_32"),
        (12, 9, "armv7"),
        (18, 0, "ppc"),
    ],
)
def test_arch_names(cputype: int, subtype: int, name: str) -> None:
    assert arch_name(cputype, subtype) == name
    assert cpu_family(name) in {"i386", "x86_64", "arm64", "arm64_32", "arm", "ppc"}


def _universal_h_e(tmp_path: Path) -> Path:
    """misc/universal.dylib with its x86_64 slice made x86_64h and its arm64 slice arm64e."""
    data = bytearray((MACHO / "misc/universal.dylib").read_bytes())
    magic, count = struct.unpack_from(">II", data, 0)
    assert magic == 0xCAFEBABE and count == 2
    for i in range(count):
        at = 8 + 20 * i
        cputype, _subtype, offset = struct.unpack_from(">iII", data, at)
        subtype = X86_64_H if cputype == X86_64 else ARM64E_PTRAUTH
        struct.pack_into(">I", data, at + 4, subtype)
        struct.pack_into("<I", data, offset + 8, subtype)
    out = tmp_path / "universal.dylib"
    out.write_bytes(bytes(data))
    return out


def test_the_model_and_slice_names_spell_apples_names(tmp_path: Path) -> None:
    plain = read(str(MACHO / "misc/universal.dylib"))
    assert [(b.machine, b.member, b.display_path.rsplit("/", 1)[-1]) for b in plain] == [
        ("x86_64", "x86_64", "universal.dylib(x86_64)"),
        ("arm64", "arm64", "universal.dylib(arm64)"),
    ]
    patched = read(str(_universal_h_e(tmp_path)))
    assert [(b.machine, b.display_path.rsplit("/", 1)[-1]) for b in patched] == [
        ("x86_64h", "universal.dylib(x86_64h)"),
        ("arm64e", "universal.dylib(arm64e)"),
    ]


def test_text_and_json_never_say_x86_dash_64_for_macho(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outputs = [
        run_cli(*cmd, str(MACHO)).stdout
        for cmd in (
            ("check", "--no-config"),
            ("check", "--no-config", "--format", "json"),
            ("show",),
            ("tree", "--all-roots"),
            ("tree", "--all-roots", "--format", "json"),
        )
    ]
    for out in outputs:
        assert "x86_64" in out and "x86-64" not in out
    show = run_cli("show", str(MACHO / "misc/universal.dylib")).stdout
    assert f"{MACHO / 'misc/universal.dylib'}(x86_64)\n  format       Mach-O 64-bit, x86_64," in show
    fat = _universal_h_e(tmp_path)
    tree = json.loads(run_cli("tree", "--format", "json", str(fat)).stdout)
    assert sorted(d["machine"] for d in tree["dyld_roots"]) == ["arm64e", "x86_64h"]
    report = json.loads(run_cli("check", "--no-config", "--format", "json", str(fat)).stdout)
    assert {f["path"] for f in report["files"]} == {f"{fat}(x86_64h)", f"{fat}(arm64e)"}
    (missing,) = [f for f in report["findings"] if f["rule"] == "library-not-found"]
    assert sorted(r["machine"] for r in missing["evidence"]["roots"]) == ["arm64e", "x86_64h"]
