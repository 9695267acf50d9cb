"""``linkaudit show PATH...``: print the parsed linkage of binaries."""

from __future__ import annotations

import click

from ..audit import read
from ..errors import InputError
from ..model import Binary


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--symbols", is_flag=True, help="List every dynamic symbol too.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def show(paths: tuple[str, ...], symbols: bool, fmt: str) -> int:
    """Show the linkage of each file: format, kind, machine, SONAME, DT_NEEDED in order,
    RPATH/RUNPATH, interpreter, symbol counts and the versions needed per library.

    Exit status 2 when a file cannot be read (the others are still shown).
    """
    from ..output.linkage import render_json, render_text

    binaries: list[Binary] = []
    status = 0
    for path in paths:
        try:
            binaries.extend(read(path))
        except InputError as exc:
            click.echo(f"linkaudit: error: {exc}", err=True)
            status = 2
    render = render_json if fmt == "json" else render_text
    if binaries or fmt == "json":
        click.echo(render(binaries, symbols), nl=False)
    return status
