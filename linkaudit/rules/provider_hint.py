"""Who provides a library that resolves nowhere, and whether the distribution that needs it
declares that provider: the words ``library-not-found`` adds for an installation with metadata."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..context import AuditContext
from ..packages.providers import conda_providers, providers
from ..records import dataclass
from ..report import Severity
from .data import driver_index

if TYPE_CHECKING:  # packaging and the installation model only with metadata (start-up: a build tree)
    from ..packages.installation import InstallationModel


@dataclass(frozen=True, slots=True)
class ProviderHint:
    """What the provider index and the installation's metadata say of one missing library.

    Attributes:
        text: the sentence to append to the finding's message.
        providers: the distributions that ship it.
        declared_by: the ``Requires-Dist`` line through which the distribution declares one, or ``None``.
        extra: the extra it is declared under (``cuda``), or ``None``.
        severity: the finding's severity when the hint decides it (a declared dependency of a
            lone conda package or of a wheel given as a file: a note), else ``None``.
        installed: the paths of the inputs whose SONAME is the missing library (``installed_hint``):
            it is in the installation, only no search reaches it.
    """

    text: str
    providers: tuple[str, ...]
    declared_by: str | None
    extra: str | None
    severity: Severity | None = None
    installed: tuple[str, ...] = ()


def provider_hint(context: AuditContext, file: str, needed: str) -> ProviderHint | None:
    """The hint for ``needed`` missing for the binary ``file``, or ``None`` when neither the
    provider index nor the installation's metadata says anything of it."""
    driver = driver_index().library_for(needed)
    if driver is not None:
        return _driver_hint(needed, driver.component)
    model = context.installation
    owner = model.owner(file) if model is not None else None
    if model is not None and owner is not None and model.distributions[owner].kind.startswith("conda"):
        return _conda_hint(model, owner, needed)
    lost = model.recorded_but_missing(needed) if model is not None else None
    if lost is not None:
        dist_name, path = lost
        text = (
            f"; {path} is listed in {dist_name}'s RECORD but is not there: a damaged installation "
            f"(pip install --force-reinstall {dist_name})"
        )
        return ProviderHint(text, (dist_name,), None, None)
    index = providers()
    shipped = index.get(needed) or index.get(needed.lower(), ())  # a DLL name: in any case
    if not shipped:
        if model is None or owner is None:
            return None
        text = f"; no distribution {owner} declares, with or without an extra, is known to ship {needed}"
        return ProviderHint(text, (), None, None)
    names = " or ".join(shipped)
    if model is None or owner is None:
        return ProviderHint(f"; {needed} is shipped by {names} (PyPI)", shipped, None, None)
    base, extras = model.declares(owner), model.declares_under_extra(owner)
    for name in shipped:
        if name in base:
            how = base[name].requirement
            if _from_wheel_file(context, file):  # a wheel given as a file: pip installs its dependencies
                text = (
                    f"; {needed} is shipped by {name}, which {owner} declares ({how}): pip installs it with "
                    f"{owner} — give its wheel too, or check the installed site, to judge the whole load"
                )
                return ProviderHint(text, shipped, how, None, Severity.NOTE)
            text = f"; {needed} is shipped by {name}, which {owner} declares ({how}): it is not installed here"
            return ProviderHint(text, shipped, how, None)
    for name in shipped:
        if name in extras and extras[name].under is not None:
            extra = extras[name].under
            text = (
                f"; {needed} is shipped by {name}, which {owner} declares only under its extra '{extra}' "
                f"({extras[name].requirement}): pip install {owner}[{extra}]"
            )
            return ProviderHint(text, shipped, extras[name].requirement, extra)
    if owner in shipped:  # never ask a distribution to declare itself
        text = f"; {needed} is shipped by {owner} itself, the distribution that needs it, but is not installed here"
        return ProviderHint(text, shipped, None, None)
    text = f"; {needed} is shipped by {names}, which no dependency of {owner} declares: add {shipped[0]} to its Requires-Dist"
    return ProviderHint(text, shipped, None, None)


def _driver_hint(needed: str, component: str) -> ProviderHint:
    """The hint for a GPU-driver library (``rules/data/cuda.toml``) found nowhere under
    ``--with-driver``: the machine's driver installs it, no wheel or conda package ships it (nor
    may: auditwheel's policies list none, and a copy would not match the kernel module), so no
    distribution is named as its provider and none is asked to declare one."""
    text = (
        f"; {needed} is the GPU driver's ({component}): the driver installed on the machine provides it, "
        "no package ships it — the target searched has no driver; the load works only where one is installed"
    )
    return ProviderHint(text, (), None, None)


def _from_wheel_file(context: AuditContext, file: str) -> bool:
    """True when ``file`` is a member of a wheel given as a file (not an installed site): what its
    distribution declares is installed with it by pip, as a lone conda package's run requirements
    are by conda (``_conda_hint``)."""
    package = context.packages.package_of(file) if context.packages is not None else None
    return package is not None and package.endswith(".whl")


def installed_hint(context: AuditContext, file: str, needed: str, copies: Sequence[str]) -> ProviderHint:
    """The hint for ``needed`` missing for ``file`` while inputs of that SONAME (``copies``, host
    paths) are in the installation: no DT_RPATH/DT_RUNPATH of the chain and no system directory
    reaches them, so this load finds one only when it is already loaded — glibc matches a
    DT_NEEDED against the SONAMEs of loaded objects before it searches (elf/dl-load.c,
    ``_dl_map_object``), as a package's preload (torch's ``__init__.py``) arranges. Says where the
    copy is, which distribution installs it (the requester's own, or whether the requester's
    distribution declares it), and the ``$ORIGIN`` RUNPATH that would reach it."""
    model = context.installation
    owner = model.owner(file) if model is not None else None
    where = copies[0]
    provider = model.owner(where) if model is not None else None
    if provider is not None and provider == owner:
        whose = f" (from {provider}, the same distribution)"
    elif provider is not None and owner is not None and model is not None:
        declared = model.declares(owner).get(provider)
        says = f"which {owner} declares as {declared.requirement}" if declared else f"which {owner} does not declare"
        whose = f" (from {provider}, {says})"
    else:
        whose = f" (from {provider})" if provider else ""
    rel = posixpath.relpath(posixpath.dirname(where), posixpath.dirname(file))
    origin = "$ORIGIN" if rel == "." else f"$ORIGIN/{rel}"
    text = (
        f"; {needed} is installed here, at {where}{whose}, but no RPATH/RUNPATH of this load reaches it: "
        f"the load finds it only when it is already loaded (ld.so matches loaded SONAMEs before searching; "
        f"a preload does that) — a RUNPATH of {origin} would reach it"
    )
    return ProviderHint(text, (provider,) if provider else (), None, None, installed=tuple(copies))


def _conda_hint(model: InstallationModel, owner: str, needed: str) -> ProviderHint:
    """The hint for a conda package ``owner`` (conda-build's check of run requirements,
    ``conda_build/post.py``): a library shipped by a package it ``depends`` on is, for a lone
    package, a note — not self-contained, the dependency brings it — and in a prefix an error (the
    dependency is not installed there); else the package to add to ``requirements/run`` (overlinking)."""
    from packaging.utils import canonicalize_name  # only with an installation's metadata

    lone = model.distributions[owner].kind == "conda-package"
    shipped = conda_providers().get(needed, ())
    depends = {canonicalize_name(d.split()[0]): d for d in model.distributions[owner].requires}
    for name in shipped:
        if canonicalize_name(name) in depends:
            where = "installed with it, not inside this package" if lone else "it is not installed in this prefix"
            text = f"; {needed} is shipped by the conda package {name}, which {owner} depends on: {where}"
            return ProviderHint(text, shipped, depends[canonicalize_name(name)], None, Severity.NOTE if lone else None)
    if not shipped:
        text = f"; no conda package {owner} depends on is known to ship {needed} (conda-build: overlinking)"
        return ProviderHint(text, (), None, None)
    text = (
        f"; {needed} is shipped by the conda package {' or '.join(shipped)}, which {owner} does not depend on: "
        f"add {shipped[0]} to requirements/run (conda-build: overlinking)"
    )
    return ProviderHint(text, shipped, None, None)
