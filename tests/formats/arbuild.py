"""A tiny ``ar`` archive builder for hostile-input tests (GNU layout, as ``ar(5)`` describes it)."""

from __future__ import annotations

from collections.abc import Sequence


def header(name: bytes, size: int) -> bytes:
    """One 60-byte member header: ``name`` (at most 16 bytes), zero date/uid/gid, mode 644, ``size``."""
    assert len(name) <= 16
    return (
        name.ljust(16)
        + b"0".ljust(12)
        + b"0".ljust(6)
        + b"0".ljust(6)
        + b"644".ljust(8)
        + str(size).encode().ljust(10)
        + b"`\n"
    )


def thin_archive(members: Sequence[tuple[bytes, int]]) -> bytes:
    """A GNU thin archive naming ``members`` — ``(name, size of its file)`` — in order, a name as
    written in the header (``b"a.o/"``) or, when longer than 15 bytes, through the ``//`` table."""
    table = b""
    entries = []
    for name, size in members:
        if len(name) + 1 <= 16:
            entries.append(header(name + b"/", size))
        else:
            entries.append(header(b"/%d" % len(table), size))
            table += name + b"/\n"
    out = b"!<thin>\n"
    if table:
        out += header(b"//", len(table)) + table + (b"\n" if len(table) % 2 else b"")
    return out + b"".join(entries)


def repeated_member(name: bytes, size: int, count: int) -> bytes:
    """A thin archive naming the file ``name`` (of ``size`` bytes) ``count`` times: 1,500 names of
    one large object were read 1,500 times, in full, and kept (77 s and 2.44 GB)."""
    return thin_archive([(name, size)] * count)


def archive(members: Sequence[tuple[bytes, bytes]]) -> bytes:
    """A GNU ``ar`` archive of ``members`` — ``(name, content)``, a name of at most 15 bytes — in
    order, without a symbol table (the reader indexes the members itself)."""
    out = b"!<arch>\n"
    for name, content in members:
        out += header(name + b"/", len(content)) + content + (b"\n" if len(content) % 2 else b"")
    return out
