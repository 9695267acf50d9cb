"""One error tree for linkaudit.

``LinkauditError`` is the root; ``InputError`` says that one input could not be
read (it carries the path and, where it makes sense, the byte offset of the
fault); ``ConfigError`` says that options or rule data are invalid.  The CLI maps
``InputError`` and ``ConfigError`` to exit status 2; inside an audit an
``InputError`` becomes an ``unreadable-input`` finding and the other inputs are
still audited.  ``UnsupportedFormat`` (an ``InputError``) is a file of a
recognised format this version does not read: the audit lists it as skipped,
not unreadable.  ``OutputError`` says that the report could not be written
(a full disk, a closed or broken standard output): exit status 2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Binary


class LinkauditError(Exception):
    """Root of every error linkaudit raises on purpose."""


class InputError(LinkauditError):
    """An input file cannot be read or parsed.

    Attributes:
        path: the path as the user gave it (relative stays relative).
        reason: one sentence saying what is wrong, without the path.
        offset: byte offset in the file where the fault was found, or ``None``
            when no single offset applies (missing file, permission denied).
    """

    def __init__(self, path: str, reason: str, offset: int | None = None) -> None:
        self.path = path
        self.reason = reason
        self.offset = offset
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f" (at byte offset {self.offset:#x})" if self.offset is not None else ""
        return f"{self.path}: {self.reason}{where}"


class UnsupportedFormat(InputError):
    """An input of a recognised format this version does not read (Mach-O; LLVM bitcode).

    Attributes:
        container: the container format's name (``"archive"``, ``"macho"``, ``"pe"``).
    """

    def __init__(self, path: str, container: str, reason: str) -> None:
        self.container = container
        super().__init__(path, reason, None)


class PartialRead(InputError):
    """Some members of an archive could not be read; the others were (``nm`` and ``readelf`` too
    report a bad member and go on with the rest).

    Attributes:
        binaries: the records of the members read, in member order.
        errors: one ``InputError`` per member not read, in member order (each naming the archive
            and ``member NAME: reason``); this error's own path, reason and offset are the first's.
    """

    def __init__(self, binaries: tuple[Binary, ...], errors: tuple[InputError, ...]) -> None:
        self.binaries = binaries
        self.errors = errors
        super().__init__(errors[0].path, errors[0].reason, errors[0].offset)


class OutputError(LinkauditError):
    """The report cannot be written (``--output`` or standard output)."""


class ConfigError(LinkauditError):
    """Invalid options, configuration or packaged rule data."""


def shown(name: str) -> str:
    """``name`` (a file, member, library or symbol name read from an input) as a message prints it.

    Printable text is kept; anything else is escaped as Python escapes it — a NUL as ``\\x00``,
    a newline as ``\\n``, a byte that is not UTF-8 (kept by the readers as a surrogate escape)
    as ``\\xff`` — so a message is one line of text whatever bytes the input holds.
    """
    if name.isprintable():
        return name
    out = []
    for c in name:
        if c.isprintable():
            out.append(c)
        elif 0xDC80 <= ord(c) <= 0xDCFF:
            out.append(f"\\x{ord(c) - 0xDC00:02x}")
        else:
            out.append(repr(c)[1:-1])
    return "".join(out)


def did_you_mean(word: object, known: tuple[str, ...] | frozenset[str]) -> str:
    """``" (did you mean 'rpath-leak'?)"`` for ``word`` written close to one of ``known`` (``_``
    for ``-``, another case, a typo), else ``""``: the end of a "no such ..." error."""
    import difflib

    if not isinstance(word, str):
        return ""
    close = difflib.get_close_matches(word.replace("_", "-").lower(), sorted(known), n=1, cutoff=0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""
