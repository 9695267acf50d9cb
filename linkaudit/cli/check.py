"""``linkaudit check PATH...``: audit files and directories, report findings, set the exit status."""

from __future__ import annotations

import os
import sys
import tempfile

import click

from ..audit import audit
from ..config import AuditConfig, VersionCeiling
from ..errors import ConfigError
from ..output import OutputFormat, renderer


def _write_output(path: str, text: str, inputs: tuple[str, ...]) -> None:
    """Write ``text`` to ``path`` atomically; refuse to overwrite one of the inputs."""
    if os.path.exists(path):
        for given in inputs:
            try:
                if os.path.exists(given) and os.path.samefile(path, given):
                    raise ConfigError(f"--output {path}: refusing to overwrite an input")
            except OSError:
                continue
        if os.path.isdir(path):
            raise ConfigError(f"--output {path}: is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".linkaudit-", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"--output {path}: cannot write: {exc.strerror or exc}") from exc


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--format",
    "fmt",
    type=click.Choice([f.value for f in OutputFormat]),
    default="text",
    show_default=True,
    help="Report format.",
)
@click.option(
    "--max-version",
    "max_versions",
    multiple=True,
    metavar="VERSION",
    help="Highest symbol version allowed, e.g. GLIBC_2.17, GLIBCXX_3.4.19, CXXABI_1.3.7, GCC_4.8.0 (repeatable).",
)
@click.option("--ignore", "ignore", multiple=True, metavar="RULE", help="Do not run RULE (repeatable).")
@click.option("--output", "-o", "output", type=click.Path(dir_okay=False), help="Write the report to FILE.")
@click.option("--color/--no-color", default=None, help="Colour the text report (default: on a terminal).")
def check(
    paths: tuple[str, ...],
    fmt: str,
    max_versions: tuple[str, ...],
    ignore: tuple[str, ...],
    output: str | None,
    color: bool | None,
) -> int:
    """Audit PATHs (files or directories, walked recursively; binaries found by magic bytes).

    Exit status: 0 no error findings, 1 error findings, 2 an input could not be
    read or a usage error (all other inputs are still audited).
    """
    config = AuditConfig(
        max_versions=tuple(VersionCeiling.parse(v) for v in max_versions),
        ignore=frozenset(ignore),
    )
    report = audit(list(paths), config)
    if color is None:
        color = output is None and sys.stdout.isatty() and "NO_COLOR" not in os.environ
    text = renderer(OutputFormat(fmt))(report, color=color)
    if output:
        _write_output(output, text, paths)
    else:
        click.echo(text, nl=False)
    if report.has_unreadable:
        return 2
    return 1 if report.has_errors else 0
