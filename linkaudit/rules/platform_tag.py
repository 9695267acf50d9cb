"""``wheel-architecture``: a binary inside a wheel whose machine the wheel's platform tag does not
cover — an x86_64 dylib in a ``macosx_11_0_arm64`` wheel, a thin file in a ``universal2`` one, an
x86-64 ``.so`` in a ``manylinux_2_28_aarch64`` wheel, an i386 DLL in a ``win_amd64`` wheel.

pip installs such a wheel on the machines its tag names, and the import then fails in the
loader.  The tag's machines come from the tag alone (PEP 425 and the PyPA platform-compatibility
tags: ``macosx_X_Y_ARCH``, PEP 600's ``manylinux_X_Y_ARCH``, PEP 656's ``musllinux_X_Y_ARCH``,
``win_amd64``, PEP 730's iOS and PEP 738's Android tags); what each macOS "binary format" stands
for follows ``packaging.tags._mac_binary_formats``.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..config.profiles import wheel_platform_tags
from ..context import AuditContext
from ..lazyre import LazyPattern
from ..model import Binary, Endian, Format, Kind
from ..records import dataclass
from ..report import Finding, Severity
from .base import Rule

# Mach-O's PowerPC architectures, as Apple spells them (formats/macho.py).
_PPC, _PPC64 = "ppc", "ppc64"

#: macOS binary formats (the tag's last part) -> the Mach-O slices a file needs, before the cut
#: by release below.  CPython's Mac/README.rst and packaging's ``_mac_binary_formats``: ``intel`` is
#: i386 + x86_64, ``fat``/``fat32`` i386 + ppc, ``fat3`` adds x86_64, ``fat64`` x86_64 + ppc64,
#: ``universal`` all four, ``universal2`` x86_64 + arm64.
_MAC_FORMATS: dict[str, frozenset[str]] = {
    "arm64": frozenset({"arm64"}),
    "x86_64": frozenset({"x86_64"}),
    "i386": frozenset({"i386"}),
    "ppc": frozenset({_PPC}),
    "ppc64": frozenset({_PPC64}),
    "intel": frozenset({"i386", "x86_64"}),
    "fat": frozenset({"i386", _PPC}),
    "fat32": frozenset({"i386", _PPC}),
    "fat3": frozenset({"i386", _PPC, "x86_64"}),
    "fat64": frozenset({_PPC64, "x86_64"}),
    "universal": frozenset({"i386", _PPC, _PPC64, "x86_64"}),
    "universal2": frozenset({"arm64", "x86_64"}),
}

#: Linux tag architectures (``uname -m``) -> (ELF machine as the model spells it, ELF class, byte order).
LINUX_ARCHES: dict[str, tuple[str, int, Endian]] = {
    "x86_64": ("x86-64", 64, Endian.LITTLE),
    "i686": ("x86", 32, Endian.LITTLE),
    "i386": ("x86", 32, Endian.LITTLE),
    "aarch64": ("aarch64", 64, Endian.LITTLE),
    "armv7l": ("arm", 32, Endian.LITTLE),
    "armv6l": ("arm", 32, Endian.LITTLE),
    "ppc64le": ("ppc64le", 64, Endian.LITTLE),
    "ppc64": ("ppc64", 64, Endian.BIG),
    "s390x": ("s390x", 64, Endian.BIG),
    "riscv64": ("riscv64", 64, Endian.LITTLE),
    "loongarch64": ("loongarch64", 64, Endian.LITTLE),
}
#: PEP 738's Android ABIs -> the tag architecture of the same machine.
_ANDROID_ABIS = {"arm64_v8a": "aarch64", "armeabi_v7a": "armv7l", "x86_64": "x86_64", "x86": "i686"}
#: Windows tags -> the PE machine (IMAGE_FILE_MACHINE_AMD64, _I386, _ARM64, _ARMNT).
_WINDOWS = {"win_amd64": "x86-64", "win32": "i386", "win_arm64": "aarch64", "win_arm32": "arm"}

_LINUX_TAG = LazyPattern(
    r"(?P<policy>manylinux_\d+_\d+|manylinux1|manylinux2010|manylinux2014|musllinux_\d+_\d+|linux)_(?P<arch>\w+)"
)
_MAC_TAG = LazyPattern(r"macosx_(?P<major>\d{1,9})_(?P<minor>\d{1,9})_(?P<format>\w+)")
_IOS_TAG = LazyPattern(r"ios_\d+_\d+_(?P<arch>arm64|x86_64)_(?:iphoneos|iphonesimulator)")
_ANDROID_TAG = LazyPattern(r"android_\d+_(?P<abi>arm64_v8a|armeabi_v7a|x86_64|x86)")

#: How each platform names the model's machines in its own messages (dumpbin's names for PE).
_PE_NAMES = {"x86-64": "x64", "i386": "x86", "aarch64": "ARM64", "arm": "ARMNT"}

#: Kinds a loader opens: objects and static archives are for the linker, which checks their
#: machine itself; core files, dSYMs and kernel extensions are never loaded by the package.
_LOADED = frozenset({Kind.SHARED_LIBRARY, Kind.PYTHON_EXTENSION, Kind.EXECUTABLE, Kind.PIE_EXECUTABLE})
_EXECUTABLES = frozenset({Kind.EXECUTABLE, Kind.PIE_EXECUTABLE})

#: (system, machine the tag needs) -> machines whose *executables* that system still runs, by
#: translation: Rosetta 2 on Apple silicon, WOW64 on 64-bit Windows, and Windows 11 on ARM's x64
#: emulation.  Libraries are never translated into a native process.
_EMULATED: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("macOS", "arm64"): (frozenset({"x86_64"}), "Rosetta 2"),
    ("Windows", "x86-64"): (frozenset({"i386"}), "WOW64"),
    ("Windows", "aarch64"): (frozenset({"i386", "x86-64"}), "Windows on ARM's x86/x64 emulation"),
}


@dataclass(frozen=True, slots=True)
class TagMachines:
    """What one platform tag needs of every binary of its format in the wheel.

    Attributes:
        tag: the tag as written (``"macosx_11_0_universal2"``).
        system: ``"macOS"``, ``"iOS"``, ``"Linux (glibc)"``, ``"Linux (musl)"``, ``"Linux"``,
            ``"Android"`` or ``"Windows"``.
        format: the binary format that system loads.
        machines: the machines (model spelling) every loaded file must carry: one, or for a
            universal macOS format each slice of it.
        bits: ELF: the class the tag's machine needs; ``None`` elsewhere.
        endian: ELF: the byte order it needs; ``None`` elsewhere.
    """

    tag: str
    system: str
    format: Format
    machines: frozenset[str]
    bits: int | None = None
    endian: Endian | None = None


def tag_machines(tag: str) -> TagMachines | None:
    """What ``tag`` needs of a binary, or ``None`` for a tag that names no machine this rule knows
    (``any``, ``linux_mips``, a future macOS format).

    A macOS format needs each machine it stands for that some macOS at or above the tag's release
    still runs: PowerPC slices only up to 10.5 (ppc64) and 10.6 (ppc, Rosetta), as packaging
    offers them; i386 only below 10.15, the first release without 32-bit code.  So
    ``macosx_10_9_intel`` needs i386 and x86_64, ``macosx_10_15_intel`` x86_64 alone, and
    ``universal2`` always both arm64 and x86_64 (any release: an arm64 Mac installs a
    ``macosx_10_9_universal2`` wheel too).
    """
    if match := _MAC_TAG.fullmatch(tag):
        needed = _MAC_FORMATS.get(match["format"])
        if needed is None:
            return None
        release = (int(match["major"]), int(match["minor"]))
        gone = set()
        if release > (10, 5):
            gone.add(_PPC64)
        if release > (10, 6):
            gone.add(_PPC)
        if release >= (10, 15):
            gone.add("i386")
        machines = needed - gone
        return TagMachines(tag, "macOS", Format.MACHO, machines) if machines else None
    if match := _IOS_TAG.fullmatch(tag):
        return TagMachines(tag, "iOS", Format.MACHO, frozenset({match["arch"]}))
    if tag in _WINDOWS:
        return TagMachines(tag, "Windows", Format.PE, frozenset({_WINDOWS[tag]}))
    if match := _ANDROID_TAG.fullmatch(tag):
        machine, bits, endian = LINUX_ARCHES[_ANDROID_ABIS[match["abi"]]]
        return TagMachines(tag, "Android", Format.ELF, frozenset({machine}), bits, endian)
    if (match := _LINUX_TAG.fullmatch(tag)) and match["arch"] in LINUX_ARCHES:
        machine, bits, endian = LINUX_ARCHES[match["arch"]]
        policy = match["policy"]
        system = "Linux (musl)" if policy.startswith("musl") else "Linux" if policy == "linux" else "Linux (glibc)"
        return TagMachines(tag, system, Format.ELF, frozenset({machine}), bits, endian)
    return None


#: Each format's name, and the system that loads it, in messages.
_FORMAT_NAMES = {Format.ELF: "ELF", Format.MACHO: "Mach-O", Format.PE: "PE"}
_SYSTEMS = {Format.ELF: "Linux", Format.MACHO: "macOS", Format.PE: "Windows"}


def _name(fmt: Format) -> str:
    return _FORMAT_NAMES.get(fmt, fmt.value)


def _formats(package: str) -> set[Format]:
    """The formats the systems of ``package``'s platform tags load; empty for no wheel, a pure
    wheel or tags naming no known machine."""
    return {n.format for n in map(tag_machines, wheel_platform_tags(package)) if n is not None}


def _spell(fmt: Format, machine: str) -> str:
    if fmt is Format.PE:
        return _PE_NAMES.get(machine, machine)
    return machine


def _refusal(need: TagMachines, slices: list[Binary], missing: str) -> str:
    """What the tag's system says when it is asked to load the file, in its own words."""
    first = slices[0]
    if need.format is Format.MACHO:
        have = [_spell(Format.MACHO, b.machine) for b in slices]
        want = _spell(Format.MACHO, missing)
        if first.member is None:  # a thin file
            return f"dyld refuses it: \"mach-o file, but is an incompatible architecture (have '{have[0]}', need '{want}')\""
        return (
            f'dyld refuses it: "fat file, but missing compatible architecture (have ({",".join(have)}), need ({want}))"'
        )
    if need.format is Format.PE:
        return 'LoadLibrary refuses it (ERROR_BAD_EXE_FORMAT): "%1 is not a valid Win32 application."'
    if need.system == "Linux (musl)":
        return "musl's loader cannot run it"
    if need.bits is not None and first.bits is not None and first.bits != need.bits:
        return f'ld.so refuses it: "wrong ELF class: ELFCLASS{first.bits}"'
    if need.endian is not None and first.endian is not need.endian:
        return f'ld.so refuses it: "ELF file data encoding not {need.endian.value}-endian"'
    # glibc's open_verify: a machine that is not the host's is skipped as if absent (ENOENT).
    return 'ld.so skips it as if absent: "cannot open shared object file: No such file or directory"'


def _emulated_by(need: TagMachines, machines: set[str], missing: list[str]) -> str | None:
    """The translator that still runs an executable lacking ``missing``, or ``None``."""
    names = set()
    for machine in missing:
        runs = _EMULATED.get((need.system, machine))
        if runs is None or not (runs[0] & machines):
            return None
        names.add(runs[1])
    return " and ".join(sorted(names)) or None


class WheelArchitecture(Rule):
    id = "wheel-architecture"
    severity = Severity.ERROR
    summary = (
        "a binary in a wheel whose machine the wheel's platform tag does not cover (an x86_64 dylib in a "
        "macosx_11_0_arm64 wheel, a thin file in a universal2 one, an x86-64 .so in an aarch64 wheel)"
    )
    explain = """\
A wheel's platform tag says which machines it is for, and pip installs it on exactly those
(PEP 425; the PyPA "Platform compatibility tags" specification): macosx_11_0_arm64 on Apple
silicon, manylinux_2_28_aarch64 on 64-bit ARM Linux, win_amd64 on x64 Windows. Every binary
a loader opens must then be of that machine, or the import fails where pip put the wheel:
dyld says "mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64')"
(or, for a universal file without the slice, "fat file, but missing compatible
architecture"), Windows "%1 is not a valid Win32 application.", glibc's ld.so skips the
file as if absent ("cannot open shared object file: No such file or directory") or says
"wrong ELF class: ELFCLASS32". The usual cause is a build on the wrong runner (an Intel
macOS runner for an arm64 wheel, an emulated container that ran the host's compiler), a
dependency copied in from the build machine, or a wheel renamed to universal2 without
`lipo` merging its files. delocate's `--require-archs` and auditwheel's machine check
refuse such wheels; this rule reports them too.

What each tag needs:
- macosx_X_Y_arm64 / x86_64 / i386: that Mach-O slice. A universal format needs every
  slice it stands for (packaging.tags._mac_binary_formats; CPython's Mac/README.rst):
  universal2 = arm64 + x86_64, intel = x86_64 + i386, fat64 = x86_64 + ppc64, fat/fat32 =
  i386 + ppc, fat3 = x86_64 + i386 + ppc, universal = x86_64 + i386 + ppc + ppc64 — less the
  machines no macOS at or above the tag's release runs: ppc64 after 10.5, ppc after 10.6
  (as packaging offers them), i386 from 10.15 on (Catalina runs no 32-bit code). So a thin
  x86_64 file in a macosx_10_9_intel wheel lacks i386; in macosx_10_15_intel it is fine.
- manylinux_X_Y_ARCH, manylinux1/2010/2014_ARCH (PEP 513, 571, 599, 600), musllinux_X_Y_ARCH
  (PEP 656), linux_ARCH and android_N_ABI (PEP 738): the ELF e_machine, class and byte order
  of ARCH (x86_64, i686, aarch64, armv7l, ppc64le, ppc64, s390x, riscv64, loongarch64).
- win_amd64, win32, win_arm64, win_arm32: the PE machine (x64, x86, ARM64, ARMNT).
- ios_X_Y_ARCH_SDK (PEP 730): the Mach-O slice ARCH.

A wheel with several platform tags (a compressed tag set, "macosx_10_9_x86_64.macosx_11_0_arm64")
is installed wherever any of them matches, so every file must fit every tag of its format (there:
both slices). Judged are the files a loader
opens — shared libraries, extension modules, executables; object files and static archives
(.o, .a) are skipped: they are only read by a linker, which checks their machine itself. An
ELF file of a machine that is no CPU (a CUDA cubin, an AMD GPU code object, eBPF) is not
judged either.

A file of a format no system the tags name loads (ELF in a macosx or win wheel, Mach-O in a
manylinux or win one, PE in a manylinux or macosx one), and any binary in a pure wheel
(py3-none-any: pip installs it on every platform, the binary loads on one): an extension
module is an error (the import system loads it by name, and there it cannot); a library or
executable is an error when the wheel holds no file its tags' systems load (the whole wheel
is another platform's: built on the wrong runner, or renamed), else a note (data, a test
fixture, or a file the package picks per platform at run time, as setuptools' and distlib's
cli-64.exe launchers in their py3-none-any wheels). An executable that the tag's system still runs by translation — x86_64 under
Rosetta 2 on Apple silicon, x86 under WOW64 on 64-bit Windows, x86/x64 on Windows on ARM —
is a warning, not an error. Conda packages are not judged: their subdir (info/index.json)
is not read when the package is staged. Mach-O's arm64e is read as arm64, so an arm64e-only
file in an arm64 wheel is not caught.

Fix: build on (or cross-compile for) the tagged machine; for universal2, build both slices
and merge them (`lipo -create`, or delocate-merge two thin wheels); or tag the wheel for the
machine its files are of (`wheel tags --platform-tag ...`).

Sources: PEP 425 (compatibility tags, compressed tag sets), PEP 427 (the wheel file name),
PEP 600 (manylinux_x_y_arch), PEP 656 (musllinux), PEP 730, PEP 738; packaging.tags
(mac_platforms, _mac_binary_formats); glibc elf/dl-load.c (open_verify,
elf_machine_matches_host); Apple's dyld messages; delocate --require-archs.
"""
    evidence = {
        "package": "the wheel the file comes from",
        "tag": "the wheel's platform tag the finding judges by (of several, the one the file comes closest to); "
        "any for a pure wheel",
        "tags": "every platform tag of the wheel's file name (a compressed tag set has several)",
        "format": "the file's format: elf, macho or pe",
        "machines": "the file's machines, each format's spelling (Mach-O as Apple: x86_64, arm64e; ELF: x86-64, aarch64; PE: x86-64, i386); "
        "every slice of a universal Mach-O file",
        "needs": "the machines the tag needs of every file (both slices for universal2)",
        "missing": "the machines the tag needs that the file lacks",
        "emulated_by": "for an executable the tag's system still runs by translation (Rosetta 2, WOW64): "
        "the translator, and the finding is a warning; otherwise null",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        staged = context.packages
        if staged is None or not any(map(wheel_platform_tags, staged.package_names())):
            return  # no wheel staged
        by_path: dict[str, list[Binary]] = {}
        for binary in context.binaries:
            if binary.kind in _LOADED:
                by_path.setdefault(binary.path, []).append(binary)
        packages = {path: staged.package_of(path) or "" for path in by_path}
        native = {packages[p] for p, s in by_path.items() if s[0].format in _formats(packages[p])}
        for path, slices in by_path.items():
            package = packages[path]
            tags = wheel_platform_tags(package) if package else ()
            fmt = slices[0].format
            known = [n for n in map(tag_machines, tags) if n is not None]
            needs = [n for n in known if n.format is fmt]
            # a slice's subtype does not change what the tag asks (x86_64h is an x86_64 slice)
            if fmt is Format.MACHO:
                from ..formats.macho import cpu_family  # the Mach-O reader, only for Mach-O slices

                machines = {cpu_family(b.machine) for b in slices}
            else:
                machines = {b.machine for b in slices}
            if any(m.startswith("unknown(") or m == "bpf" for m in machines - {_PPC, _PPC64}):
                continue  # no CPU (a GPU or eBPF object)
            if not needs:
                if known or tags == ("any",):  # loaded by no system the tags name, or a pure wheel
                    yield self._foreign(known, tags, package, path, slices, package in native)
                continue
            unfit = [n for n in needs if not self._fits(n, slices, machines)]
            if not unfit:
                continue  # pip installs the wheel wherever any of its tags matches: each must hold
            need = min(unfit, key=lambda n: len(n.machines - machines))
            yield self._report(need, tags, package or "", path, slices, machines)

    def _foreign(
        self,
        known: list[TagMachines],
        tags: tuple[str, ...],
        package: str,
        path: str,
        slices: list[Binary],
        native: bool,
    ) -> Finding:
        """A file of a format no system the wheel's tags name loads (ELF in a macOS or Windows
        wheel), or any binary in a pure (``any``) wheel: an extension module is an error (the
        import system loads it by name, and can only on one platform); another file an error when
        the wheel holds no file its tags' systems load (the whole wheel is another platform's),
        else a note (data, a fixture, or a launcher picked per platform at run time, as
        setuptools' ``cli-64.exe``)."""
        first = slices[0]
        have = f"{_name(first.format)} {'+'.join(_spell(first.format, b.machine) for b in slices)}"
        module = first.kind is Kind.PYTHON_EXTENSION
        what = "extension module" if module else "executable" if first.kind in _EXECUTABLES else "library"
        if not known:  # a pure wheel: pip installs it on every platform
            subject, tag, needs = f"have {have}, need none (pure wheel)", "any", []
            system = f"{_SYSTEMS.get(first.format, first.format.value)} {_spell(first.format, first.machine)}"
            consequence = f"pip installs a pure wheel (any) on every platform and this {what} loads on {system} alone"
            error = module
        else:
            need = known[0]
            wanted = " or ".join(dict.fromkeys(_name(n.format) for n in known))
            subject, tag, needs = (
                f"have {have}, need {wanted} {'+'.join(_spell(need.format, m) for m in sorted(need.machines))}",
                need.tag,
                sorted(need.machines),
            )
            consequence = f"the wheel's tag {need.tag} names {need.system}, which loads no {_name(first.format)} file"
            error = module or not native
        if error:
            tail = (
                "the import fails there"
                if module
                else "the wheel holds no file its tags' systems load: it is another platform's, or mis-tagged"
            )
        else:
            tail = "fine only if it is data, or the package picks it per platform at run time"
        message = f"{have} {what}: {consequence}; {tail}"
        evidence = {"package": package, "tag": tag, "tags": list(tags), "format": first.format.value,
                    "machines": [b.machine for b in slices], "needs": needs, "missing": needs, "emulated_by": None}  # fmt: skip
        return self.finding(path, subject, message, evidence, Severity.ERROR if error else Severity.NOTE)

    @staticmethod
    def _fits(need: TagMachines, slices: list[Binary], machines: set[str]) -> bool:
        if not need.machines <= machines:
            return False
        # ELF: same machine but another class (x32 in an x86_64 wheel) or byte order.
        return all(
            (need.bits is None or b.bits == need.bits) and (need.endian is None or b.endian is need.endian)
            for b in slices
        )

    def _report(
        self,
        need: TagMachines,
        tags: tuple[str, ...],
        package: str,
        path: str,
        slices: list[Binary],
        machines: set[str],
    ) -> Finding:
        fmt = need.format
        missing = sorted(need.machines - machines) or sorted(need.machines)
        have = [_spell(fmt, b.machine) for b in slices]
        wanted = [_spell(fmt, m) for m in sorted(need.machines)]
        kind = slices[0].kind
        emulated = _emulated_by(need, machines, missing) if kind in _EXECUTABLES else None
        if fmt is Format.MACHO:
            what = f"Mach-O file has slice{'s' if len(have) > 1 else ''} {', '.join(have)} only"
        elif fmt is Format.PE:
            what = f"PE file is for {have[0]} (COFF Machine)"
        else:
            what = f"ELF file is for {have[0]} (e_machine, ELFCLASS{slices[0].bits}, {slices[0].endian.value}-endian)"
        needs_text = " and ".join(wanted) + (" (a universal file)" if len(wanted) > 1 else "")
        if emulated is not None:
            consequence = f"{need.system} runs this executable only by translation ({emulated})"
        else:
            where = f"on {_spell(fmt, missing[0])} " if len(need.machines) > 1 else ""
            consequence = where + _refusal(need, slices, missing[0])
        # The wheel's other tags that ask for something else (manylinux2014_aarch64 beside
        # manylinux_2_17_aarch64 asks for the same).
        others = [
            t.tag
            for t in map(tag_machines, tags)
            if t is not None
            and t.format is need.format
            and t.machines != need.machines
            and not self._fits(t, slices, machines)
        ]
        message = f"{what} but the wheel's tag {need.tag} needs {needs_text}: {consequence}" + (
            f" (nor does it fit the wheel's other tags {', '.join(others)})" if others else ""
        )
        return self.finding(
            path,
            f"have {'+'.join(have)}, need {'+'.join(wanted)}",
            message,
            {
                "package": package,
                "tag": need.tag,
                "tags": list(tags),
                "format": fmt.value,
                "machines": [b.machine for b in slices],
                "needs": sorted(need.machines),
                "missing": missing,
                "emulated_by": emulated,
            },
            Severity.WARNING if emulated is not None else None,
        )
