"""Profiles: named target baselines shipped as data (``rules/data/profiles.toml``).

A profile is what a packager targets — ``manylinux_2_28``, ``conda-forge:2.17`` — and sets the
symbol-version ceilings (``GLIBC_2.28``, ``GLIBCXX_3.4.24``, ...) that ``symbol-version``
enforces.  Each is dated and cites its source.  ``check --profile NAME`` (or ``profile = NAME``
in ``linkaudit.toml``) starts from it; ``--max-version`` and the file's ``max_versions``
replace a ceiling of the same prefix.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass

from .errors import ConfigError

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "rules", "data", "profiles.toml")
DEFAULT = "cuda"


@dataclass(frozen=True, slots=True)
class Profile:
    """One target baseline.

    Attributes:
        name: ``"manylinux_2_28"``.
        summary: one line.
        date: when its data was last checked (ISO date).
        source: where its data comes from (PEP, policy file, documentation).
        max_versions: the ceilings it sets, e.g. ``("GLIBC_2.28", "GLIBCXX_3.4.24")``.
    """

    name: str
    summary: str
    date: str
    source: str
    max_versions: tuple[str, ...]


@functools.cache
def profiles() -> dict[str, Profile]:
    """Every profile by name, in file order.

    Raises:
        ConfigError: the data file is unreadable or malformed (a packaging bug), naming the key.
    """
    try:
        with open(_PATH, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{_PATH}: cannot read the profile data: {exc}") from exc
    if data.get("schema") != 1:
        raise ConfigError(f"{_PATH}: schema {data.get('schema')!r}, expected 1")
    out = {}
    for name, entry in data.get("profiles", {}).items():
        try:
            versions = entry["max_versions"]
            fields = [entry[k] for k in ("summary", "date", "source")]
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"{_PATH}: profiles.{name}: missing {exc}") from exc
        if not all(isinstance(v, str) for v in [*fields, *versions]):
            raise ConfigError(f"{_PATH}: profiles.{name}: values must be strings")
        out[name] = Profile(name, fields[0], fields[1], fields[2], tuple(versions))
    return out


def get_profile(name: str) -> Profile:
    """The profile ``name``.

    Raises:
        ConfigError: no such profile (the message lists them).
    """
    known = profiles()
    if name not in known:
        raise ConfigError(f"--profile {name}: no such profile (known: {', '.join(known)})")
    return known[name]
