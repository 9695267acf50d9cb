"""tests/tools.py: an outside tool that is absent, too old or lacks an option skips its tests, naming the package."""

from __future__ import annotations

import re
import stat
from pathlib import Path

from .tools import SPECS, find_tool, needs, parse_version, tool_path

TESTS = Path(__file__).resolve().parent


def _stub(directory: Path, name: str, version: str, help_text: str) -> None:
    """An executable ``name`` that prints an LLVM-style version banner and ``help_text`` for --help,
    and rejects every other option the way LLVM 14's llvm-objdump rejects --chained-fixups."""
    script = directory / name
    script.write_text(
        "#!/bin/sh\n"
        f'case "$1" in\n'
        f"  --version) echo 'Debian LLVM version {version}'; echo '  Optimized build.';;\n"
        f"  --help) echo '{help_text}';;\n"
        "  *) echo \"$0: error: unknown argument '$1'\" >&2; exit 1;;\n"
        "esac\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def test_llvm_objdump_14_is_skipped_naming_llvm_16(tmp_path: Path) -> None:
    _stub(tmp_path, "llvm-objdump", "14.0.6", "  --macho  --exports-trie")
    with tool_path(str(tmp_path)):
        tool = find_tool("llvm-objdump")
    assert tool.path is None and tool.version == (14, 0, 6)
    assert "14.0.6" in tool.reason and ">= 16" in tool.reason and "apt-get install llvm-16" in tool.reason


def test_a_new_enough_version_without_the_option_is_skipped(tmp_path: Path) -> None:
    _stub(tmp_path, "llvm-objdump-16", "16.0.6", "  --macho  --exports-trie")
    with tool_path(str(tmp_path)):
        tool = find_tool("llvm-objdump")
    assert tool.path is None and "--chained-fixups" in tool.reason and "llvm-16" in tool.reason


def test_the_versioned_name_wins_over_an_old_plain_one(tmp_path: Path) -> None:
    _stub(tmp_path, "llvm-objdump", "14.0.6", "  --macho")
    _stub(tmp_path, "llvm-objdump-16", "16.0.6", "  --macho  --chained-fixups  --exports-trie")
    with tool_path(str(tmp_path)):
        tool = find_tool("llvm-objdump")
    assert tool.path == str(tmp_path / "llvm-objdump-16") and tool.version == (16, 0, 6)


def test_an_absent_tool_names_its_package(tmp_path: Path) -> None:
    with tool_path(str(tmp_path)):
        assert find_tool("llvm-nm").reason == "needs llvm-nm (apt-get install llvm-16)"
        assert find_tool("mingw-gcc").reason == "needs mingw-gcc (apt-get install gcc-mingw-w64-x86-64)"


def test_needs_marks_the_test_skipped_with_that_reason(tmp_path: Path) -> None:
    _stub(tmp_path, "llvm-objdump", "14.0.6", "")

    def probe() -> None: ...

    with tool_path(str(tmp_path)):
        marked = needs("llvm-objdump")(probe)
    marks = {m.name: m for m in marked.pytestmark}  # type: ignore[attr-defined]
    assert marks["tools"].args == ("llvm-objdump",)
    assert marks["skipif"].args == (True,) and "apt-get install llvm-16" in marks["skipif"].kwargs["reason"]


def test_version_banners() -> None:
    assert parse_version("Debian LLVM version 16.0.6") == (16, 0, 6)
    assert parse_version("GNU readelf (GNU Binutils for Debian) 2.40") == (2, 40)
    assert parse_version("no digits") is None


def test_every_outside_tool_is_looked_up_through_tools_py() -> None:
    """No test finds a program on PATH by itself: shutil.which and bare tool names in subprocess argv
    would bypass the version check and the skip."""
    names = {executable for spec in SPECS.values() for executable in spec.executables if "/" not in executable}
    bare = re.compile(r"subprocess\.\w+\(\s*\[\s*\"(" + "|".join(map(re.escape, sorted(names))) + r")\"")
    offenders = []
    for path in TESTS.rglob("*.py"):
        if path.name in ("tools.py", "test_tools.py"):
            continue
        text = path.read_text()
        if "shutil.which(" in text or bare.search(text):
            offenders.append(str(path.relative_to(TESTS)))
    assert offenders == []
