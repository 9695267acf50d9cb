"""``--format sarif``: valid against the official SARIF 2.1.0 schema, with rule metadata,
repository-relative locations, stable partial fingerprints and suppressions."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from realsite import cache_root

from .sarif_schema import fetch_sarif_schema

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


@pytest.fixture(scope="session")
def sarif_schema() -> dict[str, Any]:
    """The pinned SARIF 2.1.0 schema; skips where pip cannot fetch it, except in CI (then fails)."""
    schema, why = fetch_sarif_schema(cache_root() / "sarif")
    if schema is None:
        if os.environ.get("CI"):
            pytest.fail(f"the SARIF 2.1.0 schema could not be fetched in CI: {why}")
        pytest.skip(f"the SARIF 2.1.0 schema is not available offline: {why}")
    return schema


def _validate(doc: dict[str, Any], schema: dict[str, Any]) -> None:
    jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER).validate(doc)


@pytest.fixture
def in_repo(monkeypatch: pytest.MonkeyPatch) -> Path:
    """The working directory is the repository root, as in a CI job."""
    root = SAMPLES.parent
    monkeypatch.chdir(root)
    return root


def _sarif(run_cli, *args: str) -> tuple[int, dict[str, Any]]:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--no-config", "--format", "sarif", *args)
    return r.exit_code, json.loads(r.stdout)


def test_sample_bins_validate_against_the_official_schema(run_cli, in_repo: Path, sarif_schema) -> None:  # type: ignore[no-untyped-def]
    code, doc = _sarif(run_cli, "--max-version", "GLIBC_2.17", "sample_bins")
    assert code == 2  # sample_bins/corrupt: unreadable inputs
    _validate(doc, sarif_schema)
    (run,) = doc["runs"]
    assert run["invocations"] == [{"executionSuccessful": False}]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert len(ids) == len(set(ids)) and {"driver-link", "missing-provider", "unreadable-input"} <= set(ids)
    driver = rules[ids.index("driver-link")]
    assert driver["defaultConfiguration"] == {"level": "error"}
    assert driver["shortDescription"]["text"] and "libcuda.so.1" in driver["help"]["text"]
    results = run["results"]
    assert {r["ruleId"] for r in results} >= {"driver-link", "missing-provider", "symbol-version", "unreadable-input"}
    for r in results:
        assert ids[r["ruleIndex"]] == r["ruleId"]
        assert r["level"] in {"error", "warning", "note"}
        loc = r["locations"][0]["physicalLocation"]["artifactLocation"]
        assert loc["uriBaseId"] == "%SRCROOT%" and loc["uri"].startswith("sample_bins/"), loc
    seed = [
        r
        for r in results
        if r["ruleId"] == "driver-link" and r["properties"]["file"].endswith("broken/libtorch_cuda.so")
    ]
    assert seed and seed[0]["locations"][0]["logicalLocations"] == [{"name": "libcuda.so.1"}]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == in_repo.as_uri() + "/"


def test_the_schema_is_strict_enough_to_fail(run_cli, in_repo: Path, sarif_schema) -> None:  # type: ignore[no-untyped-def]
    """The validation above can fail: a wrong level or a missing message is rejected."""
    _, doc = _sarif(run_cli, "sample_bins/broken")
    for mutate in (
        lambda d: d["runs"][0]["results"][0].update(level="fatal"),
        lambda d: d["runs"][0]["results"][0].pop("message"),
        lambda d: d.update(version="2.0.0"),
    ):
        bad = copy.deepcopy(doc)
        mutate(bad)
        with pytest.raises(jsonschema.ValidationError):
            _validate(bad, sarif_schema)


def test_fingerprints_do_not_depend_on_where_the_build_sits(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The same build audited from two checkouts, through paths spelled differently, keeps each
    alert's partial fingerprint (rule, file relative to the input, subject)."""
    first = tmp_path / "a" / "checkout"
    second = tmp_path / "elsewhere"
    for where in (first, second):
        shutil.copytree(SAMPLES / "broken", where / "build")
    monkeypatch.chdir(first)
    _, one = _sarif(run_cli, "build")
    monkeypatch.chdir(tmp_path)
    _, two = _sarif(run_cli, str(second / "build"))

    def prints(doc: dict[str, Any]) -> list[tuple[str, str]]:
        return sorted((r["ruleId"], r["partialFingerprints"]["linkaudit/v1"]) for r in doc["runs"][0]["results"])

    assert prints(one) == prints(two) and len(prints(one)) >= 2
    # Below the working directory: relative; elsewhere: an absolute file URI without a base.
    loc_one = one["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    loc_two = two["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc_one == {"uri": "build/libtorch_cuda.so", "uriBaseId": "%SRCROOT%"}
    assert loc_two == {"uri": "elsewhere/build/libtorch_cuda.so", "uriBaseId": "%SRCROOT%"}
    monkeypatch.chdir(first)
    _, three = _sarif(run_cli, str(second / "build"))
    loc_three = three["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc_three == {"uri": (second / "build" / "libtorch_cuda.so").as_uri()}


def test_suppressed_findings_carry_their_justification(run_cli, tmp_path: Path, monkeypatch, sarif_schema) -> None:  # type: ignore[no-untyped-def]
    shutil.copytree(SAMPLES / "broken", tmp_path / "broken")
    (tmp_path / "linkaudit.toml").write_text(
        '[[suppress]]\nrule = "driver-link"\nfile = "broken/*"\nreason = "dlopen()ed only on GPU hosts"\n'
    )
    monkeypatch.chdir(tmp_path)
    r = run_cli("check", "--format", "sarif", "broken")
    doc = json.loads(r.stdout)
    _validate(doc, sarif_schema)
    results = doc["runs"][0]["results"]
    (driver,) = [x for x in results if x["ruleId"] == "driver-link"]
    assert driver["suppressions"] == [{"kind": "external", "justification": "dlopen()ed only on GPU hosts"}]
    assert all("suppressions" not in x for x in results if x["ruleId"] != "driver-link")
    assert r.exit_code == 1  # missing-provider is still an error; the exit status is the text format's


def test_bad_bytes_in_names_stay_valid_json(run_cli, tmp_path: Path, monkeypatch, sarif_schema) -> None:  # type: ignore[no-untyped-def]
    name = os.fsdecode(b"lib\xff\n.so")
    shutil.copy(SAMPLES / "broken" / "libtorch_cuda.so", tmp_path / name)
    monkeypatch.chdir(tmp_path)
    r = run_cli("check", "--no-config", "--format", "sarif", ".")
    text = r.stdout
    text.encode("utf-8")  # no lone surrogates
    doc = json.loads(text)
    _validate(doc, sarif_schema)
    uris = {x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for x in doc["runs"][0]["results"]}
    assert uris == {"lib%FF%0A.so"}


def test_package_members_are_located_at_their_package(run_cli, tmp_path: Path, monkeypatch, sarif_schema) -> None:  # type: ignore[no-untyped-def]
    import zipfile

    monkeypatch.chdir(tmp_path)
    (tmp_path / "dist").mkdir()
    with zipfile.ZipFile(tmp_path / "dist/pkg-1.0-py3-none-linux_x86_64.whl", "w") as zf:
        zf.write(SAMPLES / "broken/libtorch_cuda.so", "pkg/lib/libtorch_cuda.so")
    _, doc = _sarif(run_cli, "dist/pkg-1.0-py3-none-linux_x86_64.whl")
    _validate(doc, sarif_schema)
    result = doc["runs"][0]["results"][0]
    location = result["locations"][0]
    assert location["physicalLocation"]["artifactLocation"] == {
        "uri": "dist/pkg-1.0-py3-none-linux_x86_64.whl",
        "uriBaseId": "%SRCROOT%",
    }
    assert {"name": "pkg/lib/libtorch_cuda.so", "kind": "module"} in location["logicalLocations"]
    assert result["properties"]["file"] == "dist/pkg-1.0-py3-none-linux_x86_64.whl!pkg/lib/libtorch_cuda.so"
