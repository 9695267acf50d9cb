"""``why PATH LIBRARY`` by the name a library had before a repair tool renamed it
(docs/commands.md): pillow's ``libjpeg.so.62`` is auditwheel's ``libjpeg-25f93ad1.so.62.4.0``,
numpy's OpenBLAS ``libopenblas64_p-r0.3.23.dev.so`` its ``libopenblas64_p-r0-0cf96a72.3.23.dev.so``,
a DLL delvewheel's ``<name>-<32 hex>.dll``. Asked by those names, ``why`` said "not a library or
symbol of any load" and exited 1; now it answers for the renamed file and says which it took."""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest

from tests.loader.dagbuild import Lib, elf_bytes

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
JPEG = "libjpeg-25f93ad1.so.62.4.0"
BLAS = "libopenblas64_p-r0-0cf96a72.3.23.dev.so"
MANGLED = "helper-263139962577ecda4cd9469ca360a746.dll"


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


@pytest.fixture
def elf_wheel(tmp_path: Path) -> Path:
    """An auditwheel-repaired wheel: ``pkg/_ext`` needs ``pkg.libs``' renamed libjpeg and OpenBLAS."""
    ext = Lib("_ext", needed=(JPEG, BLAS), runpath=("$ORIGIN/../pkg.libs",))
    return _zip(
        tmp_path / "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl",
        {
            "pkg/_ext.cpython-311-x86_64-linux-gnu.so": elf_bytes(ext),
            f"pkg.libs/{JPEG}": elf_bytes(Lib("libjpeg.so", soname=JPEG)),
            f"pkg.libs/{BLAS}": elf_bytes(Lib("libopenblas.so", soname=BLAS)),
        },
    )


@pytest.mark.parametrize(
    ("asked", "taken"),
    [("libjpeg.so.62", JPEG), ("libjpeg.so.62.4.0", JPEG), ("libopenblas64_p-r0.3.23.dev.so", BLAS)],
)
def test_why_takes_the_name_before_auditwheel_renamed_it(run_cli, elf_wheel: Path, asked: str, taken: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(elf_wheel), asked)
    assert r.exit_code == 0, r.stdout
    lines = r.stdout.splitlines()
    assert lines[0] == f"{asked}: no library of that name; taken as {taken}, the copy a repair tool renamed"
    assert f"_ext.cpython-311-x86_64-linux-gnu.so → {taken} => " in lines[1]
    assert f"pkg.libs/{taken} [" in lines[1]
    doc = json.loads(run_cli("why", "--format", "json", str(elf_wheel), asked).stdout)
    assert doc["renamed"] == [taken] and doc["library_chains"][0]["chain"][-1] == taken


def test_why_by_the_renamed_name_or_an_unknown_one_is_as_before(run_cli, elf_wheel: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("why", str(elf_wheel), JPEG)
    assert r.exit_code == 0 and "taken as" not in r.stdout and f"→ {JPEG} => " in r.stdout
    assert json.loads(run_cli("why", "--format", "json", str(elf_wheel), JPEG).stdout)["renamed"] == []
    for other in ("libjpeg.so.8", "libpng16.so.16", "libjpeg"):  # another major version; no such library
        r = run_cli("why", str(elf_wheel), other)
        assert r.exit_code == 1 and "taken as" not in r.stdout, (other, r.stdout)


def _import_renamed(dll: bytes, old: str, new: str) -> bytes:
    """The PE ``dll`` importing ``new`` where it imported ``old`` (delvewheel's name mangling): the
    import descriptor's name pointed at ``new``, appended to the last section."""
    pefile = pytest.importorskip("pefile")
    pe = pefile.PE(data=dll, fast_load=True)
    pe.parse_data_directories(directories=[pefile.DIRECTORY_ENTRY["IMAGE_DIRECTORY_ENTRY_IMPORT"]])
    (entry,) = [e for e in pe.DIRECTORY_ENTRY_IMPORT if e.dll.decode().lower() == old]
    data, last = bytearray(dll), pe.sections[-1]
    assert len(data) == last.PointerToRawData + last.SizeOfRawData  # no overlay after it
    name_rva = last.VirtualAddress + last.SizeOfRawData
    data += new.encode() + b"\0"
    data += b"\0" * (-len(data) % 512)
    struct.pack_into("<I", data, entry.struct.get_field_absolute_offset("Name"), name_rva)
    grown = len(data) - last.PointerToRawData
    struct.pack_into("<II", data, last.get_file_offset() + 8, grown, last.VirtualAddress)  # VirtualSize
    struct.pack_into("<I", data, last.get_file_offset() + 16, grown)  # SizeOfRawData
    return bytes(data)


@pytest.mark.parametrize("imported", [MANGLED, MANGLED.upper()])
def test_why_takes_the_name_before_delvewheel_mangled_it(run_cli, tmp_path: Path, imported: str) -> None:  # type: ignore[no-untyped-def]
    """A win_amd64 wheel as delvewheel repairs one: ``pkg/_app.pyd`` imports ``helper-<32 hex>.dll``
    from ``pkg.libs``; asked for ``helper.dll`` (as Windows compares, without case: an import named
    in capitals is the same file, taken once)."""
    pe = SAMPLES / "pe/imports"
    wheel = _zip(
        tmp_path / "pkg-1.0-cp311-cp311-win_amd64.whl",
        {
            "pkg/__init__.py": b"",
            "pkg/_app.pyd": _import_renamed((pe / "app.dll").read_bytes(), "helper.dll", imported),
            f"pkg.libs/{MANGLED}": (pe / "helper.dll").read_bytes(),
            "pkg-1.0.dist-info/DELVEWHEEL": b"Version: 1.10.0\nArguments: ['repair', 'pkg.whl']\n",
        },
    )
    for asked in ("helper.dll", "HELPER.DLL"):
        r = run_cli("why", str(wheel), asked)
        assert r.exit_code == 0, r.stdout
        lines = r.stdout.splitlines()
        assert len(lines) == 2, r.stdout
        assert lines[0].startswith(f"{asked}: no library of that name; taken as ")
        assert lines[0].lower().endswith(f" {MANGLED}, the copy a repair tool renamed")
        assert f"_app.pyd → {imported} => " in lines[1] and f"pkg.libs/{MANGLED}" in lines[1]
