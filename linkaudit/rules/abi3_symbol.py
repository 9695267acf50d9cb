"""``abi3-symbol``: an abi3 extension module that uses CPython symbols outside the Stable ABI, or
added to it after the oldest Python its wheel claims."""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from ..context import AuditContext
from ..errors import ConfigError
from ..model import Binary, Kind
from ..report import Finding, Severity
from .base import Rule, preview

if TYPE_CHECKING:  # packaging comes with an installation only
    from packaging.tags import Tag

    from ..packages.installation import InstallationModel

_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "stable_abi.json")
_PREFIXES = ("Py", "_Py")


@functools.cache
def stable_abi() -> Mapping[str, tuple[int, int]]:
    """Every function and data symbol of the Stable ABI -> the release it was added in
    (``rules/data/stable_abi.json``, from CPython's ``Misc/stable_abi.toml`` by
    ``scripts/gen_stable_abi.py``).

    Raises:
        ConfigError: the data file is unreadable or malformed (a packaging bug).
    """
    try:
        with open(_PATH, encoding="utf-8") as fh:
            doc = json.load(fh)
        out = {}
        for name, item in doc["symbols"].items():
            major, minor = (int(p) for p in str(item["added"]).split("."))
            out[name] = (major, minor)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ConfigError(f"{_PATH}: cannot read the Stable ABI data: {exc}") from exc
    if doc.get("schema") != 1 or not out:
        raise ConfigError(f"{_PATH}: schema {doc.get('schema')!r}, expected 1, with symbols")
    return out


def abi3_floor(package: str | None, binary: Binary) -> tuple[int, int] | None:
    """The oldest Python an abi3 module claims: the wheel's ``cp3X-abi3`` tags (the lowest
    ``cp3X``), ``(3, 2)`` for a module named ``*.abi3.so`` outside such a wheel; ``None`` when
    the module is not abi3.  Source: PEP 384, PEP 425 (``{python}-{abi}-{platform}``)."""
    base = os.path.basename(package or "")
    parts = base[: -len(".whl")].split("-") if base.endswith(".whl") else []
    if len(parts) in (5, 6) and "abi3" in parts[-2].split("."):
        versions = [(3, int(m.group(1))) for m in (re.fullmatch(r"cp3(\d{1,9})", t) for t in parts[-3].split(".")) if m]
        return min(versions) if versions else (3, 2)
    return (3, 2) if ".abi3." in os.path.basename(binary.path) else None


def _tag_floor(tags: Iterable[Tag]) -> tuple[int, int] | None:
    """The lowest ``cp3X`` among ``tags`` whose ABI is ``abi3`` (an installed distribution's ``WHEEL``
    file: ``Tag: cp311-abi3-manylinux_2_34_x86_64``), or ``None`` when none is."""
    versions = [
        (3, int(m.group(1))) for t in tags if t.abi == "abi3" and (m := re.fullmatch(r"cp3(\d{1,9})", t.interpreter))
    ]
    return min(versions) if versions else None


def _site_floor(installation: InstallationModel | None, path: str) -> tuple[int, int] | None:
    """The floor the ``WHEEL`` tags of the installed distribution owning ``path`` claim, if any."""
    if installation is None:
        return None
    name = installation.owner(path)
    dist = installation.distributions.get(name) if name is not None else None
    return _tag_floor(dist.tags) if dist is not None else None


class Abi3Symbol(Rule):
    id = "abi3-symbol"
    severity = Severity.ERROR
    summary = "an abi3 extension module uses a CPython symbol outside the Stable ABI, or one added after the Python its tag claims"
    explain = """\
A wheel tagged cp3X-abi3 (or a module named *.abi3.so; installed, the tags of
its .dist-info/WHEEL) promises to import into
every CPython from 3.X on: it may use only the Stable ABI, the functions and
data CPython keeps exported and unchanged (PEP 384; the list is CPython's
Misc/stable_abi.toml, with the release each was added in). An undefined Py* /
_Py* symbol outside it (a private or version-specific API such as
_PyObject_GC_New, PyList_GET_ITEM's expansion...) makes the module fail to
import — "undefined symbol" — or misbehave on another Python; one added after
3.X (PyType_GetModuleByDef, 3.13, in a cp38-abi3 wheel) fails on the older
ones. abi3audit checks the same. Build with Py_LIMITED_API set to the oldest
version the tag names (0x03080000 for cp38), or tag the wheel for one Python.
"""
    evidence = {
        "floor": "the oldest Python the tag claims, e.g. 3.8",
        "not_in_abi": "symbols outside the Stable ABI",
        "too_new": "[{symbol, added}] Stable ABI symbols added after the floor",
        "package": "the wheel, or null for a module named *.abi3.so",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        staged = context.packages
        for binary in context.binaries:
            if binary.kind is not Kind.PYTHON_EXTENSION:
                continue
            package = staged.package_of(binary.path) if staged is not None else None
            floor = abi3_floor(package, binary)
            if floor is None:
                continue
            if package is None:  # installed: the tags its wheel had, kept in the dist-info's WHEEL
                floor = _site_floor(context.installation, binary.path) or floor
            yield from self._judge(binary, package, floor)

    def _judge(self, binary: Binary, package: str | None, floor: tuple[int, int]) -> Iterator[Finding]:
        abi = stable_abi()
        names = sorted({s.name for s in binary.symbols.iter_undefined() if s.name.startswith(_PREFIXES)})
        outside = [n for n in names if n not in abi]
        newer = [(n, abi[n]) for n in names if n in abi and abi[n] > floor]
        if not outside and not newer:
            return
        at = f"{floor[0]}.{floor[1]}"
        parts = []
        if outside:
            parts.append(
                f"{len(outside)} symbol{'s' if len(outside) != 1 else ''} outside the Stable ABI ({preview(outside)})"
            )
        if newer:
            shown = [f"{n} ({a[0]}.{a[1]})" for n, a in newer]
            parts.append(f"{len(newer)} added after {at} ({preview(shown)})")
        yield self.finding(
            binary,
            outside[0] if outside else newer[0][0],
            f"abi3 module for CPython >= {at} uses {'; '.join(parts)}: it fails to import, or misbehaves, "
            "on other Pythons the tag admits — build with Py_LIMITED_API for the oldest one",
            {
                "floor": at,
                "not_in_abi": outside,
                "too_new": [{"symbol": n, "added": f"{a[0]}.{a[1]}"} for n, a in newer],
                "package": package,
            },
        )
