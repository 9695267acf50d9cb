"""``linkaudit.records``: dataclasses' method texts precompiled (start-up, issue 15)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import CodeType

import pytest

from linkaudit import _records

ROOT = Path(__file__).resolve().parent.parent
CURRENT = sys.version_info[:2] == _records.PYTHON
needs_same_python = pytest.mark.skipif(
    not CURRENT, reason=f"linkaudit/_records.py is generated for CPython {_records.PYTHON}; plain dataclasses here"
)


@needs_same_python
def test_the_table_is_what_the_generator_writes() -> None:
    """Edit or add a dataclass, then run ``python scripts/gen_records.py``: this fails until then."""
    done = subprocess.run([sys.executable, "scripts/gen_records.py", "--check"], cwd=ROOT, check=False)
    assert done.returncode == 0, "linkaudit/_records.py is stale: run python scripts/gen_records.py"


@needs_same_python
def test_every_class_takes_the_precompiled_methods() -> None:
    """Importing every module compiles no dataclass method text (a regression puts ~0.5 ms a class
    back on every run's start-up)."""
    probe = textwrap.dedent(
        """
        import importlib, pkgutil, linkaudit
        from linkaudit import records
        for info in pkgutil.walk_packages(linkaudit.__path__, "linkaudit."):
            if info.name != "linkaudit.__main__":
                try:
                    importlib.import_module(info.name)
                except ImportError:
                    pass
        print(records.MISSES)
        """
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0"]


def _shape(code: CodeType) -> tuple[object, ...]:
    """What a code object does: its bytecode, names and constants (nested code objects by shape)."""
    consts = tuple(_shape(c) if isinstance(c, CodeType) else c for c in code.co_consts)
    return (code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars, consts)


def test_each_precompiled_function_is_its_text_compiled() -> None:
    """Same behaviour by construction: each function is exactly what ``exec`` of its text makes."""
    assert _records.PRECOMPILED
    for text, function in _records.PRECOMPILED.items():
        namespace: dict[str, object] = {}
        exec(compile(text, "<string>", "exec", dont_inherit=True), {}, namespace)  # as dataclasses does
        made = namespace["__create_fn__"]
        assert _shape(made.__code__) == _shape(function.__code__), text  # type: ignore[attr-defined]


def test_a_class_behaves_as_a_dataclass() -> None:
    """Equality, hashing, frozenness, repr, fields, replace, match_args and slots of a hot-path class."""
    import dataclasses

    from linkaudit.model import NeededLibrary

    a = NeededLibrary("libc.so.6")
    b = NeededLibrary("libc.so.6")
    assert a == b and hash(a) == hash(b) and a is not b
    assert repr(a).startswith("NeededLibrary(name='libc.so.6'")
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.name = "x"  # type: ignore[misc]
    assert dataclasses.fields(a)[0].name == "name"
    assert dataclasses.replace(a, name="libm.so.6").name == "libm.so.6"
    assert NeededLibrary.__match_args__[0] == "name" and not hasattr(a, "__dict__")
