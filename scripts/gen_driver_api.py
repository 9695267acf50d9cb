#!/usr/bin/env python3
"""Generate linkaudit's lists of NVIDIA GPU driver library exports.

linkaudit must decide, with no driver installed, whether a shared library
that links ``libcuda.so.1`` or ``libnvidia-ml.so.1`` really uses any of their
functions, and whether an undefined symbol is a CUDA driver API (or NVML)
function. That needs the *exact* exported names: a ``cu[A-Z]*`` pattern would
wrongly swallow ``cuFileRead`` (libcufile), ``cublasCreate`` (libcublas) and
friends. This script derives those names from NVIDIA's public headers and
writes them as versioned TOML data files:

* ``linkaudit/rules/data/cuda_driver_api.toml`` from the CUDA toolkit's
  ``cuda.h`` plus the other driver headers beside it (``cudaGL.h``,
  ``cudaEGL.h``, ``cudaVDPAU.h``, ``cudaProfiler.h``), all of whose
  functions are exported by libcuda.so.1 / nvcuda.dll;
* ``linkaudit/rules/data/nvml_api.toml`` from ``nvml.h`` (e.g. the PyPI
  wheel ``nvidia-nvml-dev``) and/or the official Python bindings' ``pynvml.py``
  (wheel ``nvidia-ml-py``), which looks every C function up by name.

How the names are found
-----------------------
Exported names are not simply the identifiers written after ``CUDAAPI``:
``cuda.h`` ``#define``s many API names to versioned ones (``#define
cuMemAlloc cuMemAlloc_v2``), wraps stream-ordered ones in
``__CUDA_API_PTDS()`` / ``__CUDA_API_PTSZ()`` which append ``_ptds`` /
``_ptsz`` when ``CUDA_API_PER_THREAD_DEFAULT_STREAM`` is defined, and
re-declares the legacy un-suffixed functions (which the library still exports
for old binaries) only under ``#if defined(__CUDA_API_VERSION_INTERNAL)``,
after ``#undef``-ing the macros. ``nvml.h`` does the same with
``NVML_NO_UNVERSIONED_FUNC_DEFS`` / ``__NVML_API_VERSION_INTERNAL``.

So the script runs a small C preprocessor (conditionals, ``#define`` /
``#undef``, object- and function-like macros with ``##``) over the headers
once per build configuration -- the default one, the per-thread-default-stream
one (CUDA) or no-unversioned-defs one (NVML), and the library's own internal
one -- and, at each declaration, macro-expands the declared name with the
macros in force at that point. The union over the configurations is the set
of names that some program compiled against the header can import, plus the
legacy names the library declares for itself. ``static inline`` helpers (such
as ``cuGetProcAddress_v2_ptsz``) are not declared with ``CUDAAPI`` and are
therefore not listed: they are never imported.

Names that exist only under ``_WIN32`` (e.g. ``cuWGLGetDevice``) are not
exported by the Linux libraries; they are written to the separate key
``windows_only_symbols``.

The script uses the Python standard library only; it never loads or runs a
library. Run it with ``--help`` for its options. Typical use::

    pip download --no-deps -d /tmp/nvml nvidia-nvml-dev nvidia-ml-py
    (cd /tmp/nvml && for w in *.whl; do unzip -oq "$w" -d "${w%%-*}"; done)
    python scripts/gen_driver_api.py \\
        --cuda-include /usr/local/cuda/include \\
        --nvml /tmp/nvml/nvidia_nvml_dev/nvidia/cu13/include/nvml.h \\
        --nvml /tmp/nvml/nvidia_ml_py/pynvml.py
"""

from __future__ import annotations

import argparse
import datetime
import difflib
import operator
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

SCHEMA = 1
REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT_DIR = REPO_ROOT / "linkaudit" / "rules" / "data"
DEFAULT_CUDA_INCLUDE = Path("/usr/local/cuda/include")

CUDA_MAIN_HEADER = "cuda.h"
# Further headers of the driver API (all implemented by libcuda). Each is
# preprocessed after cuda.h, in the same macro state, as a program would.
CUDA_EXTRA_HEADERS = ("cudaGL.h", "cudaEGL.h", "cudaVDPAU.h", "cudaProfiler.h")

# Predefined macros of the compilers whose view of the headers we simulate.
LINUX_BASE = {"__GNUC__": "4", "__linux__": "1", "__LP64__": "1", "__x86_64__": "1"}
WINDOWS_BASE = {"_WIN32": "1", "_WIN64": "1", "_MSC_VER": "1930", "_WINDOWS": "1"}

CUDA_VARIANTS = {
    "default": {},
    "per-thread default stream": {"CUDA_API_PER_THREAD_DEFAULT_STREAM": "1"},
    "driver-internal": {"__CUDA_API_VERSION_INTERNAL": "1"},
}
NVML_VARIANTS = {
    "default": {},
    "NVML_NO_UNVERSIONED_FUNC_DEFS": {"NVML_NO_UNVERSIONED_FUNC_DEFS": "1"},
    "library-internal": {"__NVML_API_VERSION_INTERNAL": "1"},
}


class HeaderError(Exception):
    """A header could not be understood; the message names file and line."""


# ---------------------------------------------------------------------------
# A small C preprocessor: enough for NVIDIA's headers, loud about the rest.
# ---------------------------------------------------------------------------

_TOKEN_RE = re.compile(
    r"""
      (?P<ident>[A-Za-z_]\w*)
    | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
    | (?P<string>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    | (?P<punct>\#\#|\#|&&|\|\||<<|>>|[<>=!]=|\S)
    """,
    re.VERBOSE,
)

_COMMENT_OR_LITERAL_RE = re.compile(
    r"""
      (?P<block>/\*.*?\*/)
    | (?P<line>//[^\n]*)
    | (?P<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[str]:
    return [m.group(0) for m in _TOKEN_RE.finditer(text)]


def strip_comments(text: str) -> str:
    """Replace comments by a space (keeping their newlines); keep literals."""

    def repl(m: re.Match[str]) -> str:
        if m.group("literal"):
            return m.group(0)
        return " " + "\n" * m.group(0).count("\n")

    return _COMMENT_OR_LITERAL_RE.sub(repl, text)


def logical_lines(text: str) -> list[tuple[int, str]]:
    """Splice backslash-newlines and strip comments; return (lineno, line)."""
    text = text.replace("\r\n", "\n")
    physical = text.split("\n")
    spliced: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 1
    for i, line in enumerate(physical, 1):
        if not buf:
            start = i
        if line.endswith("\\"):
            buf.append(line[:-1])
            continue
        buf.append(line)
        spliced.append((start, "".join(buf)))
        buf = []
    if buf:
        spliced.append((start, "".join(buf)))
    # Comments may span lines: strip them on the spliced text, then split
    # again, keeping each logical line's starting number.
    joined = "\n".join(line for _, line in spliced)
    stripped = strip_comments(joined).split("\n")
    return [(spliced[i][0], stripped[i]) for i in range(len(spliced))]


@dataclass
class Macro:
    name: str
    params: list[str] | None  # None: object-like
    body: list[str]


@dataclass
class Declaration:
    name: str  # the exported name after macro expansion
    written: str  # the name as written in the header
    header: str
    line: int


@dataclass
class Preprocessor:
    """Evaluates conditionals and macros of a header set for one configuration."""

    predefined: dict[str, str]
    macros: dict[str, Macro] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, value in self.predefined.items():
            self.macros[name] = Macro(name, None, tokenize(value))

    # -- macro expansion ---------------------------------------------------

    def expand(self, tokens: list[str], hidden: frozenset[str] = frozenset()) -> list[str]:
        out: list[str] = []
        i = 0
        while i < len(tokens):
            tok = tokens[i]
            macro = self.macros.get(tok)
            if macro is None or tok in hidden:
                out.append(tok)
                i += 1
                continue
            if macro.params is None:
                out.extend(self.expand(macro.body, hidden | {tok}))
                i += 1
                continue
            # Function-like: only when followed by an argument list.
            if i + 1 >= len(tokens) or tokens[i + 1] != "(":
                out.append(tok)
                i += 1
                continue
            args, i = self._collect_args(tokens, i + 1)
            if len(args) != len(macro.params) and not (len(macro.params) == 0 and args == [[]]):
                raise HeaderError(f"macro {tok} expects {len(macro.params)} arguments, got {len(args)}")
            body = self._substitute(macro, args, hidden)
            out.extend(self.expand(body, hidden | {tok}))
        return out

    @staticmethod
    def _collect_args(tokens: list[str], open_index: int) -> tuple[list[list[str]], int]:
        depth = 0
        args: list[list[str]] = [[]]
        i = open_index
        while i < len(tokens):
            tok = tokens[i]
            if tok == "(":
                depth += 1
                if depth > 1:
                    args[-1].append(tok)
            elif tok == ")":
                depth -= 1
                if depth == 0:
                    return args, i + 1
                args[-1].append(tok)
            elif tok == "," and depth == 1:
                args.append([])
            else:
                args[-1].append(tok)
            i += 1
        raise HeaderError("unterminated macro argument list")

    def _substitute(self, macro: Macro, args: list[list[str]], hidden: frozenset[str]) -> list[str]:
        assert macro.params is not None
        params = dict(zip(macro.params, args, strict=False))
        body = macro.body
        result: list[str] = []
        for k, tok in enumerate(body):
            if tok in params:
                pasted = (k > 0 and body[k - 1] == "##") or (k + 1 < len(body) and body[k + 1] == "##")
                # Operands of ## are not macro-expanded; other arguments are.
                result.extend(params[tok] if pasted else self.expand(params[tok], hidden))
            elif tok == "#" and k + 1 < len(body) and body[k + 1] in params:
                raise HeaderError(f"stringizing in macro {macro.name} is not supported")
            else:
                result.append(tok)
        # Perform token pasting.
        pasted_out: list[str] = []
        k = 0
        while k < len(result):
            if result[k] == "##" and pasted_out and k + 1 < len(result):
                pasted_out[-1] = pasted_out[-1] + result[k + 1]
                k += 2
            else:
                pasted_out.append(result[k])
                k += 1
        return pasted_out

    # -- #if expressions ---------------------------------------------------

    def evaluate(self, expr: str) -> bool:
        tokens = tokenize(expr)
        # Resolve defined(X) / defined X before macro expansion.
        resolved: list[str] = []
        i = 0
        while i < len(tokens):
            if tokens[i] == "defined":
                if i + 1 < len(tokens) and tokens[i + 1] == "(":
                    name, i = tokens[i + 2], i + 4
                    if tokens[i - 1] != ")":
                        raise HeaderError(f"bad defined() in #if {expr!r}")
                else:
                    name, i = tokens[i + 1], i + 2
                resolved.append("1" if name in self.macros else "0")
            else:
                resolved.append(tokens[i])
                i += 1
        expanded = self.expand(resolved)
        # Identifiers left after expansion evaluate to 0, as in C.
        values = ["0" if re.match(r"[A-Za-z_]", t) else t for t in expanded]
        return _ExprParser(values, expr).parse() != 0


class _ExprParser:
    """Recursive-descent evaluator for the integer expressions of #if."""

    _BINARY: ClassVar[list[tuple[str, ...]]] = [
        ("||",),
        ("&&",),
        ("|",),
        ("^",),
        ("&",),
        ("==", "!="),
        ("<", ">", "<=", ">="),
        ("<<", ">>"),
        ("+", "-"),
        ("*", "/", "%"),
    ]
    _OPS: ClassVar[dict[str, Callable[[int, int], int]]] = {
        "||": lambda a, b: int(bool(a) or bool(b)),
        "&&": lambda a, b: int(bool(a) and bool(b)),
        "|": operator.or_,
        "^": operator.xor,
        "&": operator.and_,
        "==": lambda a, b: int(a == b),
        "!=": lambda a, b: int(a != b),
        "<": lambda a, b: int(a < b),
        ">": lambda a, b: int(a > b),
        "<=": lambda a, b: int(a <= b),
        ">=": lambda a, b: int(a >= b),
        "<<": operator.lshift,
        ">>": operator.rshift,
        "+": operator.add,
        "-": operator.sub,
        "*": operator.mul,
        "/": lambda a, b: a // b if b else 0,
        "%": lambda a, b: a % b if b else 0,
    }

    def __init__(self, tokens: list[str], source: str) -> None:
        self.tokens = tokens
        self.pos = 0
        self.source = source

    def parse(self) -> int:
        value = self._ternary()
        if self.pos != len(self.tokens):
            raise HeaderError(f"cannot evaluate #if {self.source!r}")
        return value

    def _peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _ternary(self) -> int:
        cond = self._binary(0)
        if self._peek() == "?":
            self.pos += 1
            a = self._ternary()
            if self._peek() != ":":
                raise HeaderError(f"cannot evaluate #if {self.source!r}")
            self.pos += 1
            b = self._ternary()
            return a if cond else b
        return cond

    def _binary(self, level: int) -> int:
        if level == len(self._BINARY):
            return self._unary()
        left = self._binary(level + 1)
        while self._peek() in self._BINARY[level]:
            op = self.tokens[self.pos]
            self.pos += 1
            right = self._binary(level + 1)
            left = self._OPS[op](left, right)
        return left

    def _unary(self) -> int:
        tok = self._peek()
        if tok is None:
            raise HeaderError(f"cannot evaluate #if {self.source!r}")
        self.pos += 1
        if tok == "!":
            return int(not self._unary())
        if tok == "-":
            return -self._unary()
        if tok == "+":
            return self._unary()
        if tok == "~":
            return ~self._unary()
        if tok == "(":
            value = self._ternary()
            if self._peek() != ")":
                raise HeaderError(f"cannot evaluate #if {self.source!r}")
            self.pos += 1
            return value
        m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", tok)
        if m:
            return int(m.group(1), 0) if not re.fullmatch(r"0\d+", m.group(1)) else int(m.group(1), 8)
        raise HeaderError(f"cannot evaluate #if {self.source!r} (token {tok!r})")


_DIRECTIVE_RE = re.compile(r"^\s*#\s*(\w*)\s*(.*)$")
_DEFINE_RE = re.compile(r"^([A-Za-z_]\w*)(\(([^)]*)\))?\s*(.*)$")


def scan_header(pp: Preprocessor, text: str, header: str, marker: str) -> list[Declaration]:
    """Preprocess *text* with *pp* and return the functions declared with *marker*.

    A declaration is ``... <marker> ... name(``; ``name`` is then expanded with
    the macros in force at that point, which gives the exported symbol.
    """
    decl_re = re.compile(r"\b" + re.escape(marker) + r"\b[^;(){}]*?\b([A-Za-z_]\w*)\s*\(")
    found: list[Declaration] = []
    # Stack of (parent_active, some_branch_taken, this_branch_active).
    stack: list[tuple[bool, bool, bool]] = []
    active = True
    chunk: list[tuple[int, str]] = []

    def flush() -> None:
        if not chunk:
            return
        body = "\n".join(line for _, line in chunk)
        starts = [0]
        for _, line in chunk:
            starts.append(starts[-1] + len(line) + 1)
        for m in decl_re.finditer(body):
            written = m.group(1)
            idx = next(k for k in range(len(chunk)) if starts[k + 1] > m.start(1))
            expanded = pp.expand([written])
            if len(expanded) != 1 or not re.fullmatch(r"[A-Za-z_]\w*", expanded[0]):
                raise HeaderError(f"{header}:{chunk[idx][0]}: {written} expands to {' '.join(expanded)!r}")
            found.append(Declaration(expanded[0], written, header, chunk[idx][0]))
        chunk.clear()

    for lineno, line in logical_lines(text):
        m = _DIRECTIVE_RE.match(line)
        if not m:
            if active:
                chunk.append((lineno, line))
            continue
        flush()
        directive, rest = m.group(1), m.group(2).strip()
        where = f"{header}:{lineno}"
        try:
            if directive in ("if", "ifdef", "ifndef"):
                if not active:
                    taken = False
                elif directive == "ifdef":
                    taken = rest.split()[0] in pp.macros
                elif directive == "ifndef":
                    taken = rest.split()[0] not in pp.macros
                else:
                    taken = pp.evaluate(rest)
                stack.append((active, taken, active and taken))
                active = active and taken
            elif directive == "elif":
                if not stack:
                    raise HeaderError("#elif without #if")
                parent, done, _ = stack.pop()
                now = parent and not done and pp.evaluate(rest)
                stack.append((parent, done or now, now))
                active = now
            elif directive == "else":
                if not stack:
                    raise HeaderError("#else without #if")
                parent, done, _ = stack.pop()
                now = parent and not done
                stack.append((parent, True, now))
                active = now
            elif directive == "endif":
                if not stack:
                    raise HeaderError("#endif without #if")
                active = stack.pop()[0]
            elif not active:
                pass
            elif directive == "define":
                d = _DEFINE_RE.match(rest)
                if not d:
                    raise HeaderError(f"cannot parse #define {rest!r}")
                name, has_params, params, body = d.group(1), d.group(2), d.group(3), d.group(4)
                param_list = [p.strip() for p in params.split(",") if p.strip()] if has_params else None
                pp.macros[name] = Macro(name, param_list, tokenize(body))
            elif directive == "undef":
                pp.macros.pop(rest.split()[0], None)
            elif directive == "error":
                raise HeaderError(f"#error {rest}")
            elif directive in ("include", "pragma", "line", "warning", ""):
                pass  # includes are resolved by the caller's header order
            else:
                raise HeaderError(f"unknown directive #{directive}")
        except HeaderError as exc:
            raise HeaderError(f"{where}: {exc}") from None
        except IndexError:
            raise HeaderError(f"{where}: malformed #{directive} {rest!r}") from None
    flush()
    if stack:
        raise HeaderError(f"{header}: unterminated #if at end of file")
    return found


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------


@dataclass
class SymbolSet:
    linux: dict[str, set[str]] = field(default_factory=dict)  # name -> source files
    windows_only: dict[str, set[str]] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)  # name -> why

    def add(self, target: dict[str, set[str]], name: str, source: str) -> None:
        target.setdefault(name, set()).add(source)


def collect(
    headers: list[tuple[str, str]],
    marker: str,
    prefix: str,
    variants: dict[str, dict[str, str]],
) -> SymbolSet:
    """Scan *headers* (name, text) in order under each variant, Linux and Windows."""
    result = SymbolSet()
    per_platform: dict[str, dict[str, set[str]]] = {"linux": {}, "windows": {}}
    for platform, base in (("linux", LINUX_BASE), ("windows", WINDOWS_BASE)):
        for extra in variants.values():
            pp = Preprocessor({**base, **extra})
            for header, text in headers:
                for decl in scan_header(pp, text, header, marker):
                    if not re.fullmatch(re.escape(prefix) + r"[A-Z]\w*", decl.name):
                        where = f"{decl.header}:{decl.line}"
                        result.rejected[decl.name] = f"{where}: not {prefix} + capital letter"
                        continue
                    per_platform[platform].setdefault(decl.name, set()).add(header)
    result.linux = per_platform["linux"]
    result.windows_only = {n: s for n, s in per_platform["windows"].items() if n not in per_platform["linux"]}
    return result


def cuda_version(cuda_h: str) -> int:
    m = re.search(r"^\s*#\s*define\s+CUDA_VERSION\s+(\d+)", cuda_h, re.MULTILINE)
    if not m:
        raise HeaderError("cuda.h: no #define CUDA_VERSION")
    return int(m.group(1))


def find_wheel_label(path: Path) -> str | None:
    """'name version' of the wheel a file was unpacked from, if recognisable."""
    for parent in path.resolve().parents:
        for meta in sorted(parent.glob("*.dist-info/METADATA")):
            fields = {}
            for line in meta.read_text(encoding="utf-8", errors="replace").splitlines():
                if not line.strip():
                    break
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
            if "Name" in fields and "Version" in fields:
                return f"{fields['Name']} {fields['Version']}"
    return None


_PYNVML_LOOKUP_RE = re.compile(r"""_nvmlGetFunctionPointer\(\s*["'](\w+)["']\s*\)""")


def pynvml_names(text: str) -> set[str]:
    return set(_PYNVML_LOOKUP_RE.findall(text))


# ---------------------------------------------------------------------------
# TOML output
# ---------------------------------------------------------------------------


def toml_string(value: str) -> str:
    """A TOML basic string for *value*, escaping what the spec requires."""
    out = ['"']
    for ch in value:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def toml_comment(text: str) -> str:
    return "# " + " ".join(text.split())


def render(
    *,
    source_desc: str,
    comments: list[str],
    library: str,
    windows_library: str,
    generated: str,
    symbols: set[str],
    windows_only: set[str],
) -> str:
    lines = [toml_comment(f"Generated by scripts/gen_driver_api.py from {source_desc}; do not edit by hand.")]
    lines += [toml_comment(c) for c in comments]
    lines += [
        f"schema = {SCHEMA}",
        f"library = {toml_string(library)}",
        f"windows_library = {toml_string(windows_library)}",
        f"source = {toml_string(source_desc)}",
        f"generated = {toml_string(generated)}",
        "symbols = [",
    ]
    lines += [f"    {toml_string(s)}," for s in sorted(symbols)]
    lines.append("]")
    if windows_only:
        lines.append("# Declared only under _WIN32: exported by the Windows DLL, not by the Linux library.")
        lines.append("windows_only_symbols = [")
        lines += [f"    {toml_string(s)}," for s in sorted(windows_only)]
        lines.append("]")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# Drivers
# ---------------------------------------------------------------------------


def build_cuda(include_dir: Path, generated: str, log: Callable[[str], None]) -> str:
    headers: list[tuple[str, str]] = []
    for name in (CUDA_MAIN_HEADER, *CUDA_EXTRA_HEADERS):
        path = include_dir / name
        if not path.is_file():
            if name == CUDA_MAIN_HEADER:
                raise HeaderError(f"{path}: not found")
            log(f"cuda: {path} not found, skipped")
            continue
        headers.append((name, path.read_text(encoding="utf-8", errors="replace")))
    version = cuda_version(headers[0][1])
    result = collect(headers, "CUDAAPI", "cu", CUDA_VARIANTS)
    if result.rejected:
        for name, why in sorted(result.rejected.items()):
            log(f"cuda: rejected {name}: {why}")
    per_header = {h: sum(1 for s in result.linux.values() if h in s) for h, _ in headers}
    names = ", ".join(h if h != CUDA_MAIN_HEADER else f"cuda.h (CUDA_VERSION {version})" for h, _ in headers)
    source_desc = f"CUDA {version // 1000}.{version % 1000 // 10} {names}"
    comments = [
        "Exported functions of the CUDA driver API: every CUDAAPI declaration, its name",
        "macro-expanded as seen by a default build, by one with",
        "CUDA_API_PER_THREAD_DEFAULT_STREAM (_ptds/_ptsz names), and by the driver itself",
        "(__CUDA_API_VERSION_INTERNAL: legacy names).",
        "Symbols per header: " + ", ".join(f"{h} {n}" for h, n in per_header.items()) + ".",
    ]
    counts = "; ".join(f"{h}: {n}" for h, n in per_header.items())
    log(f"cuda: {len(result.linux)} symbols ({counts}), {len(result.windows_only)} Windows-only")
    return render(
        source_desc=source_desc,
        comments=comments,
        library="libcuda.so.1",
        windows_library="nvcuda.dll",
        generated=generated,
        symbols=set(result.linux),
        windows_only=set(result.windows_only),
    )


def build_nvml(sources: list[Path], labels: list[str], generated: str, log: Callable[[str], None]) -> str:
    headers = [p for p in sources if p.suffix == ".h"]
    scripts = [p for p in sources if p.suffix == ".py"]
    if len(headers) > 1:
        raise HeaderError("give at most one nvml.h")
    symbols: set[str] = set()
    windows_only: set[str] = set()
    descs: list[str] = []
    comments: list[str] = []
    label_iter = iter(labels)

    def label_for(path: Path) -> str:
        explicit = next(label_iter, None)
        return explicit or find_wheel_label(path) or str(path)

    header_syms: set[str] = set()
    if headers:
        path = headers[0]
        text = path.read_text(encoding="utf-8", errors="replace")
        api = re.search(r"^\s*#\s*define\s+NVML_API_VERSION\s+(\d+)", text, re.MULTILINE)
        result = collect([("nvml.h", text)], "DECLDIR", "nvml", NVML_VARIANTS)
        for name, why in sorted(result.rejected.items()):
            log(f"nvml: rejected {name}: {why}")
        header_syms = set(result.linux)
        symbols |= header_syms
        windows_only |= set(result.windows_only)
        descs.append(f"nvml.h (NVML_API_VERSION {api.group(1) if api else '?'}) from {label_for(path)}")
        comments.append(
            "nvml.h: every DECLDIR declaration, its name macro-expanded by default, with"
            " NVML_NO_UNVERSIONED_FUNC_DEFS, and with __NVML_API_VERSION_INTERNAL."
        )
        log(f"nvml: {len(header_syms)} symbols from {path}")
    for path in scripts:
        names = pynvml_names(path.read_text(encoding="utf-8", errors="replace"))
        bad = {n for n in names if not n.startswith("nvml")}
        for n in sorted(bad):
            log(f"nvml: rejected {n} from {path.name}: does not start with 'nvml'")
        names -= bad
        extra = names - symbols - windows_only
        if headers:
            missing = header_syms - names
            log(
                f"nvml: {path.name}: {len(names)} names looked up; {len(extra)} not in"
                f" nvml.h ({', '.join(sorted(extra)) or 'none'}); nvml.h has {len(missing)}"
                " it does not use"
            )
        else:
            log(f"nvml: {len(names)} symbols from {path}")
        symbols |= names
        descs.append(f"pynvml.py from {label_for(path)}")
        comments.append(
            "pynvml.py: every name it looks up with _nvmlGetFunctionPointer();"
            + f" {len(extra)} of them"
            + (" are not declared in nvml.h (older or renamed functions still exported)." if headers else ".")
        )
    if not descs:
        raise HeaderError("no NVML source given")
    log(f"nvml: {len(symbols)} symbols in all, {len(windows_only)} Windows-only")
    return render(
        source_desc=" + ".join(descs),
        comments=comments,
        library="libnvidia-ml.so.1",
        windows_library="nvml.dll",
        generated=generated,
        symbols=symbols,
        windows_only=windows_only - symbols,
    )


def _without_date(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("generated = ")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="gen_driver_api.py",
        description=(
            "Write linkaudit's data files listing the functions exported by the NVIDIA"
            " driver libraries libcuda.so.1 (from the CUDA toolkit's cuda.h and its"
            " companion headers) and libnvidia-ml.so.1 (from nvml.h and/or pynvml.py)."
        ),
        epilog=(
            "nvml.h ships in the PyPI wheel nvidia-nvml-dev (nvidia/cu13/include/nvml.h);"
            " pynvml.py in nvidia-ml-py. Each source's wheel name and version are read"
            " from a *.dist-info/METADATA found above it, or given with --nvml-label."
        ),
    )
    parser.add_argument(
        "--cuda-include",
        type=Path,
        default=DEFAULT_CUDA_INCLUDE,
        metavar="DIR",
        help="folder holding cuda.h, cudaGL.h, cudaEGL.h, cudaVDPAU.h, cudaProfiler.h"
        f" (default: {DEFAULT_CUDA_INCLUDE})",
    )
    parser.add_argument(
        "--nvml",
        type=Path,
        action="append",
        default=[],
        metavar="PATH",
        help="nvml.h or pynvml.py; repeat to combine both (the symbol list is their union)",
    )
    parser.add_argument(
        "--nvml-label",
        action="append",
        default=[],
        metavar="TEXT",
        help="how to name each --nvml source in the file, in the same order"
        " (default: wheel name and version, else the path)",
    )
    parser.add_argument(
        "--only",
        choices=("cuda", "nvml"),
        help="generate only this file (default: cuda, and nvml when --nvml is given)",
    )
    parser.add_argument(
        "--out-dir",
        type=Path,
        default=DEFAULT_OUT_DIR,
        metavar="DIR",
        help="where to write cuda_driver_api.toml and nvml_api.toml (default: linkaudit/rules/data in this repository)",
    )
    parser.add_argument(
        "--date",
        default=None,
        metavar="YYYY-MM-DD",
        help="value of the 'generated' key (default: today, UTC)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 if the existing files differ (the 'generated' date aside)",
    )
    args = parser.parse_args(argv)
    generated = args.date or datetime.datetime.now(datetime.UTC).date().isoformat()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", generated):
        parser.error("--date must be YYYY-MM-DD")

    def log(message: str) -> None:
        print(message, file=sys.stderr)

    outputs: list[tuple[Path, str]] = []
    try:
        if args.only in (None, "cuda"):
            outputs.append(
                (
                    args.out_dir / "cuda_driver_api.toml",
                    build_cuda(args.cuda_include, generated, log),
                )
            )
        if args.only == "nvml" or (args.only is None and args.nvml):
            if not args.nvml:
                parser.error("--only nvml needs --nvml PATH")
            outputs.append(
                (
                    args.out_dir / "nvml_api.toml",
                    build_nvml(args.nvml, args.nvml_label, generated, log),
                )
            )
    except (HeaderError, OSError) as exc:
        log(f"error: {exc}")
        return 2

    status = 0
    for path, text in outputs:
        if args.check:
            old = path.read_text(encoding="utf-8") if path.is_file() else ""
            if _without_date(old) != _without_date(text):
                status = 1
                log(f"{path}: out of date")
                sys.stderr.writelines(
                    line + "\n"
                    for line in difflib.unified_diff(
                        _without_date(old),
                        _without_date(text),
                        str(path),
                        "regenerated",
                        lineterm="",
                        n=1,
                    )
                )
            else:
                log(f"{path}: up to date")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            log(f"wrote {path}")
    return status


if __name__ == "__main__":
    sys.exit(main())
