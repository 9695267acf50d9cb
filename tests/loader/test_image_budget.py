"""The Windows and dyld loads of one run are bounded as ELF's (``loader.images.ImageBudget``): a ring
of K DLLs or dylibs, each its own root, holds K² images and resolutions (the hostile tester's 2,000
DLLs: 18 s, 1.06 GB; 2,000 dylibs: 90 s, 1.24 GB).  Past the bound a root is not loaded but left
out with a ``loader-skipped`` warning; the roots loaded before it are loaded as without the bound.
And a ring is loaded whole only root by root: the first root's load no longer loads every other
member of the ring whole at once (the stacking found each one conflicting and loaded it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, read
from linkaudit.loader import bounds, dyld, windows
from linkaudit.loader.dyld import analyze_dyld
from linkaudit.loader.target import TargetEnvironment
from linkaudit.loader.windows import analyze_windows
from linkaudit.model import Binary, NeedKind
from tests.formats.test_hostile_images import ID, LOAD, _dylib_cmd, _macho
from tests.loader.test_windows_shared import _dll, _flat


def _pe_ring(tmp_path: Path, k: int) -> list[Binary]:
    """R0 ... R{k-1}, R{i} importing R{i+1 mod k}.dll."""
    return [_dll(tmp_path / f"R{i}.dll", [(f"R{(i + 1) % k}.dll", NeedKind.PLAIN)]) for i in range(k)]


def _macho_ring(directory: Path, k: int) -> list[Binary]:
    """libm0 ... libm{k-1}, libm{i} loading ``@loader_path/libm{i+1 mod k}.dylib``, all present."""
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(k):
        load = _dylib_cmd(LOAD, f"@loader_path/libm{(i + 1) % k}.dylib")
        _macho(directory / f"libm{i}.dylib", [_dylib_cmd(ID, f"@rpath/libm{i}.dylib"), load])
    return [b for i in range(k) for b in read(str(directory / f"libm{i}.dylib"))]


def _counting(monkeypatch: pytest.MonkeyPatch, module: object) -> list[str]:
    """The roots ``module._load`` loads whole, in order."""
    calls: list[str] = []
    real = module._load  # type: ignore[attr-defined]

    def counted(root: Binary, *args: object, **kwargs: object) -> object:
        calls.append(root.path)
        return real(root, *args, **kwargs)

    monkeypatch.setattr(module, "_load", counted)
    return calls


@pytest.mark.parametrize("fmt", ["pe", "macho"])
def test_a_ring_is_loaded_whole_root_by_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    """K roots in a ring: K whole loads, one a root, and the loads are those of every root loaded
    afresh (before: the first root's load loaded all K whole, then each later root found its own)."""
    k = 30
    module = windows if fmt == "pe" else dyld
    binaries = _pe_ring(tmp_path, k) if fmt == "pe" else _macho_ring(tmp_path, k)
    analyze = analyze_windows if fmt == "pe" else analyze_dyld
    alone = [_flat(ld) for ld in analyze(binaries, share=False)]  # type: ignore[operator]
    calls = _counting(monkeypatch, module)
    loads = analyze(binaries)  # type: ignore[operator]
    assert [_flat(ld) for ld in loads] == alone
    assert len(calls) == len(set(calls)) == k  # each root whole once, no other
    first: list[str] = []
    monkeypatch.setattr(module, "_load", module._load)
    calls.clear()
    analyze(binaries, entries=[binaries[0].path])  # type: ignore[operator]
    first = list(calls)
    assert len(first) <= 1  # one root: one whole load, not K


@pytest.mark.parametrize("fmt", ["pe", "macho"])
def test_past_the_bound_roots_are_left_out_and_the_rest_loaded_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """With the bound at five roots' loads, the first roots are loaded as without it and the
    others listed as skipped with why; what they hold stays within the bound and one load."""
    k = 40
    binaries = _pe_ring(tmp_path, k) if fmt == "pe" else _macho_ring(tmp_path, k)
    analyze = analyze_windows if fmt == "pe" else analyze_dyld
    unbounded = [_flat(ld) for ld in analyze(binaries)]  # type: ignore[operator]
    monkeypatch.setattr(bounds, "LOAD_FLOOR", 5 * 2 * k)
    monkeypatch.setattr(bounds, "LOAD_BYTES", 1 << 40)
    skipped: list[tuple[str, str]] = []
    bounded = analyze(binaries, skipped=skipped)  # type: ignore[operator]
    assert 5 <= len(bounded) <= 6 and len(bounded) + len(skipped) == k
    assert [_flat(ld) for ld in bounded] == unbounded[: len(bounded)]
    assert {path for path, _why in skipped} == {b.path for b in binaries} - {ld.root for ld in bounded}
    assert all("past the bound of 400" in why and "--entry" in why for _path, why in skipped)


def test_a_ring_of_dylibs_past_the_bound_warns_and_never_reports_a_missing_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole check: the roots left out are ``loader-skipped`` warnings naming the bound, no
    ``library-not-found`` for a dylib that is there, and the per-file rules still ran for them."""
    k = 40
    _macho_ring(tmp_path, k)
    monkeypatch.setattr(bounds, "LOAD_FLOOR", 5 * 2 * k)
    monkeypatch.setattr(bounds, "LOAD_BYTES", 1 << 40)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    skipped = [f for f in report.findings if f.rule == "loader-skipped"]
    assert k - 6 <= len(skipped) <= k - 5 and all(f.severity.value == "warning" for f in skipped)
    assert not [f for f in report.findings if f.severity.value == "error"]
    assert sum(1 for f in report.files if f.status == "audited") == k


def test_dyld_asks_each_real_path_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each load asked ``realpath`` of every image it reached (a ring of 500: 500,000 calls, 9 s of
    14 under cProfile); now once a path per run."""
    k = 30
    binaries = _macho_ring(tmp_path, k)
    asked: list[str] = []
    real = dyld.os.path.realpath

    def counted(path: str) -> str:
        asked.append(path)
        return real(path)

    monkeypatch.setattr(dyld.os.path, "realpath", counted)
    analyze_dyld(binaries)
    assert len(asked) == len(set(asked)) <= k
