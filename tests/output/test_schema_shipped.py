"""The JSON Schemas ship in the package (``linkaudit/output/schema/``, read with importlib.resources
as an installed package is) under stable ``$id``s of the project's own name, and the CLI's help
and the package's description no longer say what linkaudit no longer is."""

from __future__ import annotations

import fnmatch
import json
import tomllib
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from linkaudit.cli import main

BASE = "https://github.com/linkaudit/linkaudit/schema/"  # the README's project address
SCHEMAS = ("report.schema.json", "show.schema.json", "tree.schema.json", "diff.schema.json")
ROOT = Path(__file__).resolve().parents[2]


def test_one_project_address_everywhere() -> None:
    """The schemas' $ids named another GitHub owner than the README and every recipe do
    (github.com/linkaudit/linkaudit): every schema's $id lies under the README's address, and
    no text file of the source tree names the other one."""
    readme = ROOT / "README.md"
    if not readme.exists():
        pytest.skip("run from an installed package: no README.md beside the tests")
    assert "git+" + BASE.removesuffix("/schema/") in readme.read_text("utf-8")
    schema_dir = resources.files("linkaudit.output").joinpath("schema")
    ids = {e.name: json.loads(e.read_text("utf-8"))["$id"] for e in schema_dir.iterdir() if e.name.endswith(".json")}
    assert ids and ids == {name: BASE + name for name in ids}
    wrong = "linkaudit" + "-project"  # split: this file must not hold the string it looks for
    offenders = [
        str(p.relative_to(ROOT))
        for top in ("linkaudit", "docs", "tests", "README.md", "action.yml", "pyproject.toml")
        for p in ([ROOT / top] if (ROOT / top).is_file() else (ROOT / top).rglob("*"))
        if p.is_file()
        and p.suffix in {".py", ".md", ".json", ".toml", ".yml", ".yaml", ""}
        and wrong in p.read_text("utf-8", "replace")
    ]
    assert offenders == []


@pytest.mark.parametrize("name", SCHEMAS)
def test_schema_ships_with_a_stable_id(name: str) -> None:
    schema_dir = resources.files("linkaudit.output").joinpath("schema")
    assert name in {entry.name for entry in schema_dir.iterdir()}
    schema = json.loads(schema_dir.joinpath(name).read_text("utf-8"))
    assert schema["$id"] == BASE + name
    jsonschema.Draft202012Validator.check_schema(schema)
    assert ".invalid" not in json.dumps(schema)


def test_package_data_declares_every_schema() -> None:
    """What setuptools puts in the wheel: every file of output/schema/ matches a package-data glob."""
    pyproject = ROOT / "pyproject.toml"
    if not pyproject.exists():
        pytest.skip("run from an installed package: no pyproject.toml beside the tests")
    globs = tomllib.loads(pyproject.read_text("utf-8"))["tool"]["setuptools"]["package-data"]["linkaudit.output"]
    files = sorted(p.name for p in (ROOT / "linkaudit/output/schema").iterdir())
    assert set(SCHEMAS) <= set(files)
    for name in files:
        assert any(fnmatch.fnmatch(f"schema/{name}", g) for g in globs), name


def test_no_stale_words(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "reads ELF files" not in text and "ELF, PE and Mach-O" in text
    import linkaudit

    assert "to come" not in (linkaudit.__doc__ or "") and "Mach-O" in (linkaudit.__doc__ or "")
    assert "to come" not in (linkaudit.audit.__doc__ or "") + (linkaudit.read.__doc__ or "")
    pyproject = ROOT / "pyproject.toml"
    if pyproject.exists():
        description = tomllib.loads(pyproject.read_text("utf-8"))["project"]["description"]
        assert "to come" not in description and "Mach-O" in description
