"""Link lines as build systems write them: a Ninja build file's link edge (CMake's Ninja generator
on Windows: ``cmake -E vs_link_dll ... -- link.exe /nologo @$RSP_FILE`` with
``rspfile_content = $in_newline $LINK_PATH $LINK_LIBRARIES``), ``@file`` response files nested,
Windows-style words, ``/LIBPATH`` and the ``LIB`` environment variable."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from linkaudit.errors import ConfigError
from linkaudit.link.line import read_link_line
from linkaudit.link.ninja import expand, ninja_link_command

COFF = Path(__file__).resolve().parents[2] / "sample_bins" / "coff"
OBJ = "caffe2/CMakeFiles/torch_cuda.dir/torch_cuda.cpp.obj"

RULES = r"""# CMAKE generated file: DO NOT EDIT!
rule CXX_SHARED_LIBRARY_LINKER__torch_cuda_Release
  command = C:\PROGRA~1\CMake\bin\cmake.exe -E vs_link_dll --intdir=caffe2\CMakeFiles\torch_cuda.dir --rc=rc.exe --mt=mt.exe --manifests $MANIFESTS -- C:\PROGRA~1\MICROS~1\link.exe /nologo @$RSP_FILE  /out:$TARGET_FILE /implib:$TARGET_IMPLIB /pdb:$TARGET_PDB /dll /version:0.0 $LINK_FLAGS && cd .
  description = Linking CXX shared library $TARGET_FILE
  rspfile = $RSP_FILE
  rspfile_content = $in_newline $LINK_PATH $LINK_LIBRARIES
  restat = $RESTAT
"""

BUILD = r"""# CMAKE generated file: DO NOT EDIT!
ninja_required_version = 1.5
include CMakeFiles/rules.ninja
cmake_ninja_workdir = .

build caffe2\CMakeFiles\torch_cuda.dir\torch_cuda.cpp.obj: CXX_COMPILER__torch_cuda_Release ..\torch_cuda.cpp
  FLAGS = /DWIN32 /O2

build bin\torch_cuda.dll lib\torch_cuda.lib: CXX_SHARED_LIBRARY_LINKER__torch_cuda_Release $
    caffe2\CMakeFiles\torch_cuda.dir\torch_cuda.cpp.obj | lib\c10.lib || caffe2\gen
  LANGUAGE_COMPILE_FLAGS = /DWIN32
  LINK_FLAGS = /machine:x64 /INCREMENTAL:NO /noentry /nodefaultlib
  LINK_LIBRARIES = @LIB@  kernel32.lib
  LINK_PATH = /LIBPATH:deps
  OBJECT_DIR = caffe2\CMakeFiles\torch_cuda.dir
  TARGET_FILE = bin\torch_cuda.dll
  TARGET_IMPLIB = lib\torch_cuda.lib
  TARGET_PDB = bin\torch_cuda.pdb
  RSP_FILE = CMakeFiles\torch_cuda.rsp
"""


def _build_dir(tmp_path: Path, library: str) -> Path:
    """A CMake-like build tree: the object under caffe2/, ``library`` under deps/ (on /LIBPATH)."""
    build = tmp_path / "build"
    (build / "CMakeFiles").mkdir(parents=True)
    (build / "caffe2/CMakeFiles/torch_cuda.dir").mkdir(parents=True)
    (build / "deps").mkdir()
    shutil.copy(COFF / "torch_cuda.obj", build / OBJ)
    shutil.copy(COFF / library, build / "deps" / library)
    (build / "CMakeFiles/rules.ninja").write_text(RULES)
    (build / "build.ninja").write_text(BUILD.replace("@LIB@", library))
    return build


def test_the_ninja_edge_gives_link_exe_its_response_file(tmp_path: Path) -> None:
    build = _build_dir(tmp_path, "cuda.lib")
    command = ninja_link_command(str(build / "build.ninja"), r"bin\torch_cuda.dll")
    assert command.startswith(
        r"C:\PROGRA~1\MICROS~1\link.exe /nologo caffe2\CMakeFiles\torch_cuda.dir\torch_cuda.cpp.obj"
    )
    assert "/LIBPATH:deps cuda.lib  kernel32.lib  /out:bin\\torch_cuda.dll" in command
    assert "vs_link_dll" not in command and "&& cd ." not in command
    line = read_link_line(f"{build / 'build.ninja'}:bin\\torch_cuda.dll")
    assert [(e.path, e.option) for e in line] == [
        ("", f"libpath:{build / 'deps'}"),
        (str(build / OBJ), ""),
        (str(build / "deps/cuda.lib"), ""),
        ("kernel32.lib", ""),  # on no /LIBPATH: unknown
        ("", "nodefaultlib"),
    ]


def test_check_on_a_generated_ninja_file_predicts_the_seed_link(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    build = _build_dir(tmp_path, "cuda.lib")
    edge = f"{build / 'build.ninja'}:bin/torch_cuda.dll"  # forward slashes name the same output
    result = run_cli("check", "--no-config", "--link-line", edge, str(build))
    assert result.exit_code == 0, result.stdout  # kernel32.lib was not read: warnings, not errors
    assert result.stdout.count("[unresolved-external]") == 9
    assert (
        "LNK2019: unresolved external symbol nvrtcCreateProgram referenced in function torch_cuda_compile"
        in result.stdout
    )
    assert "unless a library that was not read defines it (kernel32.lib)" in result.stdout
    # kernel32.lib found through LIB (as link.exe looks there after /LIBPATH) is read: errors now.
    sdk = tmp_path / "sdk"
    sdk.mkdir()
    shutil.copy(COFF / "legacy32_k.lib", sdk / "kernel32.lib")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LIB", f"{tmp_path / 'nowhere'};{sdk}")
        result = run_cli("check", "--no-config", "--link-line", edge, str(build))
    assert result.exit_code == 1 and result.stdout.count("error   [unresolved-external]") == 9
    assert "cuda.lib, the GPU driver's import library" in result.stdout
    fixed = _build_dir(tmp_path / "fixed", "nvrtc.lib")
    edge = f"{fixed / 'build.ninja'}:bin/torch_cuda.dll"
    result = run_cli("check", "--no-config", "--link-line", edge, str(fixed))
    assert "[unresolved-external]" not in result.stdout


def test_response_files_nest_and_are_bounded(tmp_path: Path) -> None:
    (tmp_path / "inner.rsp").write_text(f'"{COFF / "nvrtc.lib"}" /INCLUDE:forced\n')
    (tmp_path / "outer.rsp").write_text(f"/dll {COFF / 'features.obj'} @inner.rsp\n")
    line = read_link_line(str(tmp_path / "outer.rsp"))
    assert [(e.path, e.option) for e in line] == [
        (str(COFF / "features.obj"), ""),
        (str(COFF / "nvrtc.lib"), ""),
        ("", "include:forced"),
    ]
    (tmp_path / "loop.rsp").write_text("@loop.rsp\n")
    with pytest.raises(ConfigError, match="nested more than 8 deep"):
        read_link_line(str(tmp_path / "loop.rsp"))


def test_ninja_errors_and_escapes(tmp_path: Path) -> None:
    assert expand("a$ b$$c$:d ${x}$y$\n", ({"x": "X", "y": "Y"},)) == "a b$c:d XY"
    build = _build_dir(tmp_path, "cuda.lib")
    with pytest.raises(ConfigError, match=r"no build edge produces bin/other\.dll \(3 outputs read\)"):
        ninja_link_command(str(build / "build.ninja"), "bin/other.dll")
    (build / "CMakeFiles/rules.ninja").write_text("")
    with pytest.raises(ConfigError, match="rule CXX_SHARED_LIBRARY_LINKER__torch_cuda_Release, which"):
        ninja_link_command(str(build / "build.ninja"), "bin/torch_cuda.dll")
    (build / "build.ninja").write_text("include build.ninja\n")
    with pytest.raises(ConfigError, match="nested more than 16 deep"):
        ninja_link_command(str(build / "build.ninja"), "x")
