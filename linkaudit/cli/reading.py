"""Reading the inputs of ``show``, ``tree`` and ``why``: files, directories and packages, one loop."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field, replace
from typing import TYPE_CHECKING

import click

from ..errors import InputError, PartialRead, UnsupportedFormat
from ..formats import Container, read_path, unsupported_reason
from ..inputs import collect
from ..model import Binary
from ..output import text_safe
from ..output.text import installation_label
from ..packages import Staged, staged_inputs
from ..packages.prepare import empty_directory_message
from ..records import dataclass

if TYPE_CHECKING:
    from ..packages import Installation, PlannedInputs
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
    members: tuple[tuple[str, str], ...] = ()
    partial: frozenset[str] = frozenset()
    _sites: list[Site] | None = field(default=None, repr=False, compare=False)

    def entries(self, given: Sequence[str]) -> tuple[str, ...]:
        """The import roots to load: ``--entry``'s ``given`` and every member given as a path
        (``PACKAGE!member``: ``package_members``)."""
        return (*given, *(name for name, _host in self.members if name not in given))

    def only_members(self) -> Inputs:
        """These inputs with the packages given only as ``PACKAGE!member`` paths cut down to those
        members (``show``: the member asked for, not the whole package); a member that is a
        directory of the package keeps every binary below it, as ``show DIR`` walks a directory; a
        member that is a symlink (or tar hard link) of the package keeps its target (``linked``)."""
        if not self.partial:
            return self
        wanted = {host for _name, host in self.members} | {real for _name, real in self.linked()}
        below = tuple(host + "/" for host in wanted if os.path.isdir(host))

        def kept(path: str) -> bool:
            return self.staged.package_of(path) not in self.partial or path in wanted or path.startswith(below)

        binaries = [b for b in self.binaries if kept(b.path)]
        skipped = [(p, reason) for p, reason in self.skipped if kept(p)]
        return replace(self, binaries=binaries, skipped=skipped)

    def linked(self) -> list[tuple[str, str]]:
        """``(member as given, the host path its symlinks resolve to)`` of each member given as
        ``PACKAGE!member`` that is a symlink of the package or lies through one (staging made
        sure it resolves inside its staging root)."""
        out = []
        for name, host in self.members:
            real = os.path.realpath(host)
            if real != os.path.normpath(host):
                out.append((name, real))
        return out

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
        for name, real in self.linked():
            target = text_safe(self.staged.label_path(real))
            click.echo(
                f"linkaudit: note: {text_safe(name)}: a link in the package (symlink or hard link) to {target}",
                err=True,
            )
        for path, reason in self.skipped:
            click.echo(f"linkaudit: skipped: {text_safe(self.staged.label(path))}: {text_safe(reason)}", err=True)
        for directory in self.empty_dirs:
            what = empty_directory_message(0, self.staged.tarballs.get(directory, []))
            click.echo(f"linkaudit: note: {text_safe(directory)}: {text_safe(what)}", err=True)
        for path, target in self.broken_links:
            where = text_safe(self.staged.label(path))
            click.echo(f"linkaudit: note: {where}: broken symlink (to {text_safe(target)}), passed over", err=True)


@contextmanager
def read_inputs(paths: Sequence[str], only: frozenset[str] | None = None) -> Iterator[Inputs]:
    """Read every binary under ``paths`` (packages staged for as long as the block runs; ``only``:
    the packages of one installation, ``PlannedInputs.packages``; ``None``: all).

    Nothing is raised for a bad input: it is listed in ``Inputs.errors``.
    """
    given, members = package_members(paths)
    with staged_inputs(given, only=only) as staged:
        collected = collect(staged.paths, staged.sniffed)
        found = [(name, p, staged.member_path(name)) for name, p in members if p in staged.packages]
        partial = member_only(paths, members)
        errors: list[InputError] = [*staged.errors, *collected.errors]
        missing = [(name, package) for name, package, host in found if host is None]
        bare = [name for name, _package in missing if staged.member_directory(name)]  # no binary below it
        missing = [(name, package) for name, package in missing if name not in bare]
        errors.extend(
            InputError(name, "no such binary member in the package (give the package itself to see its members)")
            for name, _package in missing
        )
        dropped = partial & {package for _name, package in missing}  # nothing read in place of a member missing
        skipped = [(p, unsupported_reason(Container(c))) for p, c in collected.skipped]
        binaries: list[Binary] = []
        for path in collected.files:
            if dropped and staged.package_of(path) in dropped:
                continue
            try:
                binaries.extend(read_path(path))
            except PartialRead as exc:  # an archive's members not read: the others are
                binaries.extend(exc.binaries)
                errors.extend(exc.errors)
            except UnsupportedFormat as exc:
                skipped.append((path, exc.reason))
            except InputError as exc:
                errors.append(exc)
        empty = (*(d for d in collected.empty_dirs if not staged.holds_packages(d)), *bare)
        chosen = tuple((name, host) for name, _package, host in found if host is not None)
        sites = _sites_read(staged, errors)
        yield Inputs(binaries, errors, skipped, empty, staged, collected.broken_links, chosen, partial, sites)


def _sites_read(staged: Staged, errors: list[InputError]) -> list[Site]:
    """The installed sites the paths given lie in (``audit.sites_among``), each metadata file of
    theirs that could not be read (``Site.problems``) added to ``errors``: ``show``, ``tree`` and
    ``why`` name it as ``check`` does, never judge the site without it in silence."""
    from ..audit import sites_among

    sites = sites_among(staged)
    errors.extend(InputError(path, reason) for site in sites for path, reason in site.problems)
    return sites


def package_members(paths: Sequence[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """``paths`` with each ``PACKAGE!member`` — a member of a package given by its path, as
    linkaudit names members everywhere — replaced by its package (once); and those members, each
    with its package.  A path that exists stays a path, whatever its name holds."""
    from ..packages import package_kind

    given: list[str] = []
    members: list[tuple[str, str]] = []
    for path in paths:
        package = _package_part(path, package_kind)
        if package is None:
            given.append(path)
            continue
        members.append((path, package))
        if package not in given:
            given.append(package)
    return given, members


def member_only(paths: Sequence[str], members: Sequence[tuple[str, str]]) -> frozenset[str]:
    """The packages of ``members`` (``package_members``) given only as ``PACKAGE!member``: neither
    among ``paths`` nor below a directory of ``paths`` (``show dist/ dist/x.whl!a.so`` shows all
    of ``dist/``)."""
    packages = {package for _name, package in members} - set(paths)
    if not packages:
        return frozenset()
    tops = [p.rstrip("/") + "/" for p in paths if "!" not in p or os.path.lexists(p)]
    tops = [t for t in tops if os.path.isdir(t)]
    return frozenset(p for p in packages if not any(p.startswith(t) for t in tops))


def each_package(paths: Sequence[str]) -> list[tuple[list[str], frozenset[str] | None]]:
    """How ``show`` reads ``paths`` (``read_inputs``'s arguments, in order): each package among
    them and in the directories given on its own (``packages.plan_each``), so a path two packages
    both hold (two wheels of one project, two conda packages) is read from each; the inputs that
    are no package once more, last (left out when they are only the directories the packages
    were found in).  One read of every input when at most one package is among them."""
    from ..packages import plan_each

    given, members = package_members(paths)
    plan = _worth_drawing(plan_each(given))
    if len(plan) < 2:
        return [(list(paths), None)]
    only = member_only(paths, members)
    out: list[tuple[list[str], frozenset[str] | None]] = []
    for planned in plan:
        packages = planned.packages or frozenset()
        mine = [name for name, package in members if package in packages]
        out.append(([*(p for p in planned.paths if p not in only), *mine], planned.packages))
    return out


def _package_part(path: str, kind: Callable[[str], str | None]) -> str | None:
    """The package ``path`` names a member of (``PACKAGE!member``, the first ``!`` after which
    a package file ends), or ``None``."""
    if "!" not in path or os.path.lexists(path):
        return None
    at = path.find("!")
    while at != -1:
        package, member = path[:at], path[at + 1 :]
        if member and os.path.isfile(package) and kind(package) is not None:
            return package
        at = path.find("!", at + 1)
    return None


#: ``--together`` for ``tree`` and ``why``, as ``check`` has it.
together_option = click.option(
    "--together",
    is_flag=True,
    help="Load every input as one installation (a set installed side by side), not one installation per "
    "system the wheels' tags fit, as `check` does (wheels of one project are never installed together).",
)


def per_installation(
    paths: Sequence[str],
    together: bool,
    fmt: str,
    run: Callable[[Inputs], int],
    combine: Callable[[list[int]], int],
) -> int:
    """``run`` over the inputs of each installation they make, as ``check`` plans them
    (``packages.plan_inputs``: a ``dist/`` of one project's wheels for several Pythons and
    platforms is one installation per target, never one process); its exit statuses merged by
    ``combine``.  With several, a text report has a heading per installation; a JSON or picture
    document cannot hold several, and says so.

    Raises:
        click.UsageError: several installations and ``fmt`` is not ``text``.
    """
    from ..packages import plan_inputs

    given, members = package_members(paths)
    plan = _worth_drawing(plan_inputs(given, together))
    if len(plan) == 1:
        with read_inputs(paths) as inputs:
            return run(inputs)
    names = [_installation_name(p.installation) for p in plan]
    if fmt != "text":
        shown = "; ".join(names[:3]) + (f"; … (+{len(names) - 3} more)" if len(names) > 3 else "")
        raise click.UsageError(
            f"the inputs make {len(plan)} installations ({shown}): a {fmt} document draws one — "
            "give one installation's packages, or --together to load them as one"
        )
    statuses: list[int] = []
    for i, (planned, name) in enumerate(zip(plan, names, strict=True), 1):
        # the members given as PACKAGE!member of this installation's packages
        mine = [m for m, package in members if planned.packages is None or package in planned.packages]
        with read_inputs([*planned.paths, *mine], planned.packages) as inputs:
            if statuses:
                click.echo("")
            click.echo(text_safe(f"installation {i} of {len(plan)}: {name}"))
            statuses.append(run(inputs))
    return combine(statuses) if statuses else 0


def _worth_drawing(plan: list[PlannedInputs]) -> list[PlannedInputs]:
    """``plan`` without the installation of no package whose inputs are only the wheelhouse
    directories the packages of the others were found in (``dist/``: its wheels are drawn)."""
    found = [p for planned in plan for p in planned.installation.packages]

    def wheelhouse(path: str) -> bool:
        under = path.rstrip("/") + "/"
        return os.path.isdir(path) and any(p.startswith(under) for p in found)

    kept = [p for p in plan if p.installation.packages or not all(wheelhouse(x) for x in p.paths)]
    return kept or plan[:1]


def _installation_name(installation: Installation) -> str:
    """The installation's line, as ``check``'s text report names it (``output.text.installation_label``)."""
    return installation_label(installation.packages, installation.targets, installation.reason)
