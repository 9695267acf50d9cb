"""python-dll-version: a Windows extension module importing the interpreter DLL of another Python
than its wheel tag or file-name suffix names, or an abi3 module importing ``python3X.dll`` instead of
``python3.dll``. On the committed real PE modules of ``sample_bins/pe/pyext/`` (``build_pe.sh``: one
``_ext.pyd`` per interpreter DLL), each packed and named as the case needs."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from linkaudit import read

from ..output.schema import validate_report

PYEXT = Path(__file__).resolve().parents[2] / "sample_bins/pe/pyext"
RULE = "python-dll-version"


def _module(dll: str) -> bytes:
    """The committed ``_ext.pyd`` that imports ``PyLong_FromLong`` from ``dll``."""
    return (PYEXT / dll.removesuffix(".dll") / "_ext.pyd").read_bytes()


def _wheel(directory: Path, tag: str, member: str, dll: str) -> Path:
    """``winext-1.0-TAG.whl`` holding ``winext/MEMBER`` (the module importing ``dll``) and a
    ``.dist-info`` whose ``WHEEL`` says the same tag."""
    path = directory / f"winext-1.0-{tag}.whl"
    files = {
        f"winext/{member}": _module(dll),
        "winext/__init__.py": b"",
        "winext-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: winext\nVersion: 1.0\n",
        "winext-1.0.dist-info/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n".encode(),
    }
    record = "".join(f"{name},,\n" for name in [*files, "winext-1.0.dist-info/RECORD"])
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in {**files, "winext-1.0.dist-info/RECORD": record.encode()}.items():
            zf.writestr(name, data)
    return path


def _found(run_cli, *paths: Path) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    r = run_cli("check", "--no-config", "--format", "json", *map(str, paths))
    doc = json.loads(r.stdout)
    validate_report(doc)
    return [f for f in doc["findings"] if f["rule"] == RULE]


def test_the_samples_import_the_dll_they_are_named_for() -> None:
    for dll in ("python312.dll", "python3.dll", "python313t.dll", "python312_d.dll"):
        (binary,) = read(str(PYEXT / dll.removesuffix(".dll") / "_ext.pyd"))
        assert binary.needed_names == (dll,)


@pytest.mark.parametrize(
    ("tag", "member", "dll", "promise"),
    [
        # the defect: a stale build for 3.12 in a cp311 wheel (cibuildwheel reusing build/)
        ("cp311-cp311-win_amd64", "_ext.cp311-win_amd64.pyd", "python312.dll", "CPython 3.11"),
        ("cp311-cp311-win_amd64", "_ext.pyd", "python312.dll", "CPython 3.11"),
        # a free-threaded build in a wheel for the default one, and the other way round
        ("cp313-cp313-win_amd64", "_ext.pyd", "python313t.dll", "CPython 3.13"),
        ("cp313-cp313t-win_amd64", "_ext.cp313t-win_amd64.pyd", "python312.dll", "CPython 3.13 (free-threaded)"),
        # a debug build (python312_d.dll) in a wheel for release Pythons
        ("cp312-cp312-win_amd64", "_ext.cp312-win_amd64.pyd", "python312_d.dll", "CPython 3.12"),
    ],
)
def test_a_module_for_another_python_than_its_tag(run_cli, tmp_path: Path, tag, member, dll, promise) -> None:  # type: ignore[no-untyped-def]
    whl = _wheel(tmp_path, tag, member, dll)
    (f,) = _found(run_cli, whl)
    assert f["severity"] == "error" and f["subject"] == dll
    assert f["file"] == f"{whl}!winext/{member}"
    assert f["evidence"]["dll"] == dll and f["evidence"]["promise"] == promise
    assert f["evidence"]["package"] == str(whl) and f["evidence"]["abi3"] is False
    assert dll in f["message"] and promise in f["message"] and "rebuild" in f["message"]


def test_an_abi3_module_importing_a_versioned_dll(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A cp312-abi3 wheel promises 3.12, 3.13, ...; 3.13 ships python313.dll and python3.dll only."""
    whl = _wheel(tmp_path, "cp312-abi3-win_amd64", "_ext.pyd", "python312.dll")
    (f,) = _found(run_cli, whl)
    assert f["severity"] == "error" and f["subject"] == "python312.dll"
    ev = f["evidence"]
    assert ev["abi3"] is True and ev["promise"] == "CPython 3.12 and later (abi3)"
    assert ev["expected"] == ["python3.dll"] and ev["source"] == "wheel tag cp312-abi3-win_amd64"
    assert "not version-independent" in f["message"] and "python3.dll" in f["message"]
    assert "Py_LIMITED_API" in f["message"] and "python3.lib" in f["message"]


@pytest.mark.parametrize(
    ("tag", "member", "dll"),
    [
        ("cp312-cp312-win_amd64", "_ext.cp312-win_amd64.pyd", "python312.dll"),
        ("cp312-cp312-win_amd64", "_ext.pyd", "python312.dll"),
        ("cp312-abi3-win_amd64", "_ext.pyd", "python3.dll"),
        ("cp311-cp311-win_amd64", "_ext.pyd", "python3.dll"),  # 3.11 ships python3.dll too
        ("cp313-cp313t-win_amd64", "_ext.cp313t-win_amd64.pyd", "python313t.dll"),
        ("cp312-cp312-win_amd64", "_ext_d.cp312-win_amd64.pyd", "python312_d.dll"),  # a debug module's name
    ],
)
def test_a_module_for_its_own_python_is_no_finding(run_cli, tmp_path: Path, tag, member, dll) -> None:  # type: ignore[no-untyped-def]
    assert _found(run_cli, _wheel(tmp_path, tag, member, dll)) == []


def test_the_file_name_suffix_outside_a_wheel(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """In a directory the suffix CPython's importer looks for (``.cp311-win_amd64.pyd``,
    Include/internal/pycore_importdl.h) names the Python; a plain ``_ext.pyd`` names none."""
    for sub, name in (("a", "_ext.cp311-win_amd64.pyd"), ("b", "_ext.cp312-win_amd64.pyd"), ("c", "_ext.pyd")):
        (tmp_path / sub).mkdir()
        shutil.copyfile(PYEXT / "python312/_ext.pyd", tmp_path / sub / name)
    (f,) = _found(run_cli, tmp_path)
    assert f["file"] == str(tmp_path / "a/_ext.cp311-win_amd64.pyd") and f["subject"] == "python312.dll"
    ev = f["evidence"]
    assert ev["source"] == "file name suffix .cp311-win_amd64.pyd" and ev["promise"] == "CPython 3.11"
    assert ev["expected"] == ["python311.dll", "python3.dll"] and ev["package"] is None


def test_an_installed_module_keeps_its_wheels_tag(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Installed, the tag its ``.dist-info/WHEEL`` keeps says which Python the site is for."""
    found = {}
    for tag in ("cp311-cp311-win_amd64", "cp312-abi3-win_amd64", "cp312-cp312-win_amd64"):
        site = tmp_path / tag / "Lib/site-packages"
        (site / "winext").mkdir(parents=True)
        shutil.copyfile(PYEXT / "python312/_ext.pyd", site / "winext/_ext.pyd")
        info = site / "winext-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: winext\nVersion: 1.0\n")
        (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nTag: {tag}\n")
        (info / "RECORD").write_text("winext/_ext.pyd,,\nwinext-1.0.dist-info/WHEEL,,\n")
        found[tag] = [(f["evidence"]["promise"], f["evidence"]["source"]) for f in _found(run_cli, site)]
    assert found == {
        "cp311-cp311-win_amd64": [("CPython 3.11", "installed WHEEL tag cp311-cp311-win_amd64")],
        "cp312-abi3-win_amd64": [("CPython 3.12 and later (abi3)", "installed WHEEL tag cp312-abi3-win_amd64")],
        "cp312-cp312-win_amd64": [],
    }


def test_a_tag_set_must_hold_for_each_python(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pip installs a wheel wherever one of its tags matches: ``cp311.cp312-cp311.cp312`` promises
    3.11 as well as 3.12; ``py3-none`` every CPython 3 (as ``abi3``, only ``python3.dll`` fits)."""
    (f,) = _found(run_cli, _wheel(tmp_path, "cp311.cp312-cp311.cp312-win_amd64", "_ext.pyd", "python312.dll"))
    assert f["evidence"]["source"] == "wheel tag cp311-cp311-win_amd64" and f["evidence"]["promise"] == "CPython 3.11"
    (g,) = _found(run_cli, _wheel(tmp_path, "py3-none-win_amd64", "_ext.pyd", "python312.dll"))
    assert g["evidence"]["promise"] == "CPython 3.0 and later" and g["evidence"]["expected"] == ["python3.dll"]
    assert g["evidence"]["abi3"] is False and "not version-independent" in g["message"]
    assert _found(run_cli, _wheel(tmp_path, "py3-none-win_amd64", "_ext.cp312-win_amd64.pyd", "python312.dll")) == []


def test_tags_that_name_no_cpython() -> None:
    from linkaudit.rules.python_dll import python_dll, tag_promise

    assert tag_promise("pp310", "pypy310_pp73", "t", False) is None
    assert tag_promise("cp311", "cp312", "t", False) is None  # no CPython matches it
    assert tag_promise("py3", "abi3", "t", False) is None
    floor = tag_promise("cp38", "abi3", "t", False)
    assert floor is not None and floor.low == (3, 8) and floor.later and floor.abi3
    debug = tag_promise("cp312", "cp312d", "t", False)
    assert debug is not None and debug.debug and debug.accepts(python_dll("python312_d.dll"))  # type: ignore[arg-type]
    assert python_dll("python.dll") is None and python_dll("libpython3.12.dll") is None
    assert python_dll("PYTHON3T_D.DLL") is not None


def test_tree_says_which_python_ships_the_dll(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``tree`` no longer draws ``python312.dll (Windows: present)`` as if any Python had it."""
    whl = _wheel(tmp_path, "cp311-cp311-win_amd64", "_ext.cp311-win_amd64.pyd", "python312.dll")
    assert "└── python312.dll (beside python.exe: CPython 3.12 only)" in run_cli("tree", str(whl)).stdout
    for dll, where in (("python3.dll", "every CPython 3"), ("python313t.dll", "free-threaded CPython 3.13 only")):
        (tmp_path / dll).mkdir()
        shutil.copyfile(PYEXT / dll.removesuffix(".dll") / "_ext.pyd", tmp_path / dll / "_ext.pyd")
        assert f"└── {dll} (beside python.exe: {where})" in run_cli("tree", str(tmp_path / dll)).stdout
