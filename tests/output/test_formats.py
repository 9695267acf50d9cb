"""Every output format renders; JSON validates against the shipped schema; the schema itself is valid."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from linkaudit import AuditConfig, VersionCeiling, audit
from linkaudit.output import OutputFormat, renderer

from .schema import _schema, validate_junit, validate_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    return audit([str(SAMPLES)], AuditConfig(max_versions=(VersionCeiling.parse("GLIBC_2.17"),)))


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_renders(report, fmt: OutputFormat) -> None:  # type: ignore[no-untyped-def]
    text = renderer(fmt)(report, color=False)
    assert text.endswith("\n")
    assert "libtorch_cuda.so" in text


def test_schemas_are_valid_json_schema() -> None:
    for name in ("report.schema.json", "show.schema.json", "tree.schema.json"):
        jsonschema.Draft202012Validator.check_schema(_schema(name))


def test_json_validates_and_has_every_rules_evidence(report) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(renderer(OutputFormat.JSON)(report))
    validate_report(doc)
    assert {f["rule"] for f in doc["findings"]} >= {
        "driver-link",
        "missing-provider",
        "symbol-version",
        "rpath-leak",
        "verneed-mismatch",
        "unreadable-input",
        "library-not-found",
        "version-not-found",
        "unresolved-symbol",
        "unused-needed",
        "dlopen-name",
    }


def test_schema_rejects_a_finding_without_evidence(report) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(renderer(OutputFormat.JSON)(report))
    del doc["findings"][0]["evidence"]
    with pytest.raises(jsonschema.ValidationError):
        validate_report(doc)


def test_text_colour_only_when_asked(report) -> None:  # type: ignore[no-untyped-def]
    assert "\x1b[" not in renderer(OutputFormat.TEXT)(report, color=False)
    assert "\x1b[31m" in renderer(OutputFormat.TEXT)(report, color=True)


def test_text_leaves_out_evidence_that_says_nothing() -> None:
    from linkaudit.report import Finding, Report, Severity

    f = Finding(
        "rpath-leak",
        Severity.WARNING,
        "lib.so",
        "/opt",
        "absolute",
        {"none": None, "false": False, "empty": [], "blank": "", "zero": 0, "yes": True, "entry": "/opt"},
    )
    text = renderer(OutputFormat.TEXT)(Report((), (f,)))
    assert "zero: 0" in text and "yes: yes" in text and "entry: /opt" in text
    assert not any(k in text for k in ("none:", "false:", "empty:", "blank:"))


def _hostile_tree(tmp_path: Path) -> Path:
    """A directory whose name is not UTF-8, holding a library with bad bytes and control characters in its strings."""
    import os

    from ..formats.elfbuild import DT_NEEDED, DT_RUNPATH, build, sym

    needed, runpath, name = b"lib\xff\xfe.so", b"/tmp/\x1b[31mred\nerror [fake] x", b"sym\x80bol"
    dynstr = b"\0" + needed + b"\0" + runpath + b"\0" + name + b"\0"
    data = build(
        dynstr,
        [(DT_NEEDED, 1), (DT_RUNPATH, 2 + len(needed))],
        dynsym=sym(0, 0) + sym(3 + len(needed) + len(runpath)),
    )
    top = tmp_path / os.fsdecode(b"pkg\xff\x1b[2J")
    top.mkdir()
    (top / os.fsdecode(b"lib\nfake.so")).write_bytes(data)
    return top


def test_reports_are_valid_utf8_with_bad_bytes_and_controls_escaped(tmp_path: Path) -> None:
    """Every format, stdout and --output: UTF-8 always; \\xNN for bad bytes; no raw newline or ESC from a name;
    the JUnit document stays well-formed XML (XML 1.0 admits no ESC) and valid against its XSD."""
    import subprocess
    import sys

    top = _hostile_tree(tmp_path)
    for fmt in OutputFormat:
        out = tmp_path / f"report.{fmt}"
        proc = subprocess.run(
            [sys.executable, "-m", "linkaudit", "check", "--format", fmt, "--no-color", str(top)],
            capture_output=True,
            env={**__import__("os").environ, "PYTHONIOENCODING": "ascii"},
        )
        assert proc.returncode in (0, 1), proc.stderr
        assert b"internal error" not in proc.stderr
        stdout = proc.stdout.decode("utf-8")  # strict: valid UTF-8
        written = subprocess.run(
            [sys.executable, "-m", "linkaudit", "check", "--format", fmt, "-o", str(out), str(top)],
            capture_output=True,
        )
        assert written.returncode in (0, 1), written.stderr
        for text in (stdout, out.read_bytes().decode("utf-8")):
            assert "\x1b" not in text
            if fmt == "json":
                doc = json.loads(text)
                validate_report(doc)
                assert any(f["path"].endswith("lib\nfake.so") for f in doc["files"])  # JSON escapes it
                assert "lib\\\\xff\\\\xfe.so" in text  # the JSON text of the string lib\xff\xfe.so
            elif fmt == "jsonl":
                lines = [json.loads(line) for line in text.splitlines()]  # each line one JSON value
                assert lines[-1]["type"] == "summary" and len(lines) > 1
                assert "lib\\\\xff\\\\xfe.so" in text and "\\u001b" in text  # escaped as in the JSON report
            elif fmt == "junit":
                validate_junit(text)
                assert "pkg\\xff\\x1b[2J" in text
            elif fmt == "sarif":
                json.loads(text)
                assert "pkg%FF%1B%5B2J/lib%0Afake.so" in text  # the file name's own bytes, percent-encoded
            else:
                assert "pkg\\xff\\x1b[2J" in text and "lib\\nfake.so" in text
                assert "\nerror [fake]" not in text and "red\\nerror [fake]" in text


def test_show_escapes_too(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    top = _hostile_tree(tmp_path)
    r = run_cli("show", "--symbols", str(top))
    assert r.exit_code == 0
    assert "lib\\xff\\xfe.so" in r.stdout and "sym\\x80bol" in r.stdout and "\x1b" not in r.stdout
    doc = json.loads(run_cli("show", "--format", "json", "--symbols", str(top)).stdout)
    assert doc["binaries"][0]["needed"][0]["name"] == "lib\\xff\\xfe.so"


def test_junit_is_xml_with_a_failure_per_failing_rule(report) -> None:  # type: ignore[no-untyped-def]
    from xml.etree import ElementTree as ET

    root = ET.fromstring(renderer(OutputFormat.JUNIT)(report).encode("utf-8"))
    failing = {(f.file, f.rule) for f in report.findings if f.severity.value == "error"}
    failures = {(c.get("classname"), c.get("name")) for c in root.iter("testcase") if c.find("failure") is not None}
    assert failures == failing
    assert int(root.get("failures")) == len(failing)
    assert int(root.get("tests")) == sum(1 for _ in root.iter("testcase"))
    validate_junit(renderer(OutputFormat.JUNIT)(report))


def test_junit_xsd_rejects_what_ci_readers_would_not_take(report) -> None:  # type: ignore[no-untyped-def]
    """The XSD validation above can fail: a case without a name, a negative count, an unknown element."""
    import xmlschema

    good = renderer(OutputFormat.JUNIT)(report)
    for bad in (
        good.replace(' name="driver-link"', "", 1),
        good.replace('errors="0"', 'errors="-1"', 1),
        good.replace("<testcase ", "<testcase><bogus/></testcase><testcase ", 1),
    ):
        assert bad != good
        with pytest.raises(xmlschema.XMLSchemaValidationError):
            validate_junit(bad)


def test_github_workflow_commands_are_escaped() -> None:
    from linkaudit.output.github import render
    from linkaudit.report import FileResult, FileStatus, Finding, Report, Severity

    report = Report(
        (FileResult("a,b:c.so", FileStatus.AUDITED),),
        (Finding("rpath-leak", Severity.ERROR, "a,b:c.so", "/tmp/x", "line one\nline two 100%"),),
    )
    first = render(report).splitlines()[0]
    assert first == "::error file=a%2Cb%3Ac.so,title=rpath-leak%3A /tmp/x::line one\\nline two 100%25"


def test_junit_headline_cut_at_a_word_and_run_rules_only_when_they_found_something(report) -> None:  # type: ignore[no-untyped-def]
    from xml.etree import ElementTree as ET

    root = ET.fromstring(renderer(OutputFormat.JUNIT)(report).encode("utf-8"))
    messages = [f.get("message", "") for f in root.iter("failure")]
    assert messages and all(len(m) <= 300 for m in messages)
    assert any(m.endswith("…") and not m[:-1].endswith(" ") for m in messages)
    cases = {(c.get("classname"), c.get("name")) for c in root.iter("testcase")}
    found = {(f.file, f.rule) for f in report.findings}
    for rule in ("no-binaries", "baseline-fixed", "unused-suppression", "loader-skipped", "unreadable-input"):
        assert {c for c in cases if c[1] == rule} <= found


def test_junit_cases_only_for_the_rules_that_judge_the_files_format(report) -> None:  # type: ignore[no-untyped-def]
    """A Mach-O or PE file gets no passing linux-tag, executable-stack or symbol-version case, an ELF
    file no min-os-version one (a 15-wheel dist/ made 17,826 cases); a case with findings stays."""
    from xml.etree import ElementTree as ET

    from linkaudit.rules import get_rule

    root = ET.fromstring(renderer(OutputFormat.JUNIT)(report).encode("utf-8"))
    formats = {r.path: r.format for r in report.files}
    found = {(f.file, f.rule) for f in report.findings}
    judged = set()
    for case in root.iter("testcase"):
        path, rule = case.get("classname"), str(case.get("name"))
        rule_cls = get_rule(rule)
        fmt = formats.get(str(path))
        if rule_cls is not None and rule_cls.formats is not None and fmt is not None and fmt not in rule_cls.formats:
            assert (path, rule) in found, (path, rule)
        judged.add((fmt, rule))
    assert ("macho", "min-os-version") in judged and ("elf", "min-os-version") not in judged
    assert ("elf", "executable-stack") in judged and ("macho", "executable-stack") not in judged
    assert ("pe", "linux-tag") not in judged and ("macho", "driver-link") in judged


def test_github_annotates_a_package_member_on_its_package() -> None:
    from linkaudit.output.github import render
    from linkaudit.report import FileResult, FileStatus, Finding, Report, Severity

    member = "dist/p-1.0-py3-none-any.whl!p/lib/x.so"
    report = Report(
        (FileResult(member, FileStatus.AUDITED),),
        (Finding("driver-link", Severity.ERROR, member, "libcuda.so.1", "m"),),
        packages=("dist/p-1.0-py3-none-any.whl",),
    )
    first = render(report).splitlines()[0]
    assert first == "::error file=dist/p-1.0-py3-none-any.whl,title=driver-link%3A p/lib/x.so%3A libcuda.so.1::m"


def test_libraries_the_target_policy_provides_are_not_said_to_be_on_this_machine() -> None:
    """The summary line of libraries resolved outside the inputs counts those read from this machine
    apart from those the target's policy provides by name (it said all were "on this machine")."""
    from linkaudit.output.text import _outside_line

    line = _outside_line(3, {"already-loaded": 1, "target-policy": 1, "system-directory": 1})
    assert line == (
        "3 libraries resolved outside the inputs: 2 on this machine (already-loaded: 1, system-directory: 1), "
        "1 by the target's policy (target-policy)"
    )
    assert _outside_line(1, {"target-policy": 1}) == (
        "1 library resolved outside the inputs: 1 by the target's policy (target-policy)"
    )
