"""What a package says about itself: a wheel's file name (project, version, tags).

Names are parsed by ``packaging`` (``packaging.utils.parse_wheel_filename``), never by our own
patterns.  Sources: PEP 427 (the file name ``{name}-{ver}(-{build})?-{python}-{abi}-{platform}.whl``),
PEP 425 (compressed tag sets), PEP 503 (normalised project names).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from packaging.tags import Tag


@dataclass(frozen=True, slots=True)
class WheelName:
    """A wheel's file name, read.

    Attributes:
        path: the wheel as given.
        project: the project's normalised name (``jax-cuda12-plugin``).
        version: the version, as written.
        tags: every tag its compressed tag set names (``cp311-cp311-manylinux_2_17_x86_64``, ...).
    """

    path: str
    project: str
    version: str
    tags: frozenset[Tag]


def wheel_name(path: str) -> WheelName | None:
    """The wheel name of the file at ``path``, or ``None`` when its base name is no valid wheel
    name (not ``*.whl``, or not ``packaging``'s idea of one)."""
    # packaging (its tags import subprocess, logging, platform): only once a wheel is given
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    base = os.path.basename(path)
    try:
        project, version, _build, tags = parse_wheel_filename(base)
    except InvalidWheelFilename:
        return None
    return WheelName(path, str(project), str(version), frozenset(tags))
