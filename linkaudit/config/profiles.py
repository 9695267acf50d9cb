"""Profiles: named target baselines shipped as data.

A profile is what a packager targets — ``manylinux_2_28_aarch64``, ``musllinux_1_2_x86_64``,
``conda-forge:2.17`` — and sets the symbol-version ceilings (``GLIBC_2.28``, ``GLIBCXX_3.4.24``,
...) that ``symbol-version`` enforces.  Each is dated and cites its source.  ``check --profile
NAME`` (or ``profile = NAME`` in ``linkaudit.toml``) starts from it; ``--max-version`` and the
file's ``max_versions`` replace a ceiling of the same prefix.

The manylinux and musllinux profiles are one per published policy and architecture, from
auditwheel's data (``config.policies``); ``manylinux_2_17`` (no architecture) is
``manylinux_2_17_x86_64``, the legacy aliases (``manylinux2014``, ``manylinux2014_aarch64``) and
legal tags without a published policy (``manylinux_2_29_x86_64``, derived) are accepted too.
The others (``cuda``, ``conda-forge:*``, ``macos-11``) are in ``rules/data/profiles.toml``.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from ..errors import ConfigError
from ..records import dataclass

if TYPE_CHECKING:  # the platform policies (auditwheel's JSON): read only when a tag or a policy is asked for
    from .policies import Policy

#: ``policy_for_tag`` is offered here (a wrapper: ``policies`` is imported on first use): the one
#: call other rooms (installations) make to turn a platform tag into its policy.
__all__ = [
    "DEFAULT",
    "Profile",
    "WheelPolicy",
    "get_profile",
    "implied_by_wheel",
    "policy_for_tag",
    "profiles",
    "select_policies",
    "wheel_platform_tags",
]

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules", "data", "profiles.toml")
DEFAULT = "cuda"


@dataclass(frozen=True, slots=True)
class Profile:
    """One target baseline.

    Attributes:
        name: ``"manylinux_2_28"``.
        summary: one line.
        date: when its data was last checked (ISO date).
        source: where its data comes from (PEP, policy file, documentation).
        max_versions: the ceilings it sets, e.g. ``("GLIBC_2.28", "GLIBCXX_3.4.24")``.
        allowed_libraries: the libraries (SONAMEs) a system of the policy provides, which a
            package may NEED without shipping them (``external-library``); empty: no such list.
        policy: for a manylinux or musllinux profile, the platform policy it is (architecture,
            loader, system libraries); ``None`` for the others.
    """

    name: str
    summary: str
    date: str
    source: str
    max_versions: tuple[str, ...]
    allowed_libraries: tuple[str, ...] = ()
    policy: Policy | None = None


@functools.cache
def profiles() -> dict[str, Profile]:
    """Every profile by name: the data file's, then one per published platform policy and
    architecture (and, for x86_64, under the policy's own name: ``manylinux_2_17``).

    Raises:
        ConfigError: the data file is unreadable or malformed (a packaging bug), naming the key.
    """
    from .policies import iter_policies

    out = dict(_shipped())
    for policy in iter_policies():
        if policy.arch == "x86_64" and policy.family == "manylinux":
            out[policy.name] = _policy_profile(policy, policy.name)  # the names that were x86_64's alone
        out[policy.tag] = _policy_profile(policy, policy.tag)
    return out


@functools.cache
def _shipped() -> dict[str, Profile]:
    """The data file's profiles by name (``cuda``, ``conda-forge:2.28``, ...), without the
    platform policies: what a run naming one of them needs (building every policy's profile
    parses ten thousand version names).

    Raises:
        ConfigError: the data file is malformed (a packaging bug), naming the key.
    """
    from ..ruledata import DATA  # profiles.toml, compiled: no TOML parse at run time

    data = DATA.get("profiles", {})
    if data.get("schema") != 1:
        raise ConfigError(f"{_PATH}: schema {data.get('schema')!r}, expected 1")
    out = {}
    for name, entry in data.get("profiles", {}).items():
        try:
            versions = entry["max_versions"]
            fields = [entry[k] for k in ("summary", "date", "source")]
        except (KeyError, TypeError) as exc:
            raise ConfigError(f"{_PATH}: profiles.{name}: missing {exc}") from exc
        allowed = entry.get("allowed_libraries", [])
        if not all(isinstance(v, str) for v in [*fields, *versions, *allowed]):
            raise ConfigError(f"{_PATH}: profiles.{name}: values must be strings")
        out[name] = Profile(name, fields[0], fields[1], fields[2], tuple(versions), tuple(allowed))
    return out


def _policy_profile(policy: Policy, name: str) -> Profile:
    """The profile of a platform policy, named ``name``."""
    libc = "glibc" if policy.family == "manylinux" else "musl"
    summary = f"{policy.tag}: {libc} {policy.version[0]}.{policy.version[1]} on {policy.arch}, loader {policy.loader}"
    if policy.aliases:
        summary += f" (alias {', '.join(policy.aliases)})"
    if policy.derived_from:
        summary += f" (derived: no published policy; GLIBC from the tag, the rest from {policy.derived_from})"
    source, _, date = policy.source.rpartition(" (")
    return Profile(
        name,
        summary,
        date.rstrip(")"),
        f"{'PEP 600' if policy.family == 'manylinux' else 'PEP 656'}; {source}, policy {policy.derived_from or policy.name}",
        policy.ceilings,
        policy.system_libraries,
        policy,
    )


def policy_for_tag(tag: str) -> Policy | None:
    """``policies.policy_for_tag``: the policy of one platform tag, or ``None`` (imported here, on
    first use: a run that names no tag never reads the policy data)."""
    from .policies import policy_for_tag as lookup

    return lookup(tag)


def get_profile(name: str) -> Profile:
    """The profile ``name``: a shipped one, a platform tag with or without its architecture
    (``manylinux_2_29`` is ``manylinux_2_29_x86_64``), or a legacy alias (``manylinux2014``,
    ``manylinux2014_aarch64``).

    Raises:
        ConfigError: no such profile (the message lists the shipped ones that are not per architecture).
    """
    shipped = _shipped()
    if name in shipped and not name.startswith(("manylinux", "musllinux")):  # never a policy's name
        return shipped[name]
    known = profiles()
    if name in known:
        return known[name]
    from .policies import parse_tag

    for candidate in (name, f"{name}_x86_64"):
        if parse_tag(candidate) is not None:
            policy = policy_for_tag(candidate)
            if policy is not None:
                return known.get(policy.tag) or _policy_profile(policy, policy.tag)
    listed = [n for n, p in known.items() if p.policy is None or p.policy.arch == "x86_64"]
    raise ConfigError(
        f"--profile {name}: no such profile (known: {', '.join(listed)}, and every tag per architecture: "
        "`linkaudit profiles`)"
    )


@dataclass(frozen=True, slots=True)
class WheelPolicy:
    """What a wheel's own name promises: symbol-version ceilings and the libraries it may need
    from the system.

    Attributes:
        tag: the platform tag they come from, e.g. ``"manylinux_2_17_x86_64"`` (the lowest glibc
            among a compressed tag set such as ``manylinux_2_17_x86_64.manylinux2014_x86_64``).
        package: the package file, as given.
        ceilings: ``("GLIBC_2.17", "GLIBCXX_3.4.19", ...)``: the tag's policy's, for its
            architecture (``config.policies``); ``GLIBC_X.Y`` alone for a tag no policy covers;
            empty for musllinux (musl has no symbol versions).
        allowed_libraries: the policy's list of system libraries.
        policy: the published policy the data comes from (``"manylinux_2_17"``), or ``None``.
        derived_from: for a tag without a published policy (``manylinux_2_29``), the one below it
            its non-GLIBC data comes from; else ``None``.
        policies: every policy the tags select — per libc family and architecture the lowest
            version (a set spanning manylinux and musllinux selects one of each), the one
            ``tag`` names first.
        macos_tags: for a macOS wheel, every ``macosx_X_Y_FORMAT`` tag of its compressed set, in
            the order written (each slice is held to the lowest tag covering its architecture);
            empty otherwise.
        origin: how findings name where the promise comes from; ``None``: "the platform tag TAG
            of PACKAGE" (a conda package's glibc baseline says its own).
    """

    tag: str
    package: str
    ceilings: tuple[str, ...]
    allowed_libraries: tuple[str, ...] = ()
    policy: str | None = None
    derived_from: str | None = None
    policies: tuple[Policy, ...] = ()
    macos_tags: tuple[str, ...] = ()
    origin: str | None = None

    @property
    def said(self) -> str:
        """Where the promise comes from, in a finding's words: ``origin``, or the tag and package."""
        return self.origin or f"the platform tag {self.tag} of {self.package}"


def wheel_platform_tags(package: str) -> tuple[str, ...]:
    """The platform tags of a wheel's file name, in the order written: ``("manylinux_2_17_x86_64",
    "manylinux2014_x86_64")`` for PEP 425's compressed tag set ``a.b``; empty when ``package`` is not
    named as a wheel (PEP 427: ``{name}-{ver}(-{build})?-{python}-{abi}-{platform}.whl``)."""
    base = os.path.basename(package)
    if not base.endswith(".whl"):
        return ()
    parts = base[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        return ()
    return tuple(t for t in parts[-1].split(".") if t)


def select_policies(tags: tuple[str, ...]) -> tuple[tuple[str, tuple[int, int], str, str], ...]:
    """The tags that decide, for a compressed tag set: per (libc family, architecture) the one of
    lowest version, as ``(family, version, arch, tag)``, manylinux first, in the order written
    otherwise.  A wheel must load on every system each of its tags names, so the oldest one of
    each family and architecture binds it (PEP 425, PEP 600, PEP 656; pip's tag matching)."""
    from .policies import parse_tag

    lowest: dict[tuple[str, str], tuple[tuple[int, int], str]] = {}
    for tag in tags:
        parsed = parse_tag(tag)
        if parsed is None:
            continue
        family, version, arch = parsed
        held = lowest.get((family, arch))
        if held is None or version < held[0]:
            lowest[(family, arch)] = (version, tag)
    ordered = sorted(lowest.items(), key=lambda kv: kv[0][0] != "manylinux")
    return tuple((family, version, arch, tag) for (family, arch), (version, tag) in ordered)


@functools.lru_cache(maxsize=4096)
def implied_by_wheel(package: str) -> WheelPolicy | None:
    """The policy a wheel's platform tags promise, or ``None`` (not a wheel name, or no
    manylinux, musllinux or macOS tag: ``linux_x86_64``, ``any``).

    A ``macosx_X_Y_ARCH`` tag promises macOS X.Y: the ceiling ``macos=X.Y`` (rule min-os-version).

    A wheel tagged ``manylinux_X_Y_ARCH`` claims to load with glibc X.Y (PEP 600) and the system
    libraries of that policy, ``musllinux_1_X_ARCH`` with musl 1.X (PEP 656); a wheel with several
    platform tags (``a.b``, PEP 425's compressed tag set) claims every one, so per libc family and
    architecture the lowest applies — as ``auditwheel show`` and pip's tag matching read it.
    Source: PEP 427 (the file name ``{name}-{ver}(-{build})?-{python}-{abi}-{platform}.whl``),
    PEP 425, PEP 600, PEP 656.
    """
    tags = wheel_platform_tags(package)
    # a release past 9999 (legal in a hand-made tag) is no macOS any system runs: no promise to check
    macos = [m for m in (re.fullmatch(r"macosx_(\d{1,4})_(\d{1,4})_\w+", t) for t in tags) if m]
    if macos:
        # A macOS wheel promises its lowest tagged release (delocate checks the same).
        lowest = min(macos, key=lambda m: (int(m.group(1)), int(m.group(2))))
        ceiling = f"macos={int(lowest.group(1))}.{int(lowest.group(2))}"
        return WheelPolicy(lowest.group(0), package, (ceiling,), macos_tags=tuple(m.group(0) for m in macos))
    selected = select_policies(tags)
    if not selected:
        return None
    family, (major, minor), _arch, tag = selected[0]
    policies = tuple(p for p in (policy_for_tag(t) for *_rest, t in selected) if p is not None)
    first = policies[0] if policies and policies[0].family == family and policies[0].version == (major, minor) else None
    if first is None:  # an architecture no policy covers: the tag's glibc alone
        ceilings = (f"GLIBC_{major}.{minor}",) if family == "manylinux" else ()
        return WheelPolicy(tag, package, ceilings, policies=policies)
    return WheelPolicy(
        tag,
        package,
        first.ceilings,
        first.system_libraries,
        first.name,
        first.derived_from,
        policies,
    )
