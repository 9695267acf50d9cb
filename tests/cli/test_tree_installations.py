"""``tree`` and ``why`` load the inputs as ``check`` audits them: one installation per target a
``dist/`` of one project's wheels names (before: all of them in one process, a Windows module
searching a macOS wheel for its DLLs, ``<manylinux_2_17_aarch64, manylinux_2_17_x86_64>``
policy paths), with ``check``'s loader target and delvewheel's ``<name>.libs`` directories."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.test_installations import _windows_wheel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
DIST = SAMPLES / "wheels/dist"
WHEELS = sorted(p.name for p in DIST.glob("*.whl"))


def _headings(text: str) -> list[str]:
    return re.findall(r"^installation (\d+ of \d+): .*?: (\S+\.whl)$", text, re.M)


def test_tree_draws_each_installation_apart(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("tree", str(DIST))
    assert r.exit_code == 0, r.stdout
    assert [w for _n, w in _headings(r.stdout)] == WHEELS
    assert [n for n, _w in _headings(r.stdout)] == [f"{i} of {len(WHEELS)}" for i in range(1, len(WHEELS) + 1)]
    sections = re.split(r"^installation \d+ of \d+: .*$", r.stdout, flags=re.M)[1:]
    for wheel, section in zip(WHEELS, sections, strict=True):
        others = [w for w in WHEELS if w != wheel]
        assert wheel in section and not any(o in section for o in others), (wheel, section)


def test_tree_together_and_documents(run_cli) -> None:  # type: ignore[no-untyped-def]
    together = run_cli("tree", "--together", str(DIST))
    assert together.exit_code == 0 and not _headings(together.stdout)
    assert all(w in together.stdout for w in WHEELS)
    doc = run_cli("tree", "--format", "json", str(DIST))
    assert doc.exit_code == 2
    assert f"the inputs make {len(WHEELS)} installations" in doc.stderr and "--together" in doc.stderr
    one = run_cli("tree", "--format", "json", str(DIST / WHEELS[0]))
    assert one.exit_code == 0 and json.loads(one.stdout)


def test_why_over_installations(run_cli) -> None:  # type: ignore[no-untyped-def]
    found = run_cli("why", str(DIST), "libhelper.so")
    assert found.exit_code == 0
    assert len(_headings(found.stdout)) == len(WHEELS)
    assert found.stdout.count("→ libhelper.so =>") == len(WHEELS)
    assert run_cli("why", str(DIST), "libnothing.so.9").exit_code == 1  # in none of them


def test_tree_and_why_find_delvewheel_dlls(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repaired = _windows_wheel(tmp_path, delvewheel=True)
    tree = run_cli("tree", str(repaired))
    assert tree.exit_code == 0, tree.stdout
    assert "not found" not in tree.stdout and "helper.dll" in tree.stdout
    why = run_cli("why", str(repaired), "helper.dll")
    assert why.exit_code == 0 and "not found" not in why.stdout
