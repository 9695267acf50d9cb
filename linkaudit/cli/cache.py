"""``linkaudit cache info|clear``: what the cache of what files say holds, and emptying it."""

from __future__ import annotations

import click

from ..cache import Cache, default_root


@click.group()
def cache() -> None:
    """The cache of what files say ($LINKAUDIT_CACHE_DIR, else the user cache directory)."""


@cache.command()
def info() -> None:
    """Where the cache is, how many entries and bytes it holds, and its bound."""
    shown = Cache(default_root()).info()
    click.echo(f"cache: {shown.root}")
    click.echo(f"entries: {shown.entries}")
    click.echo(f"size: {shown.size} bytes (bound: {shown.limit} bytes; least recently used evicted)")


@cache.command()
def clear() -> None:
    """Remove every entry."""
    store = Cache(default_root())
    click.echo(f"removed {store.clear()} entries from {store.root}")
