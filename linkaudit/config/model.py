"""Audit configuration: what the user asked for, parsed and validated.

The CLI turns options into an ``AuditConfig``; the library (``linkaudit.audit``)
takes one.  Nothing here reads the environment or the host.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Set
from dataclasses import field
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..lazyre import LazyPattern
from ..loader.target import TargetEnvironment
from ..records import dataclass
from ..report import Severity, split_member

if TYPE_CHECKING:
    from ..link.line import LinkInput  # annotations only: the static-link room is imported when a link line is read

# ASCII digits only (``\\d`` would accept Arabic-Indic and other Unicode digits).
_VERSION_NAME = LazyPattern(r"(?P<prefix>[A-Za-z][A-Za-z0-9_]*?)_(?P<num>[0-9]+(?:\.[0-9]+)*)")

#: Longest numeric component accepted, in digits: real versions have at most 3
#: (``GLIBCXX_3.4.30``); a longer run is not a version number (and ``int()`` of
#: thousands of digits is slow, then refused: Python's 4300-digit limit).
MAX_COMPONENT_DIGITS = 9

#: Version-name prefixes of the GNU toolchain, spelled as they are written in binaries.
KNOWN_PREFIXES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC")

#: The id of the rule that reports unreadable inputs; it cannot be ignored.
UNREADABLE_INPUT = "unreadable-input"


def parse_version_name(name: str) -> tuple[str, tuple[int, ...]] | None:
    """Split a symbol version name into (prefix, numbers).

    ``"GLIBC_2.34"`` -> ``("GLIBC", (2, 34))``; ``"GLIBCXX_3.4.30"`` ->
    ``("GLIBCXX", (3, 4, 30))``; ``"CXXABI_TM_1"`` -> ``("CXXABI_TM", (1,))``;
    ``"GLIBC_PRIVATE"`` or ``"libnvrtc.so.13"`` -> ``None``.

    Numbers are ASCII digits, at most ``MAX_COMPONENT_DIGITS`` per component; a
    name outside that form (``"GLIBC_2.99999999999"``, ``"GLIBC_٢.١٧"``) is not a
    numbered version and gives ``None``, never an error: version names come from
    the files audited.
    """
    m = _VERSION_NAME.fullmatch(name)
    if m is None:
        return None
    parts = m.group("num").split(".")
    if any(len(p) > MAX_COMPONENT_DIGITS for p in parts):
        return None
    return m.group("prefix"), tuple(int(p) for p in parts)


#: The prefix of the macOS minimum-OS ceiling (``--max-version macos=11.0``; rule min-os-version).
MACOS = "macos"


@dataclass(frozen=True, slots=True)
class VersionCeiling:
    """The highest symbol version allowed for one prefix, e.g. ``GLIBC_2.17``.

    Attributes:
        prefix: ``"GLIBC"``, ``"GLIBCXX"``, ``"CXXABI"``, ``"GCC"``...
        version: the numeric part, compared as a tuple of ints.
    """

    prefix: str
    version: tuple[int, ...]

    @property
    def text(self) -> str:
        """The ceiling as written, e.g. ``"GLIBC_2.17"``, ``"macos=11.0"``."""
        joiner = "=" if self.prefix == MACOS else "_"
        return f"{self.prefix}{joiner}{'.'.join(map(str, self.version))}"

    @classmethod
    def parse(cls, text: str) -> VersionCeiling:
        """Parse ``PREFIX_N[.N...]``.

        Raises:
            ConfigError: ``text`` is not of that form (numbers of ASCII digits, at
                most ``MAX_COMPONENT_DIGITS`` each), or spells a known prefix in
                the wrong case (``glibc_2.17``: binaries write ``GLIBC_2.17``, and
                the comparison is exact).
        """
        stripped = text.strip()
        if stripped.lower().startswith(MACOS + "="):
            # The macOS minimum-OS ceiling (min-os-version): macos=11.0.
            release = stripped.split("=", 1)[1]
            if re.fullmatch(r"[0-9]{1,4}(\.[0-9]{1,4}){0,2}", release) is None:
                raise ConfigError(f"--max-version {text[:80]!r}: expected macos=MAJOR[.MINOR[.PATCH]], e.g. macos=11.0")
            return cls(MACOS, tuple(int(n) for n in release.split(".")))
        parsed = parse_version_name(stripped)
        if parsed is None:
            raise ConfigError(
                f"--max-version {text[:80]!r}{'…' if len(text) > 80 else ''}: expected a version name such as "
                f"GLIBC_2.17, GLIBCXX_3.4.19, CXXABI_1.3.7 or GCC_4.8.0 (numbers of at most "
                f"{MAX_COMPONENT_DIGITS} digits)"
            )
        prefix, numbers = parsed
        if prefix not in KNOWN_PREFIXES and prefix.upper() in KNOWN_PREFIXES:
            right = f"{prefix.upper()}_{'.'.join(map(str, numbers))}"
            raise ConfigError(f"--max-version {text!r}: version names are case-sensitive; did you mean {right}?")
        return cls(prefix, numbers)


@dataclass(frozen=True, slots=True)
class Suppression:
    """One justified exception.

    Attributes:
        rule: the rule id it applies to.
        file: fnmatch glob over the finding's file (as reported).
        subject: fnmatch glob over the finding's subject, or ``None`` for any.
        reason: why the finding is accepted (mandatory).
        where: ``"linkaudit.toml:14: suppress[2]"`` (file, line, entry), for messages.
    """

    rule: str
    file: str
    subject: str | None
    reason: str
    where: str

    def matches(self, rule: str, file: str, subject: str, packages: Set[str]) -> bool:
        """True when the finding (rule, file, subject) is covered; ``packages``: those the run
        staged (``file_matches``)."""
        if rule != self.rule or not file_matches(file, self.file, packages):
            return False
        return self.subject is None or fnmatch.fnmatchcase(subject, self.subject)


def file_matches(path: str, glob: str, packages: Set[str]) -> bool:
    """True when ``path`` (as reported) matches the fnmatch ``glob``, whole or as a trailing
    part: ``lib/libtorch.so`` matches ``torch/lib/libtorch.so``; a member of a package among
    ``packages`` (those the run staged: ``dist/x.whl!torch/lib/libtorch.so``) matches by its member
    path too, a plain file with a ``!`` in its name never by what follows it
    (``report.split_member``)."""
    if fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, "*/" + glob):
        return True
    split = split_member(path, packages)
    return split is not None and (fnmatch.fnmatchcase(split[1], glob) or fnmatch.fnmatchcase(split[1], "*/" + glob))


@dataclass(frozen=True, slots=True)
class NeededPolicy:
    """One ``[[forbidden-needed]]`` or ``[[required-needed]]`` entry.

    Attributes:
        file: fnmatch glob over the files it applies to (``file_matches``).
        needed: fnmatch glob over the file's dependencies (ELF DT_NEEDED entries, PE imported DLLs,
            Mach-O dylib load commands), e.g. ``"libnvrtc-builtins.so*"``.
        reason: why (mandatory), quoted in every finding.
        where: ``"linkaudit.toml:20: forbidden-needed[0]"`` (file, line, entry), for messages.
    """

    file: str
    needed: str
    reason: str
    where: str

    def applies_to(self, path: str, packages: Set[str]) -> bool:
        """True when the entry covers the file ``path``; ``packages``: those the run staged
        (``file_matches``)."""
        return file_matches(path, self.file, packages)

    def matching(self, needed: tuple[str, ...], fold_case: bool = False) -> list[str]:
        """The entries of ``needed`` the ``needed`` glob matches; with ``fold_case`` (PE: Windows
        compares DLL names without case, ``KERNEL32.dll`` is ``kernel32.dll``) whatever their case."""
        if fold_case:
            glob = self.needed.lower()
            return [n for n in needed if fnmatch.fnmatchcase(n.lower(), glob)]
        return [n for n in needed if fnmatch.fnmatchcase(n, self.needed)]


@dataclass(frozen=True, slots=True)
class AuditConfig:
    """What to audit for.

    Attributes:
        max_versions: version ceilings for ``symbol-version`` (at most one per prefix).
        ignore: ids of rules not to run.
        target: the target system for loader emulation (search paths, sysroot,
            driverless...); ``None`` turns the loader emulation off.
        entries: import roots (``--entry``); empty = Python extension modules and
            executables among the inputs, else every input as a plain dlopen.
        link_line: the inputs of the link, in order (``--link-line FILE``), for the
            duplicate analysis of objects and archives; empty = every loose object linked.
        source_dirs: source trees to scan for generated wrappers (``--source DIR``).
        severities: (rule id, severity) overrides from the configuration file.
        suppressions: justified exceptions from the configuration file.
        config_file: the configuration file read, or ``None``.
        baseline: fingerprints of accepted findings (``baseline.load``), or ``None``.
        baseline_file: the baseline file read, for messages.
        profile: the profile the ceilings started from (``--profile``), for the report.
        target_env: what counts as present outside the inputs: ``"host"`` (the machine, or
            ``--sysroot``), ``"policy"`` (only the system libraries of the policy — a manylinux
            wheel's tag, else the profile — as on a user's machine), or ``"auto"`` (the default:
            policy when a manylinux wheel is among the inputs, host otherwise).
        dll_directories: for PE inputs, the directories ``os.add_dll_directory`` adds
            (``--dll-directory``), searched after a ``.pyd``'s own directory.
        preload_dlls: for PE inputs, base names of DLLs loaded before the roots (``--preload-dll``).
        windows_path: for PE inputs, the ``PATH`` directories (``--path``), searched last for an
            executable's imports, never for a ``.pyd``'s.
        executable_path: for Mach-O inputs, the main executable for ``@executable_path``
            (``--executable-path``; for Python extension modules the interpreter), or ``None``.
        dyld_library_path: for Mach-O inputs, ``DYLD_LIBRARY_PATH`` (``--dyld-library-path``).
        dyld_fallback_library_path: for Mach-O inputs, ``DYLD_FALLBACK_LIBRARY_PATH``
            (``--dyld-fallback-library-path``).
        verify: read every input again with lief and report disagreements (``--verify``).
        jobs: processes that read the inputs (``--jobs``; ``jobs.read_paths``): the report is the
            same whatever the number.
        forbidden_needed: ``[[forbidden-needed]]`` entries (rule ``forbidden-needed``).
        required_needed: ``[[required-needed]]`` entries (rule ``required-needed``; the
            libraries they require are never ``unused-needed``).
    """

    max_versions: tuple[VersionCeiling, ...] = ()
    ignore: frozenset[str] = frozenset()
    target: TargetEnvironment | None = field(default_factory=TargetEnvironment)
    entries: tuple[str, ...] = ()
    link_line: tuple[LinkInput, ...] = ()
    source_dirs: tuple[str, ...] = ()
    severities: tuple[tuple[str, Severity], ...] = ()
    suppressions: tuple[Suppression, ...] = ()
    config_file: str | None = None
    baseline: frozenset[tuple[str, str, str]] | None = None
    forbidden_needed: tuple[NeededPolicy, ...] = ()
    required_needed: tuple[NeededPolicy, ...] = ()
    profile: str | None = None
    baseline_file: str | None = None
    target_env: str = "auto"
    dll_directories: tuple[str, ...] = ()
    preload_dlls: tuple[str, ...] = ()
    windows_path: tuple[str, ...] = ()
    executable_path: str | None = None
    dyld_library_path: tuple[str, ...] = ()
    dyld_fallback_library_path: tuple[str, ...] = ()
    verify: bool = False
    jobs: int = 1

    def settings(self) -> dict[str, list[str]]:
        """The settings a report records, JSON-ready: ``{"max_versions": ["GLIBC_2.17"], "ignore": ["rpath-leak"]}``."""
        out: dict[str, list[str]] = {"max_versions": [c.text for c in self.max_versions], "ignore": sorted(self.ignore)}
        if self.entries:
            out["entries"] = list(self.entries)
        if self.config_file:
            out["config_file"] = [self.config_file]
        if self.profile:
            out["profile"] = [self.profile]
        if self.baseline_file:
            out["baseline"] = [self.baseline_file]
        if self.severities:
            out["severity"] = [f"{rule}={level.value}" for rule, level in self.severities]
        if self.target is None:
            out["loader"] = ["off"]
        else:
            t = self.target
            out["loader"] = [
                f"sysroot={t.sysroot}",
                f"ld_library_path={':'.join(t.ld_library_path)}",
                f"driverless={'yes' if t.driverless else 'no'}",
                *(f"dlopen_global={p}" for p in t.dlopen_global),
                *(f"ld_preload={p}" for p in t.ld_preload),
                *([f"hwcaps_level={t.hwcaps_level}"] if t.hwcaps_level else []),
                *([f"interpreter={t.interpreter}"] if t.interpreter else []),
                *([f"system_libraries={t.system_policy}"] if t.system_libraries is not None else []),
                *([f"musl_system_libraries={t.musl_policy}"] if t.musl_system_libraries is not None else []),
            ]
        return out

    def __post_init__(self) -> None:
        """Validate.

        Raises:
            ConfigError: two ceilings for one prefix, or ``ignore`` names
                ``unreadable-input`` (an input that cannot be read is never hidden).
        """
        if UNREADABLE_INPUT in self.ignore:
            raise ConfigError(
                f"--ignore {UNREADABLE_INPUT}: inputs that cannot be read are never hidden "
                "(they would pass as clean); remove the file from the inputs instead"
            )
        seen: set[str] = set()
        for c in self.max_versions:
            if c.prefix in seen:
                raise ConfigError(f"--max-version given twice for {c.prefix}")
            seen.add(c.prefix)
