"""Which byte ranges of an ELF file the readers need, planned from its headers as it streams past.

A member of a package cannot be read at random: it is inflated front to back.  ``head_plan``
names, from the ELF header and the program headers at the front, the ranges to keep: the
program and section header tables, PT_DYNAMIC, PT_INTERP, PT_NOTE, every non-executable
PT_LOAD up to ``KEEP_SEGMENT`` bytes (the read-only one in front of ``.text`` holds
``.dynsym``, ``.gnu.version*`` and the relocations; patchelf appends one holding the rewritten
``.dynstr`` and ``.gnu.hash`` at the end), the 64 KiB before each of them and before the section
headers (``.shstrtab``) — but of a read-only one after an executable one only
its first ``RODATA_GUESS`` bytes (``.rodata`` opens it; ``.eh_frame`` and libtorch_cuda.so's
333 MB of ``.nv_fatbin`` follow).
Once the section headers have streamed past, ``missing_after`` names what the readers still
need and was not kept (a section the plan did not foresee): those are kept in a second pass.

Sources: the gABI (ELF header, program and section headers); ``elf.read_elf`` for what is read.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable

from .elf import MAX_RODATA
from .ranges import RangeBytes

#: Bytes of the member's front always kept (the ELF header, the program headers, the first notes).
HEAD = 64 * 1024
#: Non-executable PT_LOAD segments up to this size are kept whole: the first one (the tables in
#: front of ``.text``) and the writable ones (``.dynamic``; patchelf's appended ``.dynstr``).
KEEP_SEGMENT = 64 * 1024 * 1024
#: Of a read-only PT_LOAD after an executable one, the first bytes kept: ``.rodata``, which opens
#: it (libtorch_cpu.so's is 17.9 MB; a larger one, up to ``MAX_RODATA``, is kept by the second pass).
RODATA_GUESS = 20 * 1024 * 1024
#: Bytes kept in front of the section headers and of each PT_LOAD: where ``.shstrtab`` lies (GNU ld
#: puts it right before the section headers; patchelf leaves it before the segment it appends).
NAMES_GUESS = 64 * 1024
#: Section types the readers read (gABI ``SHT_*``): STRTAB, HASH, DYNAMIC, NOTE, DYNSYM,
#: GNU_HASH, GNU_verdef, GNU_verneed, GNU_versym.
_READ_TYPES = frozenset({3, 5, 6, 7, 11, 0x6FFFFFF6, 0x6FFFFFFD, 0x6FFFFFFE, 0x6FFFFFFF})
_PT_LOAD, _PT_DYNAMIC, _PT_INTERP, _PT_NOTE = 1, 2, 3, 4
_PF_X, _PF_W = 1, 2
_SHF_ALLOC = 2
_ET_DYN, _ET_EXEC = 3, 2

Range = tuple[int, int]


def _formats(head: bytes) -> tuple[str, bool] | None:
    """``(struct byte-order prefix, 64-bit)`` of an ELF header, or ``None`` when it is none."""
    if len(head) < 64 or not head.startswith(b"\x7fELF") or head[4] not in (1, 2) or head[5] not in (1, 2):
        return None
    return ("<" if head[5] == 1 else ">"), head[4] == 2


def head_plan(head: bytes, size: int, guesses: bool = True) -> list[Range] | None:
    """The ranges to keep of an ELF shared object or executable of ``size`` bytes, from its first
    bytes ``head`` (at least ``HEAD`` of them, or the whole member); ``None`` when no plan can be
    made from them (not ELF, a relocatable object, program headers outside ``head``): then the
    whole member is needed.  ``guesses=False``: only the ranges the headers name exactly (the
    headers themselves, PT_DYNAMIC, PT_INTERP, PT_NOTE), not the segments that likely hold tables."""
    fmt = _formats(head)
    if fmt is None:
        return None
    end, is64 = fmt
    ehdr = struct.Struct(end + ("HHIQQQIHHHHHH" if is64 else "HHIIIIIHHHHHH"))
    e_type, _m, _v, _entry, phoff, shoff, _fl, _eh, phentsize, phnum, shentsize, shnum, _x = ehdr.unpack_from(head, 16)
    phdr = struct.Struct(end + ("IIQQQQQQ" if is64 else "IIIIIIII"))
    if e_type not in (_ET_DYN, _ET_EXEC) or phentsize < phdr.size or phoff + phnum * phentsize > len(head):
        return None
    keep: list[Range] = [(0, min(HEAD if guesses else phoff + phnum * phentsize, size))]
    keep.append((shoff, max(shnum, 1) * shentsize))
    after_text = False
    for i in range(phnum):
        fields = phdr.unpack_from(head, phoff + i * phentsize)
        p_type, flags, offset, filesz = (
            (fields[0], fields[1], fields[2], fields[5]) if is64 else (fields[0], fields[6], fields[1], fields[4])
        )
        if p_type in (_PT_DYNAMIC, _PT_INTERP, _PT_NOTE):
            keep.append((offset, filesz))
        elif p_type == _PT_LOAD and flags & _PF_X:
            after_text = True
        elif p_type == _PT_LOAD and guesses:
            limit = RODATA_GUESS if after_text and not flags & _PF_W else KEEP_SEGMENT
            keep.append((offset, min(filesz, limit)))
            keep.append((offset - NAMES_GUESS, NAMES_GUESS))
    if guesses:
        keep.append((shoff - NAMES_GUESS, NAMES_GUESS))
    return merge(keep, size)


def missing_after(src: RangeBytes) -> list[Range]:
    """The ranges the readers need that ``src`` (an ELF file's kept ranges) lacks, judged from its
    section headers: the sections of the types the readers read, ``.rodata`` (up to
    ``MAX_RODATA``) and the section name table.  Empty when nothing is missing or the section
    headers themselves were not kept (the readers then report the file as they would)."""
    return [r for r in _wanted(src) or [] if not src.covers(*r)]


def trimmed(src: RangeBytes) -> RangeBytes:
    """``src`` with only what the readers read (``head_plan(guesses=False)`` and the sections of
    ``missing_after``): the segments kept on a guess are let go.  ``src`` itself when that
    cannot be told (no section headers) or something of it is not kept."""
    wanted = _wanted(src)
    exact = (
        head_plan(src[: min(HEAD, len(src))], len(src), guesses=False) if src.covers(0, min(HEAD, len(src))) else None
    )
    if wanted is None or exact is None:
        return src
    ranges = merge([*wanted, *exact], len(src))
    if not all(src.covers(*r) for r in ranges):
        return src
    return RangeBytes(src.path, len(src), [(o, src[o : o + n]) for o, n in ranges])


def _wanted(src: RangeBytes) -> list[Range] | None:
    """The sections the readers read (and the section header table), merged; ``None`` when the
    section headers were not kept or there are none."""
    fmt = _formats(src[:64]) if src.covers(0, 64) else None
    if fmt is None:
        return None
    end, is64 = fmt
    head = src[:64]
    shoff, shentsize, shnum, shstrndx = (
        (*struct.unpack_from(end + "Q", head, 40), *struct.unpack_from(end + "HHH", head, 58))
        if is64
        else (*struct.unpack_from(end + "I", head, 32), *struct.unpack_from(end + "HHH", head, 46))
    )
    shdr = struct.Struct(end + ("IIQQQQIIQQ" if is64 else "IIIIIIIIII"))
    if not shnum or shentsize < shdr.size or not src.covers(shoff, shnum * shentsize):
        return None
    table = src[shoff : shoff + shnum * shentsize]
    sections = [shdr.unpack_from(table, i * shentsize) for i in range(shnum)]
    names = _names_of(src, sections, shstrndx)
    want: list[Range] = []
    for index, (name, sh_type, flags, _addr, offset, sh_size, *_rest) in enumerate(sections):
        if sh_type == 8 or not sh_size:  # SHT_NOBITS
            continue
        if sh_type in _READ_TYPES and (flags & _SHF_ALLOC or index == shstrndx):
            want.append((offset, sh_size))
        elif (
            sh_type == 1
            and flags & _SHF_ALLOC
            and not flags & 4
            and sh_size <= MAX_RODATA
            and (names is None or names.startswith(b".rodata\0", name))
        ):  # allocated, non-executable PROGBITS: .rodata by name, or every one while the names are unknown
            want.append((offset, sh_size))
    return merge([*want, (shoff, shnum * shentsize)], src.size)


def _names_of(src: RangeBytes, sections: list[tuple[int, ...]], shstrndx: int) -> bytes | None:
    """The section name table's bytes when they were kept, else ``None``."""
    if not 0 < shstrndx < len(sections):
        return None
    offset, size = sections[shstrndx][4], sections[shstrndx][5]
    return src[offset : offset + size] if src.covers(offset, size) else None


def merge(ranges: Iterable[Range], size: int) -> list[Range]:
    """``ranges`` clipped to ``[0, size)``, sorted, overlapping and touching ones joined."""
    out: list[list[int]] = []
    for start, stop in sorted((max(o, 0), min(o + n, size)) for o, n in ranges if n > 0 and o < size):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], stop)
        elif stop > start:
            out.append([start, stop])
    return [(a, b - a) for a, b in out]
