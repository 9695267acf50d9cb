"""The records of a loader emulation that walks images by name (Windows, dyld): one load per
import root, each import's resolution with every place tried.  Format-neutral: the ELF loader
(``loader.closure``) has its own, richer records (scopes, bindings)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Binary


@dataclass(frozen=True, slots=True)
class ImageAttempt:
    """One place a library was looked for: ``path``, ``source`` (Windows: ``dll-load-dir``,
    ``dll-directory``, ``application-directory``, ``system``; dyld: ``LC_RPATH of X``,
    ``install-name``, ``shared-cache``...), ``outcome`` (``found`` or ``missing``)."""

    path: str
    source: str
    outcome: str


@dataclass(frozen=True, slots=True)
class ImageResolution:
    """How one import of one image resolved: the path, or ``None`` with every place tried;
    ``system`` when the system provides it (Windows' DLLs, the dyld shared cache); ``optional``
    when it may be missing (a Mach-O weak dylib)."""

    name: str
    requester: str
    path: str | None
    source: str | None
    attempts: tuple[ImageAttempt, ...]
    system: bool = False
    optional: bool = False


@dataclass
class ImageLoad:
    """One import root loaded: ``kind`` is ``python-import``, ``executable`` or ``dlopen``
    (``LoadLibrary``); ``objects`` the DLLs loaded, in load order; ``parents`` the image that
    first imported each one (for chains); ``images`` the images read, by path."""

    root: str
    kind: str
    objects: list[str] = field(default_factory=list)
    resolutions: dict[tuple[str, str], ImageResolution] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)
    images: dict[str, Binary] = field(default_factory=dict)

    def chain(self, path: str) -> list[str]:
        """The images from the root down to ``path``."""
        out = [path]
        while out[-1] in self.parents:
            out.append(self.parents[out[-1]])
        return out[::-1]
