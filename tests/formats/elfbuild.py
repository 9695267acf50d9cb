"""A tiny ELF64 little-endian builder for hostile-input tests: one PT_LOAD over the whole file, offsets == addresses.

Layout: ELF header, two program headers (PT_LOAD, PT_DYNAMIC), then .dynstr,
.dynsym, .gnu.version, .gnu.version_r, .dynamic, then (optionally) the section
headers: null, .dynstr, .dynsym, .gnu.version, .gnu.version_r, .dynamic.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

DT_NULL, DT_NEEDED, DT_STRTAB, DT_SYMTAB, DT_STRSZ, DT_SYMENT = 0, 1, 5, 6, 10, 11
DT_SONAME, DT_RUNPATH = 14, 29
DT_VERSYM, DT_VERNEED, DT_VERNEEDNUM = 0x6FFFFFF0, 0x6FFFFFFE, 0x6FFFFFFF
SHT_STRTAB, SHT_DYNSYM, SHT_DYNAMIC = 3, 11, 6
SHT_GNU_VERNEED, SHT_GNU_VERSYM = 0x6FFFFFFE, 0x6FFFFFFF


def sym(name: int, info: int = 0x12, shndx: int = 0, value: int = 0, size: int = 0) -> bytes:
    """One Elf64_Sym."""
    return struct.pack("<IBBHQQ", name, info, 0, shndx, value, size)


def verneed(file_offset: int, entries: Sequence[tuple[int, int]]) -> bytes:
    """One Verneed record for ``file_offset`` with Vernaux (name offset, vna_other) entries."""
    out = struct.pack("<HHIII", 1, len(entries), file_offset, 16, 0)
    for i, (name, other) in enumerate(entries):
        out += struct.pack("<IHHII", 0, 0, other, name, 16 if i + 1 < len(entries) else 0)
    return out


def build(
    dynstr: bytes,
    dynamic: Sequence[tuple[int, int]] = (),
    dynsym: bytes = b"",
    versym: bytes = b"",
    verneed_blob: bytes = b"",
    sections: bool = True,
    interpreter: str | None = None,
) -> bytes:
    """An ELF64 LE shared object; ``dynamic`` entries come after DT_STRTAB/DT_STRSZ (and the table tags);
    with ``interpreter``, a third program header, PT_INTERP naming it."""
    phnum = 3 if interpreter else 2
    off = 64 + phnum * 56
    at: dict[str, int] = {}
    blobs: list[tuple[int, bytes]] = []

    def place(name: str, blob: bytes) -> None:
        nonlocal off
        off = (off + 7) & ~7
        at[name] = off
        blobs.append((off, blob))
        off += len(blob)

    place("dynstr", dynstr)
    place("dynsym", dynsym)
    place("versym", versym)
    place("verneed", verneed_blob)
    entries = [(DT_STRTAB, at["dynstr"]), (DT_STRSZ, len(dynstr)), *dynamic]
    if dynsym:
        entries += [(DT_SYMTAB, at["dynsym"]), (DT_SYMENT, 24)]
    if versym:
        entries.append((DT_VERSYM, at["versym"]))
    if verneed_blob:
        entries += [(DT_VERNEED, at["verneed"]), (DT_VERNEEDNUM, 1)]
    entries.append((DT_NULL, 0))
    dyn_blob = b"".join(struct.pack("<qQ", t, v) for t, v in entries)
    place("dynamic", dyn_blob)
    interp = interpreter.encode() + b"\0" if interpreter else b""
    if interp:
        place("interp", interp)
    shoff = nsec = 0
    if sections:
        secs = [(0, 0, 0, 0, 0, 0), (SHT_STRTAB, at["dynstr"], len(dynstr), 0, 0, 0)]
        if dynsym:
            secs.append((SHT_DYNSYM, at["dynsym"], len(dynsym), 1, 1, 24))
        if versym:
            secs.append((SHT_GNU_VERSYM, at["versym"], len(versym), 2, 0, 2))
        if verneed_blob:
            secs.append((SHT_GNU_VERNEED, at["verneed"], len(verneed_blob), 1, 1, 0))
        secs.append((SHT_DYNAMIC, at["dynamic"], len(dyn_blob), 1, 0, 16))
        off = (off + 7) & ~7
        shoff, nsec = off, len(secs)
        blobs.append(
            (
                shoff,
                b"".join(
                    struct.pack("<IIQQQQIIQQ", 0, t, 2, o, o, sz, lk, inf, 8, ent) for t, o, sz, lk, inf, ent in secs
                ),
            )
        )
        off += 64 * nsec
    total = off
    ident = b"\x7fELF\x02\x01\x01" + b"\0" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 64, shoff, 0, 64, 56, phnum, 64, nsec, 0)
    ph = struct.pack("<IIQQQQQQ", 1, 4, 0, 0, 0, total, total, 0x1000)
    ph += struct.pack("<IIQQQQQQ", 2, 4, at["dynamic"], at["dynamic"], at["dynamic"], len(dyn_blob), len(dyn_blob), 8)
    if interp:
        ph += struct.pack("<IIQQQQQQ", 3, 4, at["interp"], at["interp"], at["interp"], len(interp), len(interp), 1)
    buf = bytearray(total)
    buf[0 : len(header)] = header
    buf[64 : 64 + len(ph)] = ph
    for where, blob in blobs:
        buf[where : where + len(blob)] = blob
    return bytes(buf)


def section_header_offset(data: bytes) -> int:
    """e_shoff of a file ``build`` made."""
    return int(struct.unpack_from("<Q", data, 0x28)[0])


# --- amplification shapes: small files whose names spell out far more than their size ---------


def needed_into_one_string(count: int = 20_000, length: int = 65_535) -> bytes:
    """An ELF file whose ``count`` DT_NEEDED entries each name a different suffix of one ``length``-byte
    string (20,000 into 64 KiB: a 390 KB file whose names spell 650 MB)."""
    dynstr = b"\0" + b"n" * length + b"\0"
    step = max(1, length // count)
    return build(dynstr, [(DT_NEEDED, 1 + (i * step) % length) for i in range(count)])


def symbols_into_one_string(count: int = 60_000, length: int = 65_535) -> bytes:
    """An ELF file whose ``count`` ``.dynsym`` names are each a different suffix of one ``length``-byte
    string (60,000 into 64 KiB: a 1.5 MB file whose names spell 2 GB), undefined FUNC symbols."""
    dynstr = b"\0libc.so.6\0" + b"s" * length + b"\0"
    step = max(1, length // count)
    names = b"".join(sym(11 + (i * step) % length) for i in range(count))
    return build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + names)


def shared_library(soname: str, needed: Sequence[str] = (), runpath: str = "$ORIGIN") -> bytes:
    """A shared library with DT_SONAME ``soname``, DT_RUNPATH ``runpath`` and DT_NEEDED ``needed``."""
    strings = b"\0"
    at: dict[str, int] = {}
    for s in (soname, runpath, *needed):
        if s not in at:
            at[s] = len(strings)
            strings += s.encode() + b"\0"
    dynamic = [(DT_SONAME, at[soname]), (DT_RUNPATH, at[runpath])] + [(DT_NEEDED, at[n]) for n in needed]
    return build(strings, dynamic)


def diamond_chain(levels: int) -> dict[str, bytes]:
    """File name -> bytes of a diamond-shaped DAG: ``libroot.so`` needs ``lib0a.so`` and ``lib0b.so``,
    each ``libNa/b.so`` needs both ``lib(N+1)a.so`` and ``lib(N+1)b.so``, down to level ``levels``:
    2 ** (levels + 1) paths to each of the last two libraries."""
    files = {"libroot.so": shared_library("libroot.so", ["lib0a.so", "lib0b.so"])}
    for level in range(levels + 1):
        below = [f"lib{level + 1}a.so", f"lib{level + 1}b.so"] if level < levels else []
        for side in "ab":
            files[f"lib{level}{side}.so"] = shared_library(f"lib{level}{side}.so", below)
    return files


def relocatable(symbols: Sequence[tuple[bytes, int, int]]) -> bytes:
    """An x86-64 ELF64 relocatable object (``ET_REL``) with one ``.text`` section and the global
    ``symbols`` — ``(name, st_info, st_shndx)``: ``(b"f", 0x12, 1)`` a function defined in
    ``.text``, ``(b"f", 0x10, 0)`` an undefined reference, ``0x22`` / ``0x20`` weak, ``0xFFF2``
    a COMMON symbol."""
    strtab = b"\0"
    table = [sym(0, 0)]
    for name, info, shndx in symbols:
        table.append(sym(len(strtab), info, shndx, 0, 1 if shndx else 0))
        strtab += name + b"\0"
    shstrtab = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    text, symtab = b"\xc3" * 16, b"".join(table)
    blobs, offsets, off = [], [], 64
    for blob in (text, symtab, strtab, shstrtab):
        offsets.append(off)
        blobs.append(blob + b"\0" * (-len(blob) % 8))
        off += len(blobs[-1])
    shdr = "<IIQQQQIIQQ"
    headers = [
        b"\0" * 64,
        struct.pack(shdr, 1, 1, 6, 0, offsets[0], len(text), 0, 0, 16, 0),
        struct.pack(shdr, 7, 2, 0, 0, offsets[1], len(symtab), 3, 1, 8, 24),  # sh_info 1: all global
        struct.pack(shdr, 15, 3, 0, 0, offsets[2], len(strtab), 0, 0, 1, 0),
        struct.pack(shdr, 23, 3, 0, 0, offsets[3], len(shstrtab), 0, 0, 1, 0),
    ]
    head = struct.pack(
        "<4sBBBBB7sHHIQQQIHHHHHH", b"\x7fELF", 2, 1, 1, 0, 0, b"\0" * 7, 1, 62, 1, 0, 0, off, 0, 64, 0, 0, 64, 5, 4
    )
    return head + b"".join(blobs) + b"".join(headers)
