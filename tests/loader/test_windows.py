"""The Windows loader emulation (linkaudit/loader/windows.py) on the committed PE samples, copied into
layouts: PATH (``--path``) searched for an executable's imports after the application directory and
System32 but never for a ``.pyd``'s; a DLL of another machine skipped ("wrong-machine") and the
search going on, else ERROR_BAD_EXE_FORMAT.

No executable is committed among the samples: ``app.exe`` here is ``imports/app.dll`` with
``IMAGE_FILE_DLL`` cleared, and the i386 DLL is ``imports/helper.dll`` with its ``Machine`` set to
``IMAGE_FILE_MACHINE_I386`` — both real images, one header field apart."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, read
from linkaudit.loader.images import ImageLoad, ImageOutcome, ImageResolution
from linkaudit.loader.target import TargetEnvironment
from linkaudit.loader.windows import analyze_windows
from linkaudit.model import Kind

from ..tools import find_tool, needs

PE = Path(__file__).resolve().parents[2] / "sample_bins" / "pe"
APP = PE / "imports/app.dll"  # x86-64, imports helper.dll
HELPER = PE / "imports/helper.dll"  # x86-64, imports nothing
IMAGE_FILE_DLL = 0x2000
IMAGE_FILE_MACHINE_I386 = 0x14C


def _copy(src: Path, dst: Path, *, machine: int | None = None, exe: bool = False) -> Path:
    """``src`` written to ``dst``, its COFF header's Machine or Characteristics patched."""
    data = bytearray(src.read_bytes())
    pe = int.from_bytes(data[0x3C:0x40], "little")
    assert data[pe : pe + 4] == b"PE\0\0"
    if machine is not None:
        data[pe + 4 : pe + 6] = machine.to_bytes(2, "little")
    if exe:
        characteristics = int.from_bytes(data[pe + 22 : pe + 24], "little") & ~IMAGE_FILE_DLL
        data[pe + 22 : pe + 24] = characteristics.to_bytes(2, "little")
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(bytes(data))
    return dst


def _helper(image: Path, **options: object) -> tuple[ImageLoad, ImageResolution]:
    """The load of ``image`` and how its import of helper.dll resolved."""
    (root,) = read(str(image))
    (load,) = [ld for ld in analyze_windows([root], **options) if ld.root == str(image)]  # type: ignore[arg-type]
    return load, load.resolutions[(str(image), "helper.dll")]


def test_the_patched_samples_read_as_an_executable_and_an_i386_dll(tmp_path: Path) -> None:
    (exe,) = read(str(_copy(APP, tmp_path / "app.exe", exe=True)))
    (dll,) = read(str(_copy(HELPER, tmp_path / "helper.dll", machine=IMAGE_FILE_MACHINE_I386)))
    assert exe.kind is Kind.EXECUTABLE and [n.name for n in exe.needed] == ["helper.dll"]
    assert dll.machine == "i386" and dll.kind is Kind.SHARED_LIBRARY


def test_path_is_searched_for_an_executable_after_the_application_directory_and_system32(tmp_path: Path) -> None:
    exe = _copy(APP, tmp_path / "bin/app.exe", exe=True)
    helper = _copy(HELPER, tmp_path / "tools/helper.dll")
    load, res = _helper(exe)
    assert load.kind == "executable" and res.path is None
    assert [(a.path, a.source) for a in res.attempts] == [
        (str(tmp_path / "bin/helper.dll"), "application-directory"),
        ("System32\\helper.dll", "system"),
    ]
    _load, res = _helper(exe, path=[str(tmp_path / "nowhere"), str(tmp_path / "tools")])
    assert res.path == str(helper) and res.source == "PATH"
    assert [a.source for a in res.attempts] == ["application-directory", "system", "PATH", "PATH"]
    # os.add_dll_directory cannot reach an executable's imports: they load before its code runs
    _load, res = _helper(exe, dll_directories=[str(tmp_path / "tools")])
    assert res.path is None
    # the application directory comes first
    beside = _copy(HELPER, tmp_path / "bin/helper.dll")
    _load, res = _helper(exe, path=[str(tmp_path / "tools")])
    assert res.path == str(beside) and res.source == "application-directory"


def test_path_is_not_searched_for_a_pyd(tmp_path: Path) -> None:
    """LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR: no PATH."""
    pyd = _copy(APP, tmp_path / "pkg/_app.cp311-win_amd64.pyd")
    helper = _copy(HELPER, tmp_path / "tools/helper.dll")
    load, res = _helper(pyd, path=[str(tmp_path / "tools")])
    assert load.kind == "python-import" and res.path is None
    assert "PATH" not in {a.source for a in res.attempts}
    _load, res = _helper(pyd, dll_directories=[str(tmp_path / "tools")])
    assert res.path == str(helper) and res.source == "dll-directory"


def test_an_i386_dll_is_skipped_and_the_search_goes_on(tmp_path: Path) -> None:
    pyd = _copy(APP, tmp_path / "pkg/_app.cp311-win_amd64.pyd")
    wrong = _copy(HELPER, tmp_path / "pkg/helper.dll", machine=IMAGE_FILE_MACHINE_I386)
    load, res = _helper(pyd)
    assert load.machine == "x86-64" and res.path is None
    first = res.attempts[0]
    assert (first.path, first.outcome, first.detail) == (
        str(wrong),
        ImageOutcome.WRONG_MACHINE,
        "have i386, need x86-64",
    )
    assert first.machines == ("i386",)
    good = _copy(HELPER, tmp_path / "deps/helper.dll")
    load, res = _helper(pyd, dll_directories=[str(tmp_path / "deps")])
    assert res.path == str(good) and [a.outcome for a in res.attempts] == ["wrong-machine", "found"]
    assert load.objects == [str(pyd), str(good)]


def test_library_not_found_says_not_a_valid_win32_application(tmp_path: Path) -> None:
    pyd = _copy(APP, tmp_path / "pkg/_app.cp311-win_amd64.pyd")
    wrong = _copy(HELPER, tmp_path / "pkg/helper.dll", machine=IMAGE_FILE_MACHINE_I386)
    (finding,) = [f for f in audit([str(pyd)]).findings if f.rule == "library-not-found"]
    assert finding.message.startswith(
        "ImportError: DLL load failed while importing _app: %1 is not a valid Win32 application."
    )
    assert f"{wrong} is for another machine (have i386, need x86-64)" in finding.message
    assert finding.evidence["attempts"][0] == {
        "path": str(wrong),
        "source": "dll-load-dir",
        "owner": None,
        "outcome": "wrong-machine",
        "detail": "have i386, need x86-64",
    }
    wrong.unlink()
    (finding,) = [f for f in audit([str(pyd)]).findings if f.rule == "library-not-found"]
    assert "The specified module could not be found." in finding.message and "another machine" not in finding.message


def test_check_path_option_reaches_the_windows_loader(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    exe = _copy(APP, tmp_path / "bin/app.exe", exe=True)
    _copy(HELPER, tmp_path / "tools/helper.dll")

    def missing(*options: str) -> list[str]:
        r = run_cli("check", "--no-config", "--format", "json", *options, str(exe))
        return [f["subject"] for f in json.loads(r.stdout)["findings"] if f["rule"] == "library-not-found"]

    assert missing() == ["helper.dll"]
    assert missing("--path", str(tmp_path / "tools")) == []
    config = AuditConfig(target=TargetEnvironment(), windows_path=(str(tmp_path / "tools"),))
    assert [f for f in audit([str(exe)], config).findings if f.rule == "library-not-found"] == []


MINGW = find_tool("mingw-gcc").path


@pytest.mark.toolchain
@needs("mingw-gcc")
def test_a_real_mingw_executable_finds_its_dll_on_path(tmp_path: Path) -> None:
    """A real .exe (never run), linked by GNU ld straight against the committed helper.dll."""
    assert MINGW is not None
    (tmp_path / "main.c").write_text(
        "__declspec(dllimport) int present_fn(void);\nint mainCRTStartup(void) { return present_fn(); }\n"
    )
    exe = tmp_path / "bin/tool.exe"
    exe.parent.mkdir()
    subprocess.run(
        [MINGW, "-nostdlib", "-Wl,--no-insert-timestamp", "-Wl,-e,mainCRTStartup", "-o", str(exe),
         str(tmp_path / "main.c"), str(HELPER)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    helper = _copy(HELPER, tmp_path / "tools/helper.dll")
    load, res = _helper(exe)
    assert load.kind == "executable" and res.path is None
    _load, res = _helper(exe, path=[str(tmp_path / "tools")])
    assert res.path == str(helper) and res.source == "PATH"


def test_a_visual_cpp_redistributable_dll_not_shipped_is_a_warning(tmp_path: Path) -> None:
    """fixed/torch_cuda.dll with its import of nvrtc64_120_0.dll renamed (one string patched, NUL
    padded): MSVCP140.dll not found is the Visual C++ Redistributable's — a warning naming it; a
    DLL of no such list stays an error."""
    data = (PE / "fixed/torch_cuda.dll").read_bytes()
    old = b"nvrtc64_120_0.dll\0"
    assert data.count(old) == 1
    patched = tmp_path / "torch_cuda.pyd"
    for name, severity, redistributable in (("MSVCP140.dll", "warning", True), ("nvrtc64_99.dll", "error", False)):
        patched.write_bytes(data.replace(old, name.encode().ljust(len(old), b"\0"), 1))
        assert name in read(str(patched))[0].needed_names
        (f,) = [f for f in audit([str(patched)]).findings if f.rule == "library-not-found"]
        assert (f.subject, f.severity.value, f.evidence["redistributable"]) == (name, severity, redistributable)
        assert ("Visual C++ Redistributable" in f.message) is redistributable


def test_the_committed_executables_search_their_directory_and_skip_an_i386_dll() -> None:
    """imports/app.exe (an executable: IMAGE_FILE_DLL clear) finds helper.dll in its own directory
    and then lacks absent_fn; machine/app.exe finds only an i386 helper.dll: ERROR_BAD_EXE_FORMAT."""
    (exe,) = read(str(PE / "imports/app.exe"))
    assert (exe.kind, exe.machine, exe.needed_names) == (Kind.EXECUTABLE, "x86-64", ("helper.dll",))
    (i386,) = read(str(PE / "machine/helper.dll"))
    assert (i386.machine, i386.bits) == ("i386", 32)
    found = [(f.rule, f.file.rsplit("/", 1)[-1], f.subject) for f in audit([str(PE / "imports/app.exe")]).findings]
    assert found == [("unresolved-symbol", "app.exe", "absent_fn")]
    (f,) = audit([str(PE / "machine")]).findings
    assert (f.rule, f.subject) == ("library-not-found", "helper.dll")
    assert "The application was unable to start correctly (0xc000007b)" in f.message
    assert "(have i386, need x86-64)" in f.message and f.message.endswith("ship a build of helper.dll for x86-64")
    assert [(a["source"], a["outcome"]) for a in f.evidence["attempts"]] == [
        ("application-directory", "wrong-machine"),
        ("system", "missing"),
    ]


def test_an_executable_missing_a_dll_and_a_dll_shipped_elsewhere(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """An executable whose DLL is missing never starts (Windows' dialog, not LoadLibrary's words); a
    .pyd whose DLL ships elsewhere among the inputs is told which --dll-directory would find it; a
    --dll-directory that does not exist is a usage error, as os.add_dll_directory raises."""
    shutil.copy(PE / "imports/app.exe", tmp_path / "app.exe")
    (f,) = [f for f in audit([str(tmp_path / "app.exe")]).findings if f.rule == "library-not-found"]
    assert f.message.startswith("The code execution cannot proceed because helper.dll was not found")
    (tmp_path / "pkg/lib").mkdir(parents=True)
    shutil.copy(PE / "imports/app.dll", tmp_path / "pkg/app.pyd")
    shutil.copy(PE / "imports/helper.dll", tmp_path / "pkg/lib/helper.dll")
    (f,) = [f for f in audit([str(tmp_path / "pkg")]).findings if f.rule == "library-not-found"]
    assert f"--dll-directory {tmp_path / 'pkg/lib'}" in f.message
    fixed = audit([str(tmp_path / "pkg")], AuditConfig(dll_directories=(str(tmp_path / "pkg/lib"),))).findings
    assert [f for f in fixed if f.rule == "library-not-found"] == []
    r = run_cli("check", "--no-config", "--dll-directory", str(tmp_path / "nowhere"), str(tmp_path / "pkg"))
    assert r.exit_code == 2 and "not a directory" in r.stderr


@pytest.mark.parametrize(("name", "found"), [("pdh.dll", True), ("bcryptprimitives.dll", True), ("pdx.dll", False)])
def test_documented_system_dlls_are_on_every_windows(tmp_path: Path, name: str, found: bool) -> None:
    """An import of a DLL every Windows 10/11 has in System32 (pdh.dll; bcryptprimitives.dll, whose
    ProcessPrng every Rust extension module imports) is no missing library; an unknown name is.
    ``app.dll`` with its import of helper.dll renamed in place (the name's bytes, NUL-padded)."""
    data = (PE / "imports/app.dll").read_bytes()
    old = b"helper.dll\0"
    assert data.count(old) == 1
    padded = name.encode() + b"\0" * max(len(old) - len(name), 1)
    image = tmp_path / "app.dll"
    if len(padded) <= len(old):
        image.write_bytes(data.replace(old, padded.ljust(len(old), b"\0")))
    else:  # a longer name: written over the string's own bytes and the padding after it
        at = data.index(old)
        assert data[at + len(old) : at + len(padded)].strip(b"\0") == b""
        image.write_bytes(data[:at] + padded + data[at + len(padded) :])
    report = audit([str(image)])
    missing = [f.subject for f in report.findings if f.rule == "library-not-found"]
    assert (name not in missing) is found, missing
