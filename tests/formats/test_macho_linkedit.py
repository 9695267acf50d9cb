"""Our own __LINKEDIT readers (linkaudit/formats/macho_linkedit.py): the export trie, the
chained-fixups imports and the nlist symbol table — on the committed samples, on hand-built tables
of every layout the headers define, and on hostile ones (loops, truncation, counts past the caps)."""

from __future__ import annotations

import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.errors import InputError
from linkaudit.formats import macho_linkedit as L

from ..tools import find_tool, needs

MACHO = Path(__file__).resolve().parents[2] / "sample_bins" / "macho"


def uleb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def node(terminal: bytes, children: list[tuple[bytes, int]]) -> bytes:
    body = uleb(len(terminal)) + terminal + bytes([len(children)])
    for label, offset in children:
        body += label + b"\0" + uleb(offset)
    return body


def build_trie(nodes: list[tuple[bytes, list[tuple[bytes, int]]]]) -> bytes:
    """Lay nodes out in order; children name nodes by index (offsets fixed up, 2-byte ULEBs)."""
    offsets: list[int] = []
    at = 0
    for terminal, children in nodes:
        offsets.append(at)
        at += len(node(terminal, [(lab, 0x80) for lab, _ in children]))  # 0x80: a 2-byte ULEB
    blob = b""
    for terminal, children in nodes:
        fixed = [(lab, offsets[i]) for lab, i in children]
        raw = node(terminal, fixed)
        pad = len(node(terminal, [(lab, 0x80) for lab, _ in children])) - len(raw)
        blob += raw + b"\0" * pad
    return blob


def test_trie_kinds_regular_weak_reexport_and_resolver() -> None:
    trie = build_trie(
        [
            (b"", [(b"_nvrtc", 1), (b"_weak", 4)]),
            (b"", [(b"Create", 2), (b"Alias", 3)]),
            (uleb(0) + uleb(0x1234), []),  # _nvrtcCreate: regular, address 0x1234
            (uleb(L.EXPORT_REEXPORT) + uleb(2) + b"_nvrtcCreateProgram\0", []),  # _nvrtcAlias -> lib 2
            (uleb(L.EXPORT_WEAK_DEFINITION | L.EXPORT_STUB_AND_RESOLVER) + uleb(0x40) + uleb(0x80), []),
        ]
    )
    got = L.read_export_trie(trie, 0, 0, len(trie))
    assert got == [
        L.Entry(b"_nvrtcCreate", True, 0, False, 0x1234),
        L.Entry(b"_nvrtcAlias", True, 2, False, 0, b"_nvrtcCreateProgram"),
        L.Entry(b"_weak", True, 0, True, 0x40),
    ]
    same_name = build_trie([(b"", [(b"_f", 1)]), (uleb(L.EXPORT_REEXPORT) + uleb(1) + b"\0", [])])
    assert L.read_export_trie(same_name, 0, 0, len(same_name)) == [L.Entry(b"_f", True, 1, False, 0, b"_f")]
    assert L.read_export_trie(b"", 0, 0, 0) == []


@pytest.mark.parametrize(
    ("trie", "reason"),
    [
        (build_trie([(b"", [(b"_a", 1)]), (b"", [(b"b", 0)])]), "reached twice"),  # a loop back to the root
        (build_trie([(b"", [(b"_a", 1), (b"_b", 1)]), (uleb(0) + uleb(1), [])]), "reached twice"),
        (node(b"", [(b"_a", 999)]), "past the"),
        (b"\x05\x00", "runs past"),
        (b"\x00\x01_a", "edge label runs past"),
        (b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", "ULEB128"),
    ],
)
def test_hostile_tries_are_refused_with_a_reason(trie: bytes, reason: str) -> None:
    with pytest.raises(L.MalformedLinkedit, match=reason):
        L.read_export_trie(trie, 0, 0, len(trie))


def test_trie_past_the_end_of_the_file_and_name_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(L.MalformedLinkedit, match="runs past the end of the file"):
        L.read_export_trie(b"\0" * 10, 0, 8, 16)
    # A long chain of one-byte edges spells names quadratically: capped.
    chain = [(b"", [(b"x", i + 1)]) for i in range(200)] + [(uleb(0) + uleb(1), [])]
    trie = build_trie(chain)
    monkeypatch.setattr(L, "MAX_TRIE_NAME_BYTES", 5000)
    with pytest.raises(L.MalformedLinkedit, match="spell out more than"):
        L.read_export_trie(trie, 0, 0, len(trie))


def _terminal_chain(depth: int) -> bytes:
    """A trie of one chain of ``depth`` terminal nodes: exports ``a``, ``aa``, ``aaa``, ... (9 bytes a
    node, names spelling depth²/2 bytes): the hostile tester's 06."""
    trie = bytearray(b"\x00\x01a\x00\x87\x80\x00")  # the root: one edge "a" to offset 7 (3-byte ULEB)
    for k in range(depth):
        nxt = len(trie) + 9
        edge = (
            b"\x01a\x00" + bytes([0x80 | nxt & 0x7F, 0x80 | nxt >> 7 & 0x7F, nxt >> 14]) if k < depth - 1 else b"\x00"
        )
        trie += b"\x02\x00\x00" + edge
    return bytes(trie)


def test_a_trie_spelling_more_than_its_size_allows_is_refused() -> None:
    """A chain of terminal nodes spells the square of its depth: a 99 KB trie held 60 MB of names
    (266 MB of memory; 16 such files 1.2 GB, and 1.9 GB written to the cache) under the flat
    64 MiB cap. Names may now spell 1 MiB plus 8 times the trie's bytes."""
    short = _terminal_chain(1000)  # 0.5 MB of names from 9 KB: within the slack
    assert len(L.read_export_trie(short, 0, 0, len(short))) == 1000
    deep = _terminal_chain(4000)  # 8 MB of names from 36 KB: past 1 MiB + 8 x 36 KB
    with pytest.raises(
        L.MalformedLinkedit,
        match=r"export trie: names spell out more than 1336592 bytes \(8 times its 36002 bytes, plus 1 MiB, "
        r"at most 64 MiB\)",
    ):
        L.read_export_trie(deep, 0, 0, len(deep))


def _chain_dylib(path: Path, depth: int) -> None:
    """An x86_64 dylib whose ``LC_DYLD_EXPORTS_TRIE`` is ``_terminal_chain(depth)`` (the hostile
    tester's 06-trie.py)."""
    trie = _terminal_chain(depth)
    name = b"@rpath/libtrie.dylib\0"
    name += b"\0" * (-len(name) % 8)
    lc_id = struct.pack("<6I", 0xD, 24 + len(name), 24, 0, 0x10000, 0x10000) + name
    dataoff = (32 + len(lc_id) + 16 + 7) & ~7
    cmds = lc_id + struct.pack("<4I", 0x80000033, 16, dataoff, len(trie))
    head = struct.pack("<IiiIIIII", 0xFEEDFACF, 0x01000007, 3, 6, 2, len(cmds), 0, 0) + cmds
    path.write_bytes(head + b"\0" * (dataoff - len(head)) + trie)


def test_a_chain_trie_of_a_few_dozen_kilobytes_is_refused_by_name(tmp_path: Path) -> None:
    """The hostile tester's 06 at depth 3,000: a 27 KB dylib whose trie spells 4.5 MB of names
    (``a``, ``aa``, ... 3,000 bytes long) was read under 4 MiB plus 32 times the trie (5.1 MB; 47 MB
    of memory for one file, 7.6 MB of cache a record); its names may now spell 1 MiB plus 8 times
    its 27,002-byte trie, so it is an input error naming the file, and a real file beside it reads."""
    bad = tmp_path / "libtrie.dylib"
    _chain_dylib(bad, 3000)
    assert bad.stat().st_size < 28_000
    with pytest.raises(InputError) as caught:
        read(str(bad))
    assert caught.value.path == str(bad)
    assert "export trie: names spell out more than 1264592 bytes (8 times its 27002 bytes" in caught.value.reason
    assert read(str(MACHO / "chained/libtorch_cuda.dylib"))
    within = tmp_path / "libshort.dylib"  # 1,400 deep: 0.98 MB of names from 12.6 KB, within the budget
    _chain_dylib(within, 1400)
    (binary,) = read(str(within))
    exports = [s for s in binary.symbols if s.defined]
    assert len(exports) == 1400
    assert sum(len(s.name) for s in exports) <= L.names_budget(12_602, L.TRIE_NAME_RATIO)


def _real_macho_files() -> list[Path]:
    """The Mach-O samples, and the real macOS wheels' libraries when cached (``wheels-mac``,
    ``torch-mac-2.9.1``)."""
    from realsite import cache_root

    files = [p for p in MACHO.rglob("*") if p.suffix in (".dylib", ".so") and p.is_file()]
    files += [p for p in (cache_root() / "torch-mac-2.9.1").rglob("*") if p.suffix in (".dylib", ".so")]
    return [p for p in files if p.read_bytes()[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")]


def _exports_and_imports(paths: list[Path]) -> dict[str, list[tuple[str, bool]]]:
    return {str(p): [(s.name, s.defined) for b in read(str(p)) for s in b.symbols] for p in paths}


def test_real_mach_o_names_spell_a_quarter_of_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every real Mach-O file at hand reads with no slack and a quarter of each ratio (a trie's names
    spell at most 1.57 times it, libc10.dylib; a string table's or chained pool's 0.95 times), and
    reads the same symbols as with the budgets lifted."""
    files = _real_macho_files()
    assert len(files) >= 20
    with monkeypatch.context() as mp:
        mp.setattr(L, "NAME_SLACK", 1 << 40)
        mp.setattr(L, "MAX_TRIE_NAME_BYTES", 1 << 40)
        unbounded = _exports_and_imports(files)
    monkeypatch.setattr(L, "NAME_SLACK", 0)
    monkeypatch.setattr(L, "TRIE_NAME_RATIO", L.TRIE_NAME_RATIO // 4)
    monkeypatch.setattr(L, "POOL_NAME_RATIO", L.POOL_NAME_RATIO // 4)
    assert _exports_and_imports(files) == unbounded


def test_real_macos_wheels_read_within_the_budget(tmp_path: Path) -> None:
    """The cached cryptography and orjson macOS wheels' extension modules (universal2) read, every
    slice with its exports, under the default budgets; skips when the wheels are not cached."""
    import zipfile

    from realsite import cache_root

    wheels = sorted((cache_root() / "wheels-mac").glob("*macosx*universal2.whl"))
    if not wheels:
        pytest.skip("no universal2 macOS wheel cached in wheels-mac")
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as z:
            for member in (m for m in z.namelist() if m.endswith(".so")):
                z.extract(member, tmp_path / wheel.stem)
                binaries = read(str(tmp_path / wheel.stem / member))
                assert {b.machine for b in binaries} == {"x86_64", "arm64"}
                assert all(any(s.defined and s.name.startswith("PyInit_") for s in b.symbols) for b in binaries)


def chained_blob(
    imports_format: int, imports: list[tuple[int, bool, int]], names: bytes, compressed: bool = False
) -> bytes:
    rows = b""
    for ordinal, weak, offset in imports:
        if imports_format == 3:
            rows += struct.pack("<QQ", (ordinal & 0xFFFF) | (int(weak) << 16) | (offset << 32), 0)
        else:
            raw = (ordinal & 0xFF) | (int(weak) << 8) | (offset << 9)
            rows += struct.pack("<I", raw) + (struct.pack("<i", 0) if imports_format == 2 else b"")
    symbols = zlib.compress(names) if compressed else names
    header = struct.pack("<7I", 0, 28, 28, 28 + len(rows), len(imports), imports_format, 1 if compressed else 0)
    return header + rows + symbols


@pytest.mark.parametrize("imports_format", [1, 2, 3])
@pytest.mark.parametrize("compressed", [False, True])
def test_chained_imports_every_format(imports_format: int, compressed: bool) -> None:
    names = b"_nvrtcCreateProgram\0_PyFloat_Type\0_opt\0"
    special = {1: 0xFE, 2: 0xFE, 3: 0xFFFE}[imports_format]  # flat lookup in each width
    blob = chained_blob(imports_format, [(1, False, 0), (special, False, 20), (2, True, 34)], names, compressed)
    got = L.read_chained_imports(b"PAD" + blob, 3, 0, len(blob))
    assert got == [
        L.Entry(b"_nvrtcCreateProgram", False, 1, False),
        L.Entry(b"_PyFloat_Type", False, L.DYNAMIC_LOOKUP_ORDINAL, False),
        L.Entry(b"_opt", False, 2, True),
    ]


def test_chained_imports_hostile() -> None:
    with pytest.raises(L.MalformedLinkedit, match="shorter than its header"):
        L.read_chained_imports(b"\0" * 8, 0, 0, 8)
    bad_format = chained_blob(1, [(1, False, 0)], b"_a\0")[:20] + struct.pack("<I", 7) + b"\0" * 20
    with pytest.raises(L.MalformedLinkedit, match="unknown chained-fixups imports format 7"):
        L.read_chained_imports(bad_format, 0, 0, len(bad_format))
    name_outside = chained_blob(1, [(1, False, 500)], b"_a\0")
    with pytest.raises(L.MalformedLinkedit, match="name offset 500"):
        L.read_chained_imports(name_outside, 0, 0, len(name_outside))
    too_many = bytearray(chained_blob(1, [(1, False, 0)], b"_a\0"))
    struct.pack_into("<I", too_many, 16, 1_000_000)  # imports_count past the data
    with pytest.raises(L.MalformedLinkedit, match="runs past"):
        L.read_chained_imports(bytes(too_many), 0, 0, len(too_many))
    bomb = chained_blob(1, [(1, False, 0)], b"A" * (2 << 20), compressed=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(L, "MAX_TRIE_NAME_BYTES", 1 << 20)
        with pytest.raises(L.MalformedLinkedit, match="inflate past"):
            L.read_chained_imports(bomb, 0, 0, len(bomb))


def _load_command(data: bytes, cmd: int) -> int:
    """Offset of the first load command ``cmd`` of a thin 64-bit Mach-O file."""
    ncmds = struct.unpack_from("<I", data, 16)[0]
    at = 32
    for _ in range(ncmds):
        this, size = struct.unpack_from("<II", data, at)
        if this == cmd:
            return at
        at += size
    raise AssertionError(f"no load command {cmd:#x}")


def test_chained_fixups_sample_imports_without_a_symbol_table(tmp_path: Path) -> None:
    """The chained sample's imports come from LC_DYLD_CHAINED_FIXUPS: with LC_SYMTAB emptied they
    are all still there, bound to their dylib; its export (symbol table stripped) from the trie."""
    src = MACHO / "chained/libtorch_cuda.dylib"
    (original,) = read(str(src))
    assert (original.machine, original.min_os) == ("arm64", "12.0")
    data = bytearray(src.read_bytes())
    symtab = _load_command(bytes(data), 0x2)
    struct.pack_into("<II", data, symtab + 8, 0, 0)  # symoff, nsyms
    struct.pack_into("<II", data, symtab + 16, 0, 0)  # stroff, strsize
    dysymtab = _load_command(bytes(data), 0xB)
    struct.pack_into("<6I", data, dysymtab + 8, 0, 0, 0, 0, 0, 0)
    emptied = tmp_path / "libtorch_cuda.dylib"
    emptied.write_bytes(bytes(data))
    (binary,) = read(str(emptied))
    imports = {(s.name, s.version.file if s.version else None) for s in binary.symbols.iter_undefined()}
    assert imports == {
        ("nvrtcCreateProgram", "@rpath/libnvrtc.12.dylib"),
        ("nvrtcCompileProgram", "@rpath/libnvrtc.12.dylib"),
    }
    assert [s.name for s in binary.symbols.iter_defined()] == ["torch_cuda_compile"]
    assert list(binary.symbols) == list(original.symbols)


def test_hostile_linkedit_in_a_real_file_names_the_file(tmp_path: Path) -> None:
    data = bytearray((MACHO / "chained/libtorch_cuda.dylib").read_bytes())
    trie = _load_command(bytes(data), 0x80000033)
    struct.pack_into("<I", data, trie + 8, len(data) + 4096)  # dataoff past the end
    bad = tmp_path / "bad.dylib"
    bad.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"malformed Mach-O file: the export trie .* runs past the end"):
        read(str(bad))


OBJDUMP = find_tool("llvm-objdump").path


def objdump_exports(path: Path, arch: str) -> set[str]:
    assert OBJDUMP is not None
    out = subprocess.run(
        [OBJDUMP, "--macho", "--exports-trie", f"--arch={arch}", str(path)], capture_output=True, text=True
    ).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and (parts[0].startswith("0x") or parts[0] == "[re-export]"):
            names.add(parts[1])
    return names


@needs("llvm-objdump")
def test_exports_agree_with_llvm_objdump_on_every_sample() -> None:
    compared = 0
    for path in sorted(p for p in MACHO.rglob("*") if p.is_file()):
        for binary in read(str(path)):
            arch = "arm64" if binary.machine == "arm64" else "x86_64"
            ours = {"_" + s.name for s in binary.symbols.iter_defined()} | {"_" + f for f, _t in binary.forwarders}
            assert ours == objdump_exports(path, arch), (path, arch)
            compared += 1
    assert compared >= 15


@pytest.mark.parametrize(
    ("patch", "reason"),
    [
        (lambda d: d[:16] + struct.pack("<I", 999) + d[20:], "runs past sizeofcmds"),  # ncmds
        (lambda d: d[:20] + struct.pack("<I", len(d)) + d[24:], "do not fit the file"),  # sizeofcmds
        (lambda d: d[:36] + struct.pack("<I", 4) + d[40:], "has cmdsize 4"),  # first command's cmdsize
        (lambda d: d[:64], "do not fit the file"),  # truncated inside the load commands
    ],
)
def test_hostile_headers_and_load_commands(tmp_path: Path, patch, reason: str) -> None:  # type: ignore[no-untyped-def]
    data = (MACHO / "fixed/libnvrtc.12.dylib").read_bytes()
    bad = tmp_path / "bad.dylib"
    bad.write_bytes(patch(data))
    with pytest.raises(InputError, match=reason):
        read(str(bad))


def test_hostile_fat_headers(tmp_path: Path) -> None:
    data = bytearray((MACHO / "misc/universal.dylib").read_bytes())
    bad = tmp_path / "fat.dylib"
    bad.write_bytes(bytes(data[:4]) + struct.pack(">I", 40) + bytes(data[8:]))  # 38 empty entries
    with pytest.raises(InputError, match="no Mach-O header at offset 0"):
        read(str(bad))
    past = bytearray(data)
    struct.pack_into(">I", past, 8 + 8, len(data))  # first slice's offset: the end of the file
    bad.write_bytes(bytes(past))
    with pytest.raises(InputError, match=r"slice 0 .* runs past the end of the file"):
        read(str(bad))
    name = bytearray((MACHO / "fixed/libtorch_cuda.dylib").read_bytes())
    at = _load_command(bytes(name), 0xD)  # LC_ID_DYLIB: its name offset past the command
    struct.pack_into("<I", name, at + 8, 4096)
    bad.write_bytes(bytes(name))
    with pytest.raises(InputError, match="string offset 4096 lies outside"):
        read(str(bad))


def test_fat_entries_that_overlap_or_lie_about_the_cpu_and_strings_inside_the_structure(tmp_path: Path) -> None:
    data = (MACHO / "misc/universal.dylib").read_bytes()
    bad = tmp_path / "fat.dylib"
    twice = bytearray(data)
    twice[28:48] = twice[8:28]  # the second fat_arch entry a copy of the first: one slice twice
    bad.write_bytes(bytes(twice))
    with pytest.raises(InputError, match="slice 1 overlaps another slice"):
        read(str(bad))
    lying = bytearray(data)
    struct.pack_into(">I", lying, 8, 0x0100000C)  # the first entry says arm64; its slice is x86_64
    bad.write_bytes(bytes(lying))
    with pytest.raises(InputError, match="its fat header says 0x100000c"):
        read(str(bad))
    inside = bytearray((MACHO / "fixed/libtorch_cuda.dylib").read_bytes())
    struct.pack_into("<I", inside, _load_command(bytes(inside), 0xD) + 8, 4)  # name offset inside the struct
    bad.write_bytes(bytes(inside))
    with pytest.raises(InputError, match="string offset 4 lies outside"):
        read(str(bad))
