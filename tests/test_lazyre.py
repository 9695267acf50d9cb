"""``linkaudit.lazyre.LazyPattern`` answers as the compiled pattern, compiling once on first use."""

from __future__ import annotations

import re

from linkaudit.lazyre import LazyPattern


def test_a_lazy_pattern_answers_as_the_compiled_one() -> None:
    lazy = LazyPattern(r"(?<![0-9])0+(?=[0-9])|\.SO$", re.IGNORECASE)
    eager = re.compile(lazy.pattern, lazy.flags)
    assert lazy._compiled is None  # nothing compiled before the first call
    for text in ("libfoo.so", "a007b", "x.so.1", "", "00", "0a0", "libX.So"):
        for method in ("match", "fullmatch", "search"):
            got, want = getattr(lazy, method)(text), getattr(eager, method)(text)
            assert (got and got.span()) == (want and want.span())
        assert lazy.sub("", text) == eager.sub("", text)
        assert lazy.sub("-", text, 1) == eager.sub("-", text, 1)
        assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in eager.finditer(text)]
    for pos, endpos in ((1, 2), (1, 3), (0, 4), (2, 2)):
        got, want = lazy.search("a00b", pos, endpos), eager.search("a00b", pos, endpos)
        assert (got and got.span()) == (want and want.span())
    assert lazy.compiled is lazy.compiled  # compiled once
