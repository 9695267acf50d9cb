"""Hostile Mach-O and PE files built from the committed samples, each a kind a tester found: tables
whose entries share one long name (gigabytes of names from a megabyte file), more DLLs than the
model can number, @rpath bombs, re-export fan-outs and loops, forwarder loops and forwarders to a
missing DLL, symlinked directories reaching one dylib twice, names lief cannot decode.  Each is
refused with the reason, or audited with the finding it deserves — quickly, and nothing else lost."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest

from linkaudit import audit, read
from linkaudit.errors import InputError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
HEADER = (SAMPLES / "macho/fixed/libtorch_cuda.dylib").read_bytes()[:32]
LOAD, ID, REEXPORT = 0xC, 0xD, 0x8000001F


def _padded(text: str | bytes) -> bytes:
    raw = (text.encode() if isinstance(text, str) else text) + b"\0"
    return raw + b"\0" * (-len(raw) % 8)


def _dylib_cmd(cmd: int, name: str | bytes) -> bytes:
    raw = _padded(name)
    return struct.pack("<6I", cmd, 24 + len(raw), 24, 2, 0x10000, 0x10000) + raw


def _rpath_cmd(path: str) -> bytes:
    raw = _padded(path) + b"\0" * 4
    return struct.pack("<3I", 0x8000001C, 12 + len(raw), 12) + raw


def _macho(path: Path, cmds: list[bytes], linkedit: bytes = b"") -> None:
    header = bytearray(HEADER)
    body = b"".join(cmds)
    struct.pack_into("<III", header, 16, len(cmds), len(body), 0x85)  # ncmds, sizeofcmds, flags (TWOLEVEL)
    data = bytes(header) + body
    path.write_bytes(data + b"\0" * (-len(data) % 16) + linkedit)


def _importer(path: Path, dependency: str) -> None:
    """A dylib importing ``_nope`` (two-level, ordinal 1) from ``dependency``."""
    cmds = [_dylib_cmd(ID, "@rpath/libuser.dylib"), _rpath_cmd("@loader_path"), _dylib_cmd(LOAD, dependency)]
    size = 32 + sum(map(len, cmds)) + 24 + 80
    at = size + (-size % 16)
    names = b"\0_nope\0"
    cmds += [
        struct.pack("<6I", 2, 24, at, 1, at + 16, len(names)),  # LC_SYMTAB
        struct.pack("<20I", 0xB, 80, 0, 0, 0, 0, 0, 1, *[0] * 12),  # LC_DYSYMTAB: one undefined
    ]
    _macho(path, cmds, struct.pack("<IBBHQ", 1, 1, 0, 1 << 8, 0) + names)


def test_rpath_bomb_stops_its_search_and_says_so(tmp_path: Path) -> None:
    """400 LC_RPATH entries times 300 @rpath dylibs: the load stops past 100,000 places tried."""
    bomb = tmp_path / "bomb.dylib"
    cmds = [_dylib_cmd(ID, "@rpath/bomb.dylib"), *(_rpath_cmd(f"/nonexistent/d{i:04d}") for i in range(400))]
    _macho(bomb, cmds + [_dylib_cmd(LOAD, f"@rpath/libm{i:04d}.dylib") for i in range(300)])
    found = [f for f in audit([str(bomb)]).findings if f.rule == "library-not-found"]
    assert len(found) == 251  # 250 searched in full (400 places each), the 251st stopped by the budget
    assert found[-1].evidence["attempts"][-1]["detail"] == "search stopped: more than 100000 places tried in this load"


def test_reexport_fan_out_and_loops_end_with_the_finding(tmp_path: Path) -> None:
    """L0 re-exports L1 300 times, L1 L2, L2 L3 (27 million paths unmemoised); A and B re-export
    each other: an import neither exports is unresolved, and the loop is named."""
    fan = tmp_path / "fan"
    fan.mkdir()
    for i in range(3):
        cmds = [_dylib_cmd(ID, f"@rpath/libL{i}.dylib"), _rpath_cmd("@loader_path")]
        _macho(fan / f"libL{i}.dylib", cmds + [_dylib_cmd(REEXPORT, f"@rpath/libL{i + 1}.dylib")] * 300)
    _macho(fan / "libL3.dylib", [_dylib_cmd(ID, "@rpath/libL3.dylib")])
    _importer(fan / "libuser.dylib", "@rpath/libL0.dylib")
    (f,) = [f for f in audit([str(fan)]).findings if f.rule == "unresolved-symbol"]
    assert f.subject == "nope" and f.file.endswith("libuser.dylib")
    loop = tmp_path / "loop"
    loop.mkdir()
    for me, other in (("A", "B"), ("B", "A")):
        cmds = [_dylib_cmd(ID, f"@rpath/lib{me}.dylib"), _rpath_cmd("@loader_path")]
        _macho(loop / f"lib{me}.dylib", [*cmds, _dylib_cmd(REEXPORT, f"@rpath/lib{other}.dylib")])
    _importer(loop / "libuser.dylib", "@rpath/libA.dylib")
    (f,) = [f for f in audit([str(loop)]).findings if f.rule == "unresolved-symbol"]
    assert "(LC_REEXPORT_DYLIB loop)" in f.message


def test_reexports_deeper_than_the_limit_are_a_warning_not_silence(tmp_path: Path) -> None:
    """libL0 re-exports libL1, ... libL69 libL70, which exports nothing: the lookup of ``_nope``
    stops past the depth of 64, not judged — a warning naming the importer, the symbol and the
    limit; before, no finding at all (hostile round 40)."""
    for i in range(70):
        cmds = [_dylib_cmd(ID, f"@rpath/libL{i}.dylib"), _rpath_cmd("@loader_path")]
        _macho(tmp_path / f"libL{i}.dylib", [*cmds, _dylib_cmd(REEXPORT, f"@rpath/libL{i + 1}.dylib")])
    _macho(tmp_path / "libL70.dylib", [_dylib_cmd(ID, "@rpath/libL70.dylib")])
    _importer(tmp_path / "libuser.dylib", "@rpath/libL0.dylib")
    (f,) = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    assert (f.subject, os.path.basename(f.file), f.severity.value) == ("nope", "libuser.dylib", "warning")
    assert "deeper than 64" in f.message and "not judged" in f.message, f.message


def _count_lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names ``image_binding._Exports`` searches (one entry per lookup made, not memoised)."""
    from linkaudit.loader import image_binding

    made: list[str] = []
    real = image_binding._Exports._lookup

    def counted(self, lib, name, depth, load):  # type: ignore[no-untyped-def]
        made.append(name)
        return real(self, lib, name, depth, load)

    monkeypatch.setattr(image_binding._Exports, "_lookup", counted)
    return made


def test_a_mesh_of_reexporting_dylibs_is_searched_once_per_dylib(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """K dylibs each re-exporting every other one (a loop at the bottom of every path): each
    (dylib, name) is searched once per lookup, as dyld's alreadySearched; before, every simple
    path up to depth 16 was walked, (K-1)! of them (K = 10: 25 s; 12: hours; stop 27's D2)."""

    k = 10
    for i in range(k):
        cmds = [_dylib_cmd(ID, f"@rpath/libR{i}.dylib"), _rpath_cmd("@loader_path")]
        _macho(
            tmp_path / f"libR{i}.dylib",
            cmds + [_dylib_cmd(REEXPORT, f"@rpath/libR{j}.dylib") for j in range(k) if j != i],
        )
    _importer(tmp_path / "libuser.dylib", "@rpath/libR0.dylib")
    searched = _count_lookups(monkeypatch)
    (f,) = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    assert f.subject == "nope" and "(LC_REEXPORT_DYLIB loop)" in f.message
    assert 0 < searched.count("nope") <= k * 3, searched.count("nope")  # each load's lookup: once per dylib


def test_one_dylib_reached_through_symlinked_directories_is_loaded_once(tmp_path: Path) -> None:
    lib = tmp_path / "libS.dylib"
    cmds = [_dylib_cmd(ID, "@rpath/libS.dylib"), _rpath_cmd("@loader_path")]
    _macho(lib, [*cmds, _dylib_cmd(LOAD, "@rpath/x/libS.dylib"), _dylib_cmd(LOAD, "@rpath/y/libS.dylib")])
    os.symlink(".", tmp_path / "x")
    os.symlink(".", tmp_path / "y")
    from linkaudit.loader.dyld import analyze_dyld

    (load,) = analyze_dyld(read(str(lib)))
    assert load.objects == [str(lib)]  # not 2**40 spellings of one file


def test_mach_o_names_that_spell_gigabytes_are_refused(tmp_path: Path) -> None:
    """Chained imports all naming one 255 MB zlib-compressed name (a 260 KB file)."""
    names = zlib.compress(b"A" * (255 << 20), 9)
    blob = struct.pack("<7I", 0, 0, 28, 28 + 32, 8, 1, 1) + struct.pack("<I", 1 | 1 << 9) * 8 + names
    cmds = [_dylib_cmd(ID, "@rpath/z.dylib"), _dylib_cmd(LOAD, "@rpath/libnvrtc.12.dylib")]
    at = 32 + sum(map(len, cmds)) + 16
    at += -at % 16
    bad = tmp_path / "z.dylib"
    _macho(bad, [*cmds, struct.pack("<4I", 0x80000034, 16, at, len(blob))], blob)
    with pytest.raises(InputError, match=r"inflate past|longer than 65536 bytes"):
        read(str(bad))


def test_verify_reports_a_file_lief_cannot_decode_and_goes_on(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("lief")
    _macho(tmp_path / "bad.dylib", [_dylib_cmd(ID, "@rpath/b.dylib"), _dylib_cmd(LOAD, b"@rpath/lib\xff\xfe.dylib")])
    r = run_cli("check", "--no-config", "--verify", str(tmp_path / "bad.dylib"), str(SAMPLES / "macho/fixed"))
    assert r.exit_code == 1 and "lief failed: UnicodeDecodeError" in r.stdout and "3 files" in r.stdout


def _pe(path: Path, build, sample: str = "pe/imports/app.dll") -> None:  # type: ignore[no-untyped-def]
    """``sample`` with its last section grown by ``build(add)``'s tables; ``build`` returns
    {data directory index: (rva, size)} to point the directories at them."""
    pefile = pytest.importorskip("pefile")
    data = bytearray((SAMPLES / sample).read_bytes())
    pe = pefile.PE(data=bytes(data), fast_load=True)
    last = pe.sections[-1]

    def add(raw: bytes) -> int:
        rva = last.VirtualAddress + len(data) - last.PointerToRawData
        data.extend(raw)
        return rva

    for index, (rva, size) in build(add).items():
        struct.pack_into("<II", data, pe.OPTIONAL_HEADER.DATA_DIRECTORY[index].get_file_offset(), rva, size)
    data.extend(b"\0" * (-len(data) % 512))
    grown = len(data) - last.PointerToRawData
    struct.pack_into("<II", data, last.get_file_offset() + 8, grown, last.VirtualAddress)
    struct.pack_into("<I", data, last.get_file_offset() + 16, grown)
    path.write_bytes(bytes(data))


def _imports(add, descriptors: int, entries: int, name: bytes) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    hint_name, dll = add(b"\0\0" + name + b"\0"), add(b"helper.dll\0")
    table = add(struct.pack("<Q", hint_name) * entries + b"\0" * 8)
    return {1: (add(struct.pack("<5I", table, 0, 0, dll, table) * descriptors + b"\0" * 20), 20 * descriptors)}


def _exports(add, n: int = 250_000) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    name, function = add(b"E" * 4095 + b"\0"), add(struct.pack("<I", 0x1000))
    names, ordinals, dll = add(struct.pack("<I", name) * n), add(b"\0\0" * n), add(b"helper.dll\0")
    return {0: (add(struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, dll, 1, 1, n, function, names, ordinals)), 40)}


def _many_dlls(add, n: int = 20_000) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    rows = []
    for i in range(n):
        hint_name, dll = add(b"\0\0fn_%d\0" % i), add(b"dll_%d.dll\0" % i)
        rows.append(struct.pack("<5I", (t := add(struct.pack("<QQ", hint_name, 0))), 0, 0, dll, t))
    return {1: (add(b"".join(rows) + b"\0" * 20), 20 * n)}


def _shared_table(add, descriptors: int = 4000, entries: int = 61) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """Descriptors of distinct DLLs all sharing one lookup table: 244,000 imports from about 130 KB,
    past one entry per 4 bytes of the file (stop 27's hostile round 2: a million from 550 KB)."""
    table = add(b"".join(struct.pack("<Q", add(b"\0\0fn_%d\0" % i)) for i in range(entries)) + b"\0" * 8)
    rows = b"".join(struct.pack("<5I", table, 0, 0, add(b"dll_%d.dll\0" % i), table) for i in range(descriptors))
    return {1: (add(rows + b"\0" * 20), 20 * descriptors)}


@pytest.mark.parametrize(
    ("build", "sample", "reason"),
    [
        (lambda add: _imports(add, 1, 250_000, b"A" * 4095), "pe/imports/app.dll", "names spell out more than"),
        (lambda add: _imports(add, 100_000, 1000, b"fn"), "pe/imports/app.dll", "imports and exports in"),
        (_shared_table, "pe/imports/app.dll", "more than 65536 imports and exports in"),
        (_exports, "pe/imports/helper.dll", "names spell out more than"),
        (_many_dlls, "pe/imports/app.dll", "names more than 16384 DLLs"),
        (lambda add: _imports(add, 1, 3, b"fn"), "pe/imports/app.dll", None),  # the control: a sane table
    ],
)
def test_pe_tables_that_spell_gigabytes_or_too_many_dlls_are_refused(tmp_path: Path, build, sample, reason) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.dll"
    _pe(bad, build, sample)
    if reason is None:
        (b,) = read(str(bad))  # the same builder, a sane table: read
        assert b.needed_names == ("helper.dll",)
        return
    with pytest.raises(InputError, match=reason):
        read(str(bad))


def test_pe_forwarder_loops_and_forwarders_to_a_missing_dll(tmp_path: Path) -> None:
    helper = (SAMPLES / "pe/imports/helper.dll").read_bytes()
    app = (SAMPLES / "pe/imports/app.dll").read_bytes()
    (tmp_path / "loop").mkdir()
    (tmp_path / "loop/helper.dll").write_bytes(
        helper.replace(b"nvrtc64_120_0.nvrtcGetPTX", b"helper.forwarded_fn".ljust(25, b"\0"))
    )
    (tmp_path / "loop/app.dll").write_bytes(app)
    found = {f.subject: f for f in audit([str(tmp_path / "loop")]).findings if f.rule == "unresolved-symbol"}
    assert "(forwarder loop)" in found["forwarded_fn"].message and "loop" not in found["absent_fn"].message
    (tmp_path / "gone").mkdir()
    (tmp_path / "gone/helper.dll").write_bytes(helper)
    (tmp_path / "gone/app.dll").write_bytes(app)
    found = [f for f in audit([str(tmp_path / "gone")]).findings if f.rule == "unresolved-symbol"]
    assert any(
        "forwards to nvrtc64_120_0.dll (forwarded_fn), which is neither among the inputs" in f.message for f in found
    )


def _forwarding_exports(add, dll: bytes, names: list[bytes], forwards: list[bytes]) -> dict[int, tuple[int, int]]:  # type: ignore[no-untyped-def]
    """An export directory whose every export forwards: names[j] -> forwards[j] ("DLL.fn")."""
    n, base = len(names), add(b"")
    functions, pointers = base + 40, base + 40 + 4 * n
    strings_at, strings = pointers + 6 * n, bytearray()

    def string(text: bytes) -> int:
        at = strings_at + len(strings)
        strings.extend(text + b"\0")
        return at

    dll_at, forwarded, named = string(dll), [string(f) for f in forwards], [string(x) for x in names]
    blob = struct.pack("<IIHHIIIIIII", 0, 0, 0, 0, dll_at, 1, n, n, functions, pointers, pointers + 4 * n)
    blob += struct.pack(f"<{n}I", *forwarded) + struct.pack(f"<{n}I", *named) + struct.pack(f"<{n}H", *range(n))
    add(blob + bytes(strings))
    return {0: (base, len(blob) + len(strings))}


def test_a_ring_of_forwarding_dlls_is_the_loop_it_is_walked_once(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """20 DLLs forwarding every export to the next, D19 to D0, imported 8 times over from D0: the
    imports are unresolved by a forwarder loop (before: past the depth of 16, reported as nothing),
    and the ring is walked once per name, not once per import (stop 27's hostile round 2)."""

    names = [b"f%d" % j for j in range(5)]
    for i in range(20):
        nxt = b"D%d" % ((i + 1) % 20)
        _pe(
            tmp_path / f"D{i}.dll",
            lambda add, i=i, nxt=nxt: _forwarding_exports(add, b"D%d.dll" % i, names, [nxt + b"." + n for n in names]),
            "pe/imports/helper.dll",
        )

    def importer(add):  # type: ignore[no-untyped-def]
        table = add(b"".join(struct.pack("<Q", add(b"\0\0" + n + b"\0")) for n in names) + b"\0" * 8)
        dll = add(b"D0.dll\0")
        return {1: (add(struct.pack("<5I", table, 0, 0, dll, table) * 8 + b"\0" * 20), 20 * 8)}

    _pe(tmp_path / "app.dll", importer)
    walked = _count_lookups(monkeypatch)
    findings = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    mine = [f for f in findings if f.file.endswith("app.dll")]
    assert mine and all("lead back where they started" in f.message for f in mine)
    assert len(walked) <= 21 * 5 * 21, len(walked)  # per load (21 roots) and name: the ring once


@pytest.mark.parametrize(("n", "ring"), [(3, True), (70, True), (300, True), (70, False), (300, False)])
def test_forwarder_rings_and_chains_of_any_length_are_judged(tmp_path: Path, n: int, ring: bool) -> None:
    """D{i}.dll forwards f to D{i+1}.dll (a ring: D{n-1} to D0; a chain: D{n} missing), and every
    DLL imports f from D0.dll: a ring of any length is the loop the Windows loader cannot resolve,
    a chain ending at a missing DLL fails to load, however long.  Before, past the depth of 64 the
    lookup was "not judged" and gave no finding at all (hostile round 40)."""
    for i in range(n):
        nxt = b"D%d" % ((i + 1) % n if ring else i + 1)

        def build(add, i=i, nxt=nxt):  # type: ignore[no-untyped-def]
            exports = _forwarding_exports(add, b"D%d.dll" % i, [b"f"], [nxt + b".f"])
            table = add(struct.pack("<Q", add(b"\0\0f\0")) + b"\0" * 8)
            dll = add(b"D0.dll\0")
            return {**exports, 1: (add(struct.pack("<5I", table, 0, 0, dll, table) + b"\0" * 20), 40)}

        _pe(tmp_path / f"D{i}.dll", build, "pe/imports/helper.dll")
    findings = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    assert sorted(os.path.basename(f.file) for f in findings) == sorted(f"D{i}.dll" for i in range(n))
    if ring:
        assert all("lead back where they started" in f.message for f in findings), findings[0].message
    else:
        assert all(f"forwards to D{n}.dll (f)" in f.message for f in findings), findings[0].message


def test_copies_of_forwarding_dlls_in_many_directories_are_found_by_index(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """N directories each holding app.dll (importing from A.dll), A.dll forwarding to B.dll and B.dll
    back: a forwarder's DLL outside the load is found by an index of the copies (its own
    directory's first), once per (requester, name) — before, every hop scanned every copy (800
    directories: 20.5 s, quadratic; stop 27's hostile round 2)."""
    from linkaudit.loader import image_binding

    names = [b"f0", b"f1"]
    first = tmp_path / "d0"
    first.mkdir()
    _pe(
        first / "A.dll",
        lambda add: _forwarding_exports(add, b"A.dll", names, [b"B." + n for n in names]),
        "pe/imports/helper.dll",
    )
    _pe(
        first / "B.dll",
        lambda add: _forwarding_exports(add, b"B.dll", names, [b"A." + n for n in names]),
        "pe/imports/helper.dll",
    )

    def importer(add):  # type: ignore[no-untyped-def]
        table = add(b"".join(struct.pack("<Q", add(b"\0\0" + n + b"\0")) for n in names) + b"\0" * 8)
        return {1: (add(struct.pack("<5I", table, 0, 0, add(b"A.dll\0"), table) + b"\0" * 20), 20)}

    _pe(first / "app.dll", importer)
    n = 40
    for i in range(1, n):
        (tmp_path / f"d{i}").mkdir()
        for f in ("A.dll", "B.dll", "app.dll"):  # distinct contents: not read once as copies
            (tmp_path / f"d{i}" / f).write_bytes((first / f).read_bytes() + b"%08d" % i)
    nearest = []
    real = image_binding._Libraries._nearest

    def counted(self, name, requester):  # type: ignore[no-untyped-def]
        nearest.append((requester.path, name))
        return real(self, name, requester)

    monkeypatch.setattr(image_binding._Libraries, "_nearest", counted)
    findings = [f for f in audit([str(tmp_path)]).findings if f.rule == "unresolved-symbol"]
    assert len({f.file for f in findings if f.file.endswith("app.dll")}) == n  # each app's imports: a loop
    assert len(nearest) == len(set(nearest)) <= 4 * n  # once per (requester, name)


def _definer(path: Path, install_name: str, cmds: list[bytes], symbol: bytes | None) -> None:
    """A dylib with ``cmds`` after its LC_ID_DYLIB and, when given, one defined external ``symbol``."""
    cmds = [_dylib_cmd(ID, install_name), _rpath_cmd("@loader_path"), *cmds]
    if symbol is None:
        _macho(path, cmds)
        return
    size = 32 + sum(map(len, cmds)) + 24
    at = size + (-size % 16)
    names = b"\0" + symbol + b"\0"
    cmds.append(struct.pack("<6I", 2, 24, at, 1, at + 16, len(names)))  # LC_SYMTAB, no LC_DYSYMTAB
    _macho(path, cmds, struct.pack("<IBBHQ", 1, 0x0F, 1, 0, 0x1000) + names)


def test_a_lookup_cut_short_by_a_loop_or_the_depth_is_not_reused_from_elsewhere(tmp_path: Path) -> None:
    """A re-exports B and C, B re-exports A, C defines x: x imported from A and from B binds (through
    B -> A -> C) — a lookup of B begun inside A's is not remembered as a loop.  A chain of
    MAX_DEPTH + 2 re-exports: an import from its middle link still gets its finding when one from
    the 1st (too deep to judge: a warning saying so) is audited with it."""
    from linkaudit.loader.image_binding import MAX_DEPTH

    one = tmp_path / "one"
    one.mkdir()
    _definer(
        one / "libA.dylib",
        "@rpath/libA.dylib",
        [_dylib_cmd(REEXPORT, "@rpath/libB.dylib"), _dylib_cmd(REEXPORT, "@rpath/libC.dylib")],
        None,
    )
    _definer(one / "libB.dylib", "@rpath/libB.dylib", [_dylib_cmd(REEXPORT, "@rpath/libA.dylib")], None)
    _definer(one / "libC.dylib", "@rpath/libC.dylib", [], b"_nope")
    _importer(one / "libu.dylib", "@rpath/libA.dylib")
    _importer(one / "libv.dylib", "@rpath/libB.dylib")
    assert [f for f in audit([str(one)]).findings if f.rule == "unresolved-symbol"] == []
    deep = tmp_path / "deep"
    deep.mkdir()
    links = MAX_DEPTH + 2
    for i in range(links):
        more = [_dylib_cmd(REEXPORT, f"@rpath/libL{i + 1}.dylib")] if i < links - 1 else []
        _definer(deep / f"libL{i}.dylib", f"@rpath/libL{i}.dylib", more, None)
    _importer(deep / "libv.dylib", f"@rpath/libL{links // 2}.dylib")
    alone = [(f.file, f.severity.value) for f in audit([str(deep)]).findings if f.rule == "unresolved-symbol"]
    _importer(deep / "libu.dylib", "@rpath/libL0.dylib")
    both = [(f.file, f.severity.value) for f in audit([str(deep)]).findings if f.rule == "unresolved-symbol"]
    assert alone == [(str(deep / "libv.dylib"), "error")]
    assert sorted(both) == [(str(deep / "libu.dylib"), "warning"), *alone]  # too deep: not judged, said


def test_all_loads_together_share_one_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Many files each just under the per-load limit: the run stops searching past the total; the
    load it stopped is left out and said (loader-skipped, naming the limit), never a library
    found nowhere (a load cut short is no evidence)."""
    from linkaudit.loader import dyld

    monkeypatch.setattr(dyld, "MAX_TOTAL_ATTEMPTS", 500)
    for n in range(3):
        cmds = [_dylib_cmd(ID, f"@rpath/b{n}.dylib"), *(_rpath_cmd(f"/nonexistent/d{i:03d}") for i in range(20))]
        _macho(tmp_path / f"b{n}.dylib", cmds + [_dylib_cmd(LOAD, f"@rpath/libm{i:03d}.dylib") for i in range(10)])
    report = audit([str(tmp_path)])
    found = [f for f in report.findings if f.rule == "library-not-found"]
    skipped = [f for f in report.findings if f.rule == "loader-skipped"]
    assert len(found) == 20 and not [f for f in found if "by all loads" in f.message]  # b0's and b1's
    assert [f.file for f in skipped] == [str(tmp_path / "b2.dylib")]  # 25 searches of 20 places, then stopped
    assert "more than 500 places tried by all loads" in skipped[0].message


def test_a_chain_past_the_budget_is_never_a_library_not_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """K dylibs each loading the next by @loader_path, all present, every one a root of its own
    (K^2/2 places): past the run's budget the roots left were each a library-not-found naming
    the file found among the inputs (K = 1,000: 677 false errors); now the loads are shared (K
    searches), and a root the budget still stops is a loader-skipped warning."""
    from linkaudit.loader import dyld

    monkeypatch.setattr(dyld, "MAX_TOTAL_ATTEMPTS", 300)
    k = 40
    for i in range(k):
        cmds = [_dylib_cmd(ID, f"@rpath/libm{i}.dylib")]
        if i + 1 < k:
            cmds.append(_dylib_cmd(LOAD, f"@loader_path/libm{i + 1}.dylib"))
        _macho(tmp_path / f"libm{i}.dylib", cmds)
    report = audit([str(tmp_path)])  # the loads shared: K searches, within 300
    assert not [f for f in report.findings if f.severity.value != "note"]
    monkeypatch.setattr(dyld, "MAX_TOTAL_ATTEMPTS", 20)
    report = audit([str(tmp_path)])
    assert not [f for f in report.findings if f.rule in ("library-not-found", "unresolved-symbol")]
    skipped = [f for f in report.findings if f.rule == "loader-skipped"]
    assert skipped and all(f.severity.value == "warning" for f in skipped)
    monkeypatch.setattr(dyld, "MAX_TOTAL_ATTEMPTS", 250_000)
    assert not [f for f in audit([str(tmp_path)]).findings if f.severity.value != "note"]
