"""``--entry`` selects the import roots of PE and Mach-O inputs as it does ELF's, in every command
that takes it (``check``, ``tree``, ``why``): the roots are the entries; an input no entry reaches
is loaded alone as a dlopen (``reached: false``), drawn by ``tree`` only with ``--all-roots``."""

from __future__ import annotations

import json
from pathlib import Path

from ..output.schema import validate_report, validate_tree

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
CHAIN = SAMPLES / "macho/misc/chain/torch"  # _C.so finds lib/'s libnvrtc only through its own LC_RPATH
IMPORTS = SAMPLES / "pe/imports"


def test_tree_entry_picks_the_dyld_root(run_cli) -> None:  # type: ignore[no-untyped-def]
    default = run_cli("tree", str(CHAIN))
    assert default.exit_code == 0 and f"{CHAIN / '_C.so'} [python-import]" in default.stdout
    lib = CHAIN / "lib/libtorch_cuda.dylib"
    r = run_cli("tree", "--entry", str(lib), str(CHAIN))
    # loaded by itself, libtorch_cuda has no LC_RPATH to find libnvrtc by: the load fails
    assert r.exit_code == 1, r.stdout
    assert r.stdout.startswith(f"{lib} [dlopen] (dyld, ")
    assert "@rpath/libnvrtc.12.dylib => not found" in r.stdout
    assert "_C.so" not in r.stdout and "libnvrtc.12.dylib [dlopen]" not in r.stdout
    # --all-roots adds the inputs no entry reaches, loaded alone: the extension module imported on
    # its own (it was never loaded: a missing library of another extension module went unsaid)
    every = run_cli("tree", "--all-roots", "--entry", str(lib), str(CHAIN))
    assert f"{CHAIN / 'lib/libnvrtc.12.dylib'} [dlopen]" in every.stdout
    assert f"{CHAIN / '_C.so'} [python-import]" in every.stdout
    doc = json.loads(run_cli("tree", "--format", "json", "--entry", str(lib), str(CHAIN)).stdout)
    validate_tree(doc)
    assert [(d["root"], d["kind"]) for d in doc["dyld_roots"]] == [(str(lib), "dlopen")]


def test_check_entry_picks_the_dyld_root(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check", "--no-config", str(CHAIN)).exit_code == 0
    lib = CHAIN / "lib/libtorch_cuda.dylib"
    r = run_cli("check", "--no-config", "--format", "json", "--entry", str(lib), str(CHAIN))
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    validate_report(doc)
    assert [(x["path"], x["kind"], x["reached"]) for x in doc["roots"]] == [
        (str(lib), "dlopen", True),
        (str(CHAIN / "_C.so"), "python-import", False),
        (str(CHAIN / "lib/libnvrtc.12.dylib"), "dlopen", False),
    ]
    (missing,) = [f for f in doc["findings"] if f["rule"] == "library-not-found"]
    assert missing["subject"] == "@rpath/libnvrtc.12.dylib" and missing["file"] == str(lib)
    assert [r["root"] for r in missing["evidence"]["roots"]] == [str(lib)]


def test_entry_picks_the_windows_root(run_cli) -> None:  # type: ignore[no-untyped-def]
    """pe/imports: app.exe is the default root; --entry app.dll makes the DLL the one root; app.exe
    (an executable no entry reaches) is run on its own, ``reached: false``, drawn with --all-roots."""
    default = run_cli("tree", str(IMPORTS))
    assert f"{IMPORTS / 'app.exe'} [executable]" in default.stdout
    assert f"{IMPORTS / 'app.dll'} [dlopen]" not in default.stdout  # reached by no root: --all-roots
    dll = IMPORTS / "app.dll"
    r = run_cli("tree", "--entry", str(dll), str(IMPORTS))
    assert r.exit_code == 0
    assert r.stdout.startswith(f"{dll} [dlopen] (Windows search order)")
    assert "app.exe" not in r.stdout
    assert f"helper.dll => {IMPORTS / 'helper.dll'} [dll-load-dir]" in r.stdout
    report = json.loads(run_cli("check", "--no-config", "--format", "json", "--entry", str(dll), str(IMPORTS)).stdout)
    assert [(x["path"], x["reached"]) for x in report["roots"] if x["reached"]] == [(str(dll), True)]
    text = run_cli("check", "--no-config", "--entry", str(dll), str(IMPORTS)).stdout
    assert f"import roots: {dll} [dlopen];" in text
    why = json.loads(run_cli("why", "--format", "json", "--entry", str(dll), str(IMPORTS), "helper.dll").stdout)
    chains = {(c["root"], c["reached"]) for c in why["library_chains"]}
    assert chains == {(str(dll), True), (str(IMPORTS / "app.exe"), False)}


def test_entry_loads_every_slice_of_a_universal_file(run_cli) -> None:  # type: ignore[no-untyped-def]
    universal = SAMPLES / "macho/misc/universal.dylib"
    doc = json.loads(run_cli("tree", "--format", "json", "--entry", str(universal), str(universal)).stdout)
    assert sorted(d["machine"] for d in doc["dyld_roots"]) == ["arm64", "x86_64"]


def test_an_extension_module_no_entry_reaches_is_still_judged(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--entry`` naming one extension module: every other one is imported on its own and judged
    (``reached: false``).  It was loaded by nothing: another extension module's missing library
    went unsaid and ``check`` exited 0 (docs/ci.md's ``entries = ["torch/_C..."]`` left every other
    extension module of torch unchecked)."""
    import shutil

    entry = tmp_path / "_libconly.cpython-311-x86_64-linux-gnu.so"
    shutil.copy(SAMPLES / "ext_libc" / entry.name, entry)
    other = tmp_path / "_C.cpython-311-x86_64-linux-gnu.so"  # finds libshim.so in $ORIGIN/lib: not here
    shutil.copy(SAMPLES / "ext" / other.name, other)
    plain = run_cli("check", "--no-config", "--format", "json", str(tmp_path))
    r = run_cli("check", "--no-config", "--format", "json", "--entry", str(entry), str(tmp_path))
    assert r.exit_code == plain.exit_code == 1
    doc = json.loads(r.stdout)
    validate_report(doc)
    assert [(x["path"], x["kind"], x["reached"]) for x in doc["roots"]] == [
        (str(entry), "python-import", True),
        (str(other), "python-import", False),
    ]
    (missing,) = [f for f in doc["findings"] if f["rule"] == "library-not-found"]
    assert (missing["file"], missing["subject"]) == (str(other), "libshim.so")
    assert "when imported on its own" in missing["message"]
    text = run_cli("check", "--no-config", "--entry", str(entry), str(tmp_path)).stdout
    assert "1 other input no root reaches, each loaded alone\n" in text  # imported, not dlopened
