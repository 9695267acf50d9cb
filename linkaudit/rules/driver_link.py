"""``driver-link``: a DT_NEEDED on a library that only a GPU driver provides."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator

from ..context import AuditContext
from ..loader.analysis import LinkageAnalysis, would_fail
from ..loader.closure import RootKind
from ..model import Binary, Format, NeedKind
from ..report import Finding, Severity
from .base import Rule, preview
from .data import driver_api, driver_index
from .windows_link import windows_link

#: The Mach-O load command behind each kind of needed dylib (Apple's mach-o/loader.h).
MACHO_COMMANDS = {
    NeedKind.PLAIN: "LC_LOAD_DYLIB",
    NeedKind.WEAK: "LC_LOAD_WEAK_DYLIB",
    NeedKind.REEXPORT: "LC_REEXPORT_DYLIB",
    NeedKind.UPWARD: "LC_LOAD_UPWARD_DYLIB",
    NeedKind.LAZY: "LC_LAZY_LOAD_DYLIB",
}


def _image_roots(context: AuditContext, binary: Binary, name: str) -> tuple[list[dict[str, object]], str | None, bool]:
    """For a PE or Mach-O ``binary`` linking driver library ``name``: the import roots whose load
    reaches it ``[{root, kind, reached, chain}]``, what the first would see without the driver (the
    platform's words), and whether only its own on-demand load (a plugin) reaches it."""
    loads = context.windows if binary.format is Format.PE else context.dyld
    mine = [ld for ld in loads if binary.path in ld.objects and ld.machine in ("", binary.machine)]
    others = [ld for ld in mine if ld.root != binary.path]
    chosen = others or [ld for ld in mine if ld.root == binary.path]
    roots: list[dict[str, object]] = [
        {
            "root": ld.root,
            "kind": ld.kind,
            "reached": ld.reached,
            "chain": [posixpath.basename(p) for p in (*ld.chain(binary.path), name)],
        }
        for ld in chosen
    ]
    if not roots:
        return [], None, False
    if not others and not any(ld.reached for ld in chosen):
        return roots, None, True  # import roots exist and none reaches it: a plugin, loaded on demand only
    first = chosen[0]
    if binary.format is Format.PE:  # each loader's room imported for its own format only
        from ..loader.windows import windows_failure

        failure = windows_failure(first.kind, first.root, posixpath.basename(name))
    else:
        from ..loader.dyld import dyld_failure

        failure = dyld_failure(first.kind, first.root, name)
    return roots, failure, False


def _how(fmt: Format, kind: NeedKind) -> str:
    """How a file of format ``fmt`` names a library of entry ``kind``, in the format's words
    ("DT_NEEDED names", "imports (weak)", "LC_LOAD_WEAK_DYLIB names", "delay-load imports")."""
    if fmt is Format.PE:
        return "delay-load imports" if kind is NeedKind.DELAY_LOAD else "imports"
    if fmt is Format.MACHO:
        return f"{MACHO_COMMANDS[kind]} names"
    return "DT_NEEDED names" if kind is NeedKind.PLAIN else f"imports ({kind.value})"


def _link_message(how: str, name: str, component: str, fmt: Format, used: list[str], unused: bool) -> str:
    """The error's message for a hard link to driver library ``name``: the file cannot load without
    the driver, and whether the link is unused (the build system's doing) or which exports it uses."""
    message = (
        f"{how} {name}, the {component}, which the GPU driver installs and no package "
        "ships: the file cannot be loaded where no driver is installed"
    )
    if unused:
        message += (
            f"; the link is unused (the file uses none of {name}'s exports), which points "
            "at the build system — toolkit stubs, a CMake target's INTERFACE_LINK_LIBRARIES — "
            "not the code"
        )
    elif used:
        lazily = (
            "LoadLibrary()ed when a GPU is present; otherwise reach them lazily (a delay-load import, "
            "LoadLibrary/GetProcAddress, cuGetProcAddress)"
            if fmt is Format.PE
            else "dlopen()ed when a GPU is present; otherwise reach them lazily (dlopen, cuGetProcAddress)"
        )
        message += f"; it uses {len(used)} of its symbols ({preview(used, 3)}): fine only for a plugin {lazily}"
    return message


def _loads_anyway_message(how: str, name: str, component: str, used: list[str], *, weak: bool) -> str:
    """The note's message for a link that does not stop the file loading without the driver: a weak
    dylib (dyld goes on, its imports are then NULL) or, ``weak`` false, a delay-load import (Windows
    loads the DLL at the first call of one of its functions, not with the image)."""
    uses = f"uses {len(used)} of its symbols" + (f" ({preview(used, 3)})" if used else "")
    if weak:
        return (
            f"{how} {name}, the {component}: a weak dylib, so the file loads on a machine "
            "without the driver — its imports are then NULL, and the code must check before calling; " + uses
        )
    return (
        f"{how} {name}, the {component}: resolved at the first call of one of its "
        "functions, not when the file loads, so it loads on a machine without the driver — "
        "the calls then fail (delay-load exception), so the code must check for the driver "
        "first; " + uses
    )


def _image_reach(
    context: AuditContext, binary: Binary, name: str, evidence: dict[str, object]
) -> tuple[str | None, bool]:
    """For a PE or Mach-O file: the Windows or dyld loads say who fails without the driver (no
    package ships it). Adds ``roots`` and ``would_fail`` to ``evidence``; returns what the first
    import root reaching the file would see (``". Without a driver: ..."``, None when none fails)
    and whether only the file's own on-demand load (a plugin) reaches it."""
    roots, failure, plugin = _image_roots(context, binary, name)
    evidence["roots"] = roots
    evidence["would_fail"] = failure
    if failure is not None:
        chain = roots[0]["chain"]
        assert isinstance(chain, list)
        return f". Without a driver: {failure} ({' → '.join(chain)})", False
    return None, plugin


def _elf_reach(
    context: AuditContext,
    loaded_as: dict[str, list[str]],
    among: frozenset[str],
    binary: Binary,
    name: str,
    evidence: dict[str, object],
) -> tuple[str | None, bool]:
    """For an ELF file under a driverless loader emulation: the import roots whose NEEDED closure
    reaches the file. Adds ``roots`` (and ``would_fail`` when some root loads it or none does) to
    ``evidence``; returns what the first would see (ld.so's words, None when no root reaches it)
    and whether the file can only be dlopen()ed: import roots exist, none reaches it, and it lies in
    a directory of inputs they load (``among``: ``import_directories``)."""
    linkage = context.linkage
    assert linkage is not None  # driverless comes from the loader emulation
    loaded_paths = loaded_as.get(binary.path, [])
    reaches = [r for loaded in loaded_paths for r in linkage.chains(loaded)]
    reached = [r for r in reaches if r.reached]
    evidence["roots"] = [r.to_dict((name,)) for r in reached]
    if reached:
        first = reached[0]
        failure = would_fail(
            first.kind, first.root, f"{name}: cannot open shared object file: No such file or directory"
        )
        evidence["would_fail"] = failure
        chain = " → ".join(p.rsplit("/", 1)[-1] for p in (*first.chain, name))
        return f". Without a driver: {failure} ({chain})", False
    if reaches:
        evidence["would_fail"] = None
    # a plugin: no import loads it, yet it lies among the libraries the imports load (torch/lib's
    # libcaffe2_nvrtc.so beside libtorch_cpu.so); a file beside none of them (a library given with an
    # unrelated extension module) is judged as if given alone
    return None, bool(reaches) and any(posixpath.dirname(p) in among for p in loaded_paths)


def import_directories(linkage: LinkageAnalysis) -> frozenset[str]:
    """The directories of the audited inputs that the Python import roots' loads pull in (their
    dependencies, not the extension modules themselves)."""
    return frozenset(
        posixpath.dirname(obj.path)
        for load, root in zip(linkage.loads, linkage.roots, strict=True)
        if root.kind is RootKind.PYTHON_IMPORT and root.reached
        for obj in load.iter_objects()
        if obj.depth > 0 and obj.path in linkage.audited
    )


def _plugin_message(how: str, name: str, component: str, fmt: Format) -> str:
    """The note's message for a file linking the driver that no import root's load reaches: it can
    only be loaded on demand, which is how a plugin needing the driver must be loaded."""
    if fmt not in (Format.PE, Format.MACHO):  # ld.so's NEEDED closure
        return (
            f"{how} {name}, the {component}, but no import root's NEEDED closure "
            "reaches this file: it can only be dlopen()ed, which is how a plugin that needs the "
            "driver must be loaded (lazily, when a GPU is present)"
        )
    return (
        f"{how} {name}, the {component}, but no import root's load reaches this "
        f"file: it can only be loaded on demand ({'LoadLibrary' if fmt is Format.PE else 'dlopen'}), "
        "which is how a plugin that needs the driver must be loaded (when a GPU is present)"
    )


class DriverLink(Rule):
    id = "driver-link"
    severity = Severity.ERROR
    summary = "a needed library is installed only by the GPU driver (libcuda.so.1, libnvidia-ml.so.1, ...)"
    explain = """\
The GPU driver, not any package, installs libcuda.so.1 (the CUDA driver API),
libnvidia-ml.so.1 (NVML) and the other libnvidia-*/libnv* components (Windows:
nvcuda.dll, nvml.dll; macOS, CUDA 10.2 and earlier: libcuda.dylib and
CUDA.framework). A library that lists one of them in DT_NEEDED (imports one
without delay-load; names one in LC_LOAD_DYLIB, not LC_LOAD_WEAK_DYLIB) cannot
be loaded on a machine without the driver:
CPU-only CI, build containers, laptops. The user sees
"ImportError: libcuda.so.1: cannot open shared object file" at import time.

Reach the driver lazily instead: dlopen("libcuda.so.1") at first use, or
cuGetProcAddress / cudaGetDriverEntryPoint through the CUDA runtime. A plugin
that is itself only ever dlopen()ed when a GPU is present may link the driver:
with the loader emulation, a file that no import root's NEEDED closure reaches,
lying among the libraries the imports do load (torch/lib/libcaffe2_nvrtc.so
beside libtorch_cpu.so), gets a note instead of an error; a library given with
unrelated files is judged as if given alone. For PE and Mach-O files the Windows and dyld
loads say the same: which import root reaches the file, and what it would see
without the driver ("DLL load failed while importing _C", "Library not
loaded: @rpath/libcuda.dylib").

When the file uses none of the symbols the driver library exports (the export
lists ship with linkaudit, generated from cuda.h and the NVML function table,
so this works without a driver installed), the link is unused: it comes from the
build system, not the code — typically linking the toolkit's lib64/stubs
libcuda.so, or reading a CMake target's INTERFACE_LINK_LIBRARIES (which names
the driver) where its IMPORTED_LOCATION was meant. Link with -Wl,--as-needed or
fix the target.

Sources: NVIDIA driver README "Installed Components"; CUDA Compatibility guide.
"""
    evidence = {
        "library": "the DT_NEEDED entry, as written (for a Windows --link-line: the DLL the import library names)",
        "component": "what the driver library is",
        "exports_known": "whether linkaudit ships the library's export list",
        "used_symbols": "undefined symbols of the file that the library exports (when known)",
        "used_count": "number of such symbols",
        "unused": "true when the export list is known and the file uses none of it",
        "roots": "with loader emulation: [{root, kind, reached, chain}] the import roots whose NEEDED closure reaches the driver link",
        "would_fail": "what the user would see on a machine without the driver (null when no root reaches it)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        """One finding per driver library that a file names (a repeated entry gives one finding), plus
        the Windows ``--link-line`` ones; see :meth:`_finding` for what each says."""
        yield from self._link_line(context)
        drivers = driver_index()
        linkage = context.linkage
        driverless = linkage is not None and linkage.env.driverless
        loaded_as: dict[str, list[str]] = {}
        if linkage is not None:
            for loaded, given in linkage.audited.items():
                loaded_as.setdefault(given, []).append(loaded)
        among = import_directories(linkage) if driverless and linkage is not None else frozenset()
        for binary in context.binaries:
            undefined: set[str] | None = None
            reported: set[str] = set()
            for needed in binary.needed:
                if needed.name in reported:
                    continue  # a repeated DT_NEEDED entry: one finding per library
                lib = drivers.library_for(needed.name)
                if lib is None:
                    continue
                reported.add(needed.name)
                used: list[str] = []
                if lib.api is not None:
                    if undefined is None:
                        undefined = {s.name for s in binary.symbols.iter_undefined()}
                    used = sorted(undefined & driver_api(lib.api).symbols)
                yield self._finding(
                    context,
                    binary,
                    needed.name,
                    needed.kind,
                    lib.component,
                    lib.api is not None,
                    used,
                    driverless,
                    loaded_as,
                    among,
                )

    def _finding(
        self,
        context: AuditContext,
        binary: Binary,
        name: str,
        kind: NeedKind,
        component: str,
        exports_known: bool,
        used: list[str],
        driverless: bool,
        loaded_as: dict[str, list[str]],
        among: frozenset[str],
    ) -> Finding:
        """The finding for ``binary`` naming driver library ``name`` (entry ``kind``): an error, or a note
        when the file still loads without the driver (a weak dylib, a delay-load import) or when only an
        on-demand load (a plugin) reaches it. ``used`` is the library's exports the file uses (empty
        when ``exports_known`` is false); ``loaded_as`` maps a given path to the paths it was loaded as;
        ``among``: the directories of inputs the Python imports load (``import_directories``)."""
        unused = exports_known and not used
        how = _how(binary.format, kind)
        evidence: dict[str, object] = {
            "library": name,
            "component": component,
            "exports_known": exports_known,
            "used_symbols": used,
            "used_count": len(used),
            "unused": unused,
        }
        severity: Severity | None = None
        if kind is NeedKind.WEAK or kind is NeedKind.DELAY_LOAD:
            severity = Severity.NOTE
            message = _loads_anyway_message(how, name, component, used, weak=kind is NeedKind.WEAK)
        else:
            message = _link_message(how, name, component, binary.format, used, unused)
            failure, plugin = None, False
            if binary.format in (Format.PE, Format.MACHO):
                failure, plugin = _image_reach(context, binary, name, evidence)
            elif driverless:
                failure, plugin = _elf_reach(context, loaded_as, among, binary, name, evidence)
            if failure is not None:
                message += failure
            elif plugin:
                severity = Severity.NOTE
                message = _plugin_message(how, name, component, binary.format)
        return self.finding(binary, name, message, evidence, severity)

    def _link_line(self, context: AuditContext) -> Iterator[Finding]:
        """A Windows --link-line whose objects import from a driver's import library (cuda.lib ->
        nvcuda.dll): the DLL being built will import the driver, before it exists; ``/DELAYLOAD``
        of that DLL makes it a note (resolved at the first call)."""
        link = windows_link(context)
        if link is None:
            return
        line = context.config.link_line
        delayed = {e.option.split(":", 1)[1].lower() for e in line if e.option.startswith("delayload:")}
        by_dll: dict[str, list[str]] = {}
        for symbol, dll in link.dll.items():
            by_dll.setdefault(dll, []).append(symbol)
        drivers = driver_index()
        for dll, symbols in by_dll.items():
            lib = drivers.library_for(dll)
            if lib is None:
                continue
            used = sorted({s[6:] if s.startswith("__imp_") else s for s in symbols})
            library = os.path.basename(link.provider[symbols[0]])
            delay = dll.lower() in delayed
            message = (
                f"the link line's {library} makes the DLL it builds import {dll}, the {lib.component}, "
                f"for {len(used)} symbols ({preview(used, 3)})"
            )
            if delay:
                message += (
                    f"; /DELAYLOAD:{dll} resolves them at the first call, so the DLL loads without a driver — "
                    "the code must check for the driver before calling"
                )
            else:
                message += (
                    ": the DLL will not load where no driver is installed (CPU-only machines, CI); link it "
                    f"/DELAYLOAD:{dll}, or reach the driver through cuGetProcAddress, unless it is a plugin "
                    "loaded only when a GPU is present"
                )
            evidence = {
                "library": dll,
                "component": lib.component,
                "exports_known": lib.api is not None,
                "used_symbols": used,
                "used_count": len(used),
                "unused": False,
            }
            yield self.finding(
                link.objects[0] if link.objects else "link line",
                dll,
                message,
                evidence,
                Severity.NOTE if delay else None,
            )
