"""``undefined-reference``: the ELF half of the seed's link failure, and a linker differential — for
each line, gcc/ld fails exactly when we report an undefined-reference error, with the same names."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.link.line import read_link_line
from linkaudit.report import Severity

from ..tools import find_tool, needs

_GCC = find_tool("gcc").path or "gcc"  # the tests that run it are marked needs("gcc")

SOURCES = {
    # The seed's shape: the objects call NVRTC; the build names the driver (libcuda.so).
    "torch_cuda.c": "int nvrtcCreateProgram(void); int nvrtcCompileProgram(void); int helper(void);\n"
    "int torch_cuda_compile(void) { return nvrtcCreateProgram() + nvrtcCompileProgram() + helper(); }\n",
    "helper.c": "int helper(void) { return 1; }\n",
    "weak.c": "extern int maybe(void) __attribute__((weak)); int probe(void) { return maybe ? maybe() : 0; }\n",
    "entry.c": "int torch_cuda_compile(void); void _start(void) { torch_cuda_compile(); for (;;) {} }\n",
    "cuda.c": "int cuInit(int f) { return f; }\n",
    "nvrtc.c": "int nvrtcCreateProgram(void) { return 0; } int nvrtcCompileProgram(void) { return 0; }\n",
    "wrapper.c": "int nvrtcCreateProgram(void); int wrapper(void) { return nvrtcCreateProgram(); }\n",
}

#: line -> the symbols ld reports undefined (empty: the link succeeds).
LINES = {
    "-shared -nostdlib -Wl,-z,defs torch_cuda.o -L. -lhelper -lcuda": ["nvrtcCompileProgram", "nvrtcCreateProgram"],
    "-shared -nostdlib -Wl,-z,defs torch_cuda.o -L. -lhelper -lnvrtc": [],
    "-shared -nostdlib torch_cuda.o -L. -lcuda": [],  # a shared library may leave symbols undefined
    "-shared -nostdlib -Wl,--no-undefined torch_cuda.o libhelper.a weak.o -L. -lcuda": [
        "nvrtcCompileProgram", "nvrtcCreateProgram",
    ],
    "-nostdlib -static entry.o torch_cuda.o -L. -lhelper": ["nvrtcCompileProgram", "nvrtcCreateProgram"],
    "-nostdlib entry.o torch_cuda.o libhelper.a -L. -lnvrtc": [],
    # nvrtc's symbols reach the link only through libwrapper.so's DT_NEEDED: ld does not take them
    # ("DSO missing from command line"), and GNU ld 2.40 not with --copy-dt-needed-entries either.
    "-shared -nostdlib -Wl,-z,defs torch_cuda.o -L. -lhelper -lwrapper": ["nvrtcCompileProgram", "nvrtcCreateProgram"],
    "-shared -nostdlib -Wl,-z,defs -Wl,-rpath-link,. -Wl,--copy-dt-needed-entries torch_cuda.o -L. -lhelper "
    "-lwrapper": ["nvrtcCompileProgram", "nvrtcCreateProgram"],
}  # fmt: skip


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The objects, libhelper.a, and the shared libcuda.so / libnvrtc.so / libwrapper.so stubs."""
    ar = find_tool("ar").path
    if find_tool("gcc").path is None or ar is None:
        pytest.skip("gcc or ar not found (apt-get install gcc binutils)")
    work = tmp_path_factory.mktemp("elf-link")
    for name, text in SOURCES.items():
        (work / name).write_text(text)
        subprocess.run([_GCC, "-c", "-fPIC", name, "-o", name[:-2] + ".o"], cwd=work, check=True)
    subprocess.run([ar, "rcs", "libhelper.a", "helper.o"], cwd=work, check=True)
    for lib in ("cuda", "nvrtc"):
        subprocess.run([_GCC, "-shared", "-nostdlib", f"{lib}.o", "-o", f"lib{lib}.so"], cwd=work, check=True)
    subprocess.run(
        [_GCC, "-shared", "-nostdlib", "-Wl,--no-as-needed", "wrapper.o", "-L.", "-lnvrtc", "-o", "libwrapper.so"],
        cwd=work,
        check=True,
    )
    return work


def _ours(work: Path, line: str) -> list:  # type: ignore[type-arg]
    rsp = work / "link.rsp"
    rsp.write_text(line + "\n")
    inputs = [str(work / n) for n in ("torch_cuda.o", "libnvrtc.so")]
    report = audit(inputs, AuditConfig(target=None, link_line=tuple(read_link_line(str(rsp)))))
    return [f for f in report.findings if f.rule == "undefined-reference"]


@needs("gcc")
@pytest.mark.parametrize("line", sorted(LINES))
def test_ld_agrees(work: Path, line: str) -> None:
    ours = _ours(work, line)
    assert all(f.severity is Severity.ERROR for f in ours)  # -nostdlib: every library was read
    proc = subprocess.run(
        [_GCC, *line.split(), "-o", str(work / "out")], cwd=work, capture_output=True, text=True, check=False
    )
    theirs = sorted(set(re.findall(r"undefined reference to `([^']+)'", proc.stderr)))
    assert (proc.returncode != 0) == bool(theirs), proc.stderr
    assert sorted(f.subject for f in ours) == theirs == LINES[line], proc.stderr


@needs("gcc")
def test_the_seed_in_ld_words_and_unknown_libraries(work: Path) -> None:
    (create,) = [f for f in _ours(work, sorted(LINES)[0]) if f.subject == "nvrtcCreateProgram"]
    assert create.message.startswith(
        "torch_cuda.o: undefined reference to `nvrtcCreateProgram'; the link fails; expected from libnvrtc.so"
    )
    assert create.evidence["lld"] == "undefined symbol: nvrtcCreateProgram (referenced by torch_cuda.o)"
    # The driver's default libraries, and a -l found in no -L directory, are unknown: warnings.
    found = _ours(work, "-shared -Wl,-z,defs torch_cuda.o -L. -lhelper -lcudart")
    assert {f.severity for f in found} == {Severity.WARNING}
    assert found[0].evidence["unknown_libraries"][0] == "-lcudart"
