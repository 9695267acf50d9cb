"""A regular expression compiled on its first use (start-up, issue 15).

``re.compile`` costs 0.05-0.5 ms a pattern; a module-level pattern that only some inputs need
(a wheel's platform tag, a Mach-O ``@loader_path``) is paid by every run that imports the module.
``LazyPattern(p)`` is declared the same way and compiles ``re.compile(p, flags)`` when one of its
methods is first called.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator


class LazyPattern:
    """``re.compile(pattern, flags)`` on first use: ``match``, ``fullmatch``, ``search``,
    ``finditer`` and ``sub`` behave as the compiled ``re.Pattern[str]``'s methods."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern (compiled by the first call)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return compiled

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.match``."""
        return self.compiled.match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.fullmatch``."""
        return self.compiled.fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """``re.Pattern.search``."""
        return self.compiled.search(string, pos, endpos)

    def finditer(self, string: str) -> Iterator[re.Match[str]]:
        """``re.Pattern.finditer``."""
        return self.compiled.finditer(string)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """``re.Pattern.sub``."""
        return self.compiled.sub(repl, string, count)
