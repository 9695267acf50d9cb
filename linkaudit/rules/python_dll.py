"""``python-dll-version``: a Windows extension module that imports the interpreter DLL of another
Python than its wheel tag or file-name suffix names — the PE counterpart of ``libpython-needed``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from ..context import AuditContext
from ..lazyre import LazyPattern
from ..loader.python_dlls import PythonDll, python_dll
from ..model import Binary, Format, Kind
from ..records import dataclass
from ..report import Finding, Severity
from .base import PE_ONLY, Rule

#: The suffix CPython's importer looks for (Include/internal/pycore_importdl.h: ``PYD_TAGGED_SUFFIX``
#: = ``PYD_DEBUG_SUFFIX "." PYD_SOABI ".pyd"``, e.g. ``_d.cp313t-win_amd64.pyd``), and the untagged one.
_TAGGED = LazyPattern(r".+?(_d)?(\.cp(\d)(\d{1,3})(t?)-[a-z0-9_]+\.pyd)", re.IGNORECASE)
_DEBUG_NAME = LazyPattern(r".+_d(\.cp\d+t?-[a-z0-9_]+)?\.pyd", re.IGNORECASE)
#: A CPython ABI tag (PEP 425, PEP 703: ``cp313t``; ``d`` for a debug build, as packaging spells it).
_ABI = LazyPattern(r"cp(\d)(\d{1,3})(t?)(d?)")
_INTERPRETER = LazyPattern(r"(cp|py)(\d)(\d{0,3})")


@dataclass(frozen=True, slots=True)
class Promise:
    """The Pythons a module is meant to import into, and who says so.

    Attributes:
        low: the (oldest) Python named, ``(3, 11)``.
        later: every later CPython too (an ``abi3`` or ``py3X-none`` tag: pip installs it there).
        abi3: the promise is the Stable ABI's (PEP 384): the module must import ``python3.dll``.
        freethreaded: a free-threaded build (``cp313t``), a default one, or ``None``: not said.
        debug: a debug build (``_d.pyd``, a ``cp312d`` ABI): its ``python312_d.dll`` is allowed.
        source: what promises it: ``wheel tag cp311-cp311-win_amd64``, ``installed WHEEL tag ...``,
            ``file name suffix .cp311-win_amd64.pyd``.
    """

    low: tuple[int, int]
    later: bool
    abi3: bool
    freethreaded: bool | None
    debug: bool
    source: str

    def describe(self) -> str:
        """``CPython 3.11``, ``CPython 3.13 (free-threaded)``, ``CPython 3.12 and later (abi3)``."""
        text = f"CPython {self.low[0]}.{self.low[1]}"
        if self.later:
            return text + (" and later (abi3)" if self.abi3 else " and later")
        flags = [f for f, on in (("free-threaded", self.freethreaded), ("debug", self.debug)) if on]
        return text + (f" ({', '.join(flags)})" if flags else "")

    def accepts(self, dll: PythonDll) -> bool:
        """Whether every Python promised ships ``dll`` beside python.exe (CPython's PC/layout: each
        ships ``python3XY[t].dll`` and ``python3[t].dll``, with ``_d`` only in a debug build)."""
        major, minor = dll.version
        if dll.debug and not self.debug:
            return False
        if self.freethreaded is not None and dll.freethreaded != self.freethreaded:
            return False
        if minor is None:
            return major == self.low[0]
        return not self.later and (major, minor) == self.low

    def expected(self, dll: PythonDll) -> list[str]:
        """The DLL names a module keeping this promise imports (``python311.dll``, ``python3.dll``)."""
        t = "t" if self.freethreaded else ""
        d = "_d" if self.debug and dll.debug else ""
        major, minor = self.low
        stable = f"python{major}{t}{d}.dll"
        return [stable] if self.later else [f"python{major}{minor}{t}{d}.dll", stable]


def suffix_promise(path: str) -> Promise | None:
    """What a module's file name promises: ``_ext.cp311-win_amd64.pyd`` is imported by CPython 3.11
    only, ``_ext_d.cp313t-win_amd64.pyd`` by a debug free-threaded 3.13 (the suffix CPython's
    importer looks for: Include/internal/pycore_importdl.h, ``PYD_TAGGED_SUFFIX``); ``None`` for an
    untagged ``_ext.pyd``, which any Python would import."""
    m = _TAGGED.fullmatch(os.path.basename(path))
    if m is None:
        return None
    version = (int(m.group(3)), int(m.group(4)))
    return Promise(version, False, False, bool(m.group(5)), bool(m.group(1)), f"file name suffix {m.group(2)}")


def tag_promise(interpreter: str, abi: str, source: str, debug_name: bool) -> Promise | None:
    """What one wheel tag's Python and ABI parts promise (PEP 425; pip's tag order, packaging's
    ``cpython_tags``/``compatible_tags``): ``cp311-cp311`` CPython 3.11 only, ``cp313-cp313t`` its
    free-threaded build, ``cp312-abi3`` 3.12 and every later CPython (PEP 384), ``py3X-none`` 3.X and
    later, ``cp312-none`` 3.12; ``None`` for a tag that names no CPython (``pp310``, ``cp311-cp312``)."""
    im = _INTERPRETER.fullmatch(interpreter)
    if im is None:
        return None
    major = int(im.group(2))
    minor = int(im.group(3)) if im.group(3) else 0
    if abi == "abi3":
        if im.group(1) != "cp" or not im.group(3):
            return None
        return Promise((major, minor), True, True, False, debug_name, source)
    if abi == "none":
        if im.group(1) == "py":
            return Promise((major, minor), True, False, None, debug_name, source)
        return Promise((major, minor), False, False, None, debug_name, source) if im.group(3) else None
    am = _ABI.fullmatch(abi)
    if am is None or im.group(1) != "cp" or (int(am.group(1)), int(am.group(2))) != (major, minor):
        return None
    return Promise((major, minor), False, False, bool(am.group(3)), bool(am.group(4)) or debug_name, source)


def _file_name_tags(package: str) -> list[tuple[str, str, str]]:
    """``(python, abi, "wheel tag python-abi-platforms")`` for each Python and ABI of a wheel's file
    name (PEP 427; a compressed set expanded, its platforms kept as written); empty for another
    package."""
    base = os.path.basename(package)
    parts = base[: -len(".whl")].split("-") if base.endswith(".whl") else []
    if len(parts) not in (5, 6):
        return []
    return [
        (py, abi, f"wheel tag {py}-{abi}-{parts[-1]}")
        for py in dict.fromkeys(parts[-3].split("."))
        for abi in dict.fromkeys(parts[-2].split("."))
    ]


def _installed_tags(context: AuditContext, path: str) -> list[tuple[str, str, str]]:
    """The same for the tags the ``.dist-info/WHEEL`` of the installed distribution owning ``path`` keeps."""
    installation = context.installation
    name = installation.owner(path) if installation is not None else None
    dist = installation.distributions.get(name) if installation is not None and name is not None else None
    if dist is None:
        return []
    tags = sorted(dist.tags, key=str)
    return [(t.interpreter, t.abi, f"installed WHEEL tag {t}") for t in tags]


def promises(context: AuditContext, binary: Binary) -> list[Promise]:
    """Every promise a module must keep: its file-name suffix when it has one (only that Python
    imports the file), else each Python its wheel's tags name (pip installs it wherever one matches;
    installed: the tags its ``.dist-info/WHEEL`` keeps); empty when nothing names a Python."""
    suffix = suffix_promise(binary.path)
    if suffix is not None:
        return [suffix]
    staged = context.packages
    package = staged.package_of(binary.path) if staged is not None else None
    tags: Iterable[tuple[str, str, str]] = (
        _file_name_tags(package) if package is not None else _installed_tags(context, binary.path)
    )
    debug_name = _DEBUG_NAME.fullmatch(os.path.basename(binary.path)) is not None
    out = [tag_promise(py, abi, source, debug_name) for py, abi, source in tags]
    return list(dict.fromkeys(p for p in out if p is not None))


class PythonDllVersion(Rule):
    id = "python-dll-version"
    formats = PE_ONLY
    severity = Severity.ERROR
    summary = (
        "a Windows extension module imports pythonXY.dll of another Python than its wheel tag or file name "
        "names, or an abi3 one a python3X.dll instead of python3.dll"
    )
    explain = """\
A Windows extension module (.pyd) imports the interpreter's C API from a DLL
named for one Python: python312.dll (python313t.dll for a free-threaded build,
python312_d.dll for a debug one), or python3.dll, the Stable ABI's DLL every
CPython 3 ships (PEP 384). Each CPython for Windows ships its own pythonXY.dll
and python3.dll beside python.exe and no other (CPython's PC/layout). The
module is loaded with LoadLibraryEx (Python/dynload_win.c) and its imports
searched for in the module's directory, the application's (python.exe's),
System32 and the os.add_dll_directory directories (the Windows DLL search
order): on any other Python than the one it was linked for, pythonXY.dll is
found nowhere and "ImportError: DLL load failed while importing _ext: The
specified module could not be found." follows.

The Python a module is meant for is named by its file-name suffix
(_ext.cp311-win_amd64.pyd: only CPython 3.11 looks for it;
Include/internal/pycore_importdl.h), else by its wheel's tags (cp311-cp311:
3.11; cp313-cp313t: free-threaded 3.13; cp312-abi3: 3.12 and every later
CPython; installed, the tags of its .dist-info/WHEEL). A plain _ext.pyd outside
a wheel names none and is not judged. An abi3 module must import python3.dll:
one importing python312.dll is not version-independent and fails on 3.13.

Typical causes: a build directory reused across Pythons (cibuildwheel, a
stale build/ tree) links the last one's pythonXY.lib; a debug build shipped.
Fix: rebuild the module for the Python its tag names; for abi3 define
Py_LIMITED_API (CPython's PC/pyconfig.h then links python3.lib instead of
python3XY.lib; setuptools py_limited_api, maturin abi3-py3X). Only a debug
DLL in a module whose name and tag say release is judged as debug.
"""
    evidence = {
        "module": "the extension module's path",
        "dll": "the interpreter DLL it imports",
        "promise": "the Pythons its tag or file name promises, e.g. CPython 3.11, CPython 3.12 and later (abi3)",
        "source": "what promises it: wheel tag ..., installed WHEEL tag ..., file name suffix ...",
        "expected": "the DLL names a module keeping the promise imports",
        "abi3": "whether the promise is the Stable ABI's",
        "package": "the wheel the module is in, or null (a directory, an installed site)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        staged = context.packages
        for binary in context.binaries:
            if binary.kind is not Kind.PYTHON_EXTENSION or binary.format is not Format.PE:
                continue
            dlls = [d for d in map(python_dll, binary.needed_names) if d is not None]
            if not dlls:
                continue
            kept = promises(context, binary)
            for dll in dlls:
                broken = next((p for p in kept if not p.accepts(dll)), None)
                if broken is not None:
                    package = staged.package_of(binary.path) if staged is not None else None
                    yield self._report(binary, dll, broken, package)

    def _report(self, binary: Binary, dll: PythonDll, promise: Promise, package: str | None) -> Finding:
        from ..loader.windows import windows_failure  # the Windows loader: only once there is a finding

        expected = promise.expected(dll)
        failing = f'LoadLibraryEx fails ("{windows_failure("python-import", binary.path, dll.name)}")'
        if promise.later and dll.version[1] is not None:
            major, minor = promise.low
            other = (major, minor + 1) if dll.version == promise.low else promise.low
            hexversion = f"0x{major:02X}{minor:02X}0000"
            fix = (
                f"link python3.lib (define Py_LIMITED_API={hexversion}), not {dll.name.removesuffix('.dll')}.lib"
                if promise.abi3
                else f"tag the wheel for the one Python it was built for, or link python3.lib (Py_LIMITED_API={hexversion})"
            )
            message = (
                f"{'abi3 ' if promise.abi3 else ''}extension module imports {dll.name}, not "
                f"{expected[0]}: it is not version-independent — its {promise.source} promises "
                f"{promise.describe()}, and CPython {other[0]}.{other[1]} ships python{other[0]}{other[1]}.dll and "
                f"python{other[0]}.dll only: {failing} — {fix}"
            )
        else:
            what = "a debug build's DLL, " if dll.debug and not promise.debug else ""
            message = (
                f"extension module imports {dll.name}, {what}but its {promise.source} promises "
                f"{promise.describe()}, which ships {' and '.join(expected)} only: {failing} — rebuild it for "
                f"{promise.describe()}{' in release mode' if what else ''} (a build directory reused across "
                "Pythons links the last one's pythonXY.lib)"
            )
        return self.finding(
            binary,
            dll.name,
            message,
            {
                "module": binary.path,
                "dll": dll.name,
                "promise": promise.describe(),
                "source": promise.source,
                "expected": expected,
                "abi3": promise.abi3,
                "package": package,
            },
        )
