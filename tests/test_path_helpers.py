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
