"""Binding the root of a shared dlopen load part by part, never walking its whole scope.

A library dlopened alone whose load is built on its dependency's (``closure.alone_load``,
``Load.below``) looks its symbols up in its own object, then in the scope of the load below it:
the load's ``local_scope`` is every part's own entries, top first (``Load.scope_for``; such a
load has no global scope and no interpreter).  ``binding.bind_object`` walks that whole scope
for every root, so a chain of n libraries that each reference a symbol cost n(n+1)/2 lookups
and as many memoised answers (4,000 libraries: 8 million, 54 s and 323 MB).

``PartIndex`` looks each name the roots reference up once in each part's own objects (which
parts define it, and their definitions), then answers a root's reference from the parts that
define the name, top first: the first definition ``match`` accepts wins, as in ``_bind``, and
a reference no real object binds falls back to the modelled libraries of the scope, the first
per name kept (``loader.modelled``), as in ``_bind``.  The answer is ``bind_object``'s for the
same scope (``tests/loader/test_scale.py`` compares them on random trees of shared loads).

Nothing here is stored across runs (``loader.bindcache`` keys a binding by its whole scope).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from ..model import Binary, Definition, Symbol
from .binding import Bound, matches, provider_view
from .closure import Load, RootKind
from .modelled import is_modelled
from .symbol_lookup import definitions_of_name, hash_keys

#: A name defined in at most ``SCAN_PARTS`` parts is found in a load by asking each of those parts
#: whether the load holds it (``Load.holds_part``: O(log parts)); a name defined in more, by walking
#: the load's parts from the top, each answer kept per (part, name), so that every load standing on
#: a part walked once reads the answer there.
SCAN_PARTS = 32

#: Counts for the counting tests: ``indexed``, the objects whose definitions of the wanted names
#: were looked up (each object of each part once); ``walked``, the parts stepped through by the
#: walks; ``probes``, the (reference, definition) pairs ``match`` was asked about.
WORK = {"indexed": 0, "walked": 0, "probes": 0}

#: An own scope entry defining a wanted name: (path, object, its definitions of that name).
Entry = tuple[str, Binary, tuple[Definition, ...]]


def binds_in_parts(load: Load, bind_all: bool) -> bool:
    """True when the root of ``load`` is bound by ``PartIndex``: a plain dlopen standing for its
    own object only (not ``bind_all``), whose load is built on a shared part (``Load.below``),
    with no global scope and no interpreter (``Load.on_top`` makes such loads)."""
    return (
        load.kind is RootKind.DLOPEN
        and not bind_all
        and load.below is not None
        and not load.global_scope
        and not load.interpreter_virtual
    )


class PartIndex:
    """Which parts of ``loads`` define each name in ``wanted``, in their own scope order.

    Args:
        loads: the loads whose roots are bound here; each part is indexed once, however many
            loads hold it.
        wanted: every name those roots reference.
    """

    def __init__(self, loads: Iterable[Load], wanted: set[str]) -> None:
        self._defining: dict[str, dict[Load, list[Entry]]] = {}
        self._modelled: dict[Load, list[tuple[str, str]]] = {}
        self._first: dict[tuple[int, str | None], Load | None] = {}
        by_key: dict[int, list[str]] = {}
        for name, key in zip(names := sorted(wanted), hash_keys(names), strict=True):
            by_key.setdefault(key, []).append(name)
        keys = frozenset(by_key)
        seen: set[int] = set()
        self._tops: set[int] = set()
        for load in loads:
            self._tops.add(id(load))
            for part, _hops in load.iter_parts():
                if id(part) in seen:
                    break  # this part and every part below it were indexed with an earlier load
                seen.add(id(part))
                self._index_part(part, wanted, by_key, keys)

    def covers(self, load: Load) -> bool:
        """True when ``load`` is one of the loads this index was made for (its root may be bound here)."""
        return id(load) in self._tops

    def _index_part(self, part: Load, wanted: set[str], by_key: Mapping[int, list[str]], keys: frozenset[int]) -> None:
        """Note what each own scope entry of ``part`` defines of ``wanted``, and its modelled libraries."""
        for entry in part.own_scope():
            obj = part.own_object(entry)
            if obj is None:
                continue
            if is_modelled(entry):
                self._modelled.setdefault(part, []).append((obj.binary.soname or entry, entry))
                continue
            WORK["indexed"] += 1
            for name, defs in _defined(obj.binary, wanted, by_key, keys).items():
                self._defining.setdefault(name, {}).setdefault(part, []).append((entry, obj.binary, defs))

    def bind_root(
        self, load: Load, binary: Binary, match: Callable[[Symbol, Binary, tuple[Definition, ...]], bool] = matches
    ) -> list[Bound]:
        """``bind_object(binary, load.scope_for(load.root), ...)`` for the root ``binary`` of
        ``load`` (``binds_in_parts``): one ``Bound`` per named undefined symbol, in table order."""
        out: list[Bound] = []
        modelled: dict[str, str] | None = None
        for ref in binary.symbols.undefined():
            if not ref.name:
                continue
            where = self._find(load, ref, match)
            if where is None and self._modelled:
                if modelled is None:
                    modelled = self._modelled_in(load)
                if modelled:
                    # versioned: only the library its version need names can define it
                    first = next(iter(modelled.values()))
                    where = modelled.get(ref.version.file or "") if ref.version is not None else first
            out.append(Bound(ref, where))
        return out

    def _find(
        self, load: Load, ref: Symbol, match: Callable[[Symbol, Binary, tuple[Definition, ...]], bool]
    ) -> str | None:
        """The first entry of ``load``'s scope whose definitions of ``ref``'s name ``match`` accepts."""
        defining = self._defining.get(ref.name)
        if not defining:
            return None
        for part in self._parts(load, ref.name, defining):
            for entry, provider, defs in defining[part]:
                WORK["probes"] += 1
                if match(ref, provider, defs):
                    return entry
        return None

    def _modelled_in(self, load: Load) -> dict[str, str]:
        """The modelled libraries of ``load``'s scope: SONAME (or path) -> path, the first kept."""
        out: dict[str, str] = {}
        for part in self._parts(load, None, self._modelled):
            for name, entry in self._modelled[part]:
                out.setdefault(name, entry)
        return out

    def _parts(self, load: Load, key: str | None, having: Mapping[Load, object]) -> Iterator[Load]:
        """The parts of ``load`` among ``having`` (the parts with an entry for ``key``), top first."""
        if len(having) <= SCAN_PARTS:
            yield from sorted((p for p in having if load.holds_part(p)), key=lambda p: -p.height)
            return
        part: Load | None = load
        while part is not None:
            part = self._first_having(part, key, having)
            if part is None:
                return
            yield part
            part = part.below

    def _first_having(self, part: Load, key: str | None, having: Mapping[Load, object]) -> Load | None:
        """The first of ``part`` and the parts below it among ``having``, or ``None``; every part
        stepped through keeps the answer (``_first``)."""
        stepped: list[Load] = []
        node: Load | None = part
        found: Load | None = None
        while node is not None:
            memo = (id(node), key)
            if memo in self._first:
                found = self._first[memo]
                break
            if node in having:
                found = node
                break
            WORK["walked"] += 1
            stepped.append(node)
            node = node.below
        for node in stepped:
            self._first[(id(node), key)] = found
        return found


def _defined(
    binary: Binary, wanted: set[str], by_key: Mapping[int, Sequence[str]], keys: frozenset[int]
) -> dict[str, tuple[Definition, ...]]:
    """``binary``'s definitions of the ``wanted`` names, as ``binding._providers`` finds them: through
    its ``DT_GNU_HASH`` table (``provider_view``), through its ``DT_HASH`` chains for the names its
    bulk map holds (a name a chain finds is in that map: no chain is walked for the others), or from
    its bulk map without a hash table."""
    table = binary.symbols
    ht = table.hash_table
    if ht is not None and ht.gnu:
        return provider_view(binary, by_key, keys)
    defs = table.definitions()
    if ht is None:
        return {name: defs[name] for name in defs.keys() & wanted}
    out: dict[str, tuple[Definition, ...]] = {}
    for name in defs.keys() & wanted:
        found = definitions_of_name(table, name)
        if found:
            out[name] = found
    return out
