"""What every renderer shares: the JSON documents' schema version and the escapes that keep names
from binaries valid UTF-8 (``utf8_safe``, ``utf8_tree``) and inert on a terminal (``text_safe``).

A leaf: it imports nothing of ``linkaudit``; ``output`` re-exports it and each format module
imports it from here, so the package and its formats never import each other.
"""

from __future__ import annotations

import re
from typing import Any

from ..lazyre import LazyPattern

#: Version of the JSON documents; evolves additively (new optional fields only).
SCHEMA_VERSION = "linkaudit/1"


# Characters a text report never prints raw: C0 controls (newline, CR, ESC...),
# DEL, C1 controls (U+009B is a CSI on some terminals) and the Unicode bidi
# overrides and isolates, which reorder what a terminal shows.
_UNSAFE = LazyPattern(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def utf8_safe(text: str) -> str:
    """``text`` with every byte that was not valid UTF-8 written ``\\xNN``.

    Names from binaries and file names are decoded with ``surrogateescape``
    (bytes that are not UTF-8 kept as lone surrogates, U+DC80-U+DCFF); those
    cannot be encoded, so every renderer passes its strings through here: the
    result is valid UTF-8 (``b"lib\\xff.so"`` -> ``"lib\\\\xff.so"``).
    """
    if text.isascii():
        return text
    return name_bytes(text).decode("utf-8", "backslashreplace")


def name_bytes(text: str) -> bytes:
    """``text`` as UTF-8 bytes: a name's undecodable bytes as they were (``surrogateescape``), a
    lone surrogate that is no escaped byte (a JSON ``"\\ud800"``) as CESU-8 (``surrogatepass``);
    never ``UnicodeEncodeError``."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that is no escaped byte
        return text.encode("utf-8", "surrogatepass")


def _escape(match: re.Match[str]) -> str:
    ch = match.group()
    named = _NAMED.get(ch)
    if named is not None:
        return named
    code = ord(ch)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def text_safe(text: str) -> str:
    """``utf8_safe(text)`` with control characters escaped too (``\\n``, ``\\r``, ``\\t``, ``\\x1b``, ``\\u202e``).

    For text reports: a name holding a newline or a terminal escape cannot fake
    report lines or drive the terminal.
    """
    text = utf8_safe(text)
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def utf8_tree(value: Any) -> Any:
    """A JSON-ready value (dicts, lists, tuples, strings, scalars) with every string passed through ``utf8_safe``.

    Mappings become dicts with string keys, tuples become lists.
    """
    if isinstance(value, str):
        return utf8_safe(value)
    if isinstance(value, dict) or hasattr(value, "items"):
        return {utf8_safe(str(k)): utf8_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [utf8_tree(v) for v in value]
    return value
