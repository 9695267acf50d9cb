"""The link command of one target of a Ninja build file (``build.ninja``, as CMake's Ninja
generator writes it), with its response file's contents where the command reads one.

Ninja's manual ("The Ninja build system", "Ninja file reference"): ``rule NAME`` with indented
bindings (``command``, ``rspfile``, ``rspfile_content``); ``build OUTPUTS: RULE INPUTS`` (``|``
implicit, ``||`` order-only) with indented bindings that shadow the rule's and the file's;
``include`` / ``subninja`` (CMake puts its rules in ``CMakeFiles/rules.ninja``); ``$var`` /
``${var}``, ``$in``, ``$in_newline``, ``$out``, and the escapes ``$$``, ``$ ``, ``$:`` and
``$`` at the end of a line (a continuation).  On Windows CMake links through
``cmake -E vs_link_dll ... -- link.exe /nologo @$RSP_FILE ...`` with ``rspfile_content =
$in_newline $LINK_PATH $LINK_LIBRARIES``: the ``@file`` is replaced by that content here, as
Ninja writes it before running the command.

Input reading for this room: it reads the build files only (bounded), never runs anything.
"""

from __future__ import annotations

import os
import re
from dataclasses import field

from ..errors import ConfigError
from ..formats.hostfile import read_regular_file
from ..records import dataclass

#: The most bytes of build files read (PyTorch's build.ninja is about 60 MB).
MAX_BYTES = 512 << 20
#: ``include`` / ``subninja`` nesting.
MAX_DEPTH = 16
#: The most characters variable expansion may produce: a floor, plus a multiple of the bytes of
#: build files read (variables that double, ``v1 = $v0 $v0`` ..., would otherwise grow without end).
EXPANSION_FLOOR = 64 << 20
EXPANSION_PER_BYTE = 8
#: The most bytes parsed in all, ``include`` reading one file again and again included: a floor
#: plus a multiple of the distinct files' bytes (Ninja allows a file included twice; a chain of
#: files each including the next twice parses the last one 2^16 times).
REREAD_FLOOR = 64 << 20
REREAD_PER_BYTE = 16
_VARIABLE = re.compile(r"\$(\$|:| |\n|\{([A-Za-z0-9_.-]+)\}|([A-Za-z0-9_-]+))")


@dataclass
class _Edge:
    outputs: list[str]
    rule: str
    inputs: list[str]
    bindings: dict[str, str] = field(default_factory=dict)


@dataclass
class _File:
    """What the reading keeps: file-level bindings, rules, the edge wanted."""

    target: str
    path: str = ""
    variables: dict[str, str] = field(default_factory=dict)
    rules: dict[str, dict[str, str]] = field(default_factory=dict)
    edge: _Edge | None = None
    read: int = 0
    outputs: int = 0
    expanded: int = 0
    sizes: dict[tuple[int, int], int] = field(default_factory=dict)  # (st_dev, st_ino) -> bytes
    distinct: int = 0  # bytes of the distinct files read

    def charge(self, size: int) -> None:
        """Count ``size`` characters of expansion against the budget (``EXPANSION_FLOOR`` +
        ``EXPANSION_PER_BYTE`` × bytes of the distinct build files read: a file included again
        adds nothing).

        Raises:
            ConfigError: the budget is spent.
        """
        self.expanded += size
        limit = EXPANSION_FLOOR + EXPANSION_PER_BYTE * self.distinct
        if self.expanded > limit:
            raise ConfigError(f"--link-line {self.path}: variables expand to more than {limit} characters")


def expand(text: str, scopes: tuple[dict[str, str], ...], state: _File | None = None) -> str:
    """``text`` with Ninja's variables and escapes replaced, each variable looked up in
    ``scopes`` in order (an unknown one is empty, as in Ninja).

    Raises:
        ConfigError: with ``state``, the values put in exceed its expansion budget (checked
            before the result is built).
    """

    def one(m: re.Match[str]) -> str:
        whole = m.group(1)
        if whole in ("$", ":", " "):
            return whole
        if whole == "\n":
            return ""
        name = m.group(2) or m.group(3)
        value = next((s[name] for s in scopes if name in s), "")
        if state is not None:
            state.charge(len(value))
        return value

    return _VARIABLE.sub(one, text)


def _split(text: str) -> list[str]:
    """Paths of a ``build`` line: split on spaces not escaped (``$ ``), escapes kept for ``expand``."""
    return [p for p in re.split(r"(?<!\$) +", text.strip()) if p]


def _lines(path: str, state: _File) -> list[str]:
    """The logical lines of one build file (``$``-newline continuations joined), comments dropped.

    Raises:
        ConfigError: it cannot be read, holds a NUL, or the bytes read pass ``MAX_BYTES`` or
            ``REREAD_FLOOR`` + ``REREAD_PER_BYTE`` × the distinct files' bytes.
    """
    try:  # a regular file only: a FIFO or device is refused, never waited on or read without end
        data = read_regular_file(path, MAX_BYTES - state.read + 1)
        st = os.stat(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"--link-line {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from exc
    _count_read(path, state, (st.st_dev, st.st_ino), len(data))
    if b"\0" in data:
        raise ConfigError(f"--link-line {path}: a NUL byte at offset {data.index(0)}")
    text = data.decode("utf-8", errors="surrogateescape")
    text = re.sub(r"\$\n[ \t]*", "", text.replace("\r\n", "\n"))
    return [line for line in text.split("\n") if not line.lstrip().startswith("#")]


def _count_read(path: str, state: _File, identity: tuple[int, int], size: int) -> None:
    """Count ``size`` bytes read from the file ``identity`` (``(st_dev, st_ino)``): in all, and
    once per distinct file.

    Raises:
        ConfigError: a bound is passed (see ``_lines``).
    """
    state.read += size
    if identity not in state.sizes:
        state.sizes[identity] = size
        state.distinct += size
    if state.read > MAX_BYTES:
        raise ConfigError(f"--link-line {path}: build files of more than {MAX_BYTES >> 20} MiB")
    limit = REREAD_FLOOR + REREAD_PER_BYTE * state.distinct
    if state.read > limit:
        raise ConfigError(
            f"--link-line {path}: includes read the same build files again and again: more than {limit} "
            f"bytes parsed from {state.distinct} bytes of {len(state.sizes)} files"
        )


def _read(path: str, state: _File, depth: int) -> None:
    """Read ``path`` into ``state``: bindings, rules, the edge producing ``state.target``."""
    if depth > MAX_DEPTH:
        raise ConfigError(f"--link-line {path}: include/subninja nested more than {MAX_DEPTH} deep")
    base = os.path.dirname(path)
    scope: dict[str, str] | None = None  # the indented bindings' owner
    for line in _lines(path, state):
        if line[:1] in (" ", "\t"):
            name, eq, value = line.strip().partition("=")
            if eq and scope is not None:
                scope[name.strip()] = value.strip()
            continue
        scope = None
        word, _sp, rest = line.partition(" ")
        if word == "rule":
            scope = state.rules.setdefault(rest.strip(), {})
        elif word == "build":
            scope = _edge(rest, state)
        elif word in ("include", "subninja"):
            _read(os.path.join(base, expand(rest.strip(), (state.variables,), state)), state, depth + 1)
        elif "=" in line:
            name, _eq, value = line.partition("=")
            state.variables[name.strip()] = expand(value.strip(), (state.variables,), state)


def _edge(rest: str, state: _File) -> dict[str, str] | None:
    """Parse a ``build`` line; keep it (and return its binding scope) when it produces the target."""
    colon = re.search(r"(?<!\$):", rest)
    outs, after = (rest[: colon.start()], rest[colon.end() :]) if colon else (rest, "")
    outputs = [expand(o, (state.variables,), state) for o in _split(outs.split(" | ")[0])]
    state.outputs += len(outputs)
    if state.edge is not None or _same(state.target) not in {_same(o) for o in outputs}:
        return None
    rule, _sp, ins = after.strip().partition(" ")
    explicit = re.split(r"(?<!\$) \|", ins)[0]
    state.edge = _Edge(outputs, rule, [expand(i, (state.variables,), state) for i in _split(explicit)])
    return state.edge.bindings


def _same(path: str) -> str:
    """An output's identity: ``bin\\x.dll`` and ``bin/x.dll`` name one file (CMake writes backslashes)."""
    return os.path.normpath(path.replace("\\", "/"))


def ninja_link_command(path: str, target: str) -> str:
    """The command Ninja runs to build ``target`` (an output of ``path``'s build file, written as
    in it), its variables expanded and an ``@RSPFILE`` replaced by the rule's ``rspfile_content``.

    Raises:
        ConfigError: the file cannot be read, no edge produces ``target``, its rule is missing.
    """
    state = _File(target, path)
    _read(path, state, 0)
    edge = state.edge
    if edge is None:
        raise ConfigError(f"--link-line {path}: no build edge produces {target} ({state.outputs} outputs read)")
    rule = state.rules.get(edge.rule)
    if rule is None:
        raise ConfigError(f"--link-line {path}: {target} is built by rule {edge.rule}, which the file does not define")
    special = {"in": " ".join(edge.inputs), "in_newline": "\n".join(edge.inputs), "out": " ".join(edge.outputs)}
    bindings = {k: expand(v, (special, state.variables), state) for k, v in edge.bindings.items()}
    outer = (special, bindings, state.variables)
    rule_scope = {k: expand(v, outer, state) for k, v in rule.items() if k not in ("command", "rspfile_content")}
    scopes = (special, bindings, rule_scope, state.variables)
    command = expand(rule.get("command", ""), scopes, state)
    rspfile = rule_scope.get("rspfile")
    if rspfile:
        content = expand(rule.get("rspfile_content", ""), scopes, state).replace("\n", " ")
        at = re.compile(rf"(?<!\S)@{re.escape(rspfile)}(?!\S)")
        state.charge(len(content) * (len(at.findall(command)) - 1))  # each @RSPFILE pastes it again
        command = at.sub(lambda _m: content, command)
    return _after_cmake_vs_link(command)


def _after_cmake_vs_link(command: str) -> str:
    """The linker's part of a command: after ``cmake -E vs_link_dll|vs_link_exe ... --``, and of a
    chain ``a && b && c``, the part that runs the linker (the one naming objects)."""
    parts = [p for p in re.split(r"\s&&\s", command) if p.strip() not in ("", ":", "cd .")]
    linking = [p for p in parts if re.search(r"\.(obj|o)\b", p)] or parts
    chosen = linking[0] if linking else command
    # the first "-E vs_link_*", then the first " -- " after it: two searches, each linear (one
    # lazy regex rescanned the rest of the command from every "-E vs_link_": 100,000 took > 120 s)
    start = re.search(r"\s-E\s+vs_link_(?:dll|exe)\b", chosen)
    if start is None:
        return chosen
    dashes = re.compile(r"\s--\s+").search(chosen, start.end())
    return chosen[dashes.end() :] if dashes is not None else chosen
