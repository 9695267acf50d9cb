"""The loads of ``tree``, ``why`` and ``check --format html`` as graphs (``output.graph``), with staged
paths written ``PACKAGE!member`` as every report writes them, and the renderers of the pictures."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import click

from ..loader.closure import Load
from ..loader.images import ImageLoad
from ..output.graph import LoadGraph, Owners, elf_graph, image_graph
from ..output.parts import Drawn
from ..rules.data import driver_index
from .reading import Inputs

#: ``tree`` / ``why`` formats that draw the loads.
PICTURE_FORMATS = ("dot", "mermaid")


def format_option(pictures_help: str) -> Callable[[Any], Any]:
    """``--format text|json|dot|mermaid`` of ``tree`` and ``why``; ``pictures_help`` says what the pictures draw."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", *PICTURE_FORMATS]),
        default="text",
        show_default=True,
        help=f"dot: a Graphviz digraph (for dot -Tsvg); mermaid: a Mermaid flowchart; {pictures_help} (docs/pictures.md).",
    )


def _relabel(graph: LoadGraph, label: Callable[[str], str]) -> LoadGraph:
    nodes = tuple(
        dataclasses.replace(
            n,
            path=label(n.path) if n.path else None,
            tried=tuple(label(t) for t in n.tried),
            shown_in=label(n.shown_in) if n.shown_in else None,
        )
        for n in graph.nodes
    )
    return dataclasses.replace(graph, root=label(graph.root), nodes=nodes)


def load_graphs(
    inputs: Inputs,
    loads: Sequence[Load],
    images: Sequence[ImageLoad],
    owners: Owners | None = None,
    system_dirs: Sequence[str] = (),
) -> list[LoadGraph]:
    """One graph per load (ELF loads first, then the Windows and dyld ones); ``owners`` (``tree.owners_of``)
    names each node's distribution where the inputs carry metadata.  A library whose load an
    earlier graph drew (loads sharing parts, ``output.parts``) is one node there, ``shown_in`` that
    graph's root: the graphs together are linear in the libraries, not roots times their loads."""
    is_driver = driver_index().is_driver
    drawn = Drawn()
    graphs = [elf_graph(ld, is_driver, owners, system_dirs, drawn) for ld in loads]
    graphs.extend(image_graph(ld, is_driver, owners) for ld in images if ld.resolutions or ld.objects)
    return [_relabel(g, inputs.staged.label) for g in graphs]


def render_picture(fmt: str, graphs: Sequence[LoadGraph]) -> str:
    """``graphs`` drawn in ``fmt`` (one of ``PICTURE_FORMATS``)."""
    if fmt == "dot":
        from ..output import dot

        return dot.render(graphs)
    if fmt == "mermaid":
        from ..output import mermaid

        return mermaid.render(graphs)
    raise AssertionError(f"unhandled picture format {fmt}")  # pragma: no cover
