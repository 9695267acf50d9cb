"""``linkaudit profiles [NAME]``: the target baselines shipped as data, and what each sets."""

from __future__ import annotations

import click

from ..config.profiles import get_profile, profiles
from .emit import emit


@click.command("profiles")
@click.argument("name", required=False)
def profiles_command(name: str | None) -> int:
    """List the profiles (--profile NAME), or show one with its source and date."""
    if name is not None:
        p = get_profile(name)
        emit(
            f"{p.name}\n  {p.summary}\n  max versions: {', '.join(p.max_versions) or '(none)'}\n"
            f"  source: {p.source}\n  checked: {p.date}\n"
        )
        return 0
    rows = [(p.name, ", ".join(p.max_versions) or "-", p.summary) for p in profiles().values()]
    width = max(len(r[0]) for r in rows)
    emit("".join(f"{n:<{width}}  {v}\n{'':<{width}}  {s}\n" for n, v, s in rows))
    return 0
