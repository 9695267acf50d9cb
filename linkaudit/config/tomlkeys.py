"""How deep the dotted keys of a TOML document go, told before ``tomllib`` parses it.

``tomllib`` (CPython 3.11-3.13) keeps every prefix of a dotted key (``a.b.c = 1`` marks
``a``, ``a.b`` and ``a.b.c``), so one key of *n* parts costs time and memory quadratic in *n*:
an 80 KB ``pyproject.toml`` holding one key of 40,000 parts took 28 s and 6 GB, found on its
own in the working directory.  No configuration needs more than a handful of parts, so a key of
more than ``MAX_KEY_PARTS`` parts is refused before the parser sees it; the scan is linear.
"""

from __future__ import annotations

import re

#: Most parts one dotted key (``a.b.c``) or table header may have.
MAX_KEY_PARTS = 128

# One token each, each alternative linear (no nested quantifier can backtrack): strings and
# comments are passed over whole, so that dots inside them are never counted.
_TOKEN = re.compile(
    r'"""(?:[^"\\]|\\.|"(?!""))*(?:"""|\Z)'  # multi-line basic string
    r"|'''(?:[^']|'(?!''))*(?:'''|\Z)"  # multi-line literal string
    r'|"(?:[^"\\\n]|\\.)*"?'  # basic string (a quoted key part)
    r"|'[^'\n]*'?"  # literal string
    r"|#[^\n]*"  # comment
    r"|(?P<part>[A-Za-z0-9_-]+)"  # bare key part
    r"|(?P<dot>\.)"
    r"|(?P<blank>[ \t]+)"
    r"|.",  # anything else ends a key
    re.S,
)


def deepest_key(text: str) -> int:
    """The most parts of one dotted key in the TOML document ``text`` (1 for ``a = 1``, 3 for
    ``a."b".c = 1`` or ``[a.b.c]``; a float's ``1.5`` counts as 2).  An approximation that never
    undercounts a valid document's keys: only strings and comments are skipped, whitespace
    around the dots is allowed (TOML v1.0.0, "Keys")."""
    deepest = parts = 0
    after_dot = False
    for token in _TOKEN.finditer(text):
        kind = token.lastgroup
        if kind == "blank":
            continue
        if kind == "dot":
            if parts == 0 or after_dot:
                parts = 0
            after_dot = parts > 0
            continue
        is_part = kind == "part" or (token.group()[:1] in "\"'" and token.group()[:3] not in ('"""', "'''"))
        parts = (parts + 1 if after_dot else 1) if is_part else 0
        after_dot = False
        deepest = max(deepest, parts)
    return deepest


def too_deep(text: str) -> str | None:
    """Why ``text`` is refused before it is parsed (a key of more than ``MAX_KEY_PARTS`` parts), or ``None``."""
    depth = deepest_key(text)
    if depth <= MAX_KEY_PARTS:
        return None
    return f"a dotted key of {depth} parts (at most {MAX_KEY_PARTS}: the TOML parser's cost grows with its square)"
