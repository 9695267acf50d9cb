"""The search for one DT_NEEDED: dynamic string tokens, sysroot, DF_1_NODEFLIB, LD_LIBRARY_PATH from the host."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from linkaudit import read
from linkaudit.loader.analysis import Root, analyze
from linkaudit.loader.closure import RootKind
from linkaudit.loader.fs import FileSystemView
from linkaudit.loader.ldso import Outcome, Source
from linkaudit.loader.target import TargetEnvironment, expand_dst
from linkaudit.model import DF_1_NODEFLIB

from .helpers import resolution

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def test_dynamic_string_tokens_both_spellings() -> None:
    assert expand_dst("$ORIGIN/../lib", "/opt/pkg/bin", "lib64", "x86_64") == "/opt/pkg/bin/../lib"
    assert expand_dst("${ORIGIN}/lib:$LIB/$PLATFORM", "/o", "lib/x86_64-linux-gnu", "haswell") == (
        "/o/lib:lib/x86_64-linux-gnu/haswell"
    )
    assert expand_dst("${LIB}x", "/o", "lib64", "p") == "lib64x"
    assert expand_dst("$ORIGINAL", "/o", "l", "p") == "$ORIGINAL"  # not a token


def test_lib_defaults_from_the_first_system_directory() -> None:
    assert TargetEnvironment().lib_for(("/lib/x86_64-linux-gnu", "/usr/lib")) == "lib/x86_64-linux-gnu"
    assert TargetEnvironment().lib_for(("/lib64", "/usr/lib64")) == "lib64"
    assert TargetEnvironment(lib="lib32").lib_for(("/lib64",)) == "lib32"


def test_sysroot_resolves_absolute_symlinks_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "image"
    (root / "app").mkdir(parents=True)
    (root / "usr/lib").mkdir(parents=True)
    (root / "opt/real").mkdir(parents=True)
    shutil.copy(SAMPLES / "ext/_C.cpython-311-x86_64-linux-gnu.so", root / "app/_C.cpython-311-x86_64-linux-gnu.so")
    shutil.copy(SAMPLES / "ext/lib/libshim.so", root / "opt/real/libshim.so")
    os.symlink("/opt/real/libshim.so", root / "usr/lib/libshim.so")  # absolute: means <root>/opt/real
    os.symlink("/lib/x86_64-linux-gnu/libc.so.6", root / "usr/lib/libc.so.6")  # absent inside the image
    env = TargetEnvironment(sysroot=str(root), system_dirs=("/usr/lib",), use_cache=False)
    module = str(root / "app/_C.cpython-311-x86_64-linux-gnu.so")
    (b,) = read(module)
    analysis = analyze([b], env, [Root(module, RootKind.PYTHON_IMPORT)], FileSystemView(str(root)))
    load = analysis.loads[0]
    assert load.root == "/app/_C.cpython-311-x86_64-linux-gnu.so"  # target paths inside the image
    shim = resolution(analysis, "/app/_C.cpython-311-x86_64-linux-gnu.so", "libshim.so")
    assert shim.found and shim.path == "/usr/lib/libshim.so" and shim.source is Source.SYSTEM
    libc = resolution(analysis, "/app/_C.cpython-311-x86_64-linux-gnu.so", "libc.so.6")
    assert not libc.found  # the host has it; the image does not


def test_nodeflib_skips_the_cache_and_the_system_directories() -> None:
    (b,) = read(str(SAMPLES / "fixed/libtorch_cuda.so"))
    nodeflib = replace(b, flags_1=b.flags_1 | DF_1_NODEFLIB)
    analysis = analyze([nodeflib], TargetEnvironment(), [Root(b.path, RootKind.DLOPEN)])
    libc = resolution(analysis, "fixed/libtorch_cuda.so", "libc.so.6")
    assert not libc.found
    assert {a.outcome for a in libc.attempts} >= {Outcome.SKIPPED_NODEFLIB}
    nvrtc = resolution(analysis, "fixed/libtorch_cuda.so", "libnvrtc.so.12")
    assert nvrtc.found and nvrtc.source is Source.RUNPATH  # DT_RUNPATH still applies


def test_ld_library_path_only_from_options_or_when_asked(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    scenario = SAMPLES / "loader/runpath_not_inherited"
    monkeypatch.setenv("LD_LIBRARY_PATH", str(scenario / "lib"))
    r = run_cli("tree", str(scenario))
    assert "libleaf.so => not found" in r.stdout  # the auditor's own environment is not read
    r = run_cli("tree", "--env-from-host", str(scenario))
    assert "[LD_LIBRARY_PATH]" in r.stdout and r.exit_code == 0
    r = run_cli("tree", "--ld-library-path", str(scenario / "lib"), str(scenario))
    assert "[LD_LIBRARY_PATH]" in r.stdout


def test_the_loader_of_every_policy_machine_is_provided_under_a_policy() -> None:
    """Under a policy's list of system libraries, a DT_NEEDED naming the dynamic loader of the
    requester's own machine is the loader, already in the namespace: an i386 libc.so.6 found on
    the host (``/lib32``) NEEDs ``ld-linux.so.2``, which no policy lists (it made a library-not-found
    reported against the host's /lib32/libc.so.6 while auditing sample_bins on a multilib host)."""
    from linkaudit.config.policies import iter_policies
    from linkaudit.loader.ldso import _is_loader_name

    x86_64 = "/lib64/ld-linux-x86-64.so.2"
    policies = [p for p in iter_policies() if p.family == "manylinux"]
    assert {p.machine for p in policies} >= {"x86", "x86-64", "aarch64"}
    for policy in policies:
        assert _is_loader_name(policy.loader_name, x86_64, policy.machine), policy.tag
    assert _is_loader_name("ld-linux.so.2", x86_64, "x86")
    assert not _is_loader_name("ld-linux.so.2", x86_64, "x86-64")
    assert not _is_loader_name("libc.so.6", x86_64, "x86")
