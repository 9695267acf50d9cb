"""Audit configuration: what the user asked for, parsed and validated.

The CLI turns options into an ``AuditConfig``; the library (``linkaudit.audit``)
takes one.  Nothing here reads the environment or the host.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ConfigError

_VERSION_NAME = re.compile(r"^(?P<prefix>[A-Za-z][A-Za-z0-9_]*?)_(?P<num>\d+(?:\.\d+)*)$")


def parse_version_name(name: str) -> tuple[str, tuple[int, ...]] | None:
    """Split a symbol version name into (prefix, numbers).

    ``"GLIBC_2.34"`` -> ``("GLIBC", (2, 34))``; ``"GLIBCXX_3.4.30"`` ->
    ``("GLIBCXX", (3, 4, 30))``; ``"CXXABI_TM_1"`` -> ``("CXXABI_TM", (1,))``;
    ``"GLIBC_PRIVATE"`` or ``"libnvrtc.so.13"`` -> ``None``.
    """
    m = _VERSION_NAME.match(name)
    if m is None:
        return None
    return m.group("prefix"), tuple(int(p) for p in m.group("num").split("."))


@dataclass(frozen=True, slots=True)
class VersionCeiling:
    """The highest symbol version allowed for one prefix, e.g. ``GLIBC_2.17``.

    Attributes:
        prefix: ``"GLIBC"``, ``"GLIBCXX"``, ``"CXXABI"``, ``"GCC"``...
        version: the numeric part, compared as a tuple of ints.
    """

    prefix: str
    version: tuple[int, ...]

    @property
    def text(self) -> str:
        """The ceiling as written, e.g. ``"GLIBC_2.17"``."""
        return f"{self.prefix}_{'.'.join(map(str, self.version))}"

    @classmethod
    def parse(cls, text: str) -> VersionCeiling:
        """Parse ``PREFIX_N[.N...]``.

        Raises:
            ConfigError: ``text`` is not of that form.
        """
        parsed = parse_version_name(text.strip())
        if parsed is None:
            raise ConfigError(
                f"--max-version {text!r}: expected a version name such as GLIBC_2.17, "
                "GLIBCXX_3.4.19, CXXABI_1.3.7 or GCC_4.8.0"
            )
        return cls(*parsed)


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """What to audit for.

    Attributes:
        max_versions: version ceilings for ``symbol-version`` (at most one per prefix).
        ignore: ids of rules not to run.
    """

    max_versions: tuple[VersionCeiling, ...] = ()
    ignore: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for c in self.max_versions:
            if c.prefix in seen:
                raise ConfigError(f"--max-version given twice for {c.prefix}")
            seen.add(c.prefix)
