"""Names looked up in a provider's own ELF hash table, as glibc's ``elf/dl-lookup.c`` does.

``do_lookup_x`` never builds a name map of a library: it hashes the wanted name once
(``dl_new_hash`` for ``DT_GNU_HASH``, ``_dl_elf_hash`` for ``DT_HASH``), takes the bucket
``hash % nbuckets``, and walks that bucket's chain, comparing the stored hash first and the
name only when the hashes agree.  This module does the same on the model, in three steps
priced for Python:

1. each undefined name's GNU hash is computed once per run (``gnu_hash``, memoised);
2. each provider's stored 32-bit hashes (the ``DT_GNU_HASH`` chain, bit 0 cleared) become one
   ``frozenset`` built at C speed, and a consumer's wanted hashes are intersected with it in one
   C call (``candidates``) — an exact-hash filter, stronger than the table's bloom filter,
   which would cost a Python-level probe per (name, provider);
3. only a name whose hash the provider stores is looked up (``definitions_of_name``): its
   bucket's chain walked, the names compared as bytes in the string table (no name decoded),
   the matches turned into ``Definition`` records, memoised per (provider, name).

An object with ``DT_HASH`` only has no stored hashes: each wanted name walks its chain (still
memoised per (provider, name)).  An object with neither (Mach-O, PE, a relocatable object) uses
the bulk map ``SymbolTable.definitions``.
"""

from __future__ import annotations

import array
from collections.abc import Iterable
from functools import lru_cache
from itertools import repeat
from operator import mul
from sys import byteorder

from ..model import Definition, ElfHashTable, SymbolTable

_MASK = 0xFFFFFFFF
#: 33**k mod 2**32 for k = 0, 1, ... (grown on demand): ``dl_new_hash`` as one dot product.
_POWERS = [1]
#: Byte translation clearing bit 0 (the chain's end-of-bucket marker) of a hash's low byte.
_CLEAR_BIT0 = bytes(b & 0xFE for b in range(256))
_LOW_BYTE = 0 if byteorder == "little" else 3


@lru_cache(maxsize=1 << 20)
def gnu_hash(name: str) -> int:
    """``dl_new_hash`` (glibc ``elf/dl-new-hash.h``): ``h = h * 33 + c`` from 5381, mod 2**32.

    The name is hashed as its bytes (UTF-8; undecodable bytes kept as surrogate escapes),
    each distinct name once per process.  Returns an ``int`` in ``[0, 2**32)``.
    """
    data = name.encode("utf-8", "surrogateescape")
    n = len(data)
    powers = _POWERS
    while len(powers) <= n:
        powers.append(powers[-1] * 33 & _MASK)
    # Horner's rule unrolled: 5381 * 33**n + sum(c_i * 33**(n - 1 - i))
    total: int = 5381 * powers[n] + sum(map(mul, reversed(data), powers))
    return total & _MASK


def hash_key(name: str) -> int:
    """``name``'s GNU hash with bit 0 cleared: what ``stored_hashes`` holds for it."""
    return gnu_hash(name) & 0xFFFFFFFE


def sysv_hash(name: str) -> int:
    """``_dl_elf_hash`` (the gABI's ELF hash, glibc ``elf/dl-hash.h``), of the name's bytes."""
    h = 0
    for c in name.encode("utf-8", "surrogateescape"):
        h = (h << 4) + c
        g = h & 0xF0000000
        if g:
            h ^= g >> 24
        h &= ~g & _MASK
    return h


def stored_hashes(table: SymbolTable) -> frozenset[int]:
    """The GNU hashes ``table``'s ``DT_GNU_HASH`` chain stores (bit 0 cleared), built once, at C speed.

    Empty when the table has no ``DT_GNU_HASH``.
    """
    ht = table.hash_table
    if ht is None or not ht.gnu:
        return frozenset()
    memo = table.memo("gnu_hashes")
    found: frozenset[int] | None = memo.get(0)
    if found is None:
        raw = bytearray(ht.chain.tobytes())
        raw[_LOW_BYTE::4] = raw[_LOW_BYTE::4].translate(_CLEAR_BIT0)
        words = array.array("I")
        words.frombytes(raw)
        found = memo[0] = frozenset(words)
    return found


def candidates(table: SymbolTable, wanted: frozenset[int]) -> frozenset[int]:
    """Which of the ``wanted`` hash keys (``hash_key``) ``table`` stores: one set intersection (C speed).

    A name whose hash is not in the result is not defined by ``table``; a hash in it may still
    be another name's (the chain walk tells).
    """
    return wanted & stored_hashes(table)


def definitions_of_name(table: SymbolTable, name: str) -> tuple[Definition, ...]:
    """The definitions ld.so may bind ``name`` to in ``table``, through its hash table (memoised).

    ``table.hash_table`` must not be ``None``.  Only the chain of the name's bucket is walked and
    only the names whose stored hash matches are compared (as bytes); the acceptable ones
    (``SymbolTable.definitions_at``) are returned, ``()`` when there are none.
    """
    memo = table.memo("lookups")
    found: tuple[Definition, ...] | None = memo.get(name)
    if found is None:
        ht = table.hash_table
        assert ht is not None
        encoded = name.encode("utf-8", "surrogateescape") + b"\0"
        walk = _gnu_chain(ht, gnu_hash(name)) if ht.gnu else _sysv_chain(ht, sysv_hash(name))
        same, offsets = table.strtab.startswith, table.name_offsets
        found = memo[name] = table.definitions_at([i for i in walk if same(encoded, offsets[i])])
    return found


def _gnu_chain(ht: ElfHashTable, h: int) -> Iterable[int]:
    """Table indices (``.dynsym`` index - 1) in ``h``'s bucket whose stored hash is ``h`` (bit 0 aside)."""
    first = ht.buckets[h % len(ht.buckets)]
    if first < ht.symoffset or first == 0:
        return ()
    chain, base, target = ht.chain, ht.symoffset, h | 1
    out: list[int] = []
    for k in range(first - base, len(chain)):
        stored = chain[k]
        if stored | 1 == target:
            out.append(k + base - 1)
        if stored & 1:
            break
    return out


def _sysv_chain(ht: ElfHashTable, h: int) -> Iterable[int]:
    """Table indices on ``h``'s ``DT_HASH`` chain (every one: the table stores no hashes), loop-safe."""
    chain = ht.chain
    out: list[int] = []
    i = ht.buckets[h % len(ht.buckets)]
    for _step in repeat(None, len(chain)):
        if i == 0:
            break
        out.append(i - 1)
        i = chain[i]
    return out
