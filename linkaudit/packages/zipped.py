"""What wheels and ``.conda`` files share: a zip's member list, bounded, without overlapping entries.

A zip bomb of overlapping entries (many central-directory entries whose data share one compressed
stream) passes every per-member check: each entry's data must lie after the previous entry's
local header and data.  Source: APPNOTE.TXT 4.3.7 (local file header, 30 bytes plus the name and
extra field), 4.3.12 (central directory).
"""

from __future__ import annotations

import zipfile

from ..errors import InputError
from . import limits
from .staging import Stager

#: Size of a local file header before its name and extra field, bytes.
_LOCAL_HEADER = 30

#: Why a member whose name holds a NUL is refused (the name Python's zipfile gives it follows).
_NUL_NAME = "a member name holding a NUL byte: no file can be named so, not audited (Python's zipfile, as pip uses it, cuts it to"


def _name_bytes(info: zipfile.ZipInfo) -> int:
    """The length of the member's name as stored (UTF-8 when flag bit 11 says so, else cp437)."""
    encoding = "utf-8" if info.flag_bits & 0x800 else "cp437"
    return len(info.orig_filename.encode(encoding, errors="replace"))


def overlapping(infos: list[zipfile.ZipInfo]) -> dict[int, str]:
    """The entries (by index in ``infos``) whose local header starts inside the header or data of
    another entry, each with the name of that entry.  Linear after one sort by offset."""
    out: dict[int, str] = {}
    end = 0
    holder = ""
    for i in sorted(range(len(infos)), key=lambda k: infos[k].header_offset):
        info = infos[i]
        if info.header_offset < end:
            out[i] = holder
            continue
        end = info.header_offset + _LOCAL_HEADER + _name_bytes(info) + info.compress_size
        holder = info.filename
    return out


def listed_members(stager: Stager, label: str, zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members the zip's central directory lists, those whose data overlap another's, those
    with an empty name and those whose name holds a NUL (no file can be named so) refused; none (with an error for ``label``) when it lists more than
    ``MAX_MEMBERS``."""
    infos = zf.infolist()
    if len(infos) > limits.MAX_MEMBERS:
        stager.errors.append(InputError(label, f"lists {len(infos)} members, more than {limits.MAX_MEMBERS}"))
        return []
    bad = overlapping(infos)
    for i, holder in bad.items():
        stager.refuse(
            label,
            infos[i].filename or "(empty name)",
            f"its data overlaps member {holder!r} (a zip bomb of overlapping entries?): never inflated",
        )
    for i, info in enumerate(infos):
        if i in bad:
            continue
        if "\0" in info.orig_filename:  # zipfile cut the name at the NUL: refused by its whole name
            stager.refuse(label, info.orig_filename, f"{_NUL_NAME} {info.filename!r})")
            bad[i] = ""
        elif not info.filename:
            # zipfile's own is_dir() fails on it (IndexError: exit 3 before): no installer writes it
            stager.refuse(label, "(empty name)", "a member with an empty name: never written")
            bad[i] = ""
    return [info for i, info in enumerate(infos) if i not in bad] if bad else infos
