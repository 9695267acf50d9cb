"""``linkaudit.toml`` (or ``[tool.linkaudit]`` in ``pyproject.toml``): the settings a CI step keeps
beside the recipe, read with ``tomllib`` and validated; every error names the file and the key.

::

    profile = "manylinux_2_28"
    max_versions = ["GLIBC_2.28", "GLIBCXX_3.4.19"]
    ignore = ["unused-needed"]
    entries = ["torch/_C.cpython-311-x86_64-linux-gnu.so"]
    dll-directories = ["torch/lib"]   # and the other loader options: LOADER_KEYS

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

import os
import re
import stat
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError, did_you_mean
from ..records import dataclass
from ..report import Severity
from .model import NeededPolicy, Suppression, VersionCeiling

#: The loader options a file may set, each as ``check``'s option of the same name (``--dll-directory``
#: is ``dll-directories``), with the type of its value: ``list`` (of strings), ``str`` or ``bool``.
LOADER_KEYS: dict[str, type] = {
    "dll-directories": list,
    "ld-library-path": list,
    "dyld-library-path": list,
    "dyld-fallback-library-path": list,
    "executable-path": str,
    "target-env": str,
    "with-driver": bool,
}
#: The values ``target-env`` takes (as ``--target-env``).
TARGET_ENVS = ("auto", "host", "policy")
KNOWN_KEYS = frozenset(
    {"profile", "max_versions", "ignore", "entries", "severity", "suppress", "forbidden-needed", "required-needed"}
    | set(LOADER_KEYS)
)
#: Largest configuration file read, bytes (a real one is a few KiB).
MAX_CONFIG_BYTES = 1 << 20
#: Rules whose findings no configuration can downgrade or hide.
_NEVER_HIDDEN = frozenset({"unreadable-input", "unused-suppression"})


@dataclass(frozen=True, slots=True)
class FileSettings:
    """What a configuration file sets (empty tuples and maps when it sets nothing)."""

    path: str
    profile: str | None = None
    max_versions: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    entries: tuple[str, ...] = ()
    severities: tuple[tuple[str, Severity], ...] = ()
    suppressions: tuple[Suppression, ...] = ()
    forbidden_needed: tuple[NeededPolicy, ...] = ()
    required_needed: tuple[NeededPolicy, ...] = ()
    loader: tuple[tuple[str, str | bool | tuple[str, ...]], ...] = ()
    """The loader options set (``LOADER_KEYS``), as ``(key, value)`` in key order; a list is a tuple."""

    def loader_value(self, key: str) -> str | bool | tuple[str, ...] | None:
        """The value the file gives loader option ``key`` (``"dll-directories"``), ``None`` when unset."""
        return dict(self.loader).get(key)


def find_config(start: str) -> str | None:
    """``linkaudit.toml``, or a ``pyproject.toml`` with ``[tool.linkaudit]``, in ``start`` or above."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "linkaudit.toml")
        if os.path.isfile(candidate):
            return candidate
        pyproject = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(pyproject) and _has_tool_table(pyproject):
            return pyproject
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _has_tool_table(pyproject: str) -> bool:
    """True when ``pyproject`` has a ``[tool.linkaudit]`` table — or says so but is not valid
    TOML, so that ``load_config`` reports the error rather than the file being skipped."""
    try:
        with open(pyproject, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
    except OSError:
        return False
    if b"linkaudit" not in raw and b"\\u" not in raw and b"\\U" not in raw:
        # No key can name the table without spelling it (short of a quoted key's \u escapes): a
        # project's own pyproject.toml is not parsed on every run made in its directory (tomllib ~5 ms).
        return False
    import tomllib  # only once a file is found: no TOML parser on a run without one

    from .tomlkeys import too_deep

    try:
        text = raw.decode("utf-8")
        if too_deep(text):  # never parsed: reported as a broken file is, when it names the table
            return b"tool.linkaudit" in raw
        tool = tomllib.loads(text).get("tool")
    except (UnicodeDecodeError, ValueError, RecursionError):  # ValueError: TOMLDecodeError, and an
        # integer of more than 4,300 digits, which int() refuses
        return b"tool.linkaudit" in raw
    return isinstance(tool, dict) and "linkaudit" in tool


def _strings(table: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of strings")
    for v in value:
        if not v or "\0" in v:
            raise ConfigError(f"{where}: {key}: {v!r} is empty or holds a NUL character")
    return tuple(value)


def _header(line: str) -> tuple[bool, str] | None:
    """``(is_array, name)`` for a ``[name]`` / ``[[name]]`` header line, else ``None`` (no regex:
    a line of brackets and spaces must not cost more than its length)."""
    text = line.strip()
    if not text.startswith("["):
        return None
    array = text.startswith("[[")
    end = text.find("]]" if array else "]")
    if end < 0:
        return None
    return array, text[2 if array else 1 : end].replace('"', "").replace(" ", "")


_KEY = re.compile(r"^\s*(?:\"([^\"]+)\"|'([^']+)'|([A-Za-z0-9_-]+))\s*=")


class _Lines:
    """Line numbers (1-based) of the keys and tables of a TOML text, for error messages.

    ``tomllib`` gives values, not positions; this scan of header and ``key =`` lines finds
    where each setting was written (multi-line values and inline tables count at their first
    line).  ``prefix`` is ``"tool.linkaudit."`` inside a ``pyproject.toml``.
    """

    def __init__(self, text: str, prefix: str) -> None:
        self.lines: dict[tuple[str, int | None, str | None], int] = {}
        table: tuple[str, int | None] | None = ("", None) if not prefix else None
        counts: dict[str, int] = {}
        root = prefix.rstrip(".")
        for number, line in enumerate(text.splitlines(), 1):
            header = _header(line)
            if header:
                array, name = header
                table = None
                if name == root:
                    table = ("", None)
                elif name.startswith(prefix):
                    name = name[len(prefix) :]
                    index = None
                    if array:
                        index = counts.get(name, 0)
                        counts[name] = index + 1
                    table = (name, index)
                    self.lines.setdefault((name, index, None), number)
                continue
            key = _KEY.match(line)
            if key and table is not None:
                self.lines.setdefault((*table, next(g for g in key.groups() if g)), number)

    def at(self, table: str, index: int | None = None, key: str | None = None) -> str:
        """``":LINE"`` for the setting, the closest enclosing one when it is not found, or ``""``."""
        for candidate in ((table, index, key), (table, index, None), ("", None, table)):
            if candidate in self.lines:
                return f":{self.lines[candidate]}"
        return ""


def read_settings_file(path: str, limit: int, where: str, what: str) -> bytes:
    """The bytes of a small settings file the user names (configuration, baseline).

    Args:
        path: the file.
        limit: largest size accepted, bytes.
        where: how messages name it (``"linkaudit.toml"``, ``"--baseline bl.json"``).
        what: what it is, for the size message (``"configuration"``).

    Raises:
        ConfigError: not a regular file (a directory, FIFO or device, which could block or
            never end), larger than ``limit``, or unreadable.
    """
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{where}: not a regular file")
        if st.st_size > limit:
            raise ConfigError(f"{where}: {st.st_size} bytes: larger than any {what} ({limit} bytes)")
        with open(path, "rb") as fh:
            return fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read: {exc.strerror or exc}") from exc


def load_config(path: str, known_rules: frozenset[str]) -> FileSettings:
    """Read and validate a configuration file.

    Raises:
        ConfigError: unreadable, not TOML, an unknown key or rule, a value of the wrong
            type, a severity that is not error/warning/note, a suppression without reason.
    """
    if not path:
        raise ConfigError("--config: empty file name")
    raw = read_settings_file(path, MAX_CONFIG_BYTES, path, "configuration")
    data, prefix = _parse_toml(path, raw)
    lines = _Lines(raw.decode("utf-8-sig"), prefix)

    def at(table: str, index: int | None = None, key: str | None = None) -> str:
        line = lines.at(table, index, key)
        return f"{path}{line}: [tool.linkaudit]" if prefix else f"{path}{line}"

    unknown = sorted(set(data) - KNOWN_KEYS)
    if unknown:
        raise ConfigError(f"{at(unknown[0])}: unknown key {unknown[0]!r} (known: {', '.join(sorted(KNOWN_KEYS))})")
    severities = _severities(data, known_rules, at)
    suppressions = _suppressions(data, known_rules, at)
    policies = {key: _needed_policies(data, key, at) for key in ("forbidden-needed", "required-needed")}
    for rule in _strings(data, "ignore", at("ignore")):
        if rule not in known_rules:
            raise ConfigError(f"{at('ignore')}: ignore: {rule!r} is no rule{did_you_mean(rule, known_rules)}")
        if rule == "unreadable-input":
            raise ConfigError(f"{at('ignore')}: ignore: inputs that cannot be read are never hidden")
    for text in _strings(data, "max_versions", at("max_versions")):
        try:
            VersionCeiling.parse(text)
        except ConfigError as exc:
            raise ConfigError(f"{at('max_versions')}: max_versions: {exc}") from None
    profile = data.get("profile")
    if profile is not None and not isinstance(profile, str):
        raise ConfigError(f"{at('profile')}: profile must be a string (see `linkaudit profiles`)")
    return FileSettings(
        path=path,
        profile=profile,
        max_versions=_strings(data, "max_versions", at("max_versions")),
        ignore=_strings(data, "ignore", at("ignore")),
        entries=_strings(data, "entries", at("entries")),
        severities=severities,
        suppressions=suppressions,
        forbidden_needed=policies["forbidden-needed"],
        required_needed=policies["required-needed"],
        loader=_loader_settings(data, at),
    )


def _parse_toml(path: str, raw: bytes) -> tuple[dict[str, Any], str]:
    """The settings table of configuration file ``path`` (bytes ``raw``) and the prefix its keys
    are named with in messages: for a ``pyproject.toml``, its ``[tool.linkaudit]`` table
    (``"tool.linkaudit."``; empty when absent), else the whole document (``""``).

    Raises:
        ConfigError: not UTF-8, not TOML, nested too deeply, or ``[tool.linkaudit]`` not a table.
    """
    import tomllib  # only when a configuration file is read

    from .tomlkeys import too_deep

    try:
        text = raw.decode("utf-8-sig")
        deep = too_deep(text)
        if deep is not None:
            raise ConfigError(f"{path}: not valid TOML for linkaudit: {deep}")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: not UTF-8 (byte offset {exc.start})") from exc
    except ValueError as exc:  # TOMLDecodeError, or an integer of more than 4,300 digits
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    except RecursionError:
        raise ConfigError(f"{path}: not valid TOML for linkaudit: values nested too deeply") from None
    if os.path.basename(path) == "pyproject.toml":
        tool = data.get("tool", {})
        data = tool.get("linkaudit", {}) if isinstance(tool, dict) else {}
        if not isinstance(data, dict):
            raise ConfigError(f"{path}: [tool.linkaudit] must be a table")
        return data, "tool.linkaudit."
    return data, ""


def _severities(
    data: dict[str, Any], known_rules: frozenset[str], at: Callable[..., str]
) -> tuple[tuple[str, Severity], ...]:
    """The ``[severity]`` table of ``data``: ``(rule, severity)`` in file order; ``at(table,
    index, key)`` names the place in messages.

    Raises:
        ConfigError: not a table, no such rule, ``unreadable-input`` (always fails the audit), or a
            level that is not error/warning/note.
    """
    severities = []
    table = data.get("severity", {})
    if not isinstance(table, dict):
        raise ConfigError(f'{at("severity")}: [severity] must be a table of rule = "error" | "warning" | "note"')
    for rule, level in table.items():
        if rule not in known_rules:
            raise ConfigError(
                f"{at('severity', None, rule)}: severity.{rule}: no such rule{did_you_mean(rule, known_rules)}"
            )
        if rule == "unreadable-input":
            raise ConfigError(
                f"{at('severity', None, rule)}: severity.{rule}: an input that cannot be read always fails the audit"
            )
        try:
            severities.append((rule, Severity(level)))
        except ValueError:
            raise ConfigError(
                f"{at('severity', None, rule)}: severity.{rule} = {level!r}: expected error, warning or note"
            ) from None
    return tuple(severities)


def _suppressions(data: dict[str, Any], known_rules: frozenset[str], at: Callable[..., str]) -> tuple[Suppression, ...]:
    """The ``[[suppress]]`` tables of ``data``, in file order; ``at(table, index, key)`` names the
    place in messages (and each suppression keeps it, for unused-suppression).

    Raises:
        ConfigError: not an array of tables, an unknown key, no such rule, a rule never hidden
            (``_NEVER_HIDDEN``), no reason, or a file or subject glob that is not a string.
    """
    suppressions = []
    entries = data.get("suppress", [])
    if not isinstance(entries, list):
        raise ConfigError(f"{at('suppress')}: suppress must be an array of tables ([[suppress]])")
    for i, entry in enumerate(entries):
        name = f"suppress[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{at('suppress', i)}: {name}: must be a table")
        for key in entry:
            if key not in ("rule", "file", "subject", "reason"):
                raise ConfigError(f"{at('suppress', i, key)}: {name}: unknown key {key!r}")
        rule = entry.get("rule")
        if not isinstance(rule, str) or rule not in known_rules:
            raise ConfigError(
                f"{at('suppress', i, 'rule')}: {name}.rule: {rule!r} is no rule{did_you_mean(rule, known_rules)} "
                "(see `linkaudit rules`)"
            )
        if rule in _NEVER_HIDDEN:
            raise ConfigError(
                f"{at('suppress', i, 'rule')}: {name}.rule: {rule} cannot be suppressed "
                "(an input that cannot be read is never hidden)"
            )
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{at('suppress', i, 'reason')}: {name}.reason: every suppression needs a reason")
        file = entry.get("file", "*")
        subject = entry.get("subject")
        if not isinstance(file, str) or (subject is not None and not isinstance(subject, str)):
            raise ConfigError(f"{at('suppress', i)}: {name}: file and subject must be strings (globs)")
        suppressions.append(Suppression(rule, file, subject, reason.strip(), f"{at('suppress', i)}: {name}"))
    return tuple(suppressions)


def _loader_settings(
    data: dict[str, Any], at: Callable[[str], str]
) -> tuple[tuple[str, str | bool | tuple[str, ...]], ...]:
    """The loader options ``data`` sets (``LOADER_KEYS``), validated.

    Raises:
        ConfigError: a value of the wrong type, an empty path or one holding NUL, a
            ``target-env`` that is not auto, host or policy; the message names the key and line.
    """
    out: list[tuple[str, str | bool | tuple[str, ...]]] = []
    for key, kind in sorted(LOADER_KEYS.items()):
        if key not in data:
            continue
        value = data[key]
        if kind is list:
            out.append((key, _strings(data, key, at(key))))
        elif kind is bool:
            if not isinstance(value, bool):
                raise ConfigError(f"{at(key)}: {key} must be true or false, not {value!r}")
            out.append((key, value))
        else:
            if not isinstance(value, str) or not value or "\0" in value:
                raise ConfigError(f"{at(key)}: {key} must be a non-empty string, not {value!r}")
            if key == "target-env" and value not in TARGET_ENVS:
                raise ConfigError(f"{at(key)}: target-env = {value!r}: expected {', '.join(TARGET_ENVS)}")
            out.append((key, value))
    return tuple(out)


def _needed_policies(
    data: dict[str, Any], key: str, at: Callable[[str, int | None, str | None], str]
) -> tuple[NeededPolicy, ...]:
    entries = data.get(key, [])
    if not isinstance(entries, list):
        raise ConfigError(f"{at(key, None, None)}: {key} must be an array of tables ([[{key}]])")
    out = []
    for i, entry in enumerate(entries):
        name = f"{key}[{i}]"
        if not isinstance(entry, dict):
            raise ConfigError(f"{at(key, i, None)}: {name}: must be a table")
        for k in entry:
            if k not in ("file", "needed", "reason"):
                raise ConfigError(f"{at(key, i, k)}: {name}: unknown key {k!r} (known: file, needed, reason)")
        needed = entry.get("needed")
        if not isinstance(needed, str) or not needed:
            raise ConfigError(f"{at(key, i, 'needed')}: {name}.needed: a glob over DT_NEEDED entries is required")
        file = entry.get("file", "*")
        if not isinstance(file, str):
            raise ConfigError(f"{at(key, i, 'file')}: {name}.file: must be a string (a glob)")
        reason = entry.get("reason")
        if not isinstance(reason, str) or not reason.strip():
            raise ConfigError(f"{at(key, i, 'reason')}: {name}.reason: every {key} entry needs a reason")
        out.append(NeededPolicy(file, needed, reason.strip(), f"{at(key, i, None)}: {name}"))
    return tuple(out)
