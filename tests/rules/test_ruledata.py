"""The compiled rule data (``linkaudit/ruledata.py``) says exactly what the TOML files say.

The audit reads the compiled module (no TOML parse on the hot path); the TOML files are what
people edit.  Editing one without running ``scripts/gen_rule_data.py`` fails here.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from linkaudit.errors import ConfigError
from linkaudit.ruledata import DATA
from linkaudit.rules import data as rule_data

DATA_DIR = Path(__file__).resolve().parents[2] / "linkaudit" / "rules" / "data"


def test_every_toml_file_is_compiled_and_equal() -> None:
    files = sorted(DATA_DIR.glob("*.toml"))
    assert len(files) >= 6  # cuda, cuda_driver_api, glibc, nvml_api, profiles, rpath, windows
    for path in files:
        parsed = tomllib.loads(path.read_text(encoding="utf-8"))
        assert DATA.get(path.stem) == parsed, f"{path.name} drifted: run python scripts/gen_rule_data.py"
    assert set(DATA) == {p.stem for p in files}, "a compiled entry has no TOML file left"


def test_drift_is_seen(tmp_path: Path) -> None:
    """The comparison above can fail: one changed value makes the compiled data differ."""
    parsed = tomllib.loads((DATA_DIR / "rpath.toml").read_text(encoding="utf-8"))
    parsed["schema"] = 99
    assert DATA["rpath"] != parsed


def test_a_missing_entry_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="no-such-data"):
        rule_data._load("no-such-data")
