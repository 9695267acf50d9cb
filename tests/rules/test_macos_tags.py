"""macOS tags, per slice: min-os-version holds each slice to the lowest tag covering its architecture,
an arm64 slice never below 11.0; macos-tag names tags no installer selects (macosx_X_Y, X >= 11, Y != 0)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from linkaudit.rules.macos_tag import uninstallable

from ..output.schema import validate_report

MACHO = Path(__file__).resolve().parents[2] / "sample_bins/macho"
UNIVERSAL_10_9 = MACHO / "misc/universal_10_9.dylib"  # x86_64 slice: 10.9; arm64 slice: 11.0
UNIVERSAL_11 = MACHO / "misc/universal.dylib"  # both slices 11.0


def _wheel(path: Path, member: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        zf.write(member, f"pkg/{member.name}")
    return path


def _findings(run_cli, rule: str, *args: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    doc = json.loads(run_cli("check", "--no-config", "--no-loader", "--format", "json", *args).stdout)
    validate_report(doc)
    return [f for f in doc["findings"] if f["rule"] == rule]


def test_universal2_for_10_9_with_an_arm64_slice_for_11(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """What cibuildwheel makes for macosx_10_9_universal2: valid (no arm64 Mac runs macOS 10.9)."""
    whl = _wheel(tmp_path / "pkg-1.0-cp311-cp311-macosx_10_9_universal2.whl", UNIVERSAL_10_9)
    assert _findings(run_cli, "min-os-version", str(whl)) == []


def test_the_x86_64_slice_is_still_held_to_the_tag(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    whl = _wheel(tmp_path / "pkg-1.0-cp311-cp311-macosx_10_9_universal2.whl", UNIVERSAL_11)
    (f,) = _findings(run_cli, "min-os-version", str(whl))
    assert f["file"].endswith("universal.dylib(x86_64)") and f["evidence"]["ceiling"] == "macos=10.9"


def test_each_slice_by_the_tag_that_covers_its_architecture(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """macosx_10_9_x86_64.macosx_11_0_arm64: the x86_64 slice at 10.9, the arm64 one at 11.0 — both
    kept; under macosx_10_8_x86_64.macosx_11_0_arm64 only the x86_64 slice breaks its tag."""
    ok = _wheel(tmp_path / "pkg-1.0-cp311-cp311-macosx_10_9_x86_64.macosx_11_0_arm64.whl", UNIVERSAL_10_9)
    assert _findings(run_cli, "min-os-version", str(ok)) == []
    bad = _wheel(tmp_path / "pkg-1.0-cp311-cp311-macosx_10_8_x86_64.macosx_11_0_arm64.whl", UNIVERSAL_10_9)
    (f,) = _findings(run_cli, "min-os-version", str(bad))
    assert f["file"].endswith("(x86_64)") and f["evidence"]["ceiling_source"].startswith(
        "the platform tag macosx_10_8_x86_64 of"
    )


def test_a_configured_ceiling_also_allows_arm64_slices_11(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert _findings(run_cli, "min-os-version", "--max-version", "macos=10.9", str(UNIVERSAL_10_9)) == []
    found = _findings(run_cli, "min-os-version", "--max-version", "macos=10.9", str(UNIVERSAL_11))
    assert [f["file"].rsplit("(", 1)[1] for f in found] == ["x86_64)"]


@pytest.mark.parametrize(
    ("tag", "instead"),
    [
        ("macosx_14_2_arm64", "macosx_14_0_arm64"),
        ("macosx_11_3_universal2", "macosx_11_0_universal2"),
        ("macosx_11_0_arm64", None),
        ("macosx_10_13_x86_64", None),
        ("manylinux_2_17_x86_64", None),
    ],
)
def test_tags_installers_offer(tag: str, instead: str | None) -> None:
    assert uninstallable(tag) == instead


def test_a_wheel_no_installer_selects(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    whl = _wheel(tmp_path / "pkg-1.0-cp311-cp311-macosx_14_2_arm64.whl", UNIVERSAL_11)
    (f,) = _findings(run_cli, "macos-tag", str(whl))
    assert f["file"] == f"{whl}!*.dist-info/WHEEL" and f["subject"] == "macosx_14_2_arm64"
    assert f["evidence"]["instead"] == "macosx_14_0_arm64" and f["severity"] == "error"
    fine = _wheel(tmp_path / "pkg-1.0-cp311-cp311-macosx_14_0_arm64.whl", UNIVERSAL_11)
    assert _findings(run_cli, "macos-tag", str(fine)) == []


@pytest.mark.parametrize("text", ["1\u00b2", "\u0661\u0664.0", "9" * 5000 + ".0", "11.x"])
def test_a_version_that_is_not_plain_digits_is_read_without_failing(text: str) -> None:
    """The rule reads a minimum OS version by its ASCII digit runs only: ``"1²"`` passed
    ``str.isdigit`` and ended the run in ``int()``, a 5,000-digit run passed ``int``'s limit (a
    forged cache entry; the codec refuses those now, this is the rule's own guard)."""
    from linkaudit.rules.min_os_version import _release

    assert all(isinstance(n, int) and n < 10**9 for n in _release(text))
    assert _release("11.0.1") == (11, 0, 1)


@pytest.mark.parametrize(
    ("sample", "ceiling", "command"),
    [
        (UNIVERSAL_10_9, "macos=10.8", "LC_VERSION_MIN_MACOSX version"),  # its x86_64 slice: no LC_BUILD_VERSION
        (UNIVERSAL_11, "macos=10.9", "LC_BUILD_VERSION minos"),
    ],
)
def test_min_os_version_names_the_load_command_the_minimum_comes_from(
    run_cli, sample: Path, ceiling: str, command: str
) -> None:  # type: ignore[no-untyped-def]
    """A slice records its minimum macOS in LC_BUILD_VERSION (minos) or, built for macOS 10.13 and
    older, LC_VERSION_MIN_MACOSX (version): the finding names the one the file has (it always said
    LC_BUILD_VERSION, which ``otool -l`` then did not find)."""
    from linkaudit import read

    x86_64 = next(b for b in read(str(sample)) if b.machine == "x86_64")
    assert x86_64.min_os_command == command.split()[0]
    (f,) = _findings(run_cli, "min-os-version", "--max-version", ceiling, str(sample))
    assert f["file"].endswith("(x86_64)") and f"({command}) but the ceiling is {ceiling}" in f["message"]
    assert f["evidence"]["load_command"] == command.split()[0]


@pytest.mark.realwheel
def test_real_cryptography_names_lc_version_min_macosx(run_cli) -> None:  # type: ignore[no-untyped-def]
    """cryptography 48.0.1's macosx_10_9_universal2 module: its x86_64 slice says macOS 10.13 in
    LC_VERSION_MIN_MACOSX (a true finding, delocate refuses it too); skips when not cached."""
    from realsite import cache_root

    wheel = cache_root() / "wheels-mac" / "cryptography-48.0.1-cp311-abi3-macosx_10_9_universal2.whl"
    if not wheel.is_file():
        pytest.skip(f"{wheel.name} not cached in {wheel.parent}")
    found = _findings(run_cli, "min-os-version", str(wheel))
    assert [(f["file"].rsplit("!", 1)[1], f["evidence"]["load_command"]) for f in found] == [
        ("cryptography/hazmat/bindings/_rust.abi3.so(x86_64)", "LC_VERSION_MIN_MACOSX")
    ]
    assert "(LC_VERSION_MIN_MACOSX version)" in found[0]["message"]
