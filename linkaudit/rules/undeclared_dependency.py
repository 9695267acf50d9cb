"""``undeclared-dependency``: a library of one distribution that loads only because another,
undeclared, distribution happens to be installed beside it (conda-build: overlinking)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

from ..context import AuditContext
from ..lazyre import LazyPattern
from ..loader.ldso import Source
from ..loader.target import expand_dst
from ..model import Binary
from ..report import Finding, Severity
from .base import Rule

if TYPE_CHECKING:  # packaging comes with it: only with an installation
    from ..packages.installation import InstallationModel


class UndeclaredDependency(Rule):
    id = "undeclared-dependency"
    needs_loader = True
    severity = Severity.ERROR
    summary = "a binary needs a library owned by an installed distribution its own distribution does not declare"
    explain = """\
In an installation (a site-packages, the wheels given together), each file
belongs to one distribution (its RECORD lists it). When a binary of
distribution P needs a library that the loader finds in a file of another
distribution Q, P must declare Q: in its Requires-Dist (markers evaluated for
the installation's target), or through what its declared distributions
declare (torch declares nvidia-cuda-runtime through
cuda-toolkit[cudart]==13.0.3; nvidia-cudnn-cu13 declares nvidia-cublas).
Otherwise it works here by accident: Q was installed for another reason, and
an environment without it fails with "ImportError: libX.so: cannot open shared
object file". conda-build calls this overlinking.

A requirement declared only under one of P's extras counts as declared (the
extra is named in the evidence). Meta-packages that install no file of their
own (cuda-toolkit) are read from linkaudit's data, generated from the real
wheels by scripts/gen_meta_packages.py.

A library matched among the objects already loaded (by name or SONAME, before
any search: another distribution's copy of the same vendored library, loaded
first) is not an undeclared dependency when P ships its own copy where its
DT_RUNPATH (else DT_RPATH) finds it: without Q, P loads its own. Two wheels
repaired by auditwheel often vendor one identical libgcc_s or libstdc++ under
the same hashed name.

The message names P's own target (the first of P's tags whose marker
environment is the installation's; else the installation's target). When P's
Requires-Dist does name Q but under a marker that excludes that target
(nvidia-foo ; python_version < "3.11" in a cp311 wheel), it quotes the line
and the marker: the fix is the marker, not another requirement. A line
declared only for an extra (nvidia-foo ; extra == "gpu", in a METADATA that
does not provide the extra gpu) says so: declare it unconditionally if the
library loads without the extra. The line is quoted with a quote it does not
hold.

In a conda prefix (and among conda packages given together) the terms are
conda's: P's run requirements (requirements/run in its recipe, the depends of
its record; no markers), and conda-build's name for it, overlinking.

A Requires-Dist line of P that PEP 508 does not parse (barlib >=) declares
nothing: installers refuse or skip it. Each such line of a distribution whose
binaries are audited is a finding of its own, naming the METADATA, the line
and packaging's error; P's other lines still count, and an undeclared
dependency of P names the unparsable lines too.

Fix: add the distribution (the evidence names it) to P's Requires-Dist (a
conda package: to its requirements/run), or fix the marker that excludes it.
"""
    evidence = {
        "needed": "the DT_NEEDED entry",
        "library": "the file it resolves to",
        "owner": "the distribution that installs that file (Q)",
        "distribution": "the distribution of the binary that needs it (P)",
        "add": "the requirement to add to P's Requires-Dist (a conda package: its requirements/run)",
        "requirement": "a Requires-Dist line of P that cannot be parsed",
        "error": "why it cannot be parsed (packaging's InvalidRequirement)",
        "metadata": "the METADATA file that holds that line",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        model, linkage = context.installation, context.linkage
        if model is None or linkage is None:
            return
        by_path = {b.path: b for b in context.binaries}
        seen: set[tuple[str, str]] = set()
        for part in linkage.parts():
            for (requester, needed), res in part.part.own_resolutions().items():
                path = linkage.audited.get(requester, requester)
                binary = by_path.get(path)
                if binary is None or res.path is None or (path, needed) in seen:
                    continue
                seen.add((path, needed))
                mine, theirs = model.owner(path), model.owner(res.path)
                if mine is None or theirs is None or mine == theirs:
                    continue
                if theirs in model.declares(mine) or theirs in model.declares_under_extra(mine):
                    continue
                if res.source is Source.LOADED and _own_copy(binary, path, needed, model, mine):
                    continue
                yield self.finding(
                    binary,
                    needed,
                    f"{needed} loads from {res.path}, {_undeclared(model, mine, theirs)}",
                    {"needed": needed, "library": res.path, "owner": theirs, "distribution": mine, "add": theirs},
                )
        yield from self._unparsable(context, model)

    def _unparsable(self, context: AuditContext, model: InstallationModel) -> Iterator[Finding]:
        """One finding per ``Requires-Dist`` line that cannot be parsed, of each wheel distribution
        owning an audited binary (at its first binary)."""
        from ..packages.requirements import unparsable

        first: dict[str, Binary] = {}
        for b in context.binaries:
            owner = model.owner(b.path)
            if owner is not None:
                first.setdefault(owner, b)
        for mine, binary in first.items():
            dist = model.distributions[mine]
            if dist.kind != "wheel":
                continue
            metadata = f"{dist.where.rstrip('/')}/METADATA"
            for line, error in unparsable(dist.requires):
                yield self.finding(
                    binary,
                    line,
                    f"{metadata} has 'Requires-Dist: {line}', which cannot be parsed ({error}): it declares nothing "
                    f"(installers refuse or skip it) — write it as PEP 508 says",
                    {"distribution": mine, "requirement": line, "error": error, "metadata": metadata},
                )


def _undeclared(model: InstallationModel, mine: str, theirs: str) -> str:
    """Why ``theirs`` counts as undeclared by ``mine`` and the fix, in the terms of ``mine``'s kind:
    a conda package's run requirements (its recipe's ``requirements/run``, its record's
    ``depends``: no markers, so no target to name); a wheel's ``Requires-Dist`` for ``mine``'s own
    target, and when a requirement on ``theirs`` is there, the marker that excludes that target."""
    dist = model.distributions[mine]
    if dist.kind.startswith("conda"):
        where = "in this prefix" if dist.kind == "conda" else "beside it"
        return (
            f"installed by the conda package {theirs}, which {mine} does not depend on (not in its run requirements "
            f"— requirements/run in its recipe — nor in what those depend on): it works here only because {theirs} "
            f"is installed {where} — add {theirs} to {mine}'s requirements/run (conda-build: overlinking)"
        )
    tag = _own_target(model, mine)
    excluded = _excluded_by_marker(dist.requires, theirs)
    if excluded is not None:
        line, marker = excluded
        test = _EXTRA_TEST.search(marker)
        if test is not None:  # only for an extra (one its METADATA may not even provide)
            extra = test.group(1) or test.group(2) or ""
            return (
                f"installed by {theirs}, which {mine} declares only for the extra `{extra}`: its Requires-Dist has "
                f"{_quoted(line)} — it works here only because {theirs} is installed; declare it unconditionally "
                f"in {mine}'s Requires-Dist if the library loads without the extra `{extra}`"
            )
        return (
            f"installed by {theirs}, which {mine} declares only under a marker that excludes its target {tag}: "
            f"its Requires-Dist has {_quoted(line)}, and {marker} does not hold for {tag} — it works here only because "
            f"{theirs} is installed; fix the marker ({marker}) in {mine}'s Requires-Dist so that it holds for {tag}"
        )
    return (
        f"installed by {theirs}, which {mine} does not declare (not in its Requires-Dist for {tag}, nor in what "
        f"those declare): it works here only because {theirs} is installed — add '{theirs}' to {mine}'s Requires-Dist"
        f"{_unparsable_note(dist.requires)}"
    )


def _unparsable_note(requires: tuple[str, ...]) -> str:
    """``" (its Requires-Dist 'barlib >=' cannot be parsed: ...)"``, or ``""`` when every line parses."""
    from ..packages.requirements import unparsable

    bad = unparsable(requires)
    if not bad:
        return ""
    lines = ", ".join(_quoted(line) for line, _error in bad[:2]) + (f" and {len(bad) - 2} more" if len(bad) > 2 else "")
    return f" (or fix its Requires-Dist {lines}, which cannot be parsed: {bad[0][1]})"


#: ``extra == "gpu"`` (or ``"gpu" == extra``) in a marker as ``packaging`` writes it (double quotes).
_EXTRA_TEST = LazyPattern(r'\bextra\s*==\s*"([^"]*)"|"([^"]*)"\s*==\s*extra\b')


def _quoted(text: str) -> str:
    """``text`` between quotes it does not hold (``'`` , else ``"``, else backticks): a
    ``Requires-Dist`` line with single-quoted markers is never quoted in single quotes."""
    quote = next((q for q in "'\"`" if q not in text), "`")
    return f"{quote}{text}{quote}"


def _own_target(model: InstallationModel, mine: str) -> str:
    """The target to name for ``mine``'s markers: the first of its own tags (``cp311-cp311-...``)
    whose marker environment is the one they were evaluated in (``model.env``, from the
    installation's target), else the installation's target itself — never a tag whose environment
    would answer otherwise."""
    from ..packages.requirements import marker_environment

    for tag in sorted(model.distributions[mine].tags, key=str):
        if marker_environment(tag) == model.env:
            return str(tag)
    return str(model.target)


def _excluded_by_marker(requires: tuple[str, ...], theirs: str) -> tuple[str, str] | None:
    """``(line, marker)`` of the first ``Requires-Dist`` line of ``requires`` that names ``theirs``
    (normalised) under a marker: the line is there, only its marker excluded the target (it was not
    declared, with or without an extra). ``None`` when no line names it."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    for line in requires:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and canonicalize_name(req.name) == theirs:
            return line.strip(), str(req.marker)
    return None


def _own_copy(binary: Binary, path: str, needed: str, model: InstallationModel, mine: str) -> bool:
    """True when ``binary`` (at ``path``, of distribution ``mine``) finds a file named ``needed``
    that ``mine`` installs in a directory of its own DT_RUNPATH (else DT_RPATH; ``$ORIGIN``
    expanded as glibc's ``_dl_dst_substitute`` does; an entry with ``$LIB`` or ``$PLATFORM`` is
    passed over): the search it would make alone, had no other copy been loaded first."""
    if "/" in needed:
        return False
    origin = os.path.dirname(path)
    for entry in binary.runpath or binary.rpath:
        if any(token in entry for token in ("$LIB", "${LIB}", "$PLATFORM", "${PLATFORM}")):
            continue
        candidate = os.path.normpath(os.path.join(expand_dst(entry, origin, "", ""), needed))
        if os.path.isfile(candidate) and model.owner(candidate) == mine:
            return True
    return False
