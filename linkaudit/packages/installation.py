"""The installation the rules judge against: its distributions (a site's ``*.dist-info``, the
wheels staged together), who owns each file, and what each declares for the target."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from ..records import dataclass
from .metadata import Distribution
from .planner import names_python_version
from .requirements import Declared, closure, marker_environment
from .site import Site, SiteLayout, most_demanding
from .staged import Staged

if TYPE_CHECKING:  # packaging.tags costs ~10 ms to import: only when a tag is parsed or made
    from packaging.tags import Tag

#: The tag (interpreter, ABI, platform) the environment markers are evaluated in when no
#: distribution names a platform.
_GENERIC = ("cp311", "cp311", "manylinux_2_17_x86_64")


@dataclass
class InstallationModel:
    """Distributions installed together, for one target.

    Attributes:
        distributions: by normalised name.
        target: the tag the marker environment comes from (the most demanding distribution's).
        env: the PEP 508 marker environment of the target (``requirements.marker_environment``).
    """

    distributions: Mapping[str, Distribution]
    target: Tag
    env: Mapping[str, str]
    _sites: Sequence[Site] = ()
    _staged: Staged | None = None
    _labels: Mapping[str, str] = field(default_factory=dict)  # wheel as given -> distribution name
    _closures: dict[str, dict[str, Declared]] = field(default_factory=dict)
    _under_extras: dict[str, dict[str, Declared]] = field(default_factory=dict)
    _recorded: dict[str, list[tuple[str, str]]] | None = None

    def recorded_but_missing(self, name: str) -> tuple[str, str] | None:
        """``(distribution, host path)`` of a file named ``name`` that an installed site's RECORD
        lists and that is not there (a damaged installation: deleted, or never extracted), or
        ``None``.  The index of recorded file names is built once."""
        if self._recorded is None:
            self._recorded = {}
            for site in self._sites:
                for dist in site.distributions:
                    for rel in dist.files:
                        self._recorded.setdefault(posixpath.basename(rel), []).append(
                            (dist.name, os.path.join(site.root, rel))
                        )
        for dist_name, path in self._recorded.get(name, ()):
            if not os.path.lexists(path):
                return dist_name, path
        return None

    def site_layout(self) -> SiteLayout | None:
        """Who owns each path of the installed sites among the inputs, and who installs into each
        directory (``site.SiteLayout``), or ``None`` when no site was given."""
        return SiteLayout(tuple(self._sites)) if self._sites else None

    def owner(self, path: str) -> str | None:
        """The distribution that installs the host ``path`` (its RECORD lists it; a staged wheel's
        member belongs to its wheel), or ``None``."""
        normal = os.path.normpath(os.path.abspath(path))
        for site in self._sites:
            if site.holds(normal):
                dist = site.owner_of(normal)
                if dist is not None:
                    return dist.name
        if self._staged is not None:
            label = self._staged.package_of(normal)
            if label is not None:
                return self._labels.get(label)
        return None

    def declares(self, name: str) -> dict[str, Declared]:
        """What ``name`` declares, directly or through its declared distributions (computed once)."""
        found = self._closures.get(name)
        if found is None:
            found = self._closures[name] = closure(name, self.distributions, self.env)
        return found

    def declares_under_extra(self, name: str) -> dict[str, Declared]:
        """What ``name`` declares only under one of its extras (``onnxruntime-gpu[cuda]``), each
        with the first extra (in ``Provides-Extra`` order) that declares it directly, else the
        nearest one through what it declares (computed once per name; one closure over every
        extra: linear in the extras, never one closure per extra)."""
        found = self._under_extras.get(name)
        if found is not None:
            return found
        dist = self.distributions.get(name)
        found = {}
        if dist is not None and dist.extras:
            base = self.declares(name)
            every = closure(name, self.distributions, self.env, dist.extras)
            found = {k: v for k, v in every.items() if k not in base}
        self._under_extras[name] = found
        return found


def installation_model(staged: Staged, sites: Sequence[Site]) -> InstallationModel | None:
    """The model of the installation the inputs make, or ``None`` when nothing among them has
    metadata (a plain build tree)."""
    labels: dict[str, str] = {}
    dists: dict[str, Distribution] = {}
    for site in sites:
        for dist in site.distributions:
            dists.setdefault(dist.name, dist)
    for label, dist in staged.distributions().items():
        labels[label] = dist.name
        dists.setdefault(dist.name, dist)
    if not dists:
        return None
    demanding = most_demanding(tuple(dists.values()))
    tagged = demanding or next((d for d in dists.values() if d.tags), None)
    if tagged is not None:
        target = sorted(tagged.tags, key=str)[0]
        python = _python_named(dists.values()) if not names_python_version(target.interpreter) else None
        if python is not None:  # the platform's demands, the Python another distribution names
            target = type(target)(python.interpreter, python.abi, target.platform)
    else:
        from packaging.tags import Tag

        target = Tag(*_GENERIC)
    return InstallationModel(dists, target, marker_environment(target), tuple(sites), staged, labels)


def _python_named(dists: Iterable[Distribution]) -> Tag | None:
    """The first tag (in sorted order) of the distributions that names a Python version, or ``None``.
    The platform that asks most may come from a ``py3-none`` wheel (a CUDA library's wheel beside
    a ``cp312`` extension's): its tag names no Python, and markers (``python_version >= "3.12"``)
    were judged for 3.11."""
    named = [t for d in dists for t in d.tags if names_python_version(t.interpreter)]
    return min(named, key=str) if named else None
