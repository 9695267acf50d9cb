"""``linkaudit diff OLD NEW``: what changed in the linkage between two builds.

Binaries are paired by their path relative to the input given (``lib/libtorch_cuda.so`` under
``old/`` and under ``new/``; a file given itself is keyed by its base name), so two builds in
different directories compare file by file; a shared library left unpaired whose file name carries
its version (``libfoo.so.1.2.3`` -> ``libfoo.so.1.2.4``) pairs by its stem (``by_stem``).  For each pair: DT_NEEDED entries added and
removed, RPATH and RUNPATH changes, undefined symbols added and removed, and the highest
needed symbol version per prefix raised or lowered (``GLIBC_2.17`` -> ``GLIBC_2.34``: the build
no longer runs where it did), and for a shared library its SONAME changed and the symbols it
exports added and removed (a removed export or a new SONAME breaks every binary linked against
the old one).  Files only in one build are listed.  Works on the model only.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import field
from typing import TypeVar

from .config import parse_version_name
from .config.baseline import relative_file, targeted_file, unhashed
from .model import Binary, Binding, Kind, Symbol, Visibility
from .records import dataclass
from .report import split_member


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
            ``name@VERSION`` (or ``name``); removed: those a binary linked against the old library
            no longer binds (``rebound``).
        exports_rebound: ``(old, new)`` exports whose version changed where ld.so still binds a
            reference to the old one (``bar@V1`` -> ``bar``, ``bar`` -> ``bar@V1``; ``rebound``).
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
    exports_rebound: tuple[tuple[str, str], ...] = ()

    @property
    def changed(self) -> bool:
        """True when anything differs."""
        return any(
            (self.needed_added, self.needed_removed, self.rpath, self.runpath, self.undefined_added,
             self.undefined_removed, self.versions_raised, self.versions_lowered, self.soname,
             self.exports_added, self.exports_removed, self.exports_rebound)
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
        added: files only in the new build; removed: only in the old one (a file the other build
            has but linkaudit could not read is neither: it is in ``unreadable``).
        changed: binaries in both whose linkage differs, by file key.
        ambiguous: the pairing keys two files of one build shared.
        unreadable: the files of either build that could not be read.
    """

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[BinaryDiff, ...] = field(default_factory=tuple)
    ambiguous: tuple[Ambiguity, ...] = ()
    unreadable: tuple[UnreadableFile, ...] = ()


@dataclass(frozen=True, slots=True)
class UnreadableFile:
    """A file of one build linkaudit could not read (an ``unreadable-input`` finding): not compared,
    and the other build's findings on it are neither new nor gone.

    Attributes:
        side: ``"old"`` or ``"new"``: the build that holds it.
        file: its path as the finding names it.
        key: its pairing key (``pair_builds``), as ``BuildDiff.added`` and ``removed`` write keys.
        reason: why it could not be read (the finding's message).
    """

    side: str
    file: str
    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class AmbiguousFile:
    """One file of a build whose first pairing key another file of a build shares.

    Attributes:
        file: its path relative to the input, a package member's after its package's file name
            (``named_file``).
        key: the key it was paired by (``pairing_keys``).
        paired: whether the other build has a file of that key (else it is added or removed).
    """

    file: str
    key: str
    paired: bool


@dataclass(frozen=True, slots=True)
class Ambiguity:
    """A pairing key two files of one build shared — two wheels of one project and target (two
    versions), two vendored copies differing in their hash — and how its files were keyed apart.

    Attributes:
        key: the key they shared (``cp311-cp311-manylinux_x86_64:pkg/libp.so``).
        old / new: the files of that key in the old and the new build.
    """

    key: str
    old: tuple[AmbiguousFile, ...] = ()
    new: tuple[AmbiguousFile, ...] = ()


def paired_file(
    file: str, inputs: Sequence[str], packages: Set[str], exact: bool = False, lone_targeted: bool = False
) -> str:
    """How ``diff`` pairs a file of one build with the other's: its path relative to the input
    (``config.baseline.relative_file``), and for a member of a wheel found in a directory given (a
    wheelhouse: a ``dist/`` of one project's wheels for several Pythons and platforms) its wheel's
    tag triple first, ``cp312-cp312-win_amd64:numpy/...`` (``config.baseline.targeted_file``, as
    a baseline keys it): a musllinux member is never compared with a manylinux one of the same
    path.  Wheels given themselves pair by member path alone (a wheel with the unpacked tree of
    another platform's), unless ``lone_targeted`` (the other build is a wheelhouse: ``pair_builds``),
    then with their tag triple, as a baseline keys them; a member given itself
    (``PACKAGE!member``) by its base name, as a file given itself (``libp.so``), and an archive
    given itself by its base name and member (``libx.a(foo.o)``: ``diff old/libx.a new/libx.a``).
    ``exact``: the tags as written (``cp38-abi3-manylinux_2_28_x86_64``), not their kind.
    ``packages``: the packages the build's run staged (``Report.packages``; ``report.split_member``)."""
    split = split_member(file, packages)
    for given in inputs:
        # a member given itself, or an archive's member when the archive is given itself
        if (split is not None and file == given) or file.startswith(f"{given}("):
            member = split_member(given, packages)
            return os.path.basename(member[1] if member else given) + file[len(given) :]
    if split is not None and split[0] in inputs and not lone_targeted:
        return relative_file(file, inputs, packages)
    return targeted_file(file, inputs, packages, exact)


def _key(binary: Binary, inputs: Sequence[str], packages: Set[str], lone_targeted: bool = False) -> str:
    """A binary's pairing key: ``paired_file``, a vendored library's content hash left out
    (``libscipy_openblas64_-*.so``: a new release's copy pairs with the old one), and a member of a
    GNU import library (``x.dll.a``, dlltool's numbered ``d000077.o``, renumbered by every build)
    named by what it defines (``x.dll.a(PyInit__dop)``)."""
    key = unhashed(paired_file(binary.display_path, inputs, packages, lone_targeted=lone_targeted))
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
    visibility, the linker's own ``_init``, ``_end``... and the symbol GNU ld defines for each
    version node (``V1@@V1``, ``Symbol.version_node``) left out.  Empty for any other kind (an
    extension module is imported, never linked against: the internals older builds leaked are no
    interface) and for a library a repair tool vendored under a hashed name (``unhashed``: a
    private copy only its package's binaries load, whose unresolved symbols ``check`` reports)."""
    return set(_exports(binary))


def _exports(binary: Binary) -> dict[str, Symbol]:
    """``exported``, each with its symbol."""
    name = os.path.basename(binary.display_path)
    if binary.kind is not Kind.SHARED_LIBRARY or unhashed(name) != name:
        return {}
    return {
        _versioned(s): s
        for s in binary.symbols.iter_defined()
        if s.binding != Binding.LOCAL
        and s.visibility in (Visibility.DEFAULT, Visibility.PROTECTED)
        and s.name not in _LINKER_DEFINED
        and not s.version_node
    }


def rebound(old: Mapping[str, Symbol], new_binary: Binary, new: Mapping[str, Symbol]) -> tuple[tuple[str, str], ...]:
    """The exports of ``old`` the new library lacks under their ``name@VERSION`` but to which glibc's
    ld.so still binds a reference a binary linked against the old one holds, as ``(old, new)``
    (``old`` / ``new``: ``_exports`` of each library, ``new_binary`` the new one).

    The rule of ``elf/dl-version.c`` (``match_symbol``) and ``elf/dl-lookup.c`` (``check_match``):

    * a reference ``name@V`` first needs version ``V``: a library with version definitions but
      none named ``V`` fails to load ("version `V' not found"); one with none at all loads with a
      warning ("no version information available");
    * then it binds ``name@V``, or an unversioned ``name`` (``.gnu.version`` index 0 or 1, whose
      ``l_versions`` entry has no hash) unless hidden; never ``name@@V2``; and in a library with no
      ``.gnu.version`` at all (neither version definitions nor needs) ``check_match`` asserts that
      the library is not the one the version was needed from: ld.so aborts;
    * an unversioned reference ``name`` binds the default (not hidden) ``name@@V``.
    """
    versions = {d.name for d in new_binary.version_definitions if not d.base}
    unversioned_ok = not new_binary.version_definitions and bool(new_binary.version_needs)
    defaults = {s.name: k for k, s in new.items() if s.version is not None and not s.version_hidden}
    out: list[tuple[str, str]] = []
    for key in sorted(set(old) - set(new)):
        symbol = old[key]
        if symbol.version is None:
            target = defaults.get(symbol.name)
        elif symbol.name in new and (symbol.version.name in versions or unversioned_ok):
            target = symbol.name
        else:
            target = None
        if target is not None:
            out.append((key, target))
    return tuple(out)


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
    system's libraries only (``highest_versions``); the exports (``exported``), a version change
    ld.so still binds no removal (``rebound``)."""
    old_needed, new_needed = _names(old.needed_names), _names(new.needed_names)
    old_undef, new_undef = _undefined(old), _undefined(new)
    old_exports, new_exports = _exports(old), _exports(new)
    moved = rebound(old_exports, new, new_exports)
    kept, reached = {a for a, _ in moved}, {b for _, b in moved}
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
        exports_added=tuple(sorted(new_exports.keys() - old_exports.keys() - reached)),
        exports_removed=tuple(sorted(old_exports.keys() - new_exports.keys() - kept)),
        exports_rebound=moved,
    )


_T = TypeVar("_T")

#: One way of keying an item of a build (a binary, or the file of a finding), coarsest first.
Level = Callable[[_T], str]


def pairing_keys(
    old: Sequence[_T], new: Sequence[_T], old_levels: Sequence[Level[_T]], new_levels: Sequence[Level[_T]]
) -> tuple[list[str], list[str]]:
    """Each item's pairing key in the old and the new build: its first level's key; where two items
    of either build share one, every item of that key in both builds takes its next level's key
    (the builds stay keyed alike: an unchanged file beside a second wheel of its target still
    pairs), and so on; two items still sharing the last level's key are told apart by ``#2``,
    ``#3``... in input order, so no item is ever dropped for another.  Linear in the items per level."""
    old_keys = [old_levels[0](i) for i in old]
    new_keys = [new_levels[0](i) for i in new]
    for level in range(1, len(old_levels)):
        crowded = _crowded(old_keys) | _crowded(new_keys)
        if not crowded:
            break
        old_keys = [old_levels[level](i) if k in crowded else k for i, k in zip(old, old_keys, strict=True)]
        new_keys = [new_levels[level](i) if k in crowded else k for i, k in zip(new, new_keys, strict=True)]
    return _numbered(old_keys), _numbered(new_keys)


def _crowded(keys: Sequence[str]) -> set[str]:
    return {k for k, n in Counter(keys).items() if n > 1}


def _numbered(keys: Sequence[str]) -> list[str]:
    """``keys`` with the second, third... of one written ``KEY #2``, ``KEY #3``..."""
    seen: Counter[str] = Counter()
    out = []
    for k in keys:
        seen[k] += 1
        out.append(k if seen[k] == 1 else f"{k} #{seen[k]}")
    return out


def named_file(file: str, inputs: Sequence[str], packages: Set[str]) -> str:
    """A file's path relative to the input that holds it (``config.baseline.relative_file``), a
    package member's after its package's file name relative to it, not its member path alone
    (``pkg-1.0-cp311-cp311-manylinux_2_17_x86_64.whl!pkg/libp.so``): the key of a file whose
    other keys are ambiguous, pairing only with the same package file's (same version) member."""
    split = split_member(file, packages)
    if split is None:
        return relative_file(file, inputs, packages)
    return f"{relative_file(split[0], inputs, packages)}!{split[1]}"


#: An item ``diff`` pairs: a binary, or the file of a finding (its ``Finding.file``).
Item = Binary | str


def _path(item: Item) -> str:
    return item if isinstance(item, str) else item.display_path


def binary_levels(inputs: Sequence[str], packages: Set[str], lone_targeted: bool = False) -> list[Level[Item]]:
    """How ``diff`` keys a binary or the file of a finding of a build given as ``inputs``, coarsest
    first (``pairing_keys``): by ``_key`` (its wheel's platform kind, a vendored library's hash
    left out); by ``paired_file`` exact (the platform tag as written, the hash kept); by
    ``named_file`` (its package's file name: the wheel's version). ``lone_targeted``: a wheel
    given itself keyed with its tag triple (``paired_file``)."""

    def coarse(item: Item) -> str:
        if isinstance(item, str):
            return unhashed(paired_file(item, inputs, packages, lone_targeted=lone_targeted))
        return _key(item, inputs, packages, lone_targeted)

    return [
        coarse,
        lambda i: paired_file(_path(i), inputs, packages, exact=True, lone_targeted=lone_targeted),
        lambda i: named_file(_path(i), inputs, packages),
    ]


def in_wheelhouse(items: Sequence[Item], inputs: Sequence[str], packages: Set[str]) -> bool:
    """Whether a build holds a member of a wheel found in a directory given (a wheelhouse, whose
    members ``paired_file`` keys with their wheel's tag triple), not a wheel given itself."""
    for item in items:
        split = split_member(_path(item), packages)
        if (
            split is not None
            and split[0].endswith(".whl")
            and split[0] not in inputs
            and not any(given.startswith(f"{split[0]}!") for given in inputs)
        ):
            return True
    return False


def pair_builds(
    old: Sequence[Item],
    old_inputs: Sequence[str],
    new: Sequence[Item],
    new_inputs: Sequence[str],
    packages: tuple[Set[str], Set[str]],
) -> tuple[list[str], list[str], tuple[Ambiguity, ...]]:
    """The pairing keys of two builds' binaries and files of findings (``pairing_keys`` by
    ``binary_levels``: the one place ``diff`` pairs; a wheel given itself keyed with its tag triple
    when either build is a wheelhouse, ``in_wheelhouse``; a shared library left unpaired paired by
    its stem, ``by_stem``), and each first key two items of one build
    shared with how its items were keyed apart (``Ambiguity``).  ``packages``: the packages each
    build's run staged (old, new)."""
    lone = in_wheelhouse(old, old_inputs, packages[0]) or in_wheelhouse(new, new_inputs, packages[1])
    old_levels = binary_levels(old_inputs, packages[0], lone)
    new_levels = binary_levels(new_inputs, packages[1], lone)
    old_keys, new_keys = pairing_keys(old, new, old_levels, new_levels)
    by_stem(old, old_keys, new, new_keys)
    old_first, new_first = [old_levels[0](i) for i in old], [new_levels[0](i) for i in new]
    crowded = _crowded(old_first) | _crowded(new_first)
    if not crowded:
        return old_keys, new_keys, ()
    paired = set(old_keys) & set(new_keys)
    told_old = _told(old, old_first, old_keys, (old_inputs, packages[0]), paired, crowded)
    told_new = _told(new, new_first, new_keys, (new_inputs, packages[1]), paired, crowded)
    ambiguous = tuple(Ambiguity(k, tuple(told_old.get(k, ())), tuple(told_new.get(k, ()))) for k in sorted(crowded))
    return old_keys, new_keys, ambiguous


#: A shared library's version suffix past ``.so`` (``libfoo.so.1.2.3``: ``.1.2.3``).
_SO_VERSION = re.compile(r"(?<=\.so)(?:\.\d+)+$")


def library_stem(binary: Binary, key: str) -> str | None:
    """A shared library's directory (of its pairing ``key``) and stem, its file name without the
    version suffix past ``.so`` (``lib/libfoo.so.1.2.3`` -> ``lib/libfoo.so``): the file name is
    what pairs, as abipkgdiff pairs the libraries of two packages, so a library built without a
    SONAME pairs and two file names of different stems never do, whatever their SONAMEs; the
    SONAME's stem (``libfoo.so.1`` -> ``libfoo.so``) only when the file name has no ``.so`` part
    (``plugin-1.bin``).  ``None`` for any other kind of binary, or neither name with ``.so``."""
    if binary.kind is not Kind.SHARED_LIBRARY:
        return None
    directory, name = key.rpartition("/")[0], key.rpartition("/")[2]
    if "so" not in name.split(".")[1:]:
        name = binary.soname or ""
    stem = _SO_VERSION.sub("", name)
    return f"{directory}/{stem}" if stem.endswith(".so") else None


def by_stem(old: Sequence[Item], old_keys: list[str], new: Sequence[Item], new_keys: list[str]) -> None:
    """Pair the shared libraries ``pairing_keys`` left unpaired by their stem (``library_stem``): a
    library whose file name carries its version (``libfoo.so.1.2.3`` -> ``libfoo.so.1.2.4``, a SONAME
    bump ``libfoo.so.1`` -> ``libfoo.so.2``) pairs with the other build's library of the same
    directory and stem when each build has exactly one left unpaired, as libabigail's
    ``abipkgdiff`` pairs them; both are keyed ``OLD -> NEW`` (``lib/libfoo.so.1.2.3 -> libfoo.so.1.2.4``),
    in place in ``old_keys`` / ``new_keys``. Linear in the items."""
    paired = set(old_keys) & set(new_keys)

    def stems(items: Sequence[Item], keys: list[str]) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, (item, key) in enumerate(zip(items, keys, strict=True)):
            stem = None if isinstance(item, str) or key in paired else library_stem(item, key)
            if stem is not None:
                out.setdefault(stem, []).append(i)
        return out

    before, after = stems(old, old_keys), stems(new, new_keys)
    for stem, olds in before.items():
        news = after.get(stem, [])
        if len(olds) == 1 and len(news) == 1:
            o, n = olds[0], news[0]
            old_keys[o] = new_keys[n] = f"{old_keys[o]} -> {new_keys[n].rpartition('/')[2]}"


def _told(
    items: Sequence[Item],
    first: Sequence[str],
    keys: Sequence[str],
    given: tuple[Sequence[str], Set[str]],
    paired: set[str],
    crowded: set[str],
) -> dict[str, list[AmbiguousFile]]:
    """The items of the ``crowded`` first keys, by first key, as ``AmbiguousFile`` (``given``: the
    build's inputs and the packages its run staged)."""
    out: dict[str, list[AmbiguousFile]] = {}
    for item, f, k in zip(items, first, keys, strict=True):
        if f in crowded:
            out.setdefault(f, []).append(AmbiguousFile(named_file(_path(item), *given), k, k in paired))
    return out


def diff_builds(
    old: Sequence[Binary],
    old_inputs: Sequence[str],
    new: Sequence[Binary],
    new_inputs: Sequence[str],
    old_files: Sequence[str] = (),
    new_files: Sequence[str] = (),
    *,
    old_packages: Set[str],
    new_packages: Set[str],
    old_unreadable: Sequence[tuple[str, str]] = (),
    new_unreadable: Sequence[tuple[str, str]] = (),
) -> tuple[BuildDiff, dict[str, str], dict[str, str]]:
    """Pair the binaries of two builds (``pair_builds``) and compare each pair; no binary is left
    out: one whose key was ambiguous is paired under a finer one, or listed added or removed.
    ``old_files`` / ``new_files``: the files of findings, paired with the binaries (a finding's
    key is its binary's); handed back as file -> key.  ``*_packages``: the packages each build's
    run staged (``Report.packages``), whose members are ``PACKAGE!member``.  ``*_unreadable``:
    ``(file, reason)`` of each file of a build that could not be read, paired as the others; a
    binary of the other build of its key is neither added nor removed (``BuildDiff.unreadable``)."""
    old_items: list[Item] = [*old, *_others(old, [*old_files, *(f for f, _ in old_unreadable)])]
    new_items: list[Item] = [*new, *_others(new, [*new_files, *(f for f, _ in new_unreadable)])]
    old_keys, new_keys, ambiguous = pair_builds(
        old_items, old_inputs, new_items, new_inputs, (old_packages, new_packages)
    )
    old_by, new_by = _by_file(old_items, old_keys), _by_file(new_items, new_keys)
    unreadable = tuple(
        [UnreadableFile("old", f, old_by[f], why) for f, why in old_unreadable]
        + [UnreadableFile("new", f, new_by[f], why) for f, why in new_unreadable]
    )
    unread_old = {u.key for u in unreadable if u.side == "old"}
    unread_new = {u.key for u in unreadable if u.side == "new"}
    before = dict(zip(old_keys[: len(old)], old, strict=True))
    after = dict(zip(new_keys[: len(new)], new, strict=True))
    changed = [diff_binary(k, before[k], after[k]) for k in sorted(set(before) & set(after))]
    result = BuildDiff(
        added=tuple(sorted(set(after) - set(before) - unread_old)),
        removed=tuple(sorted(set(before) - set(after) - unread_new)),
        changed=tuple(d for d in changed if d.changed),
        ambiguous=ambiguous,
        unreadable=unreadable,
    )
    return result, old_by, new_by


def _others(binaries: Sequence[Binary], files: Sequence[str]) -> list[str]:
    """``files`` that are no binary's ``display_path``, each once."""
    known = {b.display_path for b in binaries}
    return [f for f in dict.fromkeys(files) if f not in known]


def _by_file(items: Sequence[Item], keys: Sequence[str]) -> dict[str, str]:
    """Each item's path -> its key (the first item of a path, for two of one path)."""
    out: dict[str, str] = {}
    for item, key in zip(items, keys, strict=True):
        out.setdefault(_path(item), key)
    return out
