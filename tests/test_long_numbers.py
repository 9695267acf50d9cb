"""Numbers of more than 4,300 digits, which ``int()`` refuses with a ValueError, in every place
an input or the configuration spells one: never exit 3, the rest still audited.

The kind: platform tags in a wheel's ``WHEEL`` (staged and installed), manylinux, musllinux,
macOS and abi3 forms; a conda package's ``__glibc >=``; a TOML configuration's integers (in
``linkaudit.toml``, ``--config`` and a ``pyproject.toml`` found in the working directory);
``--profile``.  Found by the hostile tester (stop 27, D1).
"""

from __future__ import annotations

import io
import json
import tarfile
import zipfile
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[1] / "sample_bins"
LEAK = SAMPLES / "misc/libleak.so"
BIG = "9" * 4301

TAGS = {
    "major": f"cp311-cp311-manylinux_{BIG}_1_x86_64",
    "minor": f"cp311-cp311-manylinux_2_{BIG}_x86_64",
    "musl": f"cp311-cp311-musllinux_1_{BIG}_x86_64",
    "macos": f"cp311-cp311-macosx_{BIG}_0_x86_64",
    "abi3": f"cp3{BIG}-abi3-manylinux_2_17_x86_64",
}
META = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"


def _wheel_file(tag: str) -> str:
    return f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n"


def _audited(run_cli, *args: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    r = run_cli("check", "--no-config", "--format", "json", *args)
    assert r.exit_code in (0, 1, 2), r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert any(f["status"] == "audited" for f in doc["files"]), doc["files"]
    return doc  # type: ignore[no-any-return]


@pytest.mark.parametrize("variant", sorted(TAGS))
def test_a_wheel_tag_of_4301_digits(run_cli, tmp_path: Path, variant: str) -> None:  # type: ignore[no-untyped-def]
    wheel = tmp_path / "demo-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo-1.0.dist-info/METADATA", META)
        zf.writestr("demo-1.0.dist-info/WHEEL", _wheel_file(TAGS[variant]))
        zf.writestr("demo-1.0.dist-info/RECORD", "")
        zf.writestr("demo/_ext.so", LEAK.read_bytes())
    _audited(run_cli, str(wheel))
    site = tmp_path / "site"
    (site / "demo-1.0.dist-info").mkdir(parents=True)
    (site / "demo").mkdir()
    (site / "demo-1.0.dist-info/METADATA").write_text(META)
    (site / "demo-1.0.dist-info/WHEEL").write_text(_wheel_file(TAGS[variant]))
    (site / "demo-1.0.dist-info/RECORD").write_text("demo/_ext.so,,\n")
    (site / "demo/_ext.so").write_bytes(LEAK.read_bytes())
    _audited(run_cli, str(site))


@pytest.mark.parametrize("spec", [f"__glibc >=2.{BIG}", f"__glibc >={BIG}.1"])
def test_a_conda_glibc_of_4301_digits(run_cli, tmp_path: Path, spec: str) -> None:  # type: ignore[no-untyped-def]
    package = tmp_path / "demo-1.0-0.tar.bz2"
    index = json.dumps({"name": "demo", "version": "1.0", "subdir": "linux-64", "depends": [spec]}).encode()
    with tarfile.open(package, "w:bz2") as tf:
        for name, data in (("lib/libleak.so", LEAK.read_bytes()), ("info/index.json", index)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    _audited(run_cli, str(package))
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "lib").mkdir()
    (prefix / "lib/libleak.so").write_bytes(LEAK.read_bytes())
    record = {"name": "demo", "version": "1.0", "build": "0", "depends": [spec], "files": ["lib/libleak.so"]}
    (prefix / "conda-meta/demo-1.0-0.json").write_text(json.dumps(record))
    _audited(run_cli, str(prefix))


@pytest.mark.parametrize("table", ["max-findings-per-file = {n}", "[severity]\nrpath-leak = {n}"])
def test_a_configuration_integer_of_4301_digits(run_cli, tmp_path: Path, monkeypatch, table: str) -> None:  # type: ignore[no-untyped-def]
    config = tmp_path / "bad.toml"
    config.write_text(table.format(n=BIG) + "\n")
    r = run_cli("check", "--config", str(config), str(LEAK))
    assert r.exit_code == 2 and "not valid TOML" in r.stderr and str(config) in r.stderr
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text(f"[project]\nname = 'x'\nversion = {BIG}\n\n[tool.linkaudit]\n")
    monkeypatch.chdir(project)
    r = run_cli("check", str(LEAK))
    assert r.exit_code == 2 and "not valid TOML" in r.stderr


def test_a_profile_of_4301_digits(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--profile", f"manylinux_{BIG}_1_x86_64", str(LEAK))
    assert r.exit_code == 2 and "internal error" not in r.stderr
