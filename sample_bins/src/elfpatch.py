#!/usr/bin/env python3
"""Deterministic ELF byte patches for the linkaudit fixtures (stdlib only).

Used by sample_bins/build.sh.  Every offset is read from the input file's own
ELF header, program headers, section headers or dynamic table, so a patch
stays right after a rebuild changes the layout.

    elfpatch.py strip-shdrs      IN OUT
    elfpatch.py drop-needed      IN OUT NAME
    elfpatch.py truncate         IN OUT NBYTES
    elfpatch.py badclass         IN OUT
    elfpatch.py lying-dynsym     IN OUT
    elfpatch.py lying-phdr       IN OUT
    elfpatch.py lying-dynamic    IN OUT
    elfpatch.py looping-verneed  IN OUT
    elfpatch.py huge-verneednum  IN OUT
    elfpatch.py garbage          OUT NBYTES
    elfpatch.py retag            IN OUT FROM TO   (dynamic tags: AUDIT, RPATH, RUNPATH)
"""

from __future__ import annotations

import hashlib
import struct
import sys

PT_LOAD = 1
PT_DYNAMIC = 2
SHT_DYNSYM = 11
SHT_GNU_VERNEED = 0x6FFFFFFE
DT_NULL = 0
DT_NEEDED = 1
DT_STRTAB = 5
DT_RPATH = 15
DT_RUNPATH = 29
DT_AUDIT = 0x6FFFFEFC
DT_VERNEEDNUM = 0x6FFFFFFF
RETAG_NAMES = {"AUDIT": DT_AUDIT, "RPATH": DT_RPATH, "RUNPATH": DT_RUNPATH}


class Elf:
    def __init__(self, data: bytes) -> None:
        if data[:4] != b"\x7fELF":
            raise SystemExit("elfpatch: input is not ELF")
        self.buf = bytearray(data)
        self.is64 = data[4] == 2
        if data[4] not in (1, 2):
            raise SystemExit("elfpatch: bad EI_CLASS in input")
        self.end = "<" if data[5] == 1 else ">"
        if self.is64:
            (self.e_phoff, self.e_shoff) = struct.unpack_from(self.end + "QQ", data, 0x20)
            (self.e_phentsize, self.e_phnum, self.e_shentsize, self.e_shnum, self.e_shstrndx) = struct.unpack_from(
                self.end + "HHHHH", data, 0x36
            )
        else:
            (self.e_phoff, self.e_shoff) = struct.unpack_from(self.end + "II", data, 0x1C)
            (self.e_phentsize, self.e_phnum, self.e_shentsize, self.e_shnum, self.e_shstrndx) = struct.unpack_from(
                self.end + "HHHHH", data, 0x2A
            )

    # --- generic field access -------------------------------------------------
    def u(self, fmt: str, off: int) -> int:
        return struct.unpack_from(self.end + fmt, self.buf, off)[0]

    def put(self, fmt: str, off: int, value: int) -> None:
        struct.pack_into(self.end + fmt, self.buf, off, value)

    @property
    def addr(self) -> str:
        return "Q" if self.is64 else "I"

    # --- ELF header field offsets ----------------------------------------------
    @property
    def off_e_phoff(self) -> int:
        return 0x20 if self.is64 else 0x1C

    @property
    def off_e_shoff(self) -> int:
        return 0x28 if self.is64 else 0x20

    @property
    def off_e_shnum(self) -> int:
        return 0x3C if self.is64 else 0x30

    @property
    def off_e_shstrndx(self) -> int:
        return 0x3E if self.is64 else 0x32

    # --- program headers ------------------------------------------------------
    def phdrs(self) -> list[dict[str, int]]:
        out = []
        for i in range(self.e_phnum):
            base = self.e_phoff + i * self.e_phentsize
            if self.is64:
                p_type, _p_flags, p_offset, p_vaddr, _pa, p_filesz, p_memsz, _al = struct.unpack_from(
                    self.end + "IIQQQQQQ", self.buf, base
                )
                off_offset, off_filesz = base + 8, base + 32
            else:
                p_type, p_offset, p_vaddr, _pa, p_filesz, p_memsz, _p_flags, _al = struct.unpack_from(
                    self.end + "IIIIIIII", self.buf, base
                )
                off_offset, off_filesz = base + 4, base + 16
            out.append(
                dict(
                    type=p_type,
                    offset=p_offset,
                    vaddr=p_vaddr,
                    filesz=p_filesz,
                    memsz=p_memsz,
                    base=base,
                    off_offset=off_offset,
                    off_filesz=off_filesz,
                )
            )
        return out

    def vaddr_to_offset(self, vaddr: int) -> int:
        for ph in self.phdrs():
            if ph["type"] == PT_LOAD and ph["vaddr"] <= vaddr < ph["vaddr"] + ph["filesz"]:
                return vaddr - ph["vaddr"] + ph["offset"]
        raise SystemExit(f"elfpatch: vaddr {vaddr:#x} not in any PT_LOAD")

    def dynamic_phdr(self) -> dict[str, int]:
        for ph in self.phdrs():
            if ph["type"] == PT_DYNAMIC:
                return ph
        raise SystemExit("elfpatch: no PT_DYNAMIC")

    # --- dynamic table --------------------------------------------------------
    def dyn_entries(self) -> list[tuple[int, int, int]]:
        """(file offset of entry, d_tag, d_val) up to and including DT_NULL."""
        ph = self.dynamic_phdr()
        size = 16 if self.is64 else 8
        out = []
        for i in range(ph["filesz"] // size):
            off = ph["offset"] + i * size
            tag = self.u("q" if self.is64 else "i", off)
            val = self.u(self.addr, off + size // 2)
            out.append((off, tag, val))
            if tag == DT_NULL:
                break
        return out

    def dynstr(self, index: int) -> str:
        strtab = next(v for _o, t, v in self.dyn_entries() if t == DT_STRTAB)
        start = self.vaddr_to_offset(strtab) + index
        stop = self.buf.index(b"\0", start)
        return self.buf[start:stop].decode()

    # --- section headers ------------------------------------------------------
    def shdrs(self) -> list[dict[str, int]]:
        out = []
        for i in range(self.e_shnum):
            base = self.e_shoff + i * self.e_shentsize
            if self.is64:
                name, typ, _fl, _ad, off, size, link, info, _al, _es = struct.unpack_from(
                    self.end + "IIQQQQIIQQ", self.buf, base
                )
                off_size, off_info = base + 32, base + 44
            else:
                name, typ, _fl, _ad, off, size, link, info, _al, _es = struct.unpack_from(
                    self.end + "IIIIIIIIII", self.buf, base
                )
                off_size, off_info = base + 20, base + 28
            out.append(
                dict(
                    name=name,
                    type=typ,
                    offset=off,
                    size=size,
                    link=link,
                    info=info,
                    base=base,
                    off_size=off_size,
                    off_info=off_info,
                )
            )
        return out

    def section_of_type(self, sh_type: int) -> dict[str, int]:
        for sh in self.shdrs():
            if sh["type"] == sh_type:
                return sh
        raise SystemExit(f"elfpatch: no section of type {sh_type:#x}")

    def verneed_offsets(self) -> list[int]:
        """File offsets of each Verneed record, following vn_next."""
        sh = self.section_of_type(SHT_GNU_VERNEED)
        offs, off = [], sh["offset"]
        for _ in range(sh["info"]):
            offs.append(off)
            vn_next = self.u("I", off + 12)
            if vn_next == 0:
                break
            off += vn_next
        return offs


def strip_shdrs(e: Elf) -> bytes:
    """Drop the section header table (and the non-allocated sections after
    the last segment), as `sstrip` does; readers must use PT_DYNAMIC."""
    seg_end = max(ph["offset"] + ph["filesz"] for ph in e.phdrs())
    if e.e_shoff < seg_end:
        raise SystemExit("elfpatch: section headers are not after the segments")
    e.put(e.addr, e.off_e_shoff, 0)
    e.put("H", e.off_e_shnum, 0)
    e.put("H", e.off_e_shstrndx, 0)
    return bytes(e.buf[:seg_end])


def drop_needed(e: Elf, name: str) -> bytes:
    """Remove the DT_NEEDED entry for NAME, shifting later entries up and
    adding a DT_NULL at the end (what patchelf --replace-needed left when
    the replacement already had its own DT_NEEDED)."""
    entries = e.dyn_entries()
    size = 16 if e.is64 else 8
    hit = [i for i, (_o, t, v) in enumerate(entries) if t == DT_NEEDED and e.dynstr(v) == name]
    if len(hit) != 1:
        raise SystemExit(f"elfpatch: expected one DT_NEEDED {name}, found {len(hit)}")
    first = entries[hit[0]][0]
    last_end = entries[-1][0] + size
    e.buf[first : last_end - size] = e.buf[first + size : last_end]
    e.buf[last_end - size : last_end] = bytes(size)
    return bytes(e.buf)


def retag(e: Elf, old: str, new: str) -> bytes:
    """Change the d_tag of the one dynamic entry tagged OLD to NEW; d_val
    (the .dynstr offset) is kept.  GNU ld writes DT_RPATH or DT_RUNPATH, never
    both, so a file with both is linked with `--audit STRING` (a DT_AUDIT entry
    whose string lands in .dynstr) and that entry is retagged DT_RPATH."""
    hit = [off for off, tag, _v in e.dyn_entries() if tag == RETAG_NAMES[old]]
    if len(hit) != 1:
        raise SystemExit(f"elfpatch: expected one DT_{old}, found {len(hit)}")
    if any(tag == RETAG_NAMES[new] for _o, tag, _v in e.dyn_entries()):
        raise SystemExit(f"elfpatch: DT_{new} already present")
    e.put("q" if e.is64 else "i", hit[0], RETAG_NAMES[new])
    return bytes(e.buf)


def badclass(e: Elf) -> bytes:
    e.buf[4] = 7  # EI_CLASS: neither ELFCLASS32 (1) nor ELFCLASS64 (2)
    return bytes(e.buf)


def lying_dynsym(e: Elf) -> bytes:
    sh = e.section_of_type(SHT_DYNSYM)
    e.put(e.addr, sh["off_size"], 0x7FFFFFFF00)
    return bytes(e.buf)


def lying_phdr(e: Elf) -> bytes:
    e.put(e.addr, e.off_e_phoff, len(e.buf) + 0x1000)
    return bytes(e.buf)


def lying_dynamic(e: Elf) -> bytes:
    ph = e.dynamic_phdr()
    e.put(e.addr, ph["off_offset"], len(e.buf) + 0x1000)
    e.put(e.addr, ph["off_filesz"], 0x100000)
    return bytes(e.buf)


def looping_verneed(e: Elf) -> bytes:
    """The last Verneed's vn_next becomes -(distance back to the first record)
    modulo 2**32: with 32-bit offset arithmetic the chain is a cycle."""
    offs = e.verneed_offsets()
    if len(offs) < 2:
        raise SystemExit("elfpatch: need at least two Verneed records")
    e.put("I", offs[-1] + 12, (offs[0] - offs[-1]) & 0xFFFFFFFF)
    return bytes(e.buf)


def huge_verneednum(e: Elf) -> bytes:
    """DT_VERNEEDNUM and the section's sh_info claim 0x7fffffff records; the
    last real record still has vn_next == 0 (a reader that ignores it re-reads
    that record forever)."""
    sh = e.section_of_type(SHT_GNU_VERNEED)
    e.put("I", sh["off_info"], 0x7FFFFFFF)
    size = 16 if e.is64 else 8
    for off, tag, _v in e.dyn_entries():
        if tag == DT_VERNEEDNUM:
            e.put(e.addr, off + size // 2, 0x7FFFFFFF)
            break
    else:
        raise SystemExit("elfpatch: no DT_VERNEEDNUM")
    return bytes(e.buf)


def garbage(n: int) -> bytes:
    out = bytearray(b"\x7fELF")
    block = b"linkaudit-garbage"
    while len(out) < 4 + n:
        block = hashlib.sha256(block).digest()
        out += block
    return bytes(out[: 4 + n])


PATCHES = {
    "badclass": badclass,
    "lying-dynsym": lying_dynsym,
    "lying-phdr": lying_phdr,
    "lying-dynamic": lying_dynamic,
    "looping-verneed": looping_verneed,
    "huge-verneednum": huge_verneednum,
    "strip-shdrs": strip_shdrs,
}


def main(argv: list[str]) -> None:
    if len(argv) < 3:
        raise SystemExit(__doc__)
    cmd = argv[1]
    if cmd == "garbage":
        out, data = argv[2], garbage(int(argv[3]))
    else:
        src, out = argv[2], argv[3]
        with open(src, "rb") as f:
            raw = f.read()
        if cmd == "truncate":
            data = raw[: int(argv[4])]
        elif cmd == "drop-needed":
            data = drop_needed(Elf(raw), argv[4])
        elif cmd == "retag":
            data = retag(Elf(raw), argv[4], argv[5])
        elif cmd in PATCHES:
            data = PATCHES[cmd](Elf(raw))
        else:
            raise SystemExit(f"elfpatch: unknown command {cmd}")
    with open(out, "wb") as f:
        f.write(data)


if __name__ == "__main__":
    main(sys.argv)
