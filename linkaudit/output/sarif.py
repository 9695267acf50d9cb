"""SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format): one run, every finding a result.

What GitHub code scanning (``github/codeql-action/upload-sarif``) and other SARIF viewers read:

* ``tool.driver.rules``: one ``reportingDescriptor`` per rule that ran (id, the rule's one-line
  summary as ``shortDescription``, the first paragraph of its ``linkaudit explain`` text as
  ``fullDescription`` and the whole text as ``help``, its default severity as ``defaultConfiguration.level``);
* each result: ``ruleId`` / ``ruleIndex``, ``level`` (error, warning, note), the message, the
  file as an ``artifactLocation`` (relative to the working directory, under ``uriBaseId``
  ``%SRCROOT%``, when the file is below it — the repository-relative path code scanning needs —
  else an absolute ``file:`` URI), the subject as a ``logicalLocation``, the evidence in
  ``properties``;
* ``partialFingerprints["linkaudit/v1"]``: SHA-256 of the baseline fingerprint (rule, file
  relative to the input that holds it, a wheel member's under its wheel's target tags, a conda
  package member's under its build's variant, after the input's name when several are given,
  subject, a leaked build path's without its per-build parts (``baseline.subject_key``) —
  ``baseline.keyed_file``,
  ``baseline.fingerprint``; of every one of its
  symbols, for a finding listing several — ``baseline.fingerprints``), so an alert keeps
  its identity across runs, machines and checkout paths, and a new set of symbols is a new alert;
* a suppressed finding carries ``suppressions: [{"kind": "external", "justification": reason}]``
  (SARIF §3.35: external = suppressed by a configuration or baseline file, not in the source);
* ``invocations[0].executionSuccessful`` is false when some input could not be read.

Binaries have no lines, so results carry no ``region``.  Source: SARIF v2.1.0 (OASIS
Standard, 27 March 2020), §3.27 (result), §3.49 (reportingDescriptor), §3.27.17
(partialFingerprints), §3.35 (suppression).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence, Set
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .. import __version__
from ..config.baseline import fingerprints
from ..report import Finding, Report, Severity, split_member
from ..rules import get_rule
from .shared import name_bytes, utf8_safe, utf8_tree

#: The ``$schema`` URI of SARIF 2.1.0 as OASIS publishes it.
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/os/schemas/sarif-schema-2.1.0.json"
SARIF_VERSION = "2.1.0"
#: Name of the ``partialFingerprints`` entry; bump the suffix if the fingerprint ever changes.
FINGERPRINT_KEY = "linkaudit/v1"
SRCROOT = "%SRCROOT%"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def _uri(path: str, root: str) -> tuple[str, bool]:
    """``(uri, relative)``: ``path`` as a URI reference, relative to ``root`` when below it.

    The file name's own bytes are percent-encoded (RFC 3986), so a name that is not UTF-8 keeps
    its exact bytes (``lib\\xff.so`` -> ``lib%FF.so``)."""
    absolute = os.path.abspath(path)
    if absolute == root or absolute.startswith(root.rstrip("/") + "/"):
        return quote(os.fsencode(Path(os.path.relpath(absolute, root)).as_posix()), safe="/"), True
    return "file://" + quote(os.fsencode(absolute), safe="/"), False


def _descriptor(rule_id: str) -> dict[str, Any]:
    rule = get_rule(rule_id)
    if rule is None:  # a rule id the registry does not know: keep the id only
        return {"id": rule_id}
    explain = rule.explain.strip()
    return {
        "id": rule.id,
        "name": "".join(part.capitalize() for part in rule.id.split("-")),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": explain.split("\n\n", 1)[0]},
        "help": {"text": explain},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
    }


def _result(f: Finding, index: dict[str, int], inputs: Sequence[str], root: str, packages: Set[str]) -> dict[str, Any]:
    """One SARIF result: a package member (``dist/x.whl!torch/lib/x.so``, of a package among
    ``packages``, those the run staged: ``report.split_member``) is located at its package, the
    file that exists in the checkout, the member kept in ``properties.file`` and as a logical
    location of kind ``module``; any other file (a ``!`` in its name included) at itself."""
    split = split_member(f.file, packages)
    uri, relative = _uri(split[0] if split is not None else f.file, root)
    location: dict[str, Any] = {"uri": uri}
    if relative:
        location["uriBaseId"] = SRCROOT
    keys = fingerprints(f, inputs, packages)  # a finding of several symbols: all of them (one: as before)
    key = name_bytes(json.dumps(keys[0] if len(keys) == 1 else keys, ensure_ascii=False))
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": _LEVEL[f.severity],
        "message": {"text": utf8_safe(f"{f.subject}: {f.message}")},
        "locations": [
            {
                "physicalLocation": {"artifactLocation": location},
                "logicalLocations": [{"name": utf8_safe(f.subject)}]
                + ([{"name": utf8_safe(split[1]), "kind": "module"}] if split is not None else []),
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: hashlib.sha256(key).hexdigest()},
        "properties": utf8_tree({"file": f.file, "subject": f.subject, "evidence": f.evidence}),
    }
    if f.suppressed is not None:
        result["suppressions"] = [{"kind": "external", "justification": utf8_safe(f.suppressed)}]
    return result


def report_to_sarif(report: Report, inputs: Sequence[str] = (), root: str | None = None) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log (a JSON-ready dict with one run).

    Args:
        report: the audit's report.
        inputs: the paths given on the command line (files and directories), which make the
            fingerprints relative (``baseline.relative_file``); empty: fingerprints use the paths
            as reported.
        root: the directory results are made relative to (``%SRCROOT%``), default the working
            directory (the repository root in a CI job).
    """
    root = os.path.abspath(root if root is not None else os.getcwd())
    rule_ids = list(dict.fromkeys([*report.rules, *(f.rule for f in report.findings)]))
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    packages = frozenset(report.packages)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "linkaudit",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": [_descriptor(r) for r in rule_ids],
            }
        },
        "originalUriBaseIds": {SRCROOT: {"uri": Path(root).as_uri().rstrip("/") + "/"}},
        "invocations": [{"executionSuccessful": not report.has_unreadable}],
        "results": [_result(f, index, inputs, root, packages) for f in report.findings],
        "columnKind": "unicodeCodePoints",
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": SARIF_VERSION, "runs": [run]}


def render(report: Report, color: bool = False, inputs: Sequence[str] = ()) -> str:
    """The report as a SARIF 2.1.0 JSON document, ending in a newline (see ``report_to_sarif``)."""
    return json.dumps(report_to_sarif(report, inputs), indent=2, ensure_ascii=False) + "\n"
