"""The records of a loader emulation that walks images by name (Windows, dyld): one load per
import root, each import's resolution with every place tried.  Format-neutral: the ELF loader
(``loader.closure``) has its own, richer records (scopes, bindings)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import field

from ..errors import InputError
from ..model import ALONE_KINDS, Binary, Format, Kind
from ..records import dataclass


class ImageLoader(enum.StrEnum):
    """Which platform's loader an ``ImageLoad`` emulates."""

    WINDOWS = "windows"
    DYLD = "dyld"


class ImageOutcome(enum.StrEnum):
    """What came of one place tried (the ELF loader's ``ldso.Outcome`` says ``wrong-class`` for
    its machine mismatch; a PE or Mach-O image has no ELF class, so here it is ``wrong-machine``)."""

    FOUND = "found"
    MISSING = "missing"
    #: a file of the format, but for another machine (a PE of another ``Machine``, a Mach-O with no
    #: slice of the loader's CPU type): both loaders skip it and go on searching
    WRONG_MACHINE = "wrong-machine"
    #: a file that is not an image of the format at all (dyld: "not a mach-o file"); skipped
    INVALID = "invalid"


@dataclass(frozen=True, slots=True)
class ImageAttempt:
    """One place a library was looked for.

    Attributes:
        path: the candidate path.
        source: why it was tried (Windows: ``dll-load-dir``, ``application-directory``,
            ``dll-directory``, ``system``, ``PATH``; dyld: ``DYLD_LIBRARY_PATH``, ``LC_RPATH of X``,
            ``install-name``, ``DYLD_FALLBACK_LIBRARY_PATH``).
        outcome: an ``ImageOutcome`` (a ``str``: it compares equal to ``"found"``...).
        detail: why a candidate was skipped, for ``wrong-machine`` ``"have i386, need x86-64"``
            (the candidate's machines, then the loader's), else ``""``.
        machines: the candidate's machines for ``wrong-machine`` (a universal Mach-O: every slice).
    """

    path: str
    source: str
    outcome: str
    detail: str = ""
    machines: tuple[str, ...] = ()


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
    (``LoadLibrary``); ``objects`` the images loaded, in load order; ``parents`` the image that
    first imported each one (for chains); ``images`` the images read, by path (for a universal
    Mach-O file, the slice loaded); ``machine`` the loader's (the root's) machine; ``loader``
    which platform's loader this is; ``reached`` False for an input no import root reaches, loaded
    alone as a ``dlopen`` (drawn by ``tree`` only with ``--all-roots``, as ELF's)."""

    root: str
    kind: str
    objects: list[str] = field(default_factory=list)
    resolutions: dict[tuple[str, str], ImageResolution] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)
    images: dict[str, Binary] = field(default_factory=dict)
    machine: str = ""
    loader: ImageLoader = ImageLoader.WINDOWS
    reached: bool = True

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
        inputs: the inputs of the format, by path: every binary read from the file (one per slice
            of a universal Mach-O file).
        read: reads a file into binaries, as ``formats.read_path`` (its default) does.  A file that
            cannot be read has no binaries (the search found the name; what it holds is reported
            elsewhere, when it is an input).
    """

    def __init__(
        self, inputs: Mapping[str, Sequence[Binary]], read: Callable[[str], list[Binary]] | None = None
    ) -> None:
        self.inputs = inputs
        self.read = read
        self._cache: dict[str, tuple[Binary, ...]] = {}

    def slices(self, path: str) -> tuple[Binary, ...]:
        """Every binary of the file at ``path`` (empty when it cannot be read)."""
        if path in self.inputs:
            return tuple(self.inputs[path])
        if path not in self._cache:
            from ..formats import read_path

            try:
                self._cache[path] = tuple((self.read or read_path)(path))
            except InputError:
                self._cache[path] = ()
        return self._cache[path]

    def __call__(self, path: str) -> Binary | None:
        """The first binary of the file at ``path``, or ``None`` when it cannot be read."""
        found = self.slices(path)
        return found[0] if found else None


def root_kind(binary: Binary) -> str:
    """How an import root is loaded: ``"python-import"`` (an extension module), ``"executable"``,
    else ``"dlopen"`` (``LoadLibrary``)."""
    if binary.kind is Kind.PYTHON_EXTENSION:
        return "python-import"
    if binary.kind in (Kind.EXECUTABLE, Kind.PIE_EXECUTABLE):
        return "executable"
    return "dlopen"


def entry_roots(image: ImageCache, entries: Sequence[str], fmt: Format) -> list[Binary] | None:
    """The import roots ``--entry`` names among the files of format ``fmt``: every slice of each
    entry's file (an input, or read), in entry order; ``None`` when no entry is given (the default
    roots then).  An entry of another format is that format's loader's; one that cannot be read is
    reported by the audit (``analyze_inputs``), not here."""
    if not entries:
        return None
    out: list[Binary] = []
    seen: set[int] = set()
    for entry in entries:
        for b in image.slices(entry):
            if b.format is fmt and id(b) not in seen:
                seen.add(id(b))
                out.append(b)
    return out


def load_roots(
    images: Iterable[Binary], load: Callable[[Binary, str], ImageLoad], roots: Sequence[Binary] | None = None
) -> list[ImageLoad]:
    """Every import root loaded, as ELF's (``loader.analysis.analyze``): the ``roots`` chosen
    (``--entry``), by default each Python extension module and executable; then each other shared
    library, extension module or executable no root's load reaches, loaded alone (a ``dlopen``,
    ``LoadLibrary``, an import, a run), its load marked
    ``reached=False`` when there were roots.  Each binary is a root of its own: every slice of a
    universal Mach-O file is loaded (by a Mac of its CPU)."""
    inputs = list(images)
    if roots is None:
        roots = [b for b in inputs if b.kind in (Kind.PYTHON_EXTENSION, Kind.EXECUTABLE, Kind.PIE_EXECUTABLE)]
        alone_reached = not roots  # no import root: every library is a root of its own
    else:
        alone_reached = False  # roots were chosen: the rest is reached by none of them
    loads: list[ImageLoad] = []
    reached: set[str] = set()
    for b in roots:
        done = load(b, root_kind(b))
        loads.append(done)
        reached.update(done.objects)
    for b in inputs:  # an extension module or executable no chosen root reaches is loaded too
        if b.path not in reached and b.kind in ALONE_KINDS:
            done = load(b, root_kind(b))
            done.reached = alone_reached
            loads.append(done)
    return loads
