"""Each format's own words for what a rule's message names, so that no message on a PE or
Mach-O file speaks ELF (``DT_NEEDED``, ``-Wl,--as-needed``).

ELF names a dependency in a ``DT_NEEDED`` entry (the gABI's dynamic section); PE imports a DLL
through an import descriptor (Microsoft's PE format: the import directory table); Mach-O loads a
dylib by a load command (``LC_LOAD_DYLIB`` and its weak, re-export, upward and lazy kinds,
``mach-o/loader.h``).
"""

from __future__ import annotations

from ..model import Format


def needed_entry(fmt: Format) -> str:
    """What one dependency of a file is called: ``"DT_NEEDED entry"`` (ELF), ``"imported DLL"``
    (PE), ``"dylib load command (LC_LOAD_DYLIB)"`` (Mach-O)."""
    if fmt is Format.PE:
        return "imported DLL"
    if fmt is Format.MACHO:
        return "dylib load command (LC_LOAD_DYLIB)"
    return "DT_NEEDED entry"


def dropped_dependency(fmt: Format) -> str:
    """Why a link leaves out a library the code references nothing from, and what keeps it, in the
    format's toolchain's terms (for a library used only for its static initialisers)."""
    if fmt is Format.PE:
        return (
            "the linker emits no import for a DLL the code references nothing from, so a DLL used only for "
            "its initialisation (DllMain, static constructors) is dropped; /INCLUDE:symbol (a symbol the DLL "
            "exports, through its import library) forces the import"
        )
    if fmt is Format.MACHO:
        return (
            "a link with -dead_strip_dylibs drops a dylib the code references nothing from, so a dylib used "
            "only for its static initialisers is dropped; -needed_library (-Wl,-needed-lNAME) keeps it"
        )
    return (
        "an -Wl,--as-needed link drops a library used only for its static initialisers; "
        "-Wl,--no-as-needed around it keeps it"
    )
