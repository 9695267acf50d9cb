"""``linkaudit check PATH...``: audit files and directories, report findings, set the exit status."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

import click

from ..audit import audit
from ..config import AuditConfig, VersionCeiling
from ..config.file import FileSettings, find_config
from ..config.profiles import DEFAULT, get_profile
from ..errors import ConfigError
from ..jobs import available_cpus
from ..output import OutputFormat, renderer, text_safe
from ..report import Report, capped
from ..rules import rule_ids
from .cacheflag import no_cache_option
from .emit import STDOUT, check_output_path, emit, use_color, write_output
from .filedefaults import loader_with_file, relative_to_file
from .options import loader_options, target_from_options
from .progress import stderr_progress
from .spread import Spreading, spreading

if TYPE_CHECKING:
    from ..config.baseline import Fingerprint
    from ..link.line import LinkInput

#: Input paths: no existence or readability check at parse time, so an
#: unreadable or missing input becomes its own ``unreadable-input`` finding and
#: the other inputs are still audited.
INPUT_PATHS = click.Path(exists=False, file_okay=True, dir_okay=True, readable=False)

#: The options ``check`` and ``diff`` share: the configuration and the rules run, read as ``audit_config`` reads them.
MAX_VERSION_OPTION = click.option(
    "--max-version",
    "max_versions",
    multiple=True,
    metavar="VERSION",
    help="Highest symbol version allowed, e.g. GLIBC_2.17, GLIBCXX_3.4.19, CXXABI_1.3.7, GCC_4.8.0 (repeatable).",
)
PROFILE_OPTION = click.option(
    "--profile",
    default=None,
    metavar="NAME",
    help="Target baseline to start from: its symbol-version ceilings (`linkaudit profiles`; default: cuda).",
)
IGNORE_OPTION = click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="RULE",
    help="Do not run RULE (repeatable; unreadable-input cannot be ignored).",
)
NO_LOADER_OPTION = click.option(
    "--no-loader", is_flag=True, help="Skip the loader emulation (only the per-file rules run)."
)
CONFIG_OPTION = click.option(
    "--config",
    "config_path",
    default=None,
    metavar="FILE",
    help="Configuration file (default: linkaudit.toml, or pyproject.toml with [tool.linkaudit], "
    "in the working directory or above).",
)
NO_CONFIG_OPTION = click.option("--no-config", is_flag=True, help="Read no configuration file.")


@click.command()
@click.argument("paths", nargs=-1, required=True, type=INPUT_PATHS)
@click.option(
    "--format",
    "fmt",
    type=click.Choice([f.value for f in OutputFormat]),
    default="text",
    show_default=True,
    help="Report format.",
)
@MAX_VERSION_OPTION
@PROFILE_OPTION
@click.option(
    "--quiet", "-q", is_flag=True, help="No progress bar (one is drawn on a terminal while large packages unpack)."
)
@IGNORE_OPTION
@click.option(
    "--output",
    "-o",
    "output",
    metavar="FILE",
    help="Write the report to FILE (atomically for a regular file; never over an input; - for standard output).",
)
@click.option(
    "--color/--no-color",
    default=None,
    help="Colour the text report; forced either way (default: on a terminal, unless NO_COLOR is set).",
)
@NO_LOADER_OPTION
@click.option(
    "--verify",
    is_flag=True,
    help="Read every input again with lief (an independent reader) and report any disagreement (slower).",
)
@click.option(
    "--link-line",
    default=None,
    metavar="FILE",
    help="The link combining the objects and archives (a response file, CMake link.txt, a compile_commands "
    "command, or build.ninja:TARGET for a Ninja link edge): duplicate-definition and unresolved-external then "
    "report exactly that link's clashes and missing symbols.",
)
@click.option(
    "--linker",
    type=click.Choice(["link.exe", "lld-link"]),
    default="link.exe",
    show_default=True,
    help="Whose library search order a Windows --link-line follows (docs/windows-link.md).",
)
@click.option(
    "--source",
    "source_dirs",
    multiple=True,
    metavar="DIR",
    help="Source tree to scan for stale generated wrappers (stacked-codegen; repeatable).",
)
@CONFIG_OPTION
@NO_CONFIG_OPTION
@click.option(
    "--baseline",
    "baseline_path",
    default=None,
    metavar="FILE",
    help="Accept the findings FILE records (--write-baseline): fail only on new ones; list the fixed ones.",
)
@click.option(
    "--write-baseline",
    default=None,
    metavar="FILE",
    help="Record today's findings in FILE (fingerprints: rule, file relative to the input, subject); exit 0. "
    "- for standard output, with --output FILE for the report.",
)
@click.option("--show-suppressed", is_flag=True, help="List suppressed findings in the text report, with reasons.")
@click.option(
    "--max-findings-per-file",
    "max_per_file",
    type=click.IntRange(min=0),
    default=1000,
    show_default=True,
    metavar="N",
    help="Show at most N findings per file, the rest as one 'more-findings' note with their counts (0: all).",
)
@click.option(
    "--together",
    is_flag=True,
    help="Audit every input as one installation (a set installed side by side), not one installation per "
    "system the wheels' tags fit — one Python, libc and machine (wheels of one project are never installed together).",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Processes that read the inputs (default: the CPUs available to linkaudit, cgroup quota included); "
    "the report is the same for any N.",
)
@click.option(
    "--each",
    is_flag=True,
    help="Audit every package on its own (a channel or mirror, whose packages are not installed together).",
)
@click.option(
    "--scheduler",
    default=None,
    metavar="ADDRESS",
    help="Run the installations as tasks on this Dask cluster (tcp://host:8786; the inputs on a file system "
    "every worker sees; needs the [dask] extra).",
)
@click.option(
    "--scheduler-file", default=None, metavar="FILE", help="As --scheduler, the address read from a scheduler file."
)
@loader_options
@no_cache_option
def check(
    paths: tuple[str, ...],
    fmt: str,
    max_versions: tuple[str, ...],
    profile: str | None,
    quiet: bool,
    ignore: tuple[str, ...],
    output: str | None,
    color: bool | None,
    no_loader: bool,
    verify: bool,
    link_line: str | None,
    linker: str,
    source_dirs: tuple[str, ...],
    config_path: str | None,
    no_config: bool,
    baseline_path: str | None,
    write_baseline: str | None,
    show_suppressed: bool,
    max_per_file: int,
    together: bool,
    jobs: int | None,
    each: bool,
    scheduler: str | None,
    scheduler_file: str | None,
    entries: tuple[str, ...],
    **loader: Any,
) -> int:
    """Audit PATHs (files or directories, walked recursively; binaries found by magic bytes).

    \b
    Exit status:
      0  no finding of severity error that is not suppressed or in the
         --baseline (files of a format not supported yet are listed as
         skipped: no error); with --write-baseline, 0 once it is written
         (2 still when an input could not be read)
      1  at least one finding of severity error
      2  an input could not be read (all other inputs are still audited), a usage
         error, or the report could not be written
      3  internal error (a bug in linkaudit: please report it)
    """
    settings = file_settings(config_path, no_config)
    loader = loader_with_file(loader, settings)
    config = audit_config(
        settings, loader, profile, max_versions, ignore, no_loader, entries, baseline_path, link_line, linker,
        source_dirs, verify, jobs,
    )  # fmt: skip
    output = _check_output_paths(output, write_baseline)  # None for standard output (-o -)
    # Never write over the inputs, the configuration file or the baseline read.
    protected = [*paths, *(p for p in (settings.path, baseline_path) if p)]
    spread = spreading(paths, fmt, output, quiet, each, scheduler, scheduler_file)
    report = _run_audit(paths, config, quiet, together, spread, protected)
    if write_baseline is not None:  # the baseline read may be updated in place: it was read before
        _write_baseline(write_baseline, report, paths, [*paths, *(p for p in (settings.path,) if p)], config.baseline)
    report = capped(report, max_per_file)  # after the baseline written: it records every finding
    if fmt != OutputFormat.JSONL.value:
        loader["together"] = together  # the HTML report draws each installation's loads as check planned them
        options = _render_options(fmt, paths, show_suppressed, no_loader, loader, config.entries, report)
        _render(report, fmt, use_color(color, output), options, output, protected)
    return _exit_status(report, write_baseline is not None)


def _exit_status(report: Report, wrote_baseline: bool) -> int:
    """``check``'s exit status (its docstring): 2 when an input could not be read, else 0 after
    ``--write-baseline``, else 1 when a finding of severity error remains, else 0."""
    if report.has_unreadable:
        return 2
    if wrote_baseline:
        return 0
    return 1 if report.has_errors else 0


def _run_audit(
    paths: Sequence[str],
    config: AuditConfig,
    quiet: bool,
    together: bool,
    spread_options: AbstractContextManager[Spreading],
    protected: list[str],
) -> Report:
    """Audit ``paths`` under ``config``, progress on stderr unless ``quiet``, spread as
    ``spread_options`` (``spreading``) says; a ``PACKAGE!member`` given has its package audited
    whole and the report cut down to it (``members.member_operands``, ``cut_to_members``); a
    streamed report (``--format jsonl``) is finished here, never over a ``protected`` path; a note
    when the baseline predates per-target keys."""
    given, wanted = _member_operands(paths)
    progress = stderr_progress(quiet)
    with spread_options as spread:
        if wanted:
            from .members import member_filter

            spread.keep = member_filter(wanted, spread.links)
        try:
            report = audit(given, config, progress, together=together, spread=spread.spread)
        finally:
            if progress is not None:
                progress.close()
        if wanted:
            from .members import cut_to_members

            report = cut_to_members(report, wanted)[0]
        if spread.stream is not None:  # --format jsonl: the lines went out as packages finished
            spread.finish(report, protected)
    _untargeted_note(report, config.baseline_file)
    return report


def _member_operands(paths: Sequence[str]) -> tuple[list[str], dict[str, list[str]]]:
    """``members.member_operands`` of ``paths``; the member machinery (the package readers) is
    imported only when a path holds a ``!`` (a plain ELF check imports the ELF path alone)."""
    if not any("!" in p for p in paths):
        return list(paths), {}
    from .members import member_operands

    return member_operands(paths)


def _render(
    report: Report, fmt: str, color: bool, options: dict[str, object], output: str | None, protected: list[str]
) -> None:
    """Render ``report`` in ``fmt`` to ``--output`` (never over a ``protected`` path or an audited
    file), else to standard output."""
    text = renderer(OutputFormat(fmt))(report, color=color, **options)
    if output is not None:
        write_output(output, text, [*protected, *report.packages, *(f.path for f in report.files)])
    else:
        emit(text)


def audit_config(
    settings: FileSettings,
    loader: dict[str, Any],
    profile: str | None,
    max_versions: tuple[str, ...],
    ignore: tuple[str, ...],
    no_loader: bool,
    entries: tuple[str, ...],
    baseline_path: str | None,
    link_line: str | None,
    linker: str,
    source_dirs: tuple[str, ...],
    verify: bool,
    jobs: int | None,
) -> AuditConfig:
    """The ``AuditConfig`` of ``check``'s options over the configuration file's ``settings``: the
    profile's version ceilings, then the file's, then ``--max-version``'s (a later one replaces an
    earlier one for the same prefix); the loader options in ``loader`` (``loader_options``).

    Raises:
        ConfigError: an unknown profile (named with the file when the file chose it), a bad
            ``--max-version``, a baseline or ``--link-line`` file that cannot be read.
    """
    try:
        chosen = get_profile(profile if profile is not None else settings.profile or DEFAULT)
    except ConfigError as exc:
        raise ConfigError(f"{settings.path}: profile: {exc}" if profile is None else str(exc)) from None
    ceilings = {c.prefix: c for c in (VersionCeiling.parse(v) for v in chosen.max_versions)}
    ceilings.update({c.prefix: c for c in (VersionCeiling.parse(v) for v in settings.max_versions)})
    ceilings.update({c.prefix: c for c in (VersionCeiling.parse(v) for v in max_versions)})
    return AuditConfig(
        max_versions=tuple(ceilings.values()),
        ignore=frozenset(ignore) | frozenset(settings.ignore),
        target=None if no_loader else target_from_options(**loader),
        entries=entries or relative_to_file(settings.path, settings.entries),
        severities=settings.severities,
        suppressions=settings.suppressions,
        forbidden_needed=settings.forbidden_needed,
        required_needed=settings.required_needed,
        config_file=settings.path or None,
        profile=chosen.name,
        baseline=_load_baseline(baseline_path),
        baseline_file=baseline_path,
        link_line=_link_line(link_line, linker),
        source_dirs=source_dirs,
        target_env=loader["target_env"],
        dll_directories=tuple(loader["dll_directories"]),
        preload_dlls=tuple(loader["preload_dlls"]),
        windows_path=tuple(loader["windows_path"]),
        executable_path=loader["executable_path"],
        dyld_library_path=tuple(loader["dyld_library_path"]),
        dyld_fallback_library_path=tuple(loader["dyld_fallback_library_path"]),
        verify=verify,
        jobs=jobs if jobs is not None else available_cpus(),
    )


def _check_output_paths(output: str | None, write_baseline: str | None) -> str | None:
    """Check ``--output`` and ``--write-baseline`` before the audit runs (``check_output_path``);
    return ``--output``, ``None`` for standard output (not given, or ``-``, as for most tools).
    ``--write-baseline -`` writes the baseline to standard output: only with the report in a file.

    Raises:
        ConfigError: a path cannot be written, or both name the same file.
    """
    output = None if output == STDOUT else output
    if write_baseline == STDOUT and output is None:
        raise ConfigError(
            "--write-baseline -: standard output carries the report; give --output FILE for the report "
            "(or write the baseline to a file)"
        )
    for path, option in ((output, "--output"), (write_baseline, "--write-baseline")):
        if path is not None and path != STDOUT:
            check_output_path(path, option)
    if output is not None and write_baseline is not None and _same_path(output, write_baseline):
        raise ConfigError(f"--output {output} and --write-baseline {write_baseline} name the same file")
    return output


def _write_baseline(
    path: str, report: Report, paths: tuple[str, ...], protected: list[str], read: frozenset[Fingerprint] | None
) -> None:
    """Write every finding of ``report`` to ``--write-baseline`` ``path`` (``config.baseline.dumps``),
    with the entries of the ``--baseline`` ``read`` (if any) for what the run did not audit or the
    rules it did not run, never
    over a ``protected`` path (the inputs, the configuration file: not the ``--baseline`` read,
    which is updated in place) or an audited file, and say how many on stderr."""
    from ..audit import LOADER_RULES
    from ..config import baseline

    document = baseline.dumps(
        report.findings, paths, frozenset(report.packages), read, frozenset(report.rules), LOADER_RULES
    )
    if path == STDOUT:  # the report goes to --output FILE (_check_output_paths)
        emit(document)
    else:
        write_output(
            path, document, [*protected, *report.packages, *(f.path for f in report.files)], "--write-baseline"
        )
    recorded = len(json.loads(document)["findings"])
    where = "standard output" if path == STDOUT else path
    click.echo(
        f"linkaudit: wrote {recorded} finding{'s' if recorded != 1 else ''} to {text_safe(where)}",
        err=True,
    )


def _render_options(
    fmt: str,
    paths: tuple[str, ...],
    show_suppressed: bool,
    no_loader: bool,
    loader: dict[str, Any],
    entries: tuple[str, ...],
    report: Report,
) -> dict[str, object]:
    """The keyword options of the ``fmt`` renderer: ``show_suppressed`` (text), ``inputs`` (SARIF:
    fingerprints relative to the inputs, as the baseline's), the drawn loads (HTML, with the loader)."""
    options: dict[str, object] = {}
    if show_suppressed and fmt == OutputFormat.TEXT.value:
        options["show_suppressed"] = True
    if fmt == OutputFormat.SARIF.value:
        options["inputs"] = paths
    if fmt == OutputFormat.HTML.value and not no_loader:
        from .htmlreport import html_options  # the loads drawn, read again as tree reads them

        options.update(html_options(paths, {**loader, "entries": entries}, report.rules))
    return options


def file_settings(config_path: str | None, no_config: bool) -> FileSettings:
    """The configuration file's settings: ``--config FILE``, else the one found from the working
    directory up, else none (``--no-config``: none).  Command-line options add to them; a
    ``--max-version`` replaces the file's ceiling for the same prefix.

    Raises:
        ConfigError: the file cannot be read or is not valid (the message names it and the key).
    """
    if no_config:
        if config_path is not None:
            raise ConfigError("--config and --no-config: choose one")
        return FileSettings(path="")
    path = config_path if config_path is not None else find_config(os.getcwd())
    if path is None:
        return FileSettings(path="")
    from ..config.file import load_config  # its TOML parser: only when a file was found

    return load_config(path, frozenset(rule_ids()))


def _untargeted_note(report: Report, path: str | None) -> None:
    """Say once on stderr when ``--baseline`` ``path`` accepted a file by an entry without its
    wheel's target, its conda build's variant or its input's name, or one keying a site's file below
    its venv or prefix (``config.baseline.UNTARGETED``: written before these were keyed, it accepts
    the file in every platform's wheel, build variant or input given, a new finding in another one too)."""
    if path is None:
        return
    from ..config.baseline import UNTARGETED

    if any(f.suppressed and f.suppressed.endswith(UNTARGETED) for f in report.findings):
        click.echo(
            f"linkaudit: note: --baseline {path} predates per-target keys (or was written from an unpacked "
            "tree, or from one of several inputs, or keys a site's files by their path below the venv or "
            "prefix): its entries accept a file in every platform's wheel, conda build variant and input "
            "given; write it again with --write-baseline",
            err=True,
        )


def _load_baseline(path: str | None) -> frozenset[Fingerprint] | None:
    """The findings ``--baseline FILE`` accepts (``config.baseline.load``), ``None`` without one."""
    if path is None:
        return None
    from ..config import baseline

    return baseline.load(path, frozenset(rule_ids()))


def _link_line(path: str | None, linker: str = "link.exe") -> tuple[LinkInput, ...]:
    """The inputs of ``--link-line FILE`` (``link.line.read_link_line``; ``FILE.ninja:TARGET`` for a
    Ninja link edge; libraries also looked up in the ``LIB`` environment variable's directories, as
    link.exe does) and ``--linker`` as a ``linker:NAME`` option entry; ``()`` without a link line."""
    if not path:
        return ()
    from ..link.line import LinkInput, read_link_line

    lib_dirs = os.environ.get("LIB", "").split(";")
    return (*read_link_line(path, lib_dirs), LinkInput("", option=f"linker:{linker}"))


def _same_path(a: str, b: str) -> bool:
    """True when ``a`` and ``b`` name one file (the same real path)."""
    return os.path.realpath(a) == os.path.realpath(b)
