"""The COFF reader on the committed samples (sample_bins/coff/, built by sample_bins/build_coff.sh):
objects of three machines, /bigobj, weak externals, COMDAT selections, .drectve directives, x86
decoration, and Windows libraries (static and import) — then the same files compared with
llvm-readobj, and hostile variants of them."""

from __future__ import annotations

import re
import struct
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.errors import InputError
from linkaudit.formats.archive import iter_members
from linkaudit.formats.coff import (
    CoffObject,
    CoffSection,
    CoffSymbol,
    ComdatSelection,
    Directive,
    ImportNameType,
    ImportType,
    StorageClass,
    WeakSearch,
    is_import_member,
    name_gnu_import_dlls,
    parse_directives,
    read_coff,
    read_import_member,
    undecorate,
)
from linkaudit.model import Binding, Format, Kind, SymbolType

from ..tools import find_tool, needs
from .arbuild import header

COFF = Path(__file__).resolve().parents[2] / "sample_bins" / "coff"
NVRTC = sorted(
    f"nvrtc{n}"
    for n in (
        "AddNameExpression", "CompileProgram", "CreateProgram", "DestroyProgram", "GetLoweredName",
        "GetProgramLog", "GetProgramLogSize", "GetPTX", "GetPTXSize",
    )
)  # fmt: skip


def _object(name: str):  # type: ignore[no-untyped-def]
    data = (COFF / name).read_bytes()
    return read_coff(name, data, len(data))


def _imports(name: str):  # type: ignore[no-untyped-def]
    data = (COFF / name).read_bytes()
    return [
        read_import_member(name, data[offset : offset + size])
        for _member, offset, size, _thin in iter_members(name, data, len(data))
        if is_import_member(data[offset : offset + 6])
    ]


def test_machines_and_the_bigobj_header() -> None:
    found = {n: (o.machine, o.bigobj) for n in ("torch_cuda.obj", "torch_cuda_arm64.obj", "decorated.obj", "bigobj.obj")
             for o in [_object(n)]}  # fmt: skip
    assert found == {
        "torch_cuda.obj": ("x86-64", False),
        "torch_cuda_arm64.obj": ("aarch64", False),
        "decorated.obj": ("i386", False),
        "bigobj.obj": ("x86-64", True),
    }
    big = _object("bigobj.obj")
    assert {(s.name, s.undefined) for s in big.iter_externals()} == {("big_defined", False), ("big_external", True)}
    assert [s.name for s in big.sections][:1] == [".text"]


def test_the_seed_objects_reference_nine_nvrtc_functions() -> None:
    for name in ("torch_cuda.obj", "torch_cuda_arm64.obj"):
        undefined = sorted(s.name for s in _object(name).iter_externals() if s.undefined)
        # nvrtcGetLoweredName is declared dllimport: the object references its __imp_ pointer.
        assert undefined == sorted(n if n != "nvrtcGetLoweredName" else "__imp_" + n for n in NVRTC)
    (binary,) = read(str(COFF / "torch_cuda.obj"))
    assert (binary.format, binary.kind, binary.machine, binary.bits) == (Format.COFF, Kind.RELOCATABLE, "x86-64", 64)
    assert binary.link_directives == ("/EXPORT:torch_cuda_compile",)
    assert "torch_cuda_compile" in {s.name for s in binary.symbols.iter_defined()}


def test_weak_external_comdat_common_and_directives() -> None:
    obj = _object("features.obj")
    by_name = {s.name: s for s in obj.symbols}
    weak = by_name["weak_ref"]
    assert (weak.storage_class, weak.undefined, weak.weak) == (StorageClass.WEAK_EXTERNAL, True, True)
    assert (weak.alternate, weak.search) == (".weak.weak_ref.default.exported_fn", WeakSearch.ALIAS)
    common = by_name["common_counter"]
    assert (common.common, common.undefined, common.value) == (True, False, 16)
    assert by_name["undefined_fn"].undefined and not by_name["undefined_fn"].common
    section = obj.sections[by_name["shared_constant"].section - 1]
    assert (section.name, section.comdat) == (".data", ComdatSelection.ANY)  # __declspec(selectany)
    assert [s.comdat for s in obj.sections if s.name == ".text"] == [None]
    assert obj.directives == (
        Directive("DEFAULTLIB", "nvrtc.lib"),
        Directive("INCLUDE", "forced_symbol"),
        Directive("ALTERNATENAME", "maybe_hook=default_hook"),
        Directive("NODEFAULTLIB", "oldnames.lib"),
        Directive("EXPORT", "exported_fn"),
    )
    (binary,) = read(str(COFF / "features.obj"))
    symbols = {s.name: s for s in binary.symbols}
    assert symbols["weak_ref"].binding == Binding.WEAK and not symbols["weak_ref"].defined
    assert (symbols["common_counter"].type, symbols["common_counter"].size) == (SymbolType.COMMON, 16)
    assert binary.comdat_sections == frozenset(
        {by_name["shared_constant"].section, by_name[".refptr.weak_ref"].section}
    )


def test_function_sections_are_nodup_comdats() -> None:
    obj = _object("nodup.obj")
    by_name = {s.name: s for s in obj.symbols}
    for fn in ("nodup_one", "nodup_two"):
        assert obj.sections[by_name[fn].section - 1].comdat == ComdatSelection.NODUPLICATES
    (binary,) = read(str(COFF / "nodup.obj"))
    assert binary.comdat_sections == frozenset()  # a second NODUPLICATES copy is an error: not a COMDAT to fold


def test_x86_decoration_is_undone() -> None:
    found = {s.name: s.undecorated for s in _object("decorated.obj").iter_externals()}
    assert found == {
        "_c_plain": "c_plain",
        "_s_call@8": "s_call",
        "@f_call@8": "f_call",
        "v_call@@8": "v_call",
        "_use_imported": "use_imported",
        "_imported_std@8": "imported_std",
    }
    assert undecorate("__imp__s_call@8", 0x14C) == "__imp_s_call"
    assert undecorate("_name", 0x8664) == "_name"  # x64 names carry no underscore
    assert undecorate("v@@16", 0x8664) == "v"
    assert undecorate("?f@@YAHXZ", 0x14C) == "?f@@YAHXZ"


def test_directive_quoting() -> None:
    assert parse_directives("x", b'\xef\xbb\xbf /DEFAULTLIB:"my lib.lib" -export:f,DATA /merge:.a=.b\0\0') == (
        Directive("DEFAULTLIB", "my lib.lib"),
        Directive("EXPORT", "f,DATA"),
        Directive("MERGE", ".a=.b"),
    )


def test_import_libraries_name_the_dll_of_every_symbol() -> None:
    members = _imports("nvrtc.lib")
    assert {m.dll for m in members} == {"nvrtc64_120_0.dll"}
    assert sorted(m.symbol for m in members if m.name_type == ImportNameType.NAME) == NVRTC
    (version,) = [m for m in members if m.symbol == "nvrtcVersion"]
    assert (version.name_type, version.import_name, version.defines) == (
        ImportNameType.ORDINAL, "#7", ("nvrtcVersion", "__imp_nvrtcVersion"),
    )  # fmt: skip
    (table,) = [m for m in _imports("cuda.lib") if m.symbol == "cuGlobalTable"]
    assert (table.type, table.defines) == (ImportType.DATA, ("__imp_cuGlobalTable",))  # no thunk for data
    assert {m.machine for m in _imports("nvrtc_arm64.lib")} == {"aarch64"}
    binaries = read(str(COFF / "nvrtc.lib"))
    imports = [b for b in binaries if b.kind is Kind.IMPORT_LIBRARY]
    # The ten import members of the one DLL fold into one record (issue 17: torch_cpu.lib's 60,255
    # members were a Binary each), in the place of the first, holding every symbol they define.
    assert len(imports) == 1 and {b.soname for b in imports} == {"nvrtc64_120_0.dll"}
    assert [s.name for s in imports[0].symbols] == [n for m in members for n in m.defines]
    provided = {s.name: s.version.file for b in imports for s in b.symbols if s.version is not None}
    assert provided["nvrtcCreateProgram"] == provided["__imp_nvrtcCreateProgram"] == "nvrtc64_120_0.dll"
    # The import descriptor members are COFF objects of the library, all named after the DLL:
    # told apart by their place, as ``ar``'s N count (the folded record takes its first member's).
    dll = "nvrtc64_120_0.dll"
    assert [b.member for b in binaries] == [dll, f"{dll}#2", f"{dll}#3", f"{dll}#4"]
    assert sum(b.kind is Kind.RELOCATABLE for b in binaries) == 3


def test_x86_import_name_types() -> None:
    plain = {m.symbol: (m.name_type, m.import_name) for m in _imports("legacy32.lib")}
    assert plain == {
        "_Plain@8": (ImportNameType.NAME_NOPREFIX, "Plain@8"),
        "__Fast@8": (ImportNameType.NAME_NOPREFIX, "_Fast@8"),
    }
    killed = {m.symbol: (m.name_type, m.import_name) for m in _imports("legacy32_k.lib")}
    assert killed == {
        "_Plain@8": (ImportNameType.NAME_UNDECORATE, "Plain"),
        "__Fast@8": (ImportNameType.NAME_UNDECORATE, "_Fast"),
    }
    # "Renamed@4 == Original@4": an alias object whose weak externals point at the original.
    aliases = [b for b in read(str(COFF / "legacy32.lib")) if b.kind is Kind.RELOCATABLE]
    weak = sorted(s.name for b in aliases for s in b.symbols if s.binding == Binding.WEAK)
    assert weak == ["_Renamed@4", "__imp__Renamed@4"]


def test_static_library_with_long_member_names() -> None:
    binaries = read(str(COFF / "static.lib"))
    assert [b.member for b in binaries] == ["a_member_name_longer_than_sixteen.obj", "nodup.obj"]
    assert all(b.format is Format.COFF and b.kind is Kind.RELOCATABLE for b in binaries)
    assert binaries[0].link_directives[0] == "/DEFAULTLIB:nvrtc.lib"


def test_show_prints_coff_terms(run_cli) -> None:  # type: ignore[no-untyped-def]
    out = run_cli("show", str(COFF / "features.obj"), str(COFF / "cuda.lib")).stdout
    assert "COFF object, x86-64" in out and "directives   /DEFAULTLIB:nvrtc.lib" in out
    assert "COFF short import member, x86-64" in out and "DLL          nvcuda.dll" in out
    assert "defines      cuInit __imp_cuInit" in out


# --- llvm-readobj as the reference -------------------------------------------------------------


@needs("llvm-readobj")
@pytest.mark.parametrize("name", ["nvrtc.lib", "cuda.lib", "legacy32.lib", "legacy32_k.lib", "nvrtc_arm64.lib"])
def test_import_members_agree_with_llvm_readobj(name: str) -> None:
    tool = find_tool("llvm-readobj").path
    assert tool is not None
    text = subprocess.run([tool, "--coff-imports", str(COFF / name)], capture_output=True, text=True, check=True).stdout
    theirs = []
    for block in text.split("Format: COFF-import-file")[1:]:
        kind = re.search(r"Type: (\w+)", block)
        name_type = re.search(r"Name type: (\w+)", block)
        symbols = re.findall(r"Symbol: (\S+)", block)
        assert kind and name_type
        theirs.append((kind.group(1), name_type.group(1), tuple(sorted(symbols))))
    ours = [(m.type.name.lower(), _READOBJ_NAME_TYPE[m.name_type], tuple(sorted(m.defines))) for m in _imports(name)]
    assert ours == theirs and ours


_READOBJ_NAME_TYPE = {
    ImportNameType.ORDINAL: "ordinal",
    ImportNameType.NAME: "name",
    ImportNameType.NAME_NOPREFIX: "noprefix",
    ImportNameType.NAME_UNDECORATE: "undecorate",
    ImportNameType.NAME_EXPORTAS: "exportas",
}


@needs("llvm-readobj")
@pytest.mark.parametrize(
    "name", ["torch_cuda.obj", "torch_cuda_arm64.obj", "features.obj", "nodup.obj", "decorated.obj", "bigobj.obj"]
)
def test_symbols_and_sections_agree_with_llvm_readobj(name: str) -> None:
    tool = find_tool("llvm-readobj").path
    assert tool is not None
    text = subprocess.run(
        [tool, "--symbols", "--sections", str(COFF / name)], capture_output=True, text=True, check=True
    ).stdout
    obj = _object(name)
    theirs_symbols = re.findall(r"Symbol \{\s+Name: (.*)\n\s+Value: (\d+)\n\s+Section: .*\((-?\d+)\)\n", text)
    ours_symbols = [(s.name, str(s.value), str(s.section)) for s in obj.symbols]
    assert ours_symbols == theirs_symbols
    theirs_sections = re.findall(r"Section \{\s+Number: (\d+)\n\s+Name: (\S+)", text)
    assert [(str(s.number), s.name) for s in obj.sections] == theirs_sections
    selections = re.findall(r"Selection: (\w+) \(0x(\d)\)", text)
    ours_selections = {int(v) for v in (s.comdat for s in obj.sections) if v is not None}
    assert ours_selections == {int(v) for _n, v in selections if v != "0"}


# --- hostile variants --------------------------------------------------------------------------


def _fails(data: bytes) -> InputError:
    with pytest.raises(InputError) as caught:
        read_coff("bad.obj", data, len(data))
    return caught.value


def test_truncated_objects_fail_with_an_offset() -> None:
    data = (COFF / "features.obj").read_bytes()
    for cut in (0, 10, 19, 60, len(data) // 2, len(data) - 1):
        error = _fails(data[:cut])
        assert error.offset is not None and error.path == "bad.obj"


def test_hostile_headers_and_tables() -> None:
    data = bytearray((COFF / "features.obj").read_bytes())
    symtab, nsymbols = struct.unpack_from("<II", data, 8)
    # A name pointing past the string table.
    bad = bytearray(data)
    struct.pack_into("<II", bad, symtab, 0, 0x7FFFFFF0)
    assert "outside the string table" in _fails(bytes(bad)).reason
    # The last record claims aux records past the table's end.
    bad = bytearray(data)
    last = _object("features.obj").symbols[-1].index
    bad[symtab + last * 18 + 17] = nsymbols - last
    assert "aux records past" in _fails(bytes(bad)).reason
    # A section count over the budget.
    bad = bytearray(data)
    struct.pack_into("<H", bad, 2, 0xFFFE)
    assert "runs past the end" in _fails(bytes(bad)).reason
    # An optional header: an image, not an object.
    bad = bytearray(data)
    struct.pack_into("<H", bad, 16, 0xF0)
    assert "optional header" in _fails(bytes(bad)).reason
    # A /bigobj header with the wrong class id; one with a symbol count over the budget.
    big = bytearray((COFF / "bigobj.obj").read_bytes())
    bad = bytearray(big)
    bad[12] ^= 0xFF
    assert "not a /bigobj" in _fails(bytes(bad)).reason
    bad = bytearray(big)
    struct.pack_into("<I", bad, 52, 1 << 30)
    assert "more than" in _fails(bytes(bad)).reason


def test_hostile_import_members() -> None:
    members = {}
    data = (COFF / "nvrtc.lib").read_bytes()
    for _name, offset, size, _thin in iter_members("nvrtc.lib", data, len(data)):
        if is_import_member(data[offset : offset + 6]):
            members[size] = data[offset : offset + size]
    member = next(iter(members.values()))
    with pytest.raises(InputError, match="shorter than its header"):
        read_import_member("m", member[:12])
    with pytest.raises(InputError, match="runs past the member"):
        read_import_member("m", member[:-1])
    with pytest.raises(InputError, match="NUL-terminated"):
        read_import_member("m", member[:20] + b"x" * (len(member) - 20))


def test_a_hostile_member_is_named_in_the_library_error(tmp_path: Path) -> None:
    data = bytearray((COFF / "static.lib").read_bytes())
    ((_name, offset, _size, _thin),) = [m for m in iter_members("s", data, len(data)) if m[0] == "nodup.obj"]
    struct.pack_into("<I", data, offset + 8, 0x7FFFFFF0)  # nodup.obj's symbol table far past its end
    path = tmp_path / "static.lib"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"member nodup\.obj: symbol table"):
        read(str(path))


def test_relocations_name_the_referencing_function_and_are_bounds_checked() -> None:
    obj = _object("torch_cuda.obj")
    assert {s for s, _f in obj.references()} == {s.name for s in obj.iter_externals() if s.undefined}
    assert {f for _s, f in obj.references()} == {"torch_cuda_compile"}
    data = bytearray((COFF / "torch_cuda.obj").read_bytes())
    text = obj.sections[0]
    assert text.name == ".text" and text.relocations
    struct.pack_into("<I", data, 20 + 24, len(data) - 5)  # .text's PointerToRelocations near the end
    assert "relocation records" in _fails(bytes(data)).reason


def _shared_relocations(sections: int, records: int) -> bytes:
    """An x64 object whose ``sections`` section headers all point at one block of ``records``
    relocation records (Microsoft PE/COFF "Section Table", "COFF Relocations (Object Only)")."""
    relocs_at = 20 + 40 * sections
    relocs = b"".join(struct.pack("<IIH", i * 4, 0, 4) for i in range(records))  # IMAGE_REL_AMD64_ADDR32
    text = struct.pack("<8sIIIIIIHHI", b".text", 0, 0, 0, 0, relocs_at, 0, records, 0, 0x60000020)
    symbol = struct.pack("<8sIhHBB", b"f", 0, 1, 0x20, StorageClass.EXTERNAL, 0)
    head = struct.pack("<HHIIIHH", 0x8664, sections, 0, relocs_at + len(relocs), 1, 0, 0)
    return head + text * sections + relocs + symbol + struct.pack("<I", 4)


def test_section_headers_sharing_one_block_of_relocations_are_refused() -> None:
    """A record takes 10 bytes of its own: headers sharing one block spelled 6 million records from
    100 KB (634 MB).  Up to 65,536 records in all (the floor) are read; past them, the file fails at
    the header that went over."""
    data = _shared_relocations(16, 4_000)
    obj = read_coff("ok.obj", data, len(data))
    assert sum(len(s.relocations) for s in obj.sections) == 64_000
    data = _shared_relocations(20, 4_000)
    error = _fails(data)
    assert error.offset == 20 + 16 * 40  # the 17th header: 68,000 records
    assert "relocation records add up to more than 65536" in error.reason
    assert "section headers sharing one block" in error.reason


def _shared_name(symbols: int, length: int = 65_000) -> bytes:
    """An x64 object whose ``symbols`` external references all name one ``length``-byte string of
    the string table (Microsoft PE/COFF "COFF Symbol Table", "COFF String Table")."""
    record = struct.pack("<4sIIhHBB", b"\0\0\0\0", 4, 0, 0, 0x20, StorageClass.EXTERNAL, 0)
    name = b"A" * length + b"\0"
    head = struct.pack("<HHIIIHH", 0x8664, 0, 0, 20, symbols, 0, 0)
    return head + record * symbols + struct.pack("<I", 4 + len(name)) + name


def test_symbol_records_sharing_one_long_name_are_refused() -> None:
    """Each record spelled its own copy: 2,000 records naming one 65,000-byte string were 130 MB of
    names from 101 KB (407 MB).  The names may spell 1 MiB + 4 bytes per byte of the file: 16 such
    records read; of 40 (65,745 bytes: 1,311,556 bytes of names), the 21st record fails."""
    data = _shared_name(16)
    assert [len(s.name) for s in read_coff("ok.obj", data, len(data)).symbols] == [65_000] * 16
    error = _fails(_shared_name(40))
    assert error.offset == 20 + 20 * 18
    assert "spell out more than 1311556 bytes from 65745" in error.reason
    assert "records naming one long string" in error.reason


def _shared_drectve(sections: int, length: int) -> bytes:
    """An x64 object whose ``sections`` ``.drectve`` headers (``IMAGE_SCN_LNK_INFO``) all point at one
    ``length``-byte block holding ``/DEFAULTLIB:a.lib`` (Microsoft PE/COFF, "The .drectve Section")."""
    data_at = 20 + 40 * sections
    header = struct.pack("<8sIIIIIIHHI", b".drectve", 0, 0, length, data_at, 0, 0, 0, 0, 0x100A00)
    head = struct.pack("<HHIIIHH", 0x8664, sections, 0, 0, 0, 0, 0)
    return head + header * sections + b"/DEFAULTLIB:a.lib".ljust(length)


def test_drectve_headers_sharing_one_block_are_refused() -> None:
    """Each header's block was joined whole: 2,000 headers sharing 300,000 bytes were 600 MB of
    directives from 380 KB (36 s, 1.2 GB).  The sections together may be as long as the file."""
    data = _shared_drectve(2, 20)  # 120 bytes
    assert read_coff("ok.obj", data, len(data)).directives == (Directive("DEFAULTLIB", "a.lib"),) * 2
    error = _fails(_shared_drectve(10, 1_000))  # 1,420 bytes
    assert error.offset == 20 + 40  # the second header would make 2,000 bytes
    assert "add up to more than the file's 1420 bytes" in error.reason


class _Counted(int):
    """An int counting the comparisons made with it (in ``compared``)."""

    compared = 0

    def _count(self, other: object, op: str) -> bool:
        _Counted.compared += 1
        return bool(getattr(int(self), op)(other))

    def __lt__(self, other: object) -> bool:
        return self._count(other, "__lt__")

    def __le__(self, other: object) -> bool:
        return self._count(other, "__le__")

    def __gt__(self, other: object) -> bool:
        return self._count(other, "__gt__")

    def __ge__(self, other: object) -> bool:
        return self._count(other, "__ge__")


def test_references_find_each_relocations_function_without_a_scan() -> None:
    """The function of each relocation was found by a scan of its section's functions: R x F
    comparisons (11 s for 20,000 of each from 560 KB).  1,000 of each now take about R log F."""
    functions = tuple(
        CoffSymbol(i, f"f{i}", _Counted(4 * (i // 2)), 1, StorageClass.EXTERNAL, 0x20, f"f{i}") for i in range(1_000)
    )
    ext = CoffSymbol(1_000, "ext", 0, 0, StorageClass.EXTERNAL, 0x20, "ext")
    relocations = tuple((2 * i, 1_000) for i in range(1_000))  # at f(2i)'s start, and between two
    text = CoffSection(1, ".text", 0x60000020, 4_000, 0, relocations=relocations)
    obj = CoffObject("x86-64", 0x8664, False, (text,), (*functions, ext), ())
    _Counted.compared = 0
    assert obj.references() == tuple(("ext", f"f{i}") for i in range(1, 1_000, 2))  # the last of a tie
    assert _Counted.compared < 30_000  # a scan: 1,000,000


def _import_member(symbol: bytes, dll: bytes) -> bytes:
    """A short import member (x64, code, by name) for ``symbol`` in ``dll`` (Microsoft PE/COFF
    "Import Library Format": IMPORT_OBJECT_HEADER then the two names)."""
    names = symbol + b"\0" + dll + b"\0"
    return struct.pack("<HHHHIIHH", 0, 0xFFFF, 0, 0x8664, 0, len(names), 0, 1 << 2) + names


def test_import_members_fold_into_one_record_per_dll(tmp_path: Path) -> None:
    """A record per import member cost more than the rest of the audit (torch's 62,731 members);
    6,000 members of two interleaved DLLs and one object give three records, in first-seen order."""
    obj = (COFF / "nodup.obj").read_bytes()
    members = [(b"nodup.obj/", obj)]
    for i in range(3_000):
        members += [
            (b"a.dll/", _import_member(b"fa%d" % i, b"a.dll")),
            (b"b.dll/", _import_member(b"fb%d" % i, b"b.dll")),
        ]
    body = b"".join(header(name, len(data)) + data + b"\n" * (len(data) & 1) for name, data in members)
    path = tmp_path / "two.lib"
    path.write_bytes(b"!<arch>\n" + body)
    binaries = read(str(path))
    assert [(b.kind, b.member, b.soname) for b in binaries] == [
        (Kind.RELOCATABLE, "nodup.obj", None),
        (Kind.IMPORT_LIBRARY, "a.dll", "a.dll"),
        (Kind.IMPORT_LIBRARY, "b.dll", "b.dll"),
    ]
    a = binaries[1]
    assert len(a.symbols) == 6_000 and a.symbols[1].name == "__imp_fa0" and a.symbols[1].version.file == "a.dll"
    assert a.file_size == sum(len(d) for n, d in members if n == b"a.dll/")
    # A hostile member among them is still named in the library's error.
    path.write_bytes(b"!<arch>\n" + body + header(b"c.dll/", 20) + _import_member(b"x", b"c.dll")[:20])
    with pytest.raises(InputError, match=r"member c\.dll: import member's SizeOfData"):
        read(str(path))


def test_gnu_long_import_format_names_the_dll_through_head_and_tail() -> None:
    """mingw dlltool's .dll.a: one object per symbol referencing ``_head_*``, whose object references
    the tail's ``*_iname``, whose ``.idata$7`` holds the DLL name (binutils dlltool.c)."""
    binaries = read(str(COFF / "nvrtc.dll.a"))
    assert all(b.kind is Kind.RELOCATABLE for b in binaries)
    symbol_objects = [b for b in binaries if any(s.defined and s.name.startswith("__imp_") for s in b.symbols)]
    assert len(symbol_objects) == 10 and {b.soname for b in symbol_objects} == {"nvrtc64_120_0.dll"}
    (head,) = [b for b in binaries if any(s.defined and s.name.startswith("_head_") for s in b.symbols)]
    assert head.soname is None  # the descriptor, not an import
    # The same objects in an ELF-free, tail-free library name no DLL.
    assert name_gnu_import_dlls([head, *symbol_objects[:1]])[1].soname == "nvrtc64_120_0.dll"
    assert name_gnu_import_dlls([replace(b, soname=None) for b in symbol_objects])[0].soname is None


@pytest.mark.parametrize("number", [1, 0x7FFF, 0x80E8, 0xFEFF])
def test_a_regular_objects_section_numbers_are_16_bits_unsigned(tmp_path: Path, number: int) -> None:
    """MSVC writes up to 65,279 sections in a regular object: SectionNumber 1..0xFEFF is a section,
    0xFFFF absolute and 0xFFFE debug (PE/COFF spec, "Section Number Values"). Past 32,767 the object
    was refused: "malformed COFF file: unsigned short is less than minimum"."""
    strings = struct.pack("<I", 4)
    symbols = b"_defined".ljust(8, b"\0") + struct.pack("<IHHBB", 16, number, 0x20, 2, 0)  # EXTERNAL, FUNC
    symbols += b"_abs".ljust(8, b"\0") + struct.pack("<IHHBB", 1, 0xFFFF, 0, 2, 0)  # absolute
    header = struct.pack("<HHIIIHH", 0x8664, 0, 0, 20, 2, 0, 0)
    obj = tmp_path / "many.obj"
    obj.write_bytes(header + symbols + strings)
    (binary,) = read(str(obj))
    by_name = {s.name: s for s in binary.symbols}
    assert by_name["_defined"].defined and by_name["_defined"].section == number
    assert by_name["_abs"].section == 0xFFF1  # SHN_ABS, as ELF's absolute symbols
