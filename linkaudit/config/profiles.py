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
import re
import tomllib
from dataclasses import dataclass

from ..errors import ConfigError

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules", "data", "profiles.toml")
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
        allowed_libraries: the libraries (SONAMEs) a system of the policy provides, which a
            package may NEED without shipping them (``external-library``); empty: no such list.
    """

    name: str
    summary: str
    date: str
    source: str
    max_versions: tuple[str, ...]
    allowed_libraries: tuple[str, ...] = ()


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
        allowed = entry.get("allowed_libraries", [])
        if not all(isinstance(v, str) for v in [*fields, *versions, *allowed]):
            raise ConfigError(f"{_PATH}: profiles.{name}: values must be strings")
        out[name] = Profile(name, fields[0], fields[1], fields[2], tuple(versions), tuple(allowed))
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


#: Legacy manylinux tags and the glibc they stand for (PEP 513, PEP 571, PEP 599).
_LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_\w+$")


@dataclass(frozen=True, slots=True)
class WheelPolicy:
    """What a wheel's own name promises: symbol-version ceilings and the libraries it may need
    from the system.

    Attributes:
        tag: the platform tag they come from, e.g. ``"manylinux_2_17_x86_64"`` (the lowest glibc
            among a compressed tag set such as ``manylinux_2_17_x86_64.manylinux2014_x86_64``).
        package: the package file, as given.
        ceilings: ``("GLIBC_2.17", "GLIBCXX_3.4.19", ...)``: the shipped ``manylinux_X_Y``
            profile's when there is one and the tag is x86_64's (the profiles' libstdc++ and
            libgcc ceilings are x86_64's), else ``GLIBC_X.Y`` alone.
        allowed_libraries: the policy's list of system libraries: the shipped profile's of the
            highest glibc not above the tag's, else the lowest one's (every manylinux policy lists
            the same libraries, ``libmvec.so.1`` from 2.28 on).
        policy: the profile the list comes from (``"manylinux_2_17"``), or ``None``.
    """

    tag: str
    package: str
    ceilings: tuple[str, ...]
    allowed_libraries: tuple[str, ...] = ()
    policy: str | None = None


def wheel_platform_tags(package: str) -> tuple[str, ...]:
    """The platform tags of a wheel's file name, in the order written: ``("manylinux_2_17_x86_64",
    "manylinux2014_x86_64")`` for PEP 425's compressed tag set ``a.b``; empty when ``package`` is not
    named as a wheel (PEP 427: ``{name}-{ver}(-{build})?-{python}-{abi}-{platform}.whl``)."""
    base = os.path.basename(package)
    if not base.endswith(".whl"):
        return ()
    parts = base[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        return ()
    return tuple(t for t in parts[-1].split(".") if t)


def implied_by_wheel(package: str) -> WheelPolicy | None:
    """The symbol-version ceilings a wheel's platform tag promises, or ``None`` (not a wheel name,
    or no manylinux or macOS tag: ``linux_x86_64``, ``musllinux_1_2_x86_64``, ``any``).

    A ``macosx_X_Y_ARCH`` tag promises macOS X.Y: the ceiling ``macos=X.Y`` (rule min-os-version).

    A wheel tagged ``manylinux_X_Y_ARCH`` claims to load with glibc X.Y (PEP 600); a wheel with
    several platform tags (``a.b``, PEP 425's compressed tag set) claims every one, so the lowest
    glibc applies — as ``auditwheel show`` and pip's tag matching read it.  Source: PEP 427 (the
    file name ``{name}-{ver}(-{build})?-{python}-{abi}-{platform}.whl``), PEP 425, PEP 600.
    """
    tags = wheel_platform_tags(package)
    macos = [m for m in (re.fullmatch(r"macosx_(\d+)_(\d+)_\w+", t) for t in tags) if m]
    if macos:
        # A macOS wheel promises its lowest tagged release (delocate checks the same).
        lowest = min(macos, key=lambda m: (int(m.group(1)), int(m.group(2))))
        return WheelPolicy(lowest.group(0), package, (f"macos={int(lowest.group(1))}.{int(lowest.group(2))}",))
    best: tuple[tuple[int, int], str] | None = None
    for tag in tags:
        match = _MANYLINUX.match(tag)
        glibc = (int(match.group(1)), int(match.group(2))) if match else None
        legacy = tag.split("_", 1)[0]
        if glibc is None and legacy in _LEGACY_MANYLINUX and tag.startswith(legacy + "_"):
            glibc = _LEGACY_MANYLINUX[legacy]
        if glibc is not None and (best is None or glibc < best[0]):
            best = (glibc, tag)
    if best is None:
        return None
    (major, minor), tag = best
    # The shipped profiles' GLIBCXX/CXXABI/GCC ceilings are x86_64's; other machines get GLIBC alone.
    profile = profiles().get(f"manylinux_{major}_{minor}") if tag.endswith("_x86_64") else None
    ceilings = profile.max_versions if profile is not None else (f"GLIBC_{major}.{minor}",)
    listings = []
    for candidate in profiles().values():
        match = re.fullmatch(r"manylinux_(\d+)_(\d+)", candidate.name)
        if match and candidate.allowed_libraries:
            listings.append(((int(match.group(1)), int(match.group(2))), candidate))
    listings.sort(key=lambda t: t[0])
    fitting = [c for glibc, c in listings if glibc <= (major, minor)]
    listing = fitting[-1] if fitting else (listings[0][1] if listings else None)
    return WheelPolicy(
        tag,
        package,
        ceilings,
        listing.allowed_libraries if listing is not None else (),
        listing.name if listing is not None else None,
    )
