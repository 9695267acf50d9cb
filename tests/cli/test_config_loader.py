"""Loader options in the configuration file (``dll-directories``, ``target-env``, ``with-driver``,
``ld-library-path``, the dyld paths): the file's value is the option's default, the command line wins,
paths may name a package's member directory, and a bad value is a configuration error naming the key."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest

from linkaudit.config.model import AuditConfig

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
PE = SAMPLES / "pe"


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory, so that no configuration file above the repository is found."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _wheel(where: Path) -> Path:
    """A win_amd64 wheel whose extension module finds its DLL only in ``pkg/lib`` (as torch's does)."""
    wheel = where / "pkg-1.0-py3-none-win_amd64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/_C.cp311-win_amd64.pyd", (PE / "fixed/torch_cuda.dll").read_bytes())
        zf.writestr("pkg/lib/nvrtc64_120_0.dll", (PE / "fixed/nvrtc64_120_0.dll").read_bytes())
        zf.writestr("pkg-1.0.dist-info/RECORD", "")
    return wheel


def _not_found(stdout: str) -> set[str]:
    return {f["subject"] for f in json.loads(stdout)["findings"] if f["rule"] == "library-not-found"}


def test_one_line_of_config_names_a_member_directory_of_the_wheel(run_cli, workdir: Path) -> None:  # type: ignore[no-untyped-def]
    wheel = _wheel(workdir)
    assert _not_found(run_cli("check", "--format", "json", str(wheel)).stdout) == {"nvrtc64_120_0.dll"}
    (workdir / "linkaudit.toml").write_text('dll-directories = ["pkg/lib"]\n')
    r = run_cli("check", "--format", "json", str(wheel))
    assert r.exit_code == 0 and _not_found(r.stdout) == set()
    # the command line wins: its directory replaces the file's (which would be refused: no directory)
    (workdir / "linkaudit.toml").write_text('dll-directories = ["pkg/nowhere"]\n')
    assert run_cli("check", str(wheel)).exit_code == 2
    assert run_cli("check", "--dll-directory", "pkg/lib", str(wheel)).exit_code == 0


def _seen_config(run_cli, monkeypatch: pytest.MonkeyPatch, *args: str) -> AuditConfig:  # type: ignore[no-untyped-def]
    """The ``AuditConfig`` ``check ARGS`` hands the audit."""
    import linkaudit.cli.check as check

    seen: list[AuditConfig] = []

    def spy(paths: list[str], config: AuditConfig, *rest: Any, **kw: Any) -> Any:
        seen.append(config)
        raise SystemExit(0)

    monkeypatch.setattr(check, "audit", spy)
    with pytest.raises(SystemExit):
        run_cli("check", *args)
    return seen[0]


def test_every_loader_key_reaches_the_audit_and_the_command_line_wins(  # type: ignore[no-untyped-def]
    run_cli, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / "linkaudit.toml").write_text(
        'ld-library-path = ["/opt/cuda/lib64", "/opt/x"]\ntarget-env = "policy"\nwith-driver = true\n'
        'dyld-library-path = ["pkg/lib"]\ndyld-fallback-library-path = ["/usr/local/lib"]\n'
        'executable-path = "bin/python3"\ndll-directories = ["a", "b"]\n'
    )
    config = _seen_config(run_cli, monkeypatch, "x.so")
    assert config.target is not None
    assert config.target.ld_library_path == ("/opt/cuda/lib64", "/opt/x")
    assert config.target_env == "policy" and not config.target.driverless
    assert config.dyld_library_path == ("pkg/lib",) and config.dyld_fallback_library_path == ("/usr/local/lib",)
    assert config.executable_path == "bin/python3" and config.dll_directories == ("a", "b")
    config = _seen_config(
        run_cli, monkeypatch, "--target-env", "host", "--ld-library-path", "/l", "--dll-directory", "c", "x.so"
    )
    assert config.target_env == "host" and config.target is not None and config.target.ld_library_path == ("/l",)
    assert config.dll_directories == ("c",) and config.dyld_library_path == ("pkg/lib",)


def test_paths_that_exist_beside_the_file_are_relative_to_it(  # type: ignore[no-untyped-def]
    run_cli, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workdir / "lib").mkdir()
    (workdir / "linkaudit.toml").write_text('dll-directories = ["lib", "pkg/lib"]\n')
    (workdir / "sub").mkdir()
    monkeypatch.chdir(workdir / "sub")
    config = _seen_config(run_cli, monkeypatch, "x.so")
    assert config.dll_directories == ("../lib", "pkg/lib")  # pkg/lib: nothing there, a member directory


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('target-env = "bogus"\n', "target-env = 'bogus': expected auto, host, policy"),
        ("with-driver = 1\n", "with-driver must be true or false"),
        ('dll-directories = "torch/lib"\n', "dll-directories must be a list of strings"),
        ('ld-library-path = ["/a", 3]\n', "ld-library-path must be a list of strings"),
        ('dyld-library-path = [""]\n', "dyld-library-path: '' is empty"),
        ("executable-path = []\n", "executable-path must be a non-empty string"),
        ('dll-directory = ["torch/lib"]\n', "unknown key 'dll-directory'"),
    ],
)
def test_a_bad_loader_value_is_a_configuration_error_naming_the_key(  # type: ignore[no-untyped-def]
    run_cli, workdir: Path, text: str, message: str
) -> None:
    (workdir / "linkaudit.toml").write_text("ignore = []\n" + text)
    r = run_cli("check", str(SAMPLES / "misc/libabs.so"))
    assert r.exit_code == 2 and f"linkaudit.toml:2: {message}" in r.stderr, r.stderr


@pytest.mark.realwheel
def test_torch_windows_wheel_audits_with_one_line_of_config(  # type: ignore[no-untyped-def]
    run_cli, workdir: Path, torch_windows_wheel: Path
) -> None:
    """torch 2.9.1 win_amd64: ``dll-directories = ["torch/lib"]`` gives what ``--dll-directory torch/lib``
    gives (no error; MSVCP140.dll, the Visual C++ Redistributable's, a warning)."""
    bare = json.loads(run_cli("check", "--format", "json", str(torch_windows_wheel)).stdout)
    assert "torch_python.dll" in {f["subject"] for f in bare["findings"] if f["rule"] == "library-not-found"}
    (workdir / "linkaudit.toml").write_text('dll-directories = ["torch/lib"]\n')
    r = run_cli("check", "--format", "json", str(torch_windows_wheel))
    assert r.exit_code == 0
    assert _not_found(r.stdout) == {"MSVCP140.dll"}
