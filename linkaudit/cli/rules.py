"""``linkaudit rules`` and ``linkaudit explain RULE``."""

from __future__ import annotations

import click

from ..rules import RULES, get_rule
from .emit import emit


@click.command()
def rules() -> int:
    """List the rules: id, default severity, summary."""
    width = max(len(r.id) for r in RULES)
    emit("".join(f"{r.id:<{width}}  {r.severity.value:<7}  {r.summary}\n" for r in RULES))
    return 0


@click.command()
@click.argument("rule_id", metavar="RULE")
def explain(rule_id: str) -> int:
    """Explain one rule: what it checks, why, how to fix, and its evidence fields."""
    rule = get_rule(rule_id)
    if rule is None:
        raise click.BadParameter(f"no rule {rule_id!r}; `linkaudit rules` lists them", param_hint="RULE")
    lines = [f"{rule.id} ({rule.severity.value}): {rule.summary}", "", rule.explain.rstrip(), ""]
    if rule.evidence:
        lines.append("Evidence (JSON `evidence` object):")
        lines.extend(f"  {key}: {text}" for key, text in rule.evidence.items())
    emit("\n".join(lines) + "\n")
    return 0
