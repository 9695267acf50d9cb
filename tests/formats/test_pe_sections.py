"""The PE reader's RVA-to-offset lookup (``pe_directories.Image.offset``) against its section table.

A tester's DLL had 2,000 section headers and 65,536 exports whose names alternate between the last
two sections: every lookup missed the one-section cache and walked the whole table (27 s).  The
lookup now bisects an index of the table built once; these tests count the section headers it
visits, and check that it answers exactly as the walk in table order did — overlapping, empty,
out-of-order and past-the-end sections included (Microsoft's PE format specification, "Section
Table": nothing forbids a hostile table from overlapping).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

from linkaudit.formats.pe_directories import Image, MalformedDirectory, Section


class CountedSections(list[Section]):
    """A section table that counts the headers read from it (by iteration or by index)."""

    visits = 0

    def __iter__(self) -> Iterator[Section]:
        for section in super().__iter__():
            self.visits += 1
            yield section

    def __getitem__(self, index):  # type: ignore[no-untyped-def,override]
        self.visits += 1
        return super().__getitem__(index)


class WalkingImage:
    """The lookup as it was: the one-section cache, then a walk of the table in table order."""

    def __init__(self, buf: bytes, sections: Sequence[Section], headers_size: int) -> None:
        self.buf, self.sections, self.headers_size = buf, sections, headers_size
        self._last = (0, 0, 0)

    def offset(self, rva: int) -> int | None:
        start, end, delta = self._last
        if start <= rva < end:
            return rva + delta
        for s in self.sections:
            if s.rva <= rva < s.rva + max(s.virtual_size, s.raw_size):
                backed = min(s.raw_size, len(self.buf) - s.offset)
                if rva - s.rva < backed:
                    self._last = (s.rva, s.rva + backed, s.offset - s.rva)
                    return rva - s.rva + s.offset
                break
        else:
            if 0 <= rva < min(self.headers_size, len(self.buf)):
                return rva
        return None


def _answer(image: Image, rva: int) -> int | None:
    try:
        return image.offset(rva, "a name")
    except MalformedDirectory:
        return None


def test_names_spread_over_two_sections_of_many_do_not_walk_the_table_per_lookup() -> None:
    # The tester's layout, smaller: 298 empty sections first, then the two holding the names.
    sections = CountedSections(Section(0x1000 * (i + 1), 0x1000, 0, 0) for i in range(298))
    sections += [Section(0x10000000, 0x200, 0x400, 0x200), Section(0x20000000, 0x200, 0x600, 0x200)]
    sections.visits = 0
    image = Image(bytes(0x800), sections, 0x400, True)
    lookups = 2000
    for i in range(lookups):
        base = 0x10000000 if i % 2 == 0 else 0x20000000
        assert image.offset(base + i % 0x200, "an export name") == (0x400 if i % 2 == 0 else 0x600) + i % 0x200
    # The index reads each header once; then one header per cache miss (the walk read 300 per miss).
    assert sections.visits <= len(sections) + lookups


def _random_table(rng: random.Random, size: int) -> list[Section]:
    sections = []
    for _ in range(rng.randrange(0, 9)):
        rva = rng.randrange(0, 0x3000, rng.choice([1, 0x10, 0x100]))
        virtual, raw = rng.choice([0, 0x10, 0x100, 0x800, 0x1000]), rng.choice([0, 0x10, 0x100, 0x800])
        offset = rng.choice([0, 0x200, 0x400, size - 0x20, size + 0x200, rng.randrange(0, size + 0x400)])
        sections.append(Section(rva, virtual, offset, raw))
    return sections


def test_the_index_answers_as_the_walk_in_table_order_did() -> None:
    rng = random.Random(20261204)
    size = 0x1000
    buf = bytes(size)
    for _ in range(400):
        sections = _random_table(rng, size)
        headers = rng.choice([0, 0x200, 0x400, 0x2000])
        new, old = Image(buf, sections, headers, False), WalkingImage(buf, sections, headers)
        for _ in range(60):
            rva = rng.choice([rng.randrange(-0x100, 0x4000), rng.choice(sections).rva if sections else 0])
            rva += rng.choice([0, 0, -1, 1])
            assert _answer(new, rva) == old.offset(rva), (sections, headers, hex(rva))
