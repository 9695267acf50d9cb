"""``linkaudit check``: exit codes, text and JSON output, bad input, --output, --ignore."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..output.schema import validate_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def test_broken_seed_exit_1_with_both_findings(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "broken/libtorch_cuda.so"))
    assert r.exit_code == 1
    assert "[driver-link] libcuda.so.1" in r.stdout
    assert "unused" in r.stdout
    assert "[missing-provider]" in r.stdout and "9 undefined symbols" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("1 file audited: 2 errors, 0 warnings, 0 notes (")


def test_fixed_twin_exit_0(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "fixed"))
    assert r.exit_code == 0, r.stdout
    assert "0 errors" in r.stdout


def test_warning_only_exits_0(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "misc/libabs.so"))
    assert r.exit_code == 0
    assert "warning [rpath-leak]" in r.stdout


def test_json_is_valid_against_schema_and_keeps_relative_paths(run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(SAMPLES.parent)
    r = run_cli("check", "--format", "json", "--max-version", "GLIBC_2.17", "sample_bins")
    assert r.exit_code == 2  # sample_bins/corrupt holds unreadable files
    doc = json.loads(r.stdout)
    validate_report(doc)
    assert doc["schema"] == "linkaudit/1"
    files = {f["path"] for f in doc["files"]}
    assert "sample_bins/broken/libtorch_cuda.so" in files
    assert all(not p.startswith("/") for p in files)
    rules = {(f["rule"], f["file"]) for f in doc["findings"]}
    assert ("driver-link", "sample_bins/broken/libtorch_cuda.so") in rules
    assert ("missing-provider", "sample_bins/broken/libtorch_cuda.so") in rules
    assert ("unreadable-input", "sample_bins/corrupt/truncated.so") in rules
    assert ("verneed-mismatch", "sample_bins/misc/libverneed_mismatch.so") in rules


def test_bad_inputs_are_named_and_others_still_audited(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    loop = tmp_path / "loop.so"
    os.symlink(loop, loop)
    missing = tmp_path / "nope.so"
    r = run_cli(
        "check",
        str(SAMPLES / "corrupt/truncated.so"),
        str(loop),
        str(missing),
        str(SAMPLES / "corrupt/not_elf.txt"),
        str(SAMPLES / "corrupt/empty.so"),
        str(SAMPLES / "broken/libtorch_cuda.so"),
    )
    assert r.exit_code == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert f"{loop}: symlink loop" in r.stdout
    assert f"{missing}: no such file or directory" in r.stdout
    assert "not_elf.txt: not a binary" in r.stdout
    assert "empty.so: empty file" in r.stdout
    assert "truncated.so: program header table" in r.stdout
    assert "[driver-link] libcuda.so.1" in r.stdout  # the good input is still audited
    assert "5 unreadable" in r.stdout


def test_symlinked_directory_loop_is_walked_once(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libtorch_cuda.so").write_bytes((SAMPLES / "broken/libtorch_cuda.so").read_bytes())
    os.symlink("..", tmp_path / "lib" / "up")  # lib/up -> tmp_path: a directory loop
    os.symlink("libtorch_cuda.so", tmp_path / "lib" / "libtorch_cuda.so.2")  # a second name
    r = run_cli("check", "--format", "json", str(tmp_path))
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == [str(tmp_path / "lib" / "libtorch_cuda.so")]
    assert r.exit_code == 1


def test_directory_without_binaries_is_a_note(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("x = 1\n")
    r = run_cli("check", str(tmp_path / "pkg"))
    assert r.exit_code == 0
    assert "[no-binaries]" in r.stdout


def test_unreadable_file(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "secret.so"
    target.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    real_open = os.open

    def deny(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    r = run_cli("check", str(target), str(SAMPLES / "fixed/libtorch_cuda.so"))
    assert r.exit_code == 2
    assert f"{target}: permission denied" in r.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_by_mode(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "secret.so"
    target.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    target.chmod(0)
    r = run_cli("check", str(target))
    assert r.exit_code == 2 and "permission denied" in r.stdout


def test_usage_errors_exit_2(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check").exit_code == 2
    r = run_cli("check", "--max-version", "banana", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "GLIBC_2.17" in r.stderr
    r = run_cli("check", "--ignore", "no-such-rule", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "no-such-rule" in r.stderr
    assert run_cli("check", "--format", "xml", str(SAMPLES / "fixed")).exit_code == 2


def test_ignore_rule(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(
        "check", "--ignore", "driver-link", "--ignore", "missing-provider", str(SAMPLES / "broken/libtorch_cuda.so")
    )
    assert r.exit_code == 0
    assert "driver-link" not in r.stdout


def test_output_file_and_refusal_to_overwrite_an_input(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "report.json"
    r = run_cli("check", "--format", "json", "--output", str(out), str(SAMPLES / "broken/libtorch_cuda.so"))
    assert r.exit_code == 1 and r.stdout == ""
    validate_report(json.loads(out.read_text()))
    victim = tmp_path / "lib.so"
    victim.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    before = victim.read_bytes()
    r = run_cli("check", "--output", str(victim), str(victim))
    assert r.exit_code == 2 and "refusing to overwrite an input" in r.stderr
    assert victim.read_bytes() == before


def test_python_dash_m_and_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "linkaudit",
            "check",
            str(SAMPLES / "corrupt/lying_dynsym.so"),
            str(tmp_path / "missing"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "lying_dynsym.so" in proc.stdout


def test_version_and_help(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("--version").exit_code == 0
    r = run_cli("check", "--help")
    assert r.exit_code == 0 and "--max-version" in r.stdout
