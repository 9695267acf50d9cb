"""``linkaudit tree`` and ``linkaudit why`` on the loader scenarios."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from linkaudit import read
from linkaudit.loader.analysis import analyze
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Libc

from ..output.schema import validate_report, validate_tree

SCN = Path(__file__).resolve().parents[2] / "sample_bins" / "loader"
SAMPLES = SCN.parent


def test_tree_marks_missing_with_paths_tried(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", str(SCN / "runpath_not_inherited"))
    assert r.exit_code == 1
    assert "libmid.so => " in r.stdout and "[DT_RUNPATH of app]" in r.stdout
    assert "libleaf.so => not found" in r.stdout
    assert "tried /lib/x86_64-linux-gnu/libleaf.so [system-directory] missing" in r.stdout


def test_tree_ok_exit_0_and_json(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--format", "json", str(SCN / "rpath_inherited"))
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    validate_tree(doc)
    (root,) = doc["roots"]
    assert root["kind"] == "executable"
    mid = next(o for o in root["objects"] if o["path"].endswith("lib/libmid.so"))
    (leaf,) = [n for n in mid["needed"] if n["name"] == "libleaf.so"]
    assert leaf["found"] and leaf["source"] == "DT_RPATH" and leaf["owner"].endswith("/app")


def test_tree_bind_counts(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", "--bind", str(SCN / "soname_reuse"))
    assert "1 unresolved" in r.stdout


def test_tree_dlopen_global_option(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(
        "tree",
        "--dlopen-global",
        str(SCN / "global_preload/a/libdup.so.1"),
        "--entry",
        str(SCN / "global_preload/libroot.so"),
        str(SCN / "global_preload"),
    )
    assert "libdup.so.1 => " in r.stdout and "(already loaded)" in r.stdout


def test_why_library_chain(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(SCN / "runpath_not_inherited"), "libleaf.so")
    assert r.exit_code == 0
    assert "app → libmid.so → libleaf.so => not found" in r.stdout


def test_why_symbol_binding(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", "--format", "json", str(SCN / "versions"), "prov_a")
    doc = json.loads(r.stdout)
    users = {Path(u["user"]).name for u in doc["symbol_uses"]}
    assert {"libunversioned.so", "libuses_new.so"} <= users
    assert all(u["binds_to"] for u in doc["symbol_uses"])
    assert run_cli("why", str(SCN / "versions"), "no_such_thing").exit_code == 1


def test_driverless_driver_link_is_a_note_outside_every_closure(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A library that links the driver but that no import root's closure reaches: a note."""
    (tmp_path / "lib").mkdir()
    ext = tmp_path / "_C.cpython-311-x86_64-linux-gnu.so"
    ext.write_bytes((SAMPLES / "ext/_C.cpython-311-x86_64-linux-gnu.so").read_bytes())
    (tmp_path / "lib" / "libshim.so").write_bytes((SAMPLES / "ext/lib/libshim.so").read_bytes())
    (tmp_path / "lib" / "libuses_driver.so").write_bytes((SAMPLES / "misc/libuses_driver.so").read_bytes())
    r = run_cli("check", "--format", "json", str(tmp_path))
    doc = json.loads(r.stdout)
    (f,) = [f for f in doc["findings"] if f["rule"] == "driver-link"]
    assert f["severity"] == "note"
    assert f["evidence"]["roots"] == [] and f["evidence"]["would_fail"] is None


def test_driverless_driver_link_in_a_closure_carries_the_chain(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--format", "json", str(SAMPLES / "broken/libtorch_cuda.so"))
    doc = json.loads(r.stdout)
    validate_report(doc)
    (f,) = [f for f in doc["findings"] if f["rule"] == "driver-link"]
    assert f["severity"] == "error"
    assert f["evidence"]["roots"][0]["chain"][-1] == "libcuda.so.1"
    assert "cannot open shared object file" in f["evidence"]["would_fail"]
    assert not [f for f in doc["findings"] if f["rule"] == "library-not-found"]  # one root cause, one finding


def test_musl_binaries_are_given_musls_rules_not_glibcs() -> None:
    """No ld.so.cache, no glibc-hwcaps: a musl binary is loaded by the musl emulation (loader.musl)."""
    (b,) = read(str(SAMPLES / "fixed/libtorch_cuda.so"))
    musl = replace(b, libc=Libc.MUSL, interpreter="/lib/ld-musl-x86_64.so.1")
    a = analyze([musl], TargetEnvironment())
    assert a.skipped == [] and [ld.loader for ld in a.loads] == ["musl"]
    res = a.loads[0].resolutions[(musl.path, "libnvrtc.so.12")]
    assert res.found and all(t.source.value != "ld.so.cache" and "glibc-hwcaps" not in t.path for t in res.attempts)
    libc = a.loads[0].resolutions[(musl.path, "libc.so.6")]  # a libc name is the loader itself, never searched
    assert libc.path is not None and libc.path.endswith("ld-musl-x86_64.so.1") and libc.attempts == ()


MACHO = SAMPLES / "macho"


def _macho_layout(tmp_path: Path) -> Path:
    """lib/libtorch_cuda.dylib (x86_64, @rpath/libnvrtc.12.dylib through LC_RPATH @loader_path)
    with its libnvrtc only in dlp/ — and an arm64 one, of the wrong architecture, beside it."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "dlp").mkdir()
    torch = tmp_path / "lib/libtorch_cuda.dylib"
    torch.write_bytes((MACHO / "fixed/libtorch_cuda.dylib").read_bytes())
    (tmp_path / "lib/libnvrtc.12.dylib").write_bytes((MACHO / "misc/libleaky.dylib").read_bytes())
    (tmp_path / "dlp/libnvrtc.12.dylib").write_bytes((MACHO / "fixed/libnvrtc.12.dylib").read_bytes())
    return torch


def test_tree_draws_the_dyld_loads_with_the_places_tried(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    torch = _macho_layout(tmp_path)
    r = run_cli("tree", str(torch))
    assert r.exit_code == 1
    assert f"{torch} [dlopen] (dyld, x86_64)" in r.stdout
    assert "@rpath/libnvrtc.12.dylib => not found" in r.stdout
    assert (
        f"tried {tmp_path / 'lib/libnvrtc.12.dylib'} [LC_RPATH of libtorch_cuda.dylib] wrong-machine "
        "(have arm64, need x86_64)" in r.stdout
    )
    assert "/usr/lib/libSystem.B.dylib (dyld shared cache: present)" in r.stdout
    ok = run_cli("tree", "--dyld-fallback-library-path", str(tmp_path / "dlp"), str(torch))
    assert ok.exit_code == 0
    assert f"@rpath/libnvrtc.12.dylib => {tmp_path / 'dlp/libnvrtc.12.dylib'} [DYLD_FALLBACK_LIBRARY_PATH]" in ok.stdout
    # the skipped candidate is shown even without --verbose: it is why the fallback was needed
    assert "wrong-machine (have arm64, need x86_64)" in ok.stdout
    doc = json.loads(
        run_cli("tree", "--format", "json", "--dyld-library-path", str(tmp_path / "dlp"), str(torch)).stdout
    )
    validate_tree(doc)
    assert "windows_roots" not in doc
    (load,) = doc["dyld_roots"]
    assert (load["loader"], load["machine"], load["kind"]) == ("dyld", "x86_64", "dlopen")
    (nvrtc,) = [i for i in load["imports"] if i["name"] == "@rpath/libnvrtc.12.dylib"]
    assert nvrtc["source"] == "DYLD_LIBRARY_PATH" and nvrtc["attempts"] == [
        {
            "path": str(tmp_path / "dlp/libnvrtc.12.dylib"),
            "source": "DYLD_LIBRARY_PATH",
            "outcome": "found",
            "detail": "",
        }
    ]


def test_tree_json_keeps_the_windows_roots_shape(run_cli) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(run_cli("tree", "--all-roots", "--format", "json", str(SAMPLES / "pe/imports")).stdout)
    validate_tree(doc)
    assert "dyld_roots" not in doc
    (app,) = [w for w in doc["windows_roots"] if w["root"].endswith("app.dll")]
    assert {"root", "kind", "objects", "imports"} <= set(app) and app["loader"] == "windows"


def test_why_answers_for_a_dylib(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    torch = _macho_layout(tmp_path)
    dlp = ("--dyld-library-path", str(tmp_path / "dlp"))
    # by its leaf name, its @rpath name as written, or the install name of the file found
    for name in ("libnvrtc.12.dylib", "@rpath/libnvrtc.12.dylib"):
        r = run_cli("why", *dlp, str(torch), name)
        assert r.exit_code == 0, r.stdout
        assert (
            f"libtorch_cuda.dylib → libnvrtc.12.dylib => {tmp_path / 'dlp/libnvrtc.12.dylib'} [DYLD_LIBRARY_PATH]"
            in r.stdout
        )
    missing = run_cli("why", "--format", "json", str(torch), "libnvrtc.12.dylib")
    (chain,) = json.loads(missing.stdout)["library_chains"]
    assert chain["path"] is None and chain["loader"] == "dyld" and chain["machine"] == "x86_64"
    assert chain["tried"] == [str(tmp_path / "lib/libnvrtc.12.dylib")]
    assert chain["skipped"] == [
        {
            "path": str(tmp_path / "lib/libnvrtc.12.dylib"),
            "outcome": "wrong-machine",
            "detail": "have arm64, need x86_64",
        }
    ]
    text = run_cli("why", str(torch), "libnvrtc.12.dylib").stdout
    assert "=> not found" in text and "skipped " in text and "wrong-machine (have arm64, need x86_64)" in text
    assert run_cli("why", str(torch), "libSystem.B.dylib").exit_code == 0
    assert run_cli("why", str(torch), "libomp.dylib").exit_code == 1


def test_the_dyld_and_path_options_reach_the_loaders(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """--executable-path, --dyld-library-path, --dyld-fallback-library-path, --path and --entry are
    handed to analyze_dyld / analyze_windows by check (through AuditConfig), tree and why alike."""
    import importlib

    from linkaudit.loader import dyld, windows

    seen: list[tuple[str, object]] = []
    real_dyld, real_windows = dyld.analyze_dyld, windows.analyze_windows

    def spy_dyld(binaries, executable=None, read=None, library_path=(), fallback_library_path=(), entries=(), skipped=None):  # type: ignore[no-untyped-def]  # fmt: skip
        seen.append(("dyld", (executable, tuple(library_path), tuple(fallback_library_path), tuple(entries))))
        return real_dyld(binaries, executable, read, library_path, fallback_library_path, entries, skipped=skipped)

    def spy_windows(binaries, dll_directories=(), preload=(), read=None, path=(), entries=(), skipped=None):  # type: ignore[no-untyped-def]
        seen.append(("windows", (tuple(path), tuple(entries))))
        return real_windows(binaries, dll_directories, preload, read, path, entries, skipped=skipped)

    # check imports each loader when inputs of its format are present (start-up): spy on the
    # loaders' own modules; tree imports both up front.
    for module in map(
        importlib.import_module, ("linkaudit.loader.dyld", "linkaudit.loader.windows", "linkaudit.cli.tree")
    ):
        monkeypatch.setattr(module, "analyze_dyld", spy_dyld, raising=False)
        monkeypatch.setattr(module, "analyze_windows", spy_windows, raising=False)
    dll = Path(__file__).resolve().parents[2] / "sample_bins" / "pe" / "fixed" / "nvrtc64_120_0.dll"
    torch = _macho_layout(tmp_path)
    options = (
        "--executable-path", "/opt/py/bin/python3",
        "--dyld-library-path", "/a", "--dyld-library-path", "/b",
        "--dyld-fallback-library-path", "/c",
        "--path", "/w",
        "--entry", str(torch),
    )  # fmt: skip
    for command in (("check", "--no-config"), ("tree",), ("why",)):
        seen.clear()
        pe = (str(dll),) if command[0] == "check" else ()  # check runs the Windows loader for PE inputs only
        run_cli(*command, *options, str(torch), *pe, *(("libnvrtc.12.dylib",) if command == ("why",) else ()))
        assert ("dyld", ("/opt/py/bin/python3", ("/a", "/b"), ("/c",), (str(torch),))) in seen, command
        assert ("windows", (("/w",), (str(torch),))) in seen, command


def test_tree_bind_exits_1_when_an_import_is_not_exported(run_cli, samples) -> None:  # type: ignore[no-untyped-def]
    """Windows ("The procedure entry point ... could not be located") and dyld ("Symbol not found")
    stop the load: tree --bind exits 1 for them, 0 for the fixed samples."""
    assert run_cli("tree", "--bind", str(samples / "pe/imports")).exit_code == 1
    assert run_cli("tree", "--bind", str(samples / "macho/misc/missing_symbol")).exit_code == 1
    assert run_cli("tree", "--bind", str(samples / "macho/fixed")).exit_code == 0
    assert run_cli("tree", "--bind", str(samples / "pe/fixed")).exit_code == 0


def test_why_says_a_missing_pe_or_mach_o_driver_library_is_the_drivers(run_cli, samples) -> None:  # type: ignore[no-untyped-def]
    for path, name in (("macho/broken", "libcuda.dylib"), ("pe/broken", "nvcuda.dll")):
        out = run_cli("why", str(samples / path), name).stdout
        assert "not found (GPU driver library: only the driver installs it, no package ships it)" in out


def test_why_names_the_renamed_libraries_a_plain_name_begins(run_cli) -> None:  # type: ignore[no-untyped-def]
    """``why MODULE libhelp``: no library of that name, but the loads hold libhelper.so, whose name
    begins with it, and say so (auditwheel renames what it vendors, libgfortran-040039e1-….so.5:
    the plain name found nothing and said nothing more); a name nothing begins with says only that."""
    module = str(SAMPLES / "loader" / "pyext" / "mod.cpython-311-x86_64-linux-gnu.so")
    r = run_cli("why", module, "libhelp")
    assert r.exit_code == 1
    assert "libhelp: not a library or symbol of any load of" in r.stdout
    assert "libraries of the loads whose names begin with it: libhelper.so" in r.stdout
    r = run_cli("why", module, "libzzz")
    assert r.exit_code == 1 and "begin with it" not in r.stdout
