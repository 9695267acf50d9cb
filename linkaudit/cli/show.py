"""``linkaudit show PATH...``: print the parsed linkage of binaries."""

from __future__ import annotations

import click

from ..errors import InputError, UnsupportedFormat
from ..formats import Container, read_path, unsupported_reason
from ..inputs import collect
from ..model import Binary
from ..output import text_safe
from .check import INPUT_PATHS
from .emit import emit


@click.command()
@click.argument("paths", nargs=-1, required=True, type=INPUT_PATHS)
@click.option("--symbols", is_flag=True, help="List every dynamic symbol too (readelf --dyn-syms columns).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(paths: tuple[str, ...], symbols: bool, fmt: str) -> int:
    """Show the linkage of each file: format, kind, machine, SONAME, DT_NEEDED in order,
    RPATH/RUNPATH, interpreter, flags, symbol counts and the versions needed per library.

    Directories are walked as `check` walks them. Inputs that cannot be read are
    named on standard error with the reason (and in the JSON document's
    "errors"); files of a format not supported yet are listed as skipped.

    \b
    Exit status: 0 every input was read (or skipped: format not supported yet),
    2 an input could not be read (the others are still shown) or a usage error,
    3 internal error.
    """
    from ..output.linkage import render_json, render_text

    collected = collect(list(paths))
    errors: list[InputError] = list(collected.errors)
    skipped = [(p, unsupported_reason(Container(c))) for p, c in collected.skipped]
    binaries: list[Binary] = []
    for path in collected.files:
        try:
            binaries.extend(read_path(path))
        except UnsupportedFormat as exc:
            skipped.append((path, exc.reason))
        except InputError as exc:
            errors.append(exc)
    for error in errors:
        click.echo(f"linkaudit: error: {text_safe(str(error))}", err=True)
    for path, reason in skipped:
        click.echo(f"linkaudit: skipped: {text_safe(path)}: {text_safe(reason)}", err=True)
    for directory in collected.empty_dirs:
        click.echo(f"linkaudit: note: {text_safe(directory)}: holds no binary linkaudit can read", err=True)
    if fmt == "json":
        emit(render_json(binaries, symbols, errors, skipped))
    elif binaries:
        emit(render_text(binaries, symbols))
    return 2 if errors else 0
