"""Objects and archives: duplicate-definition, common-symbol, stacked-codegen, lto-object, and the
linker differential: for every link line of sample_bins/objects, gcc fails exactly when we report a
duplicate-definition at error."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, read
from linkaudit.link.line import read_link_line

from ..tools import find_tool, needs

_GCC = find_tool("gcc").path or "gcc"  # the tests that run it are marked needs("gcc")

OBJECTS = Path(__file__).resolve().parents[2] / "sample_bins" / "objects"
LINK_LINES = sorted(OBJECTS.rglob("link_*.rsp"))


def _findings(*paths: Path, rule: str, link_line: Path | None = None, sources: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    config = AuditConfig(
        target=None, link_line=tuple(read_link_line(str(link_line))) if link_line else (), source_dirs=sources
    )
    return [f for f in audit([str(p) for p in paths], config).findings if f.rule == rule]


def test_archive_members_and_objects_are_read() -> None:
    members = read(str(OBJECTS / "archive_one/libone.a"))
    assert [b.member for b in members] == ["first.o", "second.o"]
    assert all(b.kind.value == "relocatable" for b in members)
    long = read(str(OBJECTS / "longnames/liblong.a"))
    assert {b.member for b in long} == {"a_very_long_member_name_one.o", "a_very_long_member_name_two.o"}
    thin = read(str(OBJECTS / "thin/libthin.a"))
    assert {b.member for b in thin} == {"thin_a.o", "thin_b.o"} and all(b.member_file for b in thin)


def test_strong_pair_is_an_error_naming_both_objects() -> None:
    found = {
        f.subject: f
        for f in _findings(OBJECTS / "strong_pair/a.o", OBJECTS / "strong_pair/b.o", rule="duplicate-definition")
    }
    assert set(found) == {"dup_fn", "dup_counter"}
    f = found["dup_fn"]
    assert f.severity.value == "error" and f.evidence["link"] == "objects"
    assert [d["section"] for d in f.evidence["definitions"]] == [".text", ".text"]


def test_archive_members_without_a_link_line_are_warnings() -> None:
    (f,) = _findings(OBJECTS / "archive_two/libx.a", OBJECTS / "archive_two/liby.a", rule="duplicate-definition")
    assert f.subject == "cross_fn" and f.severity.value == "warning" and f.evidence["link"] == "archive-members"
    assert "pulled by a reference to x_only" in f.message and "pulled by a reference to y_only" in f.message
    assert {d["member"] for d in f.evidence["definitions"]} == {"x.o", "y.o"}


def test_comdat_is_not_a_duplicate_but_an_explicit_specialization_is() -> None:
    (f,) = _findings(OBJECTS / "cpp_comdat/spec_a.o", OBJECTS / "cpp_comdat/spec_b.o", rule="duplicate-definition")
    assert f.evidence["demangled"] == "int twice<int>(int)" and f.subject == "_Z5twiceIiET_S0_"


def test_common_symbols_warn_and_no_common_duplicates_fail() -> None:
    (common,) = _findings(OBJECTS / "common/c1_common.o", OBJECTS / "common/c2_common.o", rule="common-symbol")
    assert common.subject == "shared_total" and common.severity.value == "warning"
    dup = _findings(OBJECTS / "common/c1_nocommon.o", OBJECTS / "common/c2_nocommon.o", rule="duplicate-definition")
    assert [f.subject for f in dup] == ["shared_total"]


def test_stacked_codegen_is_the_cause_of_the_duplicate() -> None:
    stacked = OBJECTS / "stacked"
    (dup,) = _findings(
        stacked / "Activation.cpp.DEFAULT.cpp.o",
        stacked / "Activation.cpp.DEFAULT.cpp.DEFAULT.cpp.o",
        rule="duplicate-definition",
    )
    assert dup.evidence["demangled"] == "at::native::activation_kernel_DEFAULT(float*, int)"
    assert dup.evidence["cause"]["stacked_suffixes"] == [".DEFAULT.cpp.DEFAULT.cpp"]
    assert "stale generated sources" in dup.message
    (codegen,) = _findings(stacked, rule="stacked-codegen", sources=(str(stacked / "src_tree"),))
    listed = {Path(s["path"]).name: s for s in codegen.evidence["source_files"]}
    assert listed["Activation.cpp.DEFAULT.cpp.DEFAULT.cpp"]["stacked"] is True
    assert listed["Activation.cpp.DEFAULT.cpp"]["stacked"] is False


def test_slim_lto_object_is_named() -> None:
    (f,) = _findings(OBJECTS / "lto/slim.o", rule="lto-object")
    assert f.evidence["sections"]


def test_thin_member_and_its_file_are_one_object() -> None:
    assert _findings(OBJECTS / "thin", rule="duplicate-definition") == []


@needs("gcc")
@pytest.mark.parametrize("rsp", LINK_LINES, ids=[str(p.relative_to(OBJECTS)) for p in LINK_LINES])
def test_linker_differential(rsp: Path, tmp_path: Path) -> None:
    """Link with gcc exactly as the link line says; it fails iff we report a duplicate at error."""
    ours = [f for f in _findings(rsp.parent, rule="duplicate-definition", link_line=rsp) if f.severity.value == "error"]
    proc = subprocess.run(
        [_GCC, "-o", str(tmp_path / "a.out"), f"@{rsp.name}"], cwd=rsp.parent, capture_output=True, text=True
    )
    if proc.returncode != 0:
        assert "multiple definition" in proc.stderr, proc.stderr
    assert (proc.returncode != 0) == bool(ours), (proc.stderr, [f.message for f in ours])


def test_duplicate_export_of_one_static_archive_in_two_libraries() -> None:
    libs = (OBJECTS / "shared_static/libfirst.so", OBJECTS / "shared_static/libsecond.so")
    (f,) = _findings(*libs, rule="duplicate-export")
    assert f.evidence["symbols"] == ["util_fn", "util_version"]
    assert f.severity.value == "warning"
    # each library alone: nothing to compare
    assert _findings(libs[0], rule="duplicate-export") == []


def test_llvm_bitcode_is_named_as_an_lto_object(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import json

    bitcode = tmp_path / "kernel.o"
    bitcode.write_bytes(b"BC\xc0\xde" + b"\x35\x14\x00\x00" * 16)
    doc = json.loads(run_cli("check", "--format", "json", str(bitcode)).stdout)
    (entry,) = doc["files"]
    assert entry["status"] == "skipped" and "LLVM bitcode" in entry["reason"]
    (note,) = [f for f in doc["findings"] if f["rule"] == "lto-object"]
    assert note["severity"] == "note"


def test_sym64_index_and_bsd_names_are_read(tmp_path: Path) -> None:
    """A /SYM64/ symbol index (archives past 4 GiB) and a BSD long name (#1/N) are handled."""
    obj = (OBJECTS / "strong_pair/a.o").read_bytes()

    def header(name: bytes, size: int) -> bytes:
        return (
            name.ljust(16)
            + b"0".ljust(12)
            + b"0".ljust(6)
            + b"0".ljust(6)
            + b"644".ljust(8)
            + str(size).encode().ljust(10)
            + b"`\n"
        )

    index = b"\0" * 8
    bsd_name = b"a_bsd_named_member.o"
    data = b"!<arch>\n" + header(b"/SYM64/", len(index)) + index
    data += header(b"#1/" + str(len(bsd_name)).encode(), len(bsd_name) + len(obj)) + bsd_name + obj
    if len(data) % 2:
        data += b"\n"
    path = tmp_path / "libmixed.a"
    path.write_bytes(data)
    (member,) = read(str(path))
    assert member.member == "a_bsd_named_member.o"
    assert {s.name for s in member.symbols.strong_definitions()} >= {"dup_fn", "dup_counter"}


@needs("gcc")
@pytest.mark.parametrize(
    "line",
    [
        "main_first.o -L. -lone",  # -l resolved through -L: only first.o is pulled
        "main_both.o -L. -lone",
        "main_first.o -Wl,--whole-archive libone.a -Wl,--no-whole-archive",  # every member: both define member_fn
        "main_first.o -L . -l:libone.a",
    ],
)
def test_linker_differential_with_library_options(line: str, tmp_path: Path) -> None:
    work = tmp_path / "archive_one"
    shutil.copytree(OBJECTS / "archive_one", work)
    rsp = work / "link_custom.rsp"
    rsp.write_text(line + "\n")
    ours = [f for f in _findings(work, rule="duplicate-definition", link_line=rsp) if f.severity.value == "error"]
    proc = subprocess.run(
        [_GCC, "-o", str(tmp_path / "a.out"), "@link_custom.rsp"], cwd=work, capture_output=True, text=True
    )
    assert (proc.returncode != 0) == bool(ours), (line, proc.stderr, [f.message for f in ours])


@needs("gcc")
def test_link_line_options_weak_references_shared_libraries_groups_and_muldefs(tmp_path: Path) -> None:
    work = tmp_path / "w"
    shutil.copytree(OBJECTS / "archive_two", work)
    (work / "weak.c").write_text(
        "extern int y_only(void) __attribute__((weak));\nint probe(void){return y_only ? 1 : 0;}\n"
    )
    subprocess.run([_GCC, "-c", "weak.c", "-o", "weak.o"], cwd=work, check=True)
    cases = {
        # a weak reference pulls no member: only libx.a's x.o is linked (for x_only) — no clash
        "main_x.o weak.o libx.a liby.a": False,
        # both members pulled: cross_fn twice, unless the link allows multiple definitions
        "main_xy.o libx.a liby.a": True,
        "main_xy.o -Wl,--allow-multiple-definition libx.a liby.a": False,
        "main_xy.o -Wl,--start-group libx.a liby.a -Wl,--end-group": True,
    }
    for line, fails in cases.items():
        rsp = work / "link.rsp"
        rsp.write_text(line + "\n")
        errors = [f for f in _findings(work, rule="duplicate-definition", link_line=rsp) if f.severity.value == "error"]
        proc = subprocess.run(
            [_GCC, "-o", str(tmp_path / "a.out"), "@link.rsp"], cwd=work, capture_output=True, text=True
        )
        assert (proc.returncode != 0) == fails == bool(errors), (line, proc.stderr, errors)


def test_compile_commands_json_link_entry(tmp_path: Path) -> None:
    import json

    work = tmp_path / "w"
    shutil.copytree(OBJECTS / "strong_pair", work)
    (work / "compile_commands.json").write_text(json.dumps([
        {"directory": str(work), "command": "gcc -c a.c -o a.o", "file": "a.c"},
        {"directory": str(work), "arguments": ["gcc", "-o", "app", "main.o", "a.o", "b.o"], "file": "app"},
    ]))  # fmt: skip
    errors = _findings(work / "main.o", rule="duplicate-definition", link_line=work / "compile_commands.json")
    assert {f.subject for f in errors} == {"dup_fn", "dup_counter"}  # a.o and b.o came from the link line


@needs("gcc")
def test_object_without_gnu_stack_note_is_the_named_culprit(tmp_path: Path) -> None:
    src = Path(__file__).resolve().parents[2] / "sample_bins/src/execstack.s"
    obj = tmp_path / "execstack.o"
    subprocess.run([_GCC, "-c", str(src), "-o", str(obj)], check=True)
    (f,) = _findings(obj, rule="executable-stack")
    assert f.subject == ".note.GNU-stack" and f.severity.value == "warning"


@pytest.mark.parametrize("n", [3, 150])
def test_many_libraries_exporting_one_name_are_one_finding(run_cli, tmp_path: Path, n: int) -> None:  # type: ignore[no-untyped-def]
    """N libraries of one closure exporting one name: one finding listing all N (was N(N-1)/2
    findings, each pair's), its text line bounded whatever N; a library exporting a second name
    with just one other is a finding of its own pair."""
    from tests.loader.dagbuild import Lib, write

    libs = [Lib(f"libd{i}.so", f"libd{i}.so", exports=("clash", "pair") if i < 2 else ("clash",)) for i in range(n)]
    top = Lib("libtop.so", "libtop.so", needed=tuple(lib.file for lib in libs), runpath=("$ORIGIN",))
    write(str(tmp_path), [*libs, top])
    doc = json.loads(run_cli("check", "--format", "json", str(tmp_path)).stdout)
    found = sorted(
        (f for f in doc["findings"] if f["rule"] == "duplicate-export"), key=lambda f: len(f["evidence"]["libraries"])
    )
    names = sorted(str(tmp_path / lib.file) for lib in libs)
    assert [f["evidence"]["symbols"] for f in found] == [["pair"], ["clash"]]
    assert found[0]["evidence"]["libraries"] == names[:2]
    assert found[1]["evidence"]["libraries"] == names
    assert found[1]["evidence"]["roots"] == [str(tmp_path / "libtop.so")]
    text = run_cli("check", str(tmp_path)).stdout
    (line,) = [x for x in text.splitlines() if "[duplicate-export]" in x and "clash" in x]
    assert len(line) < 600 + 2 * len(str(tmp_path))
    assert sum(len(x) for x in text.splitlines() if "[duplicate-export]" in x) < 2 * (600 + 2 * len(str(tmp_path)))


def test_each_object_decoded_once_whatever_the_clashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """duplicate-definition decodes each object's definitions once per check and resolves each path once,
    however many names clash (``/usr/lib/x86_64-linux-gnu``'s archives: 28,866 decodes of ~9,300
    members, one per clashing name, and 58,397 ``realpath`` calls)."""
    import os

    from linkaudit.rules import duplicates

    archives = []
    for copy in range(3):
        for name in ("libx.a", "liby.a"):
            archives.append(tmp_path / f"{copy}-{name}")
            shutil.copy(OBJECTS / "archive_two" / name, archives[-1])
    decoded: list[int] = []
    resolved: list[str] = []
    real_definitions, real_realpath = duplicates.definitions, os.path.realpath

    def counting_definitions(b):  # type: ignore[no-untyped-def]
        decoded.append(id(b))
        return real_definitions(b)

    def counting_realpath(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        resolved.append(path)
        return real_realpath(path, *args, **kwargs)

    monkeypatch.setattr(duplicates, "definitions", counting_definitions)
    monkeypatch.setattr(duplicates.os.path, "realpath", counting_realpath)
    found = _findings(*archives, rule="duplicate-definition")
    assert found and all(f.evidence["link"] == "archive-members" for f in found)
    clashing = {d["object"] + str(d["member"]) for f in found for d in f.evidence["definitions"]}
    assert len(clashing) >= 6
    assert len(decoded) == len(set(decoded))  # once per object, not once per clash
    assert len(resolved) <= len(set(resolved)) + 1  # once per path (the audit itself may resolve one more)


def test_object_rules_make_no_symbol_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """duplicate-definition and common-symbol read each object's strong definitions as columns, and
    lto-object reads symbols only of an object with ``.gnu.lto_*`` sections: none of them makes a
    ``Symbol`` view per symbol (``/usr/lib/x86_64-linux-gnu``'s ~9,300 archive members: 391,265 views
    for lto-object and ~385,000 for the definitions before)."""
    from linkaudit.model import SymbolTable

    archives = []
    for copy in range(3):
        for name in ("libx.a", "liby.a"):
            archives.append(tmp_path / f"{copy}-{name}")
            shutil.copy(OBJECTS / "archive_two" / name, archives[-1])
    from linkaudit.rules import rule_ids

    wanted = {"duplicate-definition", "common-symbol", "lto-object", "unreadable-input"}
    config = AuditConfig(target=None, ignore=frozenset(rule_ids()) - wanted)
    views: list[int] = []
    real_views, real_bulk = SymbolTable._views, SymbolTable._bulk_views

    def counting_views(self, indices):  # type: ignore[no-untyped-def]
        for view in real_views(self, indices):
            views.append(1)
            yield view

    def counting_bulk(self, selected):  # type: ignore[no-untyped-def]
        found = real_bulk(self, selected)
        views.extend(1 for _ in found)
        return found

    monkeypatch.setattr(SymbolTable, "_views", counting_views)
    monkeypatch.setattr(SymbolTable, "_bulk_views", counting_bulk)
    report = audit([str(p) for p in archives], config)
    assert any(f.rule == "duplicate-definition" for f in report.findings)
    assert views == []


def test_names_defined_once_cost_no_per_name_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a link line, duplicate-definition looks at the names defined more than once only:
    a name defined once is neither resolved to its file (``_file_of``) nor sorted among the
    clashes (``/usr/lib/x86_64-linux-gnu``: 58,397 ``_file_of`` calls before, 9,203 after)."""
    from linkaudit.link.elf import Definition
    from linkaudit.rules import duplicates

    archives = []
    for copy in range(2):
        archives.append(tmp_path / f"{copy}-libx.a")
        shutil.copy(OBJECTS / "archive_two" / "libx.a", archives[-1])
    real_definitions, real_file_of = duplicates.definitions, duplicates._file_of
    files: list[int] = []

    def with_unique_names(b):  # type: ignore[no-untyped-def]
        own = [Definition(f"only_{id(b)}_{i}", b, ".text", False) for i in range(500)]
        return real_definitions(b) + own

    def counting_file_of(b, real):  # type: ignore[no-untyped-def]
        files.append(1)
        return real_file_of(b, real)

    monkeypatch.setattr(duplicates, "definitions", with_unique_names)
    monkeypatch.setattr(duplicates, "_file_of", counting_file_of)
    found = _findings(*archives, rule="duplicate-definition")
    clashing = sum(len(f.evidence["definitions"]) for f in found)
    assert found and not any(f.evidence["symbol"].startswith("only_") for f in found)
    assert len(files) == clashing  # not 500 more per object


def test_the_c_runtimes_alternative_start_files_are_not_linked_together(tmp_path: Path) -> None:
    """``/usr/lib/x86_64-linux-gnu`` holds crt1.o, Scrt1.o, gcrt1.o, grcrt1.o, rcrt1.o, Mcrt1.o, each
    defining ``_start``: a link takes one of them (GCC's STARTFILE_SPEC), so they are no
    duplicate-definition (5 false errors, "the link fails"); a second loose ``_start`` still is."""
    host = Path("/usr/lib/x86_64-linux-gnu")
    starts = [host / n for n in ("crt1.o", "Scrt1.o", "rcrt1.o") if (host / n).is_file()]
    if len(starts) < 2:
        pytest.skip("needs glibc's start files (Debian package libc6-dev)")
    for start in starts:
        shutil.copy(start, tmp_path)
    assert not _findings(tmp_path, rule="duplicate-definition")
    (tmp_path / "mine").mkdir()
    shutil.copy(starts[0], tmp_path / "mine" / "my_start.o")  # another object defining _start
    assert "_start" in {f.subject for f in _findings(tmp_path, rule="duplicate-definition")}
