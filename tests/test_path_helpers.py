"""The hot path's own path helpers spell what posixpath and os.path spell (issue 14 §1)."""

from __future__ import annotations

import os
import posixpath

import pytest

from linkaudit.formats.held import child
from linkaudit.packages.staging import parent_of

RELS = ["", "a", "a/b", "a/b/c", "/a", "/", "//a", "a//b", "a/b/", "a//", "///", "x/./y", "a/../b", "é/ü", " a/b "]


@pytest.mark.parametrize("rel", RELS)
def test_parent_of_is_dirname(rel: str) -> None:
    assert parent_of(rel) == posixpath.dirname(rel)


@pytest.mark.parametrize("directory", ["", "/", "a", "a/", "/x/y", "//", "/x/y/"])
def test_child_is_join(directory: str) -> None:
    assert child(directory, "lib.so") == os.path.join(directory, "lib.so")


def _safe_name_reference(name: str) -> str | None:
    """safe_name as it was before its fast path: the oracle."""
    import re

    from linkaudit.packages import limits

    if not name or "\0" in name or len(name) > limits.MAX_NAME_BYTES or name.count("/") > limits.MAX_NAME_DEPTH:
        return None
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[/\\]", name):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." or ".." in p.split("\\") for p in parts):
        return None
    return "/".join(parts)


def test_safe_name_equals_its_reference_on_random_names() -> None:
    import random

    from linkaudit.packages.staging import safe_name

    rng = random.Random(7)
    atoms = ["a", "lib", ".", "..", "", "\\", "/", "C:", "c:", "é:", "1:", ":", "\0", "x..y", "..\\x", " "]
    for _ in range(20000):
        name = "".join(rng.choice(atoms) + rng.choice(["/", "", "\\"]) for _ in range(rng.randint(0, 6)))
        assert safe_name(name) == _safe_name_reference(name), repr(name)


@pytest.mark.parametrize("directory", ["", "/", "a", "a/", "/x/y", "//"])
@pytest.mark.parametrize("name", ["lib.so", "a/b", "a/b/", "é b"])
def test_child_of_a_relative_name_is_join(directory: str, name: str) -> None:
    assert child(directory, name) == os.path.join(directory, name)
