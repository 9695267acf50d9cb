"""``broken-symlink``: a dangling symlink found under a directory given, passed over (a note)."""

from __future__ import annotations

from ..report import Finding, Severity
from .inputs import DriverRule


class BrokenSymlink(DriverRule):
    """A note the audit driver emits for each dangling symlink its directory walk passed over.

    Source of the rule: ``ldconfig`` (glibc ``elf/ldconfig.c``, ``search_dir``) skips a link whose
    target does not exist; ld.so never finds it either, so nothing that loads can depend on it.
    """

    id = "broken-symlink"
    severity = Severity.NOTE
    summary = "a dangling symlink under a directory given (libfoo.so -> a libfoo.so.1 not shipped): passed over"
    explain = """\
A symlink found while walking a directory given on the command line points at
nothing: typically a development link (libfoo.so -> libfoo.so.1, used only by
the static linker's -lfoo) whose target was not packaged, left in a build tree
or an installed prefix. ldconfig passes over such a link and the dynamic loader
cannot open it, so linkaudit passes over it too: this note names it and the
exit status does not change. Remove the link, or ship its target if something
loads it by that name (a library-not-found finding then says so). A dangling
symlink named on the command line itself is an unreadable-input error (exit 2).
"""
    evidence = {"target": "the link's target as written in it"}

    @classmethod
    def note(cls, path: str, target: str) -> Finding:
        """The finding for the dangling symlink ``path`` whose link says ``target``."""
        message = f"broken symlink (its target {target or '?'} does not exist): passed over, as ldconfig does"
        return Finding(cls.id, cls.severity, path, path, message, {"target": target})
