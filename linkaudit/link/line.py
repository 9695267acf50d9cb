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
            line's directory); ``"linker:NAME"`` (``--linker``) is added by the CLI.
    """

    path: str
    whole: bool = False
    group: int = 0
    option: str = ""


def read_link_line(path: str) -> list[LinkInput]:
    """The inputs of a link line, from a response file or a command (``@file`` contents, a
    ``link.txt``, or the ``command`` of ``compile_commands.json``), in order.

    Objects and archives named by path are kept; ``-lNAME`` and ``-l:FILE`` are resolved
    against the ``-L`` directories (and the line's own directory) as ld does — a shared
    ``libNAME.so`` found first means no archive is pulled; ``-Wl,--whole-archive`` ...
    ``--no-whole-archive`` marks archives whose every member is linked. Other options are
    dropped (``--start-group`` rescans are not emulated).

    An MSVC ``link.exe`` / ``lld-link`` line (Microsoft "LINK input files", "Linker options"):
    ``.obj`` and ``.lib`` inputs, a library named without a directory looked up in the line's
    directory, then the ``/LIBPATH`` directories (a library found nowhere is kept as named: an
    unknown library); ``/DEFAULTLIB``, ``/NODEFAULTLIB``, ``/INCLUDE``, ``/ALTERNATENAME`` and
    ``/LIBPATH`` become option entries (``LinkInput.option``).

    Raises:
        ConfigError: the file cannot be read or parsed.
    """
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read(1 << 20)
    except OSError as exc:
        raise ConfigError(f"--link-line {path}: cannot read: {exc.strerror or exc}") from exc
    if path.endswith(".json"):
        text = _link_command_from_json(path, text)
    try:
        tokens = shlex.split(text, comments=False)
    except ValueError as exc:
        raise ConfigError(f"--link-line {path}: cannot parse: {exc}") from exc
    base = os.path.dirname(path)
    search: list[str] = []
    for i, token in enumerate(tokens):  # -L applies to every -l of the line, wherever it stands
        if token == "-L" and i + 1 < len(tokens):
            search.append(os.path.join(base, tokens[i + 1]))
        elif token.startswith("-L") and len(token) > 2:
            search.append(os.path.join(base, token[2:]))
    search.append(base or ".")
    options = [o for o in map(_msvc_option, tokens) if o is not None]
    libpath = [os.path.normpath(os.path.join(base, arg)) for name, arg in options if name == "libpath" and arg]
    out: list[LinkInput] = [LinkInput("", option=f"libpath:{d}") for d in libpath]
    whole = False
    group = 0
    groups = 0
    skip_next = False
    previous = ""

    def linker_option(part: str) -> None:
        nonlocal whole, group, groups
        if part == "--whole-archive":
            whole = True
        elif part == "--no-whole-archive":
            whole = False
        elif part in ("--start-group", "-("):
            groups += 1
            group = groups
        elif part in ("--end-group", "-)"):
            group = 0
        elif part in ("--allow-multiple-definition", "muldefs"):
            out.append(LinkInput("", option="muldefs"))

    for token in tokens:
        if skip_next:
            skip_next = False
            if previous == "-z" or previous == "-Xlinker":
                linker_option(token)
            continue
        msvc = _msvc_option(token)
        if msvc is not None:
            name, argument = msvc
            if name in ("defaultlib", "include", "alternatename", "delayload") and argument:
                out.append(LinkInput("", option=f"{name}:{argument}"))
            elif name == "nodefaultlib":
                out.append(LinkInput("", option=f"nodefaultlib:{argument}" if argument else "nodefaultlib"))
            continue
        if token.lower().endswith(".lib") and not token.startswith("-"):
            out.append(LinkInput(_find_windows_library(token, base, libpath)))
            continue
        previous = token
        if token in ("-o", "-L", "-T", "-Xlinker", "-soname", "-MF", "-z"):
            skip_next = True
            continue
        if token.startswith("-Wl,"):
            parts = token[4:].split(",")
            for k, part in enumerate(parts):
                if part == "-z" and k + 1 < len(parts):
                    linker_option(parts[k + 1])
                elif not part.startswith("-") and part.endswith((".o", ".a", ".lo")):
                    out.append(LinkInput(os.path.normpath(os.path.join(base, part)), whole, group))
                else:
                    linker_option(part)
            continue
        if token in ("--start-group", "--end-group", "-(", "-)", "--whole-archive", "--no-whole-archive"):
            linker_option(token)
            continue
        if token.startswith("-l") and len(token) > 2:
            found = _find_library(token[2:], search)
            if found is not None:
                out.append(LinkInput(found, whole, group))
            continue
        if token.startswith("-"):
            continue
        if token.endswith((".o", ".obj", ".a", ".lo")) or ".so" in os.path.basename(token):
            out.append(LinkInput(os.path.normpath(os.path.join(base, token)), whole, group))
    return out


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
        ConfigError: not JSON, or no link command in it.
    """
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"--link-line {path}: not JSON: {exc}") from exc
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
            return shlex.join(args)
    raise ConfigError(f"--link-line {path}: no link command (an entry without -c) in it")


def _find_library(spec: str, search: Sequence[str]) -> str | None:
    """``-lNAME`` / ``-l:FILE`` as ld resolves it: the first directory holding ``libNAME.so`` or
    ``libNAME.a`` (shared first); ``None`` for a shared library or nothing found."""
    names = [spec[1:]] if spec.startswith(":") else [f"lib{spec}.so", f"lib{spec}.a"]
    for directory in search:
        for name in names:
            candidate = os.path.join(directory, name)
            if os.path.isfile(candidate):
                return os.path.normpath(candidate) if candidate.endswith(".a") else None
    return None
