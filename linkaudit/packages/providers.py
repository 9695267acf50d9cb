"""The provider index: which PyPI distributions ship a shared library, by its SONAME (ELF) or the
DLL name its export directory records (PE), as read from the real wheels' files by
``scripts/gen_provider_index.py`` (``packages/data/providers.json``, version 2: with the platform
tags of the wheels each name was read from)."""

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


def _document() -> dict[str, object]:
    """The index, its version checked.

    Raises:
        ValueError: not version 1 or 2 of the index.
    """
    data = json.loads(_index_text())
    if not isinstance(data, dict) or data.get("version") not in (1, 2) or not isinstance(data.get("sonames"), dict):
        raise ValueError("packages/data/providers.json: not version 1 or 2 of the provider index")
    return data


def _names(data: dict[str, object], key: str, what: str) -> dict[str, tuple[str, ...]]:
    """``data[key]``: name -> a list of strings, as tuples; a DLL name (``*.dll``) in lower case,
    as Windows compares them.

    Raises:
        ValueError: not a mapping of lists of strings.
    """
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise ValueError(f"packages/data/providers.json: {key}: not a mapping")
    out: dict[str, tuple[str, ...]] = {}
    for name, values in table.items():
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"packages/data/providers.json: {name}: not a list of {what}")
        out[name.lower() if name.lower().endswith(".dll") else name] = tuple(values)
    return out


@cache
def providers() -> dict[str, tuple[str, ...]]:
    """SONAME (or lower-case DLL name) -> the distributions that ship a library of that name.

    Raises:
        ValueError: the data file is not version 1 or 2 of the index, or an entry is not a list of names.
    """
    return _names(_document(), "sonames", "distribution names")


@cache
def provider_platforms() -> dict[str, tuple[str, ...]]:
    """SONAME (or lower-case DLL name) -> the platform tags of the wheels it was read from
    (``manylinux2014_aarch64``, ``win_amd64``); a name version 1 recorded has none.

    Raises:
        ValueError: the data file's ``platforms`` is not a mapping of lists of tags.
    """
    return _names(_document(), "platforms", "platform tags")


@cache
def provider_requires() -> dict[str, tuple[str, ...]]:
    """Distribution of the index -> its ``Requires-Dist`` lines (read from the same wheels).

    Raises:
        ValueError: the data file's ``requires`` is not a mapping of lists of strings.
    """
    return _names(_document(), "requires", "Requires-Dist lines")


_CONDA_INDEX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "conda_providers.json")


@cache
def _conda_document() -> dict[str, object]:
    """``packages/data/conda_providers.json`` (curated; its ``source`` says from where), version checked.

    Raises:
        ValueError: not version 1 of the conda index, or its ``sysroot`` has no list of libraries.
    """
    with open(_CONDA_INDEX, encoding="utf-8") as fh:
        data = json.loads(fh.read())
    sysroot = data.get("sysroot") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("version") != 1
        or not isinstance(data.get("sonames"), dict)
        or not isinstance(sysroot, dict)
        or not isinstance(sysroot.get("libraries"), list)
    ):
        raise ValueError("packages/data/conda_providers.json: not version 1 of the conda provider index")
    return data


def conda_providers() -> dict[str, tuple[str, ...]]:
    """SONAME -> the conda-forge packages that ship it (current name first, then old aliases).

    Raises:
        ValueError: the data file is not version 1 of the conda index, or an entry is not a list of names.
    """
    return _names(_conda_document(), "sonames", "conda package names")


def conda_sysroot_libraries() -> frozenset[str]:
    """glibc's libraries and loaders, which conda-forge's ``sysroot_linux-*`` ships: present on
    every target of a conda package (conda-build never calls them overlinking).

    Raises:
        ValueError: the data file is not version 1 of the conda index.
    """
    libraries = _conda_document()["sysroot"]["libraries"]  # type: ignore[index]
    return frozenset(str(n) for n in libraries)
