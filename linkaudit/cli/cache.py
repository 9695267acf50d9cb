"""``linkaudit cache info|clear``: what the cache of what files say holds, and emptying it."""

from __future__ import annotations

import os

import click

from ..cache import Cache, default_root, unusable
from ..errors import LinkauditError
from ..output import text_safe


@click.group()
def cache() -> None:
    """The cache of what files say ($LINKAUDIT_CACHE_DIR, else the user cache directory)."""


@cache.command()
def info() -> None:
    """Where the cache is, how many entries and bytes it holds, and its bound."""
    shown = _usable().info()
    click.echo(f"cache: {shown.root}")
    click.echo(f"entries: {shown.entries}")
    click.echo(f"size: {shown.size} bytes (bound: {shown.limit} bytes; least recently used evicted)")


@cache.command()
def clear() -> None:
    """Remove every entry."""
    store = _usable()
    click.echo(f"removed {store.clear()} entries from {store.root}")


def _usable() -> Cache:
    """The cache at ``default_root()``; raises ``LinkauditError`` (exit 2) when no cache can live
    there (``cache.unusable``: a regular file, a directory not writable), rather than counting
    "0 entries" of a directory that cannot exist."""
    root = default_root()
    reason = unusable(root)
    if reason is not None:
        where = " ($LINKAUDIT_CACHE_DIR)" if os.environ.get("LINKAUDIT_CACHE_DIR") else ""
        raise LinkauditError(f"the cache directory is unusable: {text_safe(reason)}{where}")
    return Cache(root)
