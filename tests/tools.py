"""The one place the tests look up an outside tool (a compiler, binutils, LLVM, the C library's ldd).

Every test that runs a program not installed by ``pip install '.[test]'`` asks here, by the tool's
logical name, and is skipped — never failed — when the tool is absent, too old, or lacks the option
the test relies on; the skip reason names the Debian package to install.  A test points the lookup
at a stub directory with :func:`tool_path` (``LINKAUDIT_TEST_TOOL_PATH`` does the same for a whole
run), which is how ``tests/test_tools.py`` proves an old ``llvm-objdump`` is skipped, not trusted.

Usage::

    from tools import needs, find_tool

    @needs("llvm-objdump")
    def test_...():
        objdump = find_tool("llvm-objdump").path
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

import pytest

_F = TypeVar("_F", bound=Callable[..., Any])

#: Overrides PATH for every lookup below (``os.pathsep``-separated directories).
PATH_VARIABLE = "LINKAUDIT_TEST_TOOL_PATH"


@dataclass(frozen=True)
class ToolSpec:
    """What a test needs of one outside tool.

    Attributes:
        name: the logical name tests ask for (``"llvm-objdump"``).
        executables: file names to try, in order (a versioned name first: ``llvm-objdump-16``).
        package: the Debian package that provides a good enough one (named in the skip reason).
        min_version: the oldest acceptable version as a tuple of ints (``(16,)``), or None for any.
        needs_option: an option the tool's ``--help`` must list (``--chained-fixups``), or None.
    """

    name: str
    executables: tuple[str, ...]
    package: str
    min_version: tuple[int, ...] | None = None
    needs_option: str | None = None


@dataclass(frozen=True)
class Tool:
    """The outcome of a lookup: ``path`` of a usable executable, else None and ``reason`` why not."""

    spec: ToolSpec
    path: str | None
    version: tuple[int, ...] | None
    reason: str

    @property
    def found(self) -> bool:
        return self.path is not None


_LLVM16 = "llvm-16"
SPECS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        # --chained-fixups and a working --exports-trie on chained-fixup dylibs arrived in LLVM 16.
        ToolSpec("llvm-objdump", ("llvm-objdump-16", "llvm-objdump"), _LLVM16, (16,), "--chained-fixups"),
        ToolSpec("llvm-nm", ("llvm-nm-16", "llvm-nm"), _LLVM16, (16,)),
        ToolSpec("llvm-readobj", ("llvm-readobj-16", "llvm-readobj"), _LLVM16, (16,)),
        ToolSpec("lld-link", ("lld-link-16", "lld-link"), "lld-16", (16,)),
        ToolSpec("llvm-otool", ("llvm-otool-16", "llvm-otool", "llvm-otool-14"), "llvm"),
        ToolSpec("readelf", ("readelf",), "binutils"),
        ToolSpec("nm", ("nm",), "binutils"),
        ToolSpec("ar", ("ar",), "binutils"),
        ToolSpec("gcc", ("gcc",), "gcc"),
        ToolSpec("mingw-gcc", ("x86_64-w64-mingw32-gcc",), "gcc-mingw-w64-x86-64"),
        ToolSpec("ldd", ("ldd",), "libc-bin"),
        ToolSpec("git", ("git",), "git"),
        ToolSpec("bash", ("bash",), "bash"),
        ToolSpec("ldconfig", ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"), "libc-bin"),
        # musl's loader is its ldd: `/lib/ld-musl-x86_64.so.1 --list FILE` (run on our own samples only).
        ToolSpec("musl-ldd", ("/lib/ld-musl-x86_64.so.1",), "musl-tools"),
        ToolSpec("musl-gcc", ("musl-gcc",), "musl-tools"),
        # headless Chromium driven over the DevTools protocol on a pipe (tests/browser.py)
        ToolSpec("chromium", ("chromium", "chromium-browser"), "chromium", (100,)),
        ToolSpec("dot", ("dot",), "graphviz"),
        ToolSpec("gnu-tar", ("tar",), "tar", needs_option="--sparse"),  # GNU tar, not bsdtar
    )
}

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def _search_path() -> str | None:
    return os.environ.get(PATH_VARIABLE) or None


def _which(executable: str, search: str | None) -> str | None:
    if os.path.isabs(executable):
        return executable if os.access(executable, os.X_OK) and os.path.isfile(executable) else None
    return shutil.which(executable, path=search)


def _run(path: str, option: str) -> str:
    """stdout + stderr of ``path option`` (``--version``, ``--help``), "" when it cannot run."""
    try:
        proc = subprocess.run(
            [path, option], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
            env={**os.environ, "LC_ALL": "C"},
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return ""
    return proc.stdout + proc.stderr


def parse_version(text: str) -> tuple[int, ...] | None:
    """The first ``X.Y[.Z]`` in a ``--version`` banner as ints (``"LLVM version 14.0.6"`` -> (14, 0, 6))."""
    match = _VERSION.search(text)
    return tuple(int(g) for g in match.groups() if g is not None) if match else None


def _judge(spec: ToolSpec, path: str) -> Tool:
    version = parse_version(_run(path, "--version")) if spec.min_version is not None else None
    install = f"apt-get install {spec.package}"
    if spec.min_version is not None:
        want = ".".join(map(str, spec.min_version))
        if version is None:
            return Tool(spec, None, None, f"{path} prints no version; needs {spec.name} >= {want} ({install})")
        if version < spec.min_version:
            have = ".".join(map(str, version))
            return Tool(spec, None, version, f"{path} is {have}, needs {spec.name} >= {want} ({install})")
    if spec.needs_option is not None and spec.needs_option not in _run(path, "--help"):
        return Tool(spec, None, version, f"{path} has no {spec.needs_option} ({install})")
    return Tool(spec, path, version, "")


@cache
def _lookup(name: str, search: str | None) -> Tool:
    spec = SPECS[name]
    rejected: Tool | None = None
    for executable in spec.executables:
        path = _which(executable, search)
        if path is None:
            continue
        tool = _judge(spec, path)
        if tool.found:
            return tool
        rejected = rejected or tool
    return rejected or Tool(spec, None, None, f"needs {spec.name} (apt-get install {spec.package})")


def find_tool(name: str) -> Tool:
    """Look up the tool ``name`` (a key of :data:`SPECS`) on PATH, or on ``LINKAUDIT_TEST_TOOL_PATH``.

    Returns a :class:`Tool` whose ``path`` is None when no candidate is installed, runs, is new
    enough and has the option the tests need; ``reason`` then says which and names the package.
    Results are memoised per (name, search path).

    Raises:
        KeyError: ``name`` is not a known tool (add it to :data:`SPECS`).
    """
    return _lookup(name, _search_path())


@contextlib.contextmanager
def tool_path(directory: str) -> Iterator[None]:
    """Within the block, look tools up in ``directory`` only (for stubs)."""
    before = os.environ.get(PATH_VARIABLE)
    os.environ[PATH_VARIABLE] = directory
    try:
        yield
    finally:
        if before is None:
            del os.environ[PATH_VARIABLE]
        else:
            os.environ[PATH_VARIABLE] = before


def needs(*names: str) -> Callable[[_F], _F]:
    """A decorator: skip the test unless every tool in ``names`` is usable; record them for the summary.

    Applies ``pytest.mark.tools(*names)`` (read by conftest's end-of-run summary of which
    tool-dependent tests ran and which were skipped) and a ``skipif`` whose reason names the
    missing package.  Works on test functions and classes.
    """
    missing = [tool for tool in map(find_tool, names) if not tool.found]
    skip = pytest.mark.skipif(bool(missing), reason="; ".join(t.reason for t in missing))
    tag = pytest.mark.tools(*names)

    def apply(target: _F) -> _F:
        return tag(skip(target))  # type: ignore[no-any-return]

    return apply


def require(name: str) -> str:
    """The path of tool ``name``, or skip the running test with the reason (for use inside a test)."""
    tool = find_tool(name)
    if tool.path is None:
        pytest.skip(tool.reason)
    return tool.path
