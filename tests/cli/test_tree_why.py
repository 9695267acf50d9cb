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


def test_musl_binaries_are_not_given_glibcs_rules() -> None:
    (b,) = read(str(SAMPLES / "fixed/libtorch_cuda.so"))
    musl = replace(b, libc=Libc.MUSL, interpreter="/lib/ld-musl-x86_64.so.1")
    a = analyze([musl], TargetEnvironment())
    assert a.loads == [] and a.skipped and "musl" in a.skipped[0][1]
