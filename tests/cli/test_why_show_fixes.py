"""``why`` for a symbol defined but used by nothing, ``PACKAGE!member`` paths, ``--output -``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.tools import find_tool, needs

NUMPY_200 = "numpy-2.0.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
WHEEL_DIRS = (Path("/opt/pypi-more/files"), Path("/tmp/fresh37"))


def _gcc(*args: str | Path) -> None:
    subprocess.run([find_tool("gcc").path or "gcc", *map(str, args)], check=True)


def _provider_layout(tmp_path: Path, second: bool = False, versioned: bool = False) -> Path:
    """An extension module needing libprov.so (``used``, ``unused_export``) and, with ``second``,
    libprov2.so (also ``unused_export``), both beside it ($ORIGIN); ``versioned``: libprov's
    symbols at version PROV_1."""
    (tmp_path / "lib.c").write_text("int used(void){return 1;} int unused_export(void){return 2;}\n")
    (tmp_path / "lib2.c").write_text("int unused_export(void){return 3;}\n")
    (tmp_path / "m.c").write_text("extern int used(void); int PyInit_m(void){return used();}\n")
    flags: list[str | Path] = ["-shared", "-fPIC"]
    if versioned:
        (tmp_path / "prov.map").write_text("PROV_1 { global: *; };\n")
        flags += ["-Wl,--version-script", tmp_path / "prov.map"]
    _gcc(*flags, "-o", tmp_path / "libprov.so", tmp_path / "lib.c", "-Wl,-soname,libprov.so")
    libs = ["-lprov"]
    if second:
        _gcc("-shared", "-fPIC", "-o", tmp_path / "libprov2.so", tmp_path / "lib2.c", "-Wl,-soname,libprov2.so")
        libs.append("-lprov2")
    ext = tmp_path / "m.cpython-311-x86_64-linux-gnu.so"
    _gcc("-shared", "-fPIC", "-o", ext, tmp_path / "m.c", "-Wl,--no-as-needed", f"-L{tmp_path}", *libs, "-Wl,-rpath,$ORIGIN")  # fmt: skip
    for src in [*tmp_path.glob("*.c"), *tmp_path.glob("*.map")]:
        src.unlink()
    return tmp_path


@needs("gcc")
def test_why_finds_a_symbol_defined_in_the_load_but_used_by_nothing(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = _provider_layout(tmp_path)
    r = run_cli("why", str(d), "unused_export")
    assert r.exit_code == 0, r.stdout + r.stderr
    assert "not a library or symbol" not in r.stdout
    assert f"unused_export defined in {d / 'libprov.so'}, used by nothing in this load" in r.stdout
    doc = json.loads(run_cli("why", "--format", "json", str(d), "unused_export").stdout)
    (entry,) = doc["unused_definitions"]
    assert entry["definitions"] == [{"path": str(d / "libprov.so"), "versions": [None], "binds_first": True}]
    assert doc["symbol_uses"] == []


@needs("gcc")
def test_why_names_the_version_of_an_unused_definition(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = _provider_layout(tmp_path, versioned=True)
    r = run_cli("why", str(d), "unused_export")
    assert r.exit_code == 0
    assert f"unused_export defined in {d / 'libprov.so'} (PROV_1), used by nothing in this load" in r.stdout
    assert run_cli("why", str(d), "unused_export@@PROV_1").exit_code == 0
    assert run_cli("why", str(d), "unused_export@PROV_9").exit_code == 1


@needs("gcc")
def test_why_lists_every_definer_of_an_unused_symbol_and_which_binds_first(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = _provider_layout(tmp_path, second=True)
    r = run_cli("why", str(d), "unused_export")
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "used by nothing in this load" in line)
    assert "defined in 2 objects" in lines[head]
    assert lines[head + 1] == f"    defined in {d / 'libprov.so'} (a lookup from the root binds here first)"
    assert lines[head + 2] == f"    defined in {d / 'libprov2.so'}"


@needs("gcc")
def test_why_of_a_used_symbol_is_unchanged(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    d = _provider_layout(tmp_path, second=True)
    r = run_cli("why", str(d), "used")
    assert r.exit_code == 0
    assert "uses used: binds to" in r.stdout and f"    defined in {d / 'libprov.so'} (unversioned)" in r.stdout
    assert "used by nothing" not in r.stdout
    assert "unused_definitions" in (doc := json.loads(run_cli("why", "--format", "json", str(d), "used").stdout))
    assert doc["unused_definitions"] == []


def test_why_finds_the_blas_symbol_numpy_exports_and_nothing_uses(run_cli) -> None:  # type: ignore[no-untyped-def]
    wheel = next((w / NUMPY_200 for w in WHEEL_DIRS if (w / NUMPY_200).is_file()), None)
    if wheel is None:
        pytest.skip(f"{NUMPY_200} not present")
    r = run_cli("why", str(wheel), "scipy_dgemm_64_")
    assert r.exit_code == 0
    assert "not a library or symbol" not in r.stdout
    assert "scipy_dgemm_64_ defined in " in r.stdout and "numpy.libs/libscipy_openblas64_-" in r.stdout
    assert "used by nothing in this load" in r.stdout


def test_why_finds_a_pe_export_nothing_imports(run_cli, samples: Path) -> None:  # type: ignore[no-untyped-def]
    d = samples / "pe" / "fixed"
    r = run_cli("why", str(d), "torch_cuda_compile")
    assert r.exit_code == 0
    assert f"torch_cuda_compile defined in {d / 'torch_cuda.dll'}, used by nothing in this load" in r.stdout


@pytest.mark.parametrize("option", ["-o", "--output"])
@pytest.mark.parametrize("fmt", ["sarif", "json", "jsonl", "text"])
def test_output_dash_is_standard_output(
    run_cli, samples: Path, tmp_path: Path, monkeypatch, option: str, fmt: str
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    lib = samples / "loader" / "versions"
    r = run_cli("check", "--format", fmt, option, "-", str(lib))
    assert r.exit_code in (0, 1), r.stderr
    assert not (tmp_path / "-").exists()
    assert r.stdout.strip()
    if fmt in ("sarif", "json"):
        json.loads(r.stdout)


def test_write_baseline_dash_goes_to_standard_output_beside_a_report_file(
    run_cli, samples: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    lib = samples / "loader" / "versions"
    r = run_cli("check", "--write-baseline", "-", "-o", "report.txt", str(lib))
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["schema"].startswith("linkaudit-baseline")
    assert (tmp_path / "report.txt").is_file() and not (tmp_path / "-").exists()
    assert "to standard output" in r.stderr
    for both in (("--write-baseline", "-"), ("--write-baseline", "-", "-o", "-")):
        r = run_cli("check", *both, str(lib))
        assert r.exit_code == 2 and "standard output carries the report" in r.stderr
        assert not (tmp_path / "-").exists()


def _wheel(tmp_path: Path) -> Path:
    """pkg-1.0-cp311-cp311-linux_x86_64.whl holding two extension modules, pkg/m… and pkg/n…, both
    needing pkg/libprov.so ($ORIGIN), built with gcc."""
    import zipfile

    build = _provider_layout(tmp_path / "build" if (tmp_path / "build").mkdir() is None else tmp_path)
    ext = build / "m.cpython-311-x86_64-linux-gnu.so"
    wheel = tmp_path / "pkg-1.0-cp311-cp311-linux_x86_64.whl"
    info = "pkg-1.0.dist-info"
    with zipfile.ZipFile(wheel, "w") as z:
        z.write(ext, "pkg/m.cpython-311-x86_64-linux-gnu.so")
        z.write(ext, "pkg/n.cpython-311-x86_64-linux-gnu.so")
        z.write(build / "libprov.so", "pkg/libprov.so")
        z.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
        z.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-linux_x86_64\n")
        z.writestr(f"{info}/RECORD", "")
    return wheel


@needs("gcc")
def test_show_reads_the_member_a_package_bang_member_path_names(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel(tmp_path)
    r = run_cli("show", f"{wheel}!pkg/m.cpython-311-x86_64-linux-gnu.so")
    assert r.exit_code == 0, r.stderr
    assert f"{wheel}!pkg/m.cpython-311-x86_64-linux-gnu.so\n" in r.stdout and "libprov.so" in r.stdout
    assert "n.cpython" not in r.stdout and f"{wheel}!pkg/libprov.so" not in r.stdout
    doc = json.loads(run_cli("show", "--format", "json", f"{wheel}!pkg/libprov.so").stdout)
    assert [b["path"] for b in doc["binaries"]] == [f"{wheel}!pkg/libprov.so"]
    r = run_cli("show", f"{wheel}!pkg/nosuch.so")
    assert r.exit_code == 2 and "no such file or directory" not in r.stderr
    assert "no such binary member in the package" in r.stderr and r.stdout == ""


@needs("gcc")
def test_why_and_tree_load_the_member_a_package_bang_member_path_names(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel(tmp_path)
    member = f"{wheel}!pkg/m.cpython-311-x86_64-linux-gnu.so"
    r = run_cli("why", member, "libprov.so")  # the member loaded as --entry PACKAGE!member would
    assert r.exit_code == 0, r.stderr
    chain = f"{member} [python-import]: m.cpython-311-x86_64-linux-gnu.so → libprov.so => {wheel}!pkg/libprov.so"
    assert r.stdout.startswith(chain)
    assert r.stdout == run_cli("why", "--entry", member, str(wheel), "libprov.so").stdout
    r = run_cli("tree", member)
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith(f"{member} [python-import]") and "n.cpython" not in r.stdout


@needs("gcc")
def test_why_gives_no_verdict_after_an_input_it_could_not_read(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel(tmp_path)
    for path in (f"{wheel}!pkg/nosuch.so", str(tmp_path / "nosuch.so")):
        r = run_cli("why", path, "libstdc++.so.6")
        assert r.exit_code == 2
        assert "not a library or symbol" not in r.stdout and r.stdout == ""
        assert path in r.stderr
