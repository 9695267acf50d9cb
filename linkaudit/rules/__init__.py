"""The rule registry.

Each rule lives in its own module as a small ``Rule`` subclass; adding a rule
means adding a module and one line to ``RULES``.  Rule data lives in
``rules/data/*.toml`` and is validated when first used.
"""

from __future__ import annotations

from .abi3_symbol import Abi3Symbol
from .base import Rule
from .broken_symlink import BrokenSymlink
from .dlopen_name import DlopenName
from .driver_link import DriverLink
from .duplicate_export import DuplicateExport
from .duplicate_rpath import DuplicateRpath
from .duplicates import CommonSymbol, DuplicateDefinition, LtoObject, StackedCodegen
from .elf_hygiene import ExecutableStack, TextRelocations
from .external_library import ExternalLibrary
from .file_clash import FileClash
from .inputs import BaselineFixed, LoaderSkipped, MoreFindings, NoBinaries, UnreadableInput, UnusedSuppression
from .isa_level import IsaLevel
from .libpython_needed import LibpythonNeeded
from .library_not_found import LibraryNotFound
from .linux_tag import LinuxTag
from .macos_tag import MacosTag
from .min_os_version import MinOsVersion
from .missing_provider import MissingProvider
from .needed_policy import ForbiddenNeeded, RequiredNeeded
from .platform_tag import WheelArchitecture
from .python_dll import PythonDllVersion
from .reader_disagreement import ReaderDisagreement
from .rpath_leak import RpathLeak
from .rpath_package import RpathOutsidePackage
from .symbol_version import SymbolVersion
from .undeclared_dependency import UndeclaredDependency
from .undefined_reference import UndefinedReference
from .unresolved_external import UnresolvedExternal
from .unresolved_symbol import UnresolvedSymbol
from .unused_dependency import UnusedDependency
from .unused_needed import UnusedNeeded
from .verneed_mismatch import VerneedMismatch
from .version_not_found import VersionNotFound
from .wheel_libc import WheelLibc
from .wheel_tag_mismatch import WheelTagMismatch

#: Every rule, in the order they run and are listed.
RULES: tuple[type[Rule], ...] = (
    DriverLink,
    MissingProvider,
    SymbolVersion,
    MinOsVersion,
    WheelArchitecture,
    WheelLibc,
    LinuxTag,
    WheelTagMismatch,
    MacosTag,
    IsaLevel,
    LibpythonNeeded,
    PythonDllVersion,
    Abi3Symbol,
    RpathLeak,
    RpathOutsidePackage,
    DuplicateRpath,
    VerneedMismatch,
    LibraryNotFound,
    UndeclaredDependency,
    UnusedDependency,
    ExternalLibrary,
    VersionNotFound,
    UnresolvedSymbol,
    UnusedNeeded,
    DlopenName,
    ExecutableStack,
    TextRelocations,
    DuplicateDefinition,
    UnresolvedExternal,
    UndefinedReference,
    CommonSymbol,
    StackedCodegen,
    LtoObject,
    DuplicateExport,
    ForbiddenNeeded,
    RequiredNeeded,
    ReaderDisagreement,
    UnreadableInput,
    FileClash,
    NoBinaries,
    BrokenSymlink,
    LoaderSkipped,
    UnusedSuppression,
    BaselineFixed,
    MoreFindings,
)

_BY_ID = {r.id: r for r in RULES}


def get_rule(rule_id: str) -> type[Rule] | None:
    """The rule class with id ``rule_id``, or ``None``."""
    return _BY_ID.get(rule_id)


def rule_ids() -> tuple[str, ...]:
    """Every rule id, in registry order."""
    return tuple(_BY_ID)


__all__ = ["RULES", "Rule", "get_rule", "rule_ids"]
