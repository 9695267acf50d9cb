"""A baseline keys a file of an installed site by its path below the site-packages (a venv given
by its root keys ``pkg/libfoo.so``, not ``lib/python3.11/site-packages/pkg/libfoo.so``), and an
entry keyed with a wheel's target accepts the member's file in an unpacked wheel or an installed
site of that target: a baseline matches the wheel, its unpacked tree, a ``pip install --target``
site and a venv alike."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ..samplewheels import sample_write_wheel

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
LEAK = SAMPLES / "misc/libleak.so"  # an rpath-leak (error)
MANY = "cp311-cp311-manylinux_2_17_x86_64"
MUSL = "cp311-cp311-musllinux_1_2_x86_64"


def _wheel(path: Path, tag: str) -> Path:
    """``path/pkg-1.0-TAG.whl``, its ``pkg/libfoo.so`` a library with an rpath-leak."""
    path.mkdir(exist_ok=True)
    wheel = path / f"pkg-1.0-{tag}.whl"
    sample_write_wheel()(
        wheel, {"pkg/libfoo.so": LEAK.read_bytes()}, "pkg-1.0.dist-info",
        "Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n", [tag],
    )  # fmt: skip
    return wheel


def _install(wheel: Path, target: Path) -> None:
    """``pip install --no-index --no-deps --target TARGET WHEEL``, as a user installs it."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target), str(wheel)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"pip cannot install here: {done.stderr[-300:]}")


def _venv(root: Path, python: str, wheel: Path) -> Path:
    """A venv at ``root`` (``pyvenv.cfg``, as ``python -m venv`` writes it) with ``wheel`` installed
    in its ``lib/PYTHON/site-packages``; that site-packages."""
    root.mkdir()
    (root / "pyvenv.cfg").write_text(
        f"home = /usr/bin\ninclude-system-site-packages = false\nversion = {python[6:]}.0\n"
    )
    site = root / "lib" / python / "site-packages"
    _install(wheel, site)
    return site


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _check(run_cli, *args: str):  # type: ignore[no-untyped-def]
    return run_cli("check", "--no-config", "--no-cache", *args)


def test_a_wheels_baseline_accepts_its_unpacked_tree_and_installed_site(run_cli, here: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel(here / "dist", MANY)
    assert _check(run_cli, str(wheel.relative_to(here)), "--write-baseline", "bl.json").exit_code == 0
    entries = {e["file"] for e in json.loads((here / "bl.json").read_text())["findings"]}
    assert entries == {"cp311-cp311-manylinux_x86_64:pkg/libfoo.so"}
    with zipfile.ZipFile(wheel) as z:
        z.extractall(here / "unz")
    _install(wheel, here / "site")
    for tree in ("unz", "site"):
        r = _check(run_cli, tree, "--baseline", "bl.json")
        assert r.exit_code == 0, (tree, r.stdout)
        assert "baseline-fixed" not in r.stdout and "predates" not in r.stderr


def test_a_wheels_baseline_does_not_accept_a_site_of_another_target(run_cli, here: Path) -> None:  # type: ignore[no-untyped-def]
    many = _wheel(here / "dist", MANY)
    with zipfile.ZipFile(_wheel(here / "musl", MUSL)) as z:  # laid out as pip installs it (pip refuses it here)
        z.extractall(here / "site")
    assert _check(run_cli, str(many.relative_to(here)), "--write-baseline", "bl.json").exit_code == 0
    assert _check(run_cli, "site", "--baseline", "bl.json").exit_code == 1


def test_a_tree_of_unknown_target_is_accepted_by_one_targets_entry_only(run_cli, here: Path) -> None:  # type: ignore[no-untyped-def]
    _wheel(here / "dist", MANY)
    (here / "tree/pkg").mkdir(parents=True)
    shutil.copy(LEAK, here / "tree/pkg/libfoo.so")  # no .dist-info: its target is not known
    assert _check(run_cli, "dist", "--write-baseline", "one.json").exit_code == 0
    assert _check(run_cli, "tree", "--baseline", "one.json").exit_code == 0
    _wheel(here / "dist", MUSL)
    assert _check(run_cli, "dist", "--write-baseline", "two.json").exit_code == 0
    leaks = {e["file"] for e in json.loads((here / "two.json").read_text())["findings"] if e["rule"] == "rpath-leak"}
    assert leaks == {"cp311-cp311-manylinux_x86_64:pkg/libfoo.so", "cp311-cp311-musllinux_x86_64:pkg/libfoo.so"}
    assert _check(run_cli, "tree", "--baseline", "two.json").exit_code == 1  # which target's: not known


def test_a_venv_keys_its_sites_files_below_the_site_packages(run_cli, here: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel(here / "dist", MANY)
    site = _venv(here / "venv", "python3.11", wheel).relative_to(here)
    _venv(here / "venv312", "python3.12", wheel)
    _install(wheel, here / "target")
    with zipfile.ZipFile(wheel) as z:
        z.extractall(here / "unz")
    assert _check(run_cli, "venv", "--write-baseline", "bl.json").exit_code == 0
    entries = {e["file"] for e in json.loads((here / "bl.json").read_text())["findings"]}
    assert entries == {"pkg/libfoo.so"}
    for other in (str(site), "venv/lib", "target", "unz", "venv312"):
        r = _check(run_cli, other, "--baseline", "bl.json")
        assert r.exit_code == 0, (other, r.stdout)
        assert "baseline-fixed" not in r.stdout and "predates" not in r.stderr
    pairs = json.loads(run_cli("diff", "--format", "json", "--no-config", "venv", str(site)).stdout)
    assert not pairs["files_added"] and not pairs["files_removed"], pairs


def test_sarif_fingerprints_of_a_venv_and_its_site_packages_agree(run_cli, here: Path) -> None:  # type: ignore[no-untyped-def]
    from linkaudit.output.sarif import FINGERPRINT_KEY

    site = _venv(here / "venv", "python3.11", _wheel(here / "dist", MANY)).relative_to(here)

    def prints(path: str) -> set[str]:
        sarif = json.loads(_check(run_cli, "--format", "sarif", path).stdout)
        return {r["partialFingerprints"][FINGERPRINT_KEY] for r in sarif["runs"][0]["results"]}

    assert prints("venv") == prints(str(site))


def test_a_baseline_keyed_below_the_venv_root_still_accepts_and_says_to_write_it_again(run_cli, here: Path) -> None:  # type: ignore[no-untyped-def]
    _venv(here / "venv", "python3.11", _wheel(here / "dist", MANY))
    assert _check(run_cli, "venv", "--write-baseline", "bl.json").exit_code == 0
    doc = json.loads((here / "bl.json").read_text())
    assert {e["file"] for e in doc["findings"]} == {"pkg/libfoo.so"}
    for entry in doc["findings"]:  # as written before a site's files were keyed below the site-packages
        entry["file"] = "lib/python3.11/site-packages/pkg/libfoo.so"
    (here / "old.json").write_text(json.dumps(doc))
    r = _check(run_cli, "venv", "--baseline", "old.json")
    assert r.exit_code == 0, r.stdout
    assert "baseline-fixed" not in r.stdout
    assert r.stderr.count("write it again") == 1


def _conda_package(path: Path, member: str) -> Path:
    """``path/foo-1.0-py312_0.tar.bz2`` (conda's format: ``info/index.json``, ``info/files``), its
    ``member`` a library with an rpath-leak."""
    import io
    import tarfile

    path.mkdir(parents=True)
    index = {"name": "foo", "version": "1.0", "build": "py312_0", "build_number": 0, "subdir": "linux-64"}
    package = path / "foo-1.0-py312_0.tar.bz2"
    with tarfile.open(package, "w:bz2") as tar:
        for name, data in (
            ("info/index.json", json.dumps({**index, "depends": []}).encode()),
            ("info/files", f"{member}\n".encode()),
            (member, LEAK.read_bytes()),
        ):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return package


@pytest.mark.parametrize("member", ["lib/python3.12/site-packages/foo/_x.so", "lib/libfoo.so"])
def test_a_conda_prefixs_baseline_accepts_its_package_keyed_alike(run_cli, here: Path, member: str) -> None:  # type: ignore[no-untyped-def]
    """A file of a conda prefix's site-packages is keyed below it (``foo/_x.so``), and so is the
    same member of the conda package installing it: a baseline of the prefix accepts the package
    (by the entry without its build's variant, as for an unpacked tree); the prefix's other files
    (``lib/libfoo.so``) keep their path."""
    package = _conda_package(here / "linux-64", member)
    (here / "env/conda-meta").mkdir(parents=True)
    (here / "env" / member).parent.mkdir(parents=True)
    shutil.copy(LEAK, here / "env" / member)
    record = {
        "name": "foo",
        "version": "1.0",
        "build": "py312_0",
        "subdir": "linux-64",
        "depends": [],
        "files": [member],
    }
    (here / "env/conda-meta/foo-1.0-py312_0.json").write_text(json.dumps(record))
    assert _check(run_cli, "env", "--write-baseline", "bl.json").exit_code == 0
    entries = {e["file"] for e in json.loads((here / "bl.json").read_text())["findings"] if e["rule"] == "rpath-leak"}
    assert entries == {"foo/_x.so" if "site-packages" in member else member}
    r = _check(run_cli, str(package.relative_to(here)), "--baseline", "bl.json")
    assert r.exit_code == 0, r.stdout
