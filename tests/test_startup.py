"""Start-up stays lean: a plain ELF ``check`` imports only what ELF auditing needs.

Each run happens in a fresh interpreter (``python -c``) that runs the CLI and dumps
``sys.modules``, so that a heavy import creeping back onto the hot path (a TOML parser, an archive
reader, the Mach-O / PE rooms, ``packaging``) fails here.  Speed itself is measured in
``benchmarks/bench_startup.py``; this is the structural guard (no timing in tests).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ELF = ROOT / "sample_bins" / "loader" / "ancestor_runpath" / "app"
WHEEL = ROOT / "sample_bins" / "wheels" / "dist" / "pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl"

_DUMP = (
    "import json, sys\n"
    "from linkaudit.cli import main\n"
    "rc = main(sys.argv[1:])\n"
    "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n')\n"
    "sys.exit(rc)\n"
)

#: Never imported by a plain ELF ``check`` with no configuration file.
NOT_FOR_ELF = {
    # the configuration file's TOML parser and the baseline: only when such files exist
    "tomllib",
    "linkaudit.config.baseline",
    # package readers: only for packages
    "linkaudit.packages.wheel",
    "linkaudit.packages.conda",
    "linkaudit.packages.tar",
    "linkaudit.packages.zipped",
    # staging (members written, links made) and the compressors it reads with: only for packages
    "linkaudit.packages.staging",
    "zipfile",
    "lzma",
    "bz2",
    "tarfile",
    "gzip",
    "tempfile",
    "packaging",
    "packaging.tags",
    "concurrent.futures",
    # the other formats' readers and loaders: only for those formats
    "linkaudit.formats.macho",
    "linkaudit.formats.macho_linkedit",
    "linkaudit.formats.pe",
    "linkaudit.formats.pe_directories",
    "linkaudit.loader.dyld",
    "linkaudit.loader.windows",
    "linkaudit.loader.image_binding",
    "linkaudit.loader.images",
    "pefile",
    "macholib",
    "lief",
    # musl's loader: only for musl inputs; the platform policies (auditwheel's data): only when a
    # platform tag or a policy profile is asked for
    "linkaudit.loader.musl",
    "linkaudit.config.policies",
    # the COFF reader and the Windows link: only for COFF inputs and a link line
    "linkaudit.formats.coff",
    "linkaudit.link.coff",
    # other commands and options
    "linkaudit.cli.tree",
    "linkaudit.cli.why",
    "linkaudit.cli.diff",
    "linkaudit.cli.dupes",
    "linkaudit.cli.show",
    "linkaudit.cli.reading",
    "linkaudit.cli.rules",
    "linkaudit.cli.profiles",
    "linkaudit.diff",
    "linkaudit.link.sources",
    # the link-line reader (and shlex): only with --link-line (link.elf imports it when it reads one)
    "linkaudit.link.line",
    "shlex",
    "linkaudit.verify",
    # the user cache directory looked up without platformdirs (and its tempfile, shutil; its pathlib
    # too, which an editable install's import finder loads anyway)
    "platformdirs",
    "shutil",
    "secrets",
    "hmac",
    "subprocess",
}


def _modules(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, set[str], str]:
    """Run ``linkaudit ARGS`` in a fresh interpreter in ``cwd`` (environment ``env``, default this
    one's): (exit status, modules, stdout)."""
    proc = subprocess.run(
        [sys.executable, "-c", _DUMP, *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False, env=env
    )
    line = next((x for x in proc.stderr.splitlines() if x.startswith("MODULES ")), None)
    assert line is not None, proc.stderr
    return proc.returncode, set(json.loads(line[len("MODULES ") :])), proc.stdout


def test_a_plain_elf_check_imports_only_the_elf_path(tmp_path: Path) -> None:
    rc, modules, out = _modules(["check", "-q", str(ELF)], tmp_path)
    assert rc == 1 and "library-not-found" in out  # the file was audited, the loader ran
    assert "linkaudit.formats.elf" in modules and "linkaudit.loader.ldso" in modules
    assert "linkaudit.ruledata" in modules  # rule data from the compiled module...
    assert not modules & NOT_FOR_ELF, sorted(modules & NOT_FOR_ELF)  # ...and nothing of the above


@pytest.mark.parametrize("variable", ["HOME", "XDG_CACHE_HOME"])
def test_the_default_cache_directory_needs_no_platformdirs(tmp_path: Path, variable: str) -> None:
    """With no ``$LINKAUDIT_CACHE_DIR`` (the suite sets one) the cache lives in the user cache
    directory: found without ``platformdirs``, and the entry is written there."""
    env = {k: v for k, v in os.environ.items() if k not in ("LINKAUDIT_CACHE_DIR", "XDG_CACHE_HOME")}
    env[variable] = str(tmp_path / "home")
    rc, modules, _ = _modules(["check", "-q", str(ELF)], tmp_path, env)
    assert rc == 1
    assert not modules & NOT_FOR_ELF, sorted(modules & NOT_FOR_ELF)
    root = tmp_path / "home" / (".cache/linkaudit" if variable == "HOME" else "linkaudit")
    assert any(root.rglob("*.bin"))


@pytest.mark.parametrize(
    "env",
    [
        {"HOME": "/home/u"},
        {"HOME": "/home/u/"},
        {"HOME": "/"},
        {"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg/cache"},
        {"HOME": "/home/u", "XDG_CACHE_HOME": "/xdg/cache/"},
        {"HOME": "/home/u", "XDG_CACHE_HOME": "relative"},
        {"HOME": "/home/u", "XDG_CACHE_HOME": ""},
        {"XDG_CACHE_HOME": "/xdg"},
    ],
)
def test_the_cache_directory_is_platformdirs_answer(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    """``cache.default_root`` without ``platformdirs`` gives ``platformdirs.user_cache_dir``'s answer."""
    import platformdirs

    from linkaudit import cache

    monkeypatch.delenv("LINKAUDIT_CACHE_DIR", raising=False)
    for name in ("HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    expected = platformdirs.user_cache_dir("linkaudit", appauthor=False)
    assert cache.default_root() == os.path.join(expected, f"binaries-v{cache.READER_VERSION}")


def test_version_imports_neither_click_nor_the_audit(tmp_path: Path) -> None:
    """``linkaudit --version`` (the console script's ``run``) answers before click is imported."""
    code = (
        "import sys\n"
        "sys.argv = ['linkaudit', '--version']\n"
        "from linkaudit.cli import run\n"
        "try:\n"
        "    run()\n"
        "finally:\n"
        "    sys.stderr.write(' '.join(sorted(m for m in sys.modules if m.startswith(('click', 'linkaudit')))))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and proc.stdout == "linkaudit, version 0.1.0\n"
    assert proc.stderr.split() == ["linkaudit", "linkaudit.cli"]


@pytest.mark.parametrize("config", ["linkaudit.toml", "pyproject.toml"])
def test_the_guard_sees_heavy_imports(tmp_path: Path, config: str) -> None:
    """The dump is live: a configuration file brings ``tomllib``, a wheel its reader and
    ``packaging`` — the same runs without them would fail the test above if they leaked."""
    (tmp_path / config).write_text(
        "[tool.linkaudit]\nignore = []\n" if config == "pyproject.toml" else "ignore = []\n", encoding="utf-8"
    )
    _, modules, _ = _modules(["check", "-q", str(ELF), str(WHEEL)], tmp_path)
    assert {"tomllib", "linkaudit.packages.wheel", "packaging.tags"} <= modules


def test_a_shipped_profile_builds_no_platform_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """``check`` names a profile on every run (default ``cuda``): looking it up must not build the
    profile of every published platform policy (10,000 version names parsed before the first read)."""
    from linkaudit.config import profiles

    built: list[str] = []
    real = profiles._policy_profile

    def counting(policy: object, name: str) -> profiles.Profile:
        built.append(name)
        return real(policy, name)  # type: ignore[arg-type]

    monkeypatch.setattr(profiles, "_policy_profile", counting)
    profiles.profiles.cache_clear()
    try:
        assert profiles.get_profile("cuda").name == "cuda"
        assert profiles.get_profile("conda-forge:2.28").name == "conda-forge:2.28"
        assert built == []
        assert profiles.get_profile("manylinux_2_28").name == "manylinux_2_28"  # a policy: built, as before
        assert built
    finally:
        profiles.profiles.cache_clear()


def test_a_projects_own_pyproject_is_not_parsed(tmp_path: Path) -> None:
    """A ``pyproject.toml`` that never names linkaudit (the project's own, in the directory a CI
    step runs in) is passed over without a TOML parse; one naming it, even through a quoted key's
    escape, is still read (``config.file._has_tool_table``)."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.ruff]\nline-length = 100\n')
    rc, modules, _ = _modules(["check", "-q", str(ELF)], tmp_path)
    assert rc == 1 and "tomllib" not in modules
    (tmp_path / "pyproject.toml").write_text('[tool."\\u006cinkaudit"]\nignore = ["library-not-found"]\n')
    rc, modules, out = _modules(["check", "-q", str(ELF)], tmp_path)
    assert "tomllib" in modules and "library-not-found" not in out


def test_tree_of_a_site_imports_no_resource_reader(tmp_path: Path, torch_site: Path) -> None:
    """``tree`` over an installed site reads the meta-package list with ``open``:
    ``importlib.resources`` (``tempfile``, ``zipfile``) stays off its path; no rule asks what a
    distribution declares, so packaging's requirement and marker parser (~15 ms) is not imported,
    while ``check`` of the same module, whose rules ask, imports it."""
    (ext,) = (torch_site / "torch").glob("_C.cpython-*.so")
    rc, modules, _ = _modules(["tree", str(ext)], tmp_path)
    assert rc == 0 and "linkaudit.packages.requirements" in modules
    assert "importlib.resources" not in modules and "tempfile" not in modules
    assert not {"packaging.requirements", "packaging.markers", "packaging.specifiers"} & modules
    _rc, modules, _ = _modules(["check", str(ext)], tmp_path)
    assert {"packaging.requirements", "packaging.markers"} <= modules


_LAZY = (
    "import sys\n"
    "from linkaudit.cli import main\n"
    "from linkaudit.lazyre import LazyPattern\n"
    "rc = main(sys.argv[1:])\n"
    "names = sorted(f'{m}.{k}' for m, mod in list(sys.modules.items()) if m.startswith('linkaudit')\n"
    "               for k, v in vars(mod).items() if isinstance(v, LazyPattern) and v._compiled is not None)\n"
    "sys.stderr.write('\\nCOMPILED ' + ' '.join(names) + '\\n')\n"
    "sys.exit(rc)\n"
)


def test_a_plain_elf_check_compiles_no_pattern_of_other_inputs(tmp_path: Path) -> None:
    """The patterns of wheel tags, Mach-O paths, link lines and Python libraries stay uncompiled
    (``linkaudit.lazyre``): a plain ELF check, run to its end, pays for none of them."""
    proc = subprocess.run(
        [sys.executable, "-c", _LAZY, "check", "-q", str(ELF)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    line = next((x for x in proc.stderr.splitlines() if x.startswith("COMPILED")), None)
    assert proc.returncode == 1 and line is not None, proc.stderr
    compiled = set(line.split()[1:])
    for name in (
        "linkaudit.rules.platform_tag._LINUX_TAG",
        "linkaudit.rules.platform_tag._MAC_TAG",
        "linkaudit.rules.macos_tag._MAC_TAG",
        "linkaudit.rules.rpath_leak._LOADER_RELATIVE",
        "linkaudit.rules.unused_dependency._LIBRARY",
    ):
        assert name not in compiled, sorted(compiled)


@pytest.mark.parametrize("name", ["app", "cli", "main", "EXIT_OK"])
def test_the_cli_package_gives_its_lazy_names_in_a_fresh_process(name: str) -> None:
    """``from linkaudit.cli import app`` (and the app's names) in a process that has not imported
    ``cli.app``: the package's lazy ``__getattr__`` once recursed forever on the submodule's name."""
    done = subprocess.run(
        [sys.executable, "-c", f"from linkaudit.cli import {name}; print(type({name}).__name__)"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
