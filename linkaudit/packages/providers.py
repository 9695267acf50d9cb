"""The provider index: which PyPI distributions ship a shared library, by its SONAME, as read from
the real wheels' files by ``scripts/gen_provider_index.py`` (``packages/data/providers.json``)."""

from __future__ import annotations

import json
import os
from functools import cache

#: The index, beside this module (read with ``open``: ``importlib.resources`` would import
#: ``tempfile`` and more on the path of every run that finds a library missing).
_INDEX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "providers.json")


def _index_text() -> str:
    with open(_INDEX, encoding="utf-8") as fh:
        return fh.read()


@cache
def providers() -> dict[str, tuple[str, ...]]:
    """SONAME -> the distributions that ship a library of that SONAME.

    Raises:
        ValueError: the data file is not version 1 of the index, or an entry is not a list of names.
    """
    text = _index_text()
    data = json.loads(text)
    sonames = data.get("sonames")
    if data.get("version") != 1 or not isinstance(sonames, dict):
        raise ValueError("packages/data/providers.json: not version 1 of the provider index")
    out: dict[str, tuple[str, ...]] = {}
    for soname, dists in sonames.items():
        if not isinstance(dists, list) or not all(isinstance(d, str) for d in dists):
            raise ValueError(f"packages/data/providers.json: {soname}: not a list of distribution names")
        out[soname] = tuple(dists)
    return out


@cache
def provider_requires() -> dict[str, tuple[str, ...]]:
    """Distribution of the index -> its ``Requires-Dist`` lines (read from the same wheels).

    Raises:
        ValueError: the data file's ``requires`` is not a mapping of lists of strings.
    """
    text = _index_text()
    requires = json.loads(text).get("requires", {})
    if not isinstance(requires, dict) or not all(
        isinstance(v, list) and all(isinstance(x, str) for x in v) for v in requires.values()
    ):
        raise ValueError("packages/data/providers.json: requires: not a mapping of Requires-Dist lists")
    return {name: tuple(lines) for name, lines in requires.items()}
