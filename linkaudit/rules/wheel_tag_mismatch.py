"""``wheel-tag-mismatch``: a wheel whose file name and ``WHEEL`` file list different tags — a wheel
renamed by hand (``mv x-linux_x86_64.whl x-manylinux2014_x86_64.whl``) rather than retagged.

pip reads the tags of the file name alone (PEP 427: ``{name}-{ver}(-{build})?-{python}-{abi}-
{platform}.whl``); the ``Tag:`` lines of ``X.dist-info/WHEEL`` are what the tool that built or
repaired the wheel wrote.  ``auditwheel repair`` and ``wheel tags`` rewrite both; a rename changes
one.  The file name's tags, not the content's checks, then decide where pip installs it.
Tags are compared as sets, each side's compressed tag sets expanded (``packaging``'s
``parse_wheel_filename``; ``metadata.wheel_tags``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..context import AuditContext
from ..packages.metadata import wheel_name
from ..report import Finding, Severity
from .base import Rule, preview
from .linux_tag import WHEEL_FILE


class WheelTagMismatch(Rule):
    id = "wheel-tag-mismatch"
    severity = Severity.WARNING
    summary = "a wheel whose file name and WHEEL file list different platform tags (a note for Python or ABI tags): renamed, not retagged"
    explain = """\
pip installs a wheel where the tags of its file name say; the Tag: lines of
its X.dist-info/WHEEL file are what the tool that built or repaired it wrote.
auditwheel repair, delocate and `wheel tags` rewrite both; renaming the file
(mv x-linux_x86_64.whl x-manylinux2014_x86_64.whl) changes one, so the name
promises what no tool checked (a warning when the platforms differ: cupy's
manylinux2014 wheels say linux_x86_64 inside; a note when only the Python or ABI
tag does: torch's macOS cp311-none wheels say cp311-cp311). Retag with `wheel tags --platform-tag ...` or
repair the wheel (auditwheel repair); the other rules already judge the wheel
against its file name's tags, as pip will. Source: PEP 427 (the file name and
the WHEEL file), PEP 425 (compressed tag sets).
"""
    evidence = {
        "package": "the wheel",
        "file_name_tags": "tags only its file name lists (the first 20, sorted)",
        "wheel_file_tags": "tags only its WHEEL file lists (the first 20, sorted)",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        staged = context.packages
        if staged is None:
            return
        dists = staged.distributions()
        for package in staged.packages:
            named = wheel_name(package) if package.endswith(".whl") else None
            dist = dists.get(package)
            if named is None or dist is None or not dist.tags:
                continue  # not a wheel name, or a WHEEL without Tag lines: nothing to compare
            only_name = sorted(str(t) for t in named.tags - dist.tags)
            only_file = sorted(str(t) for t in dist.tags - named.tags)
            if not only_name and not only_file:
                continue
            said = []
            if only_name:
                said.append(f"only its name says {preview(only_name, 3)}")
            if only_file:
                said.append(f"only its WHEEL file says {preview(only_file, 3)}")
            # the platforms differ: the name promises systems no tool checked; else a Python or ABI tag
            platforms = {t.platform for t in named.tags} != {t.platform for t in dist.tags}
            yield self.finding(
                f"{package}!{WHEEL_FILE}",
                (only_name or only_file)[0],
                f"{os.path.basename(package)} was renamed, not retagged: {'; '.join(said)} — pip installs it "
                "where the name says; retag with `wheel tags` or repair it (auditwheel repair)",
                # at most 20 each: a WHEEL file of 1,000 tags of 4,000 digits made 4 MB of JSON
                {"package": package, "file_name_tags": only_name[:20], "wheel_file_tags": only_file[:20]},
                None if platforms else Severity.NOTE,
            )
