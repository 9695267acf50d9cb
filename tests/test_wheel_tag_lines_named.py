"""A ``Tag:`` line of a wheel's ``WHEEL`` file that is not read — malformed (not python-abi-platform)
or past the budget of tags its lines expand to (``metadata.MAX_WHEEL_TAGS``) — was dropped without
a word: ``wheel-tag-mismatch`` judged the tags left, and a WHEEL of nothing but such lines judged
none.  Each is now an ``unreadable-input`` error naming the WHEEL file, the line and why (in a
wheel and installed); the other lines are read."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.packages.metadata import MAX_WHEEL_TAGS

HELPER = (Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()


def _unreadable(report) -> dict[str, str]:  # type: ignore[no-untyped-def]
    return {f.file: f.message for f in report.findings if f.rule == "unreadable-input"}


def _wheel(path: Path, wheel_text: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("demo/libhelper.so", HELPER)
        zf.writestr("demo-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
        zf.writestr("demo-1.0.dist-info/WHEEL", wheel_text)
        zf.writestr("demo-1.0.dist-info/RECORD", "")
    return path


#: A line spending 4,032 of the budget (63 x 64 tags), so that the next line's 65 pass it.
_SPENDER = "Tag: " + ".".join(f"zz{i}" for i in range(63)) + "-none-" + ".".join(f"p{i}" for i in range(64))
_PAST = "Tag: " + ".".join(f"py{i}" for i in range(5)) + "-none-" + ".".join(f"q{i}" for i in range(13))
_BAD_LINES = {
    "malformed": ("Tag: cp311-cp311", 'line 3, "Tag: cp311-cp311": not a tag: python-abi-platform (PEP 425)'),
    "two dashes too many": ("Tag: a-b-c-d-e", 'line 3, "Tag: a-b-c-d-e": not a tag: python-abi-platform (PEP 425)'),
    "past the budget": (
        _PAST,
        f'line 3, "{_PAST}": its 65 tags would pass the {MAX_WHEEL_TAGS:,} tags the Tag lines of a WHEEL file '
        "are expanded to (4,032 so far): not read",
    ),
}


@pytest.mark.parametrize("case", sorted(_BAD_LINES))
def test_a_wheel_tag_line_not_read_is_named_and_the_others_used(tmp_path: Path, case: str) -> None:
    line, why = _BAD_LINES[case]
    first = _SPENDER if case == "past the budget" else "Tag: py3-none-manylinux_2_17_x86_64"
    text = f"Wheel-Version: 1.0\n{first}\n{line}\nTag: cp311-cp311-macosx_11_0_arm64\n"
    whl = _wheel(tmp_path / "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl", text)
    report = audit([str(whl)])
    assert _unreadable(report) == {f"{whl}!demo-1.0.dist-info/WHEEL": f"Tag {why}"}
    # the line after it is read: its macOS tag disagrees with the wheel's name
    (mismatch,) = [f for f in report.findings if f.rule == "wheel-tag-mismatch"]
    assert "cp311-cp311-macosx_11_0_arm64" in mismatch.evidence["wheel_file_tags"]


def test_an_installed_wheel_tag_line_not_read_is_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    (site / "demo").mkdir(parents=True)
    (site / "demo-1.0.dist-info").mkdir()
    (site / "demo/libhelper.so").write_bytes(HELPER)
    (site / "demo-1.0.dist-info/RECORD").write_text("demo/libhelper.so,,\n")
    wheel = site / "demo-1.0.dist-info/WHEEL"
    wheel.write_text("Wheel-Version: 1.0\nTag: py3-none-manylinux_2_17_x86_64\nTag: nonsense\n")
    report = audit([str(site / "demo")])
    assert _unreadable(report) == {str(wheel): 'Tag line 3, "Tag: nonsense": not a tag: python-abi-platform (PEP 425)'}


def test_many_tag_lines_not_read_are_named_then_counted(tmp_path: Path) -> None:
    text = "Wheel-Version: 1.0\n" + "".join(f"Tag: bad{i}\n" for i in range(1000))
    whl = _wheel(tmp_path / "demo-1.0-py3-none-any.whl", text)
    report = audit([str(whl)])
    errors = [f for f in report.findings if f.rule == "unreadable-input"]
    assert 1 < len(errors) <= 20, len(errors)
    assert "more Tag lines not read" in errors[-1].message
