"""Where packagers already are (issue 11 §4): the pre-commit hook and the GitHub Action.

``.pre-commit-hooks.yaml`` is run for real with ``pre-commit try-repo`` on scratch git repositories
holding sample binaries: pre-commit installs this repository (``language: python``) from the local
package index and the hook must fail on the seed bug, pass on its fix, and leave other staged files
alone. ``action.yml`` is validated against the published GitHub Actions schema (SchemaStore's, as
``check-jsonschema`` vendors it), its inputs and steps are checked, and its install and audit steps
are run with bash as a runner would run them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .tools import require

yaml = pytest.importorskip("yaml", reason="needs PyYAML (pip install '.[test]')")

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bins"
ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
INPUTS = {"paths", "config", "format", "output", "fail-on", "args", "upload-sarif", "category", "python"}


def _action() -> dict[str, Any]:
    doc = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


def _step(step_id: str) -> dict[str, Any]:
    return next(s for s in _action()["runs"]["steps"] if s.get("id") == step_id)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run([require("git"), *args], cwd=cwd, check=True, capture_output=True)


def _scratch_repo(path: Path, files: dict[str, Path | bytes]) -> Path:
    """A new git repository at PATH with FILES (name -> sample to copy, or bytes) staged."""
    path.mkdir()
    _git("init", "-q", cwd=path)
    for name, content in files.items():
        if isinstance(content, Path):
            shutil.copyfile(content, path / name)
        else:
            (path / name).write_bytes(content)
    _git("add", ".", cwd=path)
    return path


def _clean_git_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(extra)
    return env


# -- the pre-commit hook ---------------------------------------------------------------------


def test_the_hook_manifest_is_valid_and_selects_loadable_binaries() -> None:
    clientlib = pytest.importorskip("pre_commit.clientlib", reason="needs pre-commit (pip install '.[test]')")
    (hook,) = clientlib.load_manifest(str(HOOKS))
    assert hook["id"] == "linkaudit" and hook["language"] == "python"
    assert hook["entry"].split()[:2] == ["linkaudit", "check"] and hook["require_serial"] is True
    assert hook["types"] == ["binary"]
    selects = re.compile(hook["files"])
    for name in (
        "libc10.so",
        "libnvrtc.so.12",
        "lib/libcudart.so.13.0.96",
        "libomp.dylib",
        "torch_cpu.dll",
        "_C.cp311-win_amd64.pyd",
        "LIBFOO.DLL",
    ):
        assert selects.search(name), name
    for name in ("logo.png", "README.md", "setup.so.py", "libfoo.a", "data.sonar"):
        assert not selects.search(name), name


@pytest.fixture(scope="module")
def try_repo(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """Run ``pre-commit try-repo ROOT linkaudit`` in a scratch repository; one pre-commit home per module."""
    pytest.importorskip("pre_commit", reason="needs pre-commit (pip install '.[test]')")
    if subprocess.run([require("git"), "-C", str(ROOT), "rev-parse"], capture_output=True).returncode != 0:
        pytest.skip(f"{ROOT} is not a git checkout: pre-commit try-repo clones it")
    home = tmp_path_factory.mktemp("pre-commit-home")

    def run(repo: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "linkaudit", "--color", "never"],
            cwd=repo,
            env=_clean_git_env(PRE_COMMIT_HOME=str(home)),
            capture_output=True,
            text=True,
            timeout=900,
        )

    return run


def test_the_hook_fails_on_the_staged_seed_bug(try_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _scratch_repo(
        tmp_path / "repo",
        {
            "libtorch_cuda.so": SAMPLES / "broken" / "libtorch_cuda.so",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01",  # binary, not a library: never given to linkaudit
            "notes.txt": b"text\n",
        },
    )
    result = try_repo(repo)
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "[driver-link] libcuda.so.1" in out and "[missing-provider] libnvrtc.so*" in out
    assert "logo.png" not in out and "notes.txt" not in out and "unreadable-input" not in out


def test_the_hook_passes_the_fixed_twin(try_repo, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    repo = _scratch_repo(
        tmp_path / "repo",
        {
            "libtorch_cuda.so": SAMPLES / "fixed" / "libtorch_cuda.so",
            "libnvrtc.so.12": SAMPLES / "fixed" / "libnvrtc.so.12",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01",
        },
    )
    result = try_repo(repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"linkaudit \(shared-library linkage\)\.+Passed", result.stdout), result.stdout


# -- the GitHub Action -----------------------------------------------------------------------


def _check_action_schema(path: Path) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("check_jsonschema", reason="needs check-jsonschema (pip install '.[test]')")
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-actions", str(path)],
        capture_output=True,
        text=True,
    )


def test_the_action_validates_against_the_published_schema(tmp_path: Path) -> None:
    result = _check_action_schema(ACTION)
    assert result.returncode == 0, result.stdout + result.stderr
    broken = _action()
    broken["runs"]["using"] = "composite-ish"  # the schema must be able to say no
    (tmp_path / "action.yml").write_text(yaml.safe_dump(broken), encoding="utf-8")
    assert _check_action_schema(tmp_path / "action.yml").returncode == 1


def test_the_action_inputs() -> None:
    inputs = _action()["inputs"]
    assert set(inputs) == INPUTS
    assert inputs["paths"]["required"] is True
    assert all(inputs[name].get("required", False) is False for name in INPUTS - {"paths"})
    assert inputs["format"]["default"] == "sarif" and inputs["fail-on"]["default"] == "error"
    assert all(inputs[name]["description"].strip() for name in INPUTS)


def test_the_action_steps_install_this_project_audit_and_upload() -> None:
    action = _action()
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    assert [s.get("id") or s.get("uses", "").split("@")[0] or "fail" for s in steps] == [
        "install",
        "audit",
        "github/codeql-action/upload-sarif",
        "fail",
    ]
    install, audit, upload, fail = steps
    assert install["env"]["ACTION_PATH"] == "${{ github.action_path }}"
    assert 'pip install --quiet --disable-pip-version-check "$ACTION_PATH"' in install["run"]
    assert '"$LINKAUDIT_BIN/linkaudit" check --format "$INPUT_FORMAT"' in audit["run"]
    assert upload["with"]["sarif_file"] == "${{ steps.audit.outputs.report }}"
    assert "always()" in upload["if"] and "inputs.format == 'sarif'" in upload["if"]
    assert "steps.audit.outputs.exit-code == '1'" in fail["if"] and "inputs.fail-on == 'error'" in fail["if"]
    # inputs reach the scripts through the environment, never spliced into the script text
    assert all("${{" not in s.get("run", "") for s in steps)
    used = set(re.findall(r"inputs\.([a-z-]+)", ACTION.read_text(encoding="utf-8")))
    assert used == INPUTS, used ^ INPUTS


def _run_step(step_id: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run one step's script as a GitHub runner does (``bash --noprofile --norc -eo pipefail``)."""
    script = cwd / f"{step_id}.sh"
    script.write_text(_step(step_id)["run"], encoding="utf-8")
    return subprocess.run(
        [require("bash"), "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=900,
    )


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line)


@pytest.fixture
def audit_step(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Run the action's audit step in TMP_PATH (samples copied in) with the given inputs."""
    require("bash")
    linkaudit = Path(sys.executable).with_name("linkaudit")
    if not linkaudit.exists():
        pytest.skip(f"no linkaudit script beside {sys.executable} (pip install '.[test]')")
    for name in ("broken", "fixed"):
        shutil.copytree(SAMPLES / name, tmp_path / name)

    def run(**inputs: str) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
        gh_out = tmp_path / "github_output"
        gh_out.write_text("")
        env = {
            "LINKAUDIT_BIN": str(linkaudit.parent),
            "GITHUB_OUTPUT": str(gh_out),
            "INPUT_CONFIG": "",
            "INPUT_FORMAT": "sarif",
            "INPUT_OUTPUT": "",
            "INPUT_FAIL_ON": "error",
            "INPUT_ARGS": "--no-config",
        }
        env.update({f"INPUT_{k.upper()}": v for k, v in inputs.items()})
        result = _run_step("audit", env, tmp_path)
        return result, _outputs(gh_out)

    return run


def test_the_audit_step_writes_sarif_and_leaves_failing_to_the_last_step(audit_step, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result, out = audit_step(paths="broken/*.so")  # a glob, as in wheelhouse/*.whl
    assert result.returncode == 0, result.stderr  # the upload comes first; the last step fails the job
    assert out == {"exit-code": "1", "report": "linkaudit.sarif"}
    sarif = json.loads((tmp_path / "linkaudit.sarif").read_text(encoding="utf-8"))
    assert sarif["version"] == "2.1.0"
    assert {r["ruleId"] for r in sarif["runs"][0]["results"]} == {"driver-link", "missing-provider"}
    result, out = audit_step(paths="fixed")
    assert result.returncode == 0 and out["exit-code"] == "0"


def test_the_audit_step_fails_itself_on_unreadable_input_and_bad_inputs(audit_step) -> None:  # type: ignore[no-untyped-def]
    result, out = audit_step(paths="fixed no-such-dir")
    assert result.returncode == 2 and out["exit-code"] == "2"
    result, out = audit_step(paths="fixed", fail_on="sometimes")
    assert result.returncode == 2 and "fail-on must be error or never" in result.stdout and out == {}


def test_the_audit_step_formats_for_the_log(audit_step) -> None:  # type: ignore[no-untyped-def]
    result, out = audit_step(paths="broken", format="github")
    assert out == {"exit-code": "1"}  # no report file: the workflow commands went to the log
    assert "::error file=broken/libtorch_cuda.so" in result.stdout
    result, out = audit_step(paths="broken", format="json", output="report.json", args="--no-config --no-loader")
    assert out == {"exit-code": "1", "report": "report.json"}


def test_the_install_step_installs_this_project(tmp_path: Path) -> None:
    """The install step, as a runner runs it, on a copy of this checkout (pip builds in the tree it gets)."""
    require("bash")
    src = tmp_path / "action"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(".git", ".venv", "venv", "build", "*.egg-info", "__pycache__", ".*_cache"),
    )
    gh_out = tmp_path / "github_output"
    gh_out.write_text("")
    env = {
        "ACTION_PATH": str(src),
        "PYTHON": sys.executable,
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_OUTPUT": str(gh_out),
    }
    result = _run_step("install", env, tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    bin_dir = Path(_outputs(gh_out)["bin"])
    assert bin_dir == tmp_path / "linkaudit-venv" / "bin"
    shown = subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "show", "native-linkage-auditor"], capture_output=True, text=True
    )
    assert shown.returncode == 0 and "Name: native-linkage-auditor" in shown.stdout
    version = subprocess.run([str(bin_dir / "linkaudit"), "--version"], capture_output=True, text=True)
    assert version.returncode == 0 and version.stdout.startswith("linkaudit, version")
