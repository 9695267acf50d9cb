"""Platform policies: what a ``manylinux_X_Y_ARCH`` or ``musllinux_1_X_ARCH`` tag promises.

The data is auditwheel's own (``rules/data/policies.json``, written by
``scripts/gen_policies.py`` from the auditwheel wheel it names, with the version and date):
per policy its aliases, library whitelist and symbol blacklist, per architecture the symbol
versions allowed (``GLIBC``, ``GLIBCXX``, ``CXXABI``, ``GCC``, ``LIBATOMIC``, ``ZLIB``), and
the dynamic loader's file per architecture.  ``policy_for_tag`` turns one platform tag into
a ``Policy``; a legal tag with no published policy (``manylinux_2_29_x86_64``) is *derived*:
its own glibc ceiling, the rest from the highest published policy below it.

What a ``musllinux_1_X`` policy can promise: musl has no symbol versioning, so there are no
symbol-version ceilings; the check is the list of system libraries (``libc.so`` — musl's
loader *is* its libc — and ``libz.so.1``), the loader's file, and that every other library is
shipped.  It cannot tell whether a symbol the wheel uses exists in musl 1.X: musl adds
functions between releases and nothing in the file records which release it was linked
against (auditwheel checks no more).

Sources: PEP 600 (``manylinux_X_Y``), PEP 656 (``musllinux_X_Y``), PEP 513/571/599 (the
legacy aliases), auditwheel ``src/auditwheel/policy/*.json``.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType

from ..errors import ConfigError
from ..records import dataclass
from .model import parse_version_name

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "rules", "data", "policies.json")

#: The symbol-version families a manylinux policy lists per architecture (auditwheel's keys).
FAMILIES = ("GLIBC", "GLIBCXX", "CXXABI", "GCC", "LIBATOMIC", "ZLIB")

_TAG = re.compile(r"^(?P<family>manylinux|musllinux)_(?P<major>\d{1,9})_(?P<minor>\d{1,9})_(?P<arch>[a-z0-9_]+)$")
_LEGACY = re.compile(r"^(?P<alias>manylinux1|manylinux2010|manylinux2014)_(?P<arch>[a-z0-9_]+)$")


@dataclass(frozen=True, slots=True)
class Policy:
    """One platform tag's policy for one architecture.

    Attributes:
        tag: the canonical tag, ``"manylinux_2_17_aarch64"``.
        family: ``"manylinux"`` (glibc) or ``"musllinux"`` (musl).
        version: the libc release the tag names, ``(2, 17)`` or ``(1, 2)``.
        arch: the wheel architecture, ``"aarch64"``, ``"x86_64"``, ``"armv7l"``...
        machine: the ELF machine as ``Binary.machine`` spells it (``"x86-64"``, ``"arm"``).
        name: the published policy the data comes from (``"manylinux_2_17"``).
        aliases: the tag's legacy spellings (``("manylinux2014_aarch64",)``).
        symbol_versions: family -> the version names allowed, as published for ``arch``
            (``{"GLIBC": ("2.0", "2.17", "2.18"), ...}``); empty for musllinux.
        ceilings: the highest numbered version of each family, ``("GLIBC_2.17", "GLIBCXX_3.4.19",
            ...)``: what ``symbol-version`` enforces; for a derived policy GLIBC is the tag's own.
        system_libraries: the library whitelist: SONAMEs a system of the policy provides.
        blacklist: library -> symbols a wheel must not use from it (auditwheel's blacklist).
        loader: the dynamic loader's path on such a system (``"/lib/ld-linux-aarch64.so.1"``,
            ``"/lib/ld-musl-x86_64.so.1"``).
        derived_from: the published policy the non-GLIBC data came from when the tag has none of
            its own (``"manylinux_2_28"`` for ``manylinux_2_29``), else ``None``.
        source: ``"auditwheel 6.8.2 (2026-12-02)"``.
    """

    tag: str
    family: str
    version: tuple[int, int]
    arch: str
    machine: str
    name: str
    aliases: tuple[str, ...]
    symbol_versions: Mapping[str, tuple[str, ...]]
    ceilings: tuple[str, ...]
    system_libraries: tuple[str, ...]
    blacklist: Mapping[str, tuple[str, ...]]
    loader: str
    derived_from: str | None
    source: str

    @property
    def loader_name(self) -> str:
        """The loader's file name, ``"ld-linux-aarch64.so.1"``."""
        return os.path.basename(self.loader)


@dataclass(frozen=True, slots=True)
class _Published:
    """One published policy as the data file has it (auditwheel's keys)."""

    name: str
    aliases: tuple[str, ...]
    lib_whitelist: tuple[str, ...]
    blacklist: dict[str, tuple[str, ...]]
    symbol_versions: dict[str, dict[str, tuple[str, ...]]]


@dataclass(frozen=True, slots=True)
class _Data:
    """The data file, validated: policies by (family, version), loaders, machines, provenance."""

    published: Mapping[tuple[str, tuple[int, int]], _Published]
    glibc_loaders: Mapping[str, str]
    musl_arch: Mapping[str, str]
    machines: Mapping[str, str]
    source: str


def _fail(what: str) -> ConfigError:
    return ConfigError(f"{_PATH}: {what} (a packaging bug: run scripts/gen_policies.py)")


def _strings(value: object, what: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{what}: expected a list of strings")
    return tuple(value)


def _string_map(value: object, what: str) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise _fail(f"{what}: expected a table of strings")
    return dict(value)


def _check_policy(entry: object) -> tuple[tuple[str, tuple[int, int]], _Published]:
    """One policy entry validated: its key and its fields (lists as tuples)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise _fail("policies: an entry without a name")
    name = entry["name"]
    m = re.fullmatch(r"(manylinux|musllinux)_(\d{1,9})_(\d{1,9})", name)
    if m is None or entry.get("family") != m.group(1):
        raise _fail(f"policies.{name}: not a manylinux_X_Y or musllinux_X_Y name of its family")
    versions = entry.get("symbol_versions")
    if not isinstance(versions, dict):
        raise _fail(f"policies.{name}.symbol_versions: expected a table per architecture")
    per_arch = {}
    for arch, families in versions.items():
        if not isinstance(families, dict):
            raise _fail(f"policies.{name}.symbol_versions.{arch}: expected a table")
        per_arch[arch] = {k: _strings(v, f"policies.{name}.symbol_versions.{arch}.{k}") for k, v in families.items()}
    blacklist = entry.get("blacklist")
    if not isinstance(blacklist, dict):
        raise _fail(f"policies.{name}.blacklist: expected a table")
    fields = _Published(
        name,
        _strings(entry.get("aliases"), f"policies.{name}.aliases"),
        _strings(entry.get("lib_whitelist"), f"policies.{name}.lib_whitelist"),
        {k: _strings(v, f"policies.{name}.blacklist.{k}") for k, v in blacklist.items()},
        per_arch,
    )
    return (m.group(1), (int(m.group(2)), int(m.group(3)))), fields


@functools.cache
def _data() -> _Data:
    """The data file, read and validated once.

    Raises:
        ConfigError: unreadable or malformed (naming the key).
    """
    try:
        with open(_PATH, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{_PATH}: cannot read the policy data: {exc}") from exc
    if not isinstance(raw, dict) or raw.get("schema") != 1:
        raise _fail("schema is not 1")
    if not isinstance(raw.get("auditwheel_version"), str) or not isinstance(raw.get("generated"), str):
        raise _fail("auditwheel_version and generated must be strings")
    policies = raw.get("policies")
    if not isinstance(policies, list):
        raise _fail("policies: expected a list")
    published = dict(_check_policy(p) for p in policies)
    if len(published) != len(policies):
        raise _fail("policies: a name given twice")
    return _Data(
        published,
        _string_map(raw.get("glibc_loaders"), "glibc_loaders"),
        _string_map(raw.get("musl_arch"), "musl_arch"),
        _string_map(raw.get("machines"), "machines"),
        f"auditwheel {raw['auditwheel_version']} ({raw['generated']})",
    )


def parse_tag(tag: str) -> tuple[str, tuple[int, int], str] | None:
    """``(family, version, arch)`` of a manylinux or musllinux platform tag, legacy aliases
    (``manylinux2014_aarch64`` -> ``("manylinux", (2, 17), "aarch64")``) included; ``None`` for
    any other tag (``linux_x86_64``, ``macosx_11_0_arm64``, ``any``).  Source: PEP 600, PEP 656,
    PEP 513/571/599."""
    m = _TAG.fullmatch(tag)
    if m is not None:
        return m.group("family"), (int(m.group("major")), int(m.group("minor"))), m.group("arch")
    legacy = _LEGACY.fullmatch(tag)
    if legacy is None:
        return None
    version = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}[legacy.group("alias")]
    return "manylinux", version, legacy.group("arch")


def _ceilings(families: Mapping[str, tuple[str, ...]], glibc: tuple[int, int] | None) -> tuple[str, ...]:
    """The highest numbered version per family (``TM_1``, ``FLOAT128``, ``ABI_DT_RELR`` are not
    numbered); ``glibc`` replaces the GLIBC one (a derived policy)."""
    out = []
    for family in FAMILIES:
        numbered = [p for p in (parse_version_name(f"{family}_{v}") for v in families.get(family, ())) if p]
        numbered = [p for p in numbered if p[0] == family]
        if family == "GLIBC" and glibc is not None:
            out.append(f"GLIBC_{glibc[0]}.{glibc[1]}")
        elif numbered:
            out.append(f"{family}_{'.'.join(map(str, max(numbered)[1]))}")
    return tuple(out)


def _loader(data: _Data, family: str, arch: str) -> str | None:
    if family == "musllinux":
        musl = data.musl_arch.get(arch)
        return f"/lib/ld-musl-{musl}.so.1" if musl else None
    return data.glibc_loaders.get(arch)


def policy_for_tag(tag: str) -> Policy | None:
    """The policy a manylinux or musllinux platform tag promises, or ``None``.

    ``tag`` is one platform tag (``"manylinux_2_17_aarch64"``, ``"manylinux2014_aarch64"``,
    ``"musllinux_1_2_x86_64"``).  A tag auditwheel publishes a policy for gets it as published;
    a legal tag without one gets its own GLIBC ceiling and the rest from the highest published
    policy of its family below it that covers the architecture (``Policy.derived_from``).
    ``None``: not a manylinux/musllinux tag, an architecture without a loader we know, or no
    published policy at or below it for the architecture.

    Raises:
        ConfigError: the shipped data file is malformed.
    """
    parsed = parse_tag(tag)
    if parsed is None:
        return None
    family, version, arch = parsed
    data = _data()
    loader = _loader(data, family, arch)
    machine = data.machines.get(arch)
    below = sorted(
        (v, entry)
        for (fam, v), entry in data.published.items()
        if fam == family and v <= version and arch in entry.symbol_versions
    )
    if loader is None or machine is None or not below:
        return None
    published, entry = below[-1]
    exact = published == version
    families = entry.symbol_versions[arch]
    name = entry.name
    return Policy(
        tag=f"{family}_{version[0]}_{version[1]}_{arch}",
        family=family,
        version=version,
        arch=arch,
        machine=machine,
        name=name if exact else f"{family}_{version[0]}_{version[1]}",
        aliases=tuple(f"{a}_{arch}" for a in entry.aliases) if exact else (),
        symbol_versions=MappingProxyType(dict(families)),
        ceilings=_ceilings(families, None if exact or family != "manylinux" else version),
        system_libraries=entry.lib_whitelist,
        blacklist=MappingProxyType(dict(entry.blacklist)),
        loader=loader,
        derived_from=None if exact else name,
        source=data.source,
    )


def iter_policies() -> Iterator[Policy]:
    """Every published policy per architecture, manylinux then musllinux, oldest first.

    Raises:
        ConfigError: the shipped data file is malformed.
    """
    data = _data()
    for (family, version), entry in sorted(data.published.items()):
        for arch in entry.symbol_versions:
            policy = policy_for_tag(f"{family}_{version[0]}_{version[1]}_{arch}")
            if policy is not None:
                yield policy


def policy_source() -> str:
    """Where the policy data comes from: ``"auditwheel 6.8.2 (2026-12-02)"``."""
    return _data().source


def loader_for_machine(machine: str, musl: bool = False) -> str | None:
    """The dynamic loader's path for an ELF machine as ``Binary.machine`` spells it
    (``"aarch64"`` -> ``"/lib/ld-linux-aarch64.so.1"``; with ``musl``: ``"/lib/ld-musl-aarch64.so.1"``),
    or ``None`` for a machine no policy covers."""
    data = _data()
    for arch, name in data.machines.items():
        if name == machine:
            return _loader(data, "musllinux" if musl else "manylinux", arch)
    return None
