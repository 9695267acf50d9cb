"""Presentation: one module per output format, each ``render(report, ...) -> str``.

Renderers read a ``Report`` (or, for ``show``, the model records) and decide
nothing.  ``OutputFormat`` lists the formats; ``renderer`` maps each to its
module, exhaustively (a test renders every format).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

from ..report import Report


class OutputFormat(enum.StrEnum):
    """Report formats of ``linkaudit check``."""

    TEXT = "text"
    JSON = "json"


#: Version of the JSON documents; evolves additively (new optional fields only).
SCHEMA_VERSION = "linkaudit/1"


def renderer(fmt: OutputFormat) -> Callable[..., str]:
    """The ``render`` function of ``fmt``'s module."""
    if fmt is OutputFormat.TEXT:
        from . import text

        return text.render
    if fmt is OutputFormat.JSON:
        from . import json

        return json.render
    raise AssertionError(f"unhandled output format {fmt}")  # pragma: no cover


__all__ = ["SCHEMA_VERSION", "OutputFormat", "Report", "renderer"]
