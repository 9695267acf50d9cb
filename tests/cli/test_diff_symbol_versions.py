"""``linkaudit diff``: a shared library's exports under symbol versioning, judged as glibc's ld.so
binds them. The verdict is checked against the host's dynamic linker itself: a program linked
against the old library is run with the new one in its place; an ABI break is exactly a program
that no longer runs. Libraries built by gcc with GNU ld version scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ..tools import needs
from .test_diff_regressions import _GCC, _so, _valid

SOURCE = "int foo(void){return 1;} int bar(void){return 2;}"
#: A library that also calls into glibc: versioned needs (DT_VERSYM) but no version definitions.
WITH_NEEDS = "#include <stdio.h>\n" + SOURCE + ' void hi(void){puts("x");}'
MAIN = "int foo(void); int bar(void); int main(void){return foo() + bar() == 3 ? 0 : 9;}"

#: name -> (C source, version script or None).
LIBS = {
    "v1": (SOURCE, "V1 { global: foo; bar; local: *; };"),
    "v2": (SOURCE, "V2 { global: foo; bar; local: *; };"),
    "plain": (SOURCE, None),  # no versioning at all: no .gnu.version
    "needs_only": (WITH_NEEDS, None),  # .gnu.version for glibc's versions, no version definitions
    "v1_bar_global": (SOURCE, "V1 { global: foo; };"),  # V1 kept, bar unversioned (VER_NDX_GLOBAL)
    "v2_bar_global": (SOURCE, "V2 { global: foo; };"),  # V1 gone, bar unversioned
    "v1_bar_v2": (SOURCE, "V1 { global: foo; local: *; };\nV2 { global: bar; } V1;"),  # bar@@V2 only
}

#: (old, new, exports the diff calls removed, (old, new) exports it calls rebound).
CASES = [
    ("v1", "v2", ["bar@V1", "foo@V1"], []),  # "version `V1' not found"
    ("v1", "plain", ["bar@V1", "foo@V1"], []),  # ld.so's check_match assertion: no .gnu.version at all
    ("v1", "needs_only", [], [("bar@V1", "bar"), ("foo@V1", "foo")]),  # "no version information available"
    ("v1", "v1_bar_global", [], [("bar@V1", "bar")]),  # V1 still defined: binds the unversioned bar
    ("v1", "v2_bar_global", ["bar@V1", "foo@V1"], []),  # V1 gone: version not found
    ("v1", "v1_bar_v2", ["bar@V1"], []),  # "undefined symbol: bar, version V1"
    ("plain", "v1", [], [("bar", "bar@V1"), ("foo", "foo@V1")]),  # an unversioned reference binds the default
    ("plain", "v1_bar_v2", [], [("bar", "bar@V2"), ("foo", "foo@V1")]),
]


def _lib(root: Path, name: str) -> Path:
    source, script = LIBS[name]
    flags = ["-Wl,-soname,libfoo.so.1"]
    if script is not None:
        (root / f"{name}.map").write_text(script + "\n")
        flags.append(f"-Wl,--version-script={root / f'{name}.map'}")
    return _so(root / name / "lib/libfoo.so.1", source, *flags)


def _runs(root: Path, old: str, new: str) -> bool:
    """Whether a program linked against ``old``'s libfoo.so.1 runs with ``new``'s (the host's ld.so)."""
    app = root / f"app_{old}"
    if not app.exists():
        (root / f"{old}/lib/libfoo.so").symlink_to("libfoo.so.1")
        (root / "main.c").write_text(MAIN)
        subprocess.run([_GCC, "-o", str(app), str(root / "main.c"), f"-L{root / old / 'lib'}", "-lfoo"], check=True)
    env = {"LD_LIBRARY_PATH": str(root / new / "lib"), "PATH": "/usr/bin:/bin"}
    return subprocess.run([str(app)], env=env, capture_output=True).returncode == 0


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("symver")
    for name in LIBS:
        _lib(root, name)
    return root


@needs("gcc")
@pytest.mark.parametrize(("old", "new", "removed", "rebound"), CASES)
def test_an_export_is_removed_exactly_when_the_dynamic_linker_no_longer_binds_it(
    run_cli, libs: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, removed: list[str], rebound: list
) -> None:  # type: ignore[no-untyped-def]
    """diff called ``bar@V1`` -> ``bar`` a removed export (an ABI break) even where ld.so binds the
    reference to the unversioned definition, and listed the ABS symbol GNU ld defines per version
    node (``V1@V1``) as an export. Removed: exactly what ld.so no longer binds (the program no longer
    runs, where the host can run it); a version node's symbol is no export."""
    monkeypatch.chdir(libs)
    r = run_cli("diff", "--no-config", "--format", "json", old, new)
    doc = _valid(r.stdout)
    (change,) = doc["changed"]
    assert change["exports_removed"] == removed
    assert [(x["old"], x["new"]) for x in change["exports_rebound"]] == rebound
    every = change["exports_added"] + change["exports_removed"] + [x[k] for x in change["exports_rebound"] for k in x]
    assert not any(e.split("@")[0] in ("V1", "V2") for e in every), every
    assert r.exit_code == (1 if removed or change["versions_raised"] else 0), r.stdout  # needs_only: GLIBC new
    text = run_cli("diff", "--no-config", old, new).stdout
    assert ("1 ABI break;" in text) == bool(removed) and "V1@V1" not in text and "V2@V2" not in text
    assert all(f"  ~ export {a} -> {b}" in text for a, b in rebound), text
    if sys.platform.startswith("linux") and sys.maxsize > 2**32:
        assert _runs(libs, old, new) == (not removed), (old, new)


def test_a_version_nodes_own_symbol_is_no_export() -> None:
    """The NVRTC stub's version node ``libnvrtc.so.12`` defines an ABS symbol of that name (GNU ld's
    symbol per version definition, st_value 0): not among its exports; its functions are."""
    from linkaudit import read
    from linkaudit.diff import exported

    stub = read(str(Path(__file__).resolve().parents[2] / "sample_bins/fixed/libnvrtc.so.12"))[0]
    assert any(s.name == "libnvrtc.so.12" for s in stub.symbols.iter_defined())  # the reader keeps it
    exports = exported(stub)
    assert "nvrtcCreateProgram@libnvrtc.so.12" in exports
    assert not any(e.startswith("libnvrtc.so.12") for e in exports), exports
