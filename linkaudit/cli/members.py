"""``PACKAGE!member`` operands of ``check`` and ``diff``: the package audited as a whole (the
loader finds the member's siblings), the report then cut down to the members asked for."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import replace

from ..model import Binary
from ..report import FileResult, FileStatus, Finding, Report, Severity, resolve_link, split_member
from .reading import member_only, package_members

#: What a member given that its package lacks is told (as ``show`` tells it).
NO_MEMBER = "no such binary member in the package (give the package itself to see its members)"


def member_operands(paths: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """``(what to audit, package -> the members asked of it)``: ``paths`` with each
    ``PACKAGE!member`` (``reading.package_members``) replaced by its package (once); the packages
    given only so (not whole, nor found in a directory given: ``reading.member_only``) with the
    member paths, as given, to cut their report down to (``cut_to_members``)."""
    given, members = package_members(paths)
    only = member_only(paths, members)
    wanted: dict[str, list[str]] = {}
    for name, package in members:
        if package in only:
            wanted.setdefault(package, []).append(name)
    return given, wanted


def cut_to_members(
    report: Report, wanted: Mapping[str, Sequence[str]], binaries: Sequence[Binary] = ()
) -> tuple[Report, tuple[Binary, ...]]:
    """``report`` (and ``binaries``) of packages audited whole cut down to the members asked for
    (``wanted``: ``member_operands``'): a member's files and findings are kept — an archive member's
    (``member(object.o)``) and, for a directory member, those below it — and the package's own
    ``unreadable-input``; its other members' go.  A member that is a symlink (or tar hard link) of
    the package is its target's files and findings, under the target's name (``Report.links``).
    A member the package lacks (no file kept and no ``unreadable-input`` of it or its package) is
    an unreadable file and finding (``NO_MEMBER``).  Files of other inputs are untouched."""
    if not wanted:
        return report, tuple(binaries)
    kept = member_filter(wanted, report.links, report.packages)
    files = [f for f in report.files if kept(f.path, None)]
    findings = [f for f in report.findings if kept(f.file, f.rule)]
    for package, names in wanted.items():
        for name in names:
            owner, member = _resolved(package, _member(name, package), report.links, set(report.packages))
            if not _found(owner, member, files, findings):
                files.append(FileResult(name, FileStatus.UNREADABLE, error=NO_MEMBER))
                findings.append(
                    Finding("unreadable-input", Severity.ERROR, name, name, NO_MEMBER, {"reason": NO_MEMBER})
                )
    cut = tuple(b for b in binaries if kept(b.path, None))
    return replace(report, files=tuple(files), findings=tuple(findings)), cut


def opened_as(name: str, package: str, report: Report) -> str:
    """The member ``name`` (``PACKAGE!member`` of ``package``) as the file its package's symlinks
    lead to (``Report.links``: ``pkg!lib/libz.so`` -> ``pkg!lib/libz.so.1.3.1``), the name its
    files are reported under; ``name`` itself when it is no link."""
    member = _member(name, package)
    owner, target = _resolved(package, member, report.links, set(report.packages))
    return name if (owner, target) == (package, member) else f"{owner}!{target}"


def member_filter(
    wanted: Mapping[str, Sequence[str]], links: Mapping[str, str] | None = None, staged: Sequence[str] = ()
) -> Callable[[str, str | None], bool]:
    """``kept(file, rule=None)``: True when a file (or a finding of ``rule`` on ``file``) stays in
    the report cut down to ``wanted`` (``cut_to_members``; also for findings streamed as they come,
    ``--format jsonl``).  ``links``: the packages' symlinks (``Report.links``), a member asked by a
    link's name kept as its target (``staged``: the packages it may lead into); a dict filled as
    installations finish is read at each call (the members asked resolved again once it grew)."""
    packages = frozenset(wanted)
    into = {*packages, *staged}
    links = {} if links is None else links
    asked: dict[str, list[str]] = {}
    known = [-1]  # len(links) when ``asked`` was resolved

    def kept(file: str, rule: str | None = None) -> bool:
        if file in packages:
            return rule in (None, "unreadable-input")
        if known[0] != len(links):
            asked.clear()
            for package, names in wanted.items():
                for name in names:
                    owner, member = _resolved(package, _member(name, package), links, into)
                    asked.setdefault(owner, []).append(member)
            known[0] = len(links)
        split = split_member(file, packages)
        return split is None or any(_within(split[1], m) for m in asked.get(split[0], ()))

    return kept


def _resolved(package: str, member: str, links: Mapping[str, str], packages: Set[str] = frozenset()) -> tuple[str, str]:
    """``(package, member)`` of what ``member`` of ``package`` opens as through the packages'
    symlinks (``report.resolve_link``): the target's path, and its package (one of ``packages``
    when the link leads into another package's file of a shared prefix); unchanged without one."""
    if not links:
        return package, member
    target = resolve_link(links, f"{package}!{member}")
    return split_member(target, {package, *packages}) or (package, member)


def _member(name: str, package: str) -> str:
    """The member part of ``name`` (``PACKAGE!member``), normalised as staging installs it."""
    return posixpath.normpath(name[len(package) + 1 :]).lstrip("/")


def _within(member: str, asked: str) -> bool:
    """True when the reported ``member`` (``lib/x.a(o.o)`` for an archive's) is the member
    ``asked``, one of its archive members, or below it (a directory asked for)."""
    return member == asked or member.startswith((f"{asked}(", f"{asked}/"))


def _found(package: str, member: str, files: Sequence[FileResult], findings: Sequence[Finding]) -> bool:
    """True when a file kept is ``member`` of ``package`` (or within it), or an ``unreadable-input``
    kept names it or the package."""
    prefix = f"{package}!"

    def mine(path: str) -> bool:
        return path.startswith(prefix) and _within(path[len(prefix) :], member)

    return any(mine(f.path) for f in files) or any(
        f.rule == "unreadable-input" and (f.file == package or mine(f.file)) for f in findings
    )
