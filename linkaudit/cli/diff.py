"""``linkaudit diff OLD NEW``: the release-to-release regression view of two builds."""

from __future__ import annotations

import json
from collections.abc import Sequence, Set
from typing import Any

import click

from .. import __version__
from ..audit import audit_binaries
from ..config import AuditConfig, baseline
from ..diff import Ambiguity, BuildDiff, diff_builds
from ..model import Binary
from ..output import text_safe, utf8_tree
from ..report import Finding, Severity, split_member
from .cacheflag import no_cache_option
from .check import (
    CONFIG_OPTION,
    IGNORE_OPTION,
    INPUT_PATHS,
    MAX_VERSION_OPTION,
    NO_CONFIG_OPTION,
    NO_LOADER_OPTION,
    PROFILE_OPTION,
    audit_config,
    file_settings,
)
from .emit import emit
from .filedefaults import loader_with_file
from .members import cut_to_members, member_operands, opened_as
from .options import loader_options


def _found(findings: Sequence[Finding]) -> list[Finding]:
    """The findings of one build a diff compares: a finding the configuration suppresses is left
    out, as ``check`` does not count it."""
    return [f for f in findings if f.rule not in baseline.NOT_RECORDED and f.suppressed is None]


def _unreadable(findings: Sequence[Finding]) -> list[tuple[str, str]]:
    """``(file, reason)`` of each ``unreadable-input`` finding of one build, each file once."""
    out = {f.file: f.message for f in reversed(findings) if f.rule == "unreadable-input"}
    return list(reversed(out.items()))


def _read_build(path: str, config: AuditConfig) -> tuple[list[Finding], tuple[Binary, ...], frozenset[str], str]:
    """One build's findings, binaries and the packages its run staged (``Report.packages``),
    ``audit_binaries`` of ``path``, and ``path`` as its files are named (a member given by a
    symlink's name: its target's, ``members.opened_as``; else ``path``).  A member given as ``PACKAGE!member`` is audited within its
    package (the loader finds its siblings), then the findings and binaries cut down to it, as
    ``check`` cuts them (``members.cut_to_members``: a member the package lacks is an
    unreadable-input finding, ``members.NO_MEMBER``).

    Raises:
        ConfigError: as ``audit_binaries``.
    """
    given, wanted = member_operands([path])
    whole, read = audit_binaries(given, config)
    report, binaries = cut_to_members(whole, wanted, read)
    named = next((opened_as(path, package, whole) for package in wanted), path)
    return list(report.findings), binaries, frozenset(report.packages), named


def _findings(
    found: list[Finding], keys: dict[str, str], path: str, packages: Set[str]
) -> dict[baseline.Fingerprint, Finding]:
    """The findings of one build by fingerprint (``--baseline``'s), each file under its pairing
    key (``keys``: ``diff.diff_builds``'s, as its binary pairs); ``packages``: those the build staged."""
    out = {}
    for f in found:
        for rule, _file, subject in baseline.fingerprints(f, [path], packages):  # a symbol each, where listed
            out[(rule, keys[f.file], subject)] = f
    return out


@click.command("diff")
@click.argument("old", type=INPUT_PATHS)
@click.argument("new", type=INPUT_PATHS)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@MAX_VERSION_OPTION
@PROFILE_OPTION
@IGNORE_OPTION
@NO_LOADER_OPTION
@CONFIG_OPTION
@NO_CONFIG_OPTION
@loader_options
@no_cache_option
def diff(
    old: str,
    new: str,
    fmt: str,
    max_versions: tuple[str, ...],
    profile: str | None,
    ignore: tuple[str, ...],
    no_loader: bool,
    config_path: str | None,
    no_config: bool,
    entries: tuple[str, ...],
    **loader: Any,
) -> int:
    """Compare two builds (two files, two directories, two packages, or two package members written
    PACKAGE!member, as show takes them): files added and removed; per binary, DT_NEEDED entries
    added and removed, RPATH/RUNPATH changes, undefined symbols added and removed, the highest
    needed symbol version per prefix raised or lowered; per shared library, its SONAME changed and
    its exports added and removed; and the findings new and gone (fingerprints as in --baseline),
    each build audited as `check` audits it: the loader emulation (unless --no-loader) and the
    configuration file's severities, suppressions and ignores (--config, --no-config, --ignore,
    --profile, --max-version as check's).

    \b
    Exit status: 0 no regression; 1 a regression: a new error finding that is not
    suppressed (a library the new build no longer finds: library-not-found), a symbol
    version raised, or an ABI break of a shared library the build ships (its SONAME
    changed or an export removed: binaries linked against the old one no longer load;
    an export added, or rebound "~ export bar@V1 -> bar", is none); 2 an input could
    not be read (named on standard error, listed "? file ... unreadable"; the rest is
    compared) or a usage error; 3 internal error.
    """
    config = _config(config_path, no_config, profile, max_versions, ignore, no_loader, entries, loader)
    old_report, before, old_staged, old_named = _read_build(old, config)
    new_report, after, new_staged, new_named = _read_build(new, config)
    old_errors, new_errors = _unreadable(old_report), _unreadable(new_report)
    for file, reason in (*old_errors, *new_errors):
        click.echo(f"linkaudit: error: {text_safe(file)}: {text_safe(reason)}", err=True)
    old_found, new_found = _found(old_report), _found(new_report)
    result, old_keys, new_keys = diff_builds(
        before,
        [old_named],
        after,
        [new_named],
        [f.file for f in old_found],
        [f.file for f in new_found],
        old_packages=old_staged,
        new_packages=new_staged,
        old_unreadable=old_errors,
        new_unreadable=new_errors,
    )
    old_f = _findings(old_found, old_keys, old_named, old_staged)
    new_f = _findings(new_found, new_keys, new_named, new_staged)
    new_findings, gone = _compared(old_f, new_f, result)
    if fmt == "json":
        doc = _to_dict(result, new_findings, gone, (old, new), (old_staged, new_staged))
        emit(json.dumps(utf8_tree(doc), indent=2) + "\n")
    else:
        emit(_text(result, new_findings, gone, old, new))
    regressed = any(f.severity is Severity.ERROR for _, f in new_findings) or any(d.regressed for d in result.changed)
    return 2 if old_errors or new_errors else 1 if regressed else 0


def _config(
    config_path: str | None,
    no_config: bool,
    profile: str | None,
    max_versions: tuple[str, ...],
    ignore: tuple[str, ...],
    no_loader: bool,
    entries: tuple[str, ...],
    loader: dict[str, Any],
) -> AuditConfig:
    """Both builds' ``AuditConfig``, as ``check`` makes it of the same options (``check.file_settings``,
    ``filedefaults.loader_with_file``, ``check.audit_config``): the configuration file's severities,
    suppressions and ignores, the profile, and the loader emulation unless ``--no-loader``.

    Raises:
        ConfigError: as ``check.audit_config`` and ``check.file_settings``.
    """
    settings = file_settings(config_path, no_config)
    loader = loader_with_file(loader, settings)
    return audit_config(
        settings, loader, profile, max_versions, ignore, no_loader, entries,
        baseline_path=None, link_line=None, linker="link.exe", source_dirs=(), verify=False, jobs=1,
    )  # fmt: skip


#: A finding of one build with its file's pairing key (``_findings``).
Keyed = tuple[str, Finding]


def _only(these: dict[baseline.Fingerprint, Finding], those: dict[baseline.Fingerprint, Finding]) -> list[Keyed]:
    """The findings of ``these`` whose fingerprint ``those`` lacks, in fingerprint order, each once
    (a finding that lists several symbols has a fingerprint each), with its file's pairing key."""
    out: dict[int, Keyed] = {}
    for key in sorted(set(these) - set(those)):
        out.setdefault(id(these[key]), (key[1], these[key]))
    return list(out.values())


def _compared(
    old: dict[baseline.Fingerprint, Finding], new: dict[baseline.Fingerprint, Finding], result: BuildDiff
) -> tuple[list[Keyed], list[Keyed]]:
    """The findings new and gone (``_only``), those of a file one build could not read left out
    (``BuildDiff.unreadable``): unknown, neither new nor gone."""
    unknown = {u.key for u in result.unreadable}
    return [k for k in _only(new, old) if k[0] not in unknown], [k for k in _only(old, new) if k[0] not in unknown]


def _finding(keyed: Keyed, root: str, packages: Set[str]) -> dict[str, Any]:
    """A finding in ``--format json``: ``file`` relative to the input ``root``, ``key`` its file's
    pairing key (as ``changed[].file`` writes it: a wheelhouse member under its wheel's tags) and
    ``package`` the package of ``packages`` (those the build staged) that holds it, ``None`` for a
    file given or found in a directory (a ``!`` in its name is its name's: ``report.split_member``)."""
    key, f = keyed
    split = split_member(f.file, packages)
    return {
        "rule": f.rule,
        "severity": f.severity.value,
        "file": baseline.relative_file(f.file, [root], packages),
        "key": key,
        "package": split[0] if split is not None else None,
        "subject": f.subject,
        "message": f.message,
    }


def _to_dict(
    result: BuildDiff, new_f: list[Keyed], gone: list[Keyed], given: tuple[str, str], staged: tuple[Set[str], Set[str]]
) -> dict[str, Any]:
    """The diff in ``--format json``; ``given``: the old and the new input, ``staged``: the packages
    each build staged."""
    old, new = given
    return {
        "schema": "linkaudit-diff/1",
        "tool": {"name": "linkaudit", "version": __version__},
        "old": old,
        "new": new,
        "summary": _summary(result, new_f, gone),
        "files_added": list(result.added),
        "files_removed": list(result.removed),
        "changed": [
            {
                "file": d.file,
                "needed_added": list(d.needed_added),
                "needed_removed": list(d.needed_removed),
                "rpath": None if d.rpath is None else {"old": list(d.rpath[0]), "new": list(d.rpath[1])},
                "runpath": None if d.runpath is None else {"old": list(d.runpath[0]), "new": list(d.runpath[1])},
                "undefined_added": list(d.undefined_added),
                "undefined_removed": list(d.undefined_removed),
                "versions_raised": [{"old": a, "new": b} for a, b in d.versions_raised],
                "versions_lowered": [{"old": a, "new": b} for a, b in d.versions_lowered],
                "soname": None if d.soname is None else {"old": d.soname[0], "new": d.soname[1]},
                "exports_added": list(d.exports_added),
                "exports_removed": list(d.exports_removed),
                "exports_rebound": [{"old": a, "new": b} for a, b in d.exports_rebound],
            }
            for d in result.changed
        ],
        "ambiguous": [
            {
                "key": a.key,
                "old": [{"file": f.file, "key": f.key, "paired": f.paired} for f in a.old],
                "new": [{"file": f.file, "key": f.key, "paired": f.paired} for f in a.new],
            }
            for a in result.ambiguous
        ],
        "unreadable": [
            {
                "side": u.side,
                "file": baseline.relative_file(
                    u.file, [old if u.side == "old" else new], staged[1 if u.side == "new" else 0]
                ),
                "key": u.key,
                "reason": u.reason,
            }
            for u in result.unreadable
        ],
        "findings_new": [_finding(f, new, staged[1]) for f in new_f],
        "findings_gone": [_finding(f, old, staged[0]) for f in gone],
    }


def _summary(result: BuildDiff, new_f: list[Keyed], gone: list[Keyed]) -> dict[str, int]:
    """The counts the text's last line gives, by name (``--format json``'s ``summary``): an ABI
    break is a shared library whose SONAME changed or that lost an export (``BinaryDiff.regressed``)."""
    return {
        "files_added": len(result.added),
        "files_removed": len(result.removed),
        "files_changed": len(result.changed),
        "versions_raised": sum(len(d.versions_raised) for d in result.changed),
        "abi_breaks": sum(1 for d in result.changed if d.soname or d.exports_removed),
        "findings_new": len(new_f),
        "findings_gone": len(gone),
        "ambiguous": len(result.ambiguous),
        "unreadable": len(result.unreadable),
    }


def _n(count: int, noun: str) -> str:
    """``"1 file"``, ``"2 files"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _listed(label: str, names: tuple[str, ...], what: str) -> list[str]:
    """One line ``  LABEL name`` per name, the first 12, then one saying how many more."""
    shown = names[:12]
    lines = [f"  {label} {n}" for n in shown]
    if len(names) > len(shown):
        lines.append(f"  {label[0]} … (+{len(names) - len(shown)} more {what}; --format json lists all)")
    return lines


def _ambiguity(a: Ambiguity) -> list[str]:
    """``? ambiguous KEY …`` and how its files were paired: ``= OLD with NEW`` for a pair, ``- OLD``
    and ``+ NEW`` for a file kept apart (removed, added)."""
    new_of = {f.key: f.file for f in a.new if f.paired}
    lines = [
        f"? ambiguous {a.key}: {_n(len(a.old), 'file')} in the old build, {len(a.new)} in the new share it; "
        "paired by platform tag as written, then by package file name (version)"
    ]
    lines += [f"  = {f.file} with {new_of[f.key]}" for f in a.old if f.paired]
    lines += [f"  - {f.file}" for f in a.old if not f.paired] + [f"  + {f.file}" for f in a.new if not f.paired]
    return lines


def _text(result: BuildDiff, new_f: list[Keyed], gone: list[Keyed], old: str, new: str) -> str:
    lines = [f"--- {old}", f"+++ {new}"]
    lines += [f"+ file {p}" for p in result.added] + [f"- file {p}" for p in result.removed]
    lines += [f"? file {u.key} unreadable in {u.side.upper()}: {u.reason}" for u in result.unreadable]
    for a in result.ambiguous[:12]:
        lines += _ambiguity(a)
    if len(result.ambiguous) > 12:
        lines.append(f"? … (+{len(result.ambiguous) - 12} more keys ambiguous; --format json lists all)")
    for d in result.changed:
        lines.append(d.file)
        lines += [f"  + DT_NEEDED {n}" for n in d.needed_added] + [f"  - DT_NEEDED {n}" for n in d.needed_removed]
        for label, change in (("RPATH", d.rpath), ("RUNPATH", d.runpath)):
            if change is not None:
                lines.append(f"  ~ {label} {':'.join(change[0]) or '(none)'} -> {':'.join(change[1]) or '(none)'}")
        lines += [f"  ! version raised {a or '(none)'} -> {b}" for a, b in d.versions_raised]
        lines += [f"  ~ version lowered {a} -> {b or '(none)'}" for a, b in d.versions_lowered]
        if d.soname is not None:
            lines.append(f"  ! SONAME {d.soname[0] or '(none)'} -> {d.soname[1] or '(none)'}")
        lines += _listed("! export removed", d.exports_removed, "exports removed")
        lines += _listed("+ export", d.exports_added, "exports added")
        lines += _listed("~ export", tuple(f"{a} -> {b}" for a, b in d.exports_rebound), "exports rebound")
        lines += _listed("+ undefined", d.undefined_added, "undefined")
        lines += _listed("- undefined", d.undefined_removed, "undefined")
    lines += [f"+ [{f.rule}] {f.file}: {f.subject}" for _, f in new_f]
    lines += [f"- [{f.rule}] {f.file}: {f.subject}" for _, f in gone]
    n = _summary(result, new_f, gone)
    lines.append(
        f"{_n(n['files_added'], 'file')} added, {n['files_removed']} removed, {n['files_changed']} changed; "
        f"{_n(n['versions_raised'], 'version ceiling')} raised; {_n(n['abi_breaks'], 'ABI break')}; "
        f"{_n(n['findings_new'], 'finding')} new, {n['findings_gone']} gone"
        + (f"; {_n(n['ambiguous'], 'key')} ambiguous" if n["ambiguous"] else "")
        + (f"; {n['unreadable']} unreadable" if n["unreadable"] else "")
    )
    return "\n".join(text_safe(line) for line in lines) + "\n"
