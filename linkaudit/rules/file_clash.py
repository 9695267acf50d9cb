"""file-clash: two packages of one installation install the same path."""

from __future__ import annotations

from ..report import Finding, Severity
from .inputs import DriverRule


class FileClash(DriverRule):
    id = "file-clash"
    severity = Severity.ERROR
    summary = "two packages installed together write the same path with different contents (identical: a note)"
    explain = """\
Packages installed together share one site-packages (or one conda prefix).
When two of them ship the same path, the one installed last overwrites the
other: pip and conda do it without a word, and which copy a user gets depends
on the order of installation. With different contents that is an error: one
package runs against the other's file. Identical copies (the namespace
nvidia/__init__.py every NVIDIA wheel ships) are harmless, and a note.

Wheels are compared by the CRC-32 and size their zip directory records,
conda packages (.conda and .tar.bz2, one prefix) by the CRC-32 and size of
each member as it is read; a path a symlink of one package installs is
reported without a comparison. Wheels of one project for different Pythons are never installed
together (see the installations the report lists); --together puts every
input in one installation, and then a second wheel of one project clashes
with the first on its .dist-info files at least.

Fix: ship the file in one package only (a shared dependency), or rename it
(auditwheel's hashed library names do this for vendored libraries).

One package holding several members of one name (a tar appended to with
`tar -r`, a zip written twice) clashes with itself: unzip, pip and tar -x
keep the last copy, which is the one audited (its findings reported, the file
counted audited); the earlier copies are not. An error, named with the member
and how many copies there are; the package's other files are audited as ever.
"""
    evidence = {
        "path": "the path, as installed",
        "packages": "the two packages (the first is the copy audited); one package twice: its own members",
        "identical": "true: the same bytes; false: different; null: not compared",
    }


def clash_finding(path: str, first: str, second: str, member: str, identical: bool | None) -> Finding:
    """The ``file-clash`` finding for ``path`` installed by ``first`` and again by ``second``
    (as ``member``)."""
    if identical:
        what = "with identical contents: harmless"
    elif identical is None:
        what = "(contents not compared): whichever is installed last overwrites the other"
    else:
        what = "with different contents: whichever is installed last overwrites the other"
    return Finding(
        FileClash.id,
        Severity.NOTE if identical else Severity.ERROR,
        f"{second}!{member}",
        path,
        f"{path} is installed by {first} and by {second} {what}",
        {"path": path, "packages": [first, second], "identical": identical},
    )


def copies_finding(package: str, member: str, copies: int) -> Finding:
    """The ``file-clash`` finding of ``package`` holding ``copies`` (2 or more) members named
    ``member``: the last is installed and audited, the earlier ones never are (``Stager.second_copy``)."""
    return Finding(
        FileClash.id,
        Severity.ERROR,
        f"{package}!{member}",
        member,
        f"{package} holds {copies} members named {member}: installers keep the last copy, the one audited; "
        f"the first {copies - 1} {'is' if copies == 2 else 'are'} not audited (the package's copies clash)",
        {"path": member, "packages": [package, package], "identical": None},
    )
