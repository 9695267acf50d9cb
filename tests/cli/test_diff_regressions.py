"""``linkaudit diff``: what counts as a regression (an ABI break, a library the new build no longer
finds), read under the project's configuration as ``check`` reads it; libraries built by gcc."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ..tools import find_tool, needs

_GCC = find_tool("gcc").path or "gcc"  # the tests that run it are marked needs("gcc")

FOO_BAR = "int foo(void){return 1;} int bar(void){return 2;}"
FOO = "int foo(void){return 1;}"


def _so(out: Path, source: str, *flags: str) -> Path:
    """Build ``out`` from C ``source`` with gcc as a shared object (``flags`` passed on)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    c = out.parent / f"{out.name}.c"
    c.write_text(source)
    subprocess.run([_GCC, "-shared", "-fPIC", "-o", str(out), str(c), *flags], check=True)
    c.unlink()
    return out


@needs("gcc")
def test_diff_reports_a_changed_soname_and_removed_exports(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """libfoo.so's SONAME libfoo.so.1 -> libfoo.so.2 and bar() no longer exported: both an ABI break
    (exit 1); an export added alone is none (exit 0)."""
    monkeypatch.chdir(tmp_path)
    _so(tmp_path / "o/libfoo.so", FOO_BAR, "-Wl,-soname,libfoo.so.1")
    _so(tmp_path / "n/libfoo.so", FOO, "-Wl,-soname,libfoo.so.2")
    r = run_cli("diff", "--format", "json", "o", "n")
    assert r.exit_code == 1, r.stdout
    (change,) = json.loads(r.stdout)["changed"]
    assert change["file"] == "libfoo.so"
    assert change["soname"] == {"old": "libfoo.so.1", "new": "libfoo.so.2"}
    assert change["exports_removed"] == ["bar"] and change["exports_added"] == []
    text = run_cli("diff", "o", "n").stdout
    assert "  ! SONAME libfoo.so.1 -> libfoo.so.2" in text and "  ! export removed bar" in text
    assert "1 ABI break;" in text
    # the other way round: bar() added, the SONAME still changed
    _so(tmp_path / "m/libfoo.so", FOO_BAR, "-Wl,-soname,libfoo.so.2")
    grown = run_cli("diff", "--format", "json", "n", "m")
    (change,) = json.loads(grown.stdout)["changed"]
    assert change["exports_added"] == ["bar"] and change["soname"] is None
    assert grown.exit_code == 0, grown.stdout


@needs("gcc")
def test_diff_counts_a_library_the_new_build_no_longer_finds(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The vendored libfoo.so removed while the extension module still needs it: the loader
    emulation runs on both builds, so the new library-not-found is a new error (exit 1)."""
    monkeypatch.chdir(tmp_path)
    _so(tmp_path / "p/libfoo.so", FOO_BAR, "-Wl,-soname,libfoo.so")
    ext = "m.cpython-311-x86_64-linux-gnu.so"
    source = "extern int foo(void); int PyInit_m(void){return foo();}"
    _so(tmp_path / "p" / ext, source, f"-L{tmp_path / 'p'}", "-lfoo", "-Wl,-rpath,$ORIGIN")
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / ext).write_bytes((tmp_path / "p" / ext).read_bytes())
    assert run_cli("check", "q").exit_code == 1
    r = run_cli("diff", "--format", "json", "p", "q")
    doc = json.loads(r.stdout)
    assert doc["files_removed"] == ["libfoo.so"]
    assert [(f["rule"], f["file"], f["subject"]) for f in doc["findings_new"]] == [
        ("library-not-found", ext, "libfoo.so")
    ]
    assert r.exit_code == 1
    assert run_cli("diff", "--no-loader", "p", "q").exit_code == 0  # the per-file rules alone see nothing new


CONFIG = """\
[severity]
rpath-leak = "warning"
[[suppress]]
rule = "rpath-leak"
file = "*/libfoo.so"
reason = "accepted: tracked in #42"
"""


@needs("gcc")
def test_diff_reads_the_configuration_as_check_does(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A build-tree RUNPATH (rpath-leak, an error) the project's linkaudit.toml suppresses: ``check``
    passes, and so does ``diff``; --no-config, --config FILE and --ignore as ``check``'s."""
    monkeypatch.chdir(tmp_path)
    _so(tmp_path / "a/libfoo.so", FOO)
    _so(tmp_path / "b/libfoo.so", FOO, "-Wl,-rpath,/home/ci/build/lib")
    (tmp_path / "linkaudit.toml").write_text(CONFIG)
    assert run_cli("check", "b").exit_code == 0
    r = run_cli("diff", "a", "b")
    assert r.exit_code == 0, r.stdout
    assert "[rpath-leak]" not in r.stdout and "0 findings new" in r.stdout
    bare = run_cli("diff", "--no-config", "a", "b")
    assert bare.exit_code == 1 and "+ [rpath-leak] b/libfoo.so: /home/ci/build/lib" in bare.stdout
    assert run_cli("diff", "--no-config", "--ignore", "rpath-leak", "a", "b").exit_code == 0
    (tmp_path / "linkaudit.toml").rename(tmp_path / "other.toml")
    assert run_cli("diff", "a", "b").exit_code == 1
    assert run_cli("diff", "--config", "other.toml", "a", "b").exit_code == 0
    bad = run_cli("diff", "--config", "other.toml", "--no-config", "a", "b")
    assert bad.exit_code == 2 and "choose one" in bad.stderr


@pytest.mark.parametrize("option", ["--config", "--no-config", "--ignore", "--profile", "--max-version", "--no-loader"])
def test_diff_takes_checks_configuration_options(run_cli, option: str) -> None:  # type: ignore[no-untyped-def]
    assert option in run_cli("diff", "--help").stdout
