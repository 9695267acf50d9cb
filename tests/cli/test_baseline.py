"""``check --write-baseline`` / ``--baseline``: fail only on new findings, list the fixed ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from linkaudit.config.baseline import relative_file

from ..output.schema import validate_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


@pytest.fixture
def builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``old/`` (a copy of sample_bins/misc) and ``new/`` (libleak.so gone, broken/libtorch_cuda.so added)."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SAMPLES / "misc", tmp_path / "old")
    shutil.copytree(SAMPLES / "misc", tmp_path / "new")
    (tmp_path / "new/libleak.so").unlink()
    shutil.copy(SAMPLES / "broken/libtorch_cuda.so", tmp_path / "new")
    return tmp_path


def test_baseline_accepts_recorded_findings(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check", "--no-loader", "old").exit_code == 1
    wrote = run_cli("check", "--no-loader", "old", "--write-baseline", "bl.json")
    assert wrote.exit_code == 0
    doc = json.loads((builds / "bl.json").read_text())
    assert doc["schema"] == "linkaudit-baseline/1"
    keys = {(f["rule"], f["file"], f["subject"]) for f in doc["findings"]}
    assert ("rpath-leak", "libleak.so", "/usr/local/cuda/lib64/stubs") in keys
    assert ("driver-link", "libuses_driver.so", "libcuda.so.1") in keys
    assert not any(f["file"].startswith(("old/", "/")) for f in doc["findings"])
    again = run_cli("check", "--no-loader", "old", "--baseline", "bl.json")
    assert again.exit_code == 0, again.stdout
    assert "0 errors, 0 warnings" in again.stdout and "suppressed" in again.stdout


def test_baseline_fails_on_new_findings_and_lists_fixed_ones(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    run_cli("check", "--no-loader", "old", "--write-baseline", "bl.json")
    r = run_cli("check", "--no-loader", "--format", "json", "new", "--baseline", "bl.json")
    assert r.exit_code == 1
    doc = json.loads(r.stdout)
    validate_report(doc)
    live = [f for f in doc["findings"] if "suppressed" not in f and f["severity"] == "error"]
    assert {(f["rule"], f["file"]) for f in live} == {
        ("driver-link", "new/libtorch_cuda.so"),
        ("missing-provider", "new/libtorch_cuda.so"),
    }
    fixed = {
        (f["evidence"]["rule"], f["evidence"]["subject"]) for f in doc["findings"] if f["rule"] == "baseline-fixed"
    }
    assert ("rpath-leak", "/home/builder/pytorch/build/lib") in fixed
    assert all(f["file"] == "bl.json" for f in doc["findings"] if f["rule"] == "baseline-fixed")
    assert doc["config"]["baseline"] == ["bl.json"]


def test_rewriting_with_a_baseline_keeps_accepted_findings(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    run_cli("check", "--no-loader", "old", "--write-baseline", "bl.json")
    first = (builds / "bl.json").read_text()
    assert (
        run_cli("check", "--no-loader", "old", "--baseline", "bl.json", "--write-baseline", "bl2.json").exit_code == 0
    )
    assert (builds / "bl2.json").read_text() == first


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not a JSON document"),
        ('{"schema": "other", "findings": []}', "not a linkaudit baseline"),
        ('{"schema": "linkaudit-baseline/1", "findings": [{"rule": 1}]}', "findings[0]"),
    ],
)
def test_bad_baseline_is_a_usage_error(run_cli, builds: Path, content: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (builds / "bl.json").write_text(content)
    r = run_cli("check", "--no-loader", "old", "--baseline", "bl.json")
    assert r.exit_code == 2
    assert "bl.json" in r.stderr and message in r.stderr and "Traceback" not in r.stderr


def test_write_baseline_never_over_an_input(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    before = (builds / "old/libabs.so").read_bytes()
    r = run_cli("check", "--no-loader", "old", "--write-baseline", "old/libabs.so")
    assert r.exit_code == 2 and "refusing to overwrite an input" in r.stderr
    assert (builds / "old/libabs.so").read_bytes() == before


def test_relative_file() -> None:
    assert relative_file("torch/lib/libc10.so", ["torch"], frozenset()) == "lib/libc10.so"
    assert relative_file("torch/lib/libc10.so", ["torch/"], frozenset()) == "lib/libc10.so"
    assert relative_file("/abs/x/libc10.so", ["/abs/x/libc10.so"], frozenset()) == "libc10.so"
    assert relative_file("torchvision/x.so", ["torch"], frozenset()) == "torchvision/x.so"
    assert relative_file("libcuda.so.1", ["torch"], frozenset()) == "libcuda.so.1"
    # only a staged package's member is PACKAGE!member; a "!" in a plain file's name is its name's
    assert relative_file("d/x.whl!pkg/a.so", ["d"], frozenset({"d/x.whl"})) == "pkg/a.so"
    assert relative_file("d/x.whl!pkg/a.so", ["d"], frozenset()) == "x.whl!pkg/a.so"


@pytest.mark.parametrize(
    ("target", "message"),
    [(".", "--write-baseline .: is a directory"), ("nodir/bl.json", "--write-baseline nodir/bl.json: cannot write")],
)
def test_write_baseline_errors_name_the_option(run_cli, builds: Path, target: str, message: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-loader", "old", "--write-baseline", target)
    assert r.exit_code == 2 and message in r.stderr, r.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (('{"a":' + " " * 40) * 5000 + "1" + "}" * 5000, "nested too deeply"),
        # padding parsed at ~60 bytes an array: 63 MiB took 1.72 GB; refused before parsing
        (
            '{"schema": "linkaudit-baseline/1", "findings": [], "pad": [' + "[]," * 50_000 + "[]]}",
            "more than its entries make",
        ),
        ('{"schema": "linkaudit-baseline/1", "findings": [' + "{}," * 50_000 + "{}]}", "more than its entries make"),
        ("[" * 100_000, "more than its entries make"),
        (
            '{"schema": "linkaudit-baseline/1", "findings": [{"rule": "nosuch", "file": "a", "subject": "b"}]}',
            "is no rule",
        ),
        (
            '{"schema": "linkaudit-baseline/1", "findings": [{"rule": "unreadable-input", "file": "a", "subject": "a"}]}',
            "cannot be baselined",
        ),
    ],
)
def test_hostile_baseline(run_cli, builds: Path, content: str, message: str) -> None:  # type: ignore[no-untyped-def]
    (builds / "bl.json").write_text(content)
    r = run_cli("check", "--no-loader", "old", "--baseline", "bl.json")
    assert r.exit_code == 2 and message in r.stderr, r.stderr


@pytest.mark.parametrize("special", ["/dev/zero", "."])
def test_baseline_must_be_a_regular_file(run_cli, builds: Path, special: str) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-loader", "old", "--baseline", special)
    assert r.exit_code == 2 and "not a regular file" in r.stderr


def test_empty_baseline_name_is_an_error(run_cli, builds: Path) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-loader", "old", "--baseline", "")
    assert r.exit_code == 2 and "--baseline : " in r.stderr


def _baseline_of_old_matches_new(run_cli, tmp_path: Path, name: str, digests: tuple[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Builds ``old`` and ``new`` (in the working directory ``tmp_path``) vendoring libleak.so as
    ``pkg.libs/<name>``, ``{}`` the release's hash: ``old`` fails; its baseline names the file with
    the hash written ``-*``; ``new`` checked against it passes, nothing said fixed."""
    leak = (SAMPLES / "misc/libleak.so").read_bytes()
    for build, digest in zip(("old", "new"), digests, strict=True):
        (tmp_path / build / "pkg.libs").mkdir(parents=True)
        (tmp_path / build / "pkg.libs" / name.format(digest)).write_bytes(leak)
    assert run_cli("check", "--no-loader", "old").exit_code == 1
    run_cli("check", "--no-loader", "old", "--write-baseline", "bl.json")
    files = {f["file"] for f in json.loads((tmp_path / "bl.json").read_text())["findings"]}
    assert files == {f"pkg.libs/{name.format('*')}"}
    again = run_cli("check", "--no-loader", "--format", "json", "new", "--baseline", "bl.json")
    assert again.exit_code == 0, again.stdout
    assert not [f for f in json.loads(again.stdout)["findings"] if f["rule"] == "baseline-fixed"]


def test_a_baseline_matches_the_next_release_of_vendored_libraries(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """auditwheel names a vendored library by its content hash (``libleak-0a1b2c3d.so``), which
    changes with each release: the baseline leaves it out, in files and in subjects, and an
    entry written with a hash before still matches."""
    monkeypatch.chdir(tmp_path)
    _baseline_of_old_matches_new(run_cli, tmp_path, "libleak-{}.so", ("0a1b2c3d", "fdde5778"))
    # a baseline written before hashes were left out
    doc = json.loads((tmp_path / "bl.json").read_text())
    for f in doc["findings"]:
        f["file"] = f["file"].replace("-*", "-0a1b2c3d")
    (tmp_path / "old.json").write_text(json.dumps(doc))
    assert run_cli("check", "--no-loader", "new", "--baseline", "old.json").exit_code == 0


def _build(directory: Path, missing: tuple[str, ...]) -> None:
    """``directory``: libuser.so importing ``missing`` from libdep.so (RUNPATH $ORIGIN), which exports none of them."""
    from ..loader.dagbuild import Lib, write

    directory.mkdir(exist_ok=True)
    for old in directory.iterdir():
        old.unlink()
    write(
        str(directory),
        [
            Lib("libdep.so", "libdep.so", exports=("other",)),
            Lib("libuser.so", "libuser.so", ("libdep.so",), runpath=("$ORIGIN",), exports=("use",), imports=missing),
        ],
    )


def test_new_unresolved_symbols_are_not_baselined_by_their_count(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A baseline of the build that left foo and bar unresolved does not accept the build that
    leaves baz and qux unresolved (both findings say "2 undefined symbols"; dlopen fails on baz):
    each symbol is a fingerprint of its own; one fixed is a baseline-fixed note, one added names
    itself; SARIF alerts tell them apart too."""
    monkeypatch.chdir(tmp_path)
    _build(tmp_path / "build", ("foo", "bar"))
    assert run_cli("check", "--no-config", "build", "--write-baseline", "bl.json").exit_code == 0
    keys = {(f["rule"], f["subject"]) for f in json.loads((tmp_path / "bl.json").read_text())["findings"]}
    assert {("unresolved-symbol", "foo"), ("unresolved-symbol", "bar")} <= keys
    before = run_cli("check", "--no-config", "build", "--format", "sarif").stdout
    assert run_cli("check", "--no-config", "build", "--baseline", "bl.json").exit_code == 0

    _build(tmp_path / "build", ("baz", "qux"))
    again = run_cli("check", "--no-config", "build", "--baseline", "bl.json", "--format", "json")
    assert again.exit_code == 1, again.stdout
    findings = json.loads(again.stdout)["findings"]
    errors = [f for f in findings if f["rule"] == "unresolved-symbol" and not f.get("suppressed")]
    assert len(errors) == 1 and errors[0]["evidence"]["symbols"] == ["baz", "qux"]
    fixed = {f["subject"] for f in findings if f["rule"] == "baseline-fixed"}
    assert {"unresolved-symbol libuser.so foo", "unresolved-symbol libuser.so bar"} <= fixed
    after = run_cli("check", "--no-config", "build", "--format", "sarif").stdout

    def prints(sarif: str) -> list[object]:
        results = json.loads(sarif)["runs"][0]["results"]
        return [r["partialFingerprints"] for r in results if r["ruleId"] == "unresolved-symbol"]

    assert prints(before) and prints(before) != prints(after)

    _build(tmp_path / "build", ("foo", "baz"))  # bar fixed, baz new: reported, naming baz
    mixed = json.loads(run_cli("check", "--no-config", "build", "--baseline", "bl.json", "--format", "json").stdout)
    error = [f for f in mixed["findings"] if f["rule"] == "unresolved-symbol" and not f.get("suppressed")]
    assert len(error) == 1 and error[0]["message"].endswith("(not in the baseline: baz)")
    _build(tmp_path / "build", ("foo",))  # bar fixed: accepted
    assert run_cli("check", "--no-config", "build", "--baseline", "bl.json").exit_code == 0


def test_a_counted_subject_of_an_older_baseline_accepts_nothing(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A baseline written before symbols were keyed one by one says "2 symbols": it matches nothing
    now (which two it meant is not recorded), so the finding is reported until it is written again."""
    monkeypatch.chdir(tmp_path)
    _build(tmp_path / "build", ("baz", "qux"))
    entry = {"rule": "unresolved-symbol", "file": "libuser.so", "subject": "2 symbols"}
    (tmp_path / "bl.json").write_text(json.dumps({"schema": "linkaudit-baseline/1", "findings": [entry]}))
    flags = (
        "--no-config",
        "--ignore",
        "executable-stack",
        "--format",
        "json",
    )  # the generator's files have no PT_GNU_STACK
    result = run_cli("check", *flags, "build", "--baseline", "bl.json")
    assert result.exit_code == 1
    findings = json.loads(result.stdout)["findings"]
    assert [f.get("suppressed") for f in findings if f["rule"] == "unresolved-symbol"] == [None]
    assert not [f for f in findings if f["rule"] == "baseline-fixed"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "html", "jsonl"])
def test_a_baseline_entry_of_lone_surrogates_is_reported_in_every_format(run_cli, tmp_path: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    """``"\\ud800"`` is valid JSON; a baseline entry holding it (and ``"\\udc80"``, an undecodable
    name byte) is a baseline-fixed note in every format: SARIF's fingerprint had died encoding it (exit 3)."""
    entries = [{"rule": "rpath-leak", "file": "x", "subject": s} for s in ("\ud800", "\udc80")]
    (tmp_path / "bl.json").write_text(json.dumps({"schema": "linkaudit-baseline/1", "findings": entries}))
    result = run_cli(
        "check", "--no-config", "--no-loader", "--baseline", str(tmp_path / "bl.json"), "--format", fmt,
        str(SAMPLES / "fixed/libnvrtc.so.12"),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    if fmt in ("json", "sarif"):
        json.loads(result.stdout)


def test_a_baseline_and_sarif_fingerprints_match_when_the_hash_sits_mid_name(run_cli, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """auditwheel writes its hash after the name's part before the first dot: numpy's OpenBLAS is
    ``libopenblas64_p-r0-5007b62f.3.23.dev.so`` in 1.25.2, ``-0cf96a72.`` in 1.26.4. The hash kept,
    a baseline for one release reported the next one's finding as new (and the old as fixed), and
    SARIF fingerprints differed."""
    from linkaudit.output.sarif import FINGERPRINT_KEY

    monkeypatch.chdir(tmp_path)
    _baseline_of_old_matches_new(run_cli, tmp_path, "libopenblas64_p-r0-{}.3.23.dev.so", ("5007b62f", "0cf96a72"))

    def prints(build: str) -> set[str]:
        sarif = json.loads(run_cli("check", "--no-loader", "--format", "sarif", build).stdout)
        return {r["partialFingerprints"][FINGERPRINT_KEY] for r in sarif["runs"][0]["results"]}

    assert prints("old") == prints("new")


def test_streamed_jsonl_lines_carry_the_baselines_suppression(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """``--format jsonl --baseline``: the summary counted the baselined findings as suppressed,
    but every finding line (written as its installation finished) looked like a live error, so a
    consumer of the lines could not use a baseline. Each line is now marked as the JSON report
    marks it; a symbol the baseline does not hold is named on its line."""
    monkeypatch.chdir(tmp_path)
    inputs = [str(SAMPLES / "wheels/dist"), str(SAMPLES / "broken")]
    assert "wrote" in run_cli("check", "--no-config", "--write-baseline", "bl.json", *inputs).stderr
    common = ("check", "--no-config", "--baseline", "bl.json", *inputs)
    whole = json.loads(run_cli(*common, "--format", "json").stdout)
    lines = [json.loads(ln) for ln in run_cli(*common, "--format", "jsonl").stdout.splitlines()]
    streamed = sorted((d["order"], d["rule"], d["file"], d.get("suppressed")) for d in lines if d["type"] == "finding")
    assert streamed and all(s is not None for *_x, s in streamed), streamed
    keyed = sorted((f["rule"], f["file"], f.get("suppressed")) for f in whole["findings"])
    assert sorted((r, f, s) for _o, r, f, s in streamed) == keyed
    assert lines[-1]["summary"]["suppressed"] == len(streamed)


@pytest.mark.parametrize("same", ["bl.json", "./bl.json", "link.json"])
def test_a_baseline_is_updated_in_place(run_cli, builds: Path, same: str) -> None:  # type: ignore[no-untyped-def]
    """``--baseline bl.json --write-baseline bl.json`` (by another name or a symlink too) was refused as
    "refusing to overwrite an input": updating a baseline in place is the normal workflow (it is
    read before the new one is written). Every other input stays protected."""
    assert run_cli("check", "--no-loader", "old", "--write-baseline", "bl.json").exit_code == 0
    (builds / "link.json").symlink_to("bl.json")
    r = run_cli("check", "--no-loader", "new", "--baseline", "bl.json", "--write-baseline", same)
    assert r.exit_code == 0 and "refusing" not in r.stderr, r.stderr
    doc = json.loads((builds / "bl.json").read_text())
    keys = {(f["rule"], f["file"]) for f in doc["findings"]}
    assert ("driver-link", "libtorch_cuda.so") in keys and ("rpath-leak", "libleak.so") not in keys
    assert run_cli("check", "--no-loader", "new", "--baseline", "bl.json").exit_code == 0
    before = (builds / "bl.json").read_bytes()
    report = run_cli("check", "--no-loader", "new", "--baseline", "bl.json", "--output", same)
    assert report.exit_code == 2 and "refusing to overwrite an input" in report.stderr  # the report: never
    over_input = run_cli("check", "--no-loader", "new", "--baseline", "bl.json", "--write-baseline", "new/libabs.so")
    assert over_input.exit_code == 2 and "refusing to overwrite an input" in over_input.stderr
    assert (builds / "bl.json").read_bytes() == before
