"""The configuration file (``linkaudit.toml`` / ``[tool.linkaudit]``): severities, suppressions, validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..output.schema import validate_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
BROKEN = str(SAMPLES / "broken/libtorch_cuda.so")
ABS = str(SAMPLES / "misc/libabs.so")

SUPPRESS_DRIVER = """
[[suppress]]
rule = "driver-link"
file = "broken/libtorch_cuda.so"
subject = "libcuda.so*"
reason = "dlopen()ed only on GPU hosts"
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory, so that no configuration file above the repository is found."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_suppression_hides_finding_keeps_it_in_json_and_passes(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    before = run_cli("check", "--no-loader", BROKEN)
    assert before.exit_code == 1 and "[driver-link]" in before.stdout
    (workdir / "linkaudit.toml").write_text(SUPPRESS_DRIVER)
    after = run_cli("check", "--no-loader", BROKEN)
    assert "[driver-link]" not in after.stdout
    assert "1 suppressed" in after.stdout
    # missing-provider is not covered: still an error.
    assert after.exit_code == 1 and "[missing-provider]" in after.stdout
    shown = run_cli("check", "--no-loader", "--show-suppressed", BROKEN)
    assert "[driver-link]" in shown.stdout and "suppressed: dlopen()ed only on GPU hosts" in shown.stdout
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", BROKEN).stdout)
    validate_report(doc)
    (driver,) = [f for f in doc["findings"] if f["rule"] == "driver-link"]
    assert driver["suppressed"] == "dlopen()ed only on GPU hosts"
    assert doc["summary"]["suppressed"] == 1 and doc["summary"]["errors"] == 1
    assert doc["config"]["config_file"] == [str(workdir / "linkaudit.toml")]
    ignored = run_cli("check", "--no-loader", "--no-config", BROKEN)
    assert "[driver-link]" in ignored.stdout and "suppressed" not in ignored.stdout


def test_suppressing_every_error_makes_exit_zero(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(
        SUPPRESS_DRIVER + '\n[[suppress]]\nrule = "missing-provider"\nfile = "*"\nreason = "known, issue #12"\n'
    )
    r = run_cli("check", "--no-loader", BROKEN)
    assert r.exit_code == 0, r.stdout
    assert "2 suppressed" in r.stdout


def test_subject_glob_must_match(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(SUPPRESS_DRIVER.replace("libcuda.so*", "libnvidia-ml.so*"))
    r = run_cli("check", "--no-loader", BROKEN)
    assert "[driver-link]" in r.stdout
    assert "[unused-suppression]" in r.stdout


def test_unused_suppression_is_a_warning_naming_the_entry(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(SUPPRESS_DRIVER)
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", ABS).stdout)
    validate_report(doc)
    (stale,) = [f for f in doc["findings"] if f["rule"] == "unused-suppression"]
    assert stale["severity"] == "warning"
    assert "suppress[0]" in stale["message"]
    assert stale["evidence"]["reason"] == "dlopen()ed only on GPU hosts"


def test_severity_override(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check", "--no-loader", ABS).exit_code == 0  # rpath-leak to /opt: a warning
    (workdir / "linkaudit.toml").write_text('[severity]\nrpath-leak = "error"\n')
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 1
    assert "error   [rpath-leak] /opt/vendor/lib" in r.stdout


def test_pyproject_tool_table_found_from_a_subdirectory(
    run_cli, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    (workdir / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.linkaudit]\nignore = ["rpath-leak"]\n')
    sub = workdir / "a" / "b"
    sub.mkdir(parents=True)
    monkeypatch.chdir(sub)
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", ABS).stdout)
    assert not [f for f in doc["findings"] if f["rule"] == "rpath-leak"]
    assert doc["config"]["ignore"] == ["rpath-leak"]


def test_max_versions_from_file_and_command_line_wins(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text('max_versions = ["GLIBC_2.2.5", "GLIBCXX_3.4.19"]\n')
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", "--max-version", "GLIBC_2.17", ABS).stdout)
    assert sorted(doc["config"]["max_versions"]) == ["GLIBCXX_3.4.19", "GLIBC_2.17"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("x = [", "not valid TOML"),
        ("colour = 1\n", "unknown key 'colour'"),
        ('ignore = "rpath-leak"\n', "ignore must be a list of strings"),
        ('ignore = ["no-such-rule"]\n', "'no-such-rule' is no rule"),
        ('[severity]\nrpath-leak = "fatal"\n', "expected error, warning or note"),
        ('[severity]\nunreadable-input = "note"\n', "always fails the audit"),
        ('[severity]\nbogus = "note"\n', "severity.bogus: no such rule"),
        ('[[suppress]]\nrule = "driver-link"\n', "suppress[0].reason: every suppression needs a reason"),
        ('[[suppress]]\nrule = "driver-link"\nreason = " "\n', "every suppression needs a reason"),
        ('[[suppress]]\nrule = "unreadable-input"\nreason = "x"\n', "cannot be suppressed"),
        ('[[suppress]]\nrule = "driver-link"\nreason = "x"\nwhy = 1\n', "suppress[0]: unknown key 'why'"),
        ('[[suppress]]\nrule = "driver-link"\nreason = "x"\nfile = 3\n', "must be strings"),
        ("suppress = 3\n", "suppress must be an array of tables"),
        ('ignore = ["rpath_leak"]\n', "'rpath_leak' is no rule (did you mean 'rpath-leak'?)"),
        ('[severity]\nRpath-Leak = "note"\n', "no such rule (did you mean 'rpath-leak'?)"),
        ('[[suppress]]\nrule = "driver_link"\nreason = "x"\n', "(did you mean 'driver-link'?)"),
    ],
)
def test_invalid_config_names_file_and_key(run_cli, workdir: Path, content: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(content)
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2
    assert "linkaudit.toml" in r.stderr and message in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_explicit_config_missing_is_a_usage_error(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--config", str(workdir / "nope.toml"), ABS)
    assert r.exit_code == 2 and "nope.toml: cannot read" in r.stderr


BROKEN_DIR = str(SAMPLES / "broken")
FIXED = str(SAMPLES / "fixed/libtorch_cuda.so")
UNUSED_ROOT = str(SAMPLES / "loader/unused_needed/libroot.so")


def test_forbidden_needed(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(
        '[[forbidden-needed]]\nfile = "*"\nneeded = "libnvrtc.so*"\nreason = "use the static NVRTC"\n'
    )
    assert "[forbidden-needed]" not in run_cli("check", "--no-loader", BROKEN).stdout
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", FIXED).stdout)
    validate_report(doc)
    (f,) = [f for f in doc["findings"] if f["rule"] == "forbidden-needed"]
    assert f["severity"] == "error" and f["subject"] == "libnvrtc.so.12"
    assert f["evidence"]["reason"] == "use the static NVRTC" and "forbidden-needed[0]" in f["evidence"]["entry"]


def test_required_needed(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(
        '[[required-needed]]\nfile = "libtorch_cuda.so"\nneeded = "libnvrtc.so*"\nreason = "JIT kernels"\n'
    )
    assert "[required-needed]" not in run_cli("check", "--no-loader", FIXED).stdout
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", BROKEN).stdout)
    validate_report(doc)
    (f,) = [f for f in doc["findings"] if f["rule"] == "required-needed"]
    assert f["subject"] == "libnvrtc.so*" and f["evidence"]["needed"] == ["libcuda.so.1", "libc.so.6"]


def test_required_needed_is_never_unused_needed(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    assert "[unused-needed] libnotused.so" in run_cli("check", UNUSED_ROOT).stdout
    (workdir / "linkaudit.toml").write_text(
        '[[required-needed]]\nfile = "libroot.so"\nneeded = "libnotused.so"\nreason = "registers a backend"\n'
    )
    r = run_cli("check", UNUSED_ROOT)
    assert "[unused-needed] libnotused.so" not in r.stdout and "[required-needed]" not in r.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('[[forbidden-needed]]\nneeded = "libx.so"\n', "forbidden-needed[0].reason: every forbidden-needed entry"),
        ('[[required-needed]]\nreason = "x"\n', "required-needed[0].needed"),
        ('[[required-needed]]\nneeded = "x"\nreason = "x"\nwhat = 1\n', "unknown key 'what'"),
        ("forbidden-needed = 1\n", "must be an array of tables"),
    ],
)
def test_invalid_needed_policy(run_cli, workdir: Path, content: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(content)
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2 and message in r.stderr, r.stderr


def test_errors_name_the_line(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text(
        '# comment\nmax_versions = ["GLIBC_2.17"]\n\n[severity]\nrpath-leak = "error"\n"driver-link" = "bad"\n'
    )
    r = run_cli("check", "--no-loader", ABS)
    assert "linkaudit.toml:6: severity.driver-link = 'bad'" in r.stderr, r.stderr
    (workdir / "linkaudit.toml").write_text(
        '[[suppress]]\nrule = "driver-link"\nreason = "x"\n\n[[suppress]]\nrule = "nope"\nreason = "y"\n'
    )
    assert "linkaudit.toml:6: suppress[1].rule: 'nope'" in run_cli("check", "--no-loader", ABS).stderr
    (workdir / "linkaudit.toml").write_text('[[suppress]]\nrule = "x"\n\n[[suppress]]\nrule = "driver-link"\n')
    # rule "x" fails first, on its own line
    assert "linkaudit.toml:2: suppress[0].rule" in run_cli("check", "--no-loader", ABS).stderr


def test_pyproject_errors_name_the_line(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.linkaudit]\nignore = ["rpath-leak"]\n\n'
        '[[tool.linkaudit.suppress]]\nrule = "driver-link"\n'
    )
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2
    assert "pyproject.toml:7: [tool.linkaudit]: suppress[0].reason" in r.stderr, r.stderr


def test_unused_suppression_names_its_line(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text("\n\n" + SUPPRESS_DRIVER)
    r = run_cli("check", "--no-loader", ABS)
    assert "linkaudit.toml:4: suppress[0] matches no finding" in r.stdout, r.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "nested too deeply"),
        (b'[[suppress]]\nrule = ["driver-link"]\nreason = "x"\n', "is no rule"),
        (b'[[suppress]]\nrule = {a = 1}\nreason = "x"\n', "is no rule"),
        (b'entries = ["a\\u0000b"]\n', "NUL"),
        (b'entries = [""]\n', "empty"),
        (b'max_versions = ["GLIBC_x"]\n', "linkaudit.toml:1: max_versions:"),
        (b'ignore = ["unreadable-input"]\n', "linkaudit.toml:1: ignore: inputs that cannot be read"),
        (b"# \xff\n", "not UTF-8"),
    ],
)
def test_hostile_config_is_a_clear_error(run_cli, workdir: Path, content: bytes, message: str) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_bytes(content)
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2, r.stderr
    assert message in r.stderr and "internal error" not in r.stderr, r.stderr


def test_unclosed_brackets_do_not_backtrack(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    # A line of "[" and spaces with no "]" once cost exponential regex time in the line scanner.
    spaces = " " * 20000
    (workdir / "linkaudit.toml").write_text(f'entries = ["""\n[{spaces}a{spaces}\n"""]\nbogus = 1\n')
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2 and "linkaudit.toml:4: unknown key 'bogus'" in r.stderr, r.stderr


@pytest.mark.parametrize("content", [b"# \xff\n", b"tool = 5\n", b'tool = "linkaudit"\n', b'tool = ["linkaudit"]\n'])
def test_odd_pyproject_without_our_table_is_ignored(run_cli, workdir: Path, content: bytes) -> None:  # type: ignore[no-untyped-def]
    (workdir / "pyproject.toml").write_bytes(content)
    r = run_cli("check", "--no-loader", "--format", "json", ABS)
    assert r.exit_code == 0, r.stderr
    assert "config_file" not in json.loads(r.stdout)["config"]


def test_broken_pyproject_with_our_table_is_reported(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "pyproject.toml").write_text("[tool.linkaudit\n")
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2 and "pyproject.toml: not valid TOML" in r.stderr


@pytest.mark.parametrize("special", ["/dev/zero", "/dev/null", "."])
def test_config_must_be_a_regular_file(run_cli, workdir: Path, special: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-loader", "--config", special, ABS)
    assert r.exit_code == 2 and "not a regular file" in r.stderr


def test_config_option_misuse(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    assert "--config: empty file name" in run_cli("check", "--config", "", ABS).stderr
    (workdir / "linkaudit.toml").write_text("")
    r = run_cli("check", "--config", "linkaudit.toml", "--no-config", ABS)
    assert r.exit_code == 2 and "choose one" in r.stderr


def test_reports_never_overwrite_config_or_each_other(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "linkaudit.toml").write_text('ignore = ["rpath-leak"]\n')
    for option in ("--output", "--write-baseline"):
        r = run_cli("check", "--no-loader", option, "linkaudit.toml", ABS)
        assert r.exit_code == 2 and "refusing to overwrite an input" in r.stderr
    assert (workdir / "linkaudit.toml").read_text() == 'ignore = ["rpath-leak"]\n'
    r = run_cli("check", "--no-loader", "-o", "out.json", "--write-baseline", "./out.json", ABS)
    assert r.exit_code == 2 and "name the same file" in r.stderr


def test_entries_are_relative_to_the_config_file(run_cli, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import shutil

    shutil.copytree(SAMPLES / "loader/unused_needed", workdir / "pkg")
    (workdir / "linkaudit.toml").write_text('entries = ["pkg/libroot.so"]\n')
    sub = workdir / "sub"
    sub.mkdir()
    monkeypatch.chdir(sub)
    doc = json.loads(run_cli("check", "--format", "json", "../pkg").stdout)
    assert [r["path"] for r in doc["roots"] if r["reached"]] == ["../pkg/libroot.so"]
    assert not [f for f in doc["findings"] if f["rule"] == "unreadable-input"]


def test_a_severity_override_leaves_the_rules_notes_notes(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    """``unresolved-symbol = "warning"`` makes its errors warnings; its notes (a weak symbol bound
    nowhere: allowed, the code checks for NULL) stay notes — they had become warnings too."""
    args = ("check", "--format", "json", str(SAMPLES / "misc/libweak.so"))

    def severities() -> list[tuple[str, str]]:
        doc = json.loads(run_cli(*args).stdout)
        return sorted((f["subject"], f["severity"]) for f in doc["findings"] if f["rule"] == "unresolved-symbol")

    assert severities() == [("optional_hook", "note"), ("required_hook", "error")]  # weak; strong
    (workdir / "linkaudit.toml").write_text('[severity]\nunresolved-symbol = "warning"\n')
    assert severities() == [("optional_hook", "note"), ("required_hook", "warning")]


def test_an_ignored_rule_spelt_nearly_right_is_suggested(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-config", "--ignore", "rpath_leak", ABS)
    assert r.exit_code == 2 and "no such rule (did you mean 'rpath-leak'?)" in r.stderr, r.stderr
    assert "did you mean" not in run_cli("check", "--no-config", "--ignore", "nonsense", ABS).stderr


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("linkaudit.toml", "a" + ".a" * 3000 + " = 1\n"),
        ("pyproject.toml", "[tool.linkaudit]\nignore = []\n[other]\n" + "a" + " . a" * 3000 + " = 1\n"),
        ("linkaudit.toml", "x = 1\n" + '"q"' + '."q"' * 3000 + " = 1\n"),
    ],
)
def test_a_key_of_thousands_of_dotted_parts_is_refused_unparsed(
    run_cli, workdir: Path, monkeypatch: pytest.MonkeyPatch, name: str, content: str
) -> None:  # type: ignore[no-untyped-def]
    # tomllib keeps every prefix of a dotted key: 40,000 parts (80 KB) cost 28 s and 6 GB.
    import tomllib

    parsed: list[int] = []
    real = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda text: parsed.append(len(text)) or real(text))
    (workdir / name).write_text(content)
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 2 and "a dotted key of 3001 parts (at most 128" in r.stderr, r.stderr
    assert parsed == [], "the document reached the TOML parser"


def test_a_deep_key_in_a_pyproject_without_our_table_is_ignored(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    (workdir / "pyproject.toml").write_text("# linkaudit\n" + "a" + ".a" * 3000 + " = 1\n")
    r = run_cli("check", "--no-loader", ABS)
    assert r.exit_code == 0, r.stderr


def test_a_suppressed_symbol_stays_suppressed_beside_a_new_one(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    """``subject = "bar"`` for ``unresolved-symbol`` matched while bar was the only symbol; once baz
    failed too, the finding's subject became "2 symbols": bar was reported again and the entry
    called stale ("matches no finding ... remove it"). Symbols are now matched one by one, as the
    baseline keys them: bar stays covered, the finding says baz is not, no unused-suppression."""
    from .test_baseline import _build

    (workdir / "linkaudit.toml").write_text(
        '[[suppress]]\nrule = "unresolved-symbol"\nfile = "*"\nsubject = "b?r"\nreason = "the host defines bar"\n'
        '[[suppress]]\nrule = "unresolved-symbol"\nfile = "libuser.so"\nsubject = "qux"\nreason = "qux too"\n'
    )
    _build(workdir / "build", ("bar", "baz"))
    r = run_cli("check", "build", "--ignore", "executable-stack", "--format", "json")
    findings = json.loads(r.stdout)["findings"]
    (error,) = [f for f in findings if f["rule"] == "unresolved-symbol"]
    assert r.exit_code == 1 and not error.get("suppressed")
    assert error["message"].endswith("(suppressed: bar; not suppressed: baz)")
    assert [f["subject"] for f in findings if f["rule"] == "unused-suppression"] == ["unresolved-symbol libuser.so qux"]
    _build(workdir / "build", ("bar", "qux"))  # every symbol covered, by two entries: suppressed, both used
    r = run_cli("check", "build", "--ignore", "executable-stack", "--format", "json")
    findings = json.loads(r.stdout)["findings"]
    (covered,) = [f for f in findings if f["rule"] == "unresolved-symbol"]
    assert r.exit_code == 0 and covered["suppressed"] == "the host defines bar; qux too"
    assert not [f for f in findings if f["rule"] == "unused-suppression"]
