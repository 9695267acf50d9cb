"""Reference readings of an ELF file, for the differential tests: binutils and pyelftools."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass, field

from ..tools import find_tool

_DYN = re.compile(r"\((NEEDED|SONAME|RPATH|RUNPATH)\)\s+[^\[]*\[(.*)\]$")


@dataclass
class Reading:
    needed: list[str] = field(default_factory=list)
    soname: str | None = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    undefined: set[str] = field(default_factory=set)  # name@version as nm -D prints
    defined: set[str] = field(default_factory=set)


def _tool(name: str) -> str:
    path = find_tool(name).path
    assert path is not None, f"{name}: the test should have been skipped (tests/tools.py)"
    return path


def binutils(path: str, dynamic: bool = True) -> Reading:
    """``readelf -dW`` for the dynamic section, ``nm -D --undefined-only/--defined-only`` for symbols.

    Raises:
        RuntimeError: a tool rejected the file (e.g. nm built without that target).
    """
    out = Reading()
    dyn = subprocess.run([_tool("readelf"), "-dW", path], capture_output=True, text=True, check=True).stdout
    for line in dyn.splitlines():
        m = _DYN.search(line.strip())
        if not m:
            continue
        tag, value = m.groups()
        if tag == "NEEDED":
            out.needed.append(value)
        elif tag == "SONAME":
            out.soname = value
        elif tag == "RPATH":
            out.rpath = tuple(value.split(":"))
        elif tag == "RUNPATH":
            out.runpath = tuple(value.split(":"))
    for flag, target in (("--undefined-only", out.undefined), ("--defined-only", out.defined)):
        # A relocatable object has no dynamic symbols: compare its .symtab's global symbols.
        mode = ["-D"] if dynamic else ["--extern-only"]
        proc = subprocess.run([_tool("nm"), *mode, flag, path], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr.strip())
        for line in proc.stdout.splitlines():
            parts = line.split()
            if not parts:
                continue
            target.add(parts[-1])
    return out


@dataclass
class PyelftoolsSymbol:
    name: str
    value: int
    size: int
    bind: str
    type: str
    visibility: str
    undefined: bool
    version: str | None
    hidden: bool


def has_section_headers(path: str) -> bool:
    from elftools.elf.elffile import ELFFile

    with open(path, "rb") as fh:
        return ELFFile(fh).num_sections() > 0


def pyelftools_reading(path: str) -> tuple[Reading, list[PyelftoolsSymbol], dict[str, list[str]] | None]:
    """Read with pyelftools: dynamic tags, every .dynsym entry (index 1..n) with its version, verneed.

    Without section headers pyelftools finds symbols through the dynamic segment but
    no version sections: versions and verneed are then ``None``.
    """
    from elftools.elf.dynamic import DynamicSection, DynamicSegment
    from elftools.elf.elffile import ELFFile
    from elftools.elf.gnuversions import GNUVerDefSection, GNUVerNeedSection, GNUVerSymSection
    from elftools.elf.sections import SymbolTableSection

    reading = Reading()
    symbols: list[PyelftoolsSymbol] = []
    verneed: dict[str, list[str]] | None = {}
    with open(path, "rb") as fh:
        elf = ELFFile(fh)
        dynamic = None
        dynsym = None
        versym = None
        names: dict[int, str] = {}
        for sec in elf.iter_sections():
            if isinstance(sec, DynamicSection):
                dynamic = sec
            elif isinstance(sec, SymbolTableSection) and sec["sh_type"] == (
                "SHT_SYMTAB" if elf["e_type"] == "ET_REL" else "SHT_DYNSYM"
            ):
                dynsym = sec
            elif isinstance(sec, GNUVerSymSection):
                versym = sec
            elif isinstance(sec, GNUVerNeedSection):
                for vn, auxes in sec.iter_versions():
                    assert verneed is not None
                    lst = verneed.setdefault(vn.name, [])
                    for aux in auxes:
                        lst.append(aux.name)
                        if aux["vna_other"] & 0x7FFF > 1:
                            names[aux["vna_other"] & 0x7FFF] = aux.name
            elif isinstance(sec, GNUVerDefSection):
                for vd, auxes in sec.iter_versions():
                    first = next(iter(auxes), None)
                    if first is not None and vd["vd_ndx"] & 0x7FFF > 1:
                        names[vd["vd_ndx"] & 0x7FFF] = first.name
        if elf.num_sections() == 0:
            verneed = None
        if dynamic is None:
            for seg in elf.iter_segments():
                if isinstance(seg, DynamicSegment):
                    dynamic = seg
        if dynamic is not None:
            for tag in dynamic.iter_tags():
                if tag.entry.d_tag == "DT_NEEDED":
                    reading.needed.append(tag.needed)
                elif tag.entry.d_tag == "DT_SONAME":
                    reading.soname = tag.soname
                elif tag.entry.d_tag == "DT_RPATH":
                    reading.rpath = tuple(tag.rpath.split(":"))
                elif tag.entry.d_tag == "DT_RUNPATH":
                    reading.runpath = tuple(tag.runpath.split(":"))
        if dynsym is not None:
            entries = list(dynsym.iter_symbols())
        elif isinstance(dynamic, DynamicSegment):
            entries = list(dynamic.iter_symbols())
        else:
            entries = []
        for i, sym in enumerate(entries):
            if i == 0:
                continue
            version: str | None = None
            hidden = False
            if verneed is None:
                version = "?"
            elif versym is not None:
                ndx = versym.get_symbol(i).entry["ndx"]
                raw = ndx if isinstance(ndx, int) else {"VER_NDX_LOCAL": 0, "VER_NDX_GLOBAL": 1}[ndx]
                version = names.get(raw & 0x7FFF)
                hidden = bool(raw & 0x8000)
            symbols.append(
                PyelftoolsSymbol(
                    name=sym.name,
                    value=sym["st_value"],
                    size=sym["st_size"],
                    bind=sym["st_info"]["bind"],
                    type=sym["st_info"]["type"],
                    visibility=sym["st_other"]["visibility"],
                    undefined=sym["st_shndx"] == "SHN_UNDEF",
                    version=version,
                    hidden=hidden,
                )
            )
    return reading, symbols, verneed


BIND_NAMES = {0: {"STB_LOCAL"}, 1: {"STB_GLOBAL"}, 2: {"STB_WEAK"}, 10: {"STB_GNU_UNIQUE", "STB_LOOS"}}
TYPE_NAMES = {
    0: {"STT_NOTYPE"},
    1: {"STT_OBJECT"},
    2: {"STT_FUNC"},
    3: {"STT_SECTION"},
    4: {"STT_FILE"},
    5: {"STT_COMMON"},
    6: {"STT_TLS"},
    10: {"STT_GNU_IFUNC", "STT_LOOS"},
}
VIS_NAMES = {0: "STV_DEFAULT", 1: "STV_INTERNAL", 2: "STV_HIDDEN", 3: "STV_PROTECTED"}
