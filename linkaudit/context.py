"""The audit context every rule reads.

Built once per audit; rules read it and recompute nothing.  The loader issue
extends it with resolutions (which file each DT_NEEDED resolved to, with the
paths tried), bindings and closures per import root.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import field
from typing import TYPE_CHECKING

from .config import AuditConfig
from .config.profiles import WheelPolicy
from .model import Binary
from .records import dataclass

if TYPE_CHECKING:
    from .link.sources import GeneratedSource
    from .loader.analysis import LinkageAnalysis
    from .loader.images import ImageLoad
    from .packages import Staged
    from .packages.installation import InstallationModel
    from .verify import Disagreement


@dataclass(frozen=True, slots=True)
class AuditContext:
    """What the rules see.

    Attributes:
        binaries: every binary read, in input order.
        config: the audit configuration.
        linkage: the loader emulation over the inputs (loads per import root,
            resolutions with the paths tried, bindings, version checks), or ``None``
            when it was not run (``--no-loader``, or no ELF input).
        generated_sources: with ``--source``, the generated wrapper files of the source tree.
        wheel_policies: for a binary staged from a wheel (by ``Binary.path``), what its platform
            tag promises (``profiles.implied_by_wheel``): ``symbol-version`` applies its ceilings
            where the configuration sets none of the same prefix, ``external-library`` its list
            of system libraries.
        windows: the Windows loader emulation over the PE inputs (``loader.windows``), one load
            per import root; empty when there is no PE input or the loader is off.
        dyld: the dyld emulation over the Mach-O inputs (``loader.dyld``), one load per root.
        image_skipped: the PE and Mach-O roots the Windows and dyld emulations left unloaded, past
            their bounds (``loader.images.ImageBudget``; dyld's run-wide search budget)
            (path, why): ``loader-skipped`` warns of each, and no load of theirs is judged.
        disagreements: with ``--verify``, where lief's reading of an input differs from ours.
        packages: the packages staged for this audit (which package each staged path and
            directory belongs to), or ``None`` when no package is among the inputs.
        site_roots: the installed sites the inputs lie in (``packages.find_site``: absolute,
            normalised): a library found inside one is installed with the inputs, not taken from
            the auditing machine.
        installation: the distributions installed together, who owns each file and what each
            declares (``packages.installation``), or ``None`` without metadata (a build tree).
    """

    binaries: tuple[Binary, ...]
    config: AuditConfig
    linkage: LinkageAnalysis | None = None
    generated_sources: tuple[GeneratedSource, ...] = ()
    wheel_policies: Mapping[str, WheelPolicy] = field(default_factory=dict)
    packages: Staged | None = None
    windows: tuple[ImageLoad, ...] = ()
    dyld: tuple[ImageLoad, ...] = ()
    image_skipped: tuple[tuple[str, str], ...] = ()
    disagreements: tuple[Disagreement, ...] = ()
    site_roots: tuple[str, ...] = ()
    installation: InstallationModel | None = None

    def in_site(self, path: str) -> bool:
        """True when ``path`` lies inside one of ``site_roots``."""
        normal = os.path.normpath(os.path.abspath(path))
        return any(normal.startswith(root + os.sep) for root in self.site_roots)
