"""``unresolved-external``: the Windows link of the COFF samples (sample_bins/coff/, built by
sample_bins/build_coff.sh) predicted from a link.exe / lld-link response file, and checked against
lld-link itself where it is installed."""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.formats import read_path
from linkaudit.link.coff import (
    ANY,
    ASSOCIATIVE,
    EXACT_MATCH,
    LARGEST,
    NODUPLICATES,
    SAME_SIZE,
    CoffLink,
    Linker,
    clash,
    duplicates,
    link_coff,
)
from linkaudit.link.line import LinkInput, read_link_line
from linkaudit.model import Binary, ComdatSection
from linkaudit.report import Severity

from ..tools import find_tool, needs

COFF = Path(__file__).resolve().parents[2] / "sample_bins" / "coff"
NVRTC = sorted(
    f"nvrtc{n}"
    for n in (
        "AddNameExpression", "CompileProgram", "CreateProgram", "DestroyProgram", "GetLoweredName",
        "GetProgramLog", "GetProgramLogSize", "GetPTX", "GetPTXSize",
    )
)  # fmt: skip
SEED = sorted(n if n != "nvrtcGetLoweredName" else "__imp_" + n for n in NVRTC)  # one call is dllimport

#: name -> (link line after the common options, the unresolved externals expected).
CASES = {
    "broken": ("torch_cuda.obj cuda.lib", SEED),
    "fixed": ("torch_cuda.obj nvrtc.lib", []),
    "fixed-arm64": ("/machine:arm64 torch_cuda_arm64.obj nvrtc_arm64.lib", []),
    "driver-used-right": ("driver_use.obj cuda.lib", []),
    "both": ("torch_cuda.obj driver_use.obj cuda.lib nvrtc.lib", []),
    # /INCLUDE of the directive -> LNK2001; undefined_fn -> LNK2019; maybe_hook: /ALTERNATENAME;
    # weak_ref: a weak external with its alternate; common_counter: a common symbol.
    "features": ("features.obj nvrtc.lib", ["forced_symbol", "undefined_fn"]),
    "x86-stdcall": ("/machine:x86 decorated.obj legacy32.lib", ["_imported_std@8"]),
    # Duplicates (LNK2005) by COMDAT selection; the search-order case (see order_main.c).
    "nodup-twice": ("nodup.obj nodup_copy.obj", []),
    "plain-twice": ("nodup_plain.obj nodup_plain_copy.obj", []),
    "comdat-and-plain": ("nodup.obj nodup_plain.obj", []),
    "selectany-twice": ("features.obj any_again.obj nvrtc.lib", ["forced_symbol", "undefined_fn"]),
    "order": ("order_main.obj order1.lib order2.lib order3.lib", []),
    "gnu-import-library": ("torch_cuda.obj nvrtc.dll.a", []),
}
#: name -> the symbols defined twice under lld-link's order (the rest: none).
DUPLICATES = {
    "nodup-twice": ["nodup_one", "nodup_two"],
    "plain-twice": ["nodup_one", "nodup_two"],
    "comdat-and-plain": ["nodup_one", "nodup_two"],
    "order": ["dup_sym"],
}
#: name -> (duplicates, provider of the symbol) under link.exe's order where it parts from lld-link's:
#: link.exe searches order2.lib's member's reference in order2.lib, then order3.lib (Microsoft "LINK
#: input files"); lld-link takes order1.lib, the first that defines shared_fn.
LINK_EXE = {"order": ([], ("shared_fn", "order3.lib"))}


def _line(tmp_path: Path, name: str) -> Path:
    rest, _expected = CASES[name]
    words = " ".join(w if w.startswith("/") else str(COFF / w) for w in rest.split())
    rsp = tmp_path / f"{name}.rsp"
    rsp.write_text(f"/nologo /dll /noentry /nodefaultlib /out:{tmp_path / 'out.dll'} {words}\n")
    return rsp


def _link(rsp: Path, linker: Linker = Linker.LLD_LINK) -> CoffLink:
    line = read_link_line(str(rsp))
    return link_coff([b for e in line if e.path for b in read_path(e.path)], line, linker)


def _predicted(rsp: Path, linker: Linker = Linker.LLD_LINK) -> tuple[list[str], list[str]]:
    """(unresolved, defined twice), sorted."""
    link = _link(rsp, linker)
    return sorted(link.unresolved), sorted(d.name for d in link.duplicates)


@pytest.mark.parametrize("name", sorted(CASES))
def test_prediction(tmp_path: Path, name: str) -> None:
    rsp = _line(tmp_path, name)
    assert _predicted(rsp) == (CASES[name][1], DUPLICATES.get(name, []))
    duplicates, (symbol, provider) = LINK_EXE.get(name, (DUPLICATES.get(name, []), (None, None)))
    link = _link(rsp, Linker.LINK_EXE)
    assert (sorted(link.unresolved), sorted(d.name for d in link.duplicates)) == (CASES[name][1], duplicates)
    if symbol is not None:
        assert os.path.basename(link.provider[symbol]) == provider
        assert os.path.basename(_link(rsp).provider[symbol]) != provider  # the divergence, listed


def test_the_seed_case_names_nvrtc_lib_and_the_driver_library(tmp_path: Path) -> None:
    rsp = _line(tmp_path, "broken")
    report = audit([str(COFF / "torch_cuda.obj")], AuditConfig(link_line=tuple(read_link_line(str(rsp)))))
    found = {f.subject: f for f in report.findings if f.rule == "unresolved-external"}
    assert sorted(found) == SEED
    create = found["nvrtcCreateProgram"]
    assert create.severity is Severity.ERROR
    assert create.message.startswith(
        "torch_cuda.obj : error LNK2019: unresolved external symbol nvrtcCreateProgram referenced in function "
        "torch_cuda_compile; the link fails with LNK1120: 9 unresolved externals; expected from nvrtc.lib"
    )
    assert "names cuda.lib, the GPU driver's import library" in create.message
    assert create.evidence["driver_libraries"] == [str(COFF / "cuda.lib")]
    assert found["__imp_nvrtcGetLoweredName"].evidence["expected_provider"].startswith("nvrtc.lib")
    fixed = audit(
        [str(COFF / "torch_cuda.obj")], AuditConfig(link_line=tuple(read_link_line(str(_line(tmp_path, "fixed")))))
    )
    assert [f for f in fixed.findings if f.rule == "unresolved-external"] == []


def test_the_import_library_says_which_dll(tmp_path: Path) -> None:
    line = read_link_line(str(_line(tmp_path, "both")))
    link = link_coff([b for e in line if e.path for b in read_path(e.path)], line)
    assert link.dll["nvrtcCreateProgram"] == "nvrtc64_120_0.dll"
    assert link.dll["__imp_nvrtcGetLoweredName"] == "nvrtc64_120_0.dll"
    assert link.dll["__imp_cuInit"] == "nvcuda.dll"
    assert link.unknown == ()
    # mingw's long import format says the same through _head_ and the tail's .idata$7.
    gnu = _link(_line(tmp_path, "gnu-import-library"))
    assert gnu.dll["nvrtcCreateProgram"] == gnu.dll["__imp_nvrtcGetLoweredName"] == "nvrtc64_120_0.dll"
    assert gnu.unresolved == {} and os.path.basename(gnu.provider["nvrtcCreateProgram"]) == "nvrtc.dll.a"


def test_lnk2001_for_include_and_unknown_libraries_make_a_warning(tmp_path: Path) -> None:
    rsp = tmp_path / "unknown.rsp"
    rsp.write_text(f"/dll {COFF / 'features.obj'} {COFF / 'nvrtc.lib'} kernel32.lib /LIBPATH:{tmp_path}\n")
    report = audit([str(COFF / "features.obj")], AuditConfig(link_line=tuple(read_link_line(str(rsp)))))
    found = {f.subject: f for f in report.findings if f.rule == "unresolved-external"}
    assert sorted(found) == ["forced_symbol", "undefined_fn"]
    assert found["forced_symbol"].message.startswith(
        "features.obj : error LNK2001: unresolved external symbol forced_symbol"
    )
    assert found["undefined_fn"].evidence["link_exe"] == [
        "features.obj : error LNK2019: unresolved external symbol undefined_fn referenced in function features"
    ]
    assert all(f.severity is Severity.WARNING for f in found.values())
    assert found["undefined_fn"].evidence["unknown_libraries"] == ["kernel32.lib"]
    assert not [f for f in report.findings if f.rule == "unreadable-input"]  # unknown, not unreadable


def test_defaultlib_directives_and_nodefaultlib(tmp_path: Path) -> None:
    # features.obj says /DEFAULTLIB:nvrtc.lib: the library is searched without being on the line...
    rsp = tmp_path / "directive.rsp"
    rsp.write_text(f"/dll {COFF / 'features.obj'} {COFF / 'torch_cuda.obj'} /LIBPATH:{COFF}\n")
    line = read_link_line(str(rsp))
    binaries = [*read_path(str(COFF / "features.obj")), *read_path(str(COFF / "torch_cuda.obj"))]
    binaries += read_path(str(COFF / "nvrtc.lib"))
    assert sorted(link_coff(binaries, line).unresolved) == ["forced_symbol", "undefined_fn"]
    # ...unless /NODEFAULTLIB drops it (all of them, or it by name).
    for option in ("/NODEFAULTLIB", "/NODEFAULTLIB:nvrtc"):
        rsp.write_text(f"/dll {option} {COFF / 'features.obj'} {COFF / 'torch_cuda.obj'}\n")
        unresolved = link_coff(binaries, read_link_line(str(rsp))).unresolved
        assert sorted(unresolved) == sorted(["forced_symbol", "undefined_fn", *SEED]), option


@needs("lld-link")
@pytest.mark.parametrize("name", sorted(CASES))
def test_lld_link_agrees(tmp_path: Path, name: str) -> None:
    tool = find_tool("lld-link").path
    assert tool is not None
    rsp = _line(tmp_path, name)
    run = subprocess.run([tool, f"@{rsp}"], capture_output=True, text=True, cwd=tmp_path)
    # lld-link names an __imp_ reference "__declspec(dllimport) NAME".
    found = re.findall(r"undefined symbol: (__declspec\(dllimport\) )?(\S+)", run.stderr)
    theirs = sorted({("__imp_" if imp else "") + name for imp, name in found})
    twice = sorted(set(re.findall(r"duplicate symbol: (\S+)", run.stderr)))
    assert (run.returncode != 0) == bool(theirs or twice), run.stderr
    assert _predicted(rsp) == (theirs, twice)


def test_msvc_link_line_options(tmp_path: Path) -> None:
    rsp = tmp_path / "link.rsp"
    rsp.write_text(
        f"/nologo /DLL /OUT:x.dll /LIBPATH:{COFF} torch_cuda.obj.missing {COFF / 'torch_cuda.obj'} cuda.lib "
        "kernel32.lib /NODEFAULTLIB:libcmt /NODEFAULTLIB /INCLUDE:foo -defaultlib:x.lib /ALTERNATENAME:a=b\n"
    )
    line = read_link_line(str(rsp))
    assert [(e.path, e.option) for e in line] == [
        ("", f"libpath:{COFF}"),
        (str(COFF / "torch_cuda.obj"), ""),
        (str(COFF / "cuda.lib"), ""),  # found in the /LIBPATH directory
        ("kernel32.lib", ""),  # found nowhere: kept as named, an unknown library
        ("", "nodefaultlib:libcmt"),
        ("", "nodefaultlib"),
        ("", "include:foo"),
        ("", "defaultlib:x.lib"),
        ("", "alternatename:a=b"),
    ]


def test_lnk2005_in_link_exe_words_and_lld_links(tmp_path: Path) -> None:
    rsp = _line(tmp_path, "nodup-twice")
    line = tuple(read_link_line(str(rsp)))
    report = audit([str(COFF / "nodup.obj"), str(COFF / "nodup_copy.obj")], AuditConfig(link_line=line))
    found = {f.subject: f for f in report.findings if f.rule == "duplicate-definition"}
    assert sorted(found) == ["nodup_one", "nodup_two"]
    one = found["nodup_one"]
    assert one.severity is Severity.ERROR and one.file.endswith("nodup_copy.obj")
    assert one.message == (
        "nodup_copy.obj : error LNK2005: nodup_one already defined in nodup.obj (NODUPLICATES COMDAT); "
        "the link fails with LNK1169: one or more multiply defined symbols found"
    )
    assert [d["section"] for d in one.evidence["definitions"]] == [".text", ".text"]
    # The search-order case: clean under link.exe's order, lld-link's pulls order1.lib's dup_sym.
    order = [str(COFF / n) for n in ("order_main.obj", "order1.lib", "order2.lib", "order3.lib")]
    line = tuple(read_link_line(str(_line(tmp_path, "order"))))
    assert not [f for f in audit(order, AuditConfig(link_line=line)).findings if f.severity is Severity.ERROR]
    lld = (*line, LinkInput("", option="linker:lld-link"))
    (dup,) = [f for f in audit(order, AuditConfig(link_line=lld)).findings if f.rule == "duplicate-definition"]
    assert dup.message.startswith(
        "duplicate symbol: dup_sym (defined at order_main.obj and at order1.lib(order_p1.obj))"
    )
    assert dup.evidence["cause"] == {"linker": "lld-link", "reason": "defined twice"}


@pytest.mark.parametrize(
    ("first", "second", "why"),
    [
        ((ANY, 4, 1), (ANY, 8, 2), None),
        ((LARGEST, 4, 1), (LARGEST, 8, 2), None),
        ((ANY, 4, 1), (LARGEST, 8, 2), None),
        ((ANY, 4, 1), (EXACT_MATCH, 4, 9), None),
        ((NODUPLICATES, 4, 1), (NODUPLICATES, 4, 1), "NODUPLICATES COMDAT"),
        ((SAME_SIZE, 4, 1), (SAME_SIZE, 4, 2), None),
        ((SAME_SIZE, 4, 1), (SAME_SIZE, 8, 1), "SAME_SIZE COMDAT of 4 and 8 bytes"),
        ((EXACT_MATCH, 4, 1), (EXACT_MATCH, 4, 1), None),
        ((EXACT_MATCH, 4, 1), (EXACT_MATCH, 4, 2), "EXACT_MATCH COMDAT with different contents"),
        ((ANY, 4, 1), (NODUPLICATES, 4, 1), "COMDAT selections ANY and NODUPLICATES"),
        ((ANY, 4, 1), None, "a COMDAT and a plain definition"),
        (None, None, "defined twice"),
    ],
)
def test_comdat_selection_as_the_spec_says(first, second, why) -> None:  # type: ignore[no-untyped-def]
    """Microsoft PE/COFF "COMDAT Sections": every selection, and mixed ones as lld's handleComdatSelection."""
    make = lambda t: None if t is None else ComdatSection(1, t[0], t[1], t[2])  # noqa: E731
    assert clash(make(first), make(second)) == why


def test_associative_sections_follow_their_section() -> None:
    """nodup.obj's two function sections made ASSOCIATIVE to a section 99: they clash as 99's selection says."""
    nodup = read_path(str(COFF / "nodup.obj"))[0]

    def tied_to(selection: int) -> Binary:
        tied = tuple(ComdatSection(c.section, ASSOCIATIVE, c.size, 0, 99) for c in nodup.comdats)
        return replace(nodup, comdats=(*tied, ComdatSection(99, selection, 6)))

    assert [d.why for d in duplicates([tied_to(NODUPLICATES), tied_to(NODUPLICATES)])] == ["NODUPLICATES COMDAT"] * 2
    assert duplicates([tied_to(ANY), tied_to(ANY)]) == []


def test_a_driver_import_library_used_is_a_driver_link_before_the_dll_exists(tmp_path: Path) -> None:
    rsp = _line(tmp_path, "driver-used-right")
    inputs = [str(COFF / "driver_use.obj"), str(COFF / "cuda.lib")]
    line = tuple(read_link_line(str(rsp)))
    (found,) = [f for f in audit(inputs, AuditConfig(link_line=line)).findings if f.rule == "driver-link"]
    assert found.severity is Severity.ERROR and found.subject == "nvcuda.dll"
    assert found.evidence["used_symbols"] == ["cuDeviceGetCount", "cuInit"]
    assert "the DLL will not load where no driver is installed" in found.message
    rsp.write_text(rsp.read_text().replace("/dll", "/dll /DELAYLOAD:nvcuda.dll"))
    line = tuple(read_link_line(str(rsp)))
    (delayed,) = [f for f in audit(inputs, AuditConfig(link_line=line)).findings if f.rule == "driver-link"]
    assert (
        delayed.severity is Severity.NOTE and "/DELAYLOAD:nvcuda.dll resolves them at the first call" in delayed.message
    )
    # The seed's broken line names cuda.lib but uses none of it: no import, no driver-link.
    broken = tuple(read_link_line(str(_line(tmp_path, "broken"))))
    seed = audit([str(COFF / "torch_cuda.obj"), str(COFF / "cuda.lib")], AuditConfig(link_line=broken))
    assert not [f for f in seed.findings if f.rule == "driver-link"]


@needs("lld-link")
def test_lld_link_words_under_its_order(tmp_path: Path) -> None:
    """--linker lld-link: the finding says what lld-link itself prints for the reference."""
    rsp = _line(tmp_path, "broken")
    tool = find_tool("lld-link").path
    assert tool is not None
    stderr = subprocess.run([tool, f"@{rsp}"], capture_output=True, text=True, cwd=tmp_path).stderr
    line = (*read_link_line(str(rsp)), LinkInput("", option="linker:lld-link"))
    found = {f.subject: f for f in audit([str(COFF / "torch_cuda.obj")], AuditConfig(link_line=line)).findings}
    for name in ("nvrtcCreateProgram", "__imp_nvrtcGetLoweredName"):
        words = found[name].message.split(" (referenced by ")[0]
        assert f"error: {words}\n>>> referenced by " in stderr, (words, stderr)
        assert "; the link fails (9 undefined symbols); expected from nvrtc.lib" in found[name].message


def test_one_emulated_link_per_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Three rules read the Windows link; it is emulated once (a counting test, not a timing one)."""
    import linkaudit.link.coff as module  # windows_link imports it when a link line is given

    calls = []

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(1)
        return link_coff(*args, **kwargs)

    monkeypatch.setattr(module, "link_coff", counted)
    line = tuple(read_link_line(str(_line(tmp_path, "both"))))
    report = audit([str(COFF / "torch_cuda.obj"), str(COFF / "driver_use.obj")], AuditConfig(link_line=line))
    assert [f.rule for f in report.findings if f.rule == "driver-link"] == ["driver-link"]
    assert len(calls) == 1


def test_plugins_of_perl_and_of_a_debugger_leave_their_hosts_api_to_them(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A Perl XS module needs only libc and binds Perl_* in perl; libthread_db binds ps_* in the
    debugger: notes, not 26 + 8 errors ("the load fails") on every system library directory."""
    import shutil
    from pathlib import Path

    import pytest

    from linkaudit import audit

    host = Path("/usr/lib/x86_64-linux-gnu")
    xs = sorted(host.glob("perl/5.*/auto/Cwd/Cwd.so"))
    thread_db = host / "libthread_db.so.1"
    if not xs or not thread_db.is_file():
        pytest.skip("needs perl's Cwd XS module and glibc's libthread_db (Debian packages libperl5.36, libc6)")
    shutil.copy(xs[0], tmp_path / "Cwd.so")
    shutil.copy(thread_db, tmp_path / "libthread_db.so.1")
    found = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    assert found and all(f.severity.value == "note" for f in found), [(f.file, f.message[:80]) for f in found]
    assert any("perl's API" in f.message for f in found) and any("proc_service" in f.message for f in found)
