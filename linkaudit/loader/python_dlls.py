"""The interpreter DLLs CPython for Windows ships beside ``python.exe``, read from a DLL's name:
``python312.dll``, the Stable ABI's ``python3.dll`` (PEP 384), free-threaded ``python313t.dll``,
debug ``python312_d.dll``.  Kept apart from ``loader.windows`` so that a rule can read a name
without importing the Windows loader (``tests/test_startup.py``)."""

from __future__ import annotations

import re

from ..lazyre import LazyPattern
from ..records import dataclass

#: ``python312.dll``, ``python3.dll``, ``python313t.dll`` (free-threaded), ``python312_d.dll``
#: (debug), ``python3t_d.dll``: CPython's PC/layout/support/constants.py (``PYTHON_DLL_NAME``,
#: ``PYTHON_STABLE_DLL_NAME`` and their ``FREETHREADED_`` forms), ``_d`` from PCbuild's debug builds.
_DLL = LazyPattern(r"python(\d)(\d{0,3})(t?)(_d)?\.dll", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class PythonDll:
    """An interpreter DLL a module imports, as CPython for Windows names it.

    Attributes:
        name: as imported (``python312.dll``).
        version: ``(major, minor)``, or ``(major, None)`` for the Stable ABI's ``python3.dll``.
        freethreaded: ``python313t.dll``, ``python3t.dll``.
        debug: ``python312_d.dll``.
    """

    name: str
    version: tuple[int, int | None]
    freethreaded: bool
    debug: bool

    def builds(self) -> str:
        """The Pythons that ship it beside python.exe: ``CPython 3.12``, ``free-threaded CPython
        3.13``, ``debug CPython 3.12``, ``every CPython 3`` (``python3.dll``)."""
        major, minor = self.version
        flags = "".join(f"{f} " for f, on in (("debug", self.debug), ("free-threaded", self.freethreaded)) if on)
        return f"every {flags}CPython {major}" if minor is None else f"{flags}CPython {major}.{minor}"


def python_dll(name: str) -> PythonDll | None:
    """``name`` parsed as a CPython interpreter DLL (PC/layout/support/constants.py), or ``None``."""
    m = _DLL.fullmatch(name)
    if m is None:
        return None
    minor = int(m.group(2)) if m.group(2) else None
    return PythonDll(name, (int(m.group(1)), minor), bool(m.group(3)), bool(m.group(4)))
