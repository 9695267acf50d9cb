"""``dataclass``, with the methods it generates compiled ahead of time (start-up, issue 15).

``dataclasses.dataclass`` writes each class's ``__init__``, ``__repr__``, ``__eq__``,
``__hash__`` and (frozen) ``__setattr__``/``__delattr__`` as source text and compiles it with
``exec`` when the class is created: about 0.5 ms a frozen slotted class on CPython 3.11, 41 ms
for the 65 classes a plain ELF ``check`` imports — a third of its start-up. The texts depend
only on the class's fields and options, so ``scripts/gen_records.py`` writes every text
linkaudit's classes produce, verbatim, into ``linkaudit/_records.py``, where they are compiled
once into the ``.pyc`` like any other code. This ``dataclass`` runs the standard library's own
``dataclasses.dataclass`` — every check, the field order, slots, ``fields()``, ``replace()`` —
and only where it would compile a text it takes the same text's precompiled function instead.

Same behaviour by construction: a text is looked up whole (not by a hash), its function is
re-made with the globals ``exec`` would have used, and a text not in the table (a class edited
since the generator ran, another CPython) is compiled as ``dataclasses`` does. ``MISSES``
counts those; ``tests/test_records.py`` asserts none on import and that the table matches the
generator's output.

The text is built as CPython 3.11's ``dataclasses._create_fn`` builds it; on any other
version (3.13 has no ``_create_fn``) ``dataclass`` is ``dataclasses.dataclass`` itself.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

#: Texts compiled here because the table lacked them (0 when the table is current).
MISSES = 0

T = TypeVar("T")

_ORIGINAL: Callable[..., Any] | None = getattr(dataclasses, "_create_fn", None)
_TABLE: dict[str, Callable[..., Any]] | None = None


def _table() -> dict[str, Callable[..., Any]] | None:
    """The generated table for this interpreter, or ``None`` (another CPython, or no table)."""
    global _TABLE
    if _TABLE is None:
        try:
            from . import _records
        except ImportError:  # pragma: no cover - a tree without the generated module
            return None
        if sys.version_info[:2] != _records.PYTHON or _ORIGINAL is None:
            return None
        _TABLE = _records.PRECOMPILED
    return _TABLE


def method_text(name: str, args: list[str], body: list[str], parameters: list[str], returns: bool) -> str:
    """The text CPython 3.11's ``dataclasses._create_fn`` compiles: a factory ``__create_fn__(parameters)``
    defining the method ``name(args)`` (``->_return_type`` when ``returns``) with the lines of ``body``,
    and returning it. ``scripts/gen_records.py`` builds its table with this same function."""
    annotation = "->_return_type" if returns else ""
    lines = "\n".join(f"  {b}" for b in body)
    return f"def __create_fn__({', '.join(parameters)}):\n def {name}({','.join(args)}){annotation}:\n{lines}\n return {name}"


def _create_fn(
    name: str,
    args: list[str],
    body: list[str],
    *,
    globals: dict[str, Any] | None = None,
    locals: dict[str, Any] | None = None,
    return_type: Any = dataclasses.MISSING,
) -> Any:
    """``dataclasses._create_fn``: the text it would ``exec``, taken precompiled from the table.

    The text: a factory ``__create_fn__`` whose parameters are ``locals``' names (plus
    ``_return_type`` when a return type is given) and whose body defines the method ``name``
    with ``args`` and the lines of ``body``, and returns it.
    """
    global MISSES
    table = _TABLE or {}
    given = dict(locals or {})
    if return_type is not dataclasses.MISSING:
        given["_return_type"] = return_type
    text = method_text(name, args, body, list(given), return_type is not dataclasses.MISSING)
    factory = table.get(text)
    if factory is None:
        MISSES += 1
        assert _ORIGINAL is not None
        return _ORIGINAL(name, args, body, globals=globals, locals=locals, return_type=return_type)
    scope = globals if globals is not None else vars(dataclasses)  # exec's default: the caller's
    return types.FunctionType(factory.__code__, scope)(**given)


def _dataclass(cls: type[T] | None = None, /, **options: Any) -> Any:
    """``dataclasses.dataclass(cls, **options)`` with precompiled methods (see the module).

    Used as ``@dataclass`` or ``@dataclass(frozen=True, slots=True, ...)``; returns the class
    (a new one with ``slots=True``), exactly as ``dataclasses.dataclass`` does.
    """

    def make(c: type[T]) -> type[T]:
        if _table() is None:
            return dataclasses.dataclass(c, **options)
        dataclasses._create_fn = _create_fn  # type: ignore[attr-defined]
        try:
            return dataclasses.dataclass(c, **options)
        finally:
            dataclasses._create_fn = _ORIGINAL  # type: ignore[attr-defined]

    return make if cls is None else make(cls)


if TYPE_CHECKING:  # type checkers know dataclasses.dataclass's semantics; the run takes the fast one
    from dataclasses import dataclass as dataclass
else:
    dataclass = _dataclass
