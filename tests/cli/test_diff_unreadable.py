"""``linkaudit diff``: a file one build has but linkaudit cannot read is listed as unreadable on its
side, never as added or removed, and the other build's findings on it are not called gone or new;
the JSON document carries it, and a summary of the counts the text's last line gives."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from linkaudit import __version__

from .test_diff_regressions import _valid

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
LEAK = SAMPLES / "misc/libleak.so"  # a build-tree RUNPATH: an rpath-leak finding
TAG = "cp311-cp311-manylinux_2_17_x86_64"


def _tree(root: Path, data: bytes) -> Path:
    (root / "lib").mkdir(parents=True)
    shutil.copy(SAMPLES / "misc/libabs.so", root / "lib/libabs.so")
    (root / "lib/libleak.so").write_bytes(data)
    return root


def _wheel(root: Path, data: bytes) -> Path:
    root.mkdir()
    with zipfile.ZipFile(root / f"pkg-1.0-{TAG}.whl", "w") as zf:
        zf.writestr("pkg/libabs.so", (SAMPLES / "misc/libabs.so").read_bytes())
        zf.writestr("pkg/libleak.so", data)
    return root


@pytest.mark.parametrize("layout", [_tree, _wheel], ids=["tree", "wheelhouse"])
@pytest.mark.parametrize("side", ["new", "old"])
def test_an_unreadable_file_is_neither_removed_nor_added(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout, side: str
) -> None:  # type: ignore[no-untyped-def]
    """libleak.so truncated to 200 bytes in one build: diff listed it ``- file … removed`` (or added)
    and its findings in the other build gone (or new), and its JSON had no trace of it."""
    monkeypatch.chdir(tmp_path)
    good, bad = LEAK.read_bytes(), LEAK.read_bytes()[:200]
    layout(tmp_path / "old", bad if side == "old" else good)
    layout(tmp_path / "new", bad if side == "new" else good)
    r = run_cli("diff", "--no-config", "--format", "json", "old", "new")
    assert r.exit_code == 2 and "libleak.so" in r.stderr and "Traceback" not in r.stderr
    doc = _valid(r.stdout)
    assert doc["files_added"] == [] and doc["files_removed"] == [], doc
    ((entry),) = doc["unreadable"]
    assert entry["side"] == side and entry["file"].endswith("libleak.so") and entry["key"].endswith("libleak.so")
    assert "past the end of the file" in entry["reason"] or "truncated" in entry["reason"], entry
    assert doc["findings_new"] == [] and doc["findings_gone"] == [], doc
    assert doc["summary"]["unreadable"] == 1 and doc["summary"]["files_removed"] == 0
    text = run_cli("diff", "--no-config", "old", "new").stdout
    assert f"? file {entry['key']} unreadable in {side.upper()}: " in text, text
    assert "- file" not in text and "+ file" not in text and "[rpath-leak]" not in text, text
    assert text.splitlines()[-1].endswith("0 findings new, 0 gone; 1 unreadable"), text


def test_the_json_summary_counts_what_the_text_line_does(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The fixed libtorch_cuda.so against the broken one, libleak.so removed: ``summary`` holds the
    counts of the text's last line, ``tool`` the name and version as ``check``'s JSON."""
    monkeypatch.chdir(tmp_path)
    for name in ("old", "new"):
        (tmp_path / name).mkdir()
    shutil.copy(SAMPLES / "fixed/libtorch_cuda.so", tmp_path / "old")
    shutil.copy(LEAK, tmp_path / "old")
    shutil.copy(SAMPLES / "broken/libtorch_cuda.so", tmp_path / "new")
    doc = _valid(run_cli("diff", "--no-config", "--format", "json", "old", "new").stdout)
    assert doc["tool"] == {"name": "linkaudit", "version": __version__}
    assert doc["summary"] == {
        "files_added": 0,
        "files_removed": 1,
        "files_changed": 1,
        "versions_raised": 0,
        "abi_breaks": 0,
        "findings_new": len(doc["findings_new"]),
        "findings_gone": len(doc["findings_gone"]),
        "ambiguous": 0,
        "unreadable": 0,
    }
    assert doc["summary"]["findings_new"] == 2
    last = run_cli("diff", "--no-config", "old", "new").stdout.splitlines()[-1]
    s = doc["summary"]
    assert last == (
        f"0 files added, 1 removed, 1 changed; 0 version ceilings raised; 0 ABI breaks; "
        f"{s['findings_new']} findings new, {s['findings_gone']} gone"
    )
    check = json.loads(run_cli("check", "--no-config", "--format", "json", "old").stdout)
    assert check["tool"] == doc["tool"]
