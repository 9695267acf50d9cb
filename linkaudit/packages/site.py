"""Installed sites: a directory holding ``*.dist-info`` (a site-packages, ``pip install --target``,
a venv's, an unzipped wheel), and conda prefixes (``conda-meta/*.json``: each installed package's
record lists its files and depends).  Each distribution's ``RECORD`` says which files it owns, its
``WHEEL`` the tags it was built for, its ``METADATA`` what it requires.

A directory given that lies inside a site (``DIR/torch`` of ``pip install --target DIR torch``)
belongs to that site: what else is installed there decides whether its libraries load.
Source: PEP 376 / the "Recording installed projects" specification (``.dist-info``, ``RECORD``),
PEP 427 (``WHEEL``), core metadata.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import field

from ..records import dataclass
from .delvewheel import libs_directories
from .metadata import (
    MAX_METADATA,
    MAX_RECORD,
    Distribution,
    conda_record,
    distribution,
    installed_path,
    past_limit,
    record_normpath,
    wheel_tag_problems,
)
from .planner import glibc_of

#: The ``.dist-info`` files read, with the most bytes read of each.
_READ = {"METADATA": MAX_METADATA, "WHEEL": MAX_METADATA, "RECORD": MAX_RECORD}


@dataclass(frozen=True)
class Site:
    """A directory with installed distributions.

    Attributes:
        root: the directory (absolute, normalised).
        distributions: every ``*.dist-info`` in it, sorted by name.
        problems: ``(host path, reason)`` of each metadata file that could not be read (larger than
            its limit, not JSON, not a regular file): its distribution is judged without it, or
            left out (a conda record), and the file is named as unreadable.
    """

    root: str
    distributions: tuple[Distribution, ...]
    problems: tuple[tuple[str, str], ...] = ()
    _owner: dict[str, Distribution] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for dist in self.distributions:
            for rel in dist.files:
                self._owner.setdefault(rel, dist)

    def owner_of(self, path: str) -> Distribution | None:
        """The distribution whose ``RECORD`` lists the host ``path`` (inside the site), or ``None``."""
        rel = os.path.relpath(os.path.normpath(os.path.abspath(path)), self.root)
        if rel.startswith(".."):
            return None
        return self._owner.get(rel.replace(os.sep, "/"))

    def delvewheel_dll_directories(self) -> tuple[str, ...]:
        """The ``<name>.libs`` directories (host paths) of the distributions installed here that
        delvewheel repaired (``delvewheel.libs_directories``): their patched ``__init__.py`` adds
        them with ``os.add_dll_directory`` before any import, as inside the wheel."""
        out = [d for dist in self.distributions for d in libs_directories(dist.files, self.root)]
        return tuple(dict.fromkeys(out))

    @property
    def conda_prefix(self) -> bool:
        """True for a conda prefix (``read_prefix``: every distribution a ``conda-meta`` record)."""
        return bool(self.distributions) and all(d.kind == "conda" for d in self.distributions)

    def holds(self, path: str) -> bool:
        """True when the host ``path`` lies inside the site."""
        normal = os.path.normpath(os.path.abspath(path))
        return normal == self.root or normal.startswith(self.root + os.sep)


class _DirNode:
    """One directory of a ``_DirTree`` that is listed or where listed directories branch: ``edges``
    maps the first component below it to ``(label, child)``, ``label`` the components (joined by
    ``/``) that lead down to ``child``; ``owners`` is an ordered set of distribution names.  The
    directories inside a label hold nothing but the next one, so they have ``child``'s owners."""

    __slots__ = ("edges", "owners")

    def __init__(self, owners: dict[str, None]) -> None:
        self.edges: dict[str, tuple[str, _DirNode]] = {}
        self.owners = owners


def _shared(label: str, path: str, pos: int) -> int:
    """The length of the longest run of whole components ``label`` and ``path[pos:]`` begin with
    (characters; both share their first component, so at least its length)."""
    lo, hi = 0, min(len(label), len(path) - pos)
    while lo < hi:  # the characters they share, by halves: C-speed compares, no loop per character
        mid = (lo + hi + 1) // 2
        if path.startswith(label[:mid], pos):
            lo = mid
        else:
            hi = mid - 1
    ends = pos + lo == len(path) or path[pos + lo] == "/"
    if ends and (lo == len(label) or label[lo] == "/"):
        return lo
    return label.rfind("/", 0, lo)


def _dir_add(root: _DirNode, path: str, name: str) -> None:
    """Record that distribution ``name`` installs into the directory ``path`` (relative, normalised,
    not empty) and so into each directory above it.  Time and memory are linear in ``len(path)``:
    the tree shares prefixes, and a chain of directories holding only the next is one label."""
    node, pos, end = root, 0, len(path)
    while pos < end:
        cut = path.find("/", pos)
        first = path[pos : end if cut < 0 else cut]
        edge = node.edges.get(first)
        if edge is None:
            node.edges[first] = (path[pos:], _DirNode({name: None}))
            return
        label, child = edge
        stop = pos + len(label)
        if not (path.startswith(label, pos) and (stop == end or path[stop] == "/")):
            common = _shared(label, path, pos)  # the path leaves (or ends inside) the label: split it
            rest = label[common + 1 :]
            middle = _DirNode(dict(child.owners))
            middle.edges[rest.partition("/")[0]] = (rest, child)
            node.edges[first] = (label[:common], middle)
            child, stop = middle, pos + common
        child.owners[name] = None
        node, pos = child, stop + 1


def _dir_owners(root: _DirNode, path: str) -> dict[str, None]:
    """The owners ``_dir_add`` recorded for the directory ``path`` (relative, normalised), in the
    order they were first added; empty when none was."""
    node, pos, end = root, 0, len(path)
    while pos < end:
        cut = path.find("/", pos)
        edge = node.edges.get(path[pos : end if cut < 0 else cut])
        if edge is None:
            return {}
        label, child = edge
        stop = pos + len(label)
        if path.startswith(label, pos) and (stop == end or path[stop] == "/"):
            node, pos = child, stop + 1
        elif stop > end and label[end - pos] == "/" and label.startswith(path[pos:]):
            return child.owners  # a directory inside the label: only the child's below it
        else:
            return {}
    return node.owners


@dataclass(frozen=True)
class SiteLayout:
    """Which distribution installed in ``sites`` owns a path and which install into a directory
    (from their ``RECORD`` or conda-meta ``files``): for a site given as installed, what
    ``Staged.package_of`` / ``site_of`` / ``directory_owners`` tell of staged packages, so a
    rule of package layout (``rpath-outside-package``) judges both alike.  Paths are host paths.

    The directories above the listed files are kept as a tree sharing their prefixes (``_DirNode``),
    not as full path strings: a RECORD line 2,000 directories deep (4 KB) had 2,000 ancestors of
    ~2 KB each; a 6.4 MB RECORD of such lines took 7.2 GB.  Memory and time are now linear in the
    bytes listed.
    """

    sites: tuple[Site, ...]
    _dirs: dict[str, _DirNode] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        for site in self.sites:
            root = self._dirs.setdefault(site.root, _DirNode({}))
            for dist in site.distributions:
                parents = dict.fromkeys(posixpath.dirname(rel) for rel in dist.files)
                for parent in parents:  # every ancestor shares the first component: ".." one, none
                    if parent and not parent.startswith(".."):
                        _dir_add(root, parent, dist.name)

    def package_of(self, path: str) -> str | None:
        """The distribution (its name) whose files list the host ``path``, or ``None``."""
        for site in self.sites:
            if site.holds(path):
                dist = site.owner_of(path)
                return None if dist is None else dist.name
        return None

    def site_of(self, path: str) -> tuple[str, str] | None:
        """``(site root, path relative to it)`` of a host ``path`` inside a site (``"."`` for the
        root), or ``None`` when it is outside every one."""
        normal = os.path.normpath(os.path.abspath(path))
        for site in self.sites:
            if site.holds(normal):
                return site.root, os.path.relpath(normal, site.root).replace(os.sep, "/")
        return None

    def directory_owners(self, path: str) -> list[str]:
        """The distributions that install files into the host directory ``path`` (or below it)."""
        where = self.site_of(path)
        return [] if where is None else list(_dir_owners(self._dirs[where[0]], where[1]))


def _read(path: str, limit: int, what: str, problems: list[tuple[str, str]]) -> str:
    """The text of ``path`` (``what``: ``".dist-info/WHEEL"``, ``"conda-meta record"``), undecodable
    bytes replaced; ``""`` when absent, and when larger than ``limit`` bytes (judged by the file
    opened: ``hostfile.read_within``) or unreadable (not a regular file: a FIFO named ``METADATA``
    is never waited on) — then ``(path, why)`` is added to ``problems``."""
    from ..formats.hostfile import read_within

    try:
        data, size = read_within(path, limit)
    except FileNotFoundError:
        return ""
    except OSError as exc:
        problems.append((path, f"cannot be read: {exc.strerror or exc}"))
        return ""
    if size > limit:
        problems.append((path, past_limit(size, limit, what)))
        return ""
    return data.decode("utf-8", errors="replace")


#: Why a ``*.dist-info`` that is no directory (a file, a FIFO, a dangling symlink) is not read.
NOT_A_DIST_INFO = "not a directory: a .dist-info is one, holding METADATA, WHEEL and RECORD; not read"


def _dist_infos(directory: str) -> list[str]:
    """The names in ``directory`` ending ``.dist-info``, sorted, whatever each is (``read_site``
    names one that is no directory)."""
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    return sorted(n for n in names if n.endswith(".dist-info"))


def read_site(root: str) -> Site | None:
    """The site at the directory ``root``, or ``None`` when it holds no ``*.dist-info``; one that is
    no directory is among its ``problems`` (``NOT_A_DIST_INFO``), as is each file of one that
    cannot be read and each ``WHEEL`` ``Tag:`` line not read (``metadata.wheel_tag_problems``)."""
    root = os.path.normpath(os.path.abspath(root))
    infos = _dist_infos(root)
    if not infos:
        return None
    dists = []
    problems: list[tuple[str, str]] = []
    for name in infos:
        where = os.path.join(root, name)
        if not os.path.isdir(where):
            problems.append((where, NOT_A_DIST_INFO))
            continue
        files = {f: _read(os.path.join(where, f), limit, f".dist-info/{f}", problems) for f, limit in _READ.items()}
        problems.extend((os.path.join(where, "WHEEL"), why) for why in wheel_tag_problems(files["WHEEL"]))
        dists.append(distribution(where, files))
    return Site(root, tuple(sorted(dists, key=lambda d: d.name)), tuple(problems))


def find_site(path: str) -> Site | None:
    """The site the directory ``path`` is or lies in: itself or its nearest ancestor holding
    ``*.dist-info`` (``DIR``, ``DIR/torch``, ``DIR/torch/lib``) or ``conda-meta/*.json`` (a conda
    prefix: ``read_prefix``), or ``None``."""
    if not os.path.isdir(path):
        return None
    here = os.path.normpath(os.path.abspath(path))
    while True:
        if _dist_infos(here):
            return read_site(here)
        if os.path.lexists(os.path.join(here, "conda-meta")):  # a file named so is named: read_prefix
            prefix = read_prefix(here)
            if prefix is not None:
                return prefix
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


#: Where a prefix keeps its site-packages, relative to it: a venv or a Python installation
#: (``lib/pythonX.Y/site-packages``; Debian's and Fedora's ``lib64``; Windows ``Lib``), and
#: its ``lib`` directory given itself (``pythonX.Y/site-packages``).  Source: ``sysconfig``'s
#: ``posix_prefix`` and ``nt`` install schemes, PEP 405 (``pyvenv.cfg``).
SITE_LAYOUTS = (
    "lib/python3*/site-packages",
    "lib64/python3*/site-packages",
    "Lib/site-packages",
    "python3*/site-packages",
)


#: The most sites one prefix is taken to hold (a prefix holds one Python, a few at most: 2,000
#: ``python3.N`` directories sharing one 1 MB RECORD through symlinks ran out of memory).
MAX_SITES_BELOW = 8


def sites_below(path: str) -> list[Site]:
    """The sites of the prefix ``path`` in the standard layouts (``SITE_LAYOUTS``), for a venv or
    prefix given by its root (``check .venv``), in sorted order, at most ``MAX_SITES_BELOW``; a
    site there is what decides which libraries its files load, as when its ``site-packages`` is given."""
    import glob

    found: list[Site] = []
    real: set[str] = set()  # a venv's lib64 is a symlink to its lib: one site
    for layout in SITE_LAYOUTS:
        for directory in sorted(glob.glob(os.path.join(glob.escape(path), layout))):
            if os.path.realpath(directory) in real or not os.path.isdir(directory):
                continue
            real.add(os.path.realpath(directory))
            site = read_site(directory)
            if site is not None:
                found.append(site)
            if len(found) >= MAX_SITES_BELOW:
                return found
    return found


def claimed_glibc(dist: Distribution) -> tuple[int, int] | None:
    """The glibc a distribution's wheel claims to load with: the lowest among its manylinux tags
    (PEP 600; a compressed tag set claims every one), or ``None`` (no manylinux tag)."""
    found = [g[0] for g in (glibc_of(t.platform) for t in dist.tags) if g is not None]
    return min(found) if found else None


#: The kinds of platform tag a site's target can come from, in the order they are named: the
#: tags' own prefixes (PEP 600, PEP 656, PEP 425's ``macosx_X_Y_ARCH`` and ``win_*``).
PLATFORM_KINDS = ("manylinux", "musllinux", "macosx", "win")

_MUSL = re.compile(r"musllinux_(\d{1,9})_(\d{1,9})_\w+")
_MACOS = re.compile(r"macosx_(\d{1,9})_(\d{1,9})_\w+")
_WINDOWS = re.compile(r"win32|win_\w+")


def platform_claim(platform: str) -> tuple[str, tuple[int, int]] | None:
    """``(kind, version)`` a platform tag claims (kinds: ``PLATFORM_KINDS``): the glibc of a
    manylinux tag (legacy aliases too), the musl of a musllinux one, the macOS release of a
    ``macosx`` one, ``(0, 0)`` for Windows (its tags name no version); ``None`` for a tag naming no
    system a policy or loader model covers (``any``, ``linux_x86_64``)."""
    glibc = glibc_of(platform)
    if glibc is not None:
        return "manylinux", glibc[0]
    for kind, pattern in (("musllinux", _MUSL), ("macosx", _MACOS)):
        match = pattern.fullmatch(platform)
        if match is not None:
            return kind, (int(match.group(1)), int(match.group(2)))
    return ("win", (0, 0)) if _WINDOWS.fullmatch(platform) else None


@dataclass(frozen=True, slots=True)
class SiteTarget:
    """What one kind of platform tag among a site's distributions asks of the system: the most
    demanding distribution of that kind and the tag it claims it with.

    Attributes:
        kind: one of ``PLATFORM_KINDS``.
        platform: the platform tag (``musllinux_1_2_x86_64``): the lowest of that kind among the
            distribution's tags (a compressed tag set claims every one), the highest such among
            the site's distributions (the machine must satisfy every one installed).
        distribution: the distribution that claims it.
    """

    kind: str
    platform: str
    distribution: Distribution

    @property
    def tag(self) -> str:
        """The distribution's first tag (in sorted order) naming ``platform``."""
        return sorted(str(t) for t in self.distribution.tags if t.platform == self.platform)[0]

    def wheel_name(self) -> str:
        """A wheel file name with the distribution's name and ``platform`` alone, for what reads
        tags from names (``profiles.implied_by_wheel``): its other kinds belong to other targets."""
        return f"{self.distribution.name.replace('-', '_')}-{self.distribution.version}-py3-none-{self.platform}.whl"


def _lowest_claims(dist: Distribution) -> dict[str, tuple[tuple[int, int], str]]:
    """Per kind of platform tag, the lowest version among ``dist``'s tags and that tag's platform."""
    lowest: dict[str, tuple[tuple[int, int], str]] = {}
    for platform in sorted({t.platform for t in dist.tags}):
        claim = platform_claim(platform)
        if claim is not None and (claim[0] not in lowest or claim[1] < lowest[claim[0]][0]):
            lowest[claim[0]] = (claim[1], platform)
    return lowest


def site_targets(dists: tuple[Distribution, ...]) -> tuple[SiteTarget, ...]:
    """Per kind of platform tag the distributions name (``PLATFORM_KINDS`` order), the most
    demanding distribution: the highest version claimed of that kind (glibc, musl, macOS; ties go
    to the last name).  Several kinds in one site (musllinux and manylinux wheels installed
    together) give several targets: each file is loaded by its own loader, against its own kind's."""
    best: dict[str, tuple[tuple[int, int], str, str, Distribution]] = {}
    for dist in dists:
        for kind, (version, platform) in _lowest_claims(dist).items():
            ranked = (version, dist.name, platform, dist)
            if kind not in best or ranked[:2] > best[kind][:2]:
                best[kind] = ranked
    return tuple(SiteTarget(k, best[k][2], best[k][3]) for k in PLATFORM_KINDS if k in best)


def most_demanding(dists: tuple[Distribution, ...]) -> Distribution | None:
    """The distribution whose tags ask the most of the system: the first of ``site_targets`` (a
    manylinux one's highest glibc before a musllinux, macOS or Windows one), or ``None`` when none
    names a platform (pure ``any`` wheels, ``linux_*`` builds: the target is unknown)."""
    targets = site_targets(dists)
    return targets[0].distribution if targets else None


def owner_in(site: Site, path: str) -> Distribution | None:
    """The distribution owning ``path`` by its RECORD; in a site of one distribution (an unzipped
    wheel) that one, RECORD or not."""
    owner = site.owner_of(path)
    if owner is None and len(site.distributions) == 1 and site.holds(path):
        return site.distributions[0]
    return owner


#: The glibc conda-forge builds against when nothing in the prefix says otherwise (its sysroot).
CONDA_FORGE_GLIBC = (2, 17)
#: conda's ``subdir`` -> the machine's name in platform tags.
CONDA_ARCH = {"linux-64": "x86_64", "linux-aarch64": "aarch64", "linux-ppc64le": "ppc64le", "linux-s390x": "s390x"}


def _strings(value: object) -> list[str]:
    """``value`` as a list of strings (a record's ``depends`` or ``files``), ``[]`` when it is not a list."""
    return [str(v) for v in value] if isinstance(value, list) else []


#: The fewest bytes of a conda-meta record per JSON array or object in it: a real record has a
#: few at its top and one object per file in ``paths_data.paths`` (~150-250 bytes each, beside the
#: file's ~30-80 byte line in ``files``); parsed, each container takes 60-200 bytes, so a record
#: of 20 MiB of ``[],`` took 1.5 GB (75x) and four ran out of memory (exit 3).
RECORD_BYTES_PER_CONTAINER = 64
#: The keys of a conda-meta record that are read (``conda_distribution``, ``read_prefix``); the
#: others (``paths_data``, ``link``, ...) are dropped while the record is parsed.
_RECORD_KEYS = frozenset({"name", "version", "build", "subdir", "depends", "files"})


def _record_object(pairs: list[tuple[str, object]]) -> dict[str, object] | None:
    """One JSON object of a conda-meta record, as ``json``'s ``object_pairs_hook``: only the keys
    read (``_RECORD_KEYS``; the last of a key written twice, as ``json`` keeps), ``None`` for an
    object holding none of them (a ``paths_data`` entry: kept, it only costs memory)."""
    kept = {k: v for k, v in pairs if k in _RECORD_KEYS}
    return kept or None


def read_conda_record(path: str, problems: list[tuple[str, str]]) -> dict[str, object] | None:
    """The conda-meta record at ``path`` (a JSON object naming its package), only the keys read
    (``_RECORD_KEYS``); ``None`` when it cannot be read, with ``(path, why)`` added to
    ``problems``: larger than ``MAX_RECORD``, more JSON arrays and objects than a record holds (one
    per ``RECORD_BYTES_PER_CONTAINER`` bytes: refused before parsing), not JSON (the parser's line
    and column), not a record, ``files`` or ``depends`` no list of strings, or out of memory."""
    before = len(problems)
    text = _read(path, MAX_RECORD, "conda-meta record", problems)
    if len(problems) > before:
        return None
    containers = text.count("[") + text.count("{")
    why = ""
    if containers > 16 + len(text) // RECORD_BYTES_PER_CONTAINER:
        why = (
            f"conda-meta record not read: {containers} JSON arrays and objects in {len(text)} bytes, "
            f"more than a record holds (one per {RECORD_BYTES_PER_CONTAINER} bytes)"
        )
    else:
        try:
            record, why = conda_record(text, _record_object)
        except MemoryError:
            record, why = None, "conda-meta record not read: out of memory parsing its JSON"
        for key in ("files", "depends"):
            value = record.get(key, []) if record is not None else []
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                record, why = None, f'conda-meta record not read: its "{key}" is not a list of strings'
        if record is not None:
            return record
    problems.append((path, why))
    return None


def _conda_records(meta: str, problems: list[tuple[str, str]]) -> list[dict[str, object]]:
    """The package records of the ``conda-meta`` directory ``meta`` (each ``*.json``,
    ``read_conda_record``); one that cannot be read is added to ``problems`` with why, the others
    read, and ``meta`` itself when it cannot be listed (not a directory: a file, a FIFO)."""
    records = []
    try:
        names = sorted(n for n in os.listdir(meta) if n.endswith(".json"))
    except OSError as exc:
        problems.append((meta, f"cannot be listed: {exc.strerror or exc}: the prefix's records not read"))
        return []
    for name in names:
        record = read_conda_record(os.path.join(meta, name), problems)
        if record is not None:
            records.append(record)
    return records


def declared_glibc(records: list[dict[str, object]]) -> tuple[int, int] | None:
    """The highest ``__glibc >=X.Y`` among the records' depends (conda's virtual package: what the
    package says the system's glibc must be), or ``None`` when none says."""
    found: list[tuple[int, int]] = []
    for record in records:
        for spec in _strings(record.get("depends")):
            match = re.match(r"__glibc\s*>=\s*(\d{1,4})\.(\d{1,4})\b", str(spec))
            if match:
                found.append((int(match.group(1)), int(match.group(2))))
    return max(found) if found else None


def conda_index_glibc(text: str) -> tuple[int, int] | None:
    """``declared_glibc`` of a lone conda package's ``info/index.json`` text (``None`` when it is not
    a record: staging refused it then, by name — ``tar.py``)."""
    record, _why = conda_record(text)
    return declared_glibc([record]) if record is not None else None


def conda_glibc(records: list[dict[str, object]]) -> tuple[int, int]:
    """The glibc a conda prefix needs: the highest ``__glibc >=X.Y`` among its packages' depends
    (``__glibc`` is virtual, never itself in conda-meta), else an installed ``sysroot_linux-*``'s
    version, else conda-forge's default."""
    declared = declared_glibc(records)
    if declared is not None:
        return declared
    sysroot: tuple[int, int] | None = None
    for record in records:
        if str(record.get("name", "")).startswith("sysroot_linux-"):
            match = re.match(r"(\d{1,4})\.(\d{1,4})\b", str(record.get("version", "")))
            if match:
                sysroot = (int(match.group(1)), int(match.group(2)))
    return sysroot or CONDA_FORGE_GLIBC


def conda_distribution(
    record: dict[str, object], glibc: tuple[int, int], where: str, files: list[str], kind: str = "conda"
) -> Distribution:
    """The ``Distribution`` of a conda package's record (``info/index.json`` or ``conda-meta/*.json``):
    its ``depends`` by package name (virtual ``__glibc`` and the like left out), tagged
    ``manylinux_{glibc}_{arch}`` for its ``subdir``; ``kind`` as ``Distribution.kind``."""
    from packaging.tags import Tag  # packaging.tags: only for a conda package or prefix given

    arch = CONDA_ARCH.get(str(record.get("subdir", "")), "x86_64")
    tag = Tag("py3", "none", f"manylinux_{glibc[0]}_{glibc[1]}_{arch}")
    depends = [d.split()[0] for d in _strings(record.get("depends")) if d.strip() and not d.startswith("__")]
    name, version = str(record["name"]), str(record.get("version", ""))
    return Distribution(name, version, where, frozenset({tag}), tuple(files), tuple(depends), kind=kind)


def read_conda_index(text: str, where: str, files: list[str]) -> Distribution | None:
    """The ``Distribution`` a lone conda package's ``info/index.json`` (``text``) describes, owning
    ``files``; ``None`` when it is not a record (staging refused it then, by name — ``tar.py``)."""
    record, _why = conda_record(text)
    if record is None:
        return None
    return conda_distribution(record, conda_glibc([record]), where, files, "conda-package")


def read_prefix(root: str) -> Site | None:
    """The conda prefix at ``root`` (``conda-meta/*.json``: one record per installed package, its
    ``files`` owned by it, its ``depends`` by name) as a site whose every package carries the
    prefix's glibc baseline as its tag (``conda_glibc``); ``None`` when it has no record (and
    none that cannot be read: ``Site.problems``)."""
    root = os.path.normpath(os.path.abspath(root))
    problems: list[tuple[str, str]] = []
    records = _conda_records(os.path.join(root, "conda-meta"), problems)
    if not records:  # a prefix whose every record is unreadable: a site of none, its records named
        return Site(root, (), tuple(problems)) if problems else None
    glibc = conda_glibc(records)
    dists = []
    for record in records:
        files = [f for f in map(record_normpath, _strings(record.get("files"))) if installed_path(f)]
        build = f"-{record['build']}" if isinstance(record.get("build"), str) and record["build"] else ""
        where = os.path.join(root, "conda-meta", f"{record['name']}-{record.get('version', '')}{build}")
        dists.append(conda_distribution(record, glibc, where, files))
    return Site(root, tuple(sorted(dists, key=lambda d: d.name)), tuple(problems))
