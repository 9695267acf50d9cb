"""Bindings kept across runs (``loader.bindcache``): a stored answer equals the computed one, is
used only for the same references against the same records in the same scope, and is validated
like any input (a corrupt or foreign entry is a miss, computed again and rewritten).  Counted,
not timed: how many objects were bound by walking the scope."""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from linkaudit import cache
from linkaudit.audit import read
from linkaudit.loader import bindcache, binding, musl, symbol_lookup
from linkaudit.model import Binary, SymbolTable

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_bins"
#: Sample directories whose objects bind to each other (unresolved, versioned and interposed names).
DIRS = ("loader/versions", "loader/unresolved", "loader/soname_reuse", "loader/pyext", "misc")


class Blobs:
    """An in-memory ``BlobStore`` that counts what it is asked."""

    def __init__(self) -> None:
        self.data: dict[str, bytes] = {}
        self.gets = self.puts = 0

    def get_blob(self, name: str) -> bytes | None:
        self.gets += 1
        return self.data.get(name)

    def put_blob(self, name: str, data: bytes) -> None:
        self.puts += 1
        self.data[name] = data


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every object stored from now on (``MIN_REFERENCES`` 1); the paths ``_bind`` walked a scope for."""
    monkeypatch.setattr(bindcache, "MIN_REFERENCES", 1)
    seen: list[str] = []
    real = binding._bind

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(args[0].path)
        return real(*args, **kwargs)

    monkeypatch.setattr(binding, "_bind", counted)
    return seen


def _objects(folder: Path, identify: bool = True) -> dict[str, Binary]:
    out: dict[str, Binary] = {}
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.read_bytes()[:4] == b"\x7fELF":
            for k, b in enumerate(read(str(p))):
                if b.kind.value != "object":
                    if identify:
                        b.symbols.set_identity(f"test.{p.relative_to(folder)}.{k}")
                    else:  # as a record read with the cache off and not a small file
                        b.symbols._memo.pop("identity", None)
                    out[str(p)] = b
    return out


def _bind_each(objects: dict[str, Binary], store: Blobs | None) -> dict[str, list[binding.Bound]]:
    scope = sorted(objects)
    return {p: binding.bind_object(b, scope, objects, None, path=p, store=store) for p, b in objects.items()}


@pytest.mark.parametrize("folder", DIRS)
def test_a_stored_binding_equals_the_computed_one(folder: str, walks: list[str]) -> None:
    objects = _objects(SAMPLES / folder)
    plain = _bind_each(objects, None)
    store = Blobs()
    walks.clear()
    first = _bind_each(objects, store)
    bound = [p for p, b in objects.items() if b.symbols.undefined()]
    assert bound and sorted(walks) == sorted(bound) and store.puts == len(bound)
    walks.clear()
    second = _bind_each(objects, store)
    assert walks == [] and store.puts == len(bound)  # every object answered from the store
    assert plain == first == second


def test_no_identity_no_store(walks: list[str]) -> None:
    """A record with no identity (the cache off, a record made in memory) is never keyed: bound
    every time, nothing stored."""
    objects = _objects(SAMPLES / "loader/versions", identify=False)
    store = Blobs()
    _bind_each(objects, store)
    _bind_each(objects, store)
    assert store.gets == store.puts == 0 and walks


def test_the_key_names_every_input_of_the_binding() -> None:
    objects = _objects(SAMPLES / "loader/versions")
    scope = sorted(objects)
    consumer = objects[scope[0]]
    name = f"{binding.matches.__module__}.{binding.matches.__qualname__}"
    base = bindcache.key(consumer, scope, objects, None, name)
    assert base is not None and base == bindcache.key(consumer, list(scope), dict(objects), None, name)
    other = [
        bindcache.key(consumer, scope[::-1], objects, None, name),  # the order of the scope
        bindcache.key(consumer, [*scope, "/elsewhere/libx.so"], objects, None, name),  # an entry more
        bindcache.key(consumer, scope, objects, scope[-1], name),  # the interpreter's place
        bindcache.key(consumer, scope, objects, None, "linkaudit.loader.musl.musl_matches"),  # musl
    ]
    moved = {p.replace("/versions/", "/moved/"): b for p, b in objects.items()}
    other.append(bindcache.key(consumer, sorted(moved), moved, None, name))  # the same records elsewhere
    objects[scope[-1]].symbols.set_identity("test.changed")  # one provider's content
    other.append(bindcache.key(consumer, scope, objects, None, name))
    assert base not in other and len(set(other)) == len(other)


def _rebind_one(data: bytes) -> bytes:
    """The last reference's position changed and still in range (bound: to none; unbound: to the
    scope's first entry), so only the checksum can tell: one flipped bit of a stored entry bound
    a reference elsewhere, silently (the hostile tester's bind_minimal.py)."""
    last = int.from_bytes(data[-4:], "little", signed=True)
    return data[:-4] + (-1 if last >= 0 else 0).to_bytes(4, "little", signed=True)


@pytest.mark.parametrize(
    "spoil",
    [
        _rebind_one,
        lambda data: data[:-1] + bytes([data[-1] ^ 0x80]),  # one bit of the last position
        lambda data: b"",
        lambda data: data[:-4],  # a reference short
        lambda data: data + b"\0\0\0\0",  # one more
        lambda data: b"XXXXXXXX" + data[8:],  # foreign magic
        lambda data: data[:8] + bytes(32) + data[40:],  # answers another key
        lambda data: data[:-4] + (1 << 20).to_bytes(4, "little"),  # a provider beyond the scope
        lambda data: data[:-4] + (-7).to_bytes(4, "little", signed=True),
    ],
)
def test_a_spoilt_entry_is_a_miss_and_rewritten(spoil: Callable[[bytes], bytes], walks: list[str]) -> None:
    objects = _objects(SAMPLES / "loader/versions")
    store = Blobs()
    plain = _bind_each(objects, store)
    for name in list(store.data):
        store.data[name] = spoil(store.data[name])
    walks.clear()
    assert _bind_each(objects, store) == plain
    assert sorted(walks) == sorted(p for p, b in objects.items() if b.symbols.undefined())
    walks.clear()
    assert _bind_each(objects, store) == plain and walks == []  # rewritten whole


def test_checks_with_the_cache_report_as_without(run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """``check`` cold, warm (bindings stored) and warm again (bindings read): one report, that of
    ``--no-cache``; and a provider changed between runs is bound anew (its symbol now missing)."""
    monkeypatch.setattr(bindcache, "MIN_REFERENCES", 1)
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "c"))
    work = tmp_path / "lib"
    shutil.copytree(SAMPLES / "loader/versions", work)

    def report(*flags: str) -> dict:  # type: ignore[type-arg]
        out = json.loads(run_cli(*flags, "check", "--no-config", "--format", "json", str(work)).stdout)
        out["summary"].pop("seconds", None)
        return out  # type: ignore[no-any-return]

    plain = report("--no-cache")
    assert [report() for _ in range(3)] == [plain] * 3
    assert any(p.read_bytes()[:8] == bindcache._MAGIC for p in (tmp_path / "c").rglob("*.bin"))
    # the provider replaced by one that defines nothing the others need: bound anew, not read back
    shutil.copyfile(work / "old/libprov.so", work / "new/libprov.so")
    assert report() == report("--no-cache") != plain


def test_torch_lib_bound_once_then_read(  # type: ignore[no-untyped-def]
    torch_lib: Path, run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, walks: list[str]
) -> None:
    """torch/lib: after one warm run, no object with ``MIN_REFERENCES`` references walks a scope."""
    monkeypatch.setattr(bindcache, "MIN_REFERENCES", 500)
    monkeypatch.setenv("LINKAUDIT_CACHE_DIR", str(tmp_path / "c"))
    reports = []
    for _ in range(3):
        walks.clear()
        out = json.loads(run_cli("check", "--no-config", "--format", "json", str(torch_lib)).stdout)
        out["summary"].pop("seconds", None)
        reports.append(out)
    big = [w for w in walks if len(read(w)[0].symbols.undefined()) >= 500]
    assert big == [] and walks  # the small ones are bound every run
    assert reports[0]["summary"]["audited"] >= 12 and not reports[0]["summary"]["unreadable"]
    assert reports[0] == reports[1] == reports[2]


#: What decides a binding: when this digest changes, ``bindcache.BIND_VERSION`` must be raised
#: (and the digest here with it), or a stored binding from before would be read as current.
DECIDERS = (
    binding._bind, binding._providers, binding._owners, binding._wanted, binding.provider_view, binding.matches,
    musl.musl_matches, symbol_lookup.definitions_of_name, symbol_lookup.candidates,
    symbol_lookup._gnu_chain, symbol_lookup._sysv_chain, SymbolTable.definitions_at, SymbolTable.definitions,
)  # fmt: skip
DIGEST = (4, "7654280accef2e6ce464e63871d564d5ac487db2e1aa29395eb5e47003ab6031")


def _code_digest() -> str:
    """SHA-256 of the deciding functions' code, docstrings and comments aside."""
    parts = []
    for fn in DECIDERS:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            first = body[0] if isinstance(body, list) and body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined,index]
        parts.append(ast.dump(tree))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def test_bind_version_follows_the_code() -> None:
    assert (bindcache.BIND_VERSION, _code_digest()) == DIGEST, (
        "the code that decides a binding changed: raise bindcache.BIND_VERSION and set DIGEST to "
        f"({bindcache.BIND_VERSION + 1}, {_code_digest()!r})"
    )


def test_the_cache_names_records_it_reads_and_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record written to the cache and the same record read back carry one identity; a small
    file (never cached) is named by its content."""
    monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 0)
    store = cache.configure(True, str(tmp_path / "c"))
    assert store is not None
    lib = tmp_path / "libv.so"
    shutil.copyfile(SAMPLES / "loader/versions/new/libprov.so", lib)
    monkeypatch.setattr(cache, "GRANULARITY_NS", 0)  # the new file's stamp trusted: no racy refresh
    try:
        cold = read(str(lib))[0].symbols.identity()
        warm = read(str(lib))[0].symbols.identity()
        assert cold is not None and cold == warm
        small = tmp_path / "small"
        small.mkdir()
        monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 64 << 10)
        shutil.copyfile(lib, small / lib.name)
        assert read(str(small / lib.name))[0].symbols.identity().startswith("small.")  # type: ignore[union-attr]
    finally:
        cache.configure(False)
