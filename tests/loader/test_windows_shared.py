"""The Windows loader emulation shares the load of a DLL between the roots that load it on top of
their own (``loader.windows``, ``loader.images.LoadStack``): K DLLs in one directory, each importing
the next, cost K loads of one DLL each, not K²/2 (the hostile tester's chain: K=3,000 ended in
MemoryError, exit 3).  The shared loads equal the unshared ones (``analyze_windows(share=False)``,
each root loaded afresh) on random DAGs of imports: diamonds, rings, missing and system DLLs,
self-imports, names in other cases, preloaded DLLs, delay loads, DLLs of another machine, a
``--dll-directory``, executables and extension modules."""

from __future__ import annotations

import dataclasses
import functools
import random
import struct
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, read
from linkaudit.loader import windows
from linkaudit.loader.images import ImageLoad, iter_resolutions
from linkaudit.loader.target import TargetEnvironment
from linkaudit.loader.windows import analyze_windows
from linkaudit.model import Binary, Kind, NeededLibrary, NeedKind

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


@functools.cache
def _template() -> Binary:
    (helper,) = read(str(SAMPLES / "pe/imports/helper.dll"))
    return helper


def _dll(path: Path, needs: list[tuple[str, NeedKind]], kind: Kind = Kind.SHARED_LIBRARY, machine: str = "") -> Binary:
    """A PE model at ``path`` (an empty file there, for the search to find) importing ``needs``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")
    template = _template()
    needed = tuple(NeededLibrary(n, k) for n, k in needs)
    return dataclasses.replace(template, path=str(path), needed=needed, kind=kind, machine=machine or template.machine)


def _chain(tmp_path: Path, k: int) -> list[Binary]:
    """D0 ... D{k-1}, D{i} importing D{i+1}.dll and kernel32.dll; D{k}.dll is missing."""
    plain = NeedKind.PLAIN
    return [_dll(tmp_path / f"D{i}.dll", [("kernel32.dll", plain), (f"D{i + 1}.dll", plain)]) for i in range(k)]


def _flat(load: ImageLoad) -> tuple[object, ...]:
    """Everything a load says, in order (the views of a shared load read as lists and dicts)."""
    return (
        load.root,
        load.kind,
        load.machine,
        load.loader,
        load.reached,
        list(load.objects),
        list(load.resolutions.items()),
        list(load.parents.items()),
        list(load.images.items()),
    )


def test_a_chain_of_dlls_is_searched_once_per_name_and_stored_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Each DLL name is searched once for the whole run, and the K loads hold about K distinct
    resolutions and K objects in all: per-root work (K²/2 of each) fails this."""
    searched: list[str] = []
    real = windows._search

    def counting(name, *args):  # type: ignore[no-untyped-def]
        searched.append(name)
        return real(name, *args)

    monkeypatch.setattr(windows, "_search", counting)
    k = 300
    loads = analyze_windows(_chain(tmp_path, k))
    assert len(loads) == k
    assert len(searched) == len(set(searched)) == k  # D1 ... D{k}: each once
    assert [len(ld.objects) for ld in loads[:3]] == [k, k - 1, k - 2]
    distinct = {id(r) for ld in loads for r in ld.resolutions.values()}
    assert len(distinct) <= 2 * k + 2  # kernel32 and the next, per DLL (K²: 90,000)
    assert sum(len(ld.resolutions) for ld in loads) == k * (k + 1)  # each load still says it all
    assert len(list(iter_resolutions(loads))) <= 2 * k + 2  # what the binder indexes: each part once


def _random_tree(rng: random.Random, tmp_path: Path) -> tuple[list[Binary], dict[str, object]]:
    """Random DLLs in ``app`` (and ``extra``, a ``--dll-directory``): imports of later DLLs
    (a DAG, diamonds), of earlier ones (rings), of missing and system DLLs, of themselves, in other
    cases, delay loads; a few executables and extension modules; an i386 copy to skip, a file that is no image."""
    n = rng.randint(2, 14)
    names = [f"L{i}.dll" for i in range(n)]
    binaries = []
    for i in range(n):
        needs: list[tuple[str, NeedKind]] = []
        for _ in range(rng.choice([0, 1, 1, 1, 2, 3])):
            pick = rng.random()
            if pick < 0.55 and i + 1 < n:
                name = names[rng.randint(i + 1, n - 1)]
            elif pick < 0.65:
                name = names[rng.randint(0, i)]  # back: a ring, or itself
            elif pick < 0.75:
                name = f"missing{rng.randint(0, 2)}.dll"
            elif pick < 0.85:
                name = rng.choice(["kernel32.dll", "api-ms-win-crt-runtime-l1-1-0.dll"])
            else:
                name = names[rng.randint(0, n - 1)].upper()
            kind = NeedKind.DELAY_LOAD if rng.random() < 0.1 else NeedKind.PLAIN
            needs.append((name, kind))
        kind = rng.choice([Kind.SHARED_LIBRARY] * 6 + [Kind.EXECUTABLE, Kind.PYTHON_EXTENSION])
        where = "extra" if rng.random() < 0.15 else "app"
        suffix = {Kind.EXECUTABLE: ".exe", Kind.PYTHON_EXTENSION: ".pyd"}.get(kind, ".dll")
        stem = names[i][: -len(".dll")]
        binaries.append(_dll(tmp_path / where / (stem + suffix if suffix != ".dll" else names[i]), needs, kind))
    if rng.random() < 0.3:
        binaries.append(_dll(tmp_path / "app" / "missing0.dll", [], machine="i386"))
    if rng.random() < 0.3:  # found, not an image: loaded by name, nothing to load below it
        (tmp_path / "app" / "missing1.dll").write_bytes(b"not a PE file")
    options = {
        "dll_directories": [str(tmp_path / "extra")] if rng.random() < 0.5 else [],
        "preload": ["L1.dll"] if rng.random() < 0.2 else [],
        "path": [str(tmp_path / "extra")] if rng.random() < 0.3 else [],
    }
    return binaries, options


@pytest.mark.parametrize("seed", range(60))
def test_shared_loads_equal_each_root_loaded_afresh(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    binaries, options = _random_tree(rng, tmp_path)
    shared = analyze_windows(binaries, **options)  # type: ignore[arg-type]
    alone = analyze_windows(binaries, share=False, **options)  # type: ignore[arg-type]
    assert [_flat(ld) for ld in shared] == [_flat(ld) for ld in alone]
    assert shared == alone
    for ld in shared:
        for path in alone[0].objects:
            assert (path in ld.objects) == (path in list(ld.objects))
        assert all(ld.objects[i] == p for i, p in enumerate(list(ld.objects)))


def _exports(add, dll: bytes, names: list[bytes], forwards: list[bytes | None]) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """An export directory: names[j] exported, forwarded to forwards[j] ("DLL.fn") when not None."""
    n, base = len(names), add(b"")
    functions, pointers = base + 40, base + 40 + 4 * n
    strings_at, strings = pointers + 6 * n, bytearray()

    def string(text: bytes) -> int:
        at = strings_at + len(strings)
        strings.extend(text + b"\0")
        return at

    dll_at = string(dll)
    targets = [string(f) if f is not None else 0x1000 for f in forwards]
    named = [string(x) for x in names]
    blob = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, dll_at, 1, n, n, functions, pointers, pointers + 4 * n)
    blob += struct.pack(f"<{n}I", *targets) + struct.pack(f"<{n}I", *named) + struct.pack(f"<{n}H", *range(n))
    add(blob + bytes(strings))
    return {0: (base, len(blob) + len(strings))}


def _imports(add, imports: list[tuple[bytes, bytes]]) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """An import directory: one descriptor per (DLL, function)."""
    descriptors = b""
    for dll, fn in imports:
        table = add(struct.pack("<Q", add(b"\0\0" + fn + b"\0")) + b"\0" * 8)
        descriptors += struct.pack("<5I", table, 0, 0, add(dll + b"\0"), table)
    return {1: (add(descriptors + b"\0" * 20), 20 * (len(imports) + 1))}


def _pe_tree(rng: random.Random, tmp_path: Path) -> None:
    """Real PE files: D{i} exports f (itself, or forwarded to a later or missing DLL) and imports f
    from later DLLs, a missing one, or an earlier one (a ring)."""
    from ..formats.test_hostile_images import _pe

    n = rng.randint(3, 9)
    for i in range(n):
        pick = rng.random()
        forward = None if pick < 0.5 else (b"D%d.f" % rng.randint(i + 1, n + 1) if pick < 0.9 else b"D0.f")
        imports = [(b"D%d.dll" % rng.randint(i + 1, n), b"f") for _ in range(rng.choice([1, 1, 2]))]
        if rng.random() < 0.2:
            imports.append((b"D%d.dll" % rng.randint(0, i), b"f"))

        def build(add, i=i, forward=forward, imports=imports):  # type: ignore[no-untyped-def]
            return {**_exports(add, b"D%d.dll" % i, [b"f"], [forward]), **_imports(add, imports)}

        _pe(tmp_path / f"D{i}.dll", build, "pe/imports/helper.dll")


@pytest.mark.parametrize("seed", range(8))
def test_the_findings_over_shared_loads_equal_the_unshared(tmp_path: Path, seed: int, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every finding of a check of real PE files (forwarders, rings, missing DLLs) is the same with
    the loads shared as with each root loaded afresh."""
    _pe_tree(random.Random(seed), tmp_path)
    config = AuditConfig(target=TargetEnvironment())
    shared = audit([str(tmp_path)], config)
    monkeypatch.setattr(windows, "analyze_windows", functools.partial(analyze_windows, share=False))
    alone = audit([str(tmp_path)], config)
    assert shared.findings and shared.findings == alone.findings
    assert shared.roots == alone.roots


def test_the_windows_loads_out_of_memory_are_one_named_error(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A MemoryError in the Windows loader emulation is one unreadable-input error naming the
    inputs' directory, and the per-file rules still run (before: "internal error", exit 3)."""
    from ..formats.test_hostile_images import _pe

    for i in range(3):
        _pe(
            tmp_path / f"D{i}.dll",
            lambda add, i=i: _imports(add, [(b"D%d.dll" % (i + 1), b"f")]),
            "pe/imports/helper.dll",
        )

    def exhausted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise MemoryError

    monkeypatch.setattr(windows, "analyze_windows", exhausted)
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    errors = [f for f in report.findings if f.rule == "unreadable-input"]
    assert len(errors) == 1 and "ran out of memory" in errors[0].message
    assert errors[0].file == str(tmp_path)
    assert not any(f.rule == "library-not-found" for f in report.findings)


def test_a_dll_found_that_is_no_image_is_loaded_by_name_below_too(tmp_path: Path) -> None:
    """A imports B and X (a file that is no PE image, found and so loaded by name), B imports X:
    in A's load B's import of X is ``loaded``, in B's own load it is searched — A's load is not B's
    with A on top."""
    plain = NeedKind.PLAIN
    binaries = [
        _dll(tmp_path / "A.dll", [("B.dll", plain), ("X.dll", plain)]),
        _dll(tmp_path / "B.dll", [("X.dll", plain)]),
    ]
    (tmp_path / "X.dll").write_bytes(b"not a PE file")
    shared, alone = analyze_windows(binaries), analyze_windows(binaries, share=False)
    assert [_flat(ld) for ld in shared] == [_flat(ld) for ld in alone]
    assert shared[0].resolutions[(str(tmp_path / "B.dll"), "X.dll")].source == "loaded"


def test_a_dll_missing_below_a_chain_names_ten_roots_and_counts_them_all(tmp_path: Path) -> None:
    """K real DLLs, D{i} importing D{i+1}.dll, the last a DLL found nowhere; each DLL its own
    ``LoadLibrary`` root: the one ``library-not-found`` listed every root with its whole chain
    (K²/2 names: K=4,000 was 11 s, 1.5 GB and a 266 MB report).  It now names the first 10 roots,
    as ELF's does, and counts them all (``roots_count``)."""
    from ..formats.test_hostile_images import _pe

    k = 300
    for i in range(k):
        imports = [(b"D%d.dll" % (i + 1), b"f")] if i < k - 1 else [(b"missing.dll", b"x")]

        def build(add, i=i, imports=imports):  # type: ignore[no-untyped-def]
            return {**_exports(add, b"D%d.dll" % i, [b"f"], [None]), **_imports(add, imports)}

        _pe(tmp_path / f"D{i}.dll", build, "pe/imports/helper.dll")
    report = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    (f,) = [f for f in report.findings if f.rule == "library-not-found"]
    roots = f.evidence["roots"]
    assert isinstance(roots, list) and len(roots) == 10
    assert f.evidence["roots_count"] == k
    assert sum(len(r["chain"]) for r in roots) <= 10 * (k + 1)
    assert [r["root"] for r in roots] == sorted(str(tmp_path / f"D{i}.dll") for i in range(k))[:10]  # root order
    assert roots[0]["chain"][-2:] == [str(tmp_path / f"D{k - 1}.dll"), "missing.dll"]


@pytest.mark.parametrize("seed", range(40))
def test_the_loads_holding_each_missing_dll_equal_those_of_the_unshared_loads(tmp_path: Path, seed: int) -> None:
    """``iter_resolution_holders`` over shared loads (a key found at one level of a ``LoadStack``,
    held by every load at or above it) gives, for each import found nowhere, the same first loads
    and count as asking every load afresh: the keys in the same order, ``shown`` cut short."""
    from linkaudit.loader.images import iter_resolution_holders

    rng = random.Random(seed)
    binaries, options = _random_tree(rng, tmp_path)
    shared = analyze_windows(binaries, **options)  # type: ignore[arg-type]
    alone = analyze_windows(binaries, share=False, **options)  # type: ignore[arg-type]

    def missing(key: tuple[str, str], res: object) -> bool:
        return getattr(res, "path", None) is None and not getattr(res, "system", False)

    shown = rng.choice([1, 2, 3, 10])
    expected: dict[tuple[str, str], list[int]] = {}
    for i, load in enumerate(alone):
        for key, res in load.resolutions.items():
            if missing(key, res):
                expected.setdefault(key, []).append(i)
    got = [
        (key, [shared.index(ld) for ld in held], count)
        for key, _res, held, count in iter_resolution_holders(shared, missing, shown)
    ]
    assert got == [(key, held[:shown], len(held)) for key, held in expected.items()]
