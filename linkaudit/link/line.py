"""Link lines: the inputs and options of one link, read from the file that holds the command.

A response file (``@file`` contents, MSVC ``link.exe`` / ``lld-link`` or a GNU driver's), a CMake
``link.txt``, the ``command`` of a ``compile_commands.json`` entry.  Input reading for the static
link emulation of this room; it reads the file it is given and the directories the line names.

Sources: ``ld(1)`` ("-l namespec", "-L searchdir"); Microsoft "LINK input files" and "Linker
options"; CMake's Makefile and Ninja generators.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from typing import NamedTuple

from ..errors import ConfigError
from ..formats.hostfile import read_regular_file
from ..records import dataclass


class LinkInput(NamedTuple):
    """One input of a link line.

    Attributes:
        path: an object, archive or shared library ("" for an option entry).
        whole: ``--whole-archive`` applies to it.
        group: a ``--start-group`` number (archives of one group are rescanned together), 0 outside.
        option: a link option that changes the analysis: ``"muldefs"`` for
            ``--allow-multiple-definition`` / ``-z muldefs``; from an MSVC / lld-link line,
            ``"defaultlib:NAME"``, ``"nodefaultlib"``, ``"nodefaultlib:NAME"``, ``"include:SYMBOL"``,
            ``"alternatename:FROM=TO"``, ``"delayload:DLL"`` and ``"libpath:DIR"`` (``DIR`` joined to the
            line's directory); ``"linker:NAME"`` (``--linker``) is added by the CLI; from a GNU line,
            ``"shared"``, ``"defs"`` (``-z defs`` / ``--no-undefined``), ``"nostdlib"``
            (``-nostdlib`` / ``-nodefaultlibs``) and ``"unknown-library:-lNAME"``
            (a ``-l`` found in none of the ``-L`` directories).
    """

    path: str
    whole: bool = False
    group: int = 0
    option: str = ""


def read_link_line(path: str, lib_dirs: Sequence[str] = ()) -> list[LinkInput]:
    """The inputs of a link line, in order: from a response file or a command (``@file``
    contents, a CMake ``link.txt``, the ``command`` of ``compile_commands.json``), or a target's
    link edge in a Ninja build file, named ``build.ninja:TARGET`` (``TARGET`` as the file writes
    it, ``bin/torch_cuda.dll``; ``link.ninja.ninja_link_command``).  ``@FILE`` tokens in the line
    are replaced by that file's tokens (relative to the line's directory; nested up to 8 deep).

    Objects and archives named by path are kept; ``-lNAME`` and ``-l:FILE`` are resolved
    against the ``-L`` directories (and the line's own directory) as ld does — a shared
    ``libNAME.so`` found first is taken (its exports satisfy references; no archive is pulled); ``-Wl,--whole-archive`` ...
    ``--no-whole-archive`` marks archives whose every member is linked. Other options are
    dropped (``--start-group`` rescans are not emulated).

    An MSVC ``link.exe`` / ``lld-link`` line (Microsoft "LINK input files", "Linker options"):
    ``.obj`` and ``.lib`` inputs, a library named without a directory looked up in the line's
    directory, then the ``/LIBPATH`` directories, then ``lib_dirs`` (the ``LIB`` environment
    variable, which the CLI reads; a library found nowhere is kept as named: an unknown library);
    ``/DEFAULTLIB``, ``/NODEFAULTLIB``, ``/INCLUDE``, ``/ALTERNATENAME``, ``/DELAYLOAD`` and
    ``/LIBPATH`` become option entries (``LinkInput.option``).  A line written for Windows
    (backslashes) is split as link.exe splits it (double quotes group; a backslash is a path
    separator, read as ``/``).

    Bounds: each file read must be a regular file (a FIFO or device is refused, never waited on) of
    at most ``MAX_LINE_BYTES``; across all response files at most ``MAX_RESPONSE_BYTES`` bytes and
    ``MAX_RESPONSE_WORDS`` words from at most ``MAX_RESPONSE_FILES`` reads are taken (one file named 2,000 times is counted 2,000 times).

    Raises:
        ConfigError: the file cannot be read or parsed (not a regular file, too large, a NUL byte,
            not UTF-8), the response files exceed their bounds, or the Ninja target is not built there.
    """
    budget = _Budget()
    text, base = _line_text(path, budget)
    tokens = _response_files(_tokens(text, path), base, 0, budget)
    return _inputs(tokens, base, lib_dirs)


#: ``FILE.ninja:TARGET``: a target of a Ninja build file.
_NINJA = re.compile(r"^(?P<file>.+\.ninja):(?P<target>.+)$")
#: ``@file`` nesting.
MAX_RESPONSE_DEPTH = 8
#: The most bytes of one link-line or response file.
MAX_LINE_BYTES = 16 << 20
#: The most bytes and words read across all the response files of one line (repeats counted).
MAX_RESPONSE_BYTES = 64 << 20
MAX_RESPONSE_WORDS = 1_000_000
MAX_RESPONSE_FILES = 1_000


@dataclass
class _Budget:
    """What the reading of one link line has used so far: bytes and words of its files."""

    read: int = 0
    words: int = 0
    files: int = 0


def _line_text(path: str, budget: _Budget) -> tuple[str, str]:
    """``(the line's text, the directory its relative paths start from)``."""
    ninja = _NINJA.match(path)
    if ninja is not None and not os.path.isfile(path):
        from .ninja import ninja_link_command

        return ninja_link_command(ninja["file"], ninja["target"]), os.path.dirname(ninja["file"])
    text = read_text(path, min(MAX_LINE_BYTES, MAX_RESPONSE_BYTES - budget.read))
    budget.read += len(text)
    if path.endswith(".json"):
        text = _link_command_from_json(path, text)
    return text, os.path.dirname(path)


def read_text(path: str, limit: int) -> str:
    """The UTF-8 text of the regular file ``path``, at most ``limit`` bytes, without a NUL byte.

    Raises:
        ConfigError: it cannot be opened, is not a regular file (a FIFO or device: never waited
            on), holds more than ``limit`` bytes, a NUL byte (at the offset named) or is not UTF-8.
    """
    try:
        data = read_regular_file(path, max(limit, 0) + 1)
    except OSError as exc:
        raise ConfigError(f"--link-line {path}: cannot read: {exc.strerror or exc}") from exc
    if len(data) > limit:
        raise ConfigError(f"--link-line {path}: more than {limit} bytes of link-line files")
    if b"\0" in data:
        raise ConfigError(f"--link-line {path}: a NUL byte at offset {data.index(0)}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"--link-line {path}: not UTF-8 at offset {exc.start}") from exc


def _tokens(text: str, path: str) -> list[str]:
    """The words of a command line: POSIX shell words, or, for a line written for Windows (a
    backslash beside an MSVC input), link.exe's (``CommandLineToArgvW``: quotes group, no escapes).

    Raises:
        ConfigError: a NUL character (a path cannot hold one), unbalanced quotes.
    """
    if "\0" in text:
        raise ConfigError(f"--link-line {path}: a NUL character at offset {text.index(chr(0))}")
    if "\\" in text and re.search(r"(?i)\.(obj|lib)\b|[\s\"]/(libpath|out|dll)\b", text):
        return [t.replace('"', "").replace("\\", "/") for t in re.findall(r'(?:"[^"]*"|[^\s"])+', text)]
    try:
        return shlex.split(text, comments=False)
    except ValueError as exc:
        raise ConfigError(f"--link-line {path}: cannot parse: {exc}") from exc


def _response_files(tokens: list[str], base: str, depth: int, budget: _Budget) -> list[str]:
    """``tokens`` with each ``@FILE`` replaced by the tokens of ``FILE`` (relative to ``base``).

    Raises:
        ConfigError: a response file that cannot be read, nested past ``MAX_RESPONSE_DEPTH``, or
            more than ``MAX_RESPONSE_WORDS`` words / ``MAX_RESPONSE_BYTES`` bytes read in all.
    """
    out: list[str] = []
    for token in tokens:
        if not token.startswith("@") or len(token) == 1:
            out.append(token)
            continue
        if depth >= MAX_RESPONSE_DEPTH:
            raise ConfigError(f"--link-line {token}: response files nested more than {MAX_RESPONSE_DEPTH} deep")
        name = os.path.join(base, token[1:])
        text, _base = _line_text(name, budget)
        words = _tokens(text, name)
        budget.words += len(words)
        budget.files += 1
        if budget.words > MAX_RESPONSE_WORDS or budget.files > MAX_RESPONSE_FILES:
            raise ConfigError(
                f"--link-line {token}: response files read more than {MAX_RESPONSE_FILES} times"
                f" or giving more than {MAX_RESPONSE_WORDS} words"
            )
        out.extend(_response_files(words, base, depth + 1, budget))
    return out


def _inputs(tokens: list[str], base: str, lib_dirs: Sequence[str]) -> list[LinkInput]:
    """The ``LinkInput`` entries of a tokenised line (see ``read_link_line``)."""
    search: list[str] = []
    for i, token in enumerate(tokens):  # -L applies to every -l of the line, wherever it stands
        if token == "-L" and i + 1 < len(tokens):
            search.append(os.path.join(base, tokens[i + 1]))
        elif token.startswith("-L") and len(token) > 2:
            search.append(os.path.join(base, token[2:]))
    search.append(base or ".")
    options = [o for o in map(_msvc_option, tokens) if o is not None]
    libpath = [os.path.normpath(os.path.join(base, arg)) for name, arg in options if name == "libpath" and arg]
    reader = _Reader(base, search, [*libpath, *(d for d in lib_dirs if d)])
    reader.out.extend(LinkInput("", option=f"libpath:{d}") for d in libpath)
    skip_next = False
    previous = ""
    for token in tokens:
        if skip_next:
            skip_next = False
            if previous in ("-z", "-Xlinker"):
                reader.linker_option(token)
            continue
        if reader.msvc(token):
            continue
        previous = token
        if token in ("-o", "-L", "-T", "-Xlinker", "-soname", "-MF", "-z"):
            skip_next = True
            continue
        reader.gnu(token)
    return reader.out


class _Reader:
    """The entries of one line as its words are read, with ld's positional state (``--whole-archive``,
    ``--start-group``)."""

    def __init__(self, base: str, search: list[str], libpath: list[str]) -> None:
        self.base, self.search, self.libpath = base, search, libpath
        self.out: list[LinkInput] = []
        self.whole = False
        self.group = 0
        self.groups = 0

    def linker_option(self, part: str) -> None:
        """One option given to ld (``-Wl,`` parts, ``-z`` / ``-Xlinker`` arguments)."""
        if part == "--whole-archive":
            self.whole = True
        elif part == "--no-whole-archive":
            self.whole = False
        elif part in ("--start-group", "-("):
            self.groups += 1
            self.group = self.groups
        elif part in ("--end-group", "-)"):
            self.group = 0
        elif part in ("--allow-multiple-definition", "muldefs"):
            self.out.append(LinkInput("", option="muldefs"))
        elif part in ("defs", "--no-undefined"):
            self.out.append(LinkInput("", option="defs"))

    def msvc(self, token: str) -> bool:
        """Take an MSVC option or ``.lib`` input; False when ``token`` is neither."""
        option = _msvc_option(token)
        if option is not None:
            name, argument = option
            if name in ("defaultlib", "include", "alternatename", "delayload") and argument:
                self.out.append(LinkInput("", option=f"{name}:{argument}"))
            elif name == "nodefaultlib":
                self.out.append(LinkInput("", option=f"nodefaultlib:{argument}" if argument else "nodefaultlib"))
            return True
        if token.lower().endswith(".lib") and not token.startswith("-"):
            self.out.append(LinkInput(_find_windows_library(token, self.base, self.libpath)))
            return True
        return False

    def gnu(self, token: str) -> None:
        """Take a word of a GNU driver's line: ``-Wl,`` options, ``-lNAME``, objects and archives."""
        if token.startswith("-Wl,"):
            parts = token[4:].split(",")
            for k, part in enumerate(parts):
                if part == "-z" and k + 1 < len(parts):
                    self.linker_option(parts[k + 1])
                elif not part.startswith("-") and part.endswith((".o", ".a", ".lo")):
                    self.out.append(self._input(part))
                else:
                    self.linker_option(part)
        elif token in ("--start-group", "--end-group", "-(", "-)", "--whole-archive", "--no-whole-archive"):
            self.linker_option(token)
        elif token.startswith("-l") and len(token) > 2:
            found = _find_library(token[2:], self.search)
            if found is not None:
                self.out.append(LinkInput(found, self.whole, self.group))
            else:  # on the compiler's own search path (libc, the toolkit): not read, unknown
                self.out.append(LinkInput("", option=f"unknown-library:{token}"))
        elif token in ("-shared", "-nostdlib", "-nodefaultlibs", "--no-undefined"):
            self.out.append(
                LinkInput("", option={"-nodefaultlibs": "nostdlib", "--no-undefined": "defs"}.get(token, token[1:]))
            )
        elif not token.startswith("-") and (
            token.endswith((".o", ".obj", ".a", ".lo")) or ".so" in os.path.basename(token)
        ):
            self.out.append(self._input(token))

    def _input(self, token: str) -> LinkInput:
        return LinkInput(os.path.normpath(os.path.join(self.base, token)), self.whole, self.group)


#: An MSVC linker option: ``/NAME`` or ``/NAME:argument`` (also ``-NAME:argument``, as lld-link
#: accepts); a path such as ``/usr/lib/x.o`` does not match (a second ``/`` before any ``:``).
_MSVC_OPTION = re.compile(
    r"^(?:/(?P<slash>[A-Za-z][A-Za-z0-9_]*)|-(?P<dash>libpath|defaultlib|nodefaultlib|include|alternatename|delayload)(?=:))"
    r"(?::(?P<argument>.*))?$",
    re.IGNORECASE,
)


def _msvc_option(token: str) -> tuple[str, str] | None:
    """``(name in lower case, argument)`` of an MSVC linker option token, else ``None``."""
    m = _MSVC_OPTION.match(token)
    if m is None:
        return None
    return (m.group("slash") or m.group("dash")).lower(), m.group("argument") or ""


def _find_windows_library(name: str, base: str, libpath: Sequence[str]) -> str:
    """Where link.exe finds the library ``name`` of a link line: as given (relative to the line's
    directory), else in each ``/LIBPATH`` directory; not found, ``name`` as given (an unknown library)."""
    if os.path.isabs(name) or os.sep in name:
        return os.path.normpath(os.path.join(base, name))
    for directory in (base or ".", *libpath):
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate):
            return os.path.normpath(candidate)
    return name


def _link_command_from_json(path: str, text: str) -> str:
    """The link command of a ``compile_commands.json``-style file: the entry whose command has
    no ``-c`` (a compile), as a shell command line.

    Raises:
        ConfigError: not JSON (nested deeper than the parser recurses included), or no link
            command in it.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--link-line {path}: not JSON: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"--link-line {path}: nested too deeply to be a compilation database") from None
    entries = data if isinstance(data, list) else [data]
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("arguments"), list):
            args = [str(a) for a in entry["arguments"]]
        elif isinstance(entry.get("command"), str):
            try:
                args = shlex.split(entry["command"])
            except ValueError:
                continue
        else:
            continue
        if "-c" not in args:
            _spellable(path, args)
            return shlex.join(args)
    raise ConfigError(f"--link-line {path}: no link command (an entry without -c) in it")


def _spellable(path: str, args: list[str]) -> None:
    """Refuse a word no file name can spell: a JSON ``"\\ud800"`` is a lone surrogate, which no
    path decodes to (an undecodable byte is ``\\udc80``-``\\udcff``, and passes).

    Raises:
        ConfigError: naming ``--link-line path`` and the word (escaped).
    """
    for arg in args:
        try:
            arg.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            word = arg.encode("ascii", "backslashreplace").decode()
            raise ConfigError(
                f"--link-line {path}: '{word}' names no file: a lone surrogate no path can spell"
            ) from None


def _find_library(spec: str, search: Sequence[str]) -> str | None:
    """``-lNAME`` / ``-l:FILE`` as ld resolves it: the first directory holding ``libNAME.so`` or
    ``libNAME.a`` (shared first); ``None`` when nothing is found."""
    names = [spec[1:]] if spec.startswith(":") else [f"lib{spec}.so", f"lib{spec}.a"]
    for directory in search:
        for name in names:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return os.path.normpath(candidate)
    return None
