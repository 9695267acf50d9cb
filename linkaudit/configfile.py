"""``linkaudit.toml`` (or ``[tool.linkaudit]`` in ``pyproject.toml``): the settings a CI step keeps
beside the recipe, read with ``tomllib`` and validated; every error names the file and the key.

::

    max_versions = ["GLIBC_2.28", "GLIBCXX_3.4.19"]
    ignore = ["unused-needed"]
    entries = ["torch/_C.cpython-311-x86_64-linux-gnu.so"]

    [severity]
    rpath-leak = "error"

    [[suppress]]
    rule = "driver-link"
    file = "*/libcaffe2_nvrtc.so"
    subject = "libcuda.so.1"          # optional glob
    reason = "dlopen()ed only when a GPU is present (torch/cuda/__init__.py)"

    [[forbidden-needed]]
    file = "*"
    needed = "libnvrtc-builtins.so*"
    reason = "private to libnvrtc: no compatibility across CUDA minor versions"

    [[required-needed]]
    file = "*/libtorch.so"
    needed = "libtorch_cuda.so"
    reason = "the CUDA backend registers itself from static initialisers"

A suppression needs a ``reason``; a suppressed finding is still reported (JSON carries it with
the reason), it is hidden from the text report and does not fail the step; a suppression that
matches nothing is a warning (``unused-suppression``): stale exceptions rot.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .report import Severity

KNOWN_KEYS = frozenset(
    {"max_versions", "ignore", "entries", "severity", "suppress", "forbidden-needed", "required-needed"}
)
#: Rules whose findings no configuration can downgrade or hide.
_NEVER_HIDDEN = frozenset({"unreadable-input", "unused-suppression"})


@dataclass(frozen=True, slots=True)
class Suppression:
    """One justified exception.

    Attributes:
        rule: the rule id it applies to.
        file: fnmatch glob over the finding's file (as reported).
        subject: fnmatch glob over the finding's subject, or ``None`` for any.
        reason: why the finding is accepted (mandatory).
        where: ``"linkaudit.toml: suppress[2]"``, for messages.
    """

    rule: str
    file: str
    subject: str | None
    reason: str
    where: str

    def matches(self, rule: str, file: str, subject: str) -> bool:
        """True when the finding (rule, file, subject) is covered."""
        if rule != self.rule or not file_matches(file, self.file):
            return False
        return self.subject is None or fnmatch.fnmatchcase(subject, self.subject)


def file_matches(path: str, glob: str) -> bool:
    """True when ``path`` (as reported) matches the fnmatch ``glob``, whole or as a trailing
    part: ``lib/libtorch.so`` matches ``torch/lib/libtorch.so``."""
    return fnmatch.fnmatchcase(path, glob) or fnmatch.fnmatchcase(path, "*/" + glob)


@dataclass(frozen=True, slots=True)
class NeededPolicy:
    """One ``[[forbidden-needed]]`` or ``[[required-needed]]`` entry.

    Attributes:
        file: fnmatch glob over the files it applies to (``file_matches``).
        needed: fnmatch glob over DT_NEEDED entries, e.g. ``"libnvrtc-builtins.so*"``.
        reason: why (mandatory), quoted in every finding.
        where: ``"linkaudit.toml: forbidden-needed[0]"``, for messages.
    """

    file: str
    needed: str
    reason: str
    where: str

    def applies_to(self, path: str) -> bool:
        """True when the entry covers the file ``path``."""
        return file_matches(path, self.file)

    def matching(self, needed: tuple[str, ...]) -> list[str]:
        """The entries of ``needed`` the ``needed`` glob matches."""
        return [n for n in needed if fnmatch.fnmatchcase(n, self.needed)]


@dataclass(frozen=True, slots=True)
class FileSettings:
    """What a configuration file sets (empty tuples and maps when it sets nothing)."""

    path: str
    max_versions: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    severities: tuple[tuple[str, Severity], ...] = ()
    suppressions: tuple[Suppression, ...] = ()
    forbidden_needed: tuple[NeededPolicy, ...] = ()
    required_needed: tuple[NeededPolicy, ...] = ()


def find_config(start: str) -> str | None:
    """``linkaudit.toml``, or a ``pyproject.toml`` with ``[tool.linkaudit]``, in ``start`` or above."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "linkaudit.toml")
        if os.path.isfile(candidate):
            return candidate
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(pyproject):
            try:
                with open(pyproject, "rb") as fh:
                    if "linkaudit" in tomllib.load(fh).get("tool", {}):
                        return pyproject
            except (OSError, tomllib.TOMLDecodeError):
                pass
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    return tuple(value)


def load_config(path: str, known_rules: frozenset[str]) -> FileSettings:
    """Read and validate a configuration file.

    Raises:
        ConfigError: unreadable, not TOML, an unknown key or rule, a value of the wrong
            type, a severity that is not error/warning/note, a suppression without reason.
    """
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    where = path
    if os.path.basename(path) == "pyproject.toml":
        data = data.get("tool", {}).get("linkaudit", {})
        where = f"{path}: [tool.linkaudit]"
    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    severities = []
    table = data.get("severity", {})
    if not isinstance(table, dict):
        raise ConfigError(f'{where}: [severity] must be a table of rule = "error" | "warning" | "note"')
    for rule, level in table.items():
        if rule not in known_rules:
            raise ConfigError(f"{where}: severity.{rule}: no such rule")
        if rule == "unreadable-input":
            raise ConfigError(f"{where}: severity.{rule}: an input that cannot be read always fails the audit")
        try:
            severities.append((rule, Severity(level)))
        except ValueError:
            raise ConfigError(f"{where}: severity.{rule} = {level!r}: expected error, warning or note") from None
    suppressions = []
    entries = data.get("suppress", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: suppress must be an array of tables ([[suppress]])")
    for i, entry in enumerate(entries):
        at = f"{where}: suppress[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{at}: must be a table")
        for key in entry:
            if key not in ("rule", "file", "subject", "reason"):
                raise ConfigError(f"{at}: unknown key {key!r}")
        rule = entry.get("rule")
        if rule not in known_rules:
            raise ConfigError(f"{at}.rule: {rule!r} is no rule (see `linkaudit rules`)")
        if rule in _NEVER_HIDDEN:
            raise ConfigError(f"{at}.rule: {rule} cannot be suppressed (an input that cannot be read is never hidden)")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{at}.reason: every suppression needs a reason")
        file = entry.get("file", "*")
        subject = entry.get("subject")
        if not isinstance(file, str) or (subject is not None and not isinstance(subject, str)):
            raise ConfigError(f"{at}: file and subject must be strings (globs)")
        suppressions.append(Suppression(rule, file, subject, reason.strip(), at))
    policies = {key: _needed_policies(data, key, where) for key in ("forbidden-needed", "required-needed")}
    for rule in _strings(data, "ignore", where):
        if rule not in known_rules:
            raise ConfigError(f"{where}: ignore: {rule!r} is no rule")
    return FileSettings(
        path=path,
        max_versions=_strings(data, "max_versions", where),
        ignore=_strings(data, "ignore", where),
        entries=_strings(data, "entries", where),
        severities=tuple(severities),
        suppressions=tuple(suppressions),
        forbidden_needed=policies["forbidden-needed"],
        required_needed=policies["required-needed"],
    )


def _needed_policies(data: dict[str, Any], key: str, where: str) -> tuple[NeededPolicy, ...]:
    entries = data.get(key, [])
    if not isinstance(entries, list):
        raise ConfigError(f"{where}: {key} must be an array of tables ([[{key}]])")
    out = []
    for i, entry in enumerate(entries):
        at = f"{where}: {key}[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{at}: must be a table")
        for k in entry:
            if k not in ("file", "needed", "reason"):
                raise ConfigError(f"{at}: unknown key {k!r} (known: file, needed, reason)")
        needed = entry.get("needed")
        if not isinstance(needed, str) or not needed:
            raise ConfigError(f"{at}.needed: a glob over DT_NEEDED entries is required")
        file = entry.get("file", "*")
        if not isinstance(file, str):
            raise ConfigError(f"{at}.file: must be a string (a glob)")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{at}.reason: every {key} entry needs a reason")
        out.append(NeededPolicy(file, needed, reason.strip(), at))
    return tuple(out)
