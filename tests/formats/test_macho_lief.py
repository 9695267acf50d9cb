"""References, not circles: our Mach-O reading (macholib for the load commands, our own
``__LINKEDIT`` readers for the symbols) against two independent readers, slice by slice —

* lief (its own Mach-O parser: load commands, bind opcodes, chained fixups, export trie, nlist), and
* LLVM's tools, where installed: ``llvm-objdump --macho`` (``--private-headers`` for the header and
  every load command, ``--chained-fixups`` for the imports of a chained-fixups image,
  ``--exports-trie`` for exports and re-exports) and ``llvm-nm -m`` (the ``nlist`` table's imports,
  with the library each names, and its defined externals where a slice has no export trie).

Compared per slice: machine, install name, the needed dylibs with their kind, the ``LC_RPATH``
entries in order, minimum OS and SDK, the imports with the library each binds to (two-level ordinal;
flat lookup: none) and whether weak, the exports (weak definitions marked) and the trie's re-exports.
On every file under ``sample_bins/macho/`` and, where it is cached, on the dylibs and extension
modules of the real macOS arm64 torch wheel.  Where a reference legitimately reads differently, the
difference is spelled out below as a narrow exception, with its reason.
"""

from __future__ import annotations

import re
import subprocess
import zipfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from linkaudit import read
from linkaudit.model import Binary, Binding

from ..realsite import cache_root
from ..tools import find_tool, needs

lief = pytest.importorskip("lief")

MACHO = Path(__file__).resolve().parents[2] / "sample_bins" / "macho"
SAMPLES = sorted(p for p in MACHO.rglob("*") if p.is_file() and not p.is_symlink())
MAC_WHEEL = "torch-2.9.1-cp311-none-macosx_11_0_arm64.whl"

#: Files, slices and field values compared, per reference: printed at the end of the module.
TALLY: Counter[str] = Counter()

#: ``mach/machine.h`` cputype, as lief and llvm-objdump spell it -> our machine name.
MACHINES = {"X86_64": "x86_64", "x86_64": "x86_64", "ARM64": "arm64", "arm64": "arm64", "x86": "i386"}
MACHINES |= {"I386": "i386", "i386": "i386", "ARM": "arm", "arm": "arm", "ARM64_32": "arm64_32"}
NEEDS = {
    "LOAD_DYLIB": "plain",
    "LOAD_WEAK_DYLIB": "weak",
    "REEXPORT_DYLIB": "reexport",
    "LOAD_UPWARD_DYLIB": "upward",
    "LAZY_LOAD_DYLIB": "lazy",
}
#: ``mach-o/loader.h``: library ordinals that name no dylib (self, weak lookup, flat lookup, main
#: executable), as 8-bit values and as the signed values lief gives bind opcodes' special ordinals.
SPECIAL_ORDINALS = frozenset({0, 0xFD, 0xFE, 0xFF, -1, -2, -3})
N_WEAK_REF, N_WEAK_DEF = 0x40, 0x80


def _drop_underscore(name: str) -> str:
    return name[1:] if name.startswith("_") else name


# ---------------------------------------------------------------------------------------------
# The three readings, each a list (one entry per slice) of the same dict of fields.


def _ours(path: Path) -> list[dict[str, Any]]:
    return [_our_fields(b) for b in read(str(path))]


def _our_fields(b: Binary) -> dict[str, Any]:
    return {
        "machine": b.machine,
        "install name": b.soname,
        "needed": [(n.name, n.kind.value) for n in b.needed],
        "rpath": list(b.rpath),
        "min os": b.min_os,
        "min os command": b.min_os_command,
        "sdk": b.sdk,
        "imports": sorted(
            {
                (s.name, s.version.file if s.version else None, s.binding is Binding.WEAK)
                for s in b.symbols.iter_undefined()
            }
        ),
        "exports": sorted((s.name, s.binding is Binding.WEAK) for s in b.symbols if s.defined),
        "re-exports": sorted(b.forwarders),
    }


def _lief_version(parts: Any) -> str | None:
    major, minor, patch = list(parts)
    return f"{major}.{minor}.{patch}" if patch else f"{major}.{minor}"


def _liefs(path: Path) -> list[dict[str, Any]]:
    fat = lief.MachO.parse(str(path))
    assert fat is not None, f"lief cannot read {path}"
    return [_lief_fields(fat.at(i)) for i in range(len(fat))]


def _lief_fields(x: Any) -> dict[str, Any]:
    kinds = [(c.name, str(c.command).rsplit(".", 1)[-1]) for c in x.libraries]
    needed = [(name, NEEDS[kind]) for name, kind in kinds if kind in NEEDS]
    twolevel = "TWOLEVEL" in {str(f).rsplit(".", 1)[-1] for f in x.header.flags_list}
    min_os = sdk = command = None
    if x.has_build_version:
        min_os, sdk = _lief_version(x.build_version.minos), _lief_version(x.build_version.sdk)
        command = "LC_BUILD_VERSION"
    elif x.has_version_min and str(x.version_min.command).endswith("VERSION_MIN_MACOSX"):
        min_os, sdk = _lief_version(x.version_min.version), _lief_version(x.version_min.sdk)
        command = "LC_VERSION_MIN_MACOSX"

    def library(ordinal: int) -> str | None:
        if not twolevel or ordinal in SPECIAL_ORDINALS:
            return None
        return needed[ordinal - 1][0] if ordinal <= len(needed) else f"#ordinal {ordinal}"

    # What dyld binds: lief's reading of the bind opcodes (classic) or of the chained fixups.  The
    # weak-bind table is left out: it is dyld's coalescing of weak definitions across images and
    # names no library (a symbol imported from libc++ that is also in it is still libc++'s).
    bound: dict[str, tuple[int, bool]] = {}
    for bi in x.bindings:
        if bi.has_symbol and str(getattr(bi, "binding_class", "")).rsplit(".", 1)[-1] != "WEAK":
            bound.setdefault(bi.symbol.name, (bi.library_ordinal, bi.weak_import))
    if x.has_dyld_chained_fixups:
        # Only the chained imports table (lief lists the undefined nlist entries too, bound or not:
        # lld leaves dyld_stub_binder there); its weak-lookup imports of symbols this image
        # defines are imports in dyld's eyes, which lief's imported_symbols leaves out.
        entries = [(name, ordinal, weak) for name, (ordinal, weak) in bound.items()]
    else:
        entries = []
        for sym in x.imported_symbols:
            nlist = (sym.library_ordinal, bool(sym.description & N_WEAK_REF))
            entries.append((sym.name, *bound.get(sym.name, nlist)))
    imports = {(_drop_underscore(name), library(ordinal), weak) for name, ordinal, weak in entries}
    exports, reexports = [], []
    # lief's exported_symbols leaves out what only the trie names (a stripped image's exports):
    # its trie reader is asked directly, and the nlist table only where there is no trie.
    if x.has_dyld_exports_trie:
        trie = list(x.dyld_exports_trie.exports)
    elif x.has_dyld_info and x.dyld_info.export_info[1]:
        trie = list(x.dyld_info.exports)
    else:
        trie = None
    for s in x.exported_symbols if trie is None else ():
        exports.append((_drop_underscore(s.name), bool(s.description & N_WEAK_DEF)))
    for info in trie or ():
        name = info.symbol.name
        flags = {str(f).rsplit(".", 1)[-1] for f in info.flags_list}
        if "REEXPORT" in flags:
            target = info.alias.name if info.alias is not None and info.alias.name else name
            lib = info.alias_library.name if info.alias_library is not None else "?"
            reexports.append((_drop_underscore(name), f"{lib}:{_drop_underscore(target)}"))
        else:
            exports.append((_drop_underscore(name), "WEAK_DEFINITION" in flags))
    return {
        "machine": MACHINES.get(str(x.header.cpu_type).rsplit(".", 1)[-1], str(x.header.cpu_type)),
        "install name": next((name for name, kind in kinds if kind == "ID_DYLIB"), None),
        "needed": needed,
        "rpath": [r.path for r in x.rpaths],
        "min os": min_os,
        "min os command": command,
        "sdk": sdk,
        "imports": sorted(imports),
        "exports": sorted(exports),
        "re-exports": sorted(reexports),
    }


# --- LLVM -------------------------------------------------------------------------------------


OBJDUMP, NM = find_tool("llvm-objdump").path, find_tool("llvm-nm").path
_SLICE = re.compile(r"^(?P<file>.+?) \((?:for )?architecture (?P<arch>\S+)\):$")


def _run(*command: str) -> str:
    proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, f"{' '.join(command)}: {proc.stderr.strip()}"
    return proc.stdout


def _by_slice(text: str, path: Path) -> list[list[str]]:
    """Split a tool's output on its per-file / per-architecture headings, one list of lines per slice."""
    slices: list[list[str]] = []
    for line in text.splitlines():
        if _SLICE.match(line) or line == f"{path}:":
            slices.append([])
        elif line:
            if not slices:  # llvm-nm names no file when given one thin file
                slices.append([])
            slices[-1].append(line)
    return slices


def short_name(install_name: str) -> str:
    """The short name LLVM prints for a dylib (``(from libnvrtc.12)``): the last path component
    without ``.dylib``, a one-letter version (``libSystem.B``) and a ``_debug``/``_profile`` suffix;
    ``Foo`` for a framework ``Foo.framework/[Versions/A/]Foo``.  After LLVM's
    ``MachOObjectFile::guessLibraryShortName``; the whole name where it finds none."""
    base = install_name.rsplit("/", 1)[-1]
    framework = re.search(r"(?:^|/)([^/]+)\.framework/(?:Versions/[^/]+/)?([^/]+)$", install_name)
    if framework and framework.group(2).removesuffix("_debug").removesuffix("_profile") == framework.group(1):
        return framework.group(1)
    if not base.endswith(".dylib"):
        return install_name
    stem = base[: -len(".dylib")]
    if len(stem) >= 2 and stem[-2] == ".":
        stem = stem[:-2]
    for suffix in ("_debug", "_profile"):
        stem = stem.removesuffix(suffix)
    return stem


def _llvm(path: Path) -> list[dict[str, Any]]:
    assert OBJDUMP is not None and NM is not None
    headers = _by_slice(_run(OBJDUMP, "--macho", "--arch=all", "--private-headers", str(path)), path)
    slices = [_llvm_load_commands(lines) for lines in headers]
    if any(s["chained"] for s in slices):
        text = _run(OBJDUMP, "--macho", "--arch=all", "--chained-fixups", str(path))
        for s, lines in zip(slices, _by_slice(text, path), strict=True):
            s["chained imports"] = _llvm_chained_imports(lines)
    tries = _llvm_exports_trie(path, slices)
    symbols = _by_slice(_run(NM, "-m", "--arch=all", str(path)), path)
    out = []
    for s, trie, nlist in zip(slices, tries, symbols, strict=True):
        out.append(_llvm_fields(s, trie, nlist))
    return out


def _llvm_exports_trie(path: Path, slices: list[dict[str, Any]]) -> list[list[str]]:
    command = [OBJDUMP or "", "--macho", "--arch=all", "--exports-trie", str(path)]
    proc = subprocess.run(command, capture_output=True, text=True, check=False, timeout=600)
    if proc.returncode and "(node is not an export node in export trie data at node: 0x0)" in proc.stderr:
        # Exception: ld64 writes the trie of a dylib that exports nothing as a root with neither
        # terminal information nor children (libtorch.dylib, libtorch_global_deps.dylib: 8 zero
        # bytes).  dyld and lief read that as no exports; llvm-objdump 16 refuses it.  Accepted
        # only for a thin file whose trie starts so: then its reading is no exports.
        (s,) = slices
        (info,) = [c for c in s["commands"] if c.get("cmd") in ("LC_DYLD_INFO", "LC_DYLD_INFO_ONLY")]
        with path.open("rb") as fh:
            fh.seek(int(info["export_off"]))
            assert fh.read(2) == b"\0\0", proc.stderr
        return [[]]
    assert proc.returncode == 0, f"{' '.join(command)}: {proc.stderr.strip()}"
    return _by_slice(proc.stdout, path)


def _llvm_load_commands(lines: list[str]) -> dict[str, Any]:
    s: dict[str, Any] = {"commands": [], "chained": False, "trie": False}
    header = lines.index("Mach header")
    values = lines[header + 2].split()
    s["machine"], s["twolevel"] = MACHINES.get(values[1], values[1]), "TWOLEVEL" in values[7:]
    command: dict[str, str] = {}
    for line in lines[header + 3 :]:
        key, _, value = line.strip().partition(" ")
        if key == "Load":
            command = {}
            s["commands"].append(command)
        elif key == "cmd":
            command["cmd"] = value.strip()
        elif key in ("name", "path", "minos", "sdk", "version", "export_off", "export_size"):
            command.setdefault(key, re.sub(r" \(offset \d+\)$", "", value.strip()))
    for c in s["commands"]:
        if c.get("cmd") == "LC_DYLD_CHAINED_FIXUPS":
            s["chained"] = True
        if c.get("cmd") == "LC_DYLD_EXPORTS_TRIE" or (
            c.get("cmd") in ("LC_DYLD_INFO", "LC_DYLD_INFO_ONLY") and int(c.get("export_size", "0"))
        ):
            s["trie"] = True
    return s


def _llvm_chained_imports(lines: list[str]) -> list[tuple[int, bool, str]]:
    out, entry = [], {}
    for line in lines:
        key, _, value = line.strip().partition(" = ")
        if key in ("lib_ordinal", "weak_import", "name_offset"):
            entry[key] = value
            if key == "name_offset":
                ordinal = int(entry["lib_ordinal"].split()[0])
                name = re.fullmatch(r"\d+ \((.*)\)", value)
                assert name is not None, line
                out.append((ordinal & 0xFF if ordinal < 0 else ordinal, entry["weak_import"] == "1", name.group(1)))
                entry = {}
    return out


_NM = re.compile(
    r"^(?:[0-9a-f]+ )?\s*\((?P<section>[^)]*)\) (?:\[[^\]]*\] )*(?P<weak>weak )?"
    r"(?P<ext>external|private external|non-external)"
    r"(?: \[[^\]]*\]| \(was a private external\))* (?P<name>.+?)(?: \((?P<note>from [^()]+|dynamically looked up)\))?$"
)


def _llvm_fields(s: dict[str, Any], trie: list[str], nlist: list[str]) -> dict[str, Any]:
    commands = s["commands"]
    needed = [(c["name"], NEEDS[c["cmd"][3:]]) for c in commands if c.get("cmd", "")[3:] in NEEDS]
    min_os = sdk = command = None
    for c in commands:
        if c.get("cmd") == "LC_BUILD_VERSION":
            min_os, sdk, command = c["minos"], c["sdk"], c["cmd"]
        elif c.get("cmd") == "LC_VERSION_MIN_MACOSX" and min_os is None:
            min_os, sdk, command = c["version"], c["sdk"], c["cmd"]
    if sdk == "n/a":  # llvm-objdump prints an SDK version of 0 as "n/a"; ours reads it as 0.0
        sdk = "0.0"

    def library(ordinal: int) -> str | None:
        if not s["twolevel"] or ordinal in SPECIAL_ORDINALS:
            return None
        return needed[ordinal - 1][0] if ordinal <= len(needed) else f"#ordinal {ordinal}"

    def by_short_name(note: str | None) -> str | None:
        # llvm-nm names the library by its short name only: map it back to the one dylib so named.
        if note is None or not note.startswith("from ") or note == "from executable":
            return None  # "(dynamically looked up)", "(from executable)", or a flat image (no note)
        if note.startswith("from bad library ordinal "):  # the weak-lookup ordinal: flat
            ordinal = int(note.rsplit(" ", 1)[-1])
            assert ordinal in SPECIAL_ORDINALS, note
            return None
        matches = [name for name, _kind in needed if short_name(name) == note[5:]]
        assert len(set(matches)) == 1, f"{note}: {matches}"
        return matches[0]

    imports: set[tuple[str, str | None, bool]] = set()
    defined: list[tuple[str, bool]] = []
    for line in nlist:
        m = _NM.match(line)
        assert m is not None, line
        if m["ext"] == "non-external":
            continue
        name = _drop_underscore(m["name"])
        if m["section"] == "undefined":
            imports.add((name, by_short_name(m["note"]), bool(m["weak"])))
        elif m["section"] != "common":
            defined.append((name, bool(m["weak"])))
    if s["chained"]:  # the chained imports table is what dyld binds; the nlist's undefineds may be stripped
        imports = {(_drop_underscore(n), library(o), w) for o, w, n in s["chained imports"]}
    exports: list[tuple[str, bool]] = []
    reexports: list[tuple[str, str]] = []
    if s["trie"]:
        for line in trie:
            m = re.fullmatch(r"(?:0x[0-9A-F]+  |\[re-export\] )(\S+)(?: \[([^\]]*)\])?(?: \((.*)\))?", line)
            if m is None:
                assert line in ("Exports trie:", ""), line
                continue
            name, flags, reexport = m.groups()
            if line.startswith("[re-export] "):
                target, _, lib = reexport.rpartition(" from ") if " from " in reexport else ("", "", reexport[5:])
                matches = [n for n, _k in needed if short_name(n) == lib]
                assert len(set(matches)) == 1, f"{line}: {matches}"
                reexports.append((_drop_underscore(name), f"{matches[0]}:{_drop_underscore(target or name)}"))
            else:
                exports.append((_drop_underscore(name), "weak_def" in (flags or "")))
    else:
        exports = defined
    return {
        "machine": s["machine"],
        "install name": next((c["name"] for c in commands if c.get("cmd") == "LC_ID_DYLIB"), None),
        "needed": needed,
        "rpath": [c["path"] for c in commands if c.get("cmd") == "LC_RPATH"],
        "min os": min_os,
        "min os command": command,
        "sdk": sdk,
        "imports": sorted(imports),
        "exports": sorted(exports),
        "re-exports": sorted(reexports),
    }


# ---------------------------------------------------------------------------------------------


def _count(slices: list[dict[str, Any]]) -> int:
    return sum(len(v) if isinstance(v, list) else 1 for s in slices for v in s.values())


def _compare(path: Path, label: str, reference: str) -> int:
    ours = _ours(path)
    theirs = _liefs(path) if reference == "lief" else _llvm(path)
    assert len(ours) == len(theirs), f"{label}: {len(ours)} slices, {reference} reads {len(theirs)}"
    for i, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for field in a:
            assert a[field] == b[field], f"{label} slice {i} ({a['machine']}): {field} differs from {reference}"
    TALLY[f"{reference} files"] += 1
    TALLY[f"{reference} slices"] += len(ours)
    TALLY[f"{reference} fields"] += _count(ours)
    return _count(ours)


@pytest.fixture(scope="module", autouse=True)
def _report(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is not None and TALLY:
        parts = [
            f"{ref}: {TALLY[f'{ref} files']} files, {TALLY[f'{ref} slices']} slices, {TALLY[f'{ref} fields']} field values"
            for ref in ("lief", "llvm")
            if TALLY[f"{ref} files"]
        ]
        with capture.global_and_fixture_disabled():
            print("\nMach-O differential: " + "; ".join(parts))


needs_llvm = needs("llvm-objdump", "llvm-nm")
IDS = [str(p.relative_to(MACHO)) for p in SAMPLES]


@pytest.mark.parametrize("path", SAMPLES, ids=IDS)
def test_samples_agree_with_lief(path: Path) -> None:
    _compare(path, str(path.relative_to(MACHO)), "lief")


@needs_llvm
@pytest.mark.parametrize("path", SAMPLES, ids=IDS)
def test_samples_agree_with_llvm(path: Path) -> None:
    _compare(path, str(path.relative_to(MACHO)), "llvm")


def test_the_samples_cover_what_is_compared() -> None:
    """Every kind of field this module compares has at least one sample that exercises it."""
    slices = [s for p in SAMPLES for s in _ours(p)]
    assert {m for s in slices for m in [s["machine"]]} >= {"x86_64", "arm64"}
    assert {k for s in slices for _n, k in s["needed"]} >= {"plain", "weak", "reexport"}
    assert any(lib is None for s in slices for _n, lib, _w in s["imports"])  # flat lookup
    assert any(weak for s in slices for _n, _lib, weak in s["imports"])
    assert any(len(s["rpath"]) > 1 for s in slices)


@pytest.fixture(scope="module")
def mac_torch(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """The ``.dylib`` and ``.so`` members of the real macOS arm64 torch wheel, extracted; skips when
    the wheel is not cached (``$LINKAUDIT_TEST_CACHE``/wheels-mac, default ``~/.cache/linkaudit-tests``)."""
    wheel = cache_root() / "wheels-mac" / MAC_WHEEL
    if not wheel.is_file():
        pytest.skip(f"{MAC_WHEEL} not cached in {wheel.parent}")
    target = tmp_path_factory.mktemp("mac-torch")
    with zipfile.ZipFile(wheel) as zf:
        names = [n for n in zf.namelist() if n.endswith((".dylib", ".so"))]
        return [Path(zf.extract(n, target)) for n in names]


@pytest.mark.realwheel
def test_real_mac_torch_agrees_with_lief(mac_torch: list[Path]) -> None:
    compared = sum(_compare(p, p.name, "lief") for p in mac_torch)
    assert compared > 40_000
    print(f"Mach-O differential vs lief: {compared} field values in {len(mac_torch)} files of {MAC_WHEEL}")


@needs_llvm
@pytest.mark.realwheel
def test_real_mac_torch_agrees_with_llvm(mac_torch: list[Path]) -> None:
    compared = sum(_compare(p, p.name, "llvm") for p in mac_torch)
    assert compared > 40_000
    print(f"Mach-O differential vs llvm: {compared} field values in {len(mac_torch)} files of {MAC_WHEEL}")
