"""``linkaudit diff OLD NEW``: what changed in the linkage between two builds.

Binaries are paired by their path relative to the input given (``lib/libtorch_cuda.so`` under
``old/`` and under ``new/``; a file given itself is keyed by its base name), so two builds in
different directories compare file by file.  For each pair: DT_NEEDED entries added and
removed, RPATH and RUNPATH changes, undefined symbols added and removed, and the highest
needed symbol version per prefix raised or lowered (``GLIBC_2.17`` -> ``GLIBC_2.34``: the build
no longer runs where it did), and for a shared library its SONAME changed and the symbols it
exports added and removed (a removed export or a new SONAME breaks every binary linked against
the old one).  Files only in one build are listed.  Works on the model only.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import TypeVar

from .config import parse_version_name
from .config.baseline import relative_file, targeted_file, unhashed
from .model import Binary, Binding, Kind, Symbol, Visibility
from .records import dataclass


@dataclass(frozen=True, slots=True)
class BinaryDiff:
    """The changes of one binary present in both builds (empty tuples: no change).

    Attributes:
        file: the key both builds share (path relative to the input).
        needed_added / needed_removed: DT_NEEDED names.
        rpath: ``(old, new)`` DT_RPATH entries when they differ, else ``None``.
        runpath: ``(old, new)`` DT_RUNPATH entries when they differ, else ``None``.
        undefined_added / undefined_removed: undefined symbols as ``name@VERSION`` (or ``name``).
        versions_raised / versions_lowered: ``(old, new)`` highest needed version per prefix,
            e.g. ``("GLIBC_2.17", "GLIBC_2.34")``; a prefix new in the build is ``(None, new)``.
        soname: ``(old, new)`` DT_SONAME (install name, DLL name) when it differs past a repair
            tool's hash (``unhashed``), else ``None``.
        exports_added / exports_removed: the symbols a shared library exports (``exported``) as
            ``name@VERSION`` (or ``name``).
    """

    file: str
    needed_added: tuple[str, ...] = ()
    needed_removed: tuple[str, ...] = ()
    rpath: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    runpath: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    undefined_added: tuple[str, ...] = ()
    undefined_removed: tuple[str, ...] = ()
    versions_raised: tuple[tuple[str | None, str], ...] = ()
    versions_lowered: tuple[tuple[str, str | None], ...] = ()
    soname: tuple[str | None, str | None] | None = None
    exports_added: tuple[str, ...] = ()
    exports_removed: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """True when anything differs."""
        return any(
            (self.needed_added, self.needed_removed, self.rpath, self.runpath, self.undefined_added,
             self.undefined_removed, self.versions_raised, self.versions_lowered, self.soname,
             self.exports_added, self.exports_removed)
        )  # fmt: skip

    @property
    def regressed(self) -> bool:
        """True when the new build breaks where the old one worked: a symbol version raised (it no
        longer runs on the oldest system the old one did), the SONAME changed or an export removed
        (an ABI break: a binary linked against the old library no longer finds it, or a symbol)."""
        return bool(self.versions_raised or self.soname or self.exports_removed)


@dataclass(frozen=True, slots=True)
class BuildDiff:
    """Two builds compared.

    Attributes:
        added: files only in the new build; removed: only in the old one.
        changed: binaries in both whose linkage differs, by file key.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[BinaryDiff, ...] = field(default_factory=tuple)


def paired_file(file: str, inputs: Sequence[str], exact: bool = False) -> str:
    """How ``diff`` pairs a file of one build with the other's: its path relative to the input
    (``config.baseline.relative_file``), and for a member of a wheel found in a directory given (a
    wheelhouse: a ``dist/`` of one project's wheels for several Pythons and platforms) its wheel's
    tag triple first, ``cp312-cp312-win_amd64:numpy/...`` (``config.baseline.targeted_file``, as
    a baseline keys it): a musllinux member is never compared with a manylinux one of the same
    path.  Wheels given themselves pair by member path alone.
    ``exact``: the platform tag as written (``manylinux_2_28_x86_64``), not its kind."""
    if file.partition("!")[0] in inputs:
        return relative_file(file, inputs)
    return targeted_file(file, inputs, exact)


def _key(binary: Binary, inputs: Sequence[str]) -> str:
    """A binary's pairing key: ``paired_file``, a vendored library's content hash left out
    (``libscipy_openblas64_-*.so``: a new release's copy pairs with the old one), and a member of a
    GNU import library (``x.dll.a``, dlltool's numbered ``d000077.o``, renumbered by every build)
    named by what it defines (``x.dll.a(PyInit__dop)``)."""
    key = unhashed(paired_file(binary.display_path, inputs))
    if binary.member is not None and key.endswith(f".dll.a({binary.member})"):
        defined = sorted(s.name for s in binary.symbols if s.defined and not s.name.startswith("__imp_"))
        if defined:
            key = f"{key[: -len(binary.member) - 1]}{defined[0]})"
    return key


def _versioned(symbol: Symbol) -> str:
    """``name@VERSION``, or ``name`` for an unversioned symbol."""
    return f"{symbol.name}@{symbol.version.name}" if symbol.version else symbol.name


def _undefined(binary: Binary) -> set[str]:
    return {_versioned(s) for s in binary.symbols.undefined()}


#: Symbols the static linker defines in every shared object: never a library's interface.
_LINKER_DEFINED = frozenset({"_init", "_fini", "_edata", "_end", "_etext", "__bss_start"})


def exported(binary: Binary) -> set[str]:
    """What a shared library exports to the binaries linked against it, as ``name@VERSION`` (or
    ``name``): its defined global, weak and unique dynamic symbols of default or protected
    visibility, the linker's own ``_init``, ``_end``... left out.  Empty for any other kind (an
    extension module is imported, never linked against: the internals older builds leaked are no
    interface) and for a library a repair tool vendored under a hashed name (``unhashed``: a
    private copy only its package's binaries load, whose unresolved symbols ``check`` reports)."""
    name = os.path.basename(binary.display_path)
    if binary.kind is not Kind.SHARED_LIBRARY or unhashed(name) != name:
        return set()
    return {
        _versioned(s)
        for s in binary.symbols.iter_defined()
        if s.binding != Binding.LOCAL
        and s.visibility in (Visibility.DEFAULT, Visibility.PROTECTED)
        and s.name not in _LINKER_DEFINED
    }


def _soname(old: Binary, new: Binary) -> tuple[str | None, str | None] | None:
    """``(old, new)`` SONAME of a shared library when it changed past a vendored library's hash
    (``unhashed``), else ``None`` (an extension module or executable is found by path, not SONAME)."""
    if old.kind is not Kind.SHARED_LIBRARY or new.kind is not Kind.SHARED_LIBRARY:
        return None
    before, after = old.soname, new.soname
    if (unhashed(before) if before else before) == (unhashed(after) if after else after):
        return None
    return before, after


def highest_versions(binary: Binary) -> dict[str, tuple[tuple[int, ...], str]]:
    """Highest numbered needed version per prefix: ``{"GLIBC": ((2, 34), "GLIBC_2.34")}``, the
    versions needed from a library a repair tool vendored (a hashed name, ``unhashed``) left out:
    it ships with the binary, so its versions move together."""
    out: dict[str, tuple[tuple[int, ...], str]] = {}
    for need in binary.version_needs:
        if unhashed(need.file) != need.file:
            continue
        for entry in need.versions:
            parsed = parse_version_name(entry.name)
            if parsed is None:
                continue
            prefix, numbers = parsed
            if prefix not in out or numbers > out[prefix][0]:
                out[prefix] = (numbers, entry.name)
    return out


def _names(needed: Sequence[str]) -> dict[str, str]:
    """``unhashed`` DT_NEEDED name -> the name itself, in order."""
    return {unhashed(n): n for n in needed}


def diff_binary(file: str, old: Binary, new: Binary) -> BinaryDiff:
    """Compare one binary across two builds: DT_NEEDED names and the SONAME as ``unhashed`` writes
    them (a vendored library's new hash and minor version are no change); symbol versions of the
    system's libraries only (``highest_versions``); the exports (``exported``)."""
    old_needed, new_needed = _names(old.needed_names), _names(new.needed_names)
    old_undef, new_undef = _undefined(old), _undefined(new)
    old_exports, new_exports = exported(old), exported(new)
    old_v, new_v = highest_versions(old), highest_versions(new)
    raised: list[tuple[str | None, str]] = []
    lowered: list[tuple[str, str | None]] = []
    for prefix in sorted(set(old_v) | set(new_v)):
        before, after = old_v.get(prefix), new_v.get(prefix)
        if after is not None and (before is None or after[0] > before[0]):
            raised.append((before[1] if before else None, after[1]))
        elif before is not None and (after is None or after[0] < before[0]):
            lowered.append((before[1], after[1] if after else None))
    return BinaryDiff(
        file=file,
        needed_added=tuple(n for k, n in new_needed.items() if k not in old_needed),
        needed_removed=tuple(n for k, n in old_needed.items() if k not in new_needed),
        rpath=(old.rpath, new.rpath) if old.rpath != new.rpath else None,
        runpath=(old.runpath, new.runpath) if old.runpath != new.runpath else None,
        undefined_added=tuple(sorted(new_undef - old_undef)),
        undefined_removed=tuple(sorted(old_undef - new_undef)),
        versions_raised=tuple(raised),
        versions_lowered=tuple(lowered),
        soname=_soname(old, new),
        exports_added=tuple(sorted(new_exports - old_exports)),
        exports_removed=tuple(sorted(old_exports - new_exports)),
    )


def _keyed(binaries: Sequence[Binary], inputs: Sequence[str]) -> dict[str, Binary]:
    """The binaries of one build by pairing key (``_key``); two that share a key — two wheels of one
    platform differing in its version, two vendored copies differing in their hash — are kept
    under their exact relative paths instead (``unique_keys``), each compared only with its exact
    namesake, never one dropped for the other without a word."""
    keys = unique_keys(binaries, lambda b: _key(b, inputs), lambda b: paired_file(b.display_path, inputs, exact=True))
    out: dict[str, Binary] = {}
    for b, key in zip(binaries, keys, strict=True):
        out.setdefault(key, b)
    return out


_T = TypeVar("_T")


def unique_keys(items: Sequence[_T], key: Callable[[_T], str], exact: Callable[[_T], str]) -> list[str]:
    """Each item's pairing ``key``, replaced by its ``exact`` one where two or more items share it."""
    keys = [key(i) for i in items]
    taken = Counter(keys)
    return [k if taken[k] == 1 else exact(i) for i, k in zip(items, keys, strict=True)]


def diff_builds(
    old: Sequence[Binary], old_inputs: Sequence[str], new: Sequence[Binary], new_inputs: Sequence[str]
) -> BuildDiff:
    """Pair the binaries of two builds by relative path and compare each pair."""
    before = _keyed(old, old_inputs)
    after = _keyed(new, new_inputs)
    changed = [diff_binary(k, before[k], after[k]) for k in sorted(set(before) & set(after))]
    return BuildDiff(
        added=tuple(sorted(set(after) - set(before))),
        removed=tuple(sorted(set(before) - set(after))),
        changed=tuple(d for d in changed if d.changed),
    )
