"""``linkaudit show``, ``rules`` and ``explain``."""

from __future__ import annotations

import json
from pathlib import Path

from linkaudit.rules import RULES

from ..output.schema import validate_show

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def test_show_text(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", str(SAMPLES / "fixed/libtorch_cuda.so"))
    assert r.exit_code == 0
    assert "soname       libtorch_cuda.so" in r.stdout
    assert "runpath      $ORIGIN" in r.stdout
    assert "versions     libnvrtc.so.12: libnvrtc.so.12" in r.stdout
    lines = r.stdout.splitlines()
    needed = lines.index("  needed       libnvrtc.so.12")
    assert lines[needed + 1].strip() == "libc.so.6"


def test_show_json_symbols_validates(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(
        "show",
        "--format",
        "json",
        "--symbols",
        str(SAMPLES / "fixed/libtorch_cuda.so"),
        str(SAMPLES / "arch/lib64be.so"),
    )
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    validate_show(doc)
    fixed, be = doc["binaries"]
    assert [n["name"] for n in fixed["needed"]] == ["libnvrtc.so.12", "libc.so.6"]
    nvrtc = [s for s in fixed["symbols"] if s["name"] == "nvrtcCreateProgram"]
    assert nvrtc[0]["version"] == "libnvrtc.so.12" and nvrtc[0]["defined"] is False
    assert (be["machine"], be["bits"], be["endian"]) == ("s390x", 64, "big")


def test_show_bad_input_exit_2(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", str(SAMPLES / "corrupt/badclass.so"), str(SAMPLES / "fixed/libnvrtc.so.12"))
    assert r.exit_code == 2
    assert "badclass.so: invalid ELF class 7" in r.stderr
    assert "libnvrtc.so.12" in r.stdout


def test_rules_lists_every_rule(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("rules")
    assert r.exit_code == 0
    for rule in RULES:
        assert rule.id in r.stdout


def test_explain(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("explain", "symbol-version")
    assert r.exit_code == 0 and "dl-version.c" in r.stdout and "unused_versions" in r.stdout
    assert run_cli("explain", "nope").exit_code == 2


def test_every_rule_is_documented() -> None:
    import re

    for rule in RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.id)
        assert rule.summary and len(rule.explain) > 200 and rule.evidence


def test_show_walks_directories_and_names_bad_inputs_like_check(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import os

    broken = tmp_path / "gone.so"
    os.symlink(tmp_path / "nowhere", broken)
    r = run_cli("show", str(SAMPLES / "fixed"), str(broken))
    assert r.exit_code == 2
    assert f"{broken}: broken symlink (its target does not exist)" in r.stderr
    assert "soname       libtorch_cuda.so" in r.stdout and "soname       libnvrtc.so.12" in r.stdout
    r = run_cli("show", "--format", "json", str(SAMPLES / "fixed"), str(broken), str(SAMPLES / "corrupt/lying_phdr.so"))
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    validate_show(doc)
    assert len(doc["binaries"]) == 2
    errors = {e["path"]: e for e in doc["errors"]}
    assert errors[str(broken)] == {
        "path": str(broken),
        "reason": "broken symlink (its target does not exist)",
        "offset": None,
    }
    assert errors[str(SAMPLES / "corrupt/lying_phdr.so")]["offset"] is not None
    assert run_cli("show", "--format", "json", str(SAMPLES / "fixed")).exit_code == 0


def test_show_symbols_in_readelf_columns(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", "--symbols", str(SAMPLES / "fixed/libnvrtc.so.12"), str(SAMPLES / "fixed/libtorch_cuda.so"))
    lines = r.stdout.splitlines()
    assert "     Num:    Value          Size Type    Bind   Vis      Ndx Name" in lines
    created = [line for line in lines if line.endswith(" nvrtcCreateProgram@libnvrtc.so.12")]
    assert created and created[0].split()[2:7] == ["0", "FUNC", "GLOBAL", "DEFAULT", "UND"]
    defined = [line for line in lines if line.endswith(" nvrtcCreateProgram@@libnvrtc.so.12")]
    fields = defined[0].split()
    assert fields[3:6] == ["FUNC", "GLOBAL", "DEFAULT"] and fields[6].isdigit() and int(fields[2]) > 0
    assert not any(line.startswith(("    U ", "    T ", "    W ", "    D ")) for line in lines)  # no nm letters


def test_show_names_the_dynamic_flags(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", str(SAMPLES / "misc/hello"))
    assert "flags        DT_FLAGS_1=0x8000000 (PIE)" in r.stdout
    doc = json.loads(run_cli("show", "--format", "json", str(SAMPLES / "misc/hello")).stdout)
    assert doc["binaries"][0]["flags_1_names"] == ["PIE"]


def test_flag_names() -> None:
    from linkaudit.model import DT_FLAGS_1_NAMES, DT_FLAGS_NAMES, flag_names

    assert flag_names(0x8000001, DT_FLAGS_1_NAMES) == ["NOW", "PIE"]
    assert flag_names(0x18, DT_FLAGS_NAMES) == ["BIND_NOW", "STATIC_TLS"]
    assert flag_names(0x800 | 0x80000000, DT_FLAGS_1_NAMES) == ["NODEFLIB", "0x80000000"]
    assert flag_names(0, DT_FLAGS_NAMES) == []


def test_show_skips_unsupported_formats_and_notes_empty_directories(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    dll = tmp_path / "foo.bc"  # LLVM bitcode: recognised, not read
    dll.write_bytes(b"BC\xc0\xde" + b"\0" * 60)
    r = run_cli("show", "--format", "json", str(dll), str(tmp_path / "empty"))
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    validate_show(doc)
    assert [x["path"] for x in doc["skipped"]] == [str(dll)]
    assert "LLVM bitcode" in doc["skipped"][0]["reason"]
    assert "holds no binary" in r.stderr


def test_show_speaks_each_formats_terms(run_cli, samples) -> None:  # type: ignore[no-untyped-def]
    """Mach-O: install name, dylibs, one LC_RPATH per line; PE: DLL name, DLLs; imports listed with
    the library they come from, not as ELF versions (no "@@")."""
    mac = run_cli("show", "--symbols", str(samples / "macho/misc/libleaky.dylib")).stdout.splitlines()
    assert "  install name /Users/runner/work/pytorch/build/lib/libleaky.dylib" in mac
    assert mac[mac.index("  LC_RPATH     /Users/runner/work/pytorch/build/lib") + 1] == "               @loader_path"
    assert any(line.endswith("dyld_stub_binder (from /usr/lib/libSystem.B.dylib)") for line in mac)
    assert not any("@@" in line or "null entry" in line or "GLOBAL" in line for line in mac)
    flat = run_cli("show", "--symbols", str(samples / "macho/misc/flat_lookup/libtorch_cuda.dylib")).stdout
    assert "nvrtcCreateProgram (flat lookup)" in flat
    helper = run_cli("show", "--symbols", str(samples / "pe/imports/helper.dll")).stdout.splitlines()
    assert "  0 imports, 1 exports, 1 forwarded or re-exported" in helper
    assert helper[-1].split()[1:] == ["forwarder", "forwarded_fn", "->", "nvrtc64_120_0.nvrtcGetPTX"]
    pe = run_cli("show", str(samples / "pe/imports/app.dll")).stdout.splitlines()
    assert "  DLL name     app.dll" in pe and "  DLLs         helper.dll" in pe
    elf = run_cli("show", str(samples / "fixed")).stdout
    assert "  soname       " in elf and "  needed       " in elf
