"""Bindings kept across runs: where each undefined symbol of one object bound, for one scope.

A re-check of unchanged inputs binds the same references against the same definitions
(issue 14 §2: a re-``check`` of torch/lib in 0.3 s).  Binding torch/lib's ~12,000 undefined
symbols is a third of a warm run; a stored answer is one small file per object.

What decides a binding (``binding.bind_object``) is the object's own references and, in scope
order, each scope entry's path and the definitions of the object read from it.  The key is a
SHA-256 over those: each record's *identity* (``SymbolTable.identity``: the cache entry it was
decoded from, or a small file's SHA-256), the entries' paths, the interpreter entry, the matcher
(glibc's ``check_match`` or musl's), ``READER_VERSION`` and ``BIND_VERSION``.  A scope holding a
record without an identity (the cache off, a record made in memory) is never stored.

The stored answer is data, validated like any input before it is used: a magic, the key it
answers, the number of references, a CRC-32 of the positions, and per reference the position of
its provider in the scope (-1: none), each in range.  Anything else is a miss, and the binding is computed again.

Only objects with at least ``MIN_REFERENCES`` undefined symbols are stored: writing an entry
costs 1.4-2.1 ms on this project's machine (``formats.copies``), binding one reference about
10-15 us, so below a few hundred references the write costs more than it will save.
"""

from __future__ import annotations

import hashlib
import struct
import sys
import zlib
from array import array
from collections.abc import Mapping, Sequence
from typing import Protocol

from ..model import Binary

#: Changed whenever what ``binding.bind_object`` answers for the same inputs changes: every
#: stored binding is then a miss.  ``tests/loader/test_bindcache.py`` holds the digest of the
#: modules that decide a binding and fails until this is raised with it.
BIND_VERSION = 4
#: Objects with fewer undefined symbols are bound every run (see the module's docstring).
MIN_REFERENCES = 500

_MAGIC = b"LKBIND\x00\x02"
#: magic, the key answered, the number of references, CRC-32 of the positions that follow.
_HEAD = struct.Struct("<8s32sII")


class BlobStore(Protocol):
    """Where answers are kept: ``cache.Cache`` (``get_blob``/``put_blob``, atomic, evicted)."""

    def get_blob(self, name: str) -> bytes | None:
        """The bytes stored under ``name``, or ``None`` when there are none (or they cannot be read)."""
        ...

    def put_blob(self, name: str, data: bytes) -> None:
        """Store ``data`` under ``name`` (best effort: a failure to write is not raised)."""
        ...


def key(
    binary: Binary, scope: Sequence[str], objects: Mapping[str, Binary], interpreter: str | None, matcher: str
) -> str | None:
    """The hex SHA-256 that names the binding of ``binary``'s references in ``scope``, or ``None``
    when a record it depends on has no identity (then nothing is looked up or stored).

    Args:
        binary: the object bound.
        scope: the lookup scope, paths in order.
        objects: path -> the record loaded from it.
        interpreter: the scope entry standing for the interpreter, or ``None``.
        matcher: names the ``check_match`` used (its module and qualified name).
    """
    from ..cache.codec import READER_VERSION

    own = binary.symbols.identity()
    if own is None:
        return None
    parts: list[str] = [str(BIND_VERSION), str(READER_VERSION), matcher, own, repr(interpreter)]
    for entry in scope:
        provider = objects.get(entry) if entry != interpreter else None
        ident = provider.symbols.identity() if provider is not None else "-"
        if ident is None:
            return None
        parts += (entry, ident)
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def load(store: BlobStore, name: str, references: int, scope_size: int) -> array[int] | None:
    """The stored providers' positions (one per reference, -1 for none) under ``name``, or ``None``
    when absent or not exactly what ``save`` writes for ``references`` references in a scope of
    ``scope_size`` entries."""
    data = store.get_blob(name)
    if data is None or len(data) != _HEAD.size + 4 * references:
        return None
    magic, answered, count, crc = _HEAD.unpack_from(data)
    if magic != _MAGIC or answered != bytes.fromhex(name) or count != references:
        return None
    if zlib.crc32(memoryview(data)[_HEAD.size :]) != crc:  # a flipped bit in range would bind elsewhere
        return None
    where = array("i")
    if where.itemsize != 4:  # pragma: no cover - every platform CPython runs on
        return None
    where.frombytes(data[_HEAD.size :])
    if sys.byteorder == "big":  # stored little-endian
        where.byteswap()
    if references and (min(where) < -1 or max(where) >= scope_size):
        return None
    return where


def save(store: BlobStore, name: str, where: Sequence[int]) -> None:
    """Store the providers' positions ``where`` (one per reference, -1 for none) under ``name``."""
    body = array("i", where)
    if sys.byteorder == "big":
        body.byteswap()
    payload = body.tobytes()
    store.put_blob(name, _HEAD.pack(_MAGIC, bytes.fromhex(name), len(body), zlib.crc32(payload)) + payload)
