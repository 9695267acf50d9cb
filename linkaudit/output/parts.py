"""Loads that share parts, drawn once per picture (``tree``, ``why --format dot|mermaid``, the HTML report).

The loads of libraries dlopened alone share their tails (``loader.closure.Load.below``): in a
directory where lib0 needs lib1 needs ... lib999, the load of lib0 is lib0 on top of the load of
lib1, and so on.  Drawing every load in full draws lib999 a thousand times (a picture quadratic in
the libraries).  A picture keeps one ``Drawn``: each load shows its own top part and every part not
drawn yet; at the first part some earlier load of the picture drew (everything below it was drawn
with it), it stops and names the root under which it was drawn.  A part loads the same in every
load holding it (``closure.alone_load`` composes loads only then), so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..loader.closure import Load, LoadedObject
from ..loader.ldso import Resolution


@dataclass(frozen=True, slots=True)
class View:
    """What a picture draws of one load.

    Attributes:
        objects: the objects of the parts drawn here, in load order (as this load sees them).
        index: path -> the first of ``objects`` at that path.
        resolutions: (requester path, DT_NEEDED) -> ``Resolution`` of those parts.
        cut: the first part drawn already under another root (it and every part below it), or ``None``.
        cut_object: the root object of ``cut`` as this load sees it (``None`` without ``cut``).
        shown_in: the root under which ``cut`` was drawn (``None`` without ``cut``).
    """

    objects: list[LoadedObject]
    index: dict[str, LoadedObject]
    resolutions: dict[tuple[str, str], Resolution]
    cut: Load | None = None
    cut_object: LoadedObject | None = None
    shown_in: str | None = None


class Drawn:
    """The parts of the loads one picture has drawn, each with the root under which it was drawn."""

    def __init__(self, share: bool = True) -> None:
        self.share = share
        self.by_part: dict[int, str] = {}
        self._memo: dict[tuple[str, int], bool] = {}

    def view(self, load: Load) -> View:
        """The parts of ``load`` to draw (its top part always), recorded as drawn under its root: O(what
        is drawn), however many parts lie below the first one drawn already."""
        objects: list[LoadedObject] = []
        resolutions: dict[tuple[str, str], Resolution] = {}
        above: Load | None = None
        cut = cut_object = None
        for part, hops in load.iter_parts():
            leaf = part.below is None and not part.own_resolutions()  # needs nothing: nothing to point back to
            if hops and self.share and id(part) in self.by_part and not leaf:
                cut, cut_object = part, next(part.own_objects(hops, above))
                break
            objects.extend(part.own_objects(hops, above))
            resolutions.update(part.own_resolutions())
            above = part
        for part, _hops in load.iter_parts():
            if part is cut:
                break
            self.by_part.setdefault(id(part), load.root)
        index: dict[str, LoadedObject] = {}
        for o in objects:
            index.setdefault(o.path, o)
        shown_in = self.by_part[id(cut)] if cut is not None else None
        return View(objects, index, resolutions, cut, cut_object, shown_in)

    def below_any(self, part: Load, what: str, test: Callable[[Load], bool]) -> bool:
        """True when ``test`` holds for ``part`` or a part below it; ``what`` names the test (memoised
        per part: a chain of parts is tested once per picture, not once per load holding it)."""
        todo: list[Load] = []
        node: Load | None = part
        while node is not None and (what, id(node)) not in self._memo:
            todo.append(node)
            node = node.below
        found = self._memo[(what, id(node))] if node is not None else False
        for p in reversed(todo):
            found = found or test(p)
            self._memo[(what, id(p))] = found
        return found
