"""Installed and packed metadata that cannot be read is named by every command that reads it, never
passed over (hostile round 41, the follow-ups of ``tests/test_silent_metadata.py``):

- ``show``, ``tree`` and ``why`` read a site's or prefix's metadata as ``check`` does (its target,
  its owners) but said nothing of a record they could not read: a conda-meta record of 74 MB was
  passed over, exit 0.  Each now names it on standard error and exits 2, as for any input that
  cannot be read; the rest is shown.
- a record is judged past its limit by the file opened, not by a size asked of its path first (a
  record that grew in between was cut at the limit, then "not JSON").
- a ``.dist-info`` or ``conda-meta`` that is no directory (a file, a FIFO) was taken as absent.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.packages.metadata import MAX_RECORD

HELPER = (Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()


def _unreadable(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.file: f.message for f in report.findings if f.rule == "unreadable-input"}


def _prefix(tmp_path: Path) -> Path:
    """A conda prefix of one readable record owning ``lib/libhelper.so``."""
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "conda-meta").mkdir()
    (prefix / "lib/libhelper.so").write_bytes(HELPER)
    record = {"name": "helper", "version": "1.0", "build": "0", "subdir": "linux-64", "files": ["lib/libhelper.so"]}
    (prefix / "conda-meta/helper-1.0-0.json").write_text(json.dumps(record))
    return prefix


def _site(tmp_path: Path) -> Path:
    """A site-packages of one distribution owning ``demo/libhelper.so``."""
    site = tmp_path / "site"
    info = site / "demo-1.0.dist-info"
    (site / "demo").mkdir(parents=True)
    info.mkdir()
    (site / "demo/libhelper.so").write_bytes(HELPER)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    (info / "WHEEL").write_text("Wheel-Version: 1.0\nTag: py3-none-manylinux_2_17_x86_64\n")
    (info / "RECORD").write_text("demo/libhelper.so,,\n")
    return site


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as fh:  # nothing on disk
        fh.truncate(size)


def _big_record(tmp_path: Path) -> tuple[Path, Path, str]:
    prefix = _prefix(tmp_path)
    bad = prefix / "conda-meta/big-1.0-0.json"
    _sparse(bad, 74_000_000)
    why = f"74,000,000 bytes, past the limit of {MAX_RECORD:,} bytes a conda-meta record is read to: not read"
    return prefix / "lib", bad, why


def _big_installed_record(tmp_path: Path) -> tuple[Path, Path, str]:
    site = _site(tmp_path)
    bad = site / "demo-1.0.dist-info/RECORD"
    _sparse(bad, MAX_RECORD + 1)
    why = f"{MAX_RECORD + 1:,} bytes, past the limit of {MAX_RECORD:,} bytes a .dist-info/RECORD is read to: not read"
    return site / "demo", bad, why


def _not_json(tmp_path: Path) -> tuple[Path, Path, str]:
    prefix = _prefix(tmp_path)
    bad = prefix / "conda-meta/bad-1.0-0.json"
    bad.write_text("{")
    return prefix / "lib", bad, "not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"


def _dist_info_file(tmp_path: Path) -> tuple[Path, Path, str]:
    site = _site(tmp_path)
    bad = site / "other-2.0.dist-info"
    bad.write_text("")
    return site / "demo", bad, "not a directory: a .dist-info is one, holding METADATA, WHEEL and RECORD; not read"


def _conda_meta_file(tmp_path: Path) -> tuple[Path, Path, str]:
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib/libhelper.so").write_bytes(HELPER)
    (prefix / "conda-meta").write_text("")
    return prefix / "lib", prefix / "conda-meta", "cannot be listed: Not a directory: the prefix's records not read"


def _conda_meta_fifo(tmp_path: Path) -> tuple[Path, Path, str]:
    prefix = tmp_path / "env"
    (prefix / "lib").mkdir(parents=True)
    (prefix / "lib/libhelper.so").write_bytes(HELPER)
    os.mkfifo(prefix / "conda-meta")
    return prefix / "lib", prefix / "conda-meta", "cannot be listed: Not a directory: the prefix's records not read"


def _dist_info_fifo(tmp_path: Path) -> tuple[Path, Path, str]:
    site = _site(tmp_path)
    bad = site / "other-2.0.dist-info"
    os.mkfifo(bad)
    return site / "demo", bad, "not a directory: a .dist-info is one, holding METADATA, WHEEL and RECORD; not read"


#: Each way a site's or prefix's metadata cannot be read: (the directory given, the file, why).
CASES = {
    "conda-meta record of 74 MB": _big_record,
    "installed RECORD past its limit": _big_installed_record,
    "conda-meta record not JSON": _not_json,
    "a .dist-info that is a file": _dist_info_file,
    "a .dist-info that is a FIFO": _dist_info_fifo,
    "a file named conda-meta": _conda_meta_file,
    "a FIFO named conda-meta": _conda_meta_fifo,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_names_metadata_it_cannot_read(tmp_path: Path, case: str) -> None:
    given, bad, why = CASES[case](tmp_path)
    report = audit([str(given)])
    assert _unreadable(report) == {str(bad): why}
    assert [f.status.value for f in report.files if f.path.endswith("libhelper.so")] == ["audited"]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["show", "tree", "why"])
def test_show_tree_why_name_metadata_they_cannot_read(run_cli, tmp_path: Path, case: str, command: str) -> None:  # type: ignore[no-untyped-def]
    given, bad, why = CASES[case](tmp_path)
    result = run_cli(command, str(given), *(["libc.so.6"] if command == "why" else []))
    assert result.exit_code == 2, (result.exit_code, result.stderr)
    assert f"linkaudit: error: {bad}: {why}\n" in result.stderr
    assert "libhelper.so" in result.stdout  # the rest is shown


def test_show_json_lists_them_among_its_errors(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    given, bad, why = _not_json(tmp_path)
    result = run_cli("show", "--format", "json", str(given))
    assert result.exit_code == 2
    assert {"path": str(bad), "reason": why}.items() <= json.loads(result.stdout)["errors"][0].items()


def test_readable_metadata_is_no_error(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for given in (_prefix(tmp_path / "a") / "lib", _site(tmp_path / "b") / "demo"):
        for command in (["show"], ["tree"], ["why", "x", "libc.so.6"]):
            args = [*command[:1], str(given), *command[2:]]
            result = run_cli(*args)
            assert result.exit_code == 0 and "error" not in result.stderr, (args, result.stderr)


def test_a_record_is_judged_by_the_file_opened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record whose size asked of its path is small (it grew before it was read) is past the
    limit by what the open file holds, not cut at the limit and then called "not JSON"."""
    given, bad, _why = _big_record(tmp_path)
    real_stat = os.stat

    def small(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        result = real_stat(path, *args, **kwargs)
        if str(path) == str(bad):
            return os.stat_result((result.st_mode, *result[1:6], 100, *result[7:]))
        return result

    monkeypatch.setattr(os, "stat", small)
    (message,) = _unreadable(audit([str(given)])).values()
    assert message.startswith("74,000,000 bytes, past the limit"), message
