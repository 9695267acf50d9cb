"""A ``!`` in a plain file's name is part of its name: only a staged package's members are
``PACKAGE!member`` (``report.split_member``), in every format, the baseline and ``diff``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from linkaudit.report import split_member

from ..samplewheels import sample_write_wheel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
WHEEL = "p-1.0-cp311-cp311-linux_x86_64.whl"
#: plain files named with ``!``: the part before it no file, a name a package could have, a directory
PLAIN = ("x!y.so", "x.whl!z.so", "q!r/s.so")
MEMBER = f"d/{WHEEL}!pkg/libexecstack.so"


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``d/`` holding the plain files ``PLAIN`` (each an executable-stack library) and a wheel with
    the same library as ``pkg/libexecstack.so``."""
    monkeypatch.chdir(tmp_path)
    lib = SAMPLES / "misc/libexecstack.so"
    for name in PLAIN:
        (tmp_path / "d" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(lib, tmp_path / "d" / name)
    sample_write_wheel()(
        tmp_path / "d" / WHEEL,
        {"pkg/libexecstack.so": lib.read_bytes()},
        "p-1.0.dist-info",
        "Metadata-Version: 2.1\nName: p\nVersion: 1.0\n",
        ["cp311-cp311-linux_x86_64"],
    )
    return tmp_path


def test_split_member_only_at_a_package() -> None:
    packages = {"d/a.whl", "d/b!c.whl"}
    assert split_member("d/a.whl!pkg/x.so", packages) == ("d/a.whl", "pkg/x.so")
    assert split_member("d/b!c.whl!pkg/x.so", packages) == ("d/b!c.whl", "pkg/x.so")
    assert split_member("d/x!y.so", packages) is None
    assert split_member("d/x.whl!y.so", packages) is None
    assert split_member("d/a.whl", packages) is None


def _check(run_cli, fmt: str) -> str:  # type: ignore[no-untyped-def]
    result = run_cli("check", "--no-config", "--no-loader", "--format", fmt, "d")
    assert result.exit_code == 1, result.stderr
    return str(result.stdout)


def test_github_annotates_the_plain_file_whole(run_cli, tree: Path) -> None:  # type: ignore[no-untyped-def]
    lines = [line for line in _check(run_cli, "github").splitlines() if "executable-stack" in line]
    for name in PLAIN:
        assert any(f"file=d/{name}," in line and "title=executable-stack%3A PT_GNU_STACK" in line for line in lines)
    assert any(f"file=d/{WHEEL},title=executable-stack%3A pkg/libexecstack.so%3A" in line for line in lines)
    assert not any("file=d/x," in line or "file=d/q," in line or "file=d/x.whl," in line for line in lines)


def test_sarif_names_a_module_for_members_only(run_cli, tree: Path) -> None:  # type: ignore[no-untyped-def]
    results = json.loads(_check(run_cli, "sarif"))["runs"][0]["results"]
    modules = {}
    for r in results:
        if r["ruleId"] == "executable-stack":
            where = r["locations"][0]
            module = [x["name"] for x in where["logicalLocations"] if x.get("kind") == "module"]
            modules[r["properties"]["file"]] = (where["physicalLocation"]["artifactLocation"]["uri"], module)
    assert modules[MEMBER] == (f"d/{WHEEL}", ["pkg/libexecstack.so"])
    for name in PLAIN:
        assert modules[f"d/{name}"][1] == []
        assert modules[f"d/{name}"][0] == "d/" + name.replace("!", "%21")


@pytest.mark.parametrize("fmt", ["text", "json", "junit"])
def test_other_formats_name_the_plain_file_whole(run_cli, tree: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    out = _check(run_cli, fmt)
    for name in PLAIN:
        assert f"d/{name}" in out
    assert MEMBER in out


def test_baseline_keys_the_plain_file_whole(run_cli, tree: Path) -> None:  # type: ignore[no-untyped-def]
    wrote = run_cli("check", "--no-config", "--no-loader", "d", "--write-baseline", "bl.json")
    assert wrote.exit_code == 0, wrote.stderr
    files = {
        f["file"] for f in json.loads((tree / "bl.json").read_text())["findings"] if f["rule"] == "executable-stack"
    }
    assert files == {*PLAIN, "cp311-cp311-linux_x86_64:pkg/libexecstack.so"}
    again = run_cli("check", "--no-config", "--no-loader", "d", "--baseline", "bl.json")
    assert again.exit_code == 0, again.stdout
    (tree / "d/x.whl!z.so").unlink()  # fixed: its entry, not the others', is gone
    fixed = run_cli("check", "--no-config", "--no-loader", "--format", "json", "d", "--baseline", "bl.json")
    gone = [f["subject"] for f in json.loads(fixed.stdout)["findings"] if f["rule"] == "baseline-fixed"]
    assert "executable-stack x.whl!z.so PT_GNU_STACK" in gone
    assert all(g.split()[1] == "x.whl!z.so" for g in gone)


def test_diff_names_no_package_for_a_plain_file(run_cli, tree: Path) -> None:  # type: ignore[no-untyped-def]
    (tree / "old").mkdir()
    result = run_cli("diff", "--no-config", "--no-loader", "--format", "json", "old", "d")
    assert result.exit_code == 1, result.stderr
    new = {
        f["file"]: f["package"] for f in json.loads(result.stdout)["findings_new"] if f["rule"] == "executable-stack"
    }
    assert new == {**{name: None for name in PLAIN}, "pkg/libexecstack.so": f"d/{WHEEL}"}


def test_a_suppression_of_a_member_path_covers_members_only(run_cli, tree: Path) -> None:  # type: ignore[no-untyped-def]
    """``file = "y.so"`` covered ``d/x!y.so`` (split as if ``d/x`` were a package); a member path
    (``pkg/libexecstack.so``) still covers the wheel's member."""
    (tree / "linkaudit.toml").write_text(
        "".join(
            f'[[suppress]]\nrule = "executable-stack"\nfile = "{glob}"\nreason = "r"\n'
            for glob in ("y.so", "z.so", "s.so", "pkg/libexecstack.so")
        )
    )
    doc = json.loads(run_cli("check", "--no-loader", "--format", "json", "d").stdout)
    shown = {f["file"] for f in doc["findings"] if f["rule"] == "executable-stack" and f.get("suppressed") is None}
    assert shown == {f"d/{name}" for name in PLAIN if name != "q!r/s.so"}  # */s.so: a path below q!r
    assert any(f["rule"] == "unused-suppression" and "z.so" in f["subject"] for f in doc["findings"])
