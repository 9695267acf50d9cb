"""Messages about hostile inputs print what the file holds legibly: no negative RVA, no raw bytes.

The PE directory reader is driven directly (``pe_directories.Image`` over synthetic bytes: one
section mapping RVA 0x1000 to file offset 0x200) — the tables the messages are about.
"""

from __future__ import annotations

import struct

import pytest

from linkaudit.errors import shown
from linkaudit.formats.pe_directories import Image, MalformedDirectory, Section

SECTION = Section(rva=0x1000, virtual_size=0x200, offset=0x200, raw_size=0x200)


def image(blobs: dict[int, bytes]) -> Image:
    """A 0x400-byte PE32 image with ``blobs`` placed at their RVAs."""
    buf = bytearray(0x400)
    for rva, blob in blobs.items():
        at = rva - SECTION.rva + SECTION.offset
        buf[at : at + len(blob)] = blob
    return Image(bytes(buf), [SECTION], 0x200, False)


def test_a_dll_name_of_raw_bytes_is_escaped_in_messages() -> None:
    descriptor = struct.pack("<5I", 0x11F8, 0, 0, 0x1080, 0) + bytes(20)
    lookup = struct.pack("<2I", 0x1090, 0x1090)  # two entries, then the end of the file: no null entry
    pe = image({0x1000: descriptor, 0x1080: b"bad\xff\x01.dll\0", 0x1090: b"\0\0fn\0", 0x11F8: lookup})
    with pytest.raises(MalformedDirectory) as info:
        pe.imports(0x1000, 40)
    assert str(info.value) == "the import lookup table of bad\\xff\\x01.dll runs past the end of the file"


def test_a_virtual_address_below_the_image_base_is_not_a_negative_rva() -> None:
    # A pre-VC7 delay-load descriptor (attributes 0: virtual addresses) naming its DLL at VA 0x100.
    descriptor = struct.pack("<8I", 0, 0x100, 0, 0x1100, 0x1100, 0, 0, 0) + bytes(32)
    pe = image({0x1000: descriptor})
    with pytest.raises(MalformedDirectory) as info:
        pe.delay_imports(0x1000, 64, 0x10000000)
    message = str(info.value)
    assert "-0x" not in message
    assert "at the address 0xfffff00 bytes below the image base lies outside the file" in message


@pytest.mark.parametrize(
    ("name", "printed"),
    [("libc.so.6", "libc.so.6"), ("a\0b", "a\\x00b"), ("x\udcffy", "x\\xffy"), ("new\nline", "new\\nline"), ("é", "é")],
)
def test_shown_escapes_what_is_not_printable(name: str, printed: str) -> None:
    assert shown(name) == printed
