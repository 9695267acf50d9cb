"""The configuration file's loader options (``dll-directories``, ``target-env``, ...) as defaults
of the command-line options of the same name: an option given on the command line wins."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import click
from click.core import ParameterSource

from ..config.file import FileSettings

#: File keys whose values are paths of the audited tree or of a package's members (relative to
#: the configuration file when they exist beside it, else kept as written: ``torch/lib``).
_TREE_PATHS = frozenset({"dll-directories", "dyld-library-path", "dyld-fallback-library-path", "executable-path"})


def relative_to_file(config_path: str, values: Sequence[str]) -> tuple[str, ...]:
    """``values`` (paths a configuration file at ``config_path`` names), each relative to the file's
    directory when it exists there; kept as written when that directory is the working directory
    (so they match the inputs as the user spells them) and when nothing exists there (then it may
    name a package member: ``torch/lib``, ``PACKAGE!member``)."""
    base = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
    if base == os.getcwd():
        return tuple(values)
    out = []
    for value in values:
        near = value if os.path.isabs(value) else os.path.relpath(os.path.join(base, value))
        out.append(near if os.path.lexists(near) or "!" in value else value)
    return tuple(out)


def loader_with_file(loader: dict[str, Any], settings: FileSettings) -> dict[str, Any]:
    """``loader`` (the click command's loader options by parameter name) with each option the
    command line left at its default taken from the file (``settings.loader``).

    ``ld-library-path`` (a list in the file) becomes the option's colon-separated text; the tree
    paths (``_TREE_PATHS``) are made relative to the file as ``relative_to_file`` says.
    """
    ctx = click.get_current_context(silent=True)
    out = dict(loader)
    for key, value in settings.loader:
        name = key.replace("-", "_")
        source = ctx.get_parameter_source(name) if ctx is not None else None
        if source not in (None, ParameterSource.DEFAULT, ParameterSource.DEFAULT_MAP):
            continue  # given on the command line (or in the environment): it wins
        if key in _TREE_PATHS:
            paths = relative_to_file(settings.path, (value,) if isinstance(value, str) else value)  # type: ignore[arg-type]
            value = paths[0] if isinstance(value, str) else paths
        elif key == "ld-library-path":
            value = ":".join(value)  # type: ignore[arg-type]
        out[name] = value
    return out
