"""The Windows link of the audit's ``--link-line``, emulated once for the three rules that read it
(``unresolved-external``, ``duplicate-definition``, ``driver-link``): a link over torch's import
libraries indexes 120,000 symbols, and each rule used to emulate it again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context import AuditContext

if TYPE_CHECKING:  # the COFF link is imported only with a link line (start-up: a plain ELF check)
    from ..link.coff import CoffLink

#: The last context's link: ``(context, link)``; rules of one audit run one after another.
_LAST: list[tuple[AuditContext, CoffLink | None]] = []


def windows_link(context: AuditContext) -> CoffLink | None:
    """The emulated link of ``context.config.link_line`` when it names a COFF object, else ``None``."""
    if _LAST and _LAST[0][0] is context:
        return _LAST[0][1]
    line = context.config.link_line
    link = None
    if line:
        from ..link.coff import has_coff_objects, link_coff

        binaries = list(context.binaries)
        link = link_coff(binaries, line) if has_coff_objects(binaries, line) else None
    _LAST[:] = [(context, link)]
    return link
