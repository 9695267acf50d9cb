"""The classic wheel checks auditwheel users expect: libpython-needed, linux-tag."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.loader.dagbuild import Lib, elf_bytes

from ..output.schema import validate_report


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def _doc(run_cli, *args: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    doc = json.loads(run_cli("check", "--no-config", "--format", "json", *args).stdout)
    validate_report(doc)
    return doc  # type: ignore[no-any-return]


def test_an_extension_module_needing_libpython(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    mod = tmp_path / "m.cpython-311-x86_64-linux-gnu.so"
    mod.write_bytes(elf_bytes(Lib("m", needed=("libpython3.11.so.1.0",))))
    lib = tmp_path / "libplugin.so"  # a library (not a module) may embed Python
    lib.write_bytes(elf_bytes(Lib("libplugin.so", soname="libplugin.so", needed=("libpython3.11.so.1.0",))))
    doc = _doc(run_cli, "--no-loader", str(mod), str(lib))
    found = [(f["file"], f["subject"]) for f in doc["findings"] if f["rule"] == "libpython-needed"]
    assert found == [(str(mod), "libpython3.11.so.1.0")]


def test_a_linux_tagged_wheel_cannot_be_uploaded(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    member = {"m/libx.so": elf_bytes(Lib("libx.so", soname="libx.so"))}
    bad = _wheel(tmp_path / "m-1.0-cp311-cp311-linux_x86_64.whl", member)
    good = _wheel(tmp_path / "n-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", member)
    doc = _doc(run_cli, str(bad), str(good))
    (f,) = [f for f in doc["findings"] if f["rule"] == "linux-tag"]
    assert f["file"] == f"{bad}!*.dist-info/WHEEL" and f["subject"] == "linux_x86_64" and f["severity"] == "error"
    assert f["evidence"]["tags"] == ["linux_x86_64"]


def test_abi3_modules_use_only_the_stable_abi_of_their_floor(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """PyType_FromSpec (3.2) is fine in a cp38-abi3 wheel; PyType_GetModuleByDef came in 3.13;
    _PyObject_GetDictPtr is no part of the Stable ABI. The same module in a cp313-abi3 wheel only
    breaks the Stable ABI; in a cp311-cp311 wheel it is no abi3 module at all."""
    imports = ("PyType_FromSpec", "PyType_GetModuleByDef", "_PyObject_GetDictPtr", "malloc")
    mod = elf_bytes(Lib("m", imports=imports))
    name = "m/_ext.abi3.so"
    evidence = {}
    for tag in ("cp38-abi3", "cp313-abi3", "cp311-cp311"):
        whl = _wheel(tmp_path / f"m-1.0-{tag}-manylinux_2_17_x86_64.whl", {name: mod})
        doc = _doc(run_cli, "--no-loader", str(whl))
        found = [f for f in doc["findings"] if f["rule"] == "abi3-symbol"]
        evidence[tag] = found[0]["evidence"] if found else None
    assert evidence["cp38-abi3"]["floor"] == "3.8" and evidence["cp38-abi3"]["not_in_abi"] == ["_PyObject_GetDictPtr"]
    assert evidence["cp38-abi3"]["too_new"] == [{"symbol": "PyType_GetModuleByDef", "added": "3.13"}]
    assert evidence["cp313-abi3"]["too_new"] == [] and evidence["cp313-abi3"]["not_in_abi"] == ["_PyObject_GetDictPtr"]
    # not abi3 by its tag, but named *.abi3.so: judged against the whole Stable ABI (floor 3.2)
    assert evidence["cp311-cp311"]["floor"] == "3.2"


def test_an_installed_abi3_module_keeps_its_wheels_floor(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Installed, an abi3 module's floor is the ``cp3X-abi3`` tag its ``.dist-info/WHEEL`` keeps
    (cryptography's ``cp311-abi3`` module in a site: PyBuffer_Release (3.11) is no error), not 3.2."""
    mod = elf_bytes(Lib("m", imports=("PyType_FromSpec", "PyType_GetModuleByDef", "malloc")))
    floors = {}
    for tag in ("cp38-abi3", "cp313-abi3"):
        site = tmp_path / tag / "site-packages"
        (site / "m").mkdir(parents=True)
        (site / "m/_ext.abi3.so").write_bytes(mod)
        info = site / "m-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: m\nVersion: 1.0\n")
        (info / "WHEEL").write_text(f"Wheel-Version: 1.0\nTag: {tag}-manylinux_2_17_x86_64\n")
        (info / "RECORD").write_text("m/_ext.abi3.so,,\nm-1.0.dist-info/WHEEL,,\n")
        doc = _doc(run_cli, "--no-loader", str(site))
        found = [f for f in doc["findings"] if f["rule"] == "abi3-symbol"]
        floors[tag] = found[0]["evidence"] if found else None
    assert floors["cp38-abi3"] is not None and floors["cp38-abi3"]["floor"] == "3.8"
    assert floors["cp38-abi3"]["too_new"] == [{"symbol": "PyType_GetModuleByDef", "added": "3.13"}]
    assert floors["cp313-abi3"] is None


def test_a_wheel_renamed_not_retagged(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The file name and the WHEEL file list different tags: a warning when the platforms differ
    (renamed linux_x86_64 -> manylinux2014: what cupy's wheels do), a note for a Python or ABI tag
    (torch's macOS cp311-none wheel says cp311-cp311 inside); one wheel per tag set, agreeing: none."""
    member = {"m/libx.so": elf_bytes(Lib("libx.so", soname="libx.so"))}

    def wheel(name: str, inner: str) -> Path:
        info = "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n" + "".join(f"Tag: {t}\n" for t in inner.split())
        meta = "Metadata-Version: 2.1\nName: m\nVersion: 1.0\n"
        files = {**member, "m-1.0.dist-info/WHEEL": info.encode(), "m-1.0.dist-info/METADATA": meta.encode()}
        return _wheel(tmp_path / name, files)

    renamed = wheel("m-1.0-cp311-cp311-manylinux2014_x86_64.whl", "cp311-cp311-linux_x86_64")
    abi = wheel("n-1.0-cp311-none-manylinux2014_x86_64.whl", "cp311-cp311-manylinux2014_x86_64")
    fine = wheel(
        "o-1.0-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "cp311-cp311-manylinux_2_17_x86_64 cp311-cp311-manylinux2014_x86_64",
    )
    found = {}
    for w in (renamed, abi, fine):
        for f in _doc(run_cli, "--no-loader", str(w))["findings"]:
            if f["rule"] == "wheel-tag-mismatch":
                found[Path(f["evidence"]["package"]).name] = (f["severity"], f["evidence"]["file_name_tags"])
    assert found == {
        renamed.name: ("warning", ["cp311-cp311-manylinux2014_x86_64"]),
        abi.name: ("note", ["cp311-none-manylinux2014_x86_64"]),
    }
