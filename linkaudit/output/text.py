"""Text report for people: grouped by file, one line per finding, evidence indented beneath.

::

    sample_bins/broken/libtorch_cuda.so
      error   [driver-link] libcuda.so.1: ...
          library: libcuda.so.1
    ...
    12 files: 9 audited, 1 unreadable, 2 skipped (format not supported yet); 3 errors, 2 warnings, 0 notes (0.04 s)

Evidence entries that say nothing (``None``, ``False``, empty) are left out;
``--format json`` has them all.  Every name, path and message is printed with
bytes that are not UTF-8 as ``\\xNN`` and control characters escaped
(``\\n``, ``\\x1b``...), so a file name or a string in a binary cannot fake
report lines or send terminal escapes.  Colour only when asked (the CLI asks
when writing to a terminal, or with ``--color``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ..report import FileResult, FileStatus, Finding, Report, Severity, split_member
from .shared import text_safe

_COLORS = {Severity.ERROR: "\x1b[31m", Severity.WARNING: "\x1b[33m", Severity.NOTE: "\x1b[36m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"
MAX_ITEMS = 12


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        if not value:
            return "(none)"
        items = [_value(v) for v in value[:MAX_ITEMS]]
        more = f" … (+{len(value) - MAX_ITEMS} more; --format json lists all)" if len(value) > MAX_ITEMS else ""
        return ", ".join(items) + more
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def _finding(f: Finding, color: bool) -> list[str]:
    sev = f"{f.severity.value:<7}"
    if color:
        sev = f"{_COLORS[f.severity]}{sev}{_RESET}"
    lines = [f"  {sev} " + text_safe(f"[{f.rule}] {f.subject}: {f.message}")]
    for key, value in f.evidence.items():
        if _says_nothing(value):
            continue
        if isinstance(value, (list, tuple)) and value and all(isinstance(v, Mapping) for v in value):
            # A list of records (paths tried, roots): one per line.
            rows = ["      " + text_safe(f"{key}:")]
            for item in value[:MAX_ITEMS]:
                cells = ", ".join(f"{k}: {_value(v)}" for k, v in item.items() if not _says_nothing(v))
                rows.append("        - " + text_safe(cells))
            if len(value) > MAX_ITEMS:
                rows.append(f"        … (+{len(value) - MAX_ITEMS} more; --format json lists all)")
        else:
            rows = ["      " + text_safe(f"{key}: {_value(value)}")]
        lines.extend(f"{_DIM}{row}{_RESET}" if color else row for row in rows)
    return lines


def _says_nothing(value: Any) -> bool:
    """True for evidence values the text report leaves out: ``None``, ``False``, ``""`` and empty containers."""
    if value is None or value is False:
        return True
    return isinstance(value, (str, list, tuple, Mapping)) and len(value) == 0


def _file_of(result: FileResult) -> str:
    """The file a report entry was read from: a slice of a universal Mach-O file
    (``fat.dylib(arm64)``, whose machine is ``arm64``) and an archive member (``libx.a(x.o)``, a
    relocatable object) are entries of their own, named ``FILE(member)`` (``Binary.display_path``)."""
    path = result.path
    if not path.endswith(")") or result.status is not FileStatus.AUDITED:
        return path
    if result.format == "macho" and result.machine and path.endswith(f"({result.machine})"):
        return path[: -len(result.machine) - 2]
    if result.kind == "relocatable" and "(" in path:
        return path[: path.rindex("(")]
    return path


def _counted(count: int, word: str) -> str:
    """``"1 error"``, ``"2 errors"``: ``count`` and ``word``, plural with an ``s`` unless 1."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(report: Report) -> str:
    """The total of input files first, then what became of them, then the findings.

    ``"27 files: 18 audited, 7 unreadable, 2 skipped (format not supported yet); 3 errors, 2 warnings, 0 notes (0.04 s)"``;
    unreadable and skipped are left out when 0 (``"1 file: 1 audited; 0 errors, ..."``).  The
    first number is the JSON report's ``summary.files`` (an entry of ``files`` each) and audited,
    unreadable and skipped add up to it.  A file that holds several binaries — a universal Mach-O
    file (one per slice), an archive (one per member) — is one file but several entries: the line
    then counts binaries and says how many files hold them, ``"20 binaries in 19 files: 20 audited; ..."``.
    """

    files = len({_file_of(r) for r in report.files})
    entries = len(report.files)
    # entries > files: some file holds two binaries or more
    total = _counted(files, "file") if files == entries else f"{entries} binaries in {_counted(files, 'file')}"

    parts = [f"{report.count_status(FileStatus.AUDITED)} audited"]
    unreadable = report.count_status(FileStatus.UNREADABLE)
    if unreadable:
        parts.append(f"{unreadable} unreadable")
    skipped = report.count_status(FileStatus.SKIPPED)
    if skipped:
        parts.append(f"{skipped} skipped (format not supported yet)")
    return (
        f"{total}: {', '.join(parts)}; "
        f"{_counted(report.count(Severity.ERROR), 'error')}, {_counted(report.count(Severity.WARNING), 'warning')}, "
        f"{_counted(report.count(Severity.NOTE), 'note')}"
        + (f", {report.suppressed} suppressed" if report.suppressed else "")
        + f" ({report.seconds:.2f} s)"
    )


def render(report: Report, color: bool = False, show_suppressed: bool = False) -> str:
    """The report as text, ending in a newline.

    Suppressed findings (``linkaudit.toml``) are counted in the summary line but
    listed only with ``show_suppressed``, each followed by its reason.
    """
    lines: list[str] = []
    current = None
    for f in report.findings:
        if f.suppressed is not None and not show_suppressed:
            continue
        if f.file != current:
            if current is not None:
                lines.append("")
            current = f.file
            name = text_safe(f.file)
            lines.append(f"{_BOLD}{name}{_RESET}" if color else name)
        lines.extend(_finding(f, color))
        if f.suppressed is not None:
            lines.append("      " + text_safe(f"suppressed: {f.suppressed}"))
    if lines:
        lines.append("")
    lines.extend(_installation_lines(report))
    lines.extend(_site_lines(report))
    roots_line = _roots_line(report)
    if roots_line:
        lines.append(roots_line)
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def _installation_lines(report: Report) -> list[str]:
    """``"installations: 3 (...)"`` and one line per installation (its targets and packages), when
    the inputs made more than one or ``--together`` made one."""
    planned = report.config.get("installations") or []
    if not planned:
        return []
    head = f"installations: {len(planned)}"
    if len(planned) > 1:
        head += f" ({_apart(planned)}; --together audits the inputs as one)"
    lines = [head]
    verdicts = _verdicts(report, planned)
    for i, inst in enumerate(planned, 1):
        label = installation_label(inst["packages"], inst["targets"], inst["reason"])
        lines.append(text_safe(f"  {i}. {label}{verdicts[i - 1]}"))
    return lines


def installation_label(packages: Sequence[str], targets: Sequence[str], reason: str) -> str:
    """``"cp312-cp312-win_amd64: numpy-2.2.6-cp312-cp312-win_amd64.whl"``: an installation's first
    two targets (else why it was formed; ``together`` for ``--together``) and its packages' file names."""
    names = ", ".join(os.path.basename(p) for p in packages) or "(no package)"
    why = ", ".join(targets[:2]) or ("together" if reason.startswith("--together") else reason)
    return f"{why or 'together'}: {names}"


def _verdicts(report: Report, planned: list[dict[str, Any]]) -> list[str]:
    """Each installation's own errors and warnings, `` — 0 errors, 2 warnings``: the findings on
    its packages' members (``PACKAGE!member``), so that a CI log says which wheel failed; those a
    suppression or the baseline hides are counted apart, as the summary counts them (``, 1
    suppressed``: they were errors, and a green run read as failed); ``""`` for an installation of
    no package.  A package in several installations (a conda package every build of a name needs)
    counts its findings — reported once — in each of them."""
    index: dict[str, list[int]] = {}
    for i, inst in enumerate(planned):
        for p in inst["packages"]:
            index.setdefault(str(p), []).append(i)
    counts = [[0, 0, 0] for _ in planned]
    for f in report.findings:
        split = split_member(f.file, index.keys())
        for at in index[split[0]] if split is not None else ():
            if f.suppressed is not None:
                counts[at][2] += 1
            elif f.severity in (Severity.ERROR, Severity.WARNING):
                counts[at][f.severity is Severity.WARNING] += 1
    return [
        f" — {_counted(e, 'error')}, {_counted(w, 'warning')}{f', {s} suppressed' if s else ''}"
        if inst["packages"]
        else ""
        for inst, (e, w, s) in zip(planned, counts, strict=True)
    ]


def _apart(planned: list[dict[str, object]]) -> str:
    """Why the inputs were audited as several installations, from the plan's own reasons: ``--each``;
    a project's wheels for several targets (one wheel per project in each, as pip picks); the two
    formats of one conda package, or several builds of one name (conda installs one)."""
    reasons = [str(i["reason"]) for i in planned]
    why = []
    if any(r.endswith("(--each)") for r in reasons):
        why.append("--each: every package on its own")
    if any(i["targets"] for i in planned):
        why.append("a project's wheels for several targets are never installed together")
    if any(r.startswith("one format of") for r in reasons):
        why.append("the two formats of one conda package are never installed together")
    if any(r.startswith("one build of") for r in reasons):
        why.append("two builds of one conda package name are never installed in one prefix")
    return "; ".join(why) or "installed apart"


def _site_target(target: dict[str, Any]) -> str:
    """What one kind of platform tag of a site was audited against, in words."""
    policy = target["policy"]
    if policy and policy.startswith("conda-forge sysroot"):
        return (
            f"a conda prefix, target {_conda_words(str(target['tag']))}: outside the prefix only "
            f"glibc's libraries count ({policy}); libz, libstdc++, libgcc_s must come from conda packages"
        )
    if policy:
        return (
            f"target {target['tag']} (the most demanding, {os.path.basename(target['from'])}): "
            f"outside the site only the system libraries of {policy} count"
        )
    return f"target {target['tag']}, but the libraries of this machine count (--target-env host)"


def _conda_words(tag: str) -> str:
    """A conda prefix's target in conda's words: ``"linux-64, glibc 2.17 (its glibc baseline)"`` for
    the ``py3-none-manylinux_2_17_x86_64`` its records are read as (no wheel's tag); the tag as it is
    when it is not of that shape."""
    from ..packages.site import CONDA_ARCH  # loaded already: the prefix was read with it

    parts = tag.rsplit("-", 1)[-1].split("_", 3)  # manylinux, 2, 17, x86_64
    if len(parts) != 4 or parts[0] != "manylinux" or not (parts[1].isdigit() and parts[2].isdigit()):
        return f"{tag} (its glibc baseline)"
    subdir = next((s for s, machine in CONDA_ARCH.items() if machine == parts[3]), parts[3])
    return f"{subdir}, glibc {parts[1]}.{parts[2]} (its glibc baseline)"


def _site_text(site: dict[str, Any]) -> str:
    """One site's line: its distributions and the target of each kind of platform tag its
    distributions name (``targets``; a report without them: its one ``target_tag``)."""
    text = f"site {site['root']}: {_counted(site['distributions'], 'distribution')}; "
    targets = site.get("targets")
    if targets is None and site["target_tag"] is not None:
        targets = [{"kind": "", "tag": site["target_tag"], "from": site["target_from"], "policy": site["policy"]}]
    if not targets:
        return text + (
            "no distribution names a platform: the target is unknown (give --profile, or --target-env host "
            "to take this machine as the target)"
        )
    if len(targets) > 1:
        kinds = ", ".join(t["kind"] for t in targets)
        text += (
            f"its platform tags disagree in kind ({kinds}): each file is judged against the target of its own kind: "
        )
    return text + "; ".join(_site_target(t) for t in targets)


def _site_lines(report: Report) -> list[str]:
    """What each installed site was audited against, and the libraries found outside the inputs
    on the auditing host: counted for a build tree, listed for a site."""
    lines = []
    sites = report.config.get("sites") or []
    for site in sites:
        lines.append(text_safe(_site_text(site)))
    outside = report.config.get("outside_inputs") or []
    if outside:
        by_source: dict[str, int] = {}
        for lib in outside:
            by_source[lib["source"]] = by_source.get(lib["source"], 0) + 1
        lines.append(_outside_line(len(outside), by_source))
        if sites:
            lines.extend(text_safe(f"  {lib['path']} ({lib['source']})") for lib in outside)
    return lines


def _outside_line(total: int, by_source: dict[str, int]) -> str:
    """``"3 libraries resolved outside the inputs: 2 on this machine (system-directory: 2), 1 by the
    target's policy (target-policy)"``: a library the target's policy provides is known by name
    only (``loader.modelled``), not read from this machine."""
    policy = by_source.get("target-policy", 0)
    host = {source: n for source, n in by_source.items() if source != "target-policy"}
    parts = []
    if host:
        counts = ", ".join(f"{source}: {n}" for source, n in host.items())
        parts.append(f"{sum(host.values())} on this machine ({counts})")
    if policy:
        parts.append(f"{policy} by the target's policy (target-policy)")
    return f"{total} librar{'y' if total == 1 else 'ies'} resolved outside the inputs: {', '.join(parts)}"


def _roots_line(report: Report) -> str:
    """``"import roots: a [python-import], b [executable]; 2 other inputs no root reaches, each loaded alone"``."""
    reached = [r for r in report.roots if r.reached]
    alone = len(report.roots) - len(reached)
    if not report.roots:
        return ""
    shown = ", ".join(f"{r.path} [{r.kind}]" for r in reached[:6])
    if len(reached) > 6:
        shown += f", … (+{len(reached) - 6} more)"
    text = f"import roots: {shown or '(none)'}"
    if alone:
        text += f"; {alone} other input{'s' if alone != 1 else ''} no root reaches, each loaded alone"
        text += " as a dlopen" if all(r.kind == "dlopen" for r in report.roots if not r.reached) else ""
    return text_safe(text)
