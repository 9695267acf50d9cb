"""Which packages are staged where: the packages among the inputs recognised, each kind staged
into its root (the wheels given together into one ``site-packages``, conda packages — ``.conda``
and ``.tar.bz2`` — into one prefix, each other tarball into its own), and the temporary tree removed afterwards."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import InputError
from ..records import dataclass
from .magic import COMPRESSED
from .metadata import wheel_name
from .planner import CONDA_FORMATS, Installation, conda_format_sets, plan_installations
from .staged import Staged

if TYPE_CHECKING:  # staging (zipfile, lzma): imported once a package is among the inputs
    from .staging import Progress, Stager, StagingRoot

_ZIP = b"PK\x03\x04"

#: How paths of a shared staging root that no package installs are labelled.
_SITE_NAMES = {"wheel": "site-packages", "conda": "prefix"}

#: File names of packages picked up inside a directory given (a wheelhouse, a conda-bld output).
PACKAGE_SUFFIXES = (".whl", ".conda", ".tar.bz2")

#: File names of the other tarballs, which a directory search names but does not stage (sdists,
#: source and release archives): each is audited when given by name.  A ``.tar.bz2`` is conda's
#: format by its name, found or given, and is staged as a conda package (``PACKAGE_SUFFIXES``).
TARBALL_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.zst", ".tzst", ".tbz", ".tbz2", ".tar.lzma")


def empty_directory_message(skipped: int, tarballs: Sequence[str]) -> str:
    """What a ``no-binaries`` note says of a directory given in which no binary and no wheel or
    conda package was found: ``skipped`` files of a format not supported yet, and the ``tarballs``
    found (``prepare.TARBALL_SUFFIXES``), which a directory search names but does not stage —
    never "nothing to audit" when there are some (each is audited given by name)."""
    unread = f" ({skipped} of a format not supported yet)" if skipped else ""
    if not tarballs:
        return f"holds no binary linkaudit can read{unread}; nothing to audit"
    shown = ", ".join(tarballs[:3]) + (f" and {len(tarballs) - 3} more" if len(tarballs) > 3 else "")
    return (
        f"holds {len(tarballs)} tarball{'s' if len(tarballs) > 1 else ''} not audited: {shown} (a directory is "
        "searched for binaries, wheels and conda packages, not for sdists or release archives); give the "
        f"tarball itself: linkaudit check {tarballs[0]}; besides, no binary linkaudit can read{unread}"
    )


def package_kind(path: str) -> str | None:
    """``"zip"`` (a wheel or a ``.conda``), ``"tarball"`` (plain or compressed: a conda
    ``.tar.bz2`` among them) or ``None``: what the file at ``path`` is, by its first bytes — or,
    for a file named ``*.whl`` / ``*.conda``, by the zip end-of-archive record that installers read.

    Never raises: an unreadable file is ``None`` and is reported by the ordinary reader.
    """
    try:
        # Non-blocking and checked to be a regular file: a FIFO named x.whl is never waited on.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        head = os.read(fd, 512)
    except OSError:
        return None
    finally:
        os.close(fd)
    if head.startswith(_ZIP):
        return "zip"
    if path.endswith((".whl", ".conda")):
        # Named as a package: a zip by its end-of-archive record (behind a prefix, an ELF stub or
        # a self-extractor, as pip and conda read it), or none, which the zip reader then names
        # ("not a readable zip archive": a truncated download, a text file) instead of "not a binary".
        return "zip"
    if head.startswith(COMPRESSED) or (len(head) >= 262 and head[257:262] == b"ustar"):
        return "tarball"
    if len(head) == 512 and head[148:156].strip(b" \0").isdigit():  # a checksum field: a v7 tar?
        from .tarread import is_tar_header  # the tar reader only for what may be a tar (magic.py)

        if is_tar_header(head):
            return "tarball"  # a pre-POSIX (v7) tar: no magic, its header's checksum says it
    return None


def _packages_under(top: str) -> tuple[list[str], list[str]]:
    """``(packages, tarballs)`` below the directory ``top``, by name (``PACKAGE_SUFFIXES``,
    ``TARBALL_SUFFIXES``), sorted; symlinked directories are not followed (the binary walk decides
    what a link may reach)."""
    out: list[str] = []
    tarballs: list[str] = []
    stack = [top]  # depth first, by an explicit stack: os.walk recurses (RecursionError ~990 deep)
    while stack:
        # a directory that cannot be listed is passed over, as os.walk does (the binary walk names it)
        entries = sorted(_listing(stack.pop()) or (), key=lambda e: e[0])
        stack.extend(reversed([path for _name, path, is_dir in entries if is_dir]))
        out.extend(path for name, path, is_dir in entries if not is_dir and name.endswith(PACKAGE_SUFFIXES))
        tarballs.extend(path for name, path, is_dir in entries if not is_dir and name.endswith(TARBALL_SUFFIXES))
    return out, tarballs


def _listing(directory: str) -> list[tuple[str, str, bool]] | None:
    """``(name, path, is a directory)`` of each entry of ``directory`` (a symlink is not a
    directory here: never followed), or ``None`` when it cannot be listed."""
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError:
        return None
    out = []
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        out.append((entry.name, entry.path, is_dir))
    return out


def remove_tree(top: str) -> None:
    """Remove the directory ``top`` and everything below it, never following a symlink, by an
    explicit stack: ``shutil.rmtree`` recurses, and a member ~1,000 directories deep raised
    RecursionError through ``ignore_errors`` and left the staging tree behind.  Errors are ignored
    (what cannot be removed stays)."""
    stack: list[tuple[str, bool]] = [(top, False)]
    while stack:
        path, emptied = stack.pop()
        if emptied:
            with contextlib.suppress(OSError):
                os.rmdir(path)
            continue
        stack.append((path, True))
        for _name, below, is_dir in _listing(path) or ():
            if is_dir:
                stack.append((below, False))
            else:
                with contextlib.suppress(OSError):
                    os.unlink(below)


def _recognise(
    paths: list[str], is_package: Callable[[str], str | None]
) -> tuple[dict[str, str], list[str], dict[str, list[str]]]:
    """``(package path -> kind, the inputs in order, directory given -> the tarballs below it not
    staged)``: the packages among ``paths`` and inside the directories given (a wheelhouse), each
    real file once (two spellings, a symlink); a tarball found in a directory is named, not staged
    (``TARBALL_SUFFIXES``)."""
    kinds: dict[str, str] = {}
    tarballs: dict[str, list[str]] = {}
    found: list[str] = []
    real: set[str] = set()
    dropped: set[str] = set()

    def take(path: str, kind: str | None) -> bool:
        if kind is None or path in kinds:
            return False
        key = os.path.realpath(path)
        if key in real:
            dropped.add(path)
            return False
        real.add(key)
        kinds[path] = kind
        return True

    for p in paths:
        try:
            mode = os.stat(p).st_mode
        except OSError:
            continue
        if stat.S_ISREG(mode):
            take(p, is_package(p))
        elif stat.S_ISDIR(mode):
            packages, below = _packages_under(p)
            if below:
                tarballs[p] = below
            for candidate in packages:
                if candidate in kinds:
                    continue
                kind = is_package(candidate)
                if take(candidate, kind) or kind is None:
                    # named as a package but none (garbage, empty): given to the readers as a
                    # path, so it is an unreadable input by name, never a quiet "no binaries"
                    found.append(candidate)
    return kinds, list(dict.fromkeys(p for p in [*paths, *found] if p not in dropped)), tarballs


def _conda_candidates(kinds: dict[str, str]) -> int:
    """How many of the packages ``kinds`` (path -> ``package_kind``) may be conda packages staged
    into the one prefix: every zip not named ``*.whl`` and every ``*.tar.bz2`` (an upper bound)."""
    return sum(
        1
        for p, k in kinds.items()
        if (k == "zip" and not p.endswith(".whl")) or (k == "tarball" and p.endswith(".tar.bz2"))
    )


class _Roots:
    """The staging roots made under one temporary directory, by key (``wheel``, ``conda``,
    ``tarballN``), in the order first used."""

    def __init__(self, tmp: str) -> None:
        self.tmp = os.path.realpath(tmp)
        self.sites: dict[str, StagingRoot] = {}
        self.paths: list[str] = []  # the inputs to audit, each root once

    def get(self, key: str, label: str) -> StagingRoot:
        """The root of ``key`` (made on first use), with ``label`` recorded as staged into it."""
        site = self.sites.get(key)
        if site is None:
            from .staging import StagingRoot  # loaded already (staged_inputs)

            host = os.path.join(self.tmp, key)
            os.mkdir(host, 0o700)
            site = self.sites[key] = StagingRoot(host, _SITE_NAMES.get(key, label))
            self.paths.append(host)
        site.labels.append(label)
        return site


def _stage_zip(stager: Stager, roots: _Roots, path: str) -> None:
    """Stage the zip at ``path``: a ``.conda`` or a wheel."""
    import zipfile

    from .conda import is_conda_zip, stage_conda_zip
    from .staging import CORRUPT
    from .wheel import stage_wheel

    try:
        zf = zipfile.ZipFile(path)
    except (*CORRUPT, zipfile.LargeZipFile) as exc:
        stager.errors.append(InputError(path, f"not a readable zip archive: {exc}"))
        return
    with zf:
        packed = os.path.getsize(path)
        if is_conda_zip(zf):
            stage_conda_zip(stager, roots.get("conda", path), path, zf, packed)
        else:
            stage_wheel(stager, roots.get("wheel", path), path, zf, packed)


def _stage(stager: Stager, roots: _Roots, path: str, kind: str | None) -> None:
    """Stage the input ``path`` of ``kind`` (``package_kind``; ``None``: no package, audited as
    it is): a ``.tar.bz2`` into the conda prefix, any other tarball into a root of its own."""
    from .tar import stage_tarball  # the archive readers: only once a package is among the inputs

    if kind is None:
        roots.paths.append(path)
    elif kind == "tarball" and path.endswith(".tar.bz2"):  # a conda package: into the one prefix
        stage_tarball(stager, roots.get("conda", path), path, path, "conda")
    elif kind == "tarball":
        stage_tarball(stager, roots.get(f"tarball{len(roots.sites)}", path), path, path)
    else:
        _stage_zip(stager, roots, path)


@dataclass(frozen=True, slots=True)
class PlannedInputs:
    """The inputs of one installation's audit.

    Attributes:
        paths: what to hand ``staged_inputs`` (the first installation also takes every input that
            is no package: files, directories).
        packages: the packages staged for it; ``None``: every package among ``paths``.
        installation: which packages, for which target, and why.
    """

    paths: tuple[str, ...]
    packages: frozenset[str] | None
    installation: Installation


def plan_inputs(
    paths: list[str], together: bool = False, is_package: Callable[[str], str | None] = package_kind
) -> list[PlannedInputs]:
    """The installations the inputs make (``planner.plan_installations``): wheels of one project
    for several targets apart, each wheel with what it is installed with; the conda packages apart
    from the tarballs, zips without a wheel name, files and directories (``_others_apart``).  One
    entry, of every input, when there is nothing to tell apart."""
    kinds, ordered, _tarballs = _recognise(paths, is_package)
    wheels = []
    others = []
    for p in ordered:
        if p not in kinds:
            continue
        name = wheel_name(p) if kinds[p] == "zip" and p.endswith(".whl") else None
        if name is None:
            others.append(p)
        else:
            wheels.append(name)
    loose = [p for p in ordered if p not in kinds]
    conda = [p for p in others if p.endswith(CONDA_FORMATS)]
    rest = [p for p in others if not p.endswith(CONDA_FORMATS)]
    apart = _others_apart(conda, rest, bool(loose)) if not together else []
    if together or (not wheels and len(apart) < 2) or (len(wheels) == 1 and not loose and not others):
        return [PlannedInputs(tuple(paths), None, plan_installations(wheels, others, together)[0])]
    plan = [(i, frozenset(i.packages)) for i in plan_installations(wheels)] if wheels else []
    plan.extend((i, frozenset(i.packages)) for i in apart)
    if len(plan) == 1:
        return [PlannedInputs(tuple(paths), None, plan[0][0])]
    out: list[PlannedInputs] = []
    home = apart[-1] if loose and apart else None  # the inputs that are no package (files, directories)
    position = {p: i for i, p in enumerate(ordered)}  # each installation's inputs in input order, by
    for installation, members in plan:  # its own members: never a scan of every input per installation
        inputs = sorted((p for p in members if p in position), key=position.__getitem__)
        if installation is home:
            inputs = sorted([*inputs, *loose], key=position.__getitem__)
        out.append(PlannedInputs(tuple(inputs), members, installation))
    return out


def _others_apart(conda: list[str], rest: list[str], loose: bool) -> list[Installation]:
    """The installations of the inputs that are no wheel: the conda packages (one per format, when
    a package is given as both ``.conda`` and ``.tar.bz2``: ``conda_format_sets``) apart from the
    tarballs, files and directories — a conda package is judged as conda-build judges it, against
    conda-forge's sysroot, a build tree beside it against the auditing host (before: one
    installation, and the build tree's libz.so.1 was "not found" on a host that has it)."""
    out = conda_format_sets(conda, _read_depends) or (
        [Installation(tuple(conda), (), "the conda packages")] if conda else []
    )
    if rest or loose:
        reason = "the inputs that are no wheel or conda package (files, directories, tarballs)"
        plain = "the inputs that are no wheel (files, directories, other packages)"
        out.append(Installation(tuple(rest), (), reason if conda else plain))
    return out


def _read_depends(path: str) -> tuple[str, ...] | None:
    """``conda.read_depends``, its module (zipfile, the codecs) imported on the first call only: a
    plain ELF check plans no conda package and imports none of it (tests/test_startup.py)."""
    from .conda import read_depends

    return read_depends(path)


def plan_each(paths: list[str], is_package: Callable[[str], str | None] = package_kind) -> list[PlannedInputs]:
    """One installation per package among the inputs and in the directories given (``--each``: a
    channel or a mirror, whose packages are not installed together), in input order; the inputs
    that are no package (files, directories) one more, last."""
    kinds, ordered, _tarballs = _recognise(paths, is_package)
    out = [
        PlannedInputs((p,), frozenset({p}), Installation((p,), (), "each package on its own (--each)"))
        for p in ordered
        if p in kinds
    ]
    loose = tuple(p for p in ordered if p not in kinds)
    if loose or not out:
        out.append(PlannedInputs(loose, frozenset(), Installation((), (), "the inputs that are no package")))
    return out


@contextmanager
def staged_inputs(
    paths: list[str],
    is_package: Callable[[str], str | None] = package_kind,
    progress: Progress | None = None,
    only: Collection[str] | None = None,
    whole: bool = False,
    hold: bool = False,
) -> Iterator[Staged]:
    """Stage every package among ``paths`` for the audit; the temporary tree is removed on exit.

    Args:
        paths: the inputs as given; a path that is a regular file and a package (``package_kind``)
            is staged, every other path passes through unchanged.
        is_package: what a path is (``package_kind``).
        progress: told the bytes expected and written (a progress bar), or ``None``.
        only: the packages to stage (one installation's, ``plan_inputs``); the others found are
            left out.  ``None``: every package found.
        whole: write every binary member out whole (``Stager.whole``), for readers that open
            the files themselves (``--verify``).
        hold: hold a tarball's small binaries in memory (``Stager.hold``; no loader emulation).

    Yields:
        A ``Staged``: the paths to audit, the members refused, and ``label`` to write staged
        paths back as ``PACKAGE!member``.
    """
    kinds, ordered, tarballs = _recognise(paths, is_package)
    found = list(kinds)
    if only is not None:
        kinds = {p: k for p, k in kinds.items() if p in only}
        ordered = [p for p in ordered if p in kinds or p not in found]
    if not kinds:
        yield Staged(ordered, [], [], found=found, tarballs=tarballs)
        return
    import tempfile

    from ..formats.held import forget_under as forget_held
    from ..formats.ranges import forget_under
    from .staging import Budget, Stager

    tmp = tempfile.mkdtemp(prefix="linkaudit-")
    try:
        stager = Stager(Budget(progress), whole, hold)
        stager.compare = _conda_candidates(kinds) > 1  # one conda package clashes with none: no sums
        roots = _Roots(tmp)
        for p in ordered:
            _stage(stager, roots, p, kinds.get(p))
        sites, errors = list(roots.sites.values()), stager.all_errors()
        yield Staged(roots.paths, errors, list(kinds), sites, found=found, clashes=stager.clashes,
                     copies=stager.copies, sniffed=stager.sniffed, tarballs=tarballs)  # fmt: skip
    finally:
        forget_under(os.path.realpath(tmp))
        forget_held(tmp)
        remove_tree(tmp)
