"""``linkaudit diff``: what counts as a regression (an ABI break, a library the new build no longer
finds), read under the project's configuration as ``check`` reads it; libraries built by gcc."""

from __future__ import annotations

import json
import subprocess
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from ..tools import find_tool, needs

_GCC = find_tool("gcc").path or "gcc"  # the tests that run it are marked needs("gcc")

FOO_BAR = "int foo(void){return 1;} int bar(void){return 2;}"
FOO = "int foo(void){return 1;}"


def _valid(stdout: str) -> dict[str, Any]:
    """``diff --format json``'s document, validated against the diff.schema.json the package ships."""
    doc = json.loads(stdout)
    schema = resources.files("linkaudit.output").joinpath("schema/diff.schema.json").read_text("utf-8")
    jsonschema.validate(doc, json.loads(schema))
    return doc  # type: ignore[no-any-return]


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
    (change,) = _valid(r.stdout)["changed"]
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


@needs("gcc")
def test_diff_json_findings_name_their_wheel(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two wheelhouses, pkg/libfoo.so in a manylinux and a musllinux wheel, a build-tree RUNPATH new
    in both: each new finding carries its file's pairing key, as changed[].file does, and its wheel;
    the document is valid under diff.schema.json."""
    from ..samplewheels import sample_write_wheel

    monkeypatch.chdir(tmp_path)
    write_wheel = sample_write_wheel()
    libs = {"o": _so(tmp_path / "a/libfoo.so", FOO), "n": _so(tmp_path / "b/libfoo.so", FOO, "-Wl,-rpath,/home/ci/lib")}
    for build, version in (("o", "1.0"), ("n", "1.1")):
        (tmp_path / build).mkdir()
        for platform in ("manylinux_2_17_x86_64", "musllinux_1_2_x86_64"):
            tag = f"cp311-abi3-{platform}"
            members = {"pkg/libfoo.so": libs[build].read_bytes()}
            metadata = f"Metadata-Version: 2.1\nName: pkg\nVersion: {version}\n"
            write_wheel(
                tmp_path / build / f"pkg-{version}-{tag}.whl", members, f"pkg-{version}.dist-info", metadata, [tag]
            )
    doc = _valid(run_cli("diff", "--no-config", "--format", "json", "o", "n").stdout)
    keys = sorted(c["file"] for c in doc["changed"])
    assert keys == ["abi3-manylinux_x86_64:pkg/libfoo.so", "abi3-musllinux_x86_64:pkg/libfoo.so"]
    leaks = sorted((f["key"], f["package"], f["file"]) for f in doc["findings_new"] if f["rule"] == "rpath-leak")
    assert leaks == [
        (keys[0], "n/pkg-1.1-cp311-abi3-manylinux_2_17_x86_64.whl", "pkg/libfoo.so"),
        (keys[1], "n/pkg-1.1-cp311-abi3-musllinux_1_2_x86_64.whl", "pkg/libfoo.so"),
    ]
