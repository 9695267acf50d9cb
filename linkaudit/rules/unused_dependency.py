"""``unused-dependency``: a declared distribution that ships only shared libraries, none of which
anything of the declaring distribution uses (conda-build: overdepending)."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator

from ..context import AuditContext
from ..formats.hostfile import read_regular_file
from ..lazyre import LazyPattern
from ..packages.metadata import Distribution
from ..report import Finding, Severity
from .base import Rule, preview

#: Bytes of Python sources read per distribution when looking for library names (ctypes preloads).
MAX_SOURCE_BYTES = 32 << 20
_LIBRARY = LazyPattern(r"\.so(\.\d+)*$|\.dll$|\.dylib$", re.IGNORECASE)


class UnusedDependency(Rule):
    id = "unused-dependency"
    needs_loader = True
    severity = Severity.NOTE
    summary = "a declared distribution ships only shared libraries and nothing of the declaring one uses them"
    explain = """\
Distribution P declares Q (Requires-Dist, for the installation's target), Q
is installed, ships shared libraries and no importable Python module of its
own (NVIDIA's wheels: only empty namespace __init__.py files; a package
__init__.py with code is a module), and yet no binary of
P loads any of Q's libraries, no loaded library names one of them as a string
(a dlopen'ed plugin: cuDNN opens its sub-libraries by name), and P's Python
sources do not name them either (torch's __init__.py preloads the NVIDIA
libraries with ctypes). Then Q is installed for nothing: a larger download,
another version to keep compatible. conda-build calls this overdepending.

For a conda package audited on its own (conda-build's own check: Q is not
installed), Q's libraries are those the conda provider index lists for it, and
Q is unused when no binary of P needs one of them.

A note: P may load Q in ways a static reading does not see (a path built at
run time). Only distributions given (their binaries among the inputs) are judged.
"""
    evidence = {
        "distribution": "the declaring distribution (P)",
        "unused": "the declared distribution (Q)",
        "requirement": "the Requires-Dist line",
        "libraries": "Q's shared libraries",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        model, linkage = context.installation, context.linkage
        if model is None or linkage is None:
            return
        from ..packages.requirements import declared  # packaging's markers: only with an installation

        first: dict[str, str] = {}  # distribution -> a binary of it among the inputs
        for b in context.binaries:
            owner = model.owner(b.path)
            if owner is not None:
                first.setdefault(owner, b.path)
        used: set[tuple[str | None, str | None]] = set()
        mentioned: set[str] = set()
        needs: dict[str | None, set[str]] = {}  # distribution -> every DT_NEEDED of its binaries
        for part in linkage.parts():
            for obj in part.objects():
                mentioned.update(obj.binary.dlopen_names)
            for (requester, needed), res in part.part.own_resolutions().items():
                owner = model.owner(linkage.audited.get(requester, requester))
                needs.setdefault(owner, set()).add(needed)
                if res.path is not None:
                    used.add((owner, model.owner(res.path)))
        for mine, where in first.items():
            dist = model.distributions[mine]
            text = _sources(dist, context.site_roots)
            for item in declared(dist.requires, model.env):
                other = model.distributions.get(item.name)
                if other is not None:
                    libraries = _libraries_only(other, context.site_roots)
                elif dist.kind == "conda-package":  # a lone conda package: what the conda index says item ships
                    libraries = _conda_libraries(item.name)
                else:
                    libraries = []
                if not libraries or (mine, item.name) in used or needs.get(mine, set()) & set(libraries):
                    continue
                stems = {_stem(lib) for lib in libraries}
                if any(_stem(m) in stems for m in mentioned) or any(s in text for s in stems):
                    continue
                yield self.finding(
                    where,
                    item.name,
                    f"{mine} declares {item.name} ({item.requirement}), which ships only shared libraries "
                    f"({preview(libraries, 3)}), and nothing of {mine} loads or names them: an unused dependency?",
                    {
                        "distribution": mine,
                        "unused": item.name,
                        "requirement": item.requirement,
                        "libraries": libraries,
                    },
                )


def _conda_libraries(name: str) -> list[str]:
    """The SONAMEs the conda package ``name`` ships, as the conda provider index says (``[]``: unknown)."""
    from ..packages.providers import conda_providers

    return sorted(soname for soname, names in conda_providers().items() if name in names)


def _libraries_only(dist: Distribution, roots: tuple[str, ...]) -> list[str]:
    """The shared libraries ``dist`` installs (base names), or ``[]`` when it also ships a Python
    module of its own or no library.  A module of its own: a ``.py`` file other than
    ``__init__.py``, or a package ``__init__.py`` with code (its ``RECORD`` size above 0, or, when
    the ``RECORD`` gives none, the installed file in one of the sites ``roots`` not empty); only an
    empty ``__init__.py`` (a namespace placeholder: NVIDIA's wheels) is no module.  conda-build's
    overdepending check judges only packages of shared libraries the same way."""
    if any(f.endswith(".py") and posixpath.basename(f) != "__init__.py" for f in dist.files):
        return []
    if dist.inits or any(_filled(f, roots) for f in dist.files if posixpath.basename(f) == "__init__.py"):
        return []
    return sorted({posixpath.basename(f) for f in dist.files if _LIBRARY.search(posixpath.basename(f))})


def _filled(rel: str, roots: tuple[str, ...]) -> bool:
    """True when the file ``rel`` is installed, not empty, in one of the sites ``roots``."""
    for root in roots:
        try:
            if os.stat(os.path.join(root, rel)).st_size > 0:
                return True
        except (OSError, ValueError):
            continue
    return False


def _stem(name: str) -> str:
    """``libcudart.so.13`` -> ``libcudart``: what a loader string names, whatever the version suffix."""
    base = posixpath.basename(name)
    return re.split(r"\.so\b|\.dll$|\.dylib$", base, maxsplit=1, flags=re.IGNORECASE)[0]


def _sources(dist: Distribution, roots: tuple[str, ...]) -> str:
    """The text of ``dist``'s Python sources in the sites given (at most ``MAX_SOURCE_BYTES``)."""
    parts: list[str] = []
    left = MAX_SOURCE_BYTES
    for root in roots:
        for rel in dist.files:
            if left <= 0 or not rel.endswith(".py"):
                continue
            try:  # never a FIFO's blocking open: a RECORD naming one hung check
                data = read_regular_file(os.path.join(root, rel), left)
            except OSError:
                continue
            left -= len(data)
            parts.append(data.decode("utf-8", errors="replace"))
    return "\n".join(parts)
