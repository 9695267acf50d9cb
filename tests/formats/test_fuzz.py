"""Seeded mutation of the committed Mach-O and PE samples (the tables our own readers parse: the
export trie, chained-fixups imports, nlist ranges; PE import, delay-load and export directories):
every mutant either reads or is refused with an ``InputError`` naming the file — never another
exception, never a hang.  Deterministic: the same seeds every run."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.errors import InputError

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
TARGETS = [
    "macho/chained/libtorch_cuda.dylib",
    "macho/chained/libnvrtc.12.dylib",
    "macho/misc/reexport/libcuda_umbrella.dylib",
    "macho/misc/universal.dylib",
    "pe/fixed/torch_cuda.dll",
    "pe/driver/delay_driver.dll",
    "pe/imports/helper.dll",
    "pe/imports/nvrtc64_120_0.dll",
]
MUTANTS = int(__import__("os").environ.get("LINKAUDIT_FUZZ_MUTANTS", "150"))


def _mutate(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    choice = rng.randrange(4)
    if choice == 0:  # a few random bytes
        for _ in range(rng.randrange(1, 9)):
            out[rng.randrange(len(out))] = rng.randrange(256)
    elif choice == 1:  # a 32-bit field set to an extreme
        at = rng.randrange(0, len(out) - 4) & ~3
        out[at : at + 4] = rng.choice(
            [b"\xff\xff\xff\xff", b"\x00\x00\x00\x80", b"\x00\x00\x00\x00", b"\xff\xff\x00\x00"]
        )
    elif choice == 2:  # truncated
        del out[rng.randrange(64, len(out)) :]
    else:  # a run copied over another place (loops in tables)
        src, dst, n = rng.randrange(len(out)), rng.randrange(len(out)), rng.randrange(2, 32)
        out[dst : dst + n] = out[src : src + n]
    return bytes(out)


@pytest.mark.parametrize("target", TARGETS)
def test_mutants_read_or_are_refused_with_the_file_named(target: str, tmp_path: Path) -> None:
    data = (SAMPLES / target).read_bytes()
    rng = random.Random(target)
    path = tmp_path / Path(target).name
    refused = 0
    for _ in range(MUTANTS):
        path.write_bytes(_mutate(data, rng))
        try:
            read(str(path))
        except InputError as exc:
            assert exc.path == str(path) and exc.reason
            refused += 1
    assert refused < MUTANTS  # most single mutations leave a readable file
