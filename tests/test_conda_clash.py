"""Conda packages given together install into one prefix: two of them writing one path is
``file-clash`` (an error naming both; a note when both copies hold the same bytes), whatever their
format (``.tar.bz2`` or ``.conda``), whether the member is a binary or not, and whether its bytes
were written to the staging tree or held in memory (``formats.held``).  Their ``info/`` files
install nothing into the prefix and never clash.  (Before: each ``.tar.bz2`` was staged into a
root of its own, and no clash between conda packages was ever found.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.packages import staged_inputs
from tests.condabuild import conda_package

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
HELPER = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
OTHER = (SAMPLES / "misc/libweak.so").read_bytes()


FORMATS = [(".tar.bz2", ".tar.bz2"), (".conda", ".conda"), (".tar.bz2", ".conda"), (".conda", ".tar.bz2")]


@pytest.mark.parametrize(("first", "other"), FORMATS)
@pytest.mark.parametrize("hold", [False, True])
def test_conda_packages_writing_one_path_clash(tmp_path: Path, first: str, other: str, hold: bool) -> None:
    a = conda_package(tmp_path, "foo", first, {"lib/libfoo.so": HELPER, "include/foo.h": b"int foo(void);\n"})
    b = conda_package(tmp_path, "bar", other, {"lib/libfoo.so": HELPER, "include/foo.h": b"int foo(int);\n"})
    c = conda_package(tmp_path, "baz", other, {"lib/libfoo.so": OTHER, "lib/libbaz.so": OTHER})
    with staged_inputs([a, b, c], hold=hold) as staged:
        got = {(k.path, k.first, k.second, k.identical) for k in staged.clashes}
        assert len(staged.paths) == 1  # one prefix
    assert got == {
        ("lib/libfoo.so", a, b, True),
        ("include/foo.h", a, b, False),
        ("lib/libfoo.so", a, c, False),
    }


@pytest.mark.parametrize(("first", "other"), FORMATS)
def test_conda_clash_is_reported_as_wheels_are(tmp_path: Path, first: str, other: str) -> None:
    """An error naming both packages; identical bytes a note; the first copy is the one audited."""
    a = conda_package(tmp_path, "foo", first, {"lib/libfoo.so": HELPER})
    b = conda_package(tmp_path, "bar", other, {"lib/libfoo.so": HELPER})
    c = conda_package(tmp_path, "baz", other, {"lib/libfoo.so": OTHER})
    report = audit([a, b, c])
    clashes = {(f.file, f.severity.value) for f in report.findings if f.rule == "file-clash"}
    assert clashes == {(f"{b}!lib/libfoo.so", "note"), (f"{c}!lib/libfoo.so", "error")}
    text = next(f.message for f in report.findings if f.file == f"{c}!lib/libfoo.so")
    assert a in text and c in text
    assert [f.path for f in report.files] == [f"{a}!lib/libfoo.so"]
