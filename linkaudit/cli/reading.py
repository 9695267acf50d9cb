"""Reading the inputs of ``show``, ``tree`` and ``why``: files, directories and packages, one loop."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field
from typing import TYPE_CHECKING

import click

from ..errors import InputError, UnsupportedFormat
from ..formats import Container, read_path, unsupported_reason
from ..inputs import collect
from ..model import Binary
from ..output import text_safe
from ..packages import Staged, staged_inputs
from ..records import dataclass

if TYPE_CHECKING:
    from ..packages.site import Site


@dataclass
class Inputs:
    """What the paths given hold.

    Attributes:
        binaries: every binary read, in input order (package members at their staged paths).
        errors: inputs that could not be read (package members named ``PACKAGE!member``).
        skipped: binaries of a format not read yet: (path, reason).
        empty_dirs: directories given that hold no binary.
        broken_links: dangling symlinks found under a directory given, passed over: (path, target).
    """

    binaries: list[Binary]
    errors: list[InputError]
    skipped: list[tuple[str, str]]
    empty_dirs: tuple[str, ...]
    staged: Staged
    broken_links: tuple[tuple[str, str], ...] = ()
    _sites: list[Site] | None = field(default=None, repr=False, compare=False)

    def sites(self) -> list[Site]:
        """The installed sites the plain paths given lie in (``audit.sites_among``), read once per run:
        ``tree`` and ``why`` ask for them twice (the target's tag, then the owners)."""
        if self._sites is None:
            from ..audit import sites_among

            self._sites = sites_among(self.staged)
        return self._sites

    def relabel(self, document: str, fmt: str) -> str:
        """A rendered ``text`` or ``json`` document with staged paths written ``PACKAGE!member``."""
        if fmt == "json":
            return self.staged.label(document, lambda s: json.dumps(s, ensure_ascii=False)[1:-1])
        return self.staged.label(document, text_safe)

    def report_problems(self) -> None:
        """Name every unreadable input (and skipped file, and empty directory) on standard error."""
        for error in self.errors:
            click.echo(f"linkaudit: error: {text_safe(self.staged.label(str(error)))}", err=True)
        for path, reason in self.skipped:
            click.echo(f"linkaudit: skipped: {text_safe(self.staged.label(path))}: {text_safe(reason)}", err=True)
        for directory in self.empty_dirs:
            click.echo(f"linkaudit: note: {text_safe(directory)}: holds no binary linkaudit can read", err=True)
        for path, target in self.broken_links:
            where = text_safe(self.staged.label(path))
            click.echo(f"linkaudit: note: {where}: broken symlink (to {text_safe(target)}), passed over", err=True)


@contextmanager
def read_inputs(paths: Sequence[str]) -> Iterator[Inputs]:
    """Read every binary under ``paths`` (packages staged for as long as the block runs).

    Nothing is raised for a bad input: it is listed in ``Inputs.errors``.
    """
    with staged_inputs(list(paths)) as staged:
        collected = collect(staged.paths)
        errors: list[InputError] = [*staged.errors, *collected.errors]
        skipped = [(p, unsupported_reason(Container(c))) for p, c in collected.skipped]
        binaries: list[Binary] = []
        for path in collected.files:
            try:
                binaries.extend(read_path(path))
            except UnsupportedFormat as exc:
                skipped.append((path, exc.reason))
            except InputError as exc:
                errors.append(exc)
        empty = tuple(d for d in collected.empty_dirs if not staged.holds_packages(d))
        yield Inputs(binaries, errors, skipped, empty, staged, collected.broken_links)
