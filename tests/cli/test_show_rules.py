"""``linkaudit show``, ``rules`` and ``explain``."""

from __future__ import annotations

import json
from pathlib import Path

from linkaudit.rules import RULES

from ..output.schema import validate_show

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def test_show_text(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", str(SAMPLES / "fixed/libtorch_cuda.so"))
    assert r.exit_code == 0
    assert "soname       libtorch_cuda.so" in r.stdout
    assert "runpath      $ORIGIN" in r.stdout
    assert "versions     libnvrtc.so.12: libnvrtc.so.12" in r.stdout
    lines = r.stdout.splitlines()
    needed = lines.index("  needed       libnvrtc.so.12")
    assert lines[needed + 1].strip() == "libc.so.6"


def test_show_json_symbols_validates(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(
        "show",
        "--format",
        "json",
        "--symbols",
        str(SAMPLES / "fixed/libtorch_cuda.so"),
        str(SAMPLES / "arch/lib64be.so"),
    )
    assert r.exit_code == 0
    doc = json.loads(r.stdout)
    validate_show(doc)
    fixed, be = doc["binaries"]
    assert [n["name"] for n in fixed["needed"]] == ["libnvrtc.so.12", "libc.so.6"]
    nvrtc = [s for s in fixed["symbols"] if s["name"] == "nvrtcCreateProgram"]
    assert nvrtc[0]["version"] == "libnvrtc.so.12" and nvrtc[0]["defined"] is False
    assert (be["machine"], be["bits"], be["endian"]) == ("s390x", 64, "big")


def test_show_bad_input_exit_2(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("show", str(SAMPLES / "corrupt/badclass.so"), str(SAMPLES / "fixed/libnvrtc.so.12"))
    assert r.exit_code == 2
    assert "badclass.so: invalid ELF class 7" in r.stderr
    assert "libnvrtc.so.12" in r.stdout


def test_rules_lists_every_rule(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("rules")
    assert r.exit_code == 0
    for rule in RULES:
        assert rule.id in r.stdout


def test_explain(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("explain", "symbol-version")
    assert r.exit_code == 0 and "dl-version.c" in r.stdout and "unused_versions" in r.stdout
    assert run_cli("explain", "nope").exit_code == 2


def test_every_rule_is_documented() -> None:
    import re

    for rule in RULES:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", rule.id)
        assert rule.summary and len(rule.explain) > 200 and rule.evidence
