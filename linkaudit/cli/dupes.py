"""``linkaudit dupes PATH...``: only the duplicate analysis of objects and archives, grouped by symbol."""

from __future__ import annotations

import click

from ..audit import audit
from ..config import AuditConfig
from ..link.line import read_link_line
from ..output import OutputFormat, renderer, text_safe
from ..rules import rule_ids
from .cacheflag import no_cache_option
from .emit import emit

DUPLICATE_RULES = frozenset({"duplicate-definition", "common-symbol", "stacked-codegen", "lto-object"})


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--link-line", default=None, metavar="FILE", help="The link combining the inputs (see check).")
@click.option("--source", "source_dirs", multiple=True, metavar="DIR", help="Source tree to scan for stale wrappers.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@no_cache_option
def dupes(paths: tuple[str, ...], link_line: str | None, source_dirs: tuple[str, ...], fmt: str) -> int:
    """Show the duplicate definitions among objects and archives (and their causes), grouped by symbol.

    Exit status 1 when a link would fail (a duplicate-definition at error), 2 when an
    input cannot be read.
    """
    config = AuditConfig(
        ignore=frozenset(rule_ids()) - DUPLICATE_RULES - {"unreadable-input"},
        target=None,
        link_line=tuple(read_link_line(link_line)) if link_line else (),
        source_dirs=source_dirs,
    )
    report = audit(list(paths), config)
    if fmt == "json":
        emit(renderer(OutputFormat.JSON)(report))
    else:
        lines = []
        for f in sorted(report.findings, key=lambda f: (f.subject, f.rule)):
            lines.append(text_safe(f"{f.subject}  [{f.rule}, {f.severity.value}]"))
            for d in f.evidence.get("definitions", []):
                member = f"({d['member']})" if d.get("member") else ""
                lines.append(text_safe(f"    {d['object']}{member}  {d['section']}"))
            if f.rule != "duplicate-definition" or not f.evidence.get("definitions"):
                lines.append(text_safe(f"    {f.message}"))
            elif f.evidence.get("demangled") and f.evidence["demangled"] != f.subject:
                lines.insert(len(lines) - len(f.evidence["definitions"]), text_safe(f"    = {f.evidence['demangled']}"))
        lines.append(
            f"{sum(1 for f in report.findings if f.rule == 'duplicate-definition')} duplicate definitions, "
            f"{sum(1 for f in report.findings if f.rule == 'common-symbol')} common symbols "
            f"({len(report.files)} inputs, {report.seconds:.2f} s)"
        )
        emit("\n".join(lines) + "\n")
    if report.has_unreadable:
        return 2
    return 1 if report.has_errors else 0
