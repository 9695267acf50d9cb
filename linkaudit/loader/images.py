"""The records of a loader emulation that walks images by name (Windows, dyld): one load per
import root, each import's resolution with every place tried.  Format-neutral: the ELF loader
(``loader.closure``) has its own, richer records (scopes, bindings)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..errors import InputError
from ..model import Binary, Format, Kind


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

    def add(self, path: str, parent: str, image: Binary | None, fmt: Format) -> Binary | None:
        """Record that ``parent`` loaded ``path``; the image (when it is of format ``fmt``) joins
        ``objects`` and is returned, to have its own imports loaded."""
        self.parents.setdefault(path, parent)
        if image is None or image.format is not fmt:
            return None
        self.objects.append(path)
        self.images[path] = image
        return image

    def chain(self, path: str) -> list[str]:
        """The images from the root down to ``path``."""
        out = [path]
        while out[-1] in self.parents:
            out.append(self.parents[out[-1]])
        return out[::-1]


class ImageCache:
    """Images by path: the inputs as read, any other file read once when first asked for.

    Args:
        inputs: the inputs of the format, by path.
        read: reads a file into binaries, as ``formats.read_path`` (its default) does; the first
            is kept.  A file that cannot be read is ``None`` (the search found the name; what it
            holds is reported elsewhere, when it is an input).
    """

    def __init__(self, inputs: Mapping[str, Binary], read: Callable[[str], list[Binary]] | None = None) -> None:
        self.inputs = inputs
        self.read = read
        self._cache: dict[str, Binary | None] = {}

    def __call__(self, path: str) -> Binary | None:
        if path in self.inputs:
            return self.inputs[path]
        if path not in self._cache:
            from ..formats import read_path

            try:
                found = (self.read or read_path)(path)
                self._cache[path] = found[0] if found else None
            except InputError:
                self._cache[path] = None
        return self._cache[path]


def load_roots(images: Iterable[Binary], load: Callable[[Binary, str], ImageLoad]) -> list[ImageLoad]:
    """Every import root loaded: each Python extension module and executable, then each other shared
    library no root's load reaches, loaded alone (a ``dlopen``, ``LoadLibrary``)."""
    inputs = list(images)
    loads: list[ImageLoad] = []
    reached: set[str] = set()
    for b in inputs:
        if b.kind in (Kind.PYTHON_EXTENSION, Kind.EXECUTABLE):
            done = load(b, "python-import" if b.kind is Kind.PYTHON_EXTENSION else "executable")
            loads.append(done)
            reached.update(done.objects)
    for b in inputs:
        if b.path not in reached and b.kind is Kind.SHARED_LIBRARY:
            loads.append(load(b, "dlopen"))
    return loads
