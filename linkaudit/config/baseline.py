"""Baselines: today's findings recorded so that a CI step fails only on new ones.

A baseline file is JSON::

    {"schema": "linkaudit-baseline/1",
     "findings": [{"rule": "driver-link", "file": "lib/libtorch_cuda.so", "subject": "libcuda.so.1"}]}

Each finding is keyed by its fingerprint (rule, file path relative to the input given on the
command line that holds it — a wheel member's after its wheel's tag triple,
``cp311-cp311-musllinux_x86_64:pkg/libfoo.so``, a stable-ABI wheel's ``abi3-musllinux_x86_64:...``,
as ``linkaudit diff`` pairs it, a conda package member's after its package's name and build's variant, conda-build's
hash left out, ``linux-64/foo-py312:lib/libfoo.so`` (``conda_key``); when several inputs are given, after the name of the input that
holds it, ``%`` and ``:`` escaped (``escaped``), and a colon, ``cpu:lib/libx.so`` —, subject — made relative too when it is such a path); a finding that
lists independent failures, a symbol each (``unresolved-symbol``, ``abi3-symbol``), by one
fingerprint per symbol, the symbol its subject (``fingerprints``): no absolute paths, no line numbers and no message text, so
a baseline written on one build machine matches the next build in another directory; nor the
content hashes auditwheel and delvewheel put in vendored libraries' names (``unhashed``), so
one written for a release matches the next; nor, in a subject that is a search-path entry of
the build machine (``rpath-leak``), its per-build parts — a CI run id, a temporary directory's
random suffix, the build image's patch release (``build_parts_out``).

A file of a site-packages in a prefix's layout is keyed by its path below it (a venv given by its
root: ``pkg/_m.so``, not ``lib/python3.11/site-packages/pkg/_m.so``, ``_site_out``; whole when the
prefix holds several site-packages), as its
site-packages given, a ``pip install --target`` site, the next venv on another Python and the
unpacked wheel key it; and an entry keyed with a wheel's target accepts the same member's file in
an unpacked wheel or an installed site of that target (the ``WHEEL`` tags of the distribution owning
it), or, the target not known, when one target's entry alone has that path (``wheel_entry``).

An entry whose file has no wheel target or conda variant (a baseline written before members were
keyed per target) still accepts the member of that path in every platform's wheel and every
build variant, and one without the input's name (written before several inputs were told apart)
the file of that path in every input, and one keying a site's file below its venv or conda prefix
(written before) that file, marked ``UNTARGETED`` (``check`` says once to write the baseline again);
so does one keying a conda member without its package's name or an input's label unescaped, where
it names that file alone (``older_parts``).

A baseline written by a run that read one keeps the entries read for the inputs, packages and
targets the run did not audit (``unaudited``) and keys a single input's files under the label the
baseline read gave it (``write_form``): a per-input or per-wheel CI job updates the baseline of all
of them in place.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import posixpath
import re
from collections.abc import Iterable, Sequence, Set
from typing import TYPE_CHECKING, Literal

from ..errors import ConfigError
from ..report import Finding, split_member

if TYPE_CHECKING:
    from packaging.tags import Tag
from .file import read_settings_file

SCHEMA = "linkaudit-baseline/1"

#: Largest baseline read, bytes (torch's whole lib/ makes about 100 KiB).
MAX_BASELINE_BYTES = 64 << 20
#: The fewest bytes of a baseline per JSON array or object in it: an entry is one object of three
#: strings (``{"rule":"a","file":"b","subject":"c"}``, 37 bytes at its shortest; ~100 as ``dumps``
#: writes it).  Parsed, an empty array takes ~60 bytes: 63 MiB of ``[],`` padding took 1.72 GB.
BASELINE_BYTES_PER_CONTAINER = 32

#: How a finding accepted by the baseline is marked (``Finding.suppressed`` starts with it).
BASELINED = "in the baseline "

#: Findings never recorded: they are about the inputs or the configuration, not the build.
NOT_RECORDED = frozenset({"unreadable-input", "baseline-fixed", "unused-suppression"})

#: How a finding is marked (after ``BASELINED`` and the file) when the baseline entry accepting it
#: has its file without the wheel's target, the conda build's variant or the input's name
#: (``keyed_file``): written before these were keyed, it accepts the file in every platform's
#: wheel, build variant or input; or a site's file keyed below its venv or prefix (``_site_out``).
UNTARGETED = (
    " (by an entry without the wheel's target, build variant or input, or keyed below the prefix:"
    " write the baseline again)"
)

#: (rule id, relative file path, subject).
Fingerprint = tuple[str, str, str]


def relative_file(file: str, inputs: Sequence[str], packages: Set[str], sited: bool = True) -> str:
    """``file`` relative to the input that holds it: a file given itself is its base name,
    a file found under a directory given is its path below that directory
    (``torch/lib/libc10.so`` under ``torch`` → ``lib/libc10.so``), a member of a package given is
    its member path (``dist/x.whl!torch/lib/libc10.so`` → ``torch/lib/libc10.so``, as the same
    file found under the unpacked tree), also for a package found in a directory given (a
    wheelhouse: the wheel's name changes with each version, its members do not), a release
    tarball's versioned top directory left out (``_top_out``); a file of a site-packages in a
    prefix's layout below the input (a venv or conda prefix given by its root or its ``lib``) by its
    path below that site-packages, a package's member too (a conda package's
    ``lib/python3.12/site-packages/foo/_x.so``, as the prefix it installs keys it) (``_site_out``;
    ``sited=False``: as keys were made before);
    anything else unchanged.  ``packages``: the packages the run staged (``Report.packages``): only their members
    are ``PACKAGE!member`` (``report.split_member``), a ``!`` in a plain file's name is its name's."""
    split = split_member(file, packages)
    if split is not None:
        member = _top_out(*split)
        return _site_out(member) if sited else member
    for given in inputs:
        base = given.rstrip("/") or "/"
        if file in (given, base):
            return os.path.basename(base)
        prefix = base if base.endswith("/") else base + "/"
        if file.startswith(prefix):
            rest = file[len(prefix) :]
            return _site_out(rest, base) if sited else rest
    return file


#: A site-packages in a prefix's layout (``packages.site.SITE_LAYOUTS``, ``sysconfig``'s install
#: schemes): ``lib/python3.11/site-packages/``, ``lib64/...``, ``Lib/site-packages/`` below any
#: directory, and ``python3.11/site-packages/`` or ``site-packages/`` at the top (a prefix's
#: ``lib`` or ``lib/python3.11`` given).
_SITE_PACKAGES = re.compile(
    r"(^|/)(?:(?:lib|lib64)/python3[.\d]*t?/|Lib/)site-packages/|^(?:python3[.\d]*t?/)?site-packages/"
)


def _site_out(relative: str, base: str | None = None) -> str:
    """``relative``, a path below an input, without the directories of the first site-packages in
    a prefix's layout it lies in (``_SITE_PACKAGES``): ``lib/python3.11/site-packages/pkg/_m.so``
    (a venv given by its root) -> ``pkg/_m.so``, as the same file is keyed when its site-packages is
    given, it is installed with ``pip install --target`` or on another Python, or its wheel is
    unpacked; ``envs/a/lib/python3.12/site-packages/pkg/_m.so`` -> ``envs/a/pkg/_m.so`` (several
    prefixes in a directory given stay apart).  The prefix's other files stay as they are
    (``lib/libz.so.1`` of a conda prefix).  ``base``: the directory given it lies below; the path
    is kept whole when the prefix there holds several site-packages (``lib/python3.11`` and
    ``lib/python3.12`` after an upgrade: their files would share a key) or a file at the path taken
    out (``_one_site``)."""
    if "site-packages/" not in relative:
        return relative
    match = _SITE_PACKAGES.search(relative)
    if match is None:
        return relative
    prefix = relative[: match.start()] + (match.group(1) or "")
    out = prefix + relative[match.end() :]
    if base is not None and not (
        _one_site(os.path.join(base, prefix)) and not os.path.lexists(os.path.join(base, out))
    ):
        return relative
    return out


#: The site-packages a prefix (or its ``lib``) may hold (``packages.site.SITE_LAYOUTS``, and a
#: ``site-packages`` of a ``lib/python3.11`` given).
_SITE_GLOBS = (
    *("lib/python3*/site-packages", "lib64/python3*/site-packages", "Lib/site-packages"),
    "python3*/site-packages",
    "site-packages",
)


def _one_site(prefix: str) -> bool:
    """Whether the directory ``prefix`` holds at most one site-packages (``_SITE_GLOBS``; a venv's
    ``lib64`` linked to its ``lib`` is one); listed once per prefix until it or its ``lib`` changes."""
    changed = []
    for directory in (prefix, *(os.path.join(prefix, d) for d in ("lib", "lib64", "Lib"))):
        try:
            changed.append(os.stat(directory).st_mtime_ns)
        except OSError:
            changed.append(0)
    return _sites_in(prefix, tuple(changed))


@functools.lru_cache(maxsize=1024)
def _sites_in(prefix: str, changed: tuple[int, ...]) -> bool:
    """``_one_site`` of ``prefix`` as of its directories' modification times ``changed``."""
    import glob

    found = {os.path.realpath(d) for g in _SITE_GLOBS for d in glob.glob(os.path.join(glob.escape(prefix), g))}
    return len(found) <= 1


#: A tarball's suffix (tar's own and its compressors').
_TARBALL = re.compile(r"\.(?:tar(?:\.(?:gz|bz2|xz|zst|lz4|lzma|Z))?|tgz|tbz2?|txz|tzst)$")


def _top_out(package: str, member: str) -> str:
    """``member`` of the tarball ``package`` without its top directory when that directory is named
    for the tarball, as a release tarball holds its tree (``libfoo-1.0-linux-x86_64.tar.gz!libfoo-1.0/lib/libfoo.so``
    -> ``lib/libfoo.so``; NVIDIA's ``cuda_nvrtc-linux-x86_64-12.4.127-archive.tar.xz!cuda_nvrtc-...-archive/lib/...``),
    as ``tar --strip-components=1`` unpacks it: the next release's tarball, its directory renamed,
    holds the same files, and so does the tree unpacked. Named for it: the tarball's name without
    its suffix starts with the directory's, followed by ``-``, ``_``, ``.`` or nothing, and the
    directory's name holds a digit (a version: a conda package's ``lib/`` stays)."""
    suffix = _TARBALL.search(package)
    top, sep, rest = member.partition("/")
    if suffix is None or not sep or not rest or not any(c.isdigit() for c in top):
        return member
    stem = os.path.basename(package[: suffix.start()])
    if stem.startswith(top) and stem[len(top) : len(top) + 1] in ("", "-", "_", "."):
        return rest
    return member


def targeted_file(
    file: str,
    inputs: Sequence[str],
    packages: Set[str],
    exact: bool = False,
    sited: bool = True,
    older: Older = frozenset(),
) -> str:
    """``relative_file``, a member of a wheel (given, or found in a directory given) keyed by its
    wheel's tag triple first, ``cp311-cp311-musllinux_x86_64:pkg/libfoo.so``: the same member in a
    project's manylinux and musllinux wheels is two files (as ``linkaudit diff`` pairs them), the
    wheel's version left out (the next release's wheel is the same file), and so its raised floors:
    the platform's kind (``_platform_kind``), a stable-ABI wheel's ``abi3`` without its Python floor
    (``_abi_kind``: ``abi3-manylinux_x86_64:pkg/_m.abi3.so``). ``exact``: the tags as written
    (``cp38-abi3-manylinux_2_28_x86_64``). A member of a conda package by its build's variant
    and name (``conda_key``): ``linux-64/foo-py312:lib/libfoo.so`` (``older`` holding ``"conda"``: by its
    variant alone, ``linux-64/py312:lib/libfoo.so``, as before). ``sited``: ``relative_file``'s."""
    relative = relative_file(file, inputs, packages, sited)
    package = (split_member(file, packages) or ("", ""))[0]
    if not package.endswith(".whl"):
        variant = (conda_variant(package) if "conda" in older else conda_key(package)) if package else None
        return f"{variant}:{relative}" if variant else relative
    parts = os.path.basename(package)[: -len(".whl")].split("-")
    if len(parts) not in (5, 6):
        return relative
    if exact:
        return f"{parts[-3]}-{parts[-2]}-{parts[-1]}:{relative}"
    return f"{_abi_kind(parts[-3], parts[-2])}-{_platform_kind(parts[-1])}:{relative}"


#: A wheel's target as ``targeted_file`` writes it before a colon: ``cp311-cp311-manylinux_x86_64``,
#: ``py2.py3-none-any``, ``abi3-musllinux_x86_64`` (PEP 425's Python tags: ``py``, ``cp``, ``pp``,
#: ``ip``, ``jy``, and GraalPy's ``graalpy``).
_WHEEL_TARGET = re.compile(r"(?:py|cp|pp|ip|jy|graalpy)\d[\w.]*-[\w.]+-[\w.]+|abi3-[\w.]+")


def tag_targets(tags: Iterable[Tag]) -> frozenset[str]:
    """The targets, as keys write them (``targeted_file``), of a distribution whose ``WHEEL`` lists
    ``tags`` (an installed site's or an unpacked wheel's ``.dist-info``): ``Tag: cp311-cp311-manylinux_2_17_x86_64``
    -> ``cp311-cp311-manylinux_x86_64``; empty for none."""
    return frozenset(f"{_abi_kind(t.interpreter, t.abi)}-{_platform_kind(t.platform)}" for t in tags)


def _expanded(target: str) -> frozenset[str]:
    """A key's wheel ``target`` one tag at a time, as ``tag_targets`` writes an installed
    distribution's (a compressed tag set's Pythons and ABIs apart: ``py2.py3-none-any`` ->
    ``py2-none-any``, ``py3-none-any``; PEP 425)."""
    if target.startswith("abi3-"):
        return frozenset((target,))
    python, abi, platform = target.split("-", 2)
    return frozenset(f"{_abi_kind(p, a)}-{platform}" for p in python.split(".") for a in abi.split("."))


@functools.lru_cache(maxsize=4)
def _by_target(baseline: frozenset[Fingerprint]) -> dict[Fingerprint, dict[str, Fingerprint]]:
    """The entries of ``baseline`` keyed with a wheel's target (``label:TARGET:path`` or
    ``TARGET:path``), by their fingerprint without it, then by target; once per baseline read."""
    found: dict[Fingerprint, dict[str, Fingerprint]] = {}
    for entry in sorted(baseline):
        rule, file, subject = entry
        parts = file.split(":")
        for i, part in enumerate(parts[:-1]):
            if _WHEEL_TARGET.fullmatch(part):
                found.setdefault((rule, ":".join(parts[:i] + parts[i + 1 :]), subject), {})[part] = entry
                break
    return found


def wheel_entry(
    key: Fingerprint, baseline: frozenset[Fingerprint], targets: frozenset[str] | None
) -> Fingerprint | None:
    """The entry of ``baseline`` keyed with a wheel's target that accepts the fingerprint ``key``
    of a file of an unpacked wheel or an installed site (no target in its key): the entry of the
    same path with one of ``targets``, the targets of the distribution owning the file
    (``tag_targets``), as the same member of that target's ``.whl`` is keyed; ``targets`` ``None``
    (not known: no ``.dist-info`` owns it): the entry of the one target that has that path, none
    when several have it. ``None`` when no entry accepts it."""
    found = _by_target(baseline).get(key)
    if not found:
        return None
    if targets is None:
        return next(iter(found.values())) if len(found) == 1 else None
    return next((entry for target, entry in found.items() if _expanded(target) & targets), None)


#: A stable-ABI wheel's Python floor (``cp38-abi3``): raised by a release (``cp39-abi3``), still the
#: same target; keys written before the floor was left out start with it (``load`` reads them).
_ABI3_FLOOR = re.compile(r"^cp3\d+(?:\.cp3\d+)*-abi3-(?=[^:]*:)")


def _abi_kind(python: str, abi: str) -> str:
    """A wheel's Python and ABI tags as a key writes them: ``cp311-cp311`` as written, a stable-ABI
    wheel's ``cp38-abi3`` as ``abi3`` (PEP 384: built for CPython 3.8 and later; the next release
    may raise the floor, as a manylinux one: still the same target)."""
    if abi == "abi3" and re.fullmatch(r"cp3\d+(?:\.cp3\d+)*", python):
        return abi
    return f"{python}-{abi}"


#: A conda subdir (a channel's directory of one platform's packages: ``linux-64``, ``noarch``).
_CONDA_SUBDIR = re.compile(r"noarch|(?:linux|osx|win|freebsd|emscripten|wasi|zos)-[a-z0-9_]+")


#: conda-build's hash of a variant's pinned dependencies in a build string: ``h`` and 7 hex digits
#: (conda-build's ``MetaData.hash_dependencies``, ``h{sha1[:7]}``), at the end of the build string
#: before its build number or ``_`` (``py312h1a2b3c4_0``, ``pyhd8ed1ab_0``), with the ``_`` before
#: it when it stands apart (``cuda126_mkl_py312_h30b5a27_300``).
_CONDA_HASH = re.compile(r"_?h[0-9a-f]{7}(?=_|$)")


def conda_variant(package: str) -> str | None:
    """The variant of the conda package file ``package`` (``NAME-VERSION-BUILD.conda`` or
    ``.tar.bz2``, conda's file naming): its build string without the build number and without
    conda-build's hash of the pinned dependencies (``_CONDA_HASH``; ``py312h1a2b3c4_0`` ->
    ``py312``: a rebuild, and the next release whose pins moved, is the same variant, as a vendored
    library's repair hash is left out, ``unhashed``), after its subdir when the package lies in a
    directory named as one (``linux-64/py312``, conda-build's output and a channel's layout);
    ``None`` for another file, a ``.tar.bz2`` whose build string does not end in ``_`` and a number
    (a source tarball), or a build string of the build number and hash alone (``h4bc722e_1``)."""
    name = os.path.basename(package)
    if name.endswith(".conda"):
        stem, numbered = name[: -len(".conda")], False
    elif name.endswith(".tar.bz2"):
        stem, numbered = name[: -len(".tar.bz2")], True
    else:
        return None
    parts = stem.rsplit("-", 2)
    if len(parts) != 3 or not parts[0] or (numbered and not re.search(r"_\d+$", parts[2])):
        return None
    variant = re.sub(r"_?\d+$", "", _CONDA_HASH.sub("", parts[2]))
    if not variant:
        return None
    subdir = os.path.basename(os.path.dirname(package))
    return f"{subdir}/{variant}" if _CONDA_SUBDIR.fullmatch(subdir) else variant


def conda_key(package: str) -> str | None:
    """The conda package file ``package`` as keys name it: its name, then its variant
    (``conda_variant``), as conda names a package (``NAME-VERSION-BUILD``, the version left out:
    the next release is the same package), ``linux-64/foo-py312``; its name alone for a build
    string of the build number and hash alone (``linux-64/foo``); a ``:`` or ``%`` in the name
    escaped (``escaped``). Two packages of one variant in a channel key apart. ``None`` for
    another file."""
    variant = conda_variant(package)
    parts = os.path.basename(package).rsplit("-", 2)
    if len(parts) != 3 or not parts[0] or not package.endswith((".conda", ".tar.bz2")):
        return None
    if variant is None and (package.endswith(".tar.bz2") and not re.search(r"_\d+\.tar\.bz2$", package)):
        return None  # a source tarball
    subdir, _, build = (variant or "").rpartition("/")
    if variant is None:
        there = os.path.basename(os.path.dirname(package))
        subdir = there if _CONDA_SUBDIR.fullmatch(there) else ""
    name = escaped(parts[0]) + (f"-{build}" if build else "")
    return f"{subdir}/{name}" if subdir else name


def escaped(name: str) -> str:
    """``name`` (an input's label, a conda package's name) as a key writes it before a ``:``: with
    its ``%`` and ``:`` written ``%25`` and ``%3A`` (RFC 3986's percent-encoding), so that the first
    ``:`` of a key ends it (``x:y`` holding ``lib/a.so`` and ``x`` holding ``y:lib/a.so`` key apart)."""
    return name.replace("%", "%25").replace(":", "%3A") if "%" in name or ":" in name else name


def _variant_unhashed(file: str) -> str:
    """A baseline entry's ``file`` key, a conda variant in it written with conda-build's hash (before
    ``conda_variant`` left it out) without it: ``linux-64/py312h1a2b3c4:lib/libfoo.so`` ->
    ``linux-64/py312:lib/libfoo.so``; a variant of the hash alone (``linux-64/h4bc722e:``) left
    out with its subdir, as ``conda_variant`` keys it now.  The key's last part (the path) is kept."""
    parts = file.split(":")
    if len(parts) < 2:
        return file
    kept = []
    for part in parts[:-1]:
        subdir, slash, build = part.rpartition("/")
        if "-" not in build and (not slash or _CONDA_SUBDIR.fullmatch(subdir)) and _CONDA_HASH.search(build):
            build = _CONDA_HASH.sub("", build)
            if not build:
                continue
            part = f"{subdir}{slash}{build}"
        kept.append(part)
    return ":".join([*kept, parts[-1]])


#: How a file is keyed (``keyed_file``): by the input holding it (when several are given) and its
#: package's target or variant; by the input holding it even when it is the only one (a baseline of
#: several inputs read by a run of one); by its target or variant alone (baselines written before
#: inputs were told apart); by its path alone (written before package targets were keyed).
KeyForm = Literal["keyed", "named", "targeted", "plain"]

#: The parts of a key as written before (``keyed_file``): ``"conda"``, a conda package's member
#: by its variant without the package's name; ``"label"``, an input's label unescaped.
Older = frozenset[Literal["conda", "label"]]


def _holder(file: str, inputs: Sequence[str], packages: Set[str]) -> str | None:
    """The input given that holds ``file`` (a file given itself, a file or a package found under a
    directory given), ``None`` for a package given itself, a member of one, or no input's file."""
    split = split_member(file, packages)
    if split is not None and (split[0] in inputs or file in inputs):
        return None
    path = split[0] if split is not None else file
    for given in inputs:
        base = given.rstrip("/") or "/"
        if path in (given, base) or path.startswith(base if base.endswith("/") else base + "/"):
            return given
    return None


def input_label(given: str, inputs: Sequence[str], named: bool = False) -> str:
    """How ``given``, one of ``inputs``, is named in keys: its path below the common parent of the
    inputs' parent directories (``build/cpu`` of ``build/cpu build/gpu`` -> ``cpu``; ``a/x`` of
    ``a/x b/x`` -> ``a/x``); ``""`` when a single input is given (today's keys) — ``named``: its base
    name then (``cpu`` of ``check build/cpu``, as it is named among its siblings)."""
    common = _common_parent(tuple(inputs), os.getcwd())
    path = os.path.normpath(os.path.join(os.getcwd(), given))
    if common is None:
        return os.path.basename(path) if named else ""
    return os.path.relpath(path, common).replace(os.sep, "/")


@functools.lru_cache(maxsize=8)
def _common_parent(inputs: tuple[str, ...], cwd: str) -> str | None:
    """The common parent of the parent directories of ``inputs`` (absolute, relative ones below
    ``cwd``), ``None`` for fewer than two distinct inputs; once per run (a key is made for every finding)."""
    distinct = {os.path.normpath(os.path.join(cwd, g)) for g in inputs}
    return os.path.commonpath([os.path.dirname(g) for g in distinct]) if len(distinct) > 1 else None


def keyed_file(
    file: str,
    inputs: Sequence[str],
    packages: Set[str],
    form: KeyForm = "keyed",
    sited: bool = True,
    older: Older = frozenset(),
) -> str:
    """``file``'s key in baselines and SARIF fingerprints: ``targeted_file`` (``form="plain"``:
    ``relative_file``), and with ``form="keyed"``, when several inputs are given, after the label
    of the input holding it (``input_label``) and a colon: ``cpu:lib/libx.so`` and
    ``gpu:lib/libx.so`` for ``check build/cpu build/gpu``, ``cpu/lib:libx.so`` for files given
    themselves; ``form="named"``: a single input's label too (``cpu:lib/libx.so`` for
    ``check build/cpu``, so that a per-input job matches the baseline of all of them). A package
    given itself, or a member of one, carries no label (its target or variant tells it apart, and
    ``check dist/*.whl`` keys as ``check dist``). ``sited=False``: a site-packages' file by its
    path below the input, as before (``relative_file``). The label ``escaped`` (``older`` holding
    ``"label"``: as written before, unescaped); ``older``: ``targeted_file``'s too."""
    if form == "plain":
        return relative_file(file, inputs, packages, sited)
    key = targeted_file(file, inputs, packages, sited=sited, older=older)
    if form == "targeted" or (form == "keyed" and len(inputs) < 2):
        return key
    holder = _holder(file, inputs, packages)
    if holder is None:
        return key
    label = input_label(holder, inputs, form == "named")
    if split_member(file, packages) is None and file.rstrip("/") == holder.rstrip("/"):  # a file given itself
        label = posixpath.dirname(label) if len(inputs) > 1 else ""  # its directory's: cpu/lib:libx.so
    return f"{label if 'label' in older else escaped(label)}:{key}" if label else key


def older_parts(file: str, inputs: Sequence[str], packages: Set[str]) -> tuple[Older, ...]:
    """The ``Older`` choices under which ``file``'s key as written before names that file alone in
    a run of ``inputs`` staging ``packages``, so that such an entry may still accept it: ``"conda"``
    when no other package staged has its package's variant (``linux-64/py312:`` of ``foo`` and of
    ``bar`` is either), ``"label"`` when its input's label holds a ``%`` or ``:`` and no other
    input's label is it or its part before a ``:`` (``x:y:lib/a.so`` of ``x:y`` may be ``x``'s
    ``y:lib/a.so``); empty when neither is."""
    parts: list[Older] = []
    package = (split_member(file, packages) or ("", ""))[0]
    variant = conda_variant(package) if package else None
    if variant and conda_key(package) != variant and _variant_alone(package, packages):
        parts.append(frozenset({"conda"}))
    holder = _holder(file, inputs, packages)
    label = input_label(holder, inputs, named=True) if holder is not None else ""
    if label != escaped(label):
        others = [input_label(g, inputs, named=True) for g in inputs if g != holder]
        if not any(o == label or label.startswith(f"{o}:") or o.startswith(f"{label}:") for o in others):
            both: Older = frozenset({"conda", "label"})
            parts += [frozenset({"label"}), both] if parts else [frozenset({"label"})]
    return tuple(parts)


def _variant_alone(package: str, packages: Set[str]) -> bool:
    """Whether no other conda package staged or beside ``package`` in its directory (a channel
    audited with ``--each`` stages one at a time) has its variant (``conda_variant``)."""
    variant = conda_variant(package)
    directory = os.path.dirname(package)
    others = {p for p in packages if p != package and os.path.dirname(p) != directory}
    try:
        listed = _variants_in(directory or ".", os.stat(directory or ".").st_mtime_ns)
    except OSError:
        listed = ()
    return listed.count(variant) + sum(conda_variant(p) == variant for p in others) <= 1


@functools.lru_cache(maxsize=64)
def _variants_in(directory: str, mtime: int) -> tuple[str | None, ...]:
    """The variants (``conda_variant``) of the files in ``directory`` as of its ``mtime`` (ns), once
    per directory and change (a channel's thousands of packages: not listed again per finding)."""
    try:
        return tuple(conda_variant(os.path.join(directory, n)) for n in os.listdir(directory))
    except OSError:
        return ()


def audited_scopes(inputs: Sequence[str], packages: Set[str]) -> tuple[str, ...]:
    """The key prefixes (``label:``, ``target:``, ``label:target:``; ``keyed_file``) of the
    ``inputs`` given and the ``packages`` staged: a baseline entry's file with a colon that starts
    with none of them names an input or a package the run did not audit (neither fixed nor
    rewritten by it: ``unaudited``)."""
    scopes = set()
    for path in (*(f"{p}!x" for p in packages), *(f"{g.rstrip('/') or '/'}/x" for g in inputs), *inputs):
        for form, older in itertools.product(_SCOPED, _OLDER):
            key = keyed_file(path, inputs, packages, form, older=older)
            if ":" in key:
                scopes.add(key[: key.rindex(":") + 1])
    return tuple(sorted(scopes))


#: The key forms naming an input or a target (``audited_scopes``), and each choice of the parts
#: keyed as before (``Older``).
_SCOPED: tuple[KeyForm, ...] = ("keyed", "named", "targeted")
_OLDER: tuple[Older, ...] = (frozenset(), frozenset({"conda"}), frozenset({"label"}), frozenset({"conda", "label"}))


def not_loaded(
    read: frozenset[Fingerprint],
    findings: Iterable[Finding],
    inputs: Sequence[str],
    packages: Set[str],
    loader_rules: Set[str],
) -> frozenset[Fingerprint]:
    """The entries of the baseline ``read`` of a rule that needs the loader emulation
    (``loader_rules``: ``Rule.needs_loader``) on a file the emulation left unloaded, past its bound
    (a ``loader-skipped`` finding among ``findings`` names it): the run could not have found them,
    so ``check`` neither calls them fixed nor drops them when it writes the baseline again."""
    files = {fingerprint(f, inputs, packages)[1] for f in findings if f.rule == "loader-skipped"}
    return frozenset(e for e in read if e[0] in loader_rules and e[1] in files) if files else frozenset()


def unaudited(read: frozenset[Fingerprint], inputs: Sequence[str], packages: Set[str]) -> frozenset[Fingerprint]:
    """The entries of the baseline ``read`` about inputs, packages or targets a run of ``inputs``
    staging ``packages`` did not audit (``audited_scopes``): another input's ``gpu:lib/libx.so`` in
    a job of ``build/cpu``, another wheel's ``abi3-musllinux_x86_64:pkg/_m.so`` in a job of one
    wheel. ``check`` neither calls them fixed nor drops them when it writes the baseline again."""
    scopes = audited_scopes(inputs, packages)
    return frozenset(e for e in read if ":" in e[1] and not e[1].startswith(scopes))


def write_form(read: frozenset[Fingerprint] | None, inputs: Sequence[str]) -> KeyForm:
    """How a run of ``inputs`` writes its keys when it read the baseline ``read``: ``"named"`` when
    a single input is given and ``read`` has entries under its label (``cpu:`` for ``check
    build/cpu``: a baseline of several inputs updated by a per-input job keeps it, so that its
    entries still accept that input alone), else ``"keyed"`` (``keyed_file``)."""
    if read is None or len(set(inputs)) != 1:
        return "keyed"
    label = input_label(inputs[0], inputs, named=True)
    return "named" if label and any(e[1].startswith(f"{escaped(label)}:") for e in read) else "keyed"


def _platform_kind(platforms: str) -> str:
    """A wheel's platform tag (the first of a compressed set) without its version:
    ``manylinux_2_17_x86_64.manylinux2014_x86_64`` and ``manylinux_2_28_x86_64`` are both
    ``manylinux_x86_64`` (the next release may raise its baseline: still the same platform),
    ``macosx_14_0_arm64`` is ``macosx_arm64``; ``win_amd64`` stays."""
    first = platforms.split(".")[0]
    return re.sub(r"^(manylinux|musllinux|macosx|ios|android)(?:_\d+)+_|^manylinux(?:1|2010|2014)_", _family, first)


def _family(match: re.Match[str]) -> str:
    return f"{match.group(1) or 'manylinux'}_"


#: What ends a file name inside a path or a message: a directory separator, a space, a quote, the
#: ``!`` of a package member, the punctuation of evidence text.
_NAME_END = r"/\\\s'\"!:,;=@|()\[\]{}<>"

#: A file name in a path or a message: its part before the first dot, and the dot-separated rest.
_DOTTED_NAME = re.compile(rf"(?<![^{_NAME_END}])(?P<base>[^.{_NAME_END}]+)(?P<rest>(?:\.[^.{_NAME_END}]*)+)")

#: auditwheel's hash: 8 lowercase hex digits (the first of the library's SHA-256).
_HEX8 = re.compile(r"[0-9a-f]{8}")

#: auditwheel's hash written after the first dot (older releases): ``.<8 hex>`` before ``.so``.
_DOT_HASH = re.compile(r"\.[0-9a-f]{8}(?=\.so(?:\.|$))")

#: delvewheel's hash (its name mangling): ``<name up to the extension>-<32 hex digits>.dll``
#: (``msvcp140-263139962577ecda4cd9469ca360a746.dll``), without case as Windows compares DLL names.
_DELVEWHEEL_HASH = re.compile(r"-[0-9a-f]{32}(?=\.(?:dll|pyd)\b)", re.IGNORECASE)

#: A vendored library's version past its major number, once its hash is written ``-*``.
_VENDORED_VERSION = re.compile(r"(-\*\.so\.\d+)(?:\.\d+)+")


def _auditwheel_base(base: str) -> str:
    """``base`` (a file name's part before its first dot) without the hashes auditwheel appended:
    ``-`` and 8 lowercase hex digits, once per graft (``libgfortran-040039e1-0352e75f`` ->
    ``libgfortran``); cut from the end, never a backtracking pattern (linear in hostile names)."""
    end = len(base)
    while end > 9 and base[end - 9] == "-" and _HEX8.fullmatch(base, end - 8, end):
        end -= 9
    return base[:end]


def _hashes_out(text: str, mark: str) -> str:
    """``text`` with each repair tool's content hash in a vendored library's name written ``mark``.

    auditwheel (``auditwheel/repair.py``, ``copylib``) splits a grafted library's file name at its
    first dot and writes ``<base>-<8 hex digits of its SHA-256>.<rest>``: ``libcudart-d0da41ae.so.12``
    and, mid-name, ``libopenblas64_p-r0-5007b62f.3.23.dev.so`` (numpy's; scipy's
    ``libopenblasp-r0-<hash>.3.x.so``); a library grafted twice carries two. So a name's part before
    its first dot ending in ``-`` and 8 lowercase hex digits, in a name having ``so`` as a dotted part
    (not ``libfoo-1.2.3.so``, ``libz.so.1``, ``libfoo-DEADBEEF.so``). delvewheel: ``_DELVEWHEEL_HASH``.
    Older auditwheel releases wrote the hash after the first dot instead, ``<base>.<8 hex>.so.<rest>``
    (``libjpeg.185109e6.so.8``, in torchvision's wheels): 8 lowercase hex digits as the dotted part
    right before ``so``.  delocate keeps the names it vendors (``.dylibs/libomp.dylib``): nothing to take out."""

    def name(m: re.Match[str]) -> str:
        base, rest = m.group("base"), m.group("rest")
        if _DOT_HASH.match(rest):  # libjpeg.185109e6.so.8
            return base + mark + rest[9:]
        kept = _auditwheel_base(base)
        if kept == base or "so" not in rest.split("."):
            return m.group(0)
        return kept + mark + rest

    return _DOTTED_NAME.sub(name, _DELVEWHEEL_HASH.sub(mark, text))


def unhashed(text: str) -> str:
    """``text`` with each repair tool's content hash in a vendored library's name written ``-*``
    (``_hashes_out``: auditwheel's ``<base up to the first dot>-<8 hex>.<rest>``, or its older
    ``<base>.<8 hex>.so.<rest>``, ``libjpeg.185109e6.so.8`` -> ``libjpeg-*.so.8``; delvewheel's
    ``<name>-<32 hex>.dll``) and its version cut to the major number (``libavif-01e67780.so.16.4.1``
    -> ``libavif-*.so.16``; the major number is its SONAME's, its ABI; a version mid-name,
    ``libopenblas64_p-r0-*.3.23.dev.so``, is the SONAME itself and stays): a baseline written for one
    release matches the next, whose vendored libraries carry new hashes and minor versions."""
    if "-" not in text and ".so" not in text:
        return text
    text = _hashes_out(text, "-*")
    return _VENDORED_VERSION.sub(r"\1", text) if "-*.so." in text else text


def original_names(name: str) -> tuple[str, ...]:
    """The names the library file ``name`` had before a repair tool renamed it (``unhashed``'s rule,
    auditwheel's and delvewheel's naming), the hash taken out: as it was
    (``libjpeg-25f93ad1.so.62.4.0`` -> ``libjpeg.so.62.4.0``) and as ``unhashed`` cuts its version
    (``libjpeg.so.62``, its SONAME); empty when ``name`` carries no such hash."""
    whole = _hashes_out(name, "") if "-" in name or ".so" in name else name
    if whole == name:
        return ()
    return tuple(dict.fromkeys((whole, unhashed(name).replace("-*", ""))))


#: Rules whose subject is a search-path entry as the build wrote it, often a path of the build
#: machine (``/__w/_temp/conda_environment_33057293360/lib``): keyed by ``build_parts_out`` of it.
#: Not ``rpath-outside-package``: its subject is an ``$ORIGIN`` entry into the installed site.
BUILD_PATH_RULES = frozenset({"rpath-leak", "duplicate-rpath"})

#: A run of 5 or more digits: a CI run or job id, a build's epoch timestamp (conda-build's
#: ``<name>_1712345678901``). Shorter runs stay: ``cp311``, ``cu118``, ``gcc-toolset-13`` name
#: another Python, CUDA or compiler, a real difference.
_LONG_DIGITS = re.compile(r"\d{5,}")

#: A version of three numbers or more (``3.11.10``, ``17.0.6``, ``3.12.0rc1``), not inside a longer
#: dotted run: its first two numbers kept (``_build_parts_out``).
_PATCH_VERSION = re.compile(r"(?<![\d.])(\d+\.\d+)(?:\.\d+)+(?:(?:a|b|rc)\d+)?(?![\d.])")

#: Temporary directories whose name ends in a random suffix, as a whole path component, and their
#: names with it written ``*``: pip's build directories (``TempDirectory``: ``tempfile.mkdtemp`` with
#: the prefix ``pip-<kind>-``: ``pip-build-env-``, ``pip-req-build-``, ``pip-install-``, ...),
#: ``tempfile.mkdtemp``'s own ``tmp`` + 8 of ``[a-z0-9_]``, or ``tmp`` and a suffix holding a digit
#: (``mktemp -d``'s ``tmp.XXXXXXXXXX``), conda-build's placeholder prefixes (``_h_env_placehold_pl...``,
#: ``_test_env_placehold...``, of any length).
_TEMP_DIRS = (
    (re.compile(r"(pip-(?:[a-z]+-)+)[A-Za-z0-9_]{6,}"), r"\1*"),
    (re.compile(r"tmp[a-z0-9_]{8}|tmp[._-]?(?=[A-Za-z_]*\d)[A-Za-z0-9_]{6,}"), "tmp*"),
    (re.compile(r"(_(?:h|test|build)_env)_placehold\w*"), r"\1_placehold*"),
)


def build_parts_out(path: str) -> str:
    """``path`` (a search-path entry or load path as a build wrote it) without the parts that change
    from one build of the same source to the next, each written ``*``, component by component: a
    temporary directory's random suffix (``_TEMP_DIRS``: ``/tmp/pip-build-env-abc123/overlay/lib`` ->
    ``/tmp/pip-build-env-*/overlay/lib``), a version past its second number (the build image's
    patch release: manylinux's ``/opt/_internal/cpython-3.11.10/lib`` -> ``cpython-3.11.*``; the
    major and minor, the ABI and layout the build used, stay), then each run of 5 or more digits
    (``_LONG_DIGITS``: GitHub Actions' run id in ``/__w/_temp/conda_environment_33057293360/lib``
    -> ``conda_environment_*``). Linear in ``path``'s length (no backtracking pattern)."""
    parts = []
    for part in path.split("/"):
        for pattern, mark in _TEMP_DIRS:
            if pattern.fullmatch(part):
                part = pattern.sub(mark, part)
                break
        parts.append(_LONG_DIGITS.sub("*", _PATCH_VERSION.sub(r"\1.*", part)))
    return "/".join(parts)


def subject_key(rule: str, subject: str) -> str:
    """``subject`` of a finding of ``rule`` as a fingerprint holds it: vendored libraries' content
    hashes written ``-*`` (``unhashed``), and for a ``BUILD_PATH_RULES`` rule the build's per-build
    parts too (``build_parts_out``); the finding's message and evidence keep the path as written."""
    key = unhashed(subject)
    return build_parts_out(key) if rule in BUILD_PATH_RULES else key


def fingerprint(
    finding: Finding,
    inputs: Sequence[str],
    packages: Set[str],
    form: KeyForm = "keyed",
    sited: bool = True,
    older: Older = frozenset(),
) -> Fingerprint:
    """The stable key of ``finding``: ``(rule, file key, subject)``, its file keyed by the input
    holding it and its package's target or variant (``keyed_file``; another ``form``: as baselines
    written before were); a subject that is itself a path under an input (the other
    library of a ``duplicate-export``) is made relative; vendored libraries' content hashes are
    left out, and a build path's per-build parts (``subject_key``); ``packages``: the packages the
    run staged (``relative_file``'s); ``sited``, ``older``: ``keyed_file``'s."""
    file = keyed_file(finding.file, inputs, packages, form, sited, older)
    subject = relative_file(finding.subject, inputs, packages, sited)
    return (finding.rule, unhashed(file), subject_key(finding.rule, subject))


#: Rules whose one finding per file lists failures that come and go one by one, a symbol each
#: (the import fails on each): the evidence keys naming them (a name, or ``{"symbol": name}``).
PER_SYMBOL = {"unresolved-symbol": ("symbols",), "abi3-symbol": ("not_in_abi", "too_new")}

#: The subject an ``unresolved-symbol`` finding of several symbols had before they were keyed one by
#: one: such a baseline entry matches nothing now (``load`` drops it; its findings show again).
_COUNTED_SUBJECT = re.compile(r"\d+ symbols")


def symbols_of(finding: Finding) -> list[str]:
    """The symbols a ``PER_SYMBOL`` finding lists, sorted and distinct (empty for other rules)."""
    names: set[str] = set()
    for key in PER_SYMBOL.get(finding.rule, ()):
        items = finding.evidence.get(key) or ()
        names.update(str(i.get("symbol")) if isinstance(i, dict) else str(i) for i in items)
    return sorted(names)


def fingerprints(
    finding: Finding,
    inputs: Sequence[str],
    packages: Set[str],
    form: KeyForm = "keyed",
    sited: bool = True,
    older: Older = frozenset(),
) -> tuple[Fingerprint, ...]:
    """``finding``'s fingerprints: one per symbol for a ``PER_SYMBOL`` rule (a build that leaves
    ``baz`` unresolved where the baseline's left ``foo`` and ``bar`` has a new failure, though both
    findings say "2 symbols"), else ``(fingerprint(finding, inputs),)``; a finding of one symbol
    keeps its one fingerprint either way; ``packages``, ``form``, ``sited``, ``older``: as ``fingerprint``'s."""
    key = fingerprint(finding, inputs, packages, form, sited, older)
    names = symbols_of(finding)
    if not names:
        return (key,)
    return tuple((key[0], key[1], unhashed(name)) for name in names)


def dumps(
    findings: Iterable[Finding],
    inputs: Sequence[str],
    packages: Set[str],
    read: frozenset[Fingerprint] | None = None,
    ran: Set[str] | None = None,
    loader_rules: Set[str] = frozenset(),
) -> str:
    """The baseline document for ``findings`` (sorted, without duplicates), ending in a newline.

    Findings a configured suppression covers are left out (the configuration keeps them),
    and so are those in ``NOT_RECORDED``; findings an earlier baseline accepted are kept.
    ``packages``: the packages the run staged (``fingerprint``'s). ``read``: the ``--baseline``
    the run read, if any: its entries for what the run did not audit are kept (``unaudited``), and
    the run's own keyed as it keys them (``write_form``: a per-input job keeps its ``cpu:``); so
    are its entries of rules that did not run (``ran``, the report's ``rules``; ``None``: every
    one): ``--no-loader`` or ``--ignore RULE`` found nothing of them, and drops nothing; and its
    entries of ``loader_rules`` on files the loader left unloaded (``not_loaded``)."""
    form = write_form(read, inputs)
    keys = sorted(
        {
            key
            for f in findings
            if f.rule not in NOT_RECORDED and (f.suppressed is None or f.suppressed.startswith(BASELINED))
            for key in fingerprints(f, inputs, packages, form)
        }
        | (unaudited(read, inputs, packages) if read is not None else frozenset())
        | (frozenset(e for e in read if e[0] not in ran) if read is not None and ran is not None else frozenset())
        | (not_loaded(read, findings, inputs, packages, loader_rules) if read is not None else frozenset())
    )
    doc = {"schema": SCHEMA, "findings": [{"rule": r, "file": p, "subject": s} for r, p, s in keys]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def load(path: str, known_rules: frozenset[str] | None = None) -> frozenset[Fingerprint]:
    """Read a baseline file.

    Args:
        path: the ``--baseline`` file.
        known_rules: rule ids that may appear (``None``: any).

    Raises:
        ConfigError: unreadable, not a regular file, larger than ``MAX_BASELINE_BYTES``, more
            JSON arrays and objects than entries could make (one per
            ``BASELINE_BYTES_PER_CONTAINER`` bytes; counted before parsing), not JSON (or nested
            too deeply, or out of memory parsing it), another schema, an entry that is not
            ``{"rule": str, "file": str, "subject": str}`` or names no rule (the message
            names the file and the entry).

    An entry's file written before conda-build's hash was left out of a variant is read without it
    (``_variant_unhashed``), as one written before repair hashes or abi3 floors were.
    An ``unresolved-symbol`` entry whose subject is a count (``"2 symbols"``, written before
    findings were keyed a symbol each) is left out: its findings are reported until the
    baseline is written again.
    """
    raw = read_settings_file(path, MAX_BASELINE_BYTES, f"--baseline {path}", "baseline")
    containers = raw.count(b"[") + raw.count(b"{")
    if containers > 16 + len(raw) // BASELINE_BYTES_PER_CONTAINER:
        raise ConfigError(
            f"--baseline {path}: not a linkaudit baseline: {containers} JSON arrays and objects in "
            f"{len(raw)} bytes, more than its entries make (one per {BASELINE_BYTES_PER_CONTAINER} bytes)"
        )
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"--baseline {path}: not a JSON document: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"--baseline {path}: not a linkaudit baseline: nested too deeply") from None
    except MemoryError:
        raise ConfigError(f"--baseline {path}: not read: out of memory parsing its JSON") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or not isinstance(doc.get("findings"), list):
        raise ConfigError(f"--baseline {path}: not a linkaudit baseline (expected schema {SCHEMA!r})")
    keys = set()
    for i, entry in enumerate(doc["findings"]):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in ("rule", "file", "subject")):
            raise ConfigError(f"--baseline {path}: findings[{i}]: expected rule, file and subject strings")
        rule = entry["rule"]
        if known_rules is not None and rule not in known_rules:
            raise ConfigError(f"--baseline {path}: findings[{i}].rule: {rule!r} is no rule")
        if rule in NOT_RECORDED:
            raise ConfigError(f"--baseline {path}: findings[{i}].rule: {rule} findings cannot be baselined")
        if rule in PER_SYMBOL and _COUNTED_SUBJECT.fullmatch(entry["subject"]):
            continue  # "2 symbols": which two is not recorded (an older linkaudit); its findings show again
        # written before repair hashes, abi3 floors, conda-build's variant hashes were left out
        file = _variant_unhashed(_ABI3_FLOOR.sub("abi3-", unhashed(entry["file"])))
        keys.add((rule, file, subject_key(rule, entry["subject"])))  # written before per-build parts were left out
    return frozenset(keys)
