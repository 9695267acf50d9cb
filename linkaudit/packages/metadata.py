"""What a package says about itself: a wheel's file name (project, version, tags).

Names are parsed by ``packaging`` (``packaging.utils.parse_wheel_filename``), never by our own
patterns.  Sources: PEP 427 (the file name ``{name}-{ver}(-{build})?-{python}-{abi}-{platform}.whl``),
PEP 425 (compressed tag sets), PEP 503 (normalised project names).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..records import dataclass
from . import limits

if TYPE_CHECKING:
    from collections.abc import Callable

    from packaging.tags import Tag


@dataclass(frozen=True, slots=True)
class WheelName:
    """A wheel's file name, read.

    Attributes:
        path: the wheel as given.
        project: the project's normalised name (``jax-cuda12-plugin``).
        version: the version, as written.
        tags: every tag its compressed tag set names (``cp311-cp311-manylinux_2_17_x86_64``, ...).
    """

    path: str
    project: str
    version: str
    tags: frozenset[Tag]


def wheel_name(path: str) -> WheelName | None:
    """The wheel name of the file at ``path``, or ``None`` when its base name is no valid wheel
    name (not ``*.whl``, or not ``packaging``'s idea of one)."""
    # packaging (its tags import subprocess, logging, platform): only once a wheel is given
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    base = os.path.basename(path)
    try:
        project, version, _build, tags = parse_wheel_filename(base)
    except InvalidWheelFilename:
        return None
    return WheelName(path, str(project), str(version), frozenset(tags))


#: Largest metadata file read (METADATA, WHEEL; a RECORD may be larger: ``MAX_RECORD``), bytes.
MAX_METADATA = 4 << 20
#: Largest RECORD read, bytes (torch's lists ~20,000 files in ~2.5 MB).
MAX_RECORD = 64 << 20
#: What a conda record must be (``conda-meta/*.json``, ``info/index.json``) to be read.
NOT_A_CONDA_RECORD = 'not a conda package record: a JSON object with a "name" string'


def past_limit(size: int, limit: int, what: str) -> str:
    """Why a metadata file of ``size`` bytes (``what``: ``".dist-info/WHEEL"``, ``"conda-meta
    record"``) is not read: it is larger than ``limit``, the most read of it."""
    return f"{size:,} bytes, past the limit of {limit:,} bytes a {what} is read to: not read"


def conda_record(
    text: str, hook: Callable[[list[tuple[str, object]]], object] | None = None
) -> tuple[dict[str, object] | None, str]:
    """A conda package's record (``conda-meta/*.json``, ``info/index.json``: a JSON object naming its
    package, conda's ``PackageRecord``) from ``text``: ``(the object, "")``, or ``(None, why not)`` —
    the JSON error with its line and column, or ``NOT_A_CONDA_RECORD``.  ``hook``: ``json``'s
    ``object_pairs_hook`` (what of each object is kept).

    Raises:
        MemoryError: parsing ran out of memory (the caller names the record).
    """
    import json

    try:
        record = json.loads(text, object_pairs_hook=hook)
    except RecursionError:
        return None, "not JSON: nested past the parser's depth"
    except ValueError as exc:
        return None, f"not JSON: {exc}"
    if not isinstance(record, dict) or not isinstance(record.get("name"), str):
        return None, NOT_A_CONDA_RECORD
    return record, ""


@dataclass(frozen=True, slots=True)
class Distribution:
    """What one installed (or packed) distribution says about itself: its ``.dist-info``.

    Attributes:
        name: the project's normalised name (``nvidia-cuda-runtime``).
        version: as written.
        where: the ``.dist-info`` directory (a host path, or ``WHEEL!x.dist-info``).
        tags: the tags its ``WHEEL`` file lists (empty when it has none).
        files: the paths its ``RECORD`` lists, relative to the site, normalised.
        requires: its ``Requires-Dist`` lines, as written (markers evaluated later).
        extras: its ``Provides-Extra`` names, normalised.
        kind: ``"wheel"`` (a ``.dist-info``), ``"conda"`` (a prefix's ``conda-meta`` record) or
            ``"conda-package"`` (a lone conda package's ``info/index.json``); for both conda kinds
            ``requires`` are its ``depends``, by package name.
        inits: the package ``__init__.py`` files its ``RECORD`` lists with a size above 0 (code of
            its own, not an empty namespace placeholder as NVIDIA's wheels ship).
    """

    name: str
    version: str
    where: str
    tags: frozenset[Tag] = frozenset()
    files: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    kind: str = "wheel"
    inits: frozenset[str] = frozenset()

    def wheel_name(self) -> str:
        """A wheel file name with this distribution's compressed tag set, for what reads tags
        from names (``profiles.implied_by_wheel``); ``py3-none-any`` when it lists no tag."""
        tags = sorted(self.tags, key=str)
        parts = [
            ".".join(dict.fromkeys(getattr(t, part) for t in tags)) or default
            for part, default in (("interpreter", "py3"), ("abi", "none"), ("platform", "any"))
        ]
        return f"{self.name.replace('-', '_')}-{self.version}-{'-'.join(parts)}.whl"


#: The most tags one ``WHEEL`` file is taken to list: real wheels list a few dozen; a compressed
#: tag set multiplies (``a.b.c-d.e.f-g.h.i``: 27 tags), so 300 x 300 x 300 names in 17 KB spell
#: 27 million tags (a hang, then ``MemoryError``) before any would be used.
MAX_WHEEL_TAGS = 4096


#: The most ``Tag:`` lines not read that a ``WHEEL`` file's problems name one by one; the rest are counted.
MAX_TAG_LINES_NAMED = 16


def _tag_lines(text: str) -> Iterator[tuple[int, str, str, int, int]]:
    """Each ``Tag:`` line of a ``WHEEL`` file (PEP 427) as ``(line number, line, value, size,
    tags expanded before it)``, ``size`` the product of its dotted parts (counted before any is
    expanded), ``0`` for a line not read: not ``python-abi-platform`` (PEP 425: ``-1``), or whose
    expansion would pass what is left of ``MAX_WHEEL_TAGS`` (its size, negated).  Every expansion
    counts, a tag spelled again too (6,500 lines each expanding one tag 4,080 times took 48 s)."""
    expanded = 0
    for number, line in enumerate(text.splitlines(), 1):
        key, _, value = line.partition(":")
        if key.strip().lower() != "tag":
            continue
        value = value.strip()
        parts = value.split("-")
        size = 1
        for part in parts:
            size *= part.count(".") + 1
        if len(parts) != 3 or not all(parts):
            yield number, line, value, -1, expanded
        elif expanded + size > MAX_WHEEL_TAGS:
            yield number, line, value, -size, expanded
        else:
            yield number, line, value, size, expanded
            expanded += size


def wheel_tags(text: str) -> frozenset[Tag]:
    """The tags of a ``WHEEL`` file's ``Tag:`` lines (PEP 427; each may be compressed), at most
    ``MAX_WHEEL_TAGS`` expanded in all; a line not read (``_tag_lines``, named by
    ``wheel_tag_problems``) is passed over, the others read."""
    from packaging.tags import parse_tag

    out: set[Tag] = set()
    for _number, _line, value, size, _before in _tag_lines(text):
        if size > 0:
            out |= parse_tag(value)
    return frozenset(out)


def wheel_tag_problems(text: str) -> list[str]:
    """Why each ``Tag:`` line of a ``WHEEL`` file that ``wheel_tags`` passes over is not read (its
    number and text, up to 120 characters of it): the first ``MAX_TAG_LINES_NAMED``, the rest
    counted in one more."""
    out: list[str] = []
    more = 0
    for number, line, _value, size, before in _tag_lines(text):
        if size > 0:
            continue
        if len(out) == MAX_TAG_LINES_NAMED:
            more += 1
            continue
        shown = line if len(line) <= 120 else line[:120] + "…"
        if size == -1:
            out.append(f'Tag line {number}, "{shown}": not a tag: python-abi-platform (PEP 425)')
        else:
            out.append(
                f'Tag line {number}, "{shown}": its {-size:,} tags would pass the {MAX_WHEEL_TAGS:,} tags the '
                f"Tag lines of a WHEEL file are expanded to ({before:,} so far): not read"
            )
    if more:
        named = f"the first {MAX_TAG_LINES_NAMED} are"
        out.append(f"{more:,} more Tag lines not read, not named one by one ({named})")
    return out


#: A line shorter than this and without a quote or a NUL is split on its first comma, as csv would
#: (csv's field limit is 128 KiB; longer lines go through csv to keep its refusal).
_PLAIN_LINE = 128 << 10
#: How many ``RECORD`` lines went through ``csv`` (the counting test: only quoted ones do).
CSV_LINES = [0]


#: A ``RECORD`` is split into lines a piece of about this many characters at a time, each piece
#: ending after a ``\n`` (no line is cut, and ``\r\n`` never straddles two pieces): the paths
#: kept are what stays, not every line and its first field at once (a 64 MiB RECORD of 6.2 million
#: lines peaked at 936 MB for 402 MB of paths kept).
_RECORD_PIECE = 1 << 20


def _record_pieces(text: str) -> Iterator[str]:
    """``text`` in consecutive pieces of at least ``_RECORD_PIECE`` characters (the last may be
    shorter), each ending just after a ``\n`` (or at the end): their lines are ``text``'s lines."""
    start = 0
    while start < len(text):
        end = text.find("\n", start + _RECORD_PIECE)
        end = len(text) if end < 0 else end + 1
        yield text[start:end]
        start = end


def record_paths(text: str) -> tuple[str, ...]:
    """The paths a ``RECORD`` lists (its first CSV column), relative to the site, normalised;
    absolute ones, those leaving the site (``../../bin/x``: scripts) and those no file system
    holds (past ``limits.MAX_NAME_BYTES`` or ``limits.MAX_NAME_DEPTH``, as member names: each directory
    above a path is recorded, n²/2 characters for n levels) left out.  Read a piece at a time
    (``_record_pieces``): its hashes and sizes are never kept."""
    plain = '"' not in text and "\0" not in text
    out: list[str] = []
    for piece in _record_pieces(text):
        lines = piece.splitlines()
        if not plain or max(map(len, lines), default=0) > _PLAIN_LINE:
            firsts = list(map(_first_field, lines))
        else:  # no quote anywhere: csv's first field is what comes before the first comma
            firsts = [line.partition(",")[0] for line in lines]
        del lines
        kept = [f.replace("\\", "/") for f in firsts if f and len(f) <= limits.MAX_NAME_BYTES]
        out.extend(filter(installed_path, map(record_normpath, kept)))
    return tuple(out)


def record_inits(text: str) -> frozenset[str]:
    """The ``__init__.py`` paths a ``RECORD`` lists with a size (its third CSV column) above 0,
    normalised as ``record_paths`` normalises; a line without a size is left out (nothing says)."""
    found: set[str] = set()
    for line in text.splitlines():
        if "__init__.py" not in line:
            continue
        if '"' in line or "\0" in line or len(line) > _PLAIN_LINE:
            import csv

            try:
                row = next(csv.reader([line]), [])
            except csv.Error:
                continue
        else:
            row = line.split(",")
        if len(row) < 3 or not row[2].strip().isdigit() or int(row[2]) == 0:
            continue
        path = record_normpath(row[0].replace("\\", "/"))
        if posixpath.basename(path) == "__init__.py" and installed_path(path):
            found.add(path)
    return frozenset(found)


def installed_path(path: str) -> bool:
    """True for a normalised path a site's record may list as a file it installed: relative, inside
    the site, and within ``limits.MAX_NAME_BYTES`` and ``limits.MAX_NAME_DEPTH`` as member names
    are (a site's layout records each directory above each path; a conda record listing one path
    40,000 deep took 1.6 GB, MemoryError and exit 3 under a limit)."""
    return len(path) <= limits.MAX_NAME_BYTES and not (
        path.startswith(("/", "../")) or path == ".." or path.count("/") > limits.MAX_NAME_DEPTH
    )


def record_normpath(path: str) -> str:
    """``posixpath.normpath(path)``, asked only of a path it could change: one with an empty, ``.``
    or ``..`` component (``//``, ``/.``, a leading ``.``), a trailing ``/``, or empty (``.``); the
    others (nearly every ``RECORD`` line or conda-meta ``files`` entry) are their own normal form,
    the same string kept (not a copy of each)."""
    if not path or "//" in path or "/." in path or path.startswith(".") or path.endswith("/"):
        return posixpath.normpath(path)
    return path


def _first_field(line: str) -> str:
    """The first field of one ``RECORD`` line as ``csv`` reads it ("" when csv refuses the line)."""
    if '"' not in line and "\0" not in line and len(line) <= _PLAIN_LINE:
        return line.partition(",")[0]
    import csv

    try:  # quoted fields, a NUL, a field past csv's limit (128 KiB): csv decides
        CSV_LINES[0] += 1
        row = next(csv.reader([line]), [])
    except csv.Error:  # not a path pip wrote
        return ""
    return row[0] if row else ""


#: How many ``METADATA`` texts went through ``email``'s parser (the counting test: only unusual ones).
EMAIL_PARSES = [0]


def read_metadata(text: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """``(name, version, Requires-Dist lines, Provides-Extra names)`` of a ``METADATA`` file
    (core metadata: RFC 822 headers; the body, the description, is not read)."""
    from packaging.utils import canonicalize_name

    headers = _plain_headers(text)
    if headers is None:  # what email's compat32 parser would treat specially: it decides
        return _email_metadata(text)

    def first(key: str) -> str:
        return next((v for k, v in headers if k == key), "")

    def every(key: str) -> tuple[str, ...]:
        return tuple(v for k, v in headers if k == key)

    name = str(canonicalize_name(first("name")))
    extras = tuple(str(canonicalize_name(e)) for e in every("provides-extra"))
    return name, first("version"), every("requires-dist"), extras


def _plain_headers(text: str) -> list[tuple[str, str]] | None:
    """The ``(lower-case name, value)`` headers of ``text`` as ``email.parser.HeaderParser`` (policy
    compat32) reads them: up to the first empty line, the value after the colon with its leading
    blanks stripped, continuation lines kept with their line breaks. ``None`` when the header block
    holds anything that parser handles on its own (a carriage return, a line that is no header, a
    ``From `` line, a lone surrogate): the caller then asks it."""
    end = text.find("\n\n")
    block = text if end < 0 else text[:end]
    if end < 0 and block.endswith("\n"):  # no body: the last header's line break
        block = block[:-1]
    if "\r" in block or not _no_surrogates(block):
        return None
    out: list[tuple[str, str]] = []
    for line in block.split("\n") if block else ():
        if line[:1] in (" ", "\t"):
            if not out:
                return None
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
            continue
        colon = line.find(":")
        name = line[:colon]
        if colon <= 0 or line.startswith("From ") or not (name.isascii() and name.isprintable()) or " " in name:
            return None
        out.append((name.lower(), line[colon + 1 :].lstrip(" \t")))
    return out


def _no_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _email_metadata(text: str) -> tuple[str, str, tuple[str, ...], tuple[str, ...]]:
    """``read_metadata`` by ``email.parser.HeaderParser`` (policy compat32), for the texts
    ``_plain_headers`` passes over."""
    from email.parser import HeaderParser

    from packaging.utils import canonicalize_name

    EMAIL_PARSES[0] += 1
    headers = HeaderParser().parsestr(text, headersonly=True)
    name = str(canonicalize_name(headers.get("Name", "") or ""))
    extras = tuple(str(canonicalize_name(e)) for e in headers.get_all("Provides-Extra") or ())
    return name, headers.get("Version", "") or "", tuple(headers.get_all("Requires-Dist") or ()), extras


def distribution(where: str, files: dict[str, str]) -> Distribution:
    """A ``Distribution`` from the texts of its ``.dist-info`` files (``METADATA``, ``WHEEL``,
    ``RECORD``: any may be missing), found at ``where``; the name and version fall back to the
    directory's (``torch-2.14.1.dist-info``)."""
    from packaging.utils import canonicalize_name

    name, version, requires, extras = read_metadata(files.get("METADATA", ""))
    if not name or not version:
        stem = os.path.basename(where.rstrip("/"))[: -len(".dist-info")]
        dir_name, _, dir_version = stem.partition("-")
        name = name or str(canonicalize_name(dir_name))
        version = version or dir_version
    return Distribution(
        name,
        version,
        where,
        wheel_tags(files.get("WHEEL", "")),
        record_paths(files.get("RECORD", "")),
        requires,
        extras,
        inits=record_inits(files.get("RECORD", "")),
    )
