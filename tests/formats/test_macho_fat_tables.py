"""A slice of a universal (fat) Mach-O file is an image of its own: the offsets of its load commands
are from the slice's start, and its tables lie within the slice (``mach-o/fat.h``; dyld maps the
slice alone).  A tester's fat file had 40 tiny slices whose LC_SYMTAB all pointed at one 65,536-entry
table after every slice, which LC_DYSYMTAB's two external ranges each covered: 40 x 2 readings of
it (23 s, 272 MB).  Such a table is now refused, the slice's architecture named; and the ``nlist``
entries decoded from one file are counted against a budget of its size (``EntryBudget``).
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.errors import InputError
from linkaudit.formats import macho_linkedit as L

X86_64, ARM64 = 0x01000007, 0x0100000C
SLICE = 4096
FIRST = 4096  # the first slice's offset: after the fat header, page-aligned
N = 16


def _table(count: int) -> tuple[bytes, bytes]:
    """``count`` defined external ``nlist_64`` entries (``N_SECT | N_EXT``) and their strings."""
    strings, entries = bytearray(b"\0"), bytearray()
    for i in range(count):
        entries += struct.pack("<IBBHQ", len(strings), 0x0F, 1, 0, 0x1000 + i)
        strings += b"_s%03d\0" % i
    return bytes(entries), bytes(strings)


def _slice(cpu: int, symoff: int, stroff: int, strsize: int) -> bytes:
    """A dylib slice of ``SLICE`` bytes: LC_ID_DYLIB, LC_SYMTAB (``N`` symbols at ``symoff``, offsets
    from the slice's start) and LC_DYSYMTAB whose defined and undefined ranges both cover them all."""
    name = b"/usr/lib/libfat.dylib\0\0\0"
    commands = struct.pack("<6I", 0xD, 24 + len(name), 24, 2, 0x10000, 0x10000) + name
    commands += struct.pack("<6I", 0x2, 24, symoff, N, stroff, strsize)
    commands += struct.pack("<2I", 0xB, 80) + struct.pack("<18I", 0, 0, 0, N, 0, N, *([0] * 12))
    header = struct.pack("<IiiIIIII", 0xFEEDFACF, cpu, 3 if cpu == X86_64 else 0, 6, 3, len(commands), 0x80, 0)
    return header + commands


def _fat(path: Path, shared: bool) -> Path:
    """A fat file of an x86_64 and an arm64 slice: each with its own table inside it, or (``shared``)
    both pointing at one table after the two slices."""
    entries, strings = _table(N)
    slices = []
    for k, cpu in enumerate((X86_64, ARM64)):
        base = FIRST + k * SLICE
        at = FIRST + 2 * SLICE - base if shared else 2048  # from the slice's start
        image = _slice(cpu, at, at + len(entries), len(strings))
        if not shared:
            image += bytes(at - len(image)) + entries + strings
        slices.append(image + bytes(SLICE - len(image)))
    fat = struct.pack(">II", 0xCAFEBABE, 2)
    fat += b"".join(
        struct.pack(">iiIII", cpu, 0, FIRST + k * SLICE, SLICE, 12) for k, cpu in enumerate((X86_64, ARM64))
    )
    data = fat + bytes(FIRST - len(fat)) + b"".join(slices) + (entries + strings if shared else b"")
    path.write_bytes(data)
    return path


def test_each_slice_reads_its_own_table(tmp_path: Path) -> None:
    binaries = read(str(_fat(tmp_path / "own.dylib", shared=False)))
    assert [b.machine for b in binaries] == ["x86_64", "arm64"]
    for b in binaries:
        assert sorted({s.name for s in b.symbols if s.defined}) == [f"s{i:03d}" for i in range(N)]


def test_a_table_outside_its_slice_is_refused_naming_the_slice(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        read(str(_fat(tmp_path / "shared.dylib", shared=True)))
    reason = str(info.value)
    assert "the x86_64 slice (4096 bytes at offset 4096)" in reason
    assert f"the LC_SYMTAB symbol table ({N * 16} bytes at offset {2 * SLICE}) runs past the end of its slice" in reason


def test_entries_decoded_from_one_file_are_counted_against_its_size() -> None:
    entries, strings = _table(N)
    buf = entries + strings  # 353 bytes: a budget of 58 entries
    budget = L.EntryBudget(len(buf))
    assert budget.limit == len(buf) // L.NLIST_BUDGET_BYTES == 58
    symtab, both = (0, N, len(entries), len(strings)), (0, N, 0, N)
    # Both LC_DYSYMTAB ranges cover the table: each of its entries is decoded twice, and counted so.
    assert len(L.read_nlist(buf, 0, True, True, symtab, both, None, budget)) == 2 * N
    assert budget.decoded == 2 * N
    # The same table read again, as by a second slice sharing it: 64 entries decoded from 353 bytes.
    with pytest.raises(L.MalformedLinkedit, match="more than 58 symbol table entries decoded from a 353-byte file"):
        L.read_nlist(buf, 0, True, True, symtab, both, None, budget)


@pytest.mark.parametrize(
    ("subtypes", "refused"),
    [
        ((3, 3), True),
        ((3, 0x80000003), True),
        ((3, 8), False),
    ],  # x86_64 twice (a capability bit aside); x86_64 + x86_64h
)
def test_two_slices_of_one_architecture_are_refused(tmp_path: Path, subtypes: tuple[int, int], refused: bool) -> None:
    """lipo refuses a fat file with two slices of one architecture, and which one a loader takes is
    not defined: both were read under one name (``libdup.dylib(x86_64)``), and ``check`` and
    ``diff`` each saw one of them."""
    entries, strings = _table(N)
    image = _slice(X86_64, 2048, 2048 + len(entries), len(strings))
    image += bytes(2048 - len(image)) + entries + strings
    image += bytes(SLICE - len(image))
    fat = struct.pack(">II", 0xCAFEBABE, 2)
    fat += b"".join(struct.pack(">iIIII", X86_64, sub, FIRST + k * SLICE, SLICE, 12) for k, sub in enumerate(subtypes))
    path = tmp_path / "libdup.dylib"
    second = image[:8] + struct.pack("<I", subtypes[1]) + image[12:]  # the slice's own header says it too
    path.write_bytes(fat + bytes(FIRST - len(fat)) + image + second)
    if not refused:
        assert [b.machine for b in read(str(path))] == ["x86_64", "x86_64h"]
        return
    with pytest.raises(InputError) as info:
        read(str(path))
    assert "slices 0 and 1 are both x86_64" in str(info.value) and "lipo refuses" in str(info.value)
