"""A forged ELF hash table whose every bucket leads into one chain of all S symbols: the lookups
in it are bounded (``symbol_lookup.WALK_FACTOR`` times its chain), then made by name alone, with
the same bindings (stop 27's D3: each of W lookups walked S entries in Python; 30,000 symbols in
5 MB took minutes)."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.loader import symbol_lookup
from linkaudit.loader.target import TargetEnvironment
from tests.tools import find_tool, needs

N = 3000


def _build(out: Path, style: str) -> None:
    gcc = find_tool("gcc").path or "gcc"
    provider = "".join(f".globl sym_{i}\n.type sym_{i},@function\nsym_{i}: ret\n" for i in range(N))
    (out / "p.s").write_text(".text\n" + provider + '.section .note.GNU-stack,"",@progbits\n')
    (out / "c.s").write_text(
        ".data\n" + "".join(f".quad sym_{i}\n" for i in range(N)) + '.section .note.GNU-stack,"",@progbits\n'
    )
    flags = ["-shared", "-nostdlib", f"-Wl,--hash-style={style}"]
    subprocess.run([gcc, *flags, "-Wl,-soname,libprov.so", "-o", out / "libprov.so", out / "p.s"], check=True)
    subprocess.run(
        [gcc, *flags, "-o", out / "libcons.so", out / "c.s", f"-L{out}", "-lprov", "-Wl,-rpath,$ORIGIN"], check=True
    )
    (out / "p.s").unlink()
    (out / "c.s").unlink()


def _forge(lib: Path, style: str) -> None:
    """Every bucket -> the first symbol; DT_HASH: chain[i] = i + 1; DT_GNU_HASH: no run ends but the last."""
    data = bytearray(lib.read_bytes())
    (shoff,) = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    for k in range(shnum):
        _name, typ, _flags, _addr, off, size = struct.unpack_from("<IIQQQQ", data, shoff + k * shentsize)
        if style == "sysv" and typ == 5:  # SHT_HASH
            nbucket, nchain = struct.unpack_from("<II", data, off)
            for b in range(nbucket):
                struct.pack_into("<I", data, off + 8 + 4 * b, 1)
            for i in range(nchain):
                struct.pack_into("<I", data, off + 8 + 4 * nbucket + 4 * i, i + 1 if 0 < i < nchain - 1 else 0)
        elif style == "gnu" and typ == 0x6FFFFFF6:  # SHT_GNU_HASH
            nbucket, symoffset, bloom_size, _shift = struct.unpack_from("<IIII", data, off)
            buckets = off + 16 + 8 * bloom_size
            for b in range(nbucket):
                struct.pack_into("<I", data, buckets + 4 * b, symoffset)
            for b in range(bloom_size):
                struct.pack_into("<Q", data, off + 16 + 8 * b, (1 << 64) - 1)
            chain = buckets + 4 * nbucket
            count = (off + size - chain) // 4
            for i in range(count):
                (h,) = struct.unpack_from("<I", data, chain + 4 * i)
                struct.pack_into("<I", data, chain + 4 * i, (h | 1) if i == count - 1 else (h & ~1))
    lib.write_bytes(bytes(data))


@needs("gcc")
@pytest.mark.parametrize("style", ["sysv", "gnu"])
def test_a_forged_hash_chain_is_walked_within_a_budget(tmp_path: Path, style: str) -> None:
    _build(tmp_path, style)
    plain = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    _forge(tmp_path / "libprov.so", style)
    before = dict(symbol_lookup.WORK)
    forged = audit([str(tmp_path)], AuditConfig(target=TargetEnvironment()))
    bulk = symbol_lookup.WORK["bulk"] - before["bulk"]
    assert bulk > N // 2, bulk  # past the budget, most names are found by name
    unresolved = [f for f in forged.findings if f.rule == "unresolved-symbol"]
    assert unresolved == [] == [f for f in plain.findings if f.rule == "unresolved-symbol"]
