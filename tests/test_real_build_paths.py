"""Leaked build paths on real wheels (``tests/cli/test_baseline_build_paths.py`` has the rule):
torchvision 0.29.0 and 0.29.1 carry DT_RPATH ``/__w/_temp/conda_environment_<GitHub run id>/lib``,
scipy 1.15.0 and 1.17.0 ``/opt/_internal/cpython-3.11.<patch>/.../scipy_openblas32/lib`` (the
manylinux image's Python). The wheels are read from /opt/pypi-more/files; a test is skipped where
they are absent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.realwheel

FILES = Path("/opt/pypi-more/files")
OPTIONS = ("--no-config", "--no-loader")


def _wheel(name: str) -> Path:
    found = sorted(FILES.glob(f"{name}-*.whl"))
    if not found:
        pytest.skip(f"{name} wheel not in {FILES}")
    return found[0]


@pytest.mark.parametrize(
    ("old", "new", "part"),
    [
        ("torchvision-0.29.0", "torchvision-0.29.1", "/__w/_temp/conda_environment_"),
        ("scipy-1.15.0", "scipy-1.17.0", "/opt/_internal/cpython-3.11."),
    ],
)
def test_the_next_release_leaking_the_same_path_is_no_new_finding(
    run_cli, tmp_path: Path, monkeypatch, old, new, part
) -> None:  # type: ignore[no-untyped-def]
    """The baseline of the old release accepts the new one's leak (the run id, the patch release
    differ), and ``diff`` finds no rpath-leak new or gone."""
    old_wheel, new_wheel = _wheel(old), _wheel(new)
    monkeypatch.chdir(tmp_path)
    run_cli("check", *OPTIONS, "--write-baseline", "bl.json", str(old_wheel))
    subjects = [
        f["subject"] for f in json.loads((tmp_path / "bl.json").read_text())["findings"] if f["rule"] == "rpath-leak"
    ]
    assert any(s.startswith(part) and "*" in s for s in subjects), subjects
    doc = json.loads(run_cli("check", *OPTIONS, "--format", "json", "--baseline", "bl.json", str(new_wheel)).stdout)
    leaks = [f for f in doc["findings"] if f["rule"] == "rpath-leak"]
    assert any(f["subject"].startswith(part) for f in leaks), leaks
    assert all(f.get("suppressed") for f in leaks), leaks
    assert not [f for f in doc["findings"] if f["rule"] == "baseline-fixed"]
    changes = json.loads(run_cli("diff", *OPTIONS, "--format", "json", str(old_wheel), str(new_wheel)).stdout)
    assert not [f for f in changes["findings_new"] + changes["findings_gone"] if f["rule"] == "rpath-leak"]
