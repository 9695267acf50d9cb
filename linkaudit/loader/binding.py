"""Symbol binding: which object each undefined symbol binds to, as glibc's ``elf/dl-lookup.c`` does.

An undefined symbol is searched scope by scope, object by object (``do_lookup_x``);
the first object with an acceptable definition wins.  ``check_match`` decides
acceptability:

* a *versioned* reference (``name@VER``) matches a definition carrying the same
  version name — hidden or not; the verneed's ``vn_file`` plays no part — and an
  object without symbol versioning (no ``.gnu.version``) satisfies it by name;
* an *unversioned* reference matches a definition whose version index is 0, 1 or 2
  (unversioned, the base definition, or the first one), or, failing that, the only
  non-hidden versioned definition in that object;
* only GLOBAL, WEAK and GNU_UNIQUE definitions of type NOTYPE, OBJECT, FUNC, COMMON,
  TLS or IFUNC with a non-zero value (TLS excepted) count (``SymbolTable.definitions``).

A library of the target system known by name only (``loader.modelled``: another
machine's ``libc.so.6`` under a platform policy) has unknown definitions: a reference
no real object in scope defines binds to the modelled library its version need names
(``vn_file``), or, unversioned, to the first modelled library in scope.

A weak undefined reference may stay unbound.  Under ``RTLD_NOW`` — every Python
import — all references are bound at load time; for an executable bound lazily an
unbound function reference fails only when called, which the finding says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..model import Binary, Definition, Symbol, SymbolTable
from ..records import dataclass
from . import bindcache
from .bindcache import BlobStore
from .modelled import is_modelled
from .symbol_lookup import candidates, definitions_of_name, hash_keys

#: Prefixes of the C API a CPython interpreter exports to extension modules.
INTERPRETER_PREFIXES = ("Py", "_Py")


@dataclass(frozen=True, slots=True)
class Bound:
    """One undefined symbol of one object and where it binds.

    Attributes:
        symbol: the reference (name, version, binding).
        provider: path of the object it binds to, ``"<python interpreter>"`` for the
            interpreter's C API, or ``None`` when it binds nowhere.
    """

    symbol: Symbol
    provider: str | None


def provider_view(
    provider: Binary, wanted: Mapping[int, Sequence[str]], keys: frozenset[int]
) -> dict[str, tuple[Definition, ...]]:
    """``provider``'s definitions of the wanted names only, found through its ELF hash table.

    ``wanted`` maps a ``hash_key`` to the consumer's undefined names with that key (``keys``: its
    keys as one set).  With ``DT_GNU_HASH`` only the names whose key the provider stores (one
    C-speed set intersection) are looked up; with ``DT_HASH`` every wanted name walks its chain.  Each lookup is memoised
    per (provider, name) (``symbol_lookup.definitions_of_name``); no other name is decoded.
    """
    table = provider.symbols
    ht = table.hash_table
    assert ht is not None
    view: dict[str, tuple[Definition, ...]] = {}
    for key in candidates(table, keys) if ht.gnu else keys:
        for name in wanted[key]:
            found = definitions_of_name(table, name)
            if found:
                view[name] = found
    return view


def matches(ref: Symbol, provider: Binary, definitions: tuple[Definition, ...]) -> bool:
    """``check_match`` for one object: can ``ref`` bind to one of ``definitions`` of ``provider``?"""
    if not provider.symbols.versym:
        return True  # no symbol versioning: any definition by name satisfies the reference
    version = ref.version
    if version is not None:
        return any(d.version == version.name for d in definitions)
    visible = 0
    for d in definitions:
        if d.version_index < 3:
            return True
        if not d.hidden:
            visible += 1
    return visible == 1


def bind_object(
    binary: Binary,
    scope: Sequence[str],
    objects: Mapping[str, Binary],
    interpreter: str | None,
    definitions_of: Callable[[Binary], Mapping[str, tuple[Definition, ...]]] | None = None,
    cache: dict[tuple[str, int, tuple[str, ...]], list[Bound]] | None = None,
    path: str = "",
    match: Callable[[Symbol, Binary, tuple[Definition, ...]], bool] = matches,
    store: BlobStore | None = None,
) -> list[Bound]:
    """Bind every undefined symbol of ``binary`` in ``scope``.

    Args:
        binary: the object whose references are bound.
        scope: paths in lookup order.
        objects: path -> ``Binary`` for every path in ``scope`` (the virtual
            interpreter excepted).
        interpreter: the scope entry that stands for a generic CPython interpreter
            (it provides every ``Py*``/``_Py*`` symbol), or ``None``.
        definitions_of: returns the definitions map of a binary (default:
            ``binary.symbols.definitions()``, cached per table).
        cache: results shared between loads: only the objects in ``scope`` that define
            at least one referenced name can change the result, so two loads whose
            scopes agree on those objects (in order) bind ``binary`` the same way.
        path: the path ``binary`` was loaded from (part of the cache key).
        match: whether a reference binds to an object's definitions of its name (default
            glibc's ``matches``; musl's is ``loader.musl.musl_matches``).  The cache must not be
            shared between two matchers.
        store: where bindings are kept across runs (``loader.bindcache``: an object with
            ``bindcache.MIN_REFERENCES`` references or more, every record in scope named by its
            identity), or ``None``.

    Returns:
        One ``Bound`` per undefined symbol, in symbol-table order.
    """
    undefined = binary.symbols.undefined()
    if not undefined:
        return []  # nothing to bind: the scope need not be walked
    name = None
    if store is not None and definitions_of is None and len(undefined) >= bindcache.MIN_REFERENCES:
        name = bindcache.key(binary, scope, objects, interpreter, f"{match.__module__}.{match.__qualname__}")
    if name is not None:
        assert store is not None
        refs = [ref for ref in undefined if ref.name]
        where = bindcache.load(store, name, len(refs), len(scope))
        if where is not None:
            return [Bound(ref, scope[k] if k >= 0 else None) for ref, k in zip(refs, where, strict=True)]
    out = _bind(binary, undefined, scope, objects, interpreter, definitions_of, cache, path, match)
    if name is not None:
        assert store is not None
        position: dict[str | None, int] = {None: -1}
        for k, entry in enumerate(scope):
            position.setdefault(entry, k)
        positions = [position.get(b.provider, -2) for b in out]
        if -2 not in positions:
            bindcache.save(store, name, positions)
    return out


def _bind(
    binary: Binary,
    undefined: Sequence[Symbol],
    scope: Sequence[str],
    objects: Mapping[str, Binary],
    interpreter: str | None,
    definitions_of: Callable[[Binary], Mapping[str, tuple[Definition, ...]]] | None,
    cache: dict[tuple[str, int, tuple[str, ...]], list[Bound]] | None,
    path: str,
    match: Callable[[Symbol, Binary, tuple[Definition, ...]], bool],
) -> list[Bound]:
    """``bind_object``'s work: its arguments, ``undefined`` the object's undefined symbols."""
    by_key = _wanted(binary.symbols, undefined)
    wanted = {name for names in by_key.values() for name in names}
    providers, modelled = _providers(by_key, wanted, scope, objects, interpreter, definitions_of)
    key = (path, id(binary.symbols), tuple(p for p, _b, _d in providers) + tuple(modelled.values()))
    if cache is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    owners = _owners(providers, wanted)
    interpreter_at = next((k for k, (_e, p, _d) in enumerate(providers) if p is None), None)
    out: list[Bound] = []
    for ref in undefined:
        name = ref.name
        if not name:
            continue
        where: str | None = None
        ks = owners.get(name, ())
        if interpreter_at is not None and name.startswith(INTERPRETER_PREFIXES):
            ks = sorted((*ks, interpreter_at))
        for k in ks:
            WORK["probes"] += 1
            entry, provider, defs = providers[k]
            if provider is None or match(ref, provider, defs[name]):
                where = entry
                break
        if where is None and modelled:
            # versioned: only the library its version need names can define it
            first = next(iter(modelled.values()))
            where = modelled.get(ref.version.file or "") if ref.version is not None else first
        out.append(Bound(ref, where))
    if cache is not None:
        cache[key] = out
    return out


Provider = tuple[str, "Binary | None", Mapping[str, tuple[Definition, ...]]]


def _providers(
    by_key: Mapping[int, list[str]],
    wanted: set[str],
    scope: Sequence[str],
    objects: Mapping[str, Binary],
    interpreter: str | None,
    definitions_of: Callable[[Binary], Mapping[str, tuple[Definition, ...]]] | None,
) -> tuple[list[Provider], dict[str, str]]:
    """The scope's objects that define a wanted name, in scope order, as (path, object or None for
    the interpreter's entry, name -> definitions); and the modelled libraries in scope (file name ->
    path, first kept), which stand in for every name."""
    get_defs = definitions_of or (lambda b: b.symbols.definitions())
    keys = frozenset(by_key)
    wants_interpreter = any(name.startswith(INTERPRETER_PREFIXES) for name in wanted)
    providers: list[Provider] = []
    modelled: dict[str, str] = {}
    for entry in scope:
        if entry == interpreter:
            if wants_interpreter:
                providers.append((entry, None, {}))
            continue
        provider = objects.get(entry)
        if provider is None:
            continue
        if is_modelled(entry):
            modelled.setdefault(provider.soname or entry, entry)
            continue
        if definitions_of is None and provider.symbols.hash_table is not None:
            defs: Mapping[str, tuple[Definition, ...]] = provider_view(provider, by_key, keys)
        else:
            defs = get_defs(provider)
        if not defs.keys().isdisjoint(wanted):  # only objects defining a referenced name can matter
            providers.append((entry, provider, defs))
    return providers, modelled


#: Counts for the counting tests: ``probes``, the (reference, object) pairs ``check_match`` was
#: asked about (only objects defining the name are: never every object of the scope per reference).
WORK = {"probes": 0}


def _owners(
    providers: Sequence[tuple[str, Binary | None, Mapping[str, tuple[Definition, ...]]]], wanted: set[str]
) -> dict[str, list[int]]:
    """Referenced name -> the positions in ``providers`` (scope order) of the objects defining it: one
    pass over what each object defines of the wanted names (C-speed set intersections), instead of
    asking every object of the scope about every reference."""
    owners: dict[str, list[int]] = {}
    for k, (_entry, provider, defs) in enumerate(providers):
        if provider is not None:
            for name in defs.keys() & wanted:
                owners.setdefault(name, []).append(k)
    return owners


def _wanted(table: SymbolTable, undefined: Sequence[Symbol]) -> dict[int, list[str]]:
    """``hash_key`` -> the distinct undefined names of ``table`` with that key (each hashed once per run)."""
    memo = table.memo("wanted")
    found: dict[int, list[str]] | None = memo.get(0)
    if found is None:
        found = memo[0] = {}
        names = list(dict.fromkeys(ref.name for ref in undefined if ref.name))
        for name, key in zip(names, hash_keys(names), strict=True):
            found.setdefault(key, []).append(name)
    return found
