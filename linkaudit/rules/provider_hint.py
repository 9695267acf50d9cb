"""Who provides a library that resolves nowhere, and whether the distribution that needs it
declares that provider: the words ``library-not-found`` adds for an installation with metadata."""

from __future__ import annotations

from dataclasses import dataclass

from ..context import AuditContext
from ..packages.providers import providers


@dataclass(frozen=True, slots=True)
class ProviderHint:
    """What the provider index and the installation's metadata say of one missing library.

    Attributes:
        text: the sentence to append to the finding's message.
        providers: the distributions that ship it.
        declared_by: the ``Requires-Dist`` line through which the distribution declares one, or ``None``.
        extra: the extra it is declared under (``cuda``), or ``None``.
    """

    text: str
    providers: tuple[str, ...]
    declared_by: str | None
    extra: str | None


def provider_hint(context: AuditContext, file: str, needed: str) -> ProviderHint | None:
    """The hint for ``needed`` missing for the binary ``file``, or ``None`` when neither the
    provider index nor the installation's metadata says anything of it."""
    index = providers()
    shipped = index.get(needed) or index.get(needed.lower(), ())  # a DLL name: in any case
    model = context.installation
    owner = model.owner(file) if model is not None else None
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
    text = f"; {needed} is shipped by {names}, which no dependency of {owner} declares: add {shipped[0]} to its Requires-Dist"
    return ProviderHint(text, shipped, None, None)
