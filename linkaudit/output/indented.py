"""``json.dumps(value, indent=2, ensure_ascii=False)``, text for text, in half the time.

Python 3.11's C encoder does not indent, so an indented document goes through the pure-Python
encoder, one generator per container: 1.2 s for the 200,000 file entries of a package of 200,000
members (issue 14 §1), as long as the audit's rules together.  Here a container of scalars only
(a file entry, most of a finding) is joined at once from its strings, each string escaped by the
C escaper ``json.encoder.encode_basestring`` that ``json.dumps`` itself uses: 0.6 s.  Anything
else — a float (``NaN``, ``Infinity``), a key that is no string, an object of a type ``json``
turns away — is handed to ``json.dumps`` itself and indented to its depth, so the text is equal
whatever the value (``tests/output/test_indented.py`` compares them on random documents).  A list
of many objects of the same keys can be given as ``Rows``: written from one template, no dict each.

A leaf: it imports nothing of ``linkaudit``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from json.encoder import encode_basestring
from typing import Any

_STEP = "  "


def dumps(value: Any) -> str:
    """``value`` as ``json.dumps(value, indent=2, ensure_ascii=False)`` writes it.

    Raises:
        TypeError, ValueError: as ``json.dumps`` (a value it cannot encode).
        RecursionError: a container holds itself.
    """
    out: list[str] = []
    _dump(value, "", out)
    return "".join(out)


def _scalar(value: Any) -> str | None:
    """The JSON text of a string, ``None``, bool or int (``int.__repr__``, as ``json`` writes an
    ``IntEnum``); ``None`` for anything else."""
    kind = type(value)
    if kind is str:
        return encode_basestring(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if kind is int:
        return int.__repr__(value)
    return None


class Rows:
    """A list of objects with the same keys, given as ``keys`` and one tuple of values per object
    (``rows``), written as ``dumps`` writes that list of dicts: no dict is made per object (a
    report's 200,000 file entries: 0.25 s of dicts; then each written from one template).

    Attributes:
        keys: the objects' keys, in order (strings).
        rows: each object's values, in the order of ``keys``.
    """

    __slots__ = ("keys", "rows")

    def __init__(self, keys: tuple[str, ...], rows: Sequence[tuple[Any, ...]]) -> None:
        self.keys, self.rows = keys, rows

    def as_list(self) -> list[dict[str, Any]]:
        """The objects as dicts (what ``json.dumps`` would be given)."""
        return [dict(zip(self.keys, row, strict=True)) for row in self.rows]

    def text(self, indent: str) -> str:
        """The list's text at depth ``indent``."""
        if not self.rows or not self.keys:
            return dumps(self.as_list()).replace("\n", "\n" + indent)
        inner = indent + _STEP
        field = inner + _STEP
        heads = [f"{field}{encode_basestring(k)}: " for k in self.keys]
        close = "\n" + inner + "}"
        objects = []
        for row in self.rows:
            values = [encode_basestring(v) if type(v) is str else _value(v, field) for v in row]
            objects.append("{\n" + ",\n".join([h + v for h, v in zip(heads, values, strict=True)]) + close)
        return "[\n" + inner + (",\n" + inner).join(objects) + "\n" + indent + "]"


def _value(value: Any, indent: str) -> str:
    """Any value's text at depth ``indent``."""
    text = _scalar(value)
    if text is not None:
        return text
    out: list[str] = []
    _dump(value, indent, out)
    return "".join(out)


def _dump(value: Any, indent: str, out: list[str]) -> None:
    """Append ``value``'s text at depth ``indent`` (the indentation of the line it starts on) to ``out``."""
    text = _scalar(value)
    if text is not None:
        out.append(text)
        return
    kind = type(value)
    if kind is Rows:
        out.append(value.text(indent))
        return
    inner = indent + _STEP
    if kind is dict and value and all(type(k) is str for k in value):
        items = [(encode_basestring(k), _scalar(v)) for k, v in value.items()]
        if all(t is not None for _, t in items):  # scalars only: joined at once
            lines = [f"{k}: {t}" for k, t in items]
            out.append("{\n" + inner + (",\n" + inner).join(lines) + "\n" + indent + "}")
            return
        sep = "{\n" + inner
        for (key, _), v in zip(items, value.values(), strict=True):
            out.append(f"{sep}{key}: ")
            sep = ",\n" + inner
            _dump(v, inner, out)
        out.append("\n" + indent + "}")
    elif kind in (list, tuple) and value:
        sep = "[\n" + inner
        for v in value:
            out.append(sep)
            sep = ",\n" + inner
            _dump(v, inner, out)
        out.append("\n" + indent + "]")
    else:  # floats, empty containers, other types and keys: as json writes them, indented here
        out.append(json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + indent))
