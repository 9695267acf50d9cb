"""The records of a loader emulation that walks images by name (Windows, dyld): one load per
import root, each import's resolution with every place tried.  Format-neutral: the ELF loader
(``loader.closure``) has its own, richer records (scopes, bindings)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any, TypeVar

from ..errors import InputError
from ..model import ALONE_KINDS, Binary, Format, Kind
from ..records import dataclass
from .bounds import LoadBound

_K = TypeVar("_K")
_V = TypeVar("_V")


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
    which platform's loader this is (the containers: lists and dicts, or a ``LoadStack``'s
    read-only views of a load shared with others); ``reached`` False for an input no import root reaches, loaded
    alone as a ``dlopen`` (drawn by ``tree`` only with ``--all-roots``, as ELF's)."""

    root: str
    kind: str
    objects: Sequence[str] = field(default_factory=list)
    resolutions: Mapping[tuple[str, str], ImageResolution] = field(default_factory=dict)
    parents: Mapping[str, str] = field(default_factory=dict)
    images: Mapping[str, Binary] = field(default_factory=dict)
    machine: str = ""
    loader: ImageLoader = ImageLoader.WINDOWS
    reached: bool = True

    def add(self, path: str, parent: str, image: Binary | None, fmt: Format) -> Binary | None:
        """Record that ``parent`` loaded ``path``; the image (when it is of format ``fmt``) joins
        ``objects`` and is returned, to have its own imports loaded (a load being built: its
        containers a list and dicts, not a ``LoadStack``'s views)."""
        objects, parents, images = self.objects, self.parents, self.images
        assert isinstance(objects, list) and isinstance(parents, dict) and isinstance(images, dict)
        parents.setdefault(path, parent)
        if image is None or image.format is not fmt:
            return None
        objects.append(path)
        images[path] = image
        return image

    def record(self, key: tuple[str, str], resolution: ImageResolution) -> None:
        """Record how the import ``key`` (requester, name) resolved (a load being built)."""
        resolutions = self.resolutions
        assert isinstance(resolutions, dict)
        resolutions[key] = resolution

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
    images: Iterable[Binary],
    load: Callable[[Binary, str], ImageLoad],
    roots: Sequence[Binary] | None = None,
    skipped: list[tuple[str, str]] | None = None,
) -> list[ImageLoad]:
    """Every import root loaded, as ELF's (``loader.analysis.analyze``): the ``roots`` chosen
    (``--entry``), by default each Python extension module and executable; then each other shared
    library, extension module or executable no root's load reaches, loaded alone (a ``dlopen``,
    ``LoadLibrary``, an import, a run), its load marked
    ``reached=False`` when there were roots.  Each binary is a root of its own: every slice of a
    universal Mach-O file is loaded (by a Mac of its CPU).  With ``skipped`` given, the loads are
    bounded as ELF's (``ImageBudget``): a root met once they hold more is not loaded but listed
    there with why (path, reason)."""
    inputs = list(images)
    if roots is None:
        roots = [b for b in inputs if b.kind in (Kind.PYTHON_EXTENSION, Kind.EXECUTABLE, Kind.PIE_EXECUTABLE)]
        alone_reached = not roots  # no import root: every library is a root of its own
    else:
        alone_reached = False  # roots were chosen: the rest is reached by none of them
    budget = ImageBudget(inputs) if skipped is not None else None
    loads: list[ImageLoad] = []
    reached: set[str] = set()
    alone = (b for b in inputs if b.kind in ALONE_KINDS)  # no chosen root reaches them: loaded too
    for b, chosen in [*((r, True) for r in roots), *((b, False) for b in alone)]:
        if not chosen and b.path in reached:
            continue
        if budget is not None and budget.exhausted:
            assert skipped is not None
            skipped.append((b.path, budget.reason()))
            reached.add(b.path)  # not loaded alone either
            continue
        done = load(b, root_kind(b))
        if budget is not None:
            budget.spend(done)
        if chosen:
            reached.update(done.objects)
        else:
            done.reached = alone_reached
        loads.append(done)
    return loads


class ImageBudget(LoadBound):
    """What the Windows or dyld loads of one run hold, against ELF's bound (``bounds.LoadBound``): each
    load's images and resolutions, a level of a shared ``LoadStack`` (or a whole load shared by
    several roots) counted once.

    Args:
        binaries: the inputs (their ``file_size``, bytes).
    """

    held = "loaded images"
    growth = "libraries that load one another in a ring cost the square of their number"

    def __init__(self, binaries: Sequence[Binary]) -> None:
        super().__init__(binaries)
        self._seen: set[tuple[int, int]] = set()

    def spend(self, load: ImageLoad) -> None:
        """Count what ``load`` holds that no load counted before: the levels of its stack down to
        one seen already (each level's own part), or its containers once."""
        objects = load.objects
        if isinstance(objects, StackedObjects):
            stack, sizes = objects.stack, objects.stack.sizes
            for level in range(objects.level, -1, -1):
                if (id(stack), level) in self._seen:
                    return
                self._seen.add((id(stack), level))
                below = sizes[level - 1] if level else (0, 0, 0, 0)
                self.spent += sizes[level][0] - below[0] + sizes[level][1] - below[1]
            return
        if (id(objects), -1) not in self._seen:
            self._seen.add((id(objects), -1))
            self.spent += len(objects) + len(load.resolutions)


class LoadStack:
    """Loads stacked on one another: the load at ``level`` is that level's own part (a root, its
    resolutions, the image it loads next) followed by the load at ``level - 1``, down to level 0 (a
    load computed whole).  K DLLs each importing the next are K parts of one image each, not K²/2
    images — as ELF's ``Load.below`` (``loader.closure``; issue 14).  A key (a path, a
    ``(requester, name)``) belongs to one part only, so a load's view answers a lookup in O(1):
    the key's part is at or below the view's level.

    ``names``: each name some part looks up (lower-cased), with the lowest level that does: a root
    may stack on a load only when that load never looks up the root's own name (it would find the
    root already loaded, not search for it)."""

    def __init__(self) -> None:
        self.reversed_objects: list[str] = []  # each part's objects, reversed, level 0 first
        self.sizes: list[tuple[int, int, int, int]] = []  # per level: objects, resolutions, parents, images
        self.keys: list[tuple[list[tuple[str, str]], list[str], list[str]]] = []  # per level, in order
        self.objects: dict[str, int] = {}
        self.resolutions: dict[tuple[str, str], tuple[int, ImageResolution]] = {}
        self.parents: dict[str, tuple[int, str]] = {}
        self.images: dict[str, tuple[int, Binary]] = {}
        self.names: dict[str, int] = {}
        self.level_names: list[list[str]] = []

    @property
    def top(self) -> int:
        """The highest level (-1 when empty)."""
        return len(self.sizes) - 1

    def push(self, part: ImageLoad, names: Iterable[str]) -> int:
        """Stack ``part`` (a load's own objects, resolutions, parents, images, in order) and the names
        it looks up on the top level; its level."""
        level = len(self.sizes)
        below = self.sizes[-1] if self.sizes else (0, 0, 0, 0)
        self.reversed_objects.extend(reversed(part.objects))
        for path in part.objects:
            self.objects[path] = level
        for key, res in part.resolutions.items():
            self.resolutions[key] = (level, res)
        for path, parent in part.parents.items():
            self.parents[path] = (level, parent)
        for path, image in part.images.items():
            self.images[path] = (level, image)
        self.level_names.append(list(names))
        for name in self.level_names[-1]:
            self.names.setdefault(name, level)
        self.keys.append((list(part.resolutions), list(part.parents), list(part.images)))
        own = (len(part.objects), len(part.resolutions), len(part.parents), len(part.images))
        self.sizes.append(tuple(a + b for a, b in zip(below, own, strict=True)))  # type: ignore[arg-type]
        return level

    def copy_to(self, level: int) -> LoadStack:
        """A new stack of this one's levels 0 to ``level`` (to stack a second part on a load that
        already has one above it)."""
        out = LoadStack()
        for lvl in range(level + 1):
            out.push(self.part(lvl), self.level_names[lvl])
        return out

    def part(self, level: int) -> ImageLoad:
        """The own part of ``level``, as an ``ImageLoad`` of plain lists and dicts."""
        res_keys, parent_keys, image_keys = self.keys[level]
        start = self.sizes[level - 1][0] if level else 0
        objects = self.reversed_objects[start : self.sizes[level][0]][::-1]
        return ImageLoad(
            "",
            "",
            objects,
            {k: self.resolutions[k][1] for k in res_keys},
            {k: self.parents[k][1] for k in parent_keys},
            {k: self.images[k][1] for k in image_keys},
        )

    def view(self, root: str, kind: str, level: int, machine: str) -> ImageLoad:
        """The load at ``level``, its containers read-only views of this stack."""
        return ImageLoad(
            root,
            kind,
            StackedObjects(self, level),
            StackedMap(self, self.resolutions, 1, level),
            StackedMap(self, self.parents, 2, level),
            StackedMap(self, self.images, 3, level),
            machine=machine,
        )


def push_part(
    stack: LoadStack, level: int, part: ImageLoad, names: Callable[[ImageLoad], Iterable[str]]
) -> tuple[LoadStack, int]:
    """``part`` (a dylib's or DLL's own part of its load: ``objects`` ending with the one image it
    loads, whose load is ``level`` of ``stack``) stacked on that load, that image left to the level
    below; on a copy of the stack up to ``level`` when another load stacks on it already.  The
    stack and the new level (``names``: what the part looks up, ``LoadStack.push``)."""
    if level != stack.top:  # another load stacks on it already: a stack of its own
        stack = stack.copy_to(level)
    objects, images = list(part.objects[:-1]), dict(part.images)
    images.popitem()
    own = ImageLoad(part.root, "", objects, part.resolutions, part.parents, images)
    return stack, stack.push(own, names(own))


class StackedObjects(Sequence[str]):
    """The objects of the load at ``level`` of a ``LoadStack``, in load order (read-only)."""

    __slots__ = ("level", "stack")

    def __init__(self, stack: LoadStack, level: int) -> None:
        self.stack, self.level = stack, level

    def __len__(self) -> int:
        return self.stack.sizes[self.level][0]

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return list(self)[i]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        return self.stack.reversed_objects[n - 1 - (i % n)]

    def __iter__(self) -> Iterator[str]:
        objects = self.stack.reversed_objects
        return (objects[j] for j in range(len(self) - 1, -1, -1))

    def __contains__(self, path: object) -> bool:
        at = self.stack.objects.get(path) if isinstance(path, str) else None
        return at is not None and at <= self.level

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(list(self))


class StackedMap(Mapping[_K, _V]):
    """One of the dicts (resolutions, parents, images) of the load at ``level`` of a ``LoadStack``,
    in the order the whole load would have filled it (read-only)."""

    __slots__ = ("entries", "field", "level", "stack")

    def __init__(self, stack: LoadStack, entries: dict[_K, tuple[int, _V]], field: int, level: int) -> None:
        self.stack, self.entries, self.field, self.level = stack, entries, field, level

    def __getitem__(self, key: _K) -> _V:
        at, value = self.entries[key]
        if at > self.level:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[_K]:
        for lvl in range(self.level, -1, -1):
            yield from self.stack.keys[lvl][self.field - 1]  # type: ignore[misc]

    def __len__(self) -> int:
        return self.stack.sizes[self.level][self.field]

    def __repr__(self) -> str:
        return repr(dict(self.items()))


def iter_resolutions(loads: Iterable[ImageLoad]) -> Iterator[tuple[ImageLoad, tuple[str, str], ImageResolution]]:
    """Every ``(load, (requester, name), resolution)`` of ``loads``, a ``LoadStack`` level that several
    loads share given once (with the first load that holds it): what a part says does not depend on
    the load above it.  K loads of a chain of K DLLs: K resolutions, not K²/2."""
    seen: set[tuple[int, int]] = set()
    for load in loads:
        resolutions = load.resolutions
        if not isinstance(resolutions, StackedMap):
            for key, res in resolutions.items():
                yield load, key, res
            continue
        stack = resolutions.stack
        for level in range(resolutions.level, -1, -1):
            if (id(stack), level) in seen:
                break  # and every level below it: seen when it was
            seen.add((id(stack), level))
            for key in stack.keys[level][0]:
                yield load, key, stack.resolutions[key][1]


def iter_resolution_holders(
    loads: Sequence[ImageLoad], wanted: Callable[[tuple[str, str], ImageResolution], bool], shown: int
) -> Iterator[tuple[tuple[str, str], ImageResolution, list[ImageLoad], int]]:
    """Each ``(requester, name)`` resolution of ``loads`` that ``wanted`` accepts, once, in the
    order ``iter_resolutions`` meets it: with the first ``shown`` loads holding it, in load order,
    and how many do.  A key at level L of a ``LoadStack`` is held by every load viewing that stack
    at level L or above: counted by bisection, the first ones taken in one pass over the loads
    (O(loads + keys x shown)).  K loads of a chain of K DLLs with a missing DLL at the bottom:
    K loads counted, ``shown`` listed, not K loads each listed with its chain (K²/2 names)."""
    from bisect import bisect_left

    index = {id(load): i for i, load in enumerate(loads)}
    found: dict[tuple[str, str], tuple[ImageResolution, list[tuple[int | None, int]]]] = {}  # key -> res, homes
    for load, key, res in iter_resolutions(loads):
        if not wanted(key, res):
            continue
        homes = found.setdefault(key, (res, []))[1]  # the first load's resolution speaks for the key
        resolutions = load.resolutions
        if isinstance(resolutions, StackedMap):  # (id(stack), its level) or (None, the load's position)
            homes.append((id(resolutions.stack), resolutions.entries[key][0]))
        else:
            homes.append((None, index[id(load)]))
    if not found:
        return
    stacks: dict[int, list[tuple[int, int]]] = {}  # id(stack) -> (position, level) of each load viewing it
    for i, load in enumerate(loads):
        if isinstance(load.resolutions, StackedMap):
            stacks.setdefault(id(load.resolutions.stack), []).append((i, load.resolutions.level))
    wanted_at: dict[int, list[int]] = {}
    for _res, homes in found.values():
        for stack, at in homes:
            if stack is not None:
                wanted_at.setdefault(stack, []).append(at)
    first = {s: _first_at_or_above([lvl for _i, lvl in stacks[s]], at, shown) for s, at in wanted_at.items()}
    ordered = {s: sorted(lvl for _i, lvl in stacks[s]) for s in wanted_at}
    for key, (res, homes) in found.items():
        positions: set[int] = set()
        count = 0
        for stack, at in homes:
            if stack is None:
                positions.add(at)
                count += 1
            else:
                positions.update(stacks[stack][j][0] for j in first[stack][at])
                count += len(ordered[stack]) - bisect_left(ordered[stack], at)
        yield key, res, [loads[i] for i in sorted(positions)[:shown]], count


def _first_at_or_above(levels: Sequence[int], wanted: Iterable[int], shown: int) -> dict[int, list[int]]:
    """Each level of ``wanted`` -> the positions in ``levels`` of the first ``shown`` entries at or
    above it.  One pass: the levels still short of ``shown`` are kept smallest last, so an entry
    meets only those it joins (O(len(levels) + len(wanted) x shown))."""
    out: dict[int, list[int]] = {level: [] for level in wanted}
    pending = sorted(out, reverse=True)
    for position, level in enumerate(levels):
        if not pending:
            break
        kept: list[int] = []
        while pending and pending[-1] <= level:
            lowest = pending.pop()
            out[lowest].append(position)
            if len(out[lowest]) < shown:
                kept.append(lowest)
        pending.extend(reversed(kept))
    return out
