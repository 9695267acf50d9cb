"""``libpython-needed``: a Python extension module that NEEDs ``libpython3.X.so``."""

from __future__ import annotations

from collections.abc import Iterator

from ..context import AuditContext
from ..lazyre import LazyPattern
from ..model import Kind
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule

#: ``libpython3.11.so.1.0``, ``libpython3.13t.so``, ``libpython2.7.so.1.0``.
_LIBPYTHON = LazyPattern(r"libpython\d+\.\d+[a-z]*\.so(\.[0-9.]+)?")


class LibpythonNeeded(Rule):
    id = "libpython-needed"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "a Python extension module lists libpython3.X.so in DT_NEEDED: it imports only into a Python built with --enable-shared"
    explain = """\
An extension module gets the interpreter's C API (Py*, _Py*) from the process
that imports it: the python executable exports those symbols. A module that
also lists libpython3.X.so in DT_NEEDED loads a second copy of the interpreter
or, where Python is linked statically — the manylinux images, python.org's
Linux builds, most conda and distribution Pythons built without --enable-shared
— fails to import: "ImportError: libpython3.11.so.1.0: cannot open shared
object file". PEP 513 forbids it for manylinux wheels and auditwheel refuses
such a wheel. Link extension modules without -lpython3.X (the build backends do
this by default; CMake: Python::Module, not Python::Python).
"""
    evidence = {"needed": "the libpython DT_NEEDED entry", "module": "the extension module's path"}

    def check(self, context: AuditContext) -> Iterator[Finding]:
        for binary in context.binaries:
            if binary.kind is not Kind.PYTHON_EXTENSION:
                continue
            for needed in binary.needed_names:
                if _LIBPYTHON.fullmatch(needed):
                    yield self.finding(
                        binary,
                        needed,
                        f"extension module NEEDs {needed}: the interpreter's API comes from the importing "
                        f"process; where Python is linked statically (manylinux, python.org builds) the import "
                        f'fails: "ImportError: {needed}: cannot open shared object file" — link without -lpython',
                        {"needed": needed, "module": binary.path},
                    )
