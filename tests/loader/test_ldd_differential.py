"""Differential test against glibc's real loader, on trusted inputs only.

For every trusted object — the loader scenarios of sample_bins (our own fixtures),
some of this machine's own system libraries and executables, and the real torch
site where present — the path ``ldd`` reports for each library equals the path our
emulation resolves it to, and ``ldd -r``'s "undefined symbol" and "version ... not
found" errors for the object itself equal our bindings and version checks.
Differences that are expected are listed (symbols a Python interpreter provides,
which ``ldd`` cannot know).  linkaudit itself never runs ``ldd`` or loads an input:
only this test does, and only on these trusted files.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from linkaudit import InputError, read
from linkaudit.loader.analysis import LinkageAnalysis, Root, analyze
from linkaudit.loader.binding import INTERPRETER_PREFIXES
from linkaudit.loader.closure import RootKind
from linkaudit.loader.fs import FileSystemView
from linkaudit.loader.target import TargetEnvironment
from linkaudit.model import Kind

from ..tools import find_tool
from . import STATS

SCENARIOS = Path(__file__).resolve().parents[2] / "sample_bins" / "loader"
LDD = find_tool("ldd").path
_LINE = re.compile(r"^\s*(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))\s*$")
_UNDEF = re.compile(r"^\s*undefined symbol: (\S+)\s+\((.+)\)\s*$")
_VERSION = re.compile(r"version `([^']+)' not found \(required by (.+)\)")
SYSTEM = [
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libm.so.6",
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/lib/x86_64-linux-gnu/libgcc_s.so.1",
    "/usr/lib/x86_64-linux-gnu/libz.so.1",
    "/usr/bin/ls",
    "/usr/bin/readelf",
    "/usr/bin/git",
    "/usr/lib/x86_64-linux-gnu/libssl.so.3",
    "/usr/lib/x86_64-linux-gnu/libcrypto.so.3",
]


def ldd(path: str, undefined: bool = False) -> tuple[dict[str, str | None], set[str], set[str], set[str]] | None:
    """``ldd`` (``-r``) and ``ldd -u`` of a trusted object: name -> path or None, undefined symbols,
    missing versions, unused direct dependencies (paths)."""
    assert LDD
    env = {k: v for k, v in os.environ.items() if not k.startswith("LD_")}
    proc = subprocess.run(
        [LDD, *(["-r"] if undefined else []), path], capture_output=True, text=True, env=env, timeout=60
    )
    text = proc.stdout + proc.stderr
    # ldd -u prints only the unused list, so it is a second run.
    unused_run = subprocess.run([LDD, "-u", path], capture_output=True, text=True, env=env, timeout=60)
    text += "\n" + unused_run.stdout
    if "not a dynamic executable" in text or "wrong ELF class" in text:
        return None
    libs: dict[str, str | None] = {}
    undef: set[str] = set()
    versions: set[str] = set()
    unused: set[str] = set()
    in_unused = False
    for line in text.splitlines():
        if line.startswith("Unused direct dependencies:"):
            in_unused = True
            continue
        if in_unused and line.startswith("\t") and "=>" not in line:
            unused.add(line.strip())
            continue
        in_unused = False
        m = _LINE.match(line)
        if m:
            libs.setdefault(m.group(1), None if m.group(2) == "not found" else m.group(3))
            continue
        m = _UNDEF.match(line)
        if m and os.path.realpath(m.group(2)) == os.path.realpath(path):
            undef.add(m.group(1))
            continue
        m = _VERSION.search(line)
        if m and os.path.realpath(m.group(2)) == os.path.realpath(path):
            versions.add(m.group(1))
    # ldd -u prints the unused list in a second run of the loader, so a NEEDED line may repeat: fine.
    return libs, undef, versions, unused


def ours(path: str) -> LinkageAnalysis:
    (b,) = read(path)
    kind = RootKind.EXECUTABLE if b.kind in (Kind.EXECUTABLE, Kind.PIE_EXECUTABLE) else RootKind.DLOPEN
    env = TargetEnvironment(driverless=False)
    return analyze([b], env, [Root(path, kind)], FileSystemView("/"))


def compare(path: str) -> list[str]:
    """Disagreements between ldd and us for one object (empty when none)."""
    reference = ldd(path, undefined=True)
    if reference is None:
        STATS["skipped (ldd cannot load: other class)"] += 1
        return []
    libs, undef, versions, unused = reference
    analysis = ours(path)
    load = analysis.loads[0]
    first: dict[str, str | None] = {}
    for (_req, name), res in load.resolutions.items():
        first.setdefault(name, res.path)
    problems = []
    for name, where in libs.items():
        if name not in first:
            continue  # linux-vdso and the like, not DT_NEEDED entries
        STATS["NEEDED entries compared"] += 1
        mine = first[name]
        same = (mine is None and where is None) or (
            mine is not None
            and where is not None
            and (mine == where or os.path.realpath(mine) == os.path.realpath(where))
        )
        if not same:
            problems.append(f"{path}: {name}: ldd {where} vs ours {mine}")
    if load.errors:
        # The load stops (an invalid candidate): ldd reports no symbols, nor do our rules.
        STATS["symbol checks skipped (load stopped, as with ldd)"] += 1
        STATS["objects compared"] += 1
        return problems
    bound = analysis.bindings.get((load.root, load.root), [])
    unresolved = {b.symbol.name for b in bound if b.provider is None and not b.symbol.weak}
    # ldd loads an extension module without an interpreter: the Py* API it would provide
    # is "undefined" for ldd; listed as expected differences, compared without them.
    expected = {s for s in undef | unresolved if s.startswith(INTERPRETER_PREFIXES)}
    STATS["expected differences (interpreter symbols)"] += len(expected)
    if unresolved - expected != undef - expected:
        problems.append(
            f"{path}: undefined symbols: ldd {sorted(undef - expected)} vs ours {sorted(unresolved - expected)}"
        )
    # The unused-needed notion: a direct dependency of the root that no symbol of the root
    # binds to (ldd -u also lists the direct dependencies it could not find).
    providers = {b.provider for b in bound if b.provider}
    root_obj = load.object(load.root)
    mine_unused = set()
    for name in root_obj.binary.needed_names if root_obj else ():
        res = load.resolutions.get((load.root, name))
        if res is not None and (res.path is None or res.path not in providers):
            mine_unused.add(res.path or name)
    STATS["unused direct dependencies compared"] += len(unused)
    if {os.path.realpath(p) for p in mine_unused} != {os.path.realpath(p) for p in unused}:
        problems.append(f"{path}: unused dependencies: ldd -u {sorted(unused)} vs ours {sorted(mine_unused)}")
    mine_versions = {f.version for _r, f in analysis.version_failures if f.object == load.root}
    if mine_versions != versions:
        problems.append(f"{path}: missing versions: ldd {sorted(versions)} vs ours {sorted(mine_versions)}")
    STATS["objects compared"] += 1
    return problems


def _elf_files(top: Path) -> list[str]:
    out = []
    for p in sorted(top.rglob("*")):
        if p.is_file() and p.read_bytes()[:4] == b"\x7fELF":
            try:
                read(str(p))
            except InputError:
                continue
            out.append(str(p))
    return out


pytestmark = [
    pytest.mark.tools("ldd"),
    pytest.mark.skipif(LDD is None, reason=find_tool("ldd").reason),
    pytest.mark.skipif(not os.path.exists("/lib64/ld-linux-x86-64.so.2"), reason="needs glibc's ldd on x86-64"),
]


def test_loader_scenarios_agree_with_ldd() -> None:
    problems = [p for path in _elf_files(SCENARIOS) for p in compare(path)]
    assert problems == []


def test_system_objects_agree_with_ldd() -> None:
    present = [p for p in SYSTEM if os.path.exists(p)]
    if not present:
        pytest.skip("no system objects to compare")
    problems = [p for path in present for p in compare(path)]
    assert problems == []


@pytest.mark.realwheel
def test_real_site_agrees_with_ldd(torch_site: Path) -> None:
    objects = [str(torch_site / "torch" / "_C.cpython-311-x86_64-linux-gnu.so")]
    objects += sorted(str(p) for p in (torch_site / "torch" / "lib").glob("*.so*"))
    problems = [p for path in objects for p in compare(path)]
    assert problems == []
