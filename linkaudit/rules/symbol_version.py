"""``symbol-version``: symbol versions needed above the target's ceiling, and GLIBC_PRIVATE."""

from __future__ import annotations

from collections.abc import Iterator

from ..config import VersionCeiling, parse_version_name
from ..context import AuditContext
from ..model import Binary
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule, preview
from .data import glibc_files

#: Marker versions that carry no number but stand for a glibc release
#: (glibc NEWS: DT_RELR support, GLIBC_ABI_DT_RELR, came with glibc 2.36).
VERSION_MARKERS: dict[str, tuple[str, tuple[int, ...]]] = {
    "GLIBC_ABI_DT_RELR": ("GLIBC", (2, 36)),
}
#: What each marker is, for messages.
MARKER_MEANINGS: dict[str, str] = {
    "GLIBC_ABI_DT_RELR": "DT_RELR relocations from -z pack-relative-relocs, supported since glibc 2.36",
}


def effective_version(name: str) -> tuple[str, tuple[int, ...]] | None:
    """(prefix, numbers) a version name stands for, markers included; ``None`` if unversioned text."""
    return VERSION_MARKERS.get(name) or parse_version_name(name)


def _fmt(prefix: str, numbers: tuple[int, ...]) -> str:
    return f"{prefix}_{'.'.join(map(str, numbers))}"


def _named(name: str) -> str:
    """``"GLIBC_2.34"``, or ``"GLIBC_ABI_DT_RELR (= GLIBC_2.36)"`` for a marker."""
    marker = VERSION_MARKERS.get(name)
    return f"{name} (= {_fmt(*marker)})" if marker else name


def _versions_above(
    binary: Binary, ceilings: dict[str, VersionCeiling]
) -> tuple[dict[str, list[tuple[str, str, bool, tuple[int, ...]]]], dict[str, tuple[int, ...]], dict[str, str]]:
    """The non-weak version needs of ``binary`` whose prefix has a ceiling: per prefix, those above
    it ``[(name, file, weak, numbers)]`` in need order, the highest numbers needed, and that
    highest's name (on a tie a numbered name beats a marker such as GLIBC_ABI_DT_RELR)."""
    above: dict[str, list[tuple[str, str, bool, tuple[int, ...]]]] = {}
    highest: dict[str, tuple[int, ...]] = {}
    highest_name: dict[str, str] = {}
    for need in binary.version_needs:
        for v in need.versions:
            parsed = effective_version(v.name)
            if parsed is None:
                continue
            prefix, numbers = parsed
            ceiling = ceilings.get(prefix)
            if ceiling is None:
                continue
            if v.weak:
                continue
            best = highest.get(prefix)
            if best is None or numbers > best or (numbers == best and highest_name[prefix] in VERSION_MARKERS):
                highest[prefix] = numbers
                highest_name[prefix] = v.name
            if numbers > ceiling.version:
                above.setdefault(prefix, []).append((v.name, need.file, v.weak, numbers))
    return above, highest, highest_name


def _ceiling_message(
    top: str,
    top_name: str,
    ceiling: str,
    source: str | None,
    names: list[str],
    symbols: list[str],
    unused: list[str],
) -> str:
    """The message for versions ``names`` above ``ceiling`` (promised by ``source``, a platform
    tag, or None for the configuration): the highest need ``top_name`` (``top`` when a marker),
    the ``symbols`` that use them (``name@version``), and the ``unused`` ones ld.so still checks."""
    needs = top_name
    if top_name in VERSION_MARKERS:
        needs = f"{top_name}, which stands for {top} ({MARKER_MEANINGS.get(top_name, 'a glibc release')}),"
    message = (
        f"needs {needs} but the ceiling is {ceiling}" + (f", which {source} promises" if source else "") + ": "
        f"{len(names)} version{'s' if len(names) != 1 else ''} above it ({preview([_named(n) for n in names])})"
    )
    if symbols:
        message += f", used by {len(symbols)} symbol{'s' if len(symbols) != 1 else ''} ({preview(symbols, 3)})"
    if unused:
        message += (
            f"; {preview(unused)} needed by no symbol, but ld.so checks every version need "
            "(dl-version.c), so the file still fails to load"
        )
    return message


class SymbolVersion(Rule):
    id = "symbol-version"
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "symbol versions needed above a --max-version ceiling, or a need of GLIBC_PRIVATE"
    explain = """\
A binary built on a new system picks up new symbol versions (GLIBC_2.34,
GLIBCXX_3.4.30, ...) and then fails on the oldest system it claims to support:
"version `GLIBC_2.34' not found (required by ...)". Give the target's ceilings
with --max-version (repeatable: GLIBC_2.17, GLIBCXX_3.4.19, CXXABI_1.3.7,
GCC_4.8.0). A wheel's platform tag brings its own (manylinux2014: GLIBC_2.17,
...; a conda package: the glibc its __glibc depends says); per prefix the
stricter of the tag's and the configuration's applies — a --profile never
relaxes what the tag promises, since pip installs the wheel where its tag says.

The rule checks the version needs (.gnu.version_r) themselves, not only the
symbols that use them: ld.so checks every Vernaux entry at load time (glibc
elf/dl-version.c, _dl_check_map_versions), so a version needed by no symbol
still fails. Linking with -z pack-relative-relocs adds GLIBC_ABI_DT_RELR, needed
by no symbol: such a library does not load on glibc older than 2.36, and is
treated here as needing GLIBC_2.36. Entries flagged VER_FLG_WEAK are exempt
(ld.so only warns). A need of GLIBC_PRIVATE is always an error: those symbols
are glibc-internal and change between any two builds of glibc — except in
glibc's own files (libc.so.6, libm.so.6, ld.so, libnss_*, the gconv modules...:
linkaudit/rules/data/glibc.toml), which need it from each other by design.

One finding per ceiling exceeded, naming the highest version required, every
version above the ceiling and every symbol that needs one of them.
"""
    evidence = {
        "ceiling": "the --max-version ceiling exceeded (or null for GLIBC_PRIVATE)",
        "ceiling_source": '"configuration" (--max-version, --profile, the configuration file), the wheel platform tag that implies the ceiling, or null for GLIBC_PRIVATE',
        "highest": "the highest version of that prefix required, as a numbered release (GLIBC_2.36 for GLIBC_ABI_DT_RELR)",
        "highest_name": "the version name actually needed that is the highest (GLIBC_ABI_DT_RELR); the finding's subject",
        "versions": "versions above the ceiling: [{name, file, weak, symbols}]",
        "symbols": "symbols needing a version above the ceiling (name@version)",
        "unused_versions": "versions above the ceiling needed by no symbol",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        configured = {c.prefix: c for c in context.config.max_versions}
        for binary in context.binaries:
            if not binary.version_needs:
                continue
            yield from self._private(binary)
            ceilings = configured
            sources: dict[str, str] = {}
            promised = context.wheel_policies.get(binary.path)
            if promised is not None:
                implied = {c.prefix: c for c in map(VersionCeiling.parse, promised.ceilings)}
                origin = promised.said
                if promised.derived_from:  # a legal tag auditwheel publishes no policy for
                    origin += f" (derived: GLIBC from the tag, the rest from the policy {promised.derived_from})"
                # the stricter of the tag and the configuration: the wheel must keep its tag's promise
                # whatever --profile or --max-version allows (pip installs it where its tag says)
                ceilings = dict(configured)
                for prefix, ceiling in implied.items():
                    mine = configured.get(prefix)
                    if mine is None or ceiling.version < mine.version:
                        ceilings[prefix] = ceiling
                        sources[prefix] = origin
            if ceilings:
                yield from self._ceilings(binary, ceilings, sources)

    def _symbols_by_version(self, binary: Binary) -> dict[tuple[str, str | None], list[str]]:
        users: dict[tuple[str, str | None], list[str]] = {}
        for sym in binary.symbols.iter_undefined():
            if sym.version is not None:
                users.setdefault((sym.version.name, sym.version.file), []).append(sym.name)
        return users

    def _private(self, binary: Binary) -> Iterator[Finding]:
        private = [(n.file, v) for n in binary.version_needs for v in n.versions if v.name == "GLIBC_PRIVATE"]
        if not private or glibc_files().owns(binary.soname, binary.path):
            return
        users = self._symbols_by_version(binary)
        symbols = sorted(f"{s}@GLIBC_PRIVATE" for f, _v in private for s in users.get(("GLIBC_PRIVATE", f), []))
        files = sorted({f for f, _v in private})
        yield self.finding(
            binary,
            "GLIBC_PRIVATE",
            f"needs GLIBC_PRIVATE from {', '.join(files)}"
            + (f" ({preview(symbols)})" if symbols else "")
            + ": glibc-internal symbols, different in every glibc build; the file loads only with "
            "the exact glibc it was built against",
            {
                "ceiling": None,
                "ceiling_source": None,
                "highest": "GLIBC_PRIVATE",
                "highest_name": "GLIBC_PRIVATE",
                "versions": [
                    {"name": v.name, "file": f, "weak": v.weak, "symbols": sorted(users.get((v.name, f), []))}
                    for f, v in private
                ],
                "symbols": symbols,
                "unused_versions": [] if symbols else ["GLIBC_PRIVATE"],
            },
        )

    def _ceilings(
        self, binary: Binary, ceilings: dict[str, VersionCeiling], sources: dict[str, str]
    ) -> Iterator[Finding]:
        """One finding per prefix whose ceiling is exceeded; ``sources`` names the ceilings that do
        not come from the configuration (a wheel's platform tag), by prefix."""
        above, highest, highest_name = _versions_above(binary, ceilings)
        if not above:
            return
        users = self._symbols_by_version(binary)
        for prefix, versions in above.items():
            ceiling = ceilings[prefix]
            versions.sort(key=lambda t: t[3])
            top = _fmt(prefix, highest[prefix])
            top_name = highest_name[prefix]
            symbols: list[str] = []
            unused: list[str] = []
            listed = []
            for name, file, weak, _n in versions:
                syms = sorted(users.get((name, file), []))
                symbols.extend(f"{s}@{name}" for s in syms)
                if not syms:
                    unused.append(name)
                listed.append({"name": name, "file": file, "weak": weak, "symbols": syms})
            source = sources.get(prefix)
            message = _ceiling_message(top, top_name, ceiling.text, source, [v[0] for v in versions], symbols, unused)
            yield self.finding(
                binary,
                top_name,
                message,
                {
                    "ceiling": ceiling.text,
                    "ceiling_source": source or "configuration",
                    "highest": top,
                    "highest_name": top_name,
                    "versions": listed,
                    "symbols": symbols,
                    "unused_versions": unused,
                },
            )
