"""A package member inflated once, front to back, keeping only the byte ranges the readers need.

``stream_member`` reads the member's first ``plan.HEAD`` bytes, plans from its headers
(``formats.plan.head_plan``) and keeps the planned ranges as the rest streams past; once the
section headers have come by, whatever the readers need and the plan did not foresee
(``plan.missing_after``) is kept in a second pass.  Nothing of it is written to disk but a
placeholder (``place``): the member's first bytes, the rest a hole, so that walks, ``stat`` and
magic sniffing see the member as before, and ``formats.ranges.register`` ties it to the kept
ranges ``read_path`` reads.  Every byte inflated counts against the member's, the package's
and the run's caps (``staging.Inflated``), as when it was written.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import IO

from ..formats.plan import HEAD, head_plan, missing_after, trimmed
from ..formats.ranges import RangeBytes
from . import limits
from .staging import Inflated
from .tarread import read_up_to

#: Most bytes of one member kept in memory; a member whose plan keeps more is written out instead.
MAX_KEPT = 256 << 20


def stream_member(open_member: Callable[[], IO[bytes]], label: str, size: int, counter: Inflated) -> RangeBytes | None:
    """The kept ranges of the member of ``size`` bytes that ``open_member`` opens, named ``label``;
    ``None`` when no plan can be made (not an ELF shared object or executable) or it would keep
    more than ``MAX_KEPT`` bytes: then the member is needed whole.

    Raises:
        Refused: a cap was passed while inflating (``counter``).
        zipfile.BadZipFile, zlib.error, OSError, EOFError: the member is corrupt.
    """
    with open_member() as src:
        head = read_up_to(src, min(HEAD, size))
        plan = head_plan(head, size)
        if plan is None or sum(n for _o, n in plan) > MAX_KEPT:
            return None
        counter.add(len(head))
        kept = _keep(src, plan, len(head), head, counter)
    source = RangeBytes(label, size, kept)
    missing = missing_after(source)
    if missing:
        if source.kept + sum(n for _o, n in missing) > MAX_KEPT:
            return None
        with open_member() as again:
            more = _keep(again, missing, 0, b"", None)
        source = RangeBytes(label, size, _disjoint(kept, more))
    return trimmed(source)


def _keep(
    src: IO[bytes], plan: list[tuple[int, int]], pos: int, first: bytes, counter: Inflated | None
) -> list[tuple[int, bytes]]:
    """Stream ``src`` to its end from offset ``pos`` (``first``: the bytes already read from 0) and
    return the pieces of the sorted, disjoint ranges ``plan``; bytes counted in ``counter``."""
    pieces: dict[int, bytearray] = {offset: bytearray() for offset, _n in plan}
    spans = [(offset, offset + n) for offset, n in plan]

    def take(at: int, chunk: bytes) -> None:
        end = at + len(chunk)
        for start, stop in spans:
            if stop <= at:
                continue
            if start >= end:
                break
            pieces[start] += chunk[max(start, at) - at : min(stop, end) - at]

    if first:
        take(0, first)
    chunk = src.read(limits.CHUNK)
    while chunk:
        if counter is not None:
            counter.add(len(chunk))
        take(pos, chunk)
        pos += len(chunk)
        while spans and spans[0][1] <= pos:
            spans.pop(0)
        chunk = src.read(counter.next_read() if counter is not None else limits.CHUNK)
    return [(offset, bytes(data)) for offset, data in pieces.items() if data]


def _disjoint(kept: list[tuple[int, bytes]], more: list[tuple[int, bytes]]) -> list[tuple[int, bytes]]:
    """``kept`` and the parts of ``more`` outside it: one set of non-overlapping ranges."""
    out = list(kept)
    edges = sorted((o, o + len(d)) for o, d in kept)
    for offset, data in more:
        at, stop = offset, offset + len(data)
        for low, high in edges:
            if high <= at:
                continue
            if low >= stop:
                break
            if low > at:
                out.append((at, data[at - offset : low - offset]))
            at = max(at, high)
        if at < stop:
            out.append((at, data[at - offset :]))
    return out


def place(dest: str, head: bytes, size: int) -> None:
    """Create the placeholder ``dest``: ``head`` written, then a hole up to ``size`` bytes.

    Raises:
        OSError: it cannot be created (it exists, a symlink, no space).
    """
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, head)
        os.ftruncate(fd, size)
    except BaseException:
        os.close(fd)
        os.unlink(dest)
        raise
    os.close(fd)
