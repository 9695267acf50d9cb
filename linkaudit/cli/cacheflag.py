"""``--no-cache``: one option, accepted before the command (``linkaudit --no-cache check``) and
after it (``linkaudit check --no-cache``) by every command that reads files."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

#: ``click.Context.meta`` key (shared by a group's context and its command's): the cache is off.
_OFF = "linkaudit.no_cache"


def _turn_off(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        from ..cache import configure

        ctx.meta[_OFF] = True
        configure(False)


def no_cache_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add ``--no-cache`` to a click group or command: the cache is neither read nor written.

    The flag is not passed to the command: it turns the cache off as it is parsed (a command's
    options are parsed after its group has run, so the group's turning it on comes first).
    """
    return click.option(
        "--no-cache",
        is_flag=True,
        expose_value=False,
        callback=_turn_off,
        help="Neither read nor write the cache of what files say (docs/cache.md; $LINKAUDIT_CACHE_DIR).",
    )(func)


def cache_wanted(ctx: click.Context) -> bool:
    """False when ``--no-cache`` was given to the group (before the command)."""
    return not ctx.meta.get(_OFF, False)
