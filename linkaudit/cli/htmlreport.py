"""What ``check --format html`` draws besides the report: each import root's load as a graph (read
and loaded again, as ``tree`` does, with the same loader options) and each rule's explanation."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..errors import ConfigError
from ..rules import get_rule
from .pictures import load_graphs
from .reading import read_inputs
from .tree import owners_of, run_analysis, run_images


def html_options(paths: Sequence[str], loader: dict[str, Any], rules: Sequence[str]) -> dict[str, object]:
    """The keyword arguments of ``output.html.render`` besides the report: ``graphs``, the loads of
    every import root a root reaches (ELF, then PE and Mach-O), per installation as ``check`` plans
    them, and ``explanations``, the ``explain`` text of each rule id in ``rules``.  ``loader``:
    ``tree``'s loader options with ``entries`` and ``together``.
    Inputs that cannot be read are left out silently (the report already names them)."""
    from ..packages import plan_inputs

    explanations = {r: rule.explain for r in rules if (rule := get_rule(r)) is not None}
    graphs = []
    # one installation at a time, as check audits them: a dist/ of several targets is never one process
    for planned in plan_inputs(list(paths), bool(loader.get("together"))):
        with read_inputs(planned.paths, planned.packages) as inputs:
            try:
                analysis, _status = run_analysis(inputs, loader, quiet=True)
            except ConfigError:  # no load could be emulated (the report says why): no graph for it
                continue
            loads = [ld for ld, root in zip(analysis.loads, analysis.roots, strict=True) if root.reached]
            images = [ld for ld in run_images(inputs, loader) if ld.reached]
            graphs.extend(load_graphs(inputs, loads, images, owners_of(inputs), analysis.system_dirs))
    return {"graphs": graphs, "explanations": explanations}
