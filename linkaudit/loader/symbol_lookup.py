"""Names looked up in a provider's own ELF hash table, as glibc's ``elf/dl-lookup.c`` does.

``do_lookup_x`` never builds a name map of a library: it hashes the wanted name once
(``dl_new_hash`` for ``DT_GNU_HASH``, ``_dl_elf_hash`` for ``DT_HASH``), takes the bucket
``hash % nbuckets``, and walks that bucket's chain, comparing the stored hash first and the
name only when the hashes agree.  This module does the same on the model, in three steps
priced for Python:

1. each undefined name's GNU hash is computed once per run (memoised), a table's names in one
   batch (``gnu_hashes``: Horner's rule on all of them at once, in big-integer slots);
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
from itertools import repeat
from operator import mul
from sys import byteorder

from ..model import Definition, ElfHashTable, SymbolTable

_MASK = 0xFFFFFFFF
#: 33**k mod 2**32 for k = 0, 1, ... (grown on demand): ``dl_new_hash`` as one dot product.
_POWERS = [1]


#: name -> its ``dl_new_hash``, each distinct name hashed once per process (cleared past ``_KNOWN_MAX``).
_KNOWN: dict[str, int] = {}
_KNOWN_MAX = 1 << 20
#: Names hashed one at a time (``single``) and in batches (``batched``), and wanted keys walked
#: without a set of the chain's hashes (``walked``), in this process (the counting tests).
WORK = {"single": 0, "batched": 0, "walked": 0, "bulk": 0}
#: Fewer unknown names than this are hashed one by one (a batch's fixed cost is a few big-int operations per column).
_MIN_BATCH = 32
#: A batch's names are padded (with leading NULs, which add nothing to the sum) to a multiple of this width.
_WIDTH_STEP = 32


def gnu_hash(name: str) -> int:
    """``dl_new_hash`` (glibc ``elf/dl-new-hash.h``): ``h = h * 33 + c`` from 5381, mod 2**32.

    The name is hashed as its bytes (UTF-8; undecodable bytes kept as surrogate escapes),
    each distinct name once per process.  Returns an ``int`` in ``[0, 2**32)``.
    """
    found = _KNOWN.get(name)
    if found is None:
        if len(_KNOWN) >= _KNOWN_MAX:
            _KNOWN.clear()
        found = _KNOWN[name] = _one_hash(name.encode("utf-8", "surrogateescape"))
        WORK["single"] += 1
    return found


def forget_hashes() -> None:
    """Drop every remembered hash (benchmarks time hashing from cold)."""
    _KNOWN.clear()


def _one_hash(data: bytes) -> int:
    """``dl_new_hash`` of ``data`` as one C-level dot product with the powers of 33."""
    n = len(data)
    powers = _powers(n)
    # Horner's rule unrolled: 5381 * 33**n + sum(c_i * 33**(n - 1 - i))
    total: int = 5381 * powers[n] + sum(map(mul, reversed(data), powers))
    return total & _MASK


def _powers(n: int) -> list[int]:
    """``_POWERS`` grown to hold ``33**n mod 2**32``."""
    powers = _POWERS
    while len(powers) <= n:
        powers.append(powers[-1] * 33 & _MASK)
    return powers


def gnu_hashes(names: Iterable[str]) -> list[int]:
    """``gnu_hash`` of each of ``names``, in order; the names not hashed before in one batch.

    A batch runs Horner's rule on every name at once: the names of one padded width are the rows
    of a byte matrix, each column is spread into one 64-bit slot per name of one big integer, and
    ``H = (H * 33 + column) mod 2**32`` (per slot: no carry crosses a slot) runs once per column —
    a few C-level big-integer operations per column instead of a Python-level call per name.
    Leading NUL padding adds nothing to ``sum(c_i * 33**(n-1-i))``; ``5381 * 33**n`` is added per name.
    """
    names = list(names)
    unknown = [n for n in dict.fromkeys(names) if n not in _KNOWN]
    if len(unknown) < _MIN_BATCH:
        return list(map(gnu_hash, names))
    if len(_KNOWN) + len(unknown) > _KNOWN_MAX:
        _KNOWN.clear()
    datas = [n.encode("utf-8", "surrogateescape") for n in unknown]
    powers = _powers(max(map(len, datas)))
    by_width: dict[int, list[int]] = {}
    for i, data in enumerate(datas):
        by_width.setdefault(-(-len(data) // _WIDTH_STEP) * _WIDTH_STEP, []).append(i)
    for width, rows in by_width.items():
        sums = _column_horner([datas[i] for i in rows], width)
        for i, total in zip(rows, sums, strict=True):
            _KNOWN[unknown[i]] = (5381 * powers[len(datas[i])] + total) & _MASK
    WORK["batched"] += len(unknown)
    return [_KNOWN[n] if n in _KNOWN else gnu_hash(n) for n in names]


def _column_horner(rows: list[bytes], width: int) -> array.array[int]:
    """``sum(c_i * 33**(n-1-i)) mod 2**32`` of each row (at most ``width`` bytes), all rows at once."""
    m = len(rows)
    if not width:
        return array.array("Q", bytes(8 * m))
    matrix = b"".join([row.rjust(width, b"\0") for row in rows])
    mask = int.from_bytes(b"\xff\xff\xff\xff\0\0\0\0" * m, "little")
    column = bytearray(8 * m)
    h = 0
    for k in range(width):
        column[::8] = matrix[k::width]
        h = (h * 33 + int.from_bytes(column, "little")) & mask
    out = array.array("Q")
    out.frombytes(h.to_bytes(8 * m, "little"))
    if byteorder == "big":
        out.byteswap()
    return out


def hash_key(name: str) -> int:
    """``name``'s GNU hash with bit 0 cleared: what ``stored_hashes`` holds for it."""
    return gnu_hash(name) & 0xFFFFFFFE


def hash_keys(names: Iterable[str]) -> list[int]:
    """``hash_key`` of each of ``names``, in order (hashed in batches: ``gnu_hashes``)."""
    return [h & 0xFFFFFFFE for h in gnu_hashes(names)]


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
        found = memo[0] = frozenset(ht.chain_keys())
    return found


#: ``candidates`` hashes a provider's whole ``DT_GNU_HASH`` chain into a set only when the wanted
#: keys are at least 1/``SET_RATIO`` of it: building the set costs ~0.1 µs a chain entry, walking
#: one absent name's bucket ~2 µs (CPython 3.11, this project's machine).  ``tree`` of torch's
#: ``_C`` (5 undefined names) hashed the 101,000 chain entries of its 33 providers for them.
SET_RATIO = 16


def candidates(table: SymbolTable, wanted: frozenset[int]) -> frozenset[int]:
    """Which of the ``wanted`` hash keys (``hash_key``) to look up in ``table`` (a ``DT_GNU_HASH`` one).

    Few keys against a long chain (and no set of its hashes made yet): all of them, each walked
    through its bucket (``definitions_of_name``), as ld.so does.  Else the keys ``table`` stores,
    by one set intersection (C speed): a name whose hash is not among them is not defined by
    ``table``; a hash among them may still be another name's (the chain walk tells).  Either way
    the definitions found are the same.
    """
    ht = table.hash_table
    if ht is not None and len(wanted) * SET_RATIO < len(ht.chain) and 0 not in table.memo("gnu_hashes"):
        WORK["walked"] += len(wanted)
        return wanted
    return wanted & stored_hashes(table)


#: Chain entries the lookups in one table may walk in all before its names are found in the bulk
#: map instead (``SymbolTable.definitions``, built once in O(symbols)): ``WALK_FACTOR`` times its
#: chain, plus ``WALK_FLOOR``.  A linker's table keeps a few entries per bucket, so real lookups
#: never come near it; a forged one whose every bucket leads into one chain of all S symbols made
#: each of W lookups walk S entries in Python (W x S: 30,000 symbols in 5 MB took minutes).  Past
#: the budget a name is found by name alone: the same answer for every table whose chains index
#: every symbol, which is what a linker writes.
WALK_FACTOR = 8
WALK_FLOOR = 1 << 16


def definitions_of_name(table: SymbolTable, name: str) -> tuple[Definition, ...]:
    """The definitions ld.so may bind ``name`` to in ``table``, through its hash table (memoised).

    ``table.hash_table`` must not be ``None``.  Only the chain of the name's bucket is walked and
    only the names whose stored hash matches are compared (as bytes); the acceptable ones
    (``SymbolTable.definitions_at``) are returned, ``()`` when there are none.  Once the table's
    walks pass ``WALK_FACTOR`` times its chain (a forged table), its names are looked up in its
    bulk map: time stays linear in the table's size.
    """
    memo = table.memo("lookups")
    found: tuple[Definition, ...] | None = memo.get(name)
    if found is None:
        ht = table.hash_table
        assert ht is not None
        spent = table.memo("walked")
        if spent.get(0, 0) > WALK_FACTOR * len(ht.chain) + WALK_FLOOR:
            WORK["bulk"] += 1
            found = memo[name] = table.definitions().get(name, ())
            return found
        encoded = name.encode("utf-8", "surrogateescape") + b"\0"
        walk, steps = _gnu_chain(ht, gnu_hash(name)) if ht.gnu else _sysv_chain(ht, sysv_hash(name))
        spent[0] = spent.get(0, 0) + steps
        same, offsets = table.strtab.startswith, table.name_offsets
        found = memo[name] = table.definitions_at([i for i in walk if same(encoded, offsets[i])])
    return found


def _gnu_chain(ht: ElfHashTable, h: int) -> tuple[list[int], int]:
    """Table indices (``.dynsym`` index - 1) in ``h``'s bucket whose stored hash is ``h`` (bit 0
    aside), and how many chain entries were walked."""
    first = ht.buckets[h % len(ht.buckets)]
    if first < ht.symoffset or first == 0:
        return [], 0
    chain, base, target = ht.chain, ht.symoffset, h | 1
    out: list[int] = []
    start = k = first - base
    for k in range(start, len(chain)):
        stored = chain[k]
        if stored | 1 == target:
            out.append(k + base - 1)
        if stored & 1:
            break
    return out, k - start + 1


def _sysv_chain(ht: ElfHashTable, h: int) -> tuple[list[int], int]:
    """Table indices on ``h``'s ``DT_HASH`` chain (every one: the table stores no hashes), loop-safe,
    and how many were walked."""
    chain = ht.chain
    out: list[int] = []
    i = ht.buckets[h % len(ht.buckets)]
    for _step in repeat(None, len(chain)):
        if i == 0:
            break
        out.append(i - 1)
        i = chain[i]
    return out, len(out)
