"""A leaked build path is keyed without its per-build parts (``baseline.build_parts_out``): the same
leak in the next build — a new CI run id, temporary directory or build image patch release — is the
baseline's finding, SARIF's alert and ``diff``'s pair; a leak into another directory is new. The
libraries: sample_bins/misc/libleak.so with its DT_RPATH string overwritten in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from linkaudit.config.baseline import build_parts_out

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
LEAK = SAMPLES / "misc/libleak.so"
#: libleak.so's DT_RPATH string, overwritten (NUL-padded) by ``_library``.
RPATH = b"/home/builder/pytorch/build/lib:/usr/local/cuda/lib64/stubs:$ORIGIN"
RULES = {"rpath-leak", "duplicate-rpath"}
OPTIONS = ("--no-config", "--no-loader")

#: (old build's DT_RPATH, new build's): the same leak, per-build parts apart.
SAME = [
    ("/__w/_temp/conda_environment_33057293360/lib", "/__w/_temp/conda_environment_36502101335/lib"),
    ("/opt/_internal/cpython-3.11.10/lib/python3.11", "/opt/_internal/cpython-3.11.13/lib/python3.11"),
    ("/tmp/pip-build-env-abc123/overlay/lib", "/tmp/pip-build-env-x9_y8z7q/overlay/lib"),
    ("/tmp/pip-req-build-k2j3l4m5/build/lib", "/tmp/pip-req-build-zz81aq_0/build/lib"),
    ("/tmp/tmpk2j3l4/build/lib", "/tmp/tmp_q8w7e6r/build/lib"),
    ("/opt/conda/conda-bld/foo_1712345678901/_build_env/lib", "/opt/conda/conda-bld/foo_1723456789012/_build_env/lib"),
    ("/tmp/tmpk2j3l4/lib:/tmp/tmpk2j3l4/lib", "/tmp/tmpa8b7c6/lib:/tmp/tmpa8b7c6/lib"),  # duplicate-rpath too
]
#: The same, but a real directory differs: another finding.
OTHER = [
    ("/__w/_temp/conda_environment_33057293360/lib", "/__w/_temp/conda_environment_33057293360/lib64"),
    ("/opt/python/cp311-cp311/lib", "/opt/python/cp312-cp312/lib"),
    ("/opt/_internal/cpython-3.11.10/lib", "/opt/_internal/cpython-3.12.1/lib"),
    ("/home/builder/a/build/lib", "/home/builder/b/build/lib"),
    ("/tmp/pip-build-env-abc123/overlay/lib", "/tmp/pip-build-env-abc123/normal/lib"),
    ("/tmp/tmpk2j3l4/lib:/tmp/tmpk2j3l4/lib", "/tmp/tmpk2j3l4/lib:/tmp/tmpk2j3l4/lib64"),
]


def _library(directory: Path, rpath: str) -> None:
    """``directory/lib/libx.so``: libleak.so, its DT_RPATH ``rpath``."""
    new = rpath.encode()
    assert len(new) <= len(RPATH)
    data = LEAK.read_bytes()
    assert data.count(RPATH) == 1
    (directory / "lib").mkdir(parents=True)
    (directory / "lib/libx.so").write_bytes(data.replace(RPATH, new + b"\0" * (len(RPATH) - len(new))))


def _builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    monkeypatch.chdir(tmp_path)
    _library(tmp_path / "old", old)
    _library(tmp_path / "new", new)


def _ours(doc: dict[str, list[dict[str, object]]]) -> list[dict[str, object]]:
    return [f for f in doc["findings"] if f["rule"] in RULES]


def _fingerprints(run_cli, build: str) -> set[tuple[str, str]]:  # type: ignore[no-untyped-def]
    doc = json.loads(run_cli("check", *OPTIONS, "--format", "sarif", build).stdout)
    return {(r["ruleId"], r["partialFingerprints"]["linkaudit/v1"]) for r in doc["runs"][0]["results"]}


def _diff(run_cli) -> tuple[list[object], list[object]]:  # type: ignore[no-untyped-def]
    doc = json.loads(run_cli("diff", *OPTIONS, "--format", "json", "old", "new").stdout)
    new = [f for f in doc["findings_new"] if f["rule"] in RULES]
    gone = [f for f in doc["findings_gone"] if f["rule"] in RULES]
    return new, gone


@pytest.mark.parametrize(("old", "new"), SAME)
def test_a_leak_differing_only_in_per_build_parts_is_the_same_finding(run_cli, tmp_path, monkeypatch, old, new) -> None:  # type: ignore[no-untyped-def]
    """The baseline of the old build accepts the new build's leak (no new error, nothing fixed),
    SARIF gives it the same fingerprint, ``diff`` pairs it; its report still shows the path as written."""
    _builds(tmp_path, monkeypatch, old, new)
    assert run_cli("check", *OPTIONS, "--write-baseline", "bl.json", "old").exit_code == 0
    r = run_cli("check", *OPTIONS, "--format", "json", "--baseline", "bl.json", "new")
    doc = json.loads(r.stdout)
    findings = _ours(doc)
    assert findings and r.exit_code == 0, r.stdout
    assert all(f.get("suppressed") for f in findings), findings
    assert not [f for f in doc["findings"] if f["rule"] == "baseline-fixed"]
    first = new.split(":")[0]
    leak = next(f for f in findings if f["rule"] == "rpath-leak")
    assert leak["subject"] == first and leak["evidence"]["entry"] == first and first in leak["message"]
    assert _fingerprints(run_cli, "old") == _fingerprints(run_cli, "new")
    assert _diff(run_cli) == ([], [])


@pytest.mark.parametrize(("old", "new"), OTHER)
def test_a_leak_into_another_directory_is_a_new_finding(run_cli, tmp_path, monkeypatch, old, new) -> None:  # type: ignore[no-untyped-def]
    """A real directory differs (lib -> lib64, cp311 -> cp312, Python 3.11 -> 3.12, a -> b): the
    baseline does not accept the new leak, SARIF's fingerprints differ, ``diff`` calls it new."""
    _builds(tmp_path, monkeypatch, old, new)
    run_cli("check", *OPTIONS, "--write-baseline", "bl.json", "old")
    doc = json.loads(run_cli("check", *OPTIONS, "--format", "json", "--baseline", "bl.json", "new").stdout)
    assert [f for f in _ours(doc) if not f.get("suppressed")]
    assert _fingerprints(run_cli, "old") != _fingerprints(run_cli, "new")
    assert _diff(run_cli)[0]


def test_a_baseline_holding_the_exact_path_still_accepts_the_leak(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A baseline written before per-build parts were left out (the subject as written) accepts that
    finding, and the next build's, read as today's keys (``baseline.load``)."""
    old, new = SAME[0]
    _builds(tmp_path, monkeypatch, old, new)
    entry = {"rule": "rpath-leak", "file": "lib/libx.so", "subject": old}
    (tmp_path / "bl.json").write_text(json.dumps({"schema": "linkaudit-baseline/1", "findings": [entry]}))
    for build in ("old", "new"):
        r = run_cli("check", *OPTIONS, "--format", "json", "--baseline", "bl.json", build)
        assert r.exit_code == 0, r.stdout
        doc = json.loads(r.stdout)
        assert all(f.get("suppressed") for f in _ours(doc)) and _ours(doc)
        assert not [f for f in doc["findings"] if f["rule"] == "baseline-fixed"]


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/__w/_temp/conda_environment_33057293360/lib", "/__w/_temp/conda_environment_*/lib"),
        ("/opt/_internal/cpython-3.11.10/lib/python3.11", "/opt/_internal/cpython-3.11.*/lib/python3.11"),
        ("/opt/_internal/cpython-3.13.0rc1/lib", "/opt/_internal/cpython-3.13.*/lib"),
        ("/usr/local/Cellar/libomp/17.0.6/lib", "/usr/local/Cellar/libomp/17.0.*/lib"),
        ("/tmp/pip-build-env-abc123/overlay/lib", "/tmp/pip-build-env-*/overlay/lib"),
        ("/tmp/tmpabcdefgh/lib", "/tmp/tmp*/lib"),  # tempfile.mkdtemp's: 8 random characters
        ("/tmp/tmp.Xa81kPq0Zr/lib", "/tmp/tmp*/lib"),  # mktemp -d's
        ("/b/_h_env_placehold_placehold_pla/lib", "/b/_h_env_placehold*/lib"),
        # what stays: short digit runs, two-number versions, names that are no temporary directory
        ("/opt/python/cp311-cp311/lib", "/opt/python/cp311-cp311/lib"),
        ("/usr/local/cuda-12.4/lib64/stubs", "/usr/local/cuda-12.4/lib64/stubs"),
        ("/opt/rh/gcc-toolset-13/root/usr/lib64", "/opt/rh/gcc-toolset-13/root/usr/lib64"),
        ("/tmp/tmpfiles/lib", "/tmp/tmpfiles/lib"),
        ("/home/pip-user/lib", "/home/pip-user/lib"),
        ("$ORIGIN/../lib", "$ORIGIN/../lib"),
        ("", ""),
    ],
)
def test_build_parts_out(path: str, key: str) -> None:
    assert build_parts_out(path) == key


def test_build_parts_out_is_linear_in_hostile_paths() -> None:
    """Long digit and dotted runs, and long would-be temporary names, in well under a second."""
    import time

    start = time.perf_counter()
    for hostile in ("1." * 50_000 + "x", "pip-" + "a-" * 50_000 + "!", "tmp" + "a" * 100_000 + "!", "9" * 100_000):
        build_parts_out(hostile)
    assert time.perf_counter() - start < 1.0
