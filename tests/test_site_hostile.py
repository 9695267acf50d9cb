"""Hostile metadata in installed sites and conda prefixes: each is passed over or named, never an
internal error (exit 3) and never a hang (found by a tester: a FIFO named METADATA or
conda-meta/x.json hung the run; 200,000 '[' in a conda-meta record, a RECORD field over csv's
128 KiB limit and the marker '"a" in "b"' each ended the whole run with exit 3)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from linkaudit.packages.metadata import record_paths

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
LIB = SAMPLES / "misc/libabs.so"


def _site(root: Path, metadata: str = "Metadata-Version: 2.1\nName: foo\nVersion: 1.0\n", record: str = "") -> Path:
    dist = root / "foo-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(metadata)
    (dist / "WHEEL").write_text("Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: cp311-cp311-manylinux_2_17_x86_64\n")
    (dist / "RECORD").write_text(record or "foo/libabs.so,,\nfoo-1.0.dist-info/RECORD,,\n")
    (root / "foo").mkdir()
    shutil.copy(LIB, root / "foo/libabs.so")
    return root


def _check(path: Path) -> subprocess.CompletedProcess[str]:
    """``linkaudit check PATH sample_bins/broken`` in a child process (a hang fails, not blocks, the suite)."""
    proc = subprocess.run(
        [sys.executable, "-m", "linkaudit", "check", "--no-config", str(path), str(SAMPLES / "broken")],
        capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "libtorch_cuda.so" in proc.stdout  # the other input is still audited
    return proc


@pytest.mark.parametrize("where", ["foo-1.0.dist-info/METADATA", "conda-meta/x.json"])
def test_a_fifo_among_the_metadata_is_never_waited_on(tmp_path: Path, where: str) -> None:
    root = _site(tmp_path / "site")
    target = root / where
    target.parent.mkdir(exist_ok=True)
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    assert _check(root).returncode in (0, 1)


def test_a_conda_record_nested_past_the_json_parser_is_passed_over(tmp_path: Path) -> None:
    prefix = tmp_path / "prefix"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta/p1.json").write_text("[" * 200_000)
    (prefix / "lib").mkdir()
    shutil.copy(LIB, prefix / "lib/libabs.so")
    assert _check(prefix).returncode in (0, 1)


def test_a_record_field_past_csvs_limit_is_passed_over(tmp_path: Path) -> None:
    record = "x" * 200_000 + ",,\nfoo/libabs.so,,\n"
    assert record_paths(record) == ("foo/libabs.so",)
    assert _check(_site(tmp_path / "site", record=record)).returncode in (0, 1)


def test_a_marker_comparing_two_literals_is_not_an_internal_error(tmp_path: Path) -> None:
    metadata = 'Metadata-Version: 2.1\nName: foo\nVersion: 1.0\nRequires-Dist: bar ; "a" in "b"\n'
    assert _check(_site(tmp_path / "site", metadata=metadata)).returncode in (0, 1)


@pytest.mark.parametrize("content", [b"", b"garbage\n"])
def test_a_file_named_as_a_package_in_a_directory_is_never_passed_over(tmp_path: Path, content: bytes) -> None:
    """A `.whl` found in a wheelhouse that is no zip (empty, garbage) was dropped silently: exit 0
    with a 'no-binaries' note. It is an unreadable input, named, as when it is given by name."""
    from linkaudit import audit

    (tmp_path / "x-1.0-py3-none-any.whl").write_bytes(content)
    report = audit([str(tmp_path)])
    assert [f.file for f in report.findings if f.rule == "unreadable-input"] == [
        str(tmp_path / "x-1.0-py3-none-any.whl")
    ]
