"""``linkaudit show PATH...``: print the parsed linkage of binaries."""

from __future__ import annotations

import click

from .cacheflag import no_cache_option
from .check import INPUT_PATHS
from .emit import emit
from .reading import read_inputs


@click.command()
@click.argument("paths", nargs=-1, required=True, type=INPUT_PATHS)
@click.option("--symbols", is_flag=True, help="List every dynamic symbol too (readelf --dyn-syms columns).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@no_cache_option
def show(paths: tuple[str, ...], symbols: bool, fmt: str) -> int:
    """Show the linkage of each file: format, kind, machine, SONAME, DT_NEEDED in order,
    RPATH/RUNPATH, interpreter, flags, symbol counts and the versions needed per library.

    Directories are walked as `check` walks them; PACKAGE!member (as linkaudit
    names members) shows that member of the package. Inputs that cannot be read are
    named on standard error with the reason (and in the JSON document's
    "errors"); files of a format not supported yet are listed as skipped.

    \b
    Exit status: 0 every input was read (or skipped: format not supported yet),
    2 an input could not be read (the others are still shown) or a usage error,
    3 internal error.
    """
    from ..output.linkage import render_json, render_text

    with read_inputs(paths) as read:
        inputs = read.only_members()  # PACKAGE!member: that member of the package
        inputs.report_problems()
        if fmt == "json":
            emit(inputs.relabel(render_json(inputs.binaries, symbols, inputs.errors, inputs.skipped), fmt))
        elif inputs.binaries:
            emit(inputs.relabel(render_text(inputs.binaries, symbols), fmt))
        return 2 if inputs.errors else 0
