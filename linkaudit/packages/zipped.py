"""What wheels and ``.conda`` files share: a zip's member list, bounded."""

from __future__ import annotations

import zipfile

from ..errors import InputError
from . import limits
from .staging import Stager


def listed_members(stager: Stager, label: str, zf: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The members the zip's central directory lists, or none (with an error for ``label``) when
    it lists more than ``MAX_MEMBERS``."""
    infos = zf.infolist()
    if len(infos) > limits.MAX_MEMBERS:
        stager.errors.append(InputError(label, f"lists {len(infos)} members, more than {limits.MAX_MEMBERS}"))
        return []
    return infos
