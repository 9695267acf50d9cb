"""Validate JSON output against the schemas shipped in the package."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import jsonschema


def _schema(name: str) -> dict[str, Any]:
    text = resources.files("linkaudit.output").joinpath(f"schema/{name}").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def validate_report(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(_schema("report.schema.json")).validate(doc)


def validate_show(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(_schema("show.schema.json")).validate(doc)


def validate_tree(doc: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator(_schema("tree.schema.json")).validate(doc)


def validate_junit(text: str) -> None:
    """Validate a JUnit document against ``schema/junit.xsd`` (linkaudit's statement of the Ant/Jenkins dialect)."""
    import xmlschema

    xsd = resources.files("linkaudit.output").joinpath("schema/junit.xsd")
    with resources.as_file(xsd) as path:
        xmlschema.XMLSchema(str(path)).validate(text)
