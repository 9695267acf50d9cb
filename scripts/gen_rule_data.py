"""Compile ``linkaudit/rules/data/*.toml`` into ``linkaudit/ruledata.py``.

The TOML and JSON files stay the source of truth (reviewed, edited by hand or by
``gen_policies.py``); the generated module holds the same values as Python literals, so the
audit loads them from a ``.pyc`` (marshal) instead of importing ``tomllib`` and parsing text on
every run.  ``tests/rules/test_ruledata.py`` fails when the two drift apart: run this
script after editing a data file::

    python scripts/gen_rule_data.py
"""

from __future__ import annotations

import pprint
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "linkaudit" / "rules" / "data"
OUT = ROOT / "linkaudit" / "ruledata.py"

HEADER = '''"""Rule and profile data, compiled from ``linkaudit/rules/data/`` by ``scripts/gen_rule_data.py``.

Generated: do not edit.  ``DATA[name]`` is what ``tomllib`` reads from ``name.toml``; a test
compares the two.
"""

from typing import Any

# fmt: off
DATA: dict[str, Any] = '''


def compiled() -> dict[str, object]:
    """``{stem: parsed contents}`` of every TOML data file (``policies.json`` is left to the C
    ``json`` parser, as fast as a ``.pyc`` for it)."""
    out: dict[str, object] = {}
    for path in sorted(DATA.iterdir()):
        if path.suffix == ".toml":
            out[path.stem] = tomllib.loads(path.read_text(encoding="utf-8"))
    return out


def render() -> str:
    """The generated module's text."""
    return HEADER + pprint.pformat(compiled(), width=110, sort_dicts=False) + "\n"


def main() -> int:
    """Write the module (or, with ``--check``, exit 1 when it is out of date)."""
    text = render()
    if "--check" in sys.argv[1:]:
        return 0 if OUT.read_text(encoding="utf-8") == text else 1
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
