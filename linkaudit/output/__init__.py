"""Presentation: one module per output format, each ``render(report, ...) -> str``.

Renderers read a ``Report`` (or, for ``show``, the model records) and decide
nothing.  ``OutputFormat`` lists the formats; ``renderer`` maps each to its
module, exhaustively (a test renders every format).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from ..report import Report
from .shared import SCHEMA_VERSION, text_safe, utf8_safe, utf8_tree


class OutputFormat(enum.StrEnum):
    """Report formats of ``linkaudit check``."""

    TEXT = "text"
    JSON = "json"
    JUNIT = "junit"
    GITHUB = "github"
    SARIF = "sarif"
    HTML = "html"
    JSONL = "jsonl"


def renderer(fmt: OutputFormat) -> Callable[..., str]:
    """The ``render`` function of ``fmt``'s module."""
    if fmt is OutputFormat.TEXT:
        from . import text

        return text.render
    if fmt is OutputFormat.JSON:
        from . import json

        return json.render
    if fmt is OutputFormat.JUNIT:
        from . import junit

        return junit.render
    if fmt is OutputFormat.GITHUB:
        from . import github

        return github.render
    if fmt is OutputFormat.SARIF:
        from . import sarif

        return sarif.render
    if fmt is OutputFormat.HTML:
        from . import html

        return html.render
    if fmt is OutputFormat.JSONL:
        from . import jsonl

        return jsonl.render
    raise AssertionError(f"unhandled output format {fmt}")  # pragma: no cover


__all__ = ["SCHEMA_VERSION", "OutputFormat", "Report", "renderer", "text_safe", "utf8_safe", "utf8_tree"]
