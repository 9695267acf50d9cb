"""What a distribution declares it needs: ``Requires-Dist`` with markers evaluated for the
installation's target, and its extras; followed through what the declared distributions declare.

``packaging.markers.Marker.evaluate`` fills every key it is not given from the *auditing*
interpreter; the environment here is complete, derived from the target's tag alone.  Keys a tag
cannot decide (``platform_release``, ``platform_version``) make a requirement "maybe declared".
Sources: PEP 508 (environment markers), core metadata (``Requires-Dist``, ``Provides-Extra``),
PEP 685 (extra names normalised).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import TYPE_CHECKING

from ..records import dataclass
from .metadata import Distribution

if TYPE_CHECKING:  # packaging's requirement parser costs ~15 ms to import: only when a line is parsed
    from packaging.markers import Marker
    from packaging.tags import Tag

#: Marker keys no tag decides.
_UNDECIDED = ("platform_release", "platform_version")


def marker_environment(tag: Tag) -> dict[str, str]:
    """Every PEP 508 marker key, for a target named by ``tag`` (``cp311-cp311-manylinux_2_28_x86_64``)."""
    platform = tag.platform
    if platform.startswith("win"):
        system, sys_platform, os_name = "Windows", "win32", "nt"
        machine = {"win_amd64": "AMD64", "win32": "x86", "win_arm64": "ARM64"}.get(platform, "AMD64")
    elif platform.startswith("macosx"):
        system, sys_platform, os_name = "Darwin", "darwin", "posix"
        machine = platform.rsplit("_", 1)[-1]
    else:
        system, sys_platform, os_name = "Linux", "linux", "posix"
        match = re.search(r"(x86_64|aarch64|i686|ppc64le|s390x|armv7l|riscv64)$", platform)
        machine = match.group(1) if match else "x86_64"
    version = re.fullmatch(r"[a-z]+(\d)(\d{1,9})", tag.interpreter)
    python = f"{version.group(1)}.{version.group(2)}" if version else "3.11"
    implementation = "pypy" if tag.interpreter.startswith("pp") else "cpython"
    return {
        "implementation_name": implementation,
        "implementation_version": f"{python}.0",
        "os_name": os_name,
        "platform_machine": machine,
        "platform_python_implementation": "PyPy" if implementation == "pypy" else "CPython",
        "platform_release": "",
        "platform_system": system,
        "platform_version": "",
        "python_full_version": f"{python}.0",
        "python_version": python,
        "sys_platform": sys_platform,
        "extra": "",
    }


@dataclass(frozen=True, slots=True)
class Declared:
    """One distribution a distribution declares, for the target.

    Attributes:
        name: the declared project, normalised.
        extras: the extras it is asked with (``cuda-toolkit[cudart]``: ``("cudart",)``).
        under: the extra of the declaring distribution it is declared under, or ``None``.
        maybe: True when its marker depends on what no tag decides (``platform_release``).
        requirement: the ``Requires-Dist`` line.
        specifier: the versions it asks for (``==12.*``), ``""`` for any.
    """

    name: str
    extras: tuple[str, ...]
    under: str | None
    maybe: bool
    requirement: str
    specifier: str = ""


def declared(requires: Iterable[str], env: Mapping[str, str], extras: Iterable[str] = ()) -> list[Declared]:
    """The requirements that hold for ``env``: unconditional ones, and for each extra in ``extras``
    those under it (each line under the first extra, in ``extras``' order, it holds for).
    Unparsable lines are passed over (``unparsable`` lists them, for a rule to say).

    Linear in lines + extras: a line's marker is evaluated without an extra, then only for the
    extras its marker names (``extra == "gpu"``; every extra only for an ``in`` test on ``extra``),
    never once per line and extra (600 extras, one line each: 360,000 evaluations, 116 s)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    by_name: dict[str, list[str]] = {}
    for extra in extras:
        by_name.setdefault(str(canonicalize_name(extra)), []).append(extra)
    out = []
    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        maybe = req.marker is not None and any(k in str(req.marker) for k in _UNDECIDED)
        for under in (None, *_extras_named(req.marker, by_name)):
            # A marker on what no tag decides may hold on the target: "maybe declared", kept.
            if req.marker is None or maybe or _holds(req.marker, {**env, "extra": under or ""}):
                names = tuple(sorted(str(canonicalize_name(e)) for e in req.extras))
                name = str(canonicalize_name(req.name))
                out.append(Declared(name, names, under, maybe, line, str(req.specifier)))
                break
    return out


def unparsable(requires: Iterable[str]) -> list[tuple[str, str]]:
    """``(line, error)`` of each ``Requires-Dist`` line of ``requires`` that PEP 508 does not parse
    (``barlib >=``), ``error`` the first line of ``packaging``'s ``InvalidRequirement`` message
    (``Expected semicolon (after name with no version specifier) or end``); ``declared`` passes
    these lines over, the others still count."""
    from packaging.requirements import InvalidRequirement, Requirement

    out = []
    for line in requires:
        try:
            Requirement(line)
        except InvalidRequirement as exc:
            out.append((line.strip(), (str(exc).strip().splitlines() or ["invalid"])[0]))
    return out


#: A string literal of a marker, and an ``in`` / ``not in`` test with ``extra`` on either side.
_LITERAL = re.compile(r"\"([^\"]*)\"|'([^']*)'")
_EXTRA_IN = re.compile(r"\bextra\s+(?:not\s+)?in\b|\bin\s+extra\b")


def _extras_named(marker: Marker | None, by_name: Mapping[str, list[str]]) -> list[str]:
    """The extras of ``by_name`` (canonical name -> extras as asked, in order) that ``marker`` can
    hold for beyond ``extra == ""``: those it names as a literal (PEP 685 compares them
    normalised), or all of them when it tests ``extra`` with ``in``."""
    if marker is None or not by_name:
        return []
    text = str(marker)
    if "extra" not in text:
        return []
    if _EXTRA_IN.search(text):
        return [e for extras in by_name.values() for e in extras]
    from packaging.utils import canonicalize_name

    named = {str(canonicalize_name(a or b)) for a, b in _LITERAL.findall(text)}
    return [e for name, extras in by_name.items() if name in named for e in extras]


def _holds(marker: Marker, env: Mapping[str, str]) -> bool:
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

    try:
        return bool(marker.evaluate(dict(env)))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError, TypeError):
        return False  # "a" in "b", an undefined name: a marker no installer could evaluate


@cache
def meta_packages() -> dict[str, dict[str, list[str]]]:
    """The ``Requires-Dist`` lines of meta-packages that install no file of their own
    (``cuda-toolkit``: each extra pulls NVIDIA wheels), by name then version, as read from the
    real wheels by ``scripts/gen_meta_packages.py`` (``packages/data/meta_packages.json``).

    Raises:
        ValueError: the data file is not of the expected shape.
    """
    # beside this module, read with ``open``: ``importlib.resources`` imports ``tempfile``, ``zipfile``
    # and more (~5 ms) on every run over an installed site
    with open(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "meta_packages.json"), encoding="utf-8"
    ) as fh:
        text = fh.read()
    data = json.loads(text)
    if data.get("version") != 1 or not isinstance(data.get("packages"), dict):
        raise ValueError("packages/data/meta_packages.json: not version 1 of the meta-package list")
    packages: dict[str, dict[str, list[str]]] = data["packages"]
    return packages


def closure(
    root: str, dists: Mapping[str, Distribution], env: Mapping[str, str], extras: Iterable[str] = ()
) -> dict[str, Declared]:
    """Every distribution ``root`` declares, directly or through what its declared distributions
    declare (installed ones by their metadata, meta-packages by ``meta_packages``, the provider
    index's distributions by the requirements it recorded), for ``env``:
    name -> the first ``Declared`` met on the way (breadth first, so the nearest)."""
    found: dict[str, Declared] = {}
    queue: list[tuple[str, tuple[str, ...], Declared | None]] = [(root, tuple(extras), None)]
    while queue:
        name, asked, via = queue.pop(0)
        requires = _requires_of(name, dists, via.specifier if via is not None else "")
        for item in declared(requires, env, asked):
            if item.name in found or item.name == root:
                continue
            found[item.name] = (
                item
                if via is None
                else Declared(
                    item.name, item.extras, via.under, via.maybe or item.maybe, via.requirement, item.specifier
                )
            )
            queue.append((item.name, item.extras, found[item.name]))
    return found


def _requires_of(name: str, dists: Mapping[str, Distribution], specifier: str = "") -> tuple[str, ...]:
    """What ``name`` requires: an installed distribution's metadata; for a meta-package, the
    highest version of it ``specifier`` allows (``cuda-toolkit==12.*`` is 12.9.2, not 13.0.3; the
    highest of all when none is allowed); else what the provider index recorded."""
    dist = dists.get(name)
    if dist is not None:
        return dist.requires
    versions = meta_packages().get(name)
    if versions:
        allowed = [v for v in versions if _allows(specifier, v)] or list(versions)
        return tuple(versions[max(allowed, key=_version_key)])
    from .providers import provider_requires

    return provider_requires().get(name, ())


def _allows(specifier: str, version: str) -> bool:
    """True when the PEP 440 ``specifier`` (``""``: any) allows ``version``; an unparsable one allows all."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(specifier).contains(version, prereleases=True)
    except InvalidSpecifier:
        return True


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p[:9]) for p in re.findall(r"\d+", version))  # a 4,301-digit run: int() refuses it
