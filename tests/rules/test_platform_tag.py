"""wheel-architecture: a binary inside a wheel whose machine the wheel's platform tag does not cover.

Wheels are made here with zipfile from the committed samples: ``macho/fixed/*.dylib`` are x86_64,
``macho/chained/*.dylib`` arm64, ``macho/misc/universal.dylib`` x86_64 + arm64,
``macho/misc/arm64_only.dylib`` a universal file of one arm64 slice, ``macho/misc/exe/bin/app`` an
x86_64 executable; ``pe/*/*.dll`` x64 and ``pe/machine/helper.dll`` x86; the ELF samples x86-64,
``arch/lib32le.so`` i386, ``arch/lib64be.so`` s390x.  An aarch64 ELF file and x86 / ARM64 PE files
are made by patching the machine field of a sample (e_machine, COFF Machine).
"""

from __future__ import annotations

import json
import struct
import zipfile
from pathlib import Path

import pytest

from linkaudit import AuditConfig, Finding, audit
from linkaudit.model import Format
from linkaudit.output import OutputFormat, renderer
from linkaudit.report import Severity
from linkaudit.rules.platform_tag import tag_machines

from ..output.schema import validate_report
from .helpers import SAMPLES

RULE = "wheel-architecture"


def _wheel(tmp_path: Path, platform: str, members: dict[str, bytes | str]) -> Path:
    """``pkg-1.0-cp311-cp311-PLATFORM.whl`` holding ``members`` (a sample path, or bytes)."""
    path = tmp_path / f"pkg-1.0-cp311-cp311-{platform}.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, src in members.items():
            zf.writestr(name, src if isinstance(src, bytes) else (SAMPLES / src).read_bytes())
        zf.writestr("pkg/__init__.py", "")
    return path


def _patched(sample: str, offset_of: str, value: int) -> bytes:
    data = bytearray((SAMPLES / sample).read_bytes())
    if offset_of == "elf":
        struct.pack_into("<H", data, 18, value)  # e_machine
    else:
        struct.pack_into("<H", data, struct.unpack_from("<I", data, 0x3C)[0] + 4, value)  # COFF Machine
    return bytes(data)


def _findings(wheel: Path) -> dict[str, Finding]:
    report = audit([str(wheel)], AuditConfig())
    return {f.file.split("!", 1)[1]: f for f in report.findings if f.rule == RULE}


# --- macOS ----------------------------------------------------------------------------------


def test_x86_64_dylib_in_an_arm64_wheel(tmp_path: Path) -> None:
    """The user's report: macosx_11_0_arm64 holding only x86_64 dylibs."""
    wheel = _wheel(
        tmp_path,
        "macosx_11_0_arm64",
        {
            "pkg/libnvrtc.12.dylib": "macho/fixed/libnvrtc.12.dylib",
            "pkg/libtorch_cuda.dylib": "macho/fixed/libtorch_cuda.dylib",
        },
    )
    found = _findings(wheel)
    assert sorted(found) == ["pkg/libnvrtc.12.dylib", "pkg/libtorch_cuda.dylib"]
    f = found["pkg/libnvrtc.12.dylib"]
    assert f.severity is Severity.ERROR and f.subject == "have x86_64, need arm64"
    assert "wheel's tag macosx_11_0_arm64 needs arm64" in f.message
    assert "mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64')" in f.message
    assert f.evidence == {
        "package": str(wheel),
        "tag": "macosx_11_0_arm64",
        "tags": ["macosx_11_0_arm64"],
        "format": "macho",
        "machines": ["x86_64"],
        "needs": ["arm64"],
        "missing": ["arm64"],
        "emulated_by": None,
    }


def test_arm64_and_universal_files_in_an_arm64_wheel_pass(tmp_path: Path) -> None:
    wheel = _wheel(
        tmp_path,
        "macosx_11_0_arm64",
        {
            "pkg/libnvrtc.12.dylib": "macho/chained/libnvrtc.12.dylib",
            "pkg/universal.dylib": "macho/misc/universal.dylib",
            "pkg/arm64_only.dylib": "macho/misc/arm64_only.dylib",
        },
    )
    assert _findings(wheel) == {}


def test_x86_64_wheel(tmp_path: Path) -> None:
    wheel = _wheel(
        tmp_path,
        "macosx_10_9_x86_64",
        {"pkg/ok.dylib": "macho/fixed/libnvrtc.12.dylib", "pkg/arm.dylib": "macho/chained/libnvrtc.12.dylib"},
    )
    found = _findings(wheel)
    assert list(found) == ["pkg/arm.dylib"]
    assert found["pkg/arm.dylib"].evidence["missing"] == ["x86_64"]


def test_universal2_needs_both_slices_in_every_file(tmp_path: Path) -> None:
    wheel = _wheel(
        tmp_path,
        "macosx_11_0_universal2",
        {
            "pkg/universal.dylib": "macho/misc/universal.dylib",
            "pkg/x86.dylib": "macho/fixed/libnvrtc.12.dylib",
            "pkg/arm.dylib": "macho/chained/libnvrtc.12.dylib",
            "pkg/arm64_only.dylib": "macho/misc/arm64_only.dylib",
        },
    )
    found = _findings(wheel)
    assert sorted(found) == ["pkg/arm.dylib", "pkg/arm64_only.dylib", "pkg/x86.dylib"]
    x86 = found["pkg/x86.dylib"]
    assert x86.evidence["needs"] == ["arm64", "x86_64"] and x86.evidence["missing"] == ["arm64"]
    assert "needs arm64 and x86_64 (a universal file): on arm64 dyld refuses it" in x86.message
    # A universal file of one slice: dyld's message for a fat file.
    fat = found["pkg/arm64_only.dylib"]
    assert fat.evidence["missing"] == ["x86_64"]
    assert "fat file, but missing compatible architecture (have (arm64), need (x86_64))" in fat.message
    assert fat.file.endswith("!pkg/arm64_only.dylib")  # the file, not one of its slices


def test_an_executable_rosetta_runs_is_a_warning(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, "macosx_11_0_arm64", {"pkg/bin/app": "macho/misc/exe/bin/app"})
    (f,) = _findings(wheel).values()
    assert f.severity is Severity.WARNING and f.evidence["emulated_by"] == "Rosetta 2"
    assert "only by translation (Rosetta 2)" in f.message


@pytest.mark.parametrize(
    ("tag", "needs"),
    [
        ("macosx_10_9_intel", {"i386", "x86_64"}),
        ("macosx_10_15_intel", {"x86_64"}),  # Catalina runs no 32-bit code
        ("macosx_10_9_universal", {"i386", "x86_64"}),  # PowerPC is gone after 10.6
        ("macosx_10_5_universal", {"i386", "x86_64", "ppc", "ppc64"}),
        ("macosx_10_6_fat64", {"x86_64"}),
        ("macosx_10_9_universal2", {"arm64", "x86_64"}),
        ("macosx_14_0_arm64", {"arm64"}),
        ("ios_13_0_arm64_iphoneos", {"arm64"}),
        ("manylinux_2_28_aarch64", {"aarch64"}),
        ("manylinux2014_ppc64le", {"ppc64le"}),
        ("manylinux1_i686", {"x86"}),
        ("musllinux_1_2_armv7l", {"arm"}),
        ("linux_s390x", {"s390x"}),
        ("android_24_arm64_v8a", {"aarch64"}),
        ("win_amd64", {"x86-64"}),
        ("win32", {"i386"}),
        ("win_arm64", {"aarch64"}),
    ],
)
def test_what_each_tag_needs(tag: str, needs: set[str]) -> None:
    got = tag_machines(tag)
    assert got is not None and got.machines == needs


@pytest.mark.parametrize("tag", ["any", "linux_mips", "macosx_11_0_sparc", "macosx_10_15_fat", "win_ia64"])
def test_tags_that_name_no_known_machine(tag: str) -> None:
    assert tag_machines(tag) is None


def test_intel_without_i386_on_an_old_tag(tmp_path: Path) -> None:
    old = _findings(_wheel(tmp_path, "macosx_10_9_intel", {"pkg/x.dylib": "macho/fixed/libnvrtc.12.dylib"}))
    assert old["pkg/x.dylib"].evidence["missing"] == ["i386"]
    new = tmp_path / "new"
    new.mkdir()
    assert _findings(_wheel(new, "macosx_10_15_intel", {"pkg/x.dylib": "macho/fixed/libnvrtc.12.dylib"})) == {}


# --- compressed tag sets ----------------------------------------------------------------------


def test_every_tag_of_a_compressed_tag_set_must_hold_for_each_file(tmp_path: Path) -> None:
    """pip installs a wheel wherever any tag of its compressed set matches: a thin x86_64 dylib in a
    macosx_10_9_x86_64.macosx_11_0_arm64 wheel fails on Apple silicon; a universal file passes."""
    members = {
        "pkg/x86.dylib": "macho/fixed/libnvrtc.12.dylib",
        "pkg/arm.dylib": "macho/chained/libnvrtc.12.dylib",
        "pkg/universal.dylib": "macho/misc/universal.dylib",
    }
    found = _findings(_wheel(tmp_path, "macosx_10_9_x86_64.macosx_11_0_arm64", members))
    assert {f.file.rsplit("!", 1)[-1]: f.evidence["tag"] for f in found.values()} == {
        "pkg/x86.dylib": "macosx_11_0_arm64",
        "pkg/arm.dylib": "macosx_10_9_x86_64",
    }
    # An x86 ELF file fits none of the tags: reported against one, naming the other tags it does not fit.
    linux = _wheel(
        tmp_path,
        "manylinux_2_17_x86_64.manylinux2014_x86_64.manylinux_2_17_aarch64",
        {"pkg/lib32le.so": "arch/lib32le.so"},
    )
    (f,) = _findings(linux).values()
    assert f.evidence["tags"] == ["manylinux_2_17_x86_64", "manylinux2014_x86_64", "manylinux_2_17_aarch64"]
    assert f.evidence["tag"] == "manylinux_2_17_x86_64"
    assert "nor does it fit the wheel's other tags manylinux_2_17_aarch64" in f.message
    assert "manylinux2014_x86_64)" not in f.message  # same machine: not named again


# --- manylinux / musllinux --------------------------------------------------------------------


def test_manylinux_aarch64_wheel(tmp_path: Path) -> None:
    wheel = _wheel(
        tmp_path,
        "manylinux_2_17_aarch64.manylinux2014_aarch64",
        {
            "pkg/x86.so": "fixed/libnvrtc.so.12",
            "pkg/arm.so": _patched("fixed/libnvrtc.so.12", "elf", 183),  # EM_AARCH64
            "pkg/be.so": "arch/lib64be.so",
            "pkg/i386.so": "arch/lib32le.so",
        },
    )
    found = _findings(wheel)
    assert sorted(found) == ["pkg/be.so", "pkg/i386.so", "pkg/x86.so"]
    x86 = found["pkg/x86.so"]
    assert x86.subject == "have x86-64, need aarch64" and x86.evidence["format"] == "elf"
    assert "cannot open shared object file: No such file or directory" in x86.message
    assert "ELF file data encoding not little-endian" in found["pkg/be.so"].message
    assert "wrong ELF class: ELFCLASS32" in found["pkg/i386.so"].message


def test_manylinux_x86_64_and_musllinux(tmp_path: Path) -> None:
    members: dict[str, bytes | str] = {"pkg/ok.so": "fixed/libnvrtc.so.12", "pkg/ext/_C.so": "ext/lib/libshim.so"}
    assert _findings(_wheel(tmp_path, "manylinux_2_28_x86_64", members)) == {}
    musl = tmp_path / "musl"
    musl.mkdir()
    found = _findings(_wheel(musl, "musllinux_1_2_s390x", members))
    assert sorted(found) == ["pkg/ext/_C.so", "pkg/ok.so"]
    assert "musl's loader cannot run it" in found["pkg/ok.so"].message


def test_static_archives_and_objects_are_skipped(tmp_path: Path) -> None:
    """Link-time only: a wheel's .a and .o are for building against, never loaded."""
    wheel = _wheel(
        tmp_path,
        "manylinux_2_17_aarch64",
        {"pkg/lib/liby.a": "objects/archive_two/liby.a", "pkg/lib/main.o": "objects/archive_two/main_x.o"},
    )
    assert _findings(wheel) == {}


def test_libraries_of_another_platform_beside_native_ones_are_a_note(tmp_path: Path) -> None:
    """A DLL or a dylib in a manylinux wheel that has files of its own platform too may be data (a
    fixture) or chosen at run time: no loader of the tag opens it — a note."""
    wheel = _wheel(
        tmp_path,
        "manylinux_2_17_x86_64",
        {
            "pkg/data/helper.dll": "pe/machine/helper.dll",
            "pkg/data/x.dylib": "macho/fixed/libnvrtc.12.dylib",
            "pkg/libnvrtc.so.12": "fixed/libnvrtc.so.12",
        },
    )
    found = _findings(wheel)
    assert sorted(found) == ["pkg/data/helper.dll", "pkg/data/x.dylib"]
    assert {f.severity for f in found.values()} == {Severity.NOTE}
    assert found["pkg/data/x.dylib"].subject == "have Mach-O x86_64, need ELF x86-64"


# --- binaries no system of the tag loads ------------------------------------------------------

_ELF_EXT = "pkg/_m.cpython-311-x86_64-linux-gnu.so"
#: one sample per format: an extension module, and a shared library.
_FOREIGN: dict[Format, dict[str, str]] = {
    Format.ELF: {_ELF_EXT: "ext/_C.cpython-311-x86_64-linux-gnu.so", "pkg/libnvrtc.so.12": "fixed/libnvrtc.so.12"},
    Format.MACHO: {"pkg/_C.cpython-311-darwin.so": "macho/misc/chain/torch/_C.so", "pkg/x.dylib": "macho/fixed/libnvrtc.12.dylib"},
    Format.PE: {"pkg/_ext.pyd": "pe/pyext/python312/_ext.pyd", "pkg/helper.dll": "pe/fixed/torch_cuda.dll"},
}  # fmt: skip


@pytest.mark.parametrize(
    ("fmt", "platform"),
    [
        (Format.ELF, "macosx_11_0_arm64"),
        (Format.ELF, "win_amd64"),
        (Format.MACHO, "manylinux_2_17_x86_64"),
        (Format.MACHO, "win_amd64"),
        (Format.PE, "manylinux_2_28_x86_64"),
        (Format.PE, "macosx_11_0_universal2"),
    ],
)
def test_a_wheel_whose_binaries_are_all_of_another_format_is_an_error(
    tmp_path: Path, fmt: Format, platform: str
) -> None:
    """The user's report: an ELF-only wheel tagged macOS or Windows gave no finding, while the same
    files in an aarch64 wheel were errors.  pip installs the wheel where every import of it fails."""
    found = _findings(_wheel(tmp_path, platform, dict(_FOREIGN[fmt])))
    assert sorted(found) == sorted(_FOREIGN[fmt])
    for f in found.values():
        assert f.severity is Severity.ERROR, f
        assert f.evidence["format"] == fmt.value and f.evidence["tag"] == platform
        assert "loads no" in f.message and platform in f.message


@pytest.mark.parametrize("fmt", list(_FOREIGN))
def test_an_extension_module_of_another_format_is_an_error_beside_native_files(tmp_path: Path, fmt: Format) -> None:
    """The import system loads an extension module by name: on the tag's system it never can."""
    native = (
        {"pkg/native.so": "fixed/libnvrtc.so.12"} if fmt is not Format.ELF else {"pkg/n.dll": "pe/fixed/torch_cuda.dll"}
    )
    platform = "manylinux_2_17_x86_64" if fmt is not Format.ELF else "win_amd64"
    found = _findings(_wheel(tmp_path, platform, {**_FOREIGN[fmt], **native}))
    ext = next(m for m in _FOREIGN[fmt] if m.endswith((".so", ".pyd")) and "lib" not in m)
    assert found[ext].severity is Severity.ERROR
    assert {f.severity for m, f in found.items() if m != ext} == {Severity.NOTE}


def _pure(tmp_path: Path, members: dict[str, str]) -> Path:
    path = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        for name, src in members.items():
            zf.write(SAMPLES / src, name)
    return path


@pytest.mark.parametrize("fmt", list(_FOREIGN))
def test_an_extension_module_in_a_pure_wheel_is_an_error(tmp_path: Path, fmt: Format) -> None:
    """A none-any wheel installs on every platform; its extension module loads on one."""
    found = _findings(_pure(tmp_path, _FOREIGN[fmt]))
    assert sorted(found) == sorted(_FOREIGN[fmt])
    severities = sorted(f.severity.value for f in found.values())
    assert severities == sorted([Severity.ERROR.value, Severity.NOTE.value])
    error = next(f for f in found.values() if f.severity is Severity.ERROR)
    assert "pure wheel" in error.message and error.evidence["tag"] == "any"


def test_launchers_in_a_pure_wheel_are_notes(tmp_path: Path) -> None:
    """setuptools' and distlib's cli-64.exe launchers (py3-none-any): picked on Windows at run time."""
    found = _findings(_pure(tmp_path, {"pkg/cli-64.exe": "pe/machine/app.exe"}))
    assert [f.severity for f in found.values()] == [Severity.NOTE]


def test_an_elf_file_of_no_cpu_is_not_judged(tmp_path: Path) -> None:
    cubin = _patched("fixed/libnvrtc.so.12", "elf", 190)  # EM_CUDA
    assert _findings(_wheel(tmp_path, "manylinux_2_28_x86_64", {"pkg/kernels.cubin.so": cubin})) == {}


# --- Windows ----------------------------------------------------------------------------------


def test_i386_dll_in_a_win_amd64_wheel(tmp_path: Path) -> None:
    wheel = _wheel(
        tmp_path,
        "win_amd64",
        {"pkg/helper.dll": "pe/machine/helper.dll", "pkg/torch_cuda.dll": "pe/fixed/torch_cuda.dll"},
    )
    found = _findings(wheel)
    assert list(found) == ["pkg/helper.dll"]
    f = found["pkg/helper.dll"]
    assert f.severity is Severity.ERROR and f.subject == "have x86, need x64"
    assert "%1 is not a valid Win32 application." in f.message
    assert f.evidence["machines"] == ["i386"] and f.evidence["format"] == "pe"


def test_win32_and_win_arm64(tmp_path: Path) -> None:
    members: dict[str, bytes | str] = {
        "pkg/helper.dll": "pe/machine/helper.dll",
        "pkg/arm.dll": _patched("pe/machine/helper.dll", "pe", 0xAA64),
    }
    assert sorted(_findings(_wheel(tmp_path, "win32", members))) == ["pkg/arm.dll"]
    arm = tmp_path / "arm"
    arm.mkdir()
    assert sorted(_findings(_wheel(arm, "win_arm64", members))) == ["pkg/helper.dll"]


def test_an_x86_executable_wow64_runs_is_a_warning(tmp_path: Path) -> None:
    exe32 = _patched("pe/machine/app.exe", "pe", 0x14C)
    found = _findings(_wheel(tmp_path, "win_amd64", {"pkg/bin/app.exe": exe32}))
    assert found["pkg/bin/app.exe"].severity is Severity.WARNING
    assert found["pkg/bin/app.exe"].evidence["emulated_by"] == "WOW64"


# --- outside wheels, and the report ----------------------------------------------------------


def test_plain_files_and_untagged_wheels_are_not_judged(tmp_path: Path) -> None:
    report = audit([str(SAMPLES / "macho/fixed"), str(SAMPLES / "pe/machine")], AuditConfig())
    assert [f for f in report.findings if f.rule == RULE] == []
    untagged = tmp_path / "pkg-1.0-py3-none-linux_mips.whl"
    with zipfile.ZipFile(untagged, "w") as zf:
        zf.write(SAMPLES / "arch/lib32le.so", "pkg/lib32le.so")
    assert _findings(untagged) == {}


def test_json_report_validates(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path, "macosx_11_0_universal2", {"pkg/x86.dylib": "macho/fixed/libnvrtc.12.dylib"})
    doc = json.loads(renderer(OutputFormat.JSON)(audit([str(wheel)], AuditConfig())))
    validate_report(doc)
    (f,) = [f for f in doc["findings"] if f["rule"] == RULE]
    assert f["evidence"]["tag"] == "macosx_11_0_universal2" and f["evidence"]["format"] == Format.MACHO.value


def test_json_report_of_a_foreign_and_a_pure_wheel_validates(tmp_path: Path) -> None:
    for wheel in (_pure(tmp_path, _FOREIGN[Format.PE]), _wheel(tmp_path, "win_amd64", dict(_FOREIGN[Format.ELF]))):
        doc = json.loads(renderer(OutputFormat.JSON)(audit([str(wheel)], AuditConfig())))
        validate_report(doc)
        assert {f["rule"] for f in doc["findings"]} >= {RULE}
