"""The installation planner: which of the wheels given are installed together, for which target.

Wheels of one project are never installed together.  As pip does for one interpreter, a target
(an interpreter, an ABI and a platform: one ``(interpreter, abi, platform)`` triple that the
inputs' tags name; and each such interpreter and ABI on the widest platform among the tags that
accepts its own: wheels of different projects for ``manylinux_2_17`` and ``manylinux_2_28`` install
together where glibc 2.28 runs) ranks the tags it accepts (``packaging.tags``), and takes, for each
project, the best-ranked wheel it accepts.  Targets that pick the same wheels are one installation; an
installation whose wheels all belong to a larger one is dropped (the larger one audits them with
everything else they are installed with); a wheel no target picks gets a target of its own, so
every wheel is audited.

The manylinux list of a target is generated here from its glibc (``manylinux_2_X`` downwards,
with the legacy aliases ``manylinux2014`` = 2.17, ``manylinux2010`` = 2.12, ``manylinux1`` = 2.5):
``packaging``'s own manylinux helpers read the running host.  Sources: PEP 425, PEP 600 (glibc
tags), PEP 656 (musllinux), PEP 599 / 571 / 513 (the legacy aliases), pip's candidate ranking.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from ..records import dataclass

if TYPE_CHECKING:
    from packaging.tags import Tag

from .metadata import WheelName

#: The legacy manylinux tags: glibc they stand for, and the architectures each was defined for.
_LEGACY: tuple[tuple[str, tuple[int, int], frozenset[str]], ...] = (
    ("manylinux2014", (2, 17), frozenset({"x86_64", "i686", "aarch64", "armv7l", "ppc64", "ppc64le", "s390x"})),
    ("manylinux2010", (2, 12), frozenset({"x86_64", "i686"})),
    ("manylinux1", (2, 5), frozenset({"x86_64", "i686"})),
)


def glibc_of(platform: str) -> tuple[tuple[int, int], str] | None:
    """``((major, minor), arch)`` of a manylinux platform tag (PEP 600 or a legacy alias), else ``None``."""
    match = re.fullmatch(r"manylinux_(\d{1,9})_(\d{1,9})_(\w+)", platform)
    if match:
        return (int(match.group(1)), int(match.group(2))), match.group(3)
    for legacy, glibc, arches in _LEGACY:
        if platform.startswith(legacy + "_") and platform[len(legacy) + 1 :] in arches:
            return glibc, platform[len(legacy) + 1 :]
    return None


#: The highest version number a tag is expanded from (glibc and musl minors, macOS versions, a
#: Python minor): a tag naming more (``manylinux_2_99999999``, ``cp3999999999``; legal, built by
#: hand) is accepted as itself only, never expanded into one tag per lower version.
MAX_EXPANDED_VERSION = 1000


def manylinux_platforms(glibc: tuple[int, int], arch: str) -> list[str]:
    """Every manylinux platform tag a system of glibc ``glibc`` on ``arch`` accepts, best first:
    ``manylinux_2_Y_arch`` from its own minor downwards, each legacy alias where its glibc falls,
    then ``linux_arch`` (what a local build is tagged)."""
    major, minor = glibc
    out = []
    for m in range(minor, -1, -1):
        out.append(f"manylinux_{major}_{m}_{arch}")
        out.extend(f"{name}_{arch}" for name, (lm, ln), arches in _LEGACY if (lm, ln) == (major, m) and arch in arches)
    out.append(f"linux_{arch}")
    return out


def platforms_for(platform: str) -> list[str]:
    """The platform tags a target whose own platform tag is ``platform`` accepts, best first
    (``[]`` for ``any``: only platform-independent wheels)."""
    if platform == "any":
        return []
    glibc = glibc_of(platform)  # before the digits are read: manylinux2014 names glibc 2.17, not release 2014
    if glibc is not None and max(glibc[0]) <= MAX_EXPANDED_VERSION:
        return manylinux_platforms(*glibc)
    if any(len(n) > 9 or int(n) > MAX_EXPANDED_VERSION for n in re.findall(r"\d+", platform.rsplit("_", 1)[0])):
        return [platform]  # a version no system has: this tag only
    musl = re.fullmatch(r"musllinux_(\d{1,9})_(\d{1,9})_(\w+)", platform)
    if musl:
        major, minor, arch = int(musl.group(1)), int(musl.group(2)), musl.group(3)
        return [f"musllinux_{major}_{m}_{arch}" for m in range(minor, -1, -1)] + [f"linux_{arch}"]
    mac = re.fullmatch(r"macosx_(\d{1,9})_(\d{1,9})_(\w+)", platform)
    if mac:
        from packaging.tags import mac_platforms  # packaging.tags: only when wheels are planned

        try:
            return list(mac_platforms((int(mac.group(1)), int(mac.group(2))), mac.group(3)))
        except (ValueError, KeyError):  # an architecture packaging does not know
            return [platform]
    return [platform]


@dataclass(frozen=True, slots=True)
class Target:
    """One interpreter on one system, as a triple of tag parts (``cp311``, ``cp311``, ``manylinux_2_17_x86_64``)."""

    interpreter: str
    abi: str
    platform: str

    @property
    def spelled(self) -> str:
        """The triple as a tag: ``cp311-cp311-manylinux_2_17_x86_64``."""
        return f"{self.interpreter}-{self.abi}-{self.platform}"

    def priorities(self) -> list[Tag]:
        """Every tag this target accepts, best first (``packaging.tags``, from explicit inputs)."""
        from packaging.tags import Tag, compatible_tags, cpython_tags, generic_tags

        platforms = platforms_for(self.platform)
        match = re.fullmatch(r"([a-z]+)(\d)(\d{0,9})", self.interpreter)
        if match is None or len(match.group(3)) > len(str(MAX_EXPANDED_VERSION)):
            return [Tag(self.interpreter, self.abi, p) for p in [*platforms, "any"]]
        version = (int(match.group(2)), int(match.group(3))) if match.group(3) else (int(match.group(2)),)
        if match.group(1) == "cp" and len(version) == 2:
            abis = [self.abi] if self.abi not in ("abi3", "none") else []
            head = list(cpython_tags(version, abis, platforms))
        else:
            head = list(generic_tags(self.interpreter, [self.abi], platforms))
        return head + list(compatible_tags(version, self.interpreter, platforms))


@dataclass
class _Ranking:
    """A target's ranks of tags (lower is better), computed once."""

    target: Target
    rank: dict[Tag, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for i, tag in enumerate(self.target.priorities()):
            self.rank.setdefault(tag, i)

    def of(self, wheel: WheelName) -> int | None:
        """The best rank of ``wheel``'s tags, or ``None`` when the target accepts none."""
        ranks = [self.rank[t] for t in wheel.tags if t in self.rank]
        return min(ranks) if ranks else None


@dataclass(frozen=True, slots=True)
class Installation:
    """Packages installed together.

    Attributes:
        packages: the packages (paths as given), in input order.
        targets: the targets it serves, spelled as tags; empty when not formed from wheel tags.
        reason: why these packages, in words.
    """

    packages: tuple[str, ...]
    targets: tuple[str, ...] = ()
    reason: str = ""


def names_python_version(interpreter: str) -> bool:
    """True for an interpreter tag that names a Python version (``cp312``, ``pp310``), not only its
    major (``py3``) — PEP 425's interpreter tag."""
    return re.fullmatch(r"[a-z]+\d\d+", interpreter) is not None


def _candidate_targets(wheels: Sequence[WheelName]) -> tuple[list[Target], frozenset[Target]]:
    """The targets to plan for, and which of them a wheel's tag names.

    Named: the triples the wheels' tags name, with a platform and an interpreter version first;
    failing those, with a platform; failing those, all (only pure wheels).  Each is followed by
    the same interpreter and ABI on each widest platform among the tags that accepts its own
    (``_widest_platforms``): CPython 3.11 on glibc 2.28 where a ``cp311-cp311-manylinux_2_17`` wheel
    and another project's ``py3-none-manylinux_2_28`` one are given — pip installs both there.
    """
    tags = [t for w in wheels for t in sorted(w.tags, key=str)]
    triples = list(dict.fromkeys(Target(t.interpreter, t.abi, t.platform) for t in tags))
    levels = (
        [t for t in triples if t.platform != "any" and names_python_version(t.interpreter)],
        [t for t in triples if t.platform != "any"],
        triples,
    )
    named = next((level for level in levels if level), [])
    widest = _widest_platforms([t.platform for t in tags])
    known = frozenset(named)
    out: dict[Target, None] = {}
    for target in named:
        out[target] = None
        for platform in widest.get(target.platform, ()):
            wider = Target(target.interpreter, target.abi, platform)
            if wider not in known:
                out.setdefault(wider, None)
    return list(out), known


def _same_system(platform: str) -> object:
    """What a platform tag stands for, one value for its spellings: ``manylinux2014_x86_64`` and
    ``manylinux_2_17_x86_64`` are one glibc on one machine."""
    return glibc_of(platform) or platform


def _widest_platforms(platforms: Sequence[str]) -> dict[str, list[str]]:
    """For each platform tag among ``platforms``, the widest ones among them that accept it
    (``platforms_for``) and stand for another system: those no other one accepts, the most
    demanding of each kind and machine (``manylinux_2_28_x86_64`` for ``manylinux_2_17_x86_64``;
    never a musllinux tag for a manylinux one, nor ``aarch64`` for ``x86_64``), in the order given.
    A platform no wider one accepts maps to nothing.  Two passes over each platform's list, never
    a list per pair of platforms (a wheelhouse of 1,000 glibc tags)."""
    present = dict.fromkeys(p for p in platforms if p != "any")
    system = {p: _same_system(p) for p in present}
    below: set[str] = set()
    for wide in present:
        below.update(p for p in platforms_for(wide) if p in system and system[p] != system[wide])
    spelled: dict[object, str] = {}  # one spelling per system: the first given
    for p in present:
        if p not in below:
            spelled.setdefault(system[p], p)
    out: dict[str, list[str]] = {}
    for wide in spelled.values():
        for p in platforms_for(wide):
            if p in system and system[p] != system[wide]:
                out.setdefault(p, []).append(wide)
    return out


def _pick(ranking: _Ranking, wheels: Sequence[WheelName]) -> tuple[str, ...]:
    """For each project, the best-ranked wheel the target accepts (the first given on a tie)."""
    best: dict[str, tuple[int, int, WheelName]] = {}
    for order, wheel in enumerate(wheels):
        rank = ranking.of(wheel)
        if rank is None:
            continue
        held = best.get(wheel.project)
        if held is None or (rank, order) < held[:2]:
            best[wheel.project] = (rank, order, wheel)
    return tuple(w.path for _r, _o, w in sorted(best.values(), key=lambda b: b[1]))


def plan_installations(
    wheels: Sequence[WheelName], others: Sequence[str] = (), together: bool = False
) -> list[Installation]:
    """The installations the wheels given make (``others``: packages that are no readable wheel
    name, installed with every installation).

    Returns one installation of everything when ``together`` or when no two wheels need telling
    apart; otherwise one per distinct set of wheels the targets pick, in the order of their first
    target, each holding ``others`` too.
    """
    projects = {w.project for w in wheels}
    if together or len(wheels) <= 1:
        reason = "--together: every package given, as one installation" if together else "one installation"
        return [Installation(tuple(w.path for w in wheels) + tuple(others), (), reason)]
    sets = _target_sets(wheels)
    _cover(wheels, sets)
    kept = [s for s in sets if not any(s < other for other in sets)]
    if len(kept) == 1 and len(projects) == len(wheels):
        only = kept[0]
        return [Installation(_ordered(wheels, only, others), tuple(t.spelled for t in sets[only]), "one installation")]
    return [_installation(wheels, s, sets, others) for s in kept]


def _target_sets(wheels: Sequence[WheelName]) -> dict[frozenset[str], list[Target]]:
    """The sets of wheels the candidate targets pick, each with its targets, in target order.  A
    target no tag names counts only where it picks a set no named target picks (a wider platform
    that brings another project's wheel in), so a dist/ of one project plans as before."""
    targets, named = _candidate_targets(wheels)
    picks = [(target, frozenset(_pick(_Ranking(target), wheels))) for target in targets]
    formed = {chosen for target, chosen in picks if target in named}
    sets: dict[frozenset[str], list[Target]] = {}
    for target, chosen in picks:
        if chosen and (target in named or chosen not in formed):
            sets.setdefault(chosen, []).append(target)
    return sets


def _cover(wheels: Sequence[WheelName], sets: dict[frozenset[str], list[Target]]) -> None:
    """Give each wheel no target picked a target of its own (its first tag), with the best wheel
    of every other project for it."""
    picked = set().union(*sets) if sets else set()
    for wheel in wheels:
        if wheel.path in picked or not wheel.tags:
            continue
        tag = sorted(wheel.tags, key=str)[0]
        target = Target(tag.interpreter, tag.abi, tag.platform)
        others = [w for w in wheels if w.project != wheel.project]
        chosen = frozenset({wheel.path, *_pick(_Ranking(target), others)})
        sets.setdefault(chosen, []).append(target)
        picked |= chosen


def _ordered(wheels: Sequence[WheelName], chosen: frozenset[str], others: Sequence[str]) -> tuple[str, ...]:
    return tuple(w.path for w in wheels if w.path in chosen) + tuple(others)


def _installation(
    wheels: Sequence[WheelName], chosen: frozenset[str], sets: dict[frozenset[str], list[Target]], others: Sequence[str]
) -> Installation:
    """One installation of the plan, with the reason it was formed."""
    targets = list(sets[chosen])
    for other, more in sets.items():
        if other < chosen:
            targets.extend(t for t in more if t not in targets)
    projects = {w.project for w in wheels if w.path in chosen}  # one set, not a scan per wheel (N^3)
    left = [w for w in wheels if w.path not in chosen and w.project in projects]
    reason = "the best-ranked wheel of each project for " + ", ".join(t.spelled for t in targets[:3])
    if len(targets) > 3:
        reason += f" and {len(targets) - 3} more targets"
    if left:
        reason += "; not installed with it (one wheel per project): " + ", ".join(
            os.path.basename(w.path) for w in left[:3]
        )
        reason += f" and {len(left) - 3} more" if len(left) > 3 else ""
    return Installation(_ordered(wheels, chosen, others), tuple(t.spelled for t in targets), reason)


#: The two formats a conda channel serves every package in (conda's ``CONDA_PACKAGE_EXTENSIONS``).
CONDA_FORMATS = (".conda", ".tar.bz2")


def conda_format_sets(
    packages: Sequence[str], depends: Callable[[str], Sequence[str] | None] = lambda _path: None
) -> list[Installation]:
    """The installations the conda packages among ``packages`` make when one package name is given
    more than once: a package in both formats (``NAME-VERSION-BUILD.conda`` and ``.tar.bz2``: a
    channel serves both, conda installs one), or several builds of one name (conda-build's variants
    ``foo-1.0-py311_0`` and ``foo-1.0-py312_0``, two versions: a prefix holds one package of a name).

    The packages given once are one installation of their own (first, when there are any) — but
    those that depend on a name given more than once, themselves or through others given once
    (``bar`` needing ``foo`` given in two builds): each goes with the k-th build of those names,
    for every k they all have (alone, ``bar`` found no ``libfoo.so``).  The k-th copy given of
    each name given more than once goes to the k-th installation, with the packages given once
    whose names it ``depends`` on, transitively — as conda installs a package
    with its depends, not with a whole channel (before: with every package given, N builds beside
    M packages staged N*M).  ``depends``: the names a package's ``info/index.json`` depends on,
    ``None`` when unknown (``conda.read_depends``; the build is then installed alone, and the
    reason says so), each asked once per package.  Returns ``[]`` when no name is given twice (the
    packages then stay one installation).  Keyed by file name: the same name in two subdirectories
    of a channel (``linux-64/``, ``osx-64/``) is never installed together either.
    """
    copies: dict[str, list[str]] = {}
    for path in packages:
        base = os.path.basename(path)
        stem = next((base[: -len(s)] for s in CONDA_FORMATS if base.endswith(s)), None)
        if stem is not None:
            copies.setdefault(stem.rsplit("-", 2)[0], []).append(path)
    twice = sorted(((n, p) for n, p in copies.items() if len(p) > 1), key=lambda item: -len(item[1]))
    if not twice:
        return []
    apart = {p for _name, paths in twice for p in paths}
    closure = _Depends({name: paths for name, paths in copies.items() if len(paths) == 1}, depends)
    multi = {name: len(paths) for name, paths in twice}
    # given once, but depending on a name given twice (itself or through others given once)
    tied = closure.reaching(multi)
    once = [p for p in packages if p not in apart and p not in tied]
    order = {p: i for i, p in enumerate(packages)}
    formats = {name: len({_conda_stem(p) for p in paths}) == 1 for name, paths in twice}
    out = [Installation(tuple(once), (), _ONCE)] if once else []
    alive = len(twice)
    for k in range(len(twice[0][1])):
        while len(twice[alive - 1][1]) <= k:  # sorted longest first: the names with a k-th copy
            alive -= 1
        chosen = [paths[k] for _name, paths in twice[:alive]]
        # a package given once that depends on names given twice: with the k-th build of each
        chosen += [p for p, names in tied.items() if all(multi[n] > k for n in names)]
        brought, unknown = closure.of(chosen)
        reason = _copy_reason([(name, paths[k]) for name, paths in twice[:alive]], formats)
        out.append(
            Installation(
                tuple(sorted([*chosen, *brought], key=order.__getitem__)), (), reason + _brought(brought, unknown)
            )
        )
    return out


_ONCE = (
    "the conda packages given once (each build of a name given in several is installed apart, with what it depends on)"
)


class _Depends:
    """The packages given once (``single``: package name -> its one path) that packages depend
    on, transitively; each package's ``depends`` asked once."""

    def __init__(self, single: dict[str, list[str]], depends: Callable[[str], Sequence[str] | None]) -> None:
        self.single, self.depends = single, depends
        self.known: dict[str, Sequence[str] | None] = {}

    def reaching(self, multi: Mapping[str, int]) -> dict[str, set[str]]:
        """Each package given once that depends on names of ``multi`` (names given more than
        once), itself or through packages given once, transitively -> those names.  Propagated
        up the reversed depends from the packages naming them, a set growing at most
        ``len(multi)`` times a package: linear in the depends for a few such names."""
        direct: dict[str, set[str]] = {}
        users: dict[str, list[str]] = {}  # package given once -> the packages given once depending on it
        for path in (p for paths in self.single.values() for p in paths):
            names = self._asked(path) or ()
            direct[path] = {n for n in names if n in multi}
            for dep in (d for n in names for d in self.single.get(n, ())):
                users.setdefault(dep, []).append(path)
        reach = {p: set(names) for p, names in direct.items() if names}
        queue = list(reach)
        while queue:
            path = queue.pop()
            for user in users.get(path, ()):
                have = reach.setdefault(user, set())
                if not reach[path] <= have:
                    have |= reach[path]
                    queue.append(user)
        return {p: names for p, names in reach.items() if names}

    def _asked(self, path: str) -> Sequence[str] | None:
        """``depends(path)``, asked once."""
        if path not in self.known:
            self.known[path] = self.depends(path)
        return self.known[path]

    def of(self, chosen: Sequence[str]) -> tuple[list[str], list[str]]:
        """The packages given once that ``chosen`` depend on, transitively, in the order reached;
        and those among all whose depends are unknown."""
        seen = set(chosen)
        queue, brought, unknown = list(chosen), [], []
        while queue:
            path = queue.pop()
            if path not in self.known:
                self.known[path] = self.depends(path)
            names = self.known[path]
            if names is None:
                unknown.append(path)
                continue
            for name in names:
                for dep in self.single.get(name, ()):
                    if dep not in seen:
                        seen.add(dep)
                        brought.append(dep)
                        queue.append(dep)
        return brought, unknown


def _listed(paths: Sequence[str]) -> str:
    """Up to three package stems, and how many more."""
    shown = ", ".join(sorted(_conda_stem(p) for p in paths[:3]))
    return shown + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")


def _brought(brought: Sequence[str], unknown: Sequence[str]) -> str:
    """What a build's installation holds besides it, in words."""
    out = f"; with the packages given that it depends on: {_listed(brought)}" if brought else ""
    if unknown:
        out += (
            f"; depends unknown before staging (info/index.json not read) of {_listed(unknown)}: installed without them"
        )
    return out


def _copy_reason(chosen: Sequence[tuple[str, str]], formats: dict[str, bool]) -> str:
    """Why the copies ``chosen`` (name, path) of names given twice (``conda_format_sets``) are an
    installation of their own: one format of a package given in both (``formats[name]``: its
    copies are one stem, computed once per name), or one build of a name given in several."""
    if all(formats[name] for name, _path in chosen):
        listed = ", ".join(sorted(_conda_stem(p) for _name, p in chosen))
        return f"one format of {listed} (a channel serves each package as .conda and .tar.bz2; conda installs one)"
    listed = ", ".join(sorted(os.path.basename(p) for _name, p in chosen))
    return f"one build of a package name given in several: {listed} (a conda prefix holds one package of a name)"


def _conda_stem(path: str) -> str:
    base = os.path.basename(path)
    return next((base[: -len(s)] for s in CONDA_FORMATS if base.endswith(s)), base)
