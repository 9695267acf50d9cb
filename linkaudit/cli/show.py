"""``linkaudit show PATH...``: print the parsed linkage of binaries."""

from __future__ import annotations

import json

import click

from .cacheflag import no_cache_option
from .check import INPUT_PATHS
from .emit import emit
from .reading import Inputs, each_package, read_inputs


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
    documents: list[str] = []
    failed = False
    for given, only in each_package(paths):
        with read_inputs(given, only) as read:
            inputs = read.only_members()  # PACKAGE!member: that member of the package
            inputs.report_problems()
            documents.append(_render(inputs, symbols, fmt))
            failed = failed or bool(inputs.errors)
    emit(_merged(documents, fmt))
    return 2 if failed else 0


def _render(inputs: Inputs, symbols: bool, fmt: str) -> str:
    """The ``text`` or ``json`` document of what one read holds, staged paths written
    ``PACKAGE!member`` (the staging tree is gone once the read ends); ``""`` for a text of no binary."""
    from ..output.linkage import render_json, render_text

    if fmt == "json":
        return inputs.relabel(render_json(inputs.binaries, symbols, inputs.errors, inputs.skipped), fmt)
    return inputs.relabel(render_text(inputs.binaries, symbols), fmt) if inputs.binaries else ""


def _merged(documents: list[str], fmt: str) -> str:
    """One document of the reads' ``documents``: texts one after another, a blank line between;
    JSON documents' ``binaries``, ``errors`` and ``skipped`` joined in order."""
    if fmt != "json":
        return "\n".join(d for d in documents if d)
    if len(documents) == 1:
        return documents[0]
    docs = [json.loads(d) for d in documents]
    merged = {**docs[0], "binaries": [b for d in docs for b in d["binaries"]]}
    merged["errors"] = [e for d in docs for e in d["errors"]]
    skipped = [s for d in docs for s in d.get("skipped", ())]
    if skipped:
        merged["skipped"] = skipped
    return json.dumps(merged, indent=2, ensure_ascii=False) + "\n"
