"""The audit driver: paths in, ``Report`` out.

inputs -> formats -> model -> rules -> findings.  An input that cannot be read
becomes an ``unreadable-input`` finding and the rest of the audit goes on.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Set
from dataclasses import field, replace
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .config import AuditConfig
from .config.model import file_matches
from .config.profiles import WheelPolicy, get_profile, implied_by_wheel, wheel_platform_tags
from .context import AuditContext
from .errors import ConfigError, InputError, UnsupportedFormat, did_you_mean
from .formats import Container, read_path, unsupported_reason
from .formats.filebytes import NO_SUCH_FILE
from .inputs import Collected, collect
from .jobs import Failed, Spread, pools, read_paths, run_tasks
from .loader.analysis import LinkageAnalysis
from .loader.target import TargetEnvironment
from .model import Binary, Format, Libc
from .packages import (
    PACKAGE_SUFFIXES,
    Installation,
    PlannedInputs,
    Site,
    Staged,
    claimed_glibc,
    find_site,
    owner_in,
    plan_each,
    plan_inputs,
    site_targets,
    sites_below,
    staged_inputs,
)
from .packages.prepare import empty_directory_message
from .records import dataclass
from .report import FileResult, FileStatus, Finding, Report, RootInfo, Severity, split_member
from .rules import RULES, get_rule, rule_ids
from .rules.broken_symlink import BrokenSymlink
from .rules.file_clash import clash_finding, copies_finding

if TYPE_CHECKING:
    from .config.baseline import Fingerprint
    from .config.policies import Policy
    from .link.sources import GeneratedSource
    from .loader.analysis import Root
    from .loader.images import ImageLoad
    from .packages.installation import InstallationModel
    from .packages.staging import Progress
    from .rules.base import Rule
    from .verify import Disagreement


_T = TypeVar("_T")


def _unreadable(error: InputError) -> Finding:
    return Finding(
        "unreadable-input",
        Severity.ERROR,
        error.path,
        error.path,
        error.reason + (f" (at byte offset {error.offset:#x})" if error.offset is not None else ""),
        {"reason": error.reason, "offset": error.offset},
    )


def analyze_inputs(
    binaries: Sequence[Binary],
    target: TargetEnvironment,
    entries: Sequence[str] = (),
    bind_all: bool = False,
    verify_all: bool = False,
) -> tuple[LinkageAnalysis | None, list[InputError]]:
    """Run the loader emulation over the inputs read.

    Args:
        binaries: the inputs, as read.
        target: the target system.
        entries: import roots (``--entry``); empty = the defaults of ``default_roots``.
        bind_all: bind every loaded object, not only the inputs.
        verify_all: check the version needs of every loaded object, not only the inputs.

    Returns:
        The analysis (``None`` when the target's ld.so.cache is malformed, or the loads ran out of
        memory) and the errors met (an unreadable ``--entry``, a malformed cache, that memory); the
        CLI or the audit reports them, every other input is still analysed.
    """
    from .cache import active as active_cache
    from .loader.analysis import analyze
    from .loader.fs import FileSystemView
    from .rules.data import driver_index

    errors: list[InputError] = []
    fs = FileSystemView(target.sysroot)
    for binary in binaries:
        fs.remember(binary)
    roots = _entry_roots(entries, {b.path: b for b in binaries}, errors) if entries else None
    exhausted = False
    try:
        analysis = analyze(
            binaries,
            target,
            roots,
            fs,
            is_driver=driver_index().is_driver,
            bind_all=bind_all,
            verify_all=verify_all,
            store=active_cache(),
        )
    except InputError as error:
        errors.append(error)
        return None, errors
    except MemoryError:  # the loads outgrew memory: the per-file rules still run, the run says so
        exhausted = True
    if exhausted:
        # Named outside the handler: inside it the traceback keeps the failed loads' frames (all
        # that memory) alive, and naming 3,000 inputs raised MemoryError again (exit 3).
        gc.collect()
        errors.append(_out_of_memory(binaries))
        return None, errors
    errors.extend(analysis.problems)
    return analysis, errors


def _entry_roots(entries: Sequence[str], by_path: dict[str, Binary], errors: list[InputError]) -> list[Root]:
    """The ELF import roots ``--entry`` names (read when not among the inputs; an unreadable one
    joins ``errors``); a PE or Mach-O entry is its own loader's (analyze_windows, analyze_dyld)."""
    from .loader.analysis import Root
    from .loader.closure import root_kind_of

    roots = []
    for entry in entries:
        root = by_path.get(entry)
        if root is None:
            try:
                root = read_path(entry)[0]
            except InputError as error:
                errors.append(error)
                continue
        if root.format is Format.ELF:
            roots.append(Root(entry, root_kind_of(root)))
    return roots


def _common_directory(paths: Sequence[str]) -> str:
    """The directory all of ``paths`` lie in (``"."`` for none; the first when absolute and relative mix)."""
    try:
        where = os.path.commonpath(paths) if paths else "."
    except ValueError:  # absolute and relative paths mixed
        where = paths[0]
    return where or "."


def _out_of_memory(binaries: Sequence[Binary]) -> InputError:
    """The error of a loader emulation that ran out of memory, named by the inputs' common directory."""
    paths = [b.path for b in binaries]
    return InputError(
        _common_directory(paths),
        f"the loader emulation of {len(paths)} input{'s' if len(paths) != 1 else ''} ran out of memory (each library no import root "
        "reaches is loaded on its own with its whole closure: a long chain or cycle of libraries that also "
        "need libc costs the square of their number); only the per-file rules ran — give the import roots "
        "with --entry, or audit fewer libraries together",
    )


def _analyze(binaries: list[Binary], config: AuditConfig, findings: list[Finding]) -> LinkageAnalysis | None:
    """Run the loader emulation for ``audit``; its errors become unreadable-input findings."""
    assert config.target is not None
    analysis, errors = analyze_inputs(binaries, config.target, config.entries)
    findings.extend(_unreadable(error) for error in errors)
    return analysis


def _sysroot_escape_check(config: AuditConfig) -> Callable[[str], None]:
    """With ``--sysroot``: a function refusing an input inside the image whose symlinks lead
    out of it (the host's file would be audited in place of the image's).

    Raises (from the returned function):
        InputError: the input's real path leaves the sysroot.
    """
    target = config.target
    if target is None or target.sysroot in ("/", ""):
        return lambda _path: None
    root = os.path.realpath(target.sysroot)
    given_root = os.path.abspath(target.sysroot)

    def check(path: str) -> None:
        absolute = os.path.abspath(path)
        if not (absolute == given_root or absolute.startswith(given_root + os.sep)):
            return
        real = os.path.realpath(path)
        if real != root and not real.startswith(root + os.sep):
            raise InputError(
                path,
                f"a symlink that leads out of the sysroot (to the host's {real}): inside the image it means "
                "another file, which linkaudit does not read from the host",
            )

    return check


def _configure(
    findings: list[Finding],
    config: AuditConfig,
    inputs: Sequence[str],
    packages: Set[str],
    elsewhere: Sequence[str] = (),
    targets: Mapping[str, frozenset[str]] | None = None,
    ran: Set[str] | None = None,
) -> list[Finding]:
    """Apply the configuration file: severity overrides, then suppressions (each with its reason);
    a suppression that covers nothing becomes an ``unused-suppression`` warning — unless its
    ``file`` names none of the inputs or packages of the run but one of ``elsewhere``, the packages
    lying beside the packages given that the run did not audit (``_unaudited_packages``: a per-wheel
    CI job's other wheels), or its rule is not among those that ran (``ran``; ``None``: every
    one — an ignored rule, or one needing the loader under ``--no-loader``): not judged here.
    Then the baseline: a finding it records is suppressed, and each entry no finding matches any
    more becomes a ``baseline-fixed`` note (``_apply_baseline``; fingerprints relative to
    ``inputs``, ``packages`` the packages staged: ``baseline.fingerprint``; ``targets``: the wheel
    targets of the sites' files, ``_site_targets``)."""
    used: set[int] = set()
    out = [_configured(f, config, used, packages) for f in findings]
    if config.baseline is not None:
        out = _apply_baseline(out, config, inputs, packages, targets, ran)
    for i, s in enumerate(config.suppressions):
        if i in used or "unused-suppression" in config.ignore or (ran is not None and s.rule not in ran):
            continue
        if _aimed_elsewhere(s.file, elsewhere, inputs, packages):
            continue
        out.append(
            Finding(
                "unused-suppression",
                Severity.WARNING,
                config.config_file or "linkaudit.toml",
                f"{s.rule} {s.file}" + (f" {s.subject}" if s.subject else ""),
                f"{s.where} matches no finding: the exception it documents is gone — remove it",
                {"rule": s.rule, "file": s.file, "subject": s.subject, "reason": s.reason},
            )
        )
    return out


def _aimed_elsewhere(glob: str, elsewhere: Sequence[str], inputs: Sequence[str], packages: Set[str]) -> bool:
    """True when the suppression ``file`` ``glob`` names one of the packages ``elsewhere`` (not
    audited in this run) and none of the run's ``inputs`` or ``packages`` (``file_matches``)."""
    if not any(file_matches(p, glob, packages) for p in elsewhere):
        return False
    return not any(file_matches(p, glob, packages) for p in (*inputs, *packages))


def _unaudited_packages(paths: Sequence[str], packages: Set[str]) -> list[str]:
    """The packages (``PACKAGE_SUFFIXES``) in the directories of the packages given among
    ``paths`` that the run did not stage (``packages``): the other wheels of a ``dist/`` a per-wheel
    CI job checks one of; an unreadable directory has none."""
    out: list[str] = []
    for directory in dict.fromkeys(os.path.dirname(p) for p in paths if p in packages):
        try:
            names = sorted(os.listdir(directory or "."))
        except OSError:
            continue
        out.extend(
            path
            for path in (os.path.join(directory, n) for n in names if n.endswith(PACKAGE_SUFFIXES))
            if path not in packages
        )
    return out


def _configured(f: Finding, config: AuditConfig, used: set[int], packages: Set[str]) -> Finding:
    """``f`` with its configured severity and the first suppression covering it (its index
    added to ``used``; ``packages``: those the run staged, ``Suppression.matches``). A severity override sets the rule's errors and warnings; its notes (what
    the rule says is allowed: a weak symbol bound nowhere, a host program's API) stay notes."""
    overrides = dict(config.severities)
    if f.rule in overrides and f.severity is not Severity.NOTE:
        f = replace(f, severity=overrides[f.rule])
    for i, s in enumerate(config.suppressions):
        if s.matches(f.rule, f.file, f.subject, packages):
            used.add(i)
            return replace(f, suppressed=s.reason)
    return _per_symbol(f, config, used, packages) if config.suppressions else f


def _per_symbol(f: Finding, config: AuditConfig, used: set[int], packages: Set[str]) -> Finding:
    """``f``, a finding of several symbols (subject "2 symbols": ``unresolved-symbol``,
    ``abi3-symbol``), under the suppressions whose ``subject`` names symbols one by one, as the
    baseline keys them: suppressed when each of its symbols is covered (each suppression used),
    else reported, saying which symbols were covered and which are not. A ``subject = "bar"``
    stopped matching once ``baz`` failed too, and was called stale."""
    from .config.baseline import symbols_of
    from .rules.base import preview

    names = symbols_of(f)
    if len(names) < 2:
        return f
    covered: dict[str, int] = {}
    for name in names:
        i = next((i for i, s in enumerate(config.suppressions) if s.matches(f.rule, f.file, name, packages)), None)
        if i is not None:
            covered[name] = i
    if not covered:
        return f
    used.update(covered.values())
    if len(covered) == len(names):
        reasons = dict.fromkeys(config.suppressions[i].reason for i in covered.values())
        return replace(f, suppressed="; ".join(reasons))
    rest = [n for n in names if n not in covered]
    return replace(f, message=f"{f.message} (suppressed: {preview(list(covered))}; not suppressed: {preview(rest)})")


def _apply_baseline(
    findings: list[Finding],
    config: AuditConfig,
    inputs: Sequence[str],
    packages: Set[str],
    targets: Mapping[str, frozenset[str]] | None = None,
    ran: Set[str] | None = None,
) -> list[Finding]:
    """``findings`` under the baseline (``_baselined``), and a ``baseline-fixed`` note for each
    entry no finding matched whose file the run audited: an entry keyed to a wheel's target or a
    conda build's variant (``baseline.keyed_file``) none of the packages staged has is about a
    package this run did not audit (a per-wheel CI job's), not fixed: left alone; so is an entry
    of a rule that did not run (``ran``; ``None``: every one), and one of a loader rule on a file
    the loader left unloaded (``baseline.not_loaded``). ``targets``: ``_baselined``'s."""
    from .config.baseline import audited_scopes, not_loaded

    assert config.baseline is not None
    seen: set[Fingerprint] = set()
    out = [_baselined(f, config, (inputs, packages), seen, targets) for f in findings]
    if "baseline-fixed" not in config.ignore:
        scopes = audited_scopes(inputs, packages)
        unloaded = not_loaded(config.baseline, findings, inputs, packages, LOADER_RULES)
        for rule, file, subject in sorted(config.baseline - seen - unloaded):
            if (":" in file and not file.startswith(scopes)) or (ran is not None and rule not in ran):
                continue  # a target or variant not audited in this run, a rule that did not run
            out.append(
                Finding(
                    "baseline-fixed",
                    Severity.NOTE,
                    config.baseline_file or "baseline",
                    f"{rule} {file} {subject}",
                    f"[{rule}] {file}{'' if subject == file else f': {subject}'} is in the baseline but no "
                    "longer found: fixed (write the baseline again to drop it)",
                    {"rule": rule, "file": file, "subject": subject},
                )
            )
    return out


def _baselined(
    f: Finding,
    config: AuditConfig,
    given: tuple[Sequence[str], Set[str]],
    seen: set[Fingerprint],
    targets: Mapping[str, frozenset[str]] | None = None,
) -> Finding:
    """``f`` under the baseline (``config.baseline``, not ``None``), ``given``: the inputs and the
    packages staged (``baseline.fingerprint``'s), ``targets``: the wheel targets of the installed
    sites' files (``_site_targets``): suppressed when the baseline
    records each of its fingerprints (``_entries``), else reported, saying which symbols are new when some are
    recorded; the fingerprints it matched are added to ``seen``. One finding at a time, so that
    the streamed report (``--format jsonl``) marks its lines as the whole report does."""
    from .config.baseline import BASELINED, UNTARGETED
    from .rules.base import preview

    keys, entries, older = _entries(f, config, given, targets or {})
    known = [e for e in entries if e is not None] if f.rule != "unreadable-input" else []
    seen.update(known)
    if known and len(known) == len(keys):
        if f.suppressed is None:
            mark = UNTARGETED if older else ""
            f = replace(f, suppressed=f"{BASELINED}{config.baseline_file}{mark}")
    elif known:  # some of its symbols are new: reported, saying which
        new = [key[2] for key, e in zip(keys, entries, strict=True) if e is None]
        f = replace(f, message=f"{f.message} (not in the baseline: {preview(new)})")
    return f


def _entries(
    f: Finding, config: AuditConfig, given: tuple[Sequence[str], Set[str]], targets: Mapping[str, frozenset[str]]
) -> tuple[tuple[Fingerprint, ...], list[Fingerprint | None], bool]:
    """``f``'s fingerprints (``baseline.fingerprints``), the baseline entry accepting each (``None``:
    none does), and whether one is an older form's (``baseline.UNTARGETED``). An entry accepts a
    fingerprint when it is its key; or its input's label (a baseline of several inputs, read by a
    run of one); or, for a file of an unpacked wheel or a site, the key of the same member of the
    distribution's wheel (``baseline.wheel_entry``); or, an older form, its key without the input's
    name or the wheel's target, or a site's file keyed below the prefix (``sited=False``), or a conda
    member's without its package's name or an input's label unescaped where that names it alone
    (``baseline.older_parts``)."""
    from .config.baseline import fingerprints, older_parts, wheel_entry

    baseline = config.baseline
    assert baseline is not None
    keys = fingerprints(f, *given)
    named = fingerprints(f, *given, form="named")
    entries: list[Fingerprint | None] = [
        k if k in baseline else n if n in baseline else None for k, n in zip(keys, named, strict=True)
    ]
    if None in entries and split_member(f.file, given[1]) is None:  # a file of a tree: its wheel's entry
        mine = targets.get(f.file)
        entries = [
            e or wheel_entry(k, baseline, mine) or wheel_entry(n, baseline, mine)
            for e, k, n in zip(entries, keys, named, strict=True)
        ]
    if None not in entries:
        return keys, entries, False
    forms = [fingerprints(f, *given, form=form) for form in ("targeted", "plain")]
    for parts in older_parts(f.file, *given):  # without the package's name, the label unescaped
        forms += [fingerprints(f, *given, form=form, older=parts) for form in ("keyed", "named", "targeted")]
    if "site-packages/" in f.file:  # keyed below the prefix before
        forms += [fingerprints(f, *given, form=form, sited=False) for form in ("keyed", "named", "targeted", "plain")]
    older = [e or next((o[i] for o in forms if o[i] in baseline), None) for i, e in enumerate(entries)]
    return keys, older, older != entries


def _audit_staged(
    staged: Staged, config: AuditConfig, sites: Sequence[Site] = ()
) -> tuple[list[FileResult], list[Finding], list[str], tuple[RootInfo, ...], list[Binary], LinkageAnalysis | None]:
    """The body of ``audit`` over the inputs with packages already staged (``staged.errors``: their
    refused members) and the installed ``sites`` they lie in: files, findings before
    configuration, the rules that ran, the roots, the binaries read, the loader emulation."""
    files, findings, binaries = _read_inputs(staged, config)
    implied = _wheel_policies(binaries, staged, sites)
    binaries = [_libc_from_tag(b, implied.get(b.path)) for b in binaries]
    linkage = None
    if config.target is not None:
        linkage = _analyze(binaries, config, findings)
    generated: tuple[GeneratedSource, ...] = ()
    if config.source_dirs:
        from .link.sources import scan

        generated = tuple(g for d in config.source_dirs for g in scan(d))
    image_skipped: list[tuple[str, str]] = []
    windows, dyld = _image_loads_or_error(binaries, config, findings, image_skipped)
    disagreements: tuple[Disagreement, ...] = ()
    if config.verify:
        from .verify import verify  # lief: imported only when asked

        disagreements = tuple(verify(binaries))
    context = AuditContext(
        tuple(binaries),
        config,
        linkage,
        generated,
        implied,
        staged if staged.packages else None,
        windows=windows,
        dyld=dyld,
        image_skipped=tuple(image_skipped),
        disagreements=disagreements,
        site_roots=tuple(s.root for s in sites),
        installation=_installation(staged, sites),
    )
    ran = _run_rules(context, findings)
    return files, findings, ran, _root_infos(linkage, (*windows, *dyld)), binaries, linkage


def _gone(error: InputError, path: str) -> InputError:
    """``error``, saying so when the file the walk listed was gone when read (a build tree written
    while it is audited): "no such file or directory" alone read as a wrong path given."""
    if error.path == path and error.reason == NO_SUCH_FILE:
        return InputError(path, f"{NO_SUCH_FILE}: listed when the tree was walked, gone when read "
                          "(the tree changed while check ran)", error.offset)  # fmt: skip
    return error


def _read_inputs(staged: Staged, config: AuditConfig) -> tuple[list[FileResult], list[Finding], list[Binary]]:
    """Read every input file (packages already staged: ``staged.errors`` are their refused
    members): the file results, the findings of reading (unreadable files, skipped formats, broken
    symlinks, directories with nothing to audit) and the binaries read, in input order."""
    paths, package_errors = staged.paths, staged.errors
    collected = collect(paths, staged.sniffed)
    files: list[FileResult] = []
    findings: list[Finding] = []
    binaries: list[Binary] = []
    for error in [*package_errors, *collected.errors]:
        files.append(FileResult(error.path, FileStatus.UNREADABLE, error=str(error.reason)))
        findings.append(_unreadable(error))
    reads = read_paths(collected.files, config.jobs, _sysroot_escape_check(config), collected.sizes)
    for path, outcome in zip(collected.files, reads, strict=True):
        try:
            read_binaries = outcome.get()
        except UnsupportedFormat as error:
            # a recognised format not read yet (Mach-O): listed, not an error
            files.append(FileResult(path, FileStatus.SKIPPED, format=error.container, reason=error.reason))
            if error.container == "llvm-bitcode":
                findings.append(Finding("lto-object", Severity.NOTE, path, path, error.reason, {"sections": []}))
            continue
        except InputError as error:
            error = _gone(error, path)
            files.append(FileResult(path, FileStatus.UNREADABLE, error=error.reason))
            findings.append(_unreadable(error))
            continue
        if not read_binaries:  # an archive without ELF or COFF members
            files.append(FileResult(path, FileStatus.AUDITED, "archive", "archive", None))
            what = (
                "a Windows library with no COFF object or import member"
                if path.lower().endswith(".lib")
                else "an archive with no ELF or COFF member (empty, or only text, bitcode or Mach-O members)"
            )
            findings.append(
                Finding("no-binaries", Severity.NOTE, path, path, f"{what}: nothing to audit", {"skipped": []})
            )
        for problem in outcome.problems:  # an archive's members not read: the others are audited
            files.append(FileResult(path, FileStatus.UNREADABLE, error=problem.reason))
            findings.append(_unreadable(problem))
        for b in read_binaries:
            files.append(FileResult(b.display_path, FileStatus.AUDITED, b.format.value, b.kind.value, b.machine))
        binaries.extend(read_binaries)
    for path, container in collected.skipped:
        reason = unsupported_reason(Container(container))
        files.append(FileResult(path, FileStatus.SKIPPED, format=container, reason=reason))
        if container == Container.LLVM_BITCODE.value:  # found in a directory: the same note as given by name
            findings.append(Finding("lto-object", Severity.NOTE, path, path, reason, {"sections": []}))
    findings.extend(BrokenSymlink.note(path, target) for path, target in collected.broken_links)
    findings.extend(_nothing_to_audit(collected, staged, binaries))
    return files, findings, binaries


def _nothing_to_audit(collected: Collected, staged: Staged, binaries: Sequence[Binary]) -> Iterator[Finding]:
    """A ``no-binaries`` note for each input directory holding no binary (a wheelhouse, whose
    packages are audited, excepted), with the files of formats not read yet that it holds; a
    warning for each platform wheel holding none (``_platform_wheels_without_binaries``), which
    stands for the note of a staging root holding only such wheels.  A package that could not be
    read at all (truncated, not an archive) has its ``unreadable-input`` error and neither."""
    unreadable = {e.path for e in staged.errors}
    warned = set(unreadable)
    for finding in _platform_wheels_without_binaries(staged, binaries, collected, unreadable):
        warned.add(finding.file)
        yield finding
    for directory in collected.empty_dirs:
        if staged.holds_packages(directory):
            continue
        packages = staged.packages_at(directory)
        if packages and all(p in warned for p in packages):
            continue
        under = directory.rstrip("/") + "/"
        skipped = [p for p, _f in collected.skipped if p.startswith(under)]
        tarballs = staged.tarballs.get(directory, [])
        yield Finding(
            "no-binaries",
            Severity.NOTE,
            directory,
            directory,
            empty_directory_message(len(skipped), tarballs),
            {"skipped": skipped, "tarballs": tarballs},
        )


def _platform_wheels_without_binaries(
    staged: Staged, binaries: Sequence[Binary], collected: Collected, unreadable: set[str]
) -> Iterator[Finding]:
    """A ``no-binaries`` warning for each wheel staged whose platform tag is not ``any`` and that
    holds no binary (none read, none of a format not read yet): pip installs it only where the
    tag says, and auditwheel refuses it ("This does not look like a platform wheel")."""
    platform = {p: tags for p in staged.packages if (tags := [t for t in wheel_platform_tags(p) if t != "any"])}
    if not platform:
        return
    holding = {staged.package_of(b.path) for b in binaries} | {staged.package_of(p) for p, _f in collected.skipped}
    for package, tags in platform.items():
        if package in holding or package in unreadable:
            continue
        yield Finding(
            "no-binaries",
            Severity.WARNING,
            package,
            package,
            f"holds no binary, but its platform tag {'.'.join(tags)} says it does: pip installs it only "
            "on those platforms; a wheel with no compiled code is tagged `py3-none-any`",
            {"skipped": []},
        )


def _image_loads(
    binaries: Sequence[Binary], config: AuditConfig, skipped: list[tuple[str, str]]
) -> tuple[tuple[ImageLoad, ...], tuple[ImageLoad, ...]]:
    """The Windows loader's and dyld's loads of the PE and Mach-O inputs ``(windows, dyld)``: empty
    without a target (``--no-loader``); each loader imported for its own inputs only.  The roots
    their bounds left unloaded go to ``skipped`` (path, why): ``images.ImageBudget``, and dyld's
    run-wide search budget."""
    windows: tuple[ImageLoad, ...] = ()
    dyld: tuple[ImageLoad, ...] = ()
    formats = {b.format for b in binaries}
    if config.target is not None and Format.PE in formats:  # each loader imported for its inputs only
        from .loader.windows import analyze_windows

        windows = tuple(
            analyze_windows(
                binaries,
                config.dll_directories,
                config.preload_dlls,
                path=config.windows_path,
                entries=config.entries,
                skipped=skipped,
            )
        )
    if config.target is not None and Format.MACHO in formats:
        from .loader.dyld import analyze_dyld

        dyld = tuple(
            analyze_dyld(
                binaries,
                config.executable_path,
                library_path=config.dyld_library_path,
                fallback_library_path=config.dyld_fallback_library_path,
                entries=config.entries,
                skipped=skipped,
            )
        )
    return windows, dyld


def _image_loads_or_error(
    binaries: Sequence[Binary], config: AuditConfig, findings: list[Finding], skipped: list[tuple[str, str]]
) -> tuple[tuple[ImageLoad, ...], tuple[ImageLoad, ...]]:
    """``_image_loads``; when the Windows loader's or dyld's emulation runs out of memory, no loads and
    one ``unreadable-input`` error naming the inputs (as for ELF's, ``_out_of_memory``): the per-file
    rules still run — before, the run ended "internal error: MemoryError", exit 3."""
    try:
        return _image_loads(binaries, config, skipped)
    except MemoryError:
        pass  # named outside the handler: inside it the traceback keeps the loads' memory alive
    gc.collect()
    findings.append(_unreadable(_out_of_memory(binaries)))
    return (), ()


def _run_rules(context: AuditContext, findings: list[Finding]) -> list[str]:
    """Run every rule not ignored over ``context`` (not those that need the loader emulation
    without one: ``Rule.needs_loader``), appending to ``findings``; the ids that ran."""
    ran = []
    loader = context.config.target is not None
    for rule_cls in RULES:
        if rule_cls.id in context.config.ignore or (rule_cls.needs_loader and not loader):
            continue
        ran.append(rule_cls.id)
        findings.extend(_one_rule(rule_cls, context))
    findings.extend(_under_musl_too(context, findings))
    return ran


def _one_rule(rule_cls: type[Rule], context: AuditContext) -> list[Finding]:
    """The findings of one rule over ``context``; when it runs out of memory (a cross-file rule over
    millions of symbols under a memory limit), one ``unreadable-input`` error saying so instead of
    its findings, and the other rules still run — before, the run ended "internal error", exit 3,
    with no report."""
    try:
        return list(rule_cls().check(context))
    except MemoryError:
        pass  # named outside the handler: inside it the traceback keeps the rule's memory alive
    gc.collect()
    paths = [b.path for b in context.binaries]
    error = InputError(
        _common_directory(paths),
        f"the rule {rule_cls.id} ran out of memory over {len(paths)} input{'s' if len(paths) != 1 else ''}: "
        f"its findings are missing, the other rules ran — audit fewer files together, give the "
        f"process more memory, or --ignore {rule_cls.id}",
    )
    return [_unreadable(error)]


def _root_infos(linkage: LinkageAnalysis | None, image_loads: Sequence[ImageLoad]) -> tuple[RootInfo, ...]:
    """The report's roots: ELF's from the loader emulation, then PE's and Mach-O's loads."""
    roots = [RootInfo(r.path, r.kind.value, r.reached) for r in linkage.roots] if linkage is not None else []
    seen = set(roots)  # a set: ``in`` a list of 4,000 roots was quadratic
    for ld in image_loads:
        info = RootInfo(ld.root, ld.kind, ld.reached)
        if info not in seen:  # each slice of a universal root is a load of its own
            seen.add(info)
            roots.append(info)
    return tuple(roots)


def _wheel_policies(binaries: list[Binary], staged: Staged, sites: Sequence[Site]) -> dict[str, WheelPolicy]:
    """What each binary's package promises: a wheel member's by its wheel's name
    (``profiles.implied_by_wheel``), an installed file's by the tags of the distribution that owns
    it; a conda package's, and a conda prefix's files', only the glibc it declares
    (``_conda_promise``)."""
    implied = {}
    of_package: dict[str, WheelPolicy | None] = {}  # 200,000 members of one tarball: one promise
    for b in binaries:
        promised = None
        package = staged.package_of(b.path) if staged.packages else None
        if package is not None:
            if package not in of_package:
                of_package[package] = _package_promise(package, staged)
            promised = of_package[package]
        else:
            site = next((s for s in sites if s.holds(b.path)), None)
            owner = owner_in(site, b.path) if site is not None else None
            if owner is not None and owner.kind == "conda":
                glibc = claimed_glibc(owner)
                promised = (
                    _conda_promise(glibc, owner.where, f"the prefix's glibc baseline {glibc[0]}.{glibc[1]}")
                    if glibc
                    else None
                )
            elif owner is not None:
                promised = implied_by_wheel(owner.wheel_name())
                promised = replace(promised, package=owner.where) if promised is not None else None
        if promised is not None:
            implied[b.path] = promised
    return implied


def _package_promise(package: str, staged: Staged) -> WheelPolicy | None:
    """What the staged ``package`` promises: a conda package the glibc it declares, a wheel its tags."""
    if package.endswith((".conda", ".tar.bz2")):
        glibc = staged.conda_glibc(package)
        return _conda_promise(glibc, package, f"`__glibc >={glibc[0]}.{glibc[1]}`") if glibc else None
    return implied_by_wheel(package)


def _conda_promise(glibc: tuple[int, int], package: str, what: str) -> WheelPolicy:
    """A conda package's promise: the glibc it declares (``__glibc >=X.Y``, conda's virtual
    package; a prefix's baseline, ``packages.site.conda_glibc``) and nothing else — libstdc++,
    libgcc_s and every other library come from conda packages (conda-forge's libstdcxx, libgcc), not
    from the system, so no GLIBCXX/CXXABI/GCC ceiling and no list of system libraries applies."""
    return WheelPolicy(
        f"manylinux_{glibc[0]}_{glibc[1]}",
        package,
        (f"GLIBC_{glibc[0]}.{glibc[1]}",),
        origin=f"{what} of {package}",
    )


#: The rules that judge a load, run again over the musl loads of a wheel whose tags span glibc and musl.
LOAD_RULES = ("library-not-found", "unresolved-symbol")
#: The rules whose findings come from the loader emulation alone (``Rule.needs_loader``).
LOADER_RULES = frozenset(r.id for r in RULES if r.needs_loader)


def _spans_both(binary: Binary, promised: WheelPolicy | None) -> bool:
    """An ELF file that names no C library of its own (no PT_INTERP, no libc in DT_NEEDED) in a
    wheel whose tag set names both manylinux and musllinux (``manylinux_2_17_x86_64.
    musllinux_1_1_x86_64``, as static or libc-free builds are tagged): both loaders will load it."""
    if promised is None or binary.format is not Format.ELF or binary.libc is not Libc.UNKNOWN:
        return False
    return {p.family for p in promised.policies} == {"manylinux", "musllinux"}


def _under_musl_too(context: AuditContext, findings: Sequence[Finding]) -> list[Finding]:
    """The findings of ``LOAD_RULES`` over the same files loaded by musl (``loader.musl``), for the
    files of a wheel whose tags span glibc and musl (``_spans_both``): glibc's ld.so loaded them
    above, and a musllinux system loads them with its own rules and only the musllinux policy's
    libraries (``libc.so``, ``libz.so.1``).  A finding already made for the same file and subject
    is not repeated; what only musl refuses is added, in musl's words (PEP 656's promise)."""
    config = context.config
    dual = [replace(b, libc=Libc.MUSL) for b in context.binaries if _spans_both(b, context.wheel_policies.get(b.path))]
    if not dual or config.target is None:
        return []
    linkage, _errors = analyze_inputs(dual, config.target)  # its unreadable inputs were named above
    if linkage is None:
        return []
    musl = replace(context, binaries=tuple(dual), linkage=linkage)
    seen = {(f.rule, f.file, f.subject) for f in findings}
    out: list[Finding] = []
    for rule_cls in RULES:
        if rule_cls.id in LOAD_RULES and rule_cls.id not in config.ignore:
            out.extend(f for f in rule_cls().check(musl) if (f.rule, f.file, f.subject) not in seen)
    return out


def _libc_from_tag(binary: Binary, promised: WheelPolicy | None) -> Binary:
    """``binary`` with the C library its wheel's tags name when its own file does not say (no
    PT_INTERP, no libc in DT_NEEDED): a member of a wheel tagged only ``musllinux_*`` is loaded
    by musl."""
    if promised is None or binary.libc is not Libc.UNKNOWN or binary.format is not Format.ELF:
        return binary
    families = {p.family for p in promised.policies}
    return replace(binary, libc=Libc.MUSL) if families == {"musllinux"} else binary


def _installation(staged: Staged, sites: Sequence[Site]) -> InstallationModel | None:
    """``packages.installation.installation_model``, imported (with ``packaging``) only when a
    package or an installed site is among the inputs: ``None`` for a plain build tree."""
    if not sites and not staged.packages:
        return None
    from .packages.installation import installation_model

    return installation_model(staged, sites)


def staged_entries(entries: Sequence[str], staged: Staged) -> tuple[str, ...]:
    """``--entry`` / ``entries`` (and the loader's directories: ``--dll-directory torch/lib``) with
    each one that names a package member or member directory (``PACKAGE!member``, or a member path
    as installed that does not exist here) replaced by its staged path."""
    if not staged.packages:
        return tuple(entries)
    out = []
    for entry in entries:
        member = None if ("!" not in entry and os.path.exists(entry)) else staged.member_path(entry)
        out.append(member or entry)
    return tuple(out)


def policy_target(
    target: TargetEnvironment, target_env: str, packages: Sequence[str], profile: str | None = None
) -> TargetEnvironment:
    """``target`` as ``target_env`` asks for it: under a policy, the loader finds on the system
    only the libraries the policy lists (``TargetEnvironment.system_libraries`` for glibc's loader,
    ``musl_system_libraries`` for musl's) and its loader — ``profile``'s when it is a platform
    policy or has a list (the configuration wins, as for ceilings), else the wheels' tags among
    ``packages`` (per libc family and architecture the most demanding one, ``_most_demanding``:
    the system the whole installation needs); ``"auto"`` applies a policy
    when a manylinux or musllinux wheel is among the inputs and otherwise keeps the host;
    ``"host"`` keeps it.

    Raises:
        ConfigError: ``target_env`` is ``"policy"`` and neither a wheel nor a profile gives one.
    """
    if target_env == "host":
        return target
    promised = [p for p in map(implied_by_wheel, packages) if p is not None]
    selected = [policy for p in promised for policy in p.policies]
    listing = get_profile(profile) if profile else None
    found = False
    for family in ("manylinux", "musllinux"):
        policies = [p for p in selected if p.family == family]
        configured = listing is not None and (policies or target_env == "policy")
        if configured and listing is not None and listing.policy is not None and listing.policy.family == family:
            policies = [listing.policy]  # the configured profile wins
        elif configured and listing is not None and listing.allowed_libraries and family == "manylinux":
            allowed, name = frozenset(listing.allowed_libraries), listing.name
            target, found = replace(target, system_libraries=allowed, system_policy=name), True
            continue
        if not policies:
            continue
        policies = _most_demanding(policies)
        allowed = frozenset.intersection(*(frozenset((*p.system_libraries, p.loader_name)) for p in policies))
        name = ", ".join(dict.fromkeys(p.tag for p in policies))
        if family == "manylinux":
            target = replace(target, system_libraries=allowed, system_policy=name)
        else:
            target = replace(target, musl_system_libraries=allowed, musl_policy=name)
        found = True
    if not found and target_env == "policy":
        raise ConfigError(
            "--target-env policy: no policy to take the system libraries from: give a manylinux wheel "
            "or --profile manylinux_2_17 (any platform tag: manylinux_2_28_aarch64, musllinux_1_2_x86_64, ...; "
            "`linkaudit profiles`)"
        )
    return target


def _most_demanding(policies: Sequence[Policy]) -> list[Policy]:
    """Of one libc family's policies, per architecture the one of highest version, in the order
    met: an installation of wheels given together runs only where every wheel's tag is accepted,
    so its C library is at least the highest floor among them, and the system libraries are that
    policy's (``libmvec.so.1`` on a manylinux_2_28 system beside a manylinux_2_17 wheel).  Each
    wheel is still held to its own tag (``external-library``, ``symbol-version``)."""
    highest: dict[str, Policy] = {}
    for policy in policies:
        held = highest.get(policy.arch)
        if held is None or policy.version > held.version:
            highest[policy.arch] = policy
    return list(highest.values())


def _relabel(finding: Finding, label: Callable[[str], str]) -> Finding:
    """``finding`` with every staged path in its file, subject, message and evidence written
    ``PACKAGE!member``."""

    def tree(value: object) -> object:
        if isinstance(value, str):
            return label(value)
        if isinstance(value, (list, tuple)):
            return [tree(v) for v in value]
        if hasattr(value, "items"):
            return {k: tree(v) for k, v in value.items()}
        return value

    return replace(
        finding,
        file=label(finding.file),
        subject=label(finding.subject),
        message=label(finding.message),
        evidence=tree(finding.evidence),  # type: ignore[arg-type]
    )


def read(path: str) -> list[Binary]:
    """Read one file into ``Binary`` records, never executing it: one for an ELF or PE file, one
    per slice of a universal Mach-O file, one per ELF member of an ``ar`` archive.

    Raises:
        InputError: the file cannot be read or is malformed.
    """
    return read_path(path)


def audit(
    paths: Sequence[str],
    config: AuditConfig | None = None,
    progress: Progress | None = None,
    together: bool = False,
    spread: Spread | None = None,
) -> Report:
    """Audit files, directories and packages (wheels, conda packages, tarballs: ``packages``).

    Args:
        paths: files, directories and packages, as the user gave them.
        config: what to check; defaults to ``AuditConfig()``.

    Returns:
        A ``Report``: every input (audited, unreadable, or skipped: a recognised
        format not read yet) and every finding, grouped by file in input order,
        most severe first; and the settings it ran with.  Package members are
        reported as ``PACKAGE!member``.

    Raises:
        ConfigError: ``config.ignore`` names an unknown rule, rule data is invalid, or a
            ``dll_directories`` entry is no directory (here or in a package given).

    ``progress`` is told the bytes of package members expected and written (``packages.Progress``).
    ``together``: every input one installation (``--together``), not one per target of the wheels.
    ``spread``: where the installations run (``jobs.Spread``: a process pool, a Dask cluster,
    every package on its own, a callback as each finishes); the report is the same wherever.
    """
    return audit_binaries(paths, config, progress, together, spread, keep_binaries=False)[0]


def audit_binaries(
    paths: Sequence[str],
    config: AuditConfig | None = None,
    progress: Progress | None = None,
    together: bool = False,
    spread: Spread | None = None,
    keep_binaries: bool = True,
) -> tuple[Report, tuple[Binary, ...]]:
    """``audit``, also handing back the binaries it read (a package member's ``path`` written
    ``PACKAGE!member``, as in the report), for callers that compare the model itself
    (``linkaudit diff``) without reading every file a second time.

    The inputs are audited once per installation they make (``packages.plan_inputs``: wheels
    of one project for several Pythons apart); a file and a finding met in several installations
    are reported once.  ``together`` makes every input one installation.  ``keep_binaries``:
    hand the binaries back (else ``()``: nothing is sent back from a worker but the report).

    Raises:
        ConfigError: as ``audit``.
    """
    config = config or AuditConfig()
    for rule_id in config.ignore:
        if get_rule(rule_id) is None:
            raise ConfigError(
                f"--ignore {rule_id!r}: no such rule{did_you_mean(rule_id, rule_ids())} (see `linkaudit rules`)"
            )
    start = time.perf_counter()
    paths = _with_link_line_files(paths, config)
    spread = spread or Spread()
    plan = plan_each(list(paths)) if spread.each else plan_inputs(list(paths), together)
    merged = _Merged()
    settings: dict[str, Any] | None = None
    formed = []
    for planned, (part, ran_settings) in zip(
        plan, _run_installations(plan, config, progress, spread, keep_binaries, paths), strict=True
    ):
        merged.add(part)
        settings = settings if settings is not None else ran_settings
        if planned.installation.packages or part.files:  # a wheelhouse's own directory: nothing of its own
            formed.append(planned.installation)
    settings = settings if settings is not None else dict[str, Any](config.settings())
    staged = frozenset(merged.packages)
    kept = [f for f in merged.findings if f.rule not in config.ignore]
    elsewhere = _unaudited_packages(paths, staged)
    files, findings = merged.files, _configure(kept, config, paths, staged, elsewhere, merged.targets, set(merged.ran))
    findings.sort(key=_report_order(files))
    _note_settings(settings, merged, formed, together)
    report = Report(
        tuple(files),
        tuple(findings),
        time.perf_counter() - start,
        tuple(merged.ran),
        settings,
        tuple(merged.roots),
        tuple(merged.packages),
        merged.links,
    )
    return report, tuple(merged.binaries)


def _with_link_line_files(paths: Sequence[str], config: AuditConfig) -> Sequence[str]:
    """``paths`` and the files the link line names (``config.link_line``): they are inputs of the
    audit too (a missing one is unreadable, as ld says), each once.  A Windows library named
    without a directory and found nowhere (kernel32.lib, the CRT) is an unknown library of the
    link, not an unreadable input."""
    if not config.link_line:
        return paths
    given = {os.path.realpath(p) for p in paths}
    extra = [
        e.path
        for e in config.link_line
        if e.path
        and os.path.realpath(e.path) not in given
        and (os.sep in e.path or not e.path.lower().endswith(".lib"))
    ]
    return [*paths, *dict.fromkeys(extra)]


def _note_settings(settings: dict[str, Any], merged: _Merged, formed: Sequence[Installation], together: bool) -> None:
    """Add to the report's ``settings`` what the inputs imposed besides the configuration: the
    wheels' tag policies (symbol-version, external-library), the libraries found outside the
    inputs, the installed sites, and the installations when there are several."""
    promised = [p for p in map(implied_by_wheel, merged.packages) if p is not None]
    if promised:
        settings["wheel_policies"] = [f"{p.package}: {p.tag}: {' '.join(p.ceilings)}" for p in promised]
    if merged.outside:
        settings["outside_inputs"] = merged.outside
    if merged.sites:
        settings["sites"] = merged.sites
    if len(formed) > 1 or together:
        settings["installations"] = [
            {"packages": list(i.packages), "targets": list(i.targets), "reason": i.reason} for i in formed
        ]


@dataclass
class _Part:
    """What one installation's audit gives, staged paths written ``PACKAGE!member``."""

    files: list[FileResult]
    findings: list[Finding]
    ran: list[str]
    roots: tuple[RootInfo, ...]
    binaries: list[Binary]
    packages: list[str]
    outside: list[dict[str, str]] = field(default_factory=list)
    sites: list[dict[str, Any]] = field(default_factory=list)
    #: The wheel targets of the findings' files in installed sites (``_site_targets``).
    targets: dict[str, frozenset[str]] = field(default_factory=dict)
    #: The packages' symlinks that lead inside their staging (``Staged.links``, ``Report.links``).
    links: dict[str, str] = field(default_factory=dict)


@dataclass
class _Merged:
    """The parts of every installation, each file, finding, root and binary once (first met wins)."""

    files: list[FileResult] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    roots: list[RootInfo] = field(default_factory=list)
    binaries: list[Binary] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)
    outside: list[dict[str, str]] = field(default_factory=list)
    sites: list[dict[str, Any]] = field(default_factory=list)
    targets: dict[str, frozenset[str]] = field(default_factory=dict)
    links: dict[str, str] = field(default_factory=dict)
    _seen: set[tuple[object, ...]] = field(default_factory=set)
    _reported: frozenset[tuple[str, str, str]] = frozenset()

    def add(self, part: _Part) -> None:
        """Add one installation's results."""
        self._once(self.files, part.files, lambda f: ("file", f.path))
        self._once(self.roots, part.roots, lambda r: ("root", r.path, r.kind))
        self._once(self.binaries, part.binaries, lambda b: ("binary", b.display_path))
        self._once(self.packages, part.packages, lambda p: ("package", p))
        self._once(self.ran, part.ran, lambda r: ("rule", r))
        self._once(self.outside, part.outside, lambda o: ("outside", o["path"]))
        self._once(self.sites, part.sites, lambda n: ("site", n["root"]))
        for path, targets in part.targets.items():
            self.targets.setdefault(path, targets)
        for link, target in part.links.items():
            self.links.setdefault(link, target)
        # A wheel in several installations is reported once (issue 12): a later installation's
        # finding of the same rule on the same file and subject is left out, even where its words
        # differ (the provider it names lives in that installation's copy of another wheel).
        earlier = self._reported
        mine = [f for f in part.findings if (f.rule, f.file, f.subject) not in earlier]
        self._once(self.findings, mine, lambda f: ("finding", f.rule, f.severity, f.file, f.subject, f.message))
        self._reported = earlier | {(f.rule, f.file, f.subject) for f in mine}

    def _once(self, out: list[_T], items: Iterable[_T], key: Callable[[_T], tuple[object, ...]]) -> None:
        for item in items:
            k = key(item)
            if k not in self._seen:
                self._seen.add(k)
                out.append(item)


def _run_installations(
    plan: Sequence[PlannedInputs],
    config: AuditConfig,
    progress: Progress | None,
    spread: Spread,
    keep_binaries: bool,
    inputs: Sequence[str] = (),
) -> list[tuple[_Part, dict[str, Any] | None]]:
    """Audit every installation of ``plan`` where ``spread`` says (here, a process pool, a Dask
    cluster); each one's part and settings, in plan order.  A task that failed (it raised, its
    worker died) is an ``unreadable-input`` finding for its packages; ``spread.on_part`` hears of
    each part as it finishes, with its findings as configured.

    Raises:
        ConfigError: an installation's configuration is refused (``_audit_installation``).
    """
    pooled = spread.runner is not None or pools(len(plan), config.jobs)
    # one level of processes: a pooled installation reads its files in its own worker
    common = (replace(config, jobs=1) if pooled else config, None if pooled else progress, keep_binaries)
    out: list[tuple[_Part, dict[str, Any] | None]] = [(_Part([], [], [], (), [], []), None)] * len(plan)
    seen: set[tuple[object, ...]] = set()
    if spread.on_plan is not None:
        spread.on_plan(len(plan))

    def done(index: int, result: object) -> None:
        if isinstance(result, ConfigError):
            raise result
        part, ran = (_failed_part(plan[index], result), None) if isinstance(result, Failed) else cast(_Done, result)
        out[index] = (part, ran)
        if spread.on_links is not None and part.links:
            spread.on_links(part.links)
        if spread.on_part is not None:
            staged = frozenset(part.packages)
            new = [
                _configured(f, config, set(), staged)
                for f in part.findings
                if f.rule not in config.ignore and _first(seen, f)
            ]
            if config.baseline is not None:  # marked as the whole report marks them (inputs: the paths given)
                new = [_baselined(f, config, (inputs, staged), set(), part.targets) for f in new]
            spread.on_part(index, plan[index].installation.packages, sorted(new, key=_report_order(part.files)))

    (spread.runner or run_tasks)(_installation_task, common, plan, config.jobs, done)
    return out


def _report_order(files: Sequence[FileResult]) -> Callable[[Finding], tuple[int, int, str, str]]:
    """The report's order of findings: by file in ``files``' order, most severe first, then rule and subject."""
    order = {f.path: i for i, f in enumerate(files)}
    return lambda f: (order.get(f.file, len(order)), f.severity.rank, f.rule, f.subject)


#: What an installation's task gives: its part of the report and the settings it ran with.
_Done = tuple["_Part", dict[str, Any] | None]


def _first(seen: set[tuple[object, ...]], finding: Finding) -> bool:
    """True the first time ``finding`` is met (as ``_Merged`` keeps it once)."""
    key = (finding.rule, finding.severity, finding.file, finding.subject, finding.message)
    if key in seen:
        return False
    seen.add(key)
    return True


def _installation_task(
    common: tuple[AuditConfig, Progress | None, bool], planned: PlannedInputs
) -> _Done | ConfigError:
    """One installation's audit as a task (in this process, a pool worker or a Dask worker):
    its part (binaries dropped unless kept) and its settings, or the ``ConfigError`` it raised."""
    config, progress, keep_binaries = common
    try:
        part, ran_config = _audit_installation(planned, config, progress, keep_binaries)
    except ConfigError as error:
        return error
    return part, ran_config.settings()


def _failed_part(planned: PlannedInputs, failed: Failed) -> _Part:
    """The part of an installation whose task failed: each of its packages (or its first input)
    unreadable, saying why."""
    names = planned.installation.packages or planned.paths[:1]
    errors = [InputError(name, f"not audited: {failed.reason}") for name in names]
    files = [FileResult(e.path, FileStatus.UNREADABLE, error=e.reason) for e in errors]
    return _Part(files, [_unreadable(e) for e in errors], [], (), [], list(planned.installation.packages))


def _audit_installation(
    planned: PlannedInputs, config: AuditConfig, progress: Progress | None, keep_binaries: bool = True
) -> tuple[_Part, AuditConfig]:
    """Stage and audit one installation's inputs; its part of the report, staged paths written
    ``PACKAGE!member``, and the configuration it ran with (its target's policy applied).
    ``keep_binaries``: False leaves the part's binaries out (never relabelled: 200,000 members, 0.4 s).

    Raises:
        ConfigError: a ``dll_directories`` entry is no directory (here or in a package given).
    """
    hold = config.target is None  # no loader emulation: only the readers look at the staged tree
    paths = list(planned.paths)
    with staged_inputs(paths, progress=progress, only=planned.packages, whole=config.verify, hold=hold) as staged:
        sites = sites_among(staged)
        if config.target is not None:
            config = _installation_config(config, staged, sites)
        for directory in config.dll_directories:
            if not os.path.isdir(directory):  # os.add_dll_directory raises FileNotFoundError too
                raise ConfigError(
                    f"--dll-directory (dll-directories) {directory}: not a directory (here or in a package given)"
                )
        files, findings, ran, roots, binaries, linkage = _audit_staged(staged, config, sites)
        for path, reason in (p for site in sites for p in site.problems):  # metadata not read: said
            files.append(FileResult(path, FileStatus.UNREADABLE, error=reason))
            findings.append(_unreadable(InputError(path, reason)))
        host = config.target is not None and config.target.system_libraries is None
        outside = _outside_inputs(linkage, binaries, sites) if linkage is not None and host else []
        findings.extend(clash_finding(c.path, c.first, c.second, c.member, c.identical) for c in staged.clashes)
        findings.extend(copies_finding(package, member, n) for (package, member), n in staged.copies.items())
        if staged.packages:
            label = staged.label_path
            files = [FileResult(label(f.path), f.status, f.format, f.kind, f.machine, f.error and staged.label(f.error),
                                f.reason) for f in files]  # fmt: skip
            findings = [_relabel(f, staged.label) for f in findings]
            roots = tuple(replace(r, path=label(r.path)) for r in roots)
            binaries = [b.with_path(label(b.path)) for b in binaries] if keep_binaries else []
        site_notes = [_site_note(site, config) for site in sites]
        targets = _site_targets(findings, sites) if config.baseline is not None else {}
        kept = binaries if keep_binaries else []
        part = _Part(files, findings, ran, roots, kept, list(staged.packages), outside, site_notes, targets)
        part.links = staged.links()
        return part, config


def _site_targets(findings: Sequence[Finding], sites: Sequence[Site]) -> dict[str, frozenset[str]]:
    """The wheel targets (``baseline.tag_targets``) of the distribution owning each finding's file
    that lies in an installed site (its ``RECORD`` lists it; a wheel's ``.dist-info``, not a conda
    record): a baseline entry of that target's ``.whl`` accepts the finding (``baseline.wheel_entry``)."""
    from .config.baseline import tag_targets

    out: dict[str, frozenset[str]] = {}
    for path in dict.fromkeys(f.file for f in findings):
        site = next((s for s in sites if s.holds(path)), None)
        owner = site.owner_of(path) if site is not None else None
        if owner is not None and owner.kind == "wheel" and owner.tags:
            out[path] = tag_targets(owner.tags)
    return out


def _conda_target(target: TargetEnvironment, staged: Staged, sites: Sequence[Site] = ()) -> TargetEnvironment | None:
    """``target`` for conda packages audited on their own, as conda-build judges one, and for a
    conda prefix (``Site.conda_prefix``): on the system only glibc's libraries (conda-forge's
    sysroot, ``providers.conda_sysroot_libraries``), at the glibc baseline of the packages' tags
    (``site.conda_glibc``); everything else (libz, libstdc++, libgcc_s) must be inside the package
    or prefix, or come with a package it depends on. ``None`` when the installation is neither only
    conda packages nor only conda prefixes."""
    if sites:
        if not all(s.conda_prefix for s in sites):
            return None
        conda = [d for s in sites for d in s.distributions]
    else:
        conda = [d for d in staged.distributions().values() if d.kind == "conda-package"]
        if not conda or len(conda) != len(staged.packages):
            return None
    from .packages.providers import conda_sysroot_libraries

    platform = min(str(t.platform) for d in conda for t in d.tags)
    glibc = ".".join(platform.split("_")[1:3])
    return replace(
        target, system_libraries=conda_sysroot_libraries(), system_policy=f"conda-forge sysroot (glibc {glibc})"
    )


def sites_among(staged: Staged) -> list[Site]:
    """The installed sites the plain files and directories given lie in (``packages.find_site``),
    or that a directory given holds in a prefix's layout (a venv given by its root:
    ``packages.sites_below``), each once."""
    sites: dict[str, Site] = {}
    for path in staged.paths:
        if staged.site_of(path) is not None:
            continue
        directory = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        site = find_site(directory) if os.path.isdir(directory) else None
        below = sites_below(directory) if site is None and os.path.isdir(path) else []
        for found in [site] if site is not None else below:
            sites.setdefault(found.root, found)
    return list(sites.values())


#: What counts outside a site for the kinds of platform tag whose loader model never reads the
#: host (``loader.dyld``, ``loader.windows``), in the report's words.
_MODELLED_SYSTEMS = {
    "macosx": "macOS (the dyld shared cache: /usr/lib, /System/Library)",
    "win": "Windows (System32: Windows' own DLLs, the Universal CRT, the API sets)",
}


def _kind_policy(kind: str, target: TargetEnvironment | None) -> str | None:
    """The name of what counts outside a site for files of one kind of platform tag: the policy
    applied to glibc's or musl's loads, the modelled system for macOS and Windows; ``None`` when
    the host counts (``--target-env host``, or no loader)."""
    if kind in _MODELLED_SYSTEMS:
        return _MODELLED_SYSTEMS[kind]
    if target is None:
        return None
    if kind == "musllinux":
        return target.musl_policy if target.musl_system_libraries is not None else None
    return target.system_policy if target.system_libraries is not None else None


def _site_note(site: Site, config: AuditConfig) -> dict[str, Any]:
    """What the report says of a site: its distributions, per kind of platform tag the tag that
    sets its target and what counts outside it (``site_targets``), the first kind's also alone."""
    targets = [
        {"kind": t.kind, "tag": t.tag, "from": t.distribution.where, "policy": _kind_policy(t.kind, config.target)}
        for t in site_targets(site.distributions)
    ]
    first = targets[0] if targets else {}
    return {
        "root": site.root,
        "distributions": len(site.distributions),
        "target_from": first.get("from"),
        "target_tag": first.get("tag"),
        "policy": first.get("policy"),
        "targets": targets,
    }


def _outside_inputs(linkage: LinkageAnalysis, binaries: list[Binary], sites: Sequence[Site]) -> list[dict[str, str]]:
    """Every library the loads found outside the inputs and the sites they lie in, once each: its
    path and how it was found (``ld.so.cache``, ``LD_LIBRARY_PATH``, a system directory, an RPATH
    pointing out)."""
    from .loader.closure import INTERPRETER

    inputs = {b.path for b in binaries} | set(linkage.audited)
    seen: dict[str, dict[str, str]] = {}
    for part in linkage.parts():
        for obj in part.objects():
            if obj.depth == 0 or obj.path in inputs or obj.path == INTERPRETER or obj.path in seen:
                continue
            if any(s.holds(obj.path) for s in sites):
                continue
            seen[obj.path] = {"path": obj.path, "source": str(obj.source.value)}
    return list(seen.values())


def installation_target(
    target: TargetEnvironment,
    target_env: str,
    staged: Staged,
    sites: Sequence[Site] = (),
    profile: str | None = None,
) -> TargetEnvironment:
    """The loader target of one installation, as ``check``, ``tree`` and ``why`` judge it: conda
    packages and prefixes as conda-build does (``_conda_target``), else the policy of the wheels'
    tags and, for an installed site, of its most demanding distribution of each kind of platform
    tag (``packages.site.site_targets``: a musllinux site gets its musllinux policy) (``policy_target``)."""
    demanding = [t.wheel_name() for s in sites for t in site_targets(s.distributions)]
    tagged = [*staged.packages, *demanding]
    conda = _conda_target(target, staged, sites) if target_env != "host" else None
    return conda or policy_target(target, target_env, tagged, profile)


def dll_directories(given: Sequence[str], staged: Staged, sites: Sequence[Site] = ()) -> tuple[str, ...]:
    """The Windows loader's added DLL directories: those given (``--dll-directory``, package
    members at their staged paths), then each delvewheel-repaired wheel's and installed
    distribution's ``<name>.libs`` (its ``__init__.py`` patch calls ``os.add_dll_directory``
    before any import)."""
    return (
        staged_entries(tuple(given), staged)
        + staged.delvewheel_dll_directories()
        + tuple(d for site in sites for d in site.delvewheel_dll_directories())
    )


def _installation_config(config: AuditConfig, staged: Staged, sites: Sequence[Site] = ()) -> AuditConfig:
    """``config`` for one staged installation: its target's policy (from the wheels' tags, and
    for an installed site the tag of its most demanding distribution), and the entries and loader
    directories that name package members at their staged paths."""
    assert config.target is not None
    return replace(
        config,
        target=installation_target(config.target, config.target_env, staged, sites, config.profile),
        entries=staged_entries(config.entries, staged),
        # loader directories and the main executable may name package members too
        dll_directories=dll_directories(config.dll_directories, staged, sites),
        windows_path=staged_entries(config.windows_path, staged),
        dyld_library_path=staged_entries(config.dyld_library_path, staged),
        dyld_fallback_library_path=staged_entries(config.dyld_fallback_library_path, staged),
        executable_path=(staged_entries((config.executable_path,), staged)[0] if config.executable_path else None),
    )
