"""JUnit XML: one test case per (file, rule) that ran and judges the file's format
(``Rule.formats``); a failure for each error finding (suppressed findings only in ``system-out``).

CI systems (GitLab, Jenkins, Azure Pipelines) show it as a test report: a file that passes
every rule is a passing case, an error finding fails its case (its message and evidence in
the failure text), warnings and notes are written to the case's ``system-out``.
"""

from __future__ import annotations

import json
from xml.etree import ElementTree as ET

from ..report import FileStatus, Report, Severity
from ..rules import get_rule
from .shared import text_safe, utf8_tree

#: Rules the driver emits about the run rather than about a file's linkage: a test case only
#: where they found something (they would otherwise add a passing case to every file).
_RUN_RULES = frozenset(
    {"unreadable-input", "no-binaries", "loader-skipped", "unused-suppression", "baseline-fixed", "more-findings"}
)
#: Longest ``message`` attribute: CI tables show one line.
_MESSAGE_CHARS = 300


def _headline(message: str) -> str:
    """``message`` cut at a word boundary to ``_MESSAGE_CHARS`` characters, ``…`` marking the cut."""
    if len(message) <= _MESSAGE_CHARS:
        return message
    cut = message[: _MESSAGE_CHARS - 1]
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut) + "…"


def _judges(rule: str, fmt: str | None) -> bool:
    """True when ``rule`` judges files of the container ``fmt`` (``Rule.formats``): a passing case
    for a Mach-O file of ``linux-tag`` or ``executable-stack`` would say nothing."""
    rule_cls = get_rule(rule)
    return rule_cls is None or rule_cls.formats is None or fmt is None or fmt in rule_cls.formats


def _lines_safe(text: str) -> str:
    """``text_safe`` line by line: the newlines stay (XML text may hold them), every other
    control character is escaped (XML 1.0 admits none of C0 but tab, LF and CR)."""
    return "\n".join(text_safe(line) for line in text.split("\n"))


def render(report: Report, color: bool = False) -> str:
    """The report as a JUnit ``<testsuites>`` document, valid against ``schema/junit.xsd``."""
    by_case: dict[tuple[str, str], list] = {}  # type: ignore[type-arg]
    for f in report.findings:
        by_case.setdefault((f.file, f.rule), []).append(f)
    files = [r.path for r in report.files if r.status is not FileStatus.SKIPPED]
    formats = {r.path: r.format for r in report.files}
    suites = ET.Element("testsuites", name="linkaudit", time=f"{report.seconds:.3f}")
    total_failures = 0
    total_cases = 0
    for path in dict.fromkeys([*files, *(f.file for f in report.findings)]):
        suite = ET.SubElement(suites, "testsuite", name=text_safe(path))
        cases = 0
        failures = 0
        for rule in report.rules or sorted({r for (p, r) in by_case if p == path}):
            findings = by_case.get((path, rule), [])
            if not findings and (path not in files or rule in _RUN_RULES or not _judges(rule, formats.get(path))):
                continue
            case = ET.SubElement(suite, "testcase", classname=text_safe(path), name=rule)
            cases += 1
            errors = [f for f in findings if f.severity is Severity.ERROR and f.suppressed is None]
            if errors:
                failures += 1
                failure = ET.SubElement(case, "failure", message=text_safe(_headline(errors[0].message)), type=rule)
                failure.text = "\n\n".join(
                    _lines_safe(f"{f.subject}: {f.message}\n{json.dumps(utf8_tree(f.evidence), indent=2)}")
                    for f in errors
                )
            others = [f for f in findings if f not in errors]
            if others:
                ET.SubElement(case, "system-out").text = "\n".join(
                    text_safe(
                        f"{f.severity.value}: {f.subject}: {f.message}"
                        + (f" [suppressed: {f.suppressed}]" if f.suppressed is not None else "")
                    )
                    for f in others
                )
        suite.set("tests", str(cases))
        suite.set("failures", str(failures))
        suite.set("errors", "0")
        total_failures += failures
        total_cases += cases
    suites.set("tests", str(total_cases))
    suites.set("failures", str(total_failures))
    suites.set("errors", "0")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
