"""Hostile metadata in installed sites and conda prefixes: each is passed over or named, never an
internal error (exit 3) and never a hang — one that cannot be read is named (exit 2) (found by a tester: a FIFO named METADATA or
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
    proc = _check(root)
    if where.endswith("METADATA"):  # named, not passed over in silence (exit 2: an input unreadable)
        assert proc.returncode == 2 and f"{target}: cannot be read: not a regular file" in proc.stdout, proc.stdout
    else:  # the directory is a site by its .dist-info: its conda-meta is never read
        assert proc.returncode in (0, 1)


def test_a_conda_record_nested_past_the_json_parser_is_named(tmp_path: Path) -> None:
    """200,000 '[' are more arrays than a record holds: refused unparsed, named (an error, exit 2)."""
    prefix = tmp_path / "prefix"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "conda-meta/p1.json").write_text("[" * 200_000)
    (prefix / "lib").mkdir()
    shutil.copy(LIB, prefix / "lib/libabs.so")
    proc = _check(prefix)
    assert proc.returncode == 2 and "p1.json" in proc.stdout and "conda-meta record not read" in proc.stdout


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


def test_a_fifo_listed_as_a_python_source_is_never_waited_on(tmp_path: Path) -> None:
    """``unused-dependency`` reads a distribution's ``.py`` files its RECORD lists: a FIFO among
    them hung the run (a blocking ``open``)."""
    record = "foo/libabs.so,,\nfoo/x.py,,\nfoo-1.0.dist-info/RECORD,,\n"
    metadata = "Metadata-Version: 2.1\nName: foo\nVersion: 1.0\nRequires-Dist: bar\n"
    root = _site(tmp_path / "site", metadata, record)
    os.mkfifo(root / "foo/x.py")
    bar = root / "bar-1.0.dist-info"
    bar.mkdir()
    (bar / "METADATA").write_text("Metadata-Version: 2.1\nName: bar\nVersion: 1.0\n")
    (bar / "RECORD").write_text("bar/__init__.py,,\n")
    (root / "bar").mkdir()
    (root / "bar/__init__.py").write_text("")
    proc = _check(root)
    assert proc.returncode in (0, 1)


def test_a_conda_record_listing_a_path_past_the_name_limits_leaves_it_out(tmp_path: Path) -> None:
    """conda-meta ``files`` are held to the limits of member names and RECORD rows: one path 40,000
    directories deep took 1.6 GB (each directory above it recorded by its path; exit 3 under a limit)."""
    import json

    from linkaudit.packages import limits
    from linkaudit.packages.site import SiteLayout, read_prefix

    prefix = tmp_path / "prefix"
    (prefix / "conda-meta").mkdir(parents=True)
    deep = "/".join(["d"] * (limits.MAX_NAME_DEPTH + 1)) + "/libx.so"
    record = {"name": "p", "version": "1", "build": "0", "files": ["lib/libabs.so", deep, "x" * 5000]}
    (prefix / "conda-meta/p-1-0.json").write_text(json.dumps(record))
    site = read_prefix(str(prefix))
    assert site is not None and [d.files for d in site.distributions] == [("lib/libabs.so",)]
    assert SiteLayout((site,)).directory_owners(str(prefix / "lib")) == ["p"]


def test_many_distributions_installing_into_one_directory_are_each_its_owner_once(tmp_path: Path) -> None:
    """A site layout's directory owners, in order, each once (a list tested for each parent of
    each file of 8,000 distributions sharing a 60-level directory: 25 s; an ordered set now)."""
    from linkaudit.packages.metadata import Distribution
    from linkaudit.packages.site import Site, SiteLayout

    shared = "/".join(["s"] * 60)
    dists = tuple(
        Distribution(f"d{i:03}", "1", str(tmp_path), files=(f"{shared}/f{i}.py", f"{shared}/g{i}.py"))
        for i in range(300)
    )
    layout = SiteLayout((Site(str(tmp_path), dists),))
    assert layout.directory_owners(str(tmp_path / shared)) == [f"d{i:03}" for i in range(300)]
    assert layout.directory_owners(str(tmp_path / "s")) == [f"d{i:03}" for i in range(300)]
