"""musl's loader (linkaudit/loader/musl.py) on the samples of sample_bins/build_targets.sh, where
musl and glibc disagree, and against musl's own loader (``ld-musl-x86_64.so.1 --list``) on them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

from linkaudit import read
from linkaudit.config.policies import iter_policies
from linkaudit.loader.analysis import LinkageAnalysis, analyze
from linkaudit.loader.musl import MUSL_ARCH, is_loader_name, musl_rpath
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Binary, Libc

from ..tools import find_tool, needs

MUSL = Path(__file__).resolve().parents[2] / "sample_bins/targets/musl"


def _read(path: Path) -> Binary:
    (b,) = read(str(path))
    return b


def _resolution(a: LinkageAnalysis, requester: str, name: str):  # type: ignore[no-untyped-def]
    for load in a.loads:
        res = load.resolutions.get((requester, name))
        if res is not None:
            return res
    raise AssertionError(f"{requester} never asked for {name}")


def test_the_samples_are_musl() -> None:
    app = _read(MUSL / "inherit/app")
    assert app.libc is Libc.MUSL and app.interpreter == "/lib/ld-musl-x86_64.so.1" and "libc.so" in app.needed_names


def test_runpath_is_inherited_down_the_needed_by_chain() -> None:
    """inherit/app has RUNPATH $ORIGIN/lib; lib/liba.so NEEDs libb.so with no rpath of its own:
    musl finds libb.so through app's RUNPATH; glibc (RUNPATH not inherited) does not."""
    app = _read(MUSL / "inherit/app")
    a = analyze([app], TargetEnvironment())
    assert [ld.loader for ld in a.loads] == ["musl"]
    liba = str(MUSL / "inherit/lib/liba.so")
    libb = _resolution(a, liba, "libb.so")
    assert (
        libb.path == str(MUSL / "inherit/lib/libb.so") and libb.owner == app.path and libb.source.value == "DT_RUNPATH"
    )
    glibc = analyze([replace(app, libc=Libc.GLIBC, interpreter="/lib64/ld-linux-x86-64.so.2")], TargetEnvironment())
    assert not _resolution(glibc, liba, "libb.so").found
    assert _resolution(a, app.path, "libc.so").path.endswith("ld-musl-x86_64.so.1")  # the loader itself


def test_a_versioned_reference_binds_by_name() -> None:
    """vapp needs v_value@PROV_2; libprov.so defines v_value@PROV_1 only: glibc fails the version
    check, musl binds by name."""
    vapp = _read(MUSL / "version/vapp")
    a = analyze([vapp], TargetEnvironment())
    assert a.version_failures == []
    bound = {b.symbol.name: b.provider for b in a.bindings[(vapp.path, vapp.path)]}
    assert bound["v_value"] == str(MUSL / "version/libprov.so")
    glibc = analyze([replace(vapp, libc=Libc.GLIBC, interpreter="/lib64/ld-linux-x86-64.so.2")], TargetEnvironment())
    assert [f.version for _root, f in glibc.version_failures] == ["PROV_2"]


def test_a_foreign_token_voids_the_whole_rpath(run_cli) -> None:  # type: ignore[no-untyped-def]
    """libtoken/app: RPATH $ORIGIN/lib:$LIB/none; musl ignores all of it, so liba.so is not found,
    in musl's words; glibc expands $LIB and finds liba.so in $ORIGIN/lib."""
    app = MUSL / "libtoken/app"
    assert musl_rpath(_read(app), str(MUSL / "libtoken")) is None
    r = run_cli("check", "--no-config", "--format", "json", str(app))
    import json

    (nf,) = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "library-not-found"]
    assert nf["subject"] == "liba.so"
    assert (
        nf["evidence"]["would_fail"]
        == f"Error loading shared library liba.so: No such file or directory (needed by {app})"
    )
    assert "voids the whole rpath" in nf["evidence"]["attempts"][0]["detail"]
    glibc = analyze(
        [replace(_read(app), libc=Libc.GLIBC, interpreter="/lib64/ld-linux-x86-64.so.2")], TargetEnvironment()
    )
    assert _resolution(glibc, str(app), "liba.so").found


def test_search_order_path_file_and_first_file_wins(tmp_path: Path) -> None:
    """In a sysroot: LD_LIBRARY_PATH first; then etc/ld-musl-x86_64.path (":" or newline, no
    /lib default then); a file of another machine first in the path stops the load (musl does
    not skip it as glibc does)."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "opt/one").mkdir(parents=True)
    (root / "opt/two").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "bin").mkdir()
    (root / "etc/ld-musl-x86_64.path").write_text("/opt/one\n/opt/two:/nowhere\n")
    shutil.copy(MUSL / "inherit/app", root / "bin/app")  # RUNPATH $ORIGIN/lib: /bin/lib, absent
    shutil.copy(MUSL / "inherit/lib/libb.so", root / "opt/two/libb.so")
    shutil.copy(MUSL / "inherit/lib/liba.so", root / "opt/two/liba.so")
    shutil.copy(MUSL / "inherit/lib/liba.so", root / "lib/liba.so")  # the default path is not searched
    env = TargetEnvironment(sysroot=str(root))
    app = _read(root / "bin/app")
    a = analyze([app], env)
    liba = _resolution(a, "/bin/app", "liba.so")
    assert liba.path == "/opt/two/liba.so" and [t.path for t in liba.attempts][-2:] == [
        "/opt/one/liba.so",
        "/opt/two/liba.so",
    ]
    # another machine's liba.so first: the load fails there
    arch32 = Path(__file__).resolve().parents[2] / "sample_bins/arch/lib32le.so"
    shutil.copy(arch32, root / "opt/one/liba.so")
    a = analyze([app], TargetEnvironment(sysroot=str(root)))
    failed = _resolution(a, "/bin/app", "liba.so")
    assert not failed.found and failed.error is not None and "Exec format error" in failed.error
    # LD_LIBRARY_PATH comes first
    a = analyze([app], TargetEnvironment(sysroot=str(root), ld_library_path=("/opt/two",)))
    assert _resolution(a, "/bin/app", "liba.so").path == "/opt/two/liba.so"


def test_reserved_names_are_the_loader() -> None:
    for name in ("libc.so", "libc.so.6", "libm.so.6", "libpthread.so.0", "libc.musl-x86_64.so.1", "libxnet.so"):
        assert is_loader_name(name, "/lib/ld-musl-x86_64.so.1"), name
    for name in ("libcrypto.so.3", "libmvec.so.1", "libz.so.1", "ld-musl-x86_64.so.1"):
        assert not is_loader_name(name, "/lib/ld-musl-x86_64.so.1"), name


def test_musl_arch_agrees_with_the_policy_data() -> None:
    musl = {p.machine: p.loader_name for p in iter_policies() if p.family == "musllinux"}
    assert {m: f"ld-musl-{a}.so.1" for m, a in MUSL_ARCH.items()} == musl


def _musl_list(path: Path) -> dict[str, str | None]:
    """``ld-musl-x86_64.so.1 --list``: name -> path for each line ``name => path (addr)``; a name
    it reports an error for -> None."""
    tool = find_tool("musl-ldd").path
    assert tool is not None
    proc = subprocess.run([tool, "--list", str(path)], capture_output=True, text=True, timeout=60,
                          env={"PATH": os.environ.get("PATH", "")})  # fmt: skip
    out: dict[str, str | None] = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"\s+(\S+) => (\S+) \(0x[0-9a-f]+\)$", line)
        if m:
            out[m.group(1)] = m.group(2)
    for m in re.finditer(r"Error loading shared library (\S+): ", proc.stderr):
        out[m.group(1)] = None
    return out


@needs("musl-ldd")
def test_differential_against_musls_own_loader() -> None:
    """On our own samples only: every name musl's loader lists resolves to the same file here."""
    for app in (MUSL / "inherit/app", MUSL / "version/vapp", MUSL / "libtoken/app"):
        theirs = _musl_list(app)
        a = analyze([_read(app)], TargetEnvironment())
        ours: dict[str, str | None] = {}
        for (_req, name), res in a.loads[0].resolutions.items():
            ours.setdefault(name, os.path.realpath(res.path) if res.path else None)
        theirs = {n: os.path.realpath(p) if p else None for n, p in theirs.items()}
        assert ours == theirs, app


def test_a_load_stops_after_max_places(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """musl has no limit on the places a search tries; a hostile etc/ld-musl-x86_64.path of 25,000
    entries times 300 DT_NEEDED ran past 150 s. The emulation stops a load after MAX_PLACES and
    says so in the attempt (counted here with a small budget)."""
    from linkaudit.loader import musl

    monkeypatch.setattr(musl, "MAX_PLACES", 40)
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "bin").mkdir()
    (root / "etc/ld-musl-x86_64.path").write_text("\n".join(f"/d{i}" for i in range(100)) + "\n")
    shutil.copy(MUSL / "inherit/app", root / "bin/app")
    a = analyze([_read(root / "bin/app")], TargetEnvironment(sysroot=str(root)))
    liba = _resolution(a, "/bin/app", "liba.so")
    assert not liba.found
    tried = [t for t in liba.attempts if t.detail != "search stopped: more than 40 places tried in this load"]
    assert len(tried) <= 40 and liba.attempts[-1].detail == "search stopped: more than 40 places tried in this load"


def test_a_library_dlopened_in_the_interpreter_binds_its_c_api() -> None:
    """A package's helper no extension module NEEDs (pyarrow's libarrow_python.so copies in its
    musllinux wheel) is dlopened inside the interpreter: ``PyLong_FromLong`` binds to the interpreter,
    as in glibc's emulation. Alone (no extension among the inputs) nothing provides it."""
    from linkaudit import audit

    helper = MUSL / "pyuser/libpyuser.so"
    assert (
        _read(helper).libc is Libc.MUSL
        and _read(MUSL / "pyuser/mod.cpython-311-x86_64-linux-musl.so").libc is Libc.MUSL
    )
    beside = audit([str(MUSL / "pyuser")])
    assert [f for f in beside.findings if f.rule == "unresolved-symbol"] == []
    assert {str(r.kind) for r in beside.roots} == {"python-import", "dlopen"}
    alone = audit([str(helper)])
    (finding,) = [f for f in alone.findings if f.rule == "unresolved-symbol"]
    assert "PyLong_FromLong" in finding.message
