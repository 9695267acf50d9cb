"""How one wheel's binary members reach the staging tree without being written out: placed from
the cache when it knows them (``cache.member_key``: the wheel's stat, the member's name, CRC-32
and sizes from the central directory; nothing is inflated), else an ELF file streamed to its
kept ranges (``stream``); each is a placeholder tied to what ``read_path`` reads for it.
"""

from __future__ import annotations

import os
import zipfile

from ..cache import Key, active, member_key, member_variant
from ..cache.codec import Heads
from ..formats.ranges import Member, register
from .inflate import open_zip_member
from .staging import Inflated, Stager
from .stream import place, stream_member


class Members:
    """The members of the wheel ``label`` (its path) as they are placed; shared by the threads
    that inflate them (every method is safe to call from several at once)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.cache = active()
        try:
            self.stat: os.stat_result | None = os.stat(label) if self.cache is not None else None
        except OSError:
            self.stat = None

    def key(self, info: zipfile.ZipInfo, name: str) -> Key | None:
        """The cache key of the member ``name`` (its entry ``info``), or ``None`` (no cache)."""
        return self.key_of(name, info.CRC, info.compress_size, info.file_size, "wheel")

    def key_of(self, name: str, crc: int, packed: int, size: int, what: str) -> Key | None:
        """``cache.member_key`` of this wheel, or ``None`` (no cache, or the wheel cannot be stat'ed)."""
        if self.cache is None or self.stat is None:
            return None
        return member_key(self.label, self.stat, name, crc, packed, size, what)

    def heads(self) -> Heads:
        """What the cache says the wheel's members begin with (name -> (CRC-32, size, first
        bytes)): a member listed with the same CRC-32 and size is sniffed without opening it."""
        key = self.key_of("", 0, 0, 0, "heads")
        found = self.cache.get_heads(key) if key is not None and self.cache is not None else None
        return found or {}

    def save_heads(self, heads: Heads) -> None:
        """Store what the wheel's members begin with (``heads``)."""
        key = self.key_of("", 0, 0, 0, "heads")
        if key is not None and self.cache is not None:
            self.cache.put_heads(key, heads)

    def place_cached(self, info: zipfile.ZipInfo, name: str, dest: str, head: bytes) -> bool:
        """Place the member from the cache (its ``head``: the first bytes, for sniffing); False
        when the cache does not hold it."""
        key = self.key(info, name)
        if key is None or self.cache is None:
            return False
        import dataclasses

        found = self.cache.get(dataclasses.replace(key, name=member_variant(key.name, True)))
        if found is None:
            return False
        place(dest, head, info.file_size)
        register(dest, Member(None, key, found))
        return True

    def stream(
        self, zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, dest: str, head: bytes, stager: Stager
    ) -> bool:
        """Stream the member to its kept ranges and place it (``head``: its first bytes, written
        into the placeholder for sniffing); False when it is needed whole
        (no plan for it: not an ELF shared object or executable; ``stager.whole``).

        Raises:
            Refused: a cap was passed while inflating.
        """
        if stager.whole:
            return False
        counter = Inflated(stager.budget, None, cap=info.file_size)
        source = stream_member(lambda: open_zip_member(zf, info), f"{self.label}!{name}", info.file_size, counter)
        if source is None:
            return False
        place(dest, head, info.file_size)  # its magic number: walks and sniffing see the member
        register(dest, Member(source, self.key(info, name)))
        return True
