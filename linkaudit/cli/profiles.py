"""``linkaudit profiles [NAME]``: the target baselines shipped as data, and what each sets."""

from __future__ import annotations

import click

from ..config.policies import Policy
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
            f"  source: {p.source}\n  checked: {p.date}\n" + (_policy_lines(p.policy) if p.policy else "")
        )
        return 0
    rows = [(p.name, ", ".join(p.max_versions) or "-", p.summary) for p in profiles().values()]
    width = max(len(r[0]) for r in rows)
    emit("".join(f"{n:<{width}}  {v}\n{'':<{width}}  {s}\n" for n, v, s in rows))
    return 0


def _policy_lines(policy: Policy) -> str:
    """What a platform policy adds: the loader, the system libraries, and for musllinux what the
    check can promise."""
    lines = f"  loader: {policy.loader}\n  system libraries: {', '.join(policy.system_libraries)}\n"
    if policy.family == "musllinux":
        lines += (
            "  musl has no symbol versioning: no symbol-version ceiling applies; checked are the system\n"
            "  libraries and musl's loader (every other library shipped, found the way musl finds it),\n"
            "  not whether musl 1.X defines each symbol used\n"
        )
    return lines
