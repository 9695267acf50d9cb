"""``linkaudit rules`` and ``linkaudit explain RULE``."""

from __future__ import annotations

import click

from ..rules import RULES, get_rule


@click.command()
def rules() -> int:
    """List the rules: id, default severity, summary."""
    width = max(len(r.id) for r in RULES)
    for r in RULES:
        click.echo(f"{r.id:<{width}}  {r.severity.value:<7}  {r.summary}")
    return 0


@click.command()
@click.argument("rule_id", metavar="RULE")
def explain(rule_id: str) -> int:
    """Explain one rule: what it checks, why, how to fix, and its evidence fields."""
    rule = get_rule(rule_id)
    if rule is None:
        raise click.BadParameter(f"no rule {rule_id!r}; `linkaudit rules` lists them", param_hint="RULE")
    click.echo(f"{rule.id} ({rule.severity.value}): {rule.summary}\n")
    click.echo(rule.explain.rstrip() + "\n")
    if rule.evidence:
        click.echo("Evidence (JSON `evidence` object):")
        for key, text in rule.evidence.items():
            click.echo(f"  {key}: {text}")
    return 0
