"""``linkaudit why SYMBOL`` and ``tree --bind`` on PE and Mach-O loads, the universal file's slices
named, and the summary line counting files (sample_bins/pe, sample_bins/macho)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.output import OutputFormat, renderer

from ..output.schema import validate_report, validate_tree

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
PE = SAMPLES / "pe"
MACHO = SAMPLES / "macho"


def test_why_symbol_macho_chain(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(MACHO / "misc/chain"), "nvrtcCompileProgram")
    assert r.exit_code == 0, r.stdout
    assert (
        "_C.so [python-import]: _C.so → libtorch_cuda.dylib uses nvrtcCompileProgram from @rpath/libnvrtc.12.dylib: "
        f"binds to {MACHO / 'misc/chain/torch/lib/libnvrtc.12.dylib'}"
    ) in r.stdout
    # the leading underscore of the Mach-O symbol table is accepted too
    assert run_cli("why", str(MACHO / "misc/chain"), "_nvrtcCompileProgram").stdout == r.stdout


def test_why_symbol_pe_json_shape_follows_elf(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", "--format", "json", str(PE / "fixed"), "nvrtcGetPTX")
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    (use,) = doc["symbol_uses"]
    # the keys of an ELF use, then the image load's
    assert {"root", "user", "reference", "weak", "binds_to", "scope", "defined_in_scope"} <= use.keys()
    assert use["reference"] == "nvrtcGetPTX" and use["library"] == "nvrtc64_120_0.dll"
    assert use["binds_to"].endswith("pe/fixed/nvrtc64_120_0.dll") and use["outcome"] == "bound"
    assert use["loader"] == "windows" and use["scope"] == "library"
    assert [Path(d["path"]).name for d in use["defined_in_scope"]] == ["nvrtc64_120_0.dll"]


def test_why_symbol_pe_forwarder_and_missing_export(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", "--format", "json", str(PE / "imports"), "forwarded_fn")
    uses = json.loads(r.stdout)["symbol_uses"]
    assert {Path(u["user"]).name for u in uses} == {"app.exe", "app.dll"}
    for u in uses:
        assert u["binds_to"].endswith("pe/imports/nvrtc64_120_0.dll") and u["provider_symbol"] == "nvrtcGetPTX"
        assert [Path(v["path"]).name for v in u["via"]] == ["helper.dll", "nvrtc64_120_0.dll"]
    text = run_cli("why", str(PE / "imports"), "forwarded_fn").stdout
    assert "forwarded: helper.dll (forwarded_fn) → nvrtc64_120_0.dll (nvrtcGetPTX)" in text
    r = run_cli("why", str(PE / "imports"), "absent_fn")
    assert r.exit_code == 0
    assert (
        "app.exe uses absent_fn from helper.dll: binds nowhere: The procedure entry point absent_fn could not be "
        "located in the dynamic link library helper.dll"
    ) in r.stdout


def test_why_symbol_macho_reexport_and_flat_lookup(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(MACHO / "misc/reexport"), "nvrtcCreateProgram")
    assert "from @rpath/libcuda_umbrella.dylib: binds to " in r.stdout
    assert (
        "re-exported: libcuda_umbrella.dylib (nvrtcCreateProgram) → libnvrtc.12.dylib (nvrtcCreateProgram)" in r.stdout
    )
    r = run_cli("why", str(MACHO / "misc/flat_namespace"), "nvrtcCreateProgram")
    assert "uses nvrtcCreateProgram by flat lookup: binds to " in r.stdout
    assert "(flat lookup: the first image of the load that exports it)" in r.stdout
    assert run_cli("why", str(MACHO / "misc/flat_namespace"), "no_such_symbol").exit_code == 1


def test_why_names_the_slice_of_a_universal_file(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(MACHO / "misc/universal.dylib"), "libnvrtc.12.dylib")
    lines = [line for line in r.stdout.splitlines() if not line.startswith(" ")]
    assert len(lines) == 2 and len(set(lines)) == 2
    assert any("universal.dylib(arm64) [dlopen]: " in line for line in lines)
    assert any("universal.dylib(x86_64) [dlopen]: " in line for line in lines)
    r = run_cli("why", str(MACHO / "misc/universal.dylib"), "nvrtcCreateProgram")
    lines = r.stdout.splitlines()
    assert len(lines) == 2 and len(set(lines)) == 2 and "universal.dylib(arm64)" in r.stdout


def test_tree_bind_counts_pe(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--bind", str(PE / "imports"))
    assert (
        f"{PE / 'imports/app.exe'}: 3 imports bound over 2 images (Windows search order), 2 bound, 1 unresolved, "
        "0 weak unresolved, 0 not judged"
    ) in r.stdout
    assert "  app.exe: 3 imports, 2 bound, 1 unresolved\n" in r.stdout
    assert "  unresolved: absent_fn (in app.exe, from helper.dll): The procedure entry point absent_fn" in r.stdout
    assert "imports bound over" not in run_cli("tree", str(PE / "imports")).stdout


def test_tree_bind_counts_macho_flat_and_json(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--bind", str(MACHO / "misc/flat_namespace"))
    assert "libtorch_cuda.dylib: 3 imports, 2 bound, 1 not judged, 3 by flat lookup" in r.stdout
    r = run_cli("tree", "--bind", "--format", "json", str(MACHO / "misc/missing_symbol"))
    doc = json.loads(r.stdout)
    validate_tree(doc)
    (load,) = [ld for ld in doc["dyld_roots"] if ld["root"].endswith("libtorch_cuda.dylib")]
    bind = load["bind"]
    assert (bind["imports"], bind["bound"], bind["unresolved"]) == (4, 1, 1)
    (missing,) = bind["unresolved_imports"]
    assert missing["symbol"] == "nvrtcCompileProgram" and missing["outcome"] == "not-exported"
    assert (
        "bind"
        not in json.loads(run_cli("tree", "--format", "json", str(MACHO / "misc/missing_symbol")).stdout)["dyld_roots"][
            0
        ]
    )


@pytest.mark.parametrize(
    ("path", "summary"),
    [
        ("macho/misc/universal.dylib", "2 binaries in 1 file: 2 audited; "),
        ("macho/misc/arm64_only.dylib", "1 file: 1 audited; "),
        ("objects/archive_one", "4 binaries in 3 files: 4 audited; "),
        ("pe/imports", "4 files: 4 audited; "),
    ],
)
def test_summary_counts_files_and_binaries(run_cli, path: str, summary: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-config", str(SAMPLES / path))
    assert r.stdout.splitlines()[-1].startswith(summary)


def test_summary_macho_directory_and_json_unchanged(run_cli) -> None:  # type: ignore[no-untyped-def]
    files = [p for p in MACHO.rglob("*") if p.is_file()]
    # every slice of a universal file is a binary: nfat_arch from each fat header (big-endian)
    slices = sum(
        int.from_bytes(head[4:8], "big") - 1
        for head in (p.read_bytes()[:8] for p in files)
        if head[:4] == b"\xca\xfe\xba\xbe"
    )
    # misc/universal.dylib, misc/universal_10_9.dylib, sdk0/libdup_universal.dylib (misc/arm64_only.dylib: one slice)
    assert slices == 3
    r = run_cli("check", "--no-config", str(MACHO))
    assert r.stdout.splitlines()[-1].startswith(f"{len(files) + slices} binaries in {len(files)} files: ")
    doc = json.loads(run_cli("check", "--no-config", "--format", "json", str(MACHO)).stdout)
    validate_report(doc)
    # the JSON report still lists one entry per binary (backward compatible)
    assert doc["summary"]["files"] == len(doc["files"]) == len(files) + slices
    assert {f["path"] for f in doc["files"]} >= {
        f"{MACHO / 'misc/universal.dylib'}(arm64)",
        f"{MACHO / 'misc/universal.dylib'}(x86_64)",
    }


def test_why_symbol_on_the_torch_macos_wheel(run_cli, torch_macos_wheel: Path) -> None:  # type: ignore[no-untyped-def]
    """The fresh user's case: libtorch_cpu.dylib's OpenMP imports bind to the wheel's libomp.dylib."""
    r = run_cli("why", "--format", "json", str(torch_macos_wheel), "omp_get_max_threads")
    assert r.exit_code == 0
    uses = json.loads(r.stdout)["symbol_uses"]
    assert uses and all(u["library"] == "@rpath/libomp.dylib" and u["outcome"] == "bound" for u in uses)
    assert all(u["binds_to"].endswith("!torch/lib/libomp.dylib") for u in uses)
    assert {Path(u["user"]).name for u in uses} == {"libtorch_cpu.dylib"}


def test_tree_and_why_take_a_member_directory_of_a_wheel(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--dll-directory pkg/lib`` names a directory of the wheel (as ``os.add_dll_directory`` does in
    the package's ``__init__``), for ``tree`` and ``why`` as for ``check``."""
    import zipfile

    wheel = tmp_path / "pkg-1.0-py3-none-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/_C.cp311-win_amd64.pyd", (PE / "fixed/torch_cuda.dll").read_bytes())
        zf.writestr("pkg/lib/nvrtc64_120_0.dll", (PE / "fixed/nvrtc64_120_0.dll").read_bytes())
        zf.writestr("pkg-1.0.dist-info/RECORD", "")
    r = run_cli("tree", "--bind", "--dll-directory", "pkg/lib", str(wheel))
    assert r.exit_code == 0, r.stdout
    assert f"nvrtc64_120_0.dll => {wheel}!pkg/lib/nvrtc64_120_0.dll [dll-directory]" in r.stdout
    assert "5 imports bound over 2 images (Windows search order), 5 bound, 0 unresolved" in r.stdout
    r = run_cli("why", "--dll-directory", "pkg/lib", str(wheel), "nvrtcGetPTX")
    assert f"binds to {wheel}!pkg/lib/nvrtc64_120_0.dll" in r.stdout


@pytest.mark.parametrize(
    "paths",
    [
        ["objects/archive_one", "macho/misc/universal.dylib"],
        ["objects/archive_one", "pe/imports", "macho/misc/arm64_only.dylib"],
        ["macho"],
    ],
)
def test_the_text_summary_counts_in_the_json_summarys_unit(paths: list[str], tmp_path: Path) -> None:
    """The text said ``67 files (69 binaries): 67 audited, 2 skipped`` where JSON ``summary.files``
    was 69: the first number is JSON's ``files``, audited + unreadable + skipped add up to it, and
    the files that hold them are said beside it."""
    garbage = tmp_path / "garbage.so"
    garbage.write_bytes(b"\x7fELF" + b"\xff" * 60)  # an unreadable input beside the binaries
    report = audit([*(str(SAMPLES / p) for p in paths), str(garbage)])
    counts = json.loads(renderer(OutputFormat.JSON)(report))["summary"]
    line = renderer(OutputFormat.TEXT)(report).splitlines()[-1]
    m = re.match(r"(\d+) (?:binaries in (\d+) )?files?: (.*?);", line)
    assert m is not None, line
    assert int(m[1]) == counts["files"] == counts["audited"] + counts["unreadable"] + counts["skipped"]
    stated = {word: int(num) for num, word in re.findall(r"(\d+) (audited|unreadable|skipped)", m[3])}
    assert stated == {k: counts[k] for k in ("audited", "unreadable", "skipped") if counts[k] or k == "audited"}
    assert counts["unreadable"] == 1
    assert (m[2] is not None) == (len({r.path.split("(")[0] for r in report.files}) < counts["files"])
