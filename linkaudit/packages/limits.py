"""The budgets that keep a hostile package from filling the disk or the memory.

Read as ``limits.NAME`` at the moment of use (tests lower them with ``monkeypatch``).
"""

from __future__ import annotations

import os

#: Largest member written, bytes (libtorch_cuda.so is about 1.6 GB).
MAX_MEMBER_BYTES = 8 << 30
#: Largest total written for one audit, bytes.
MAX_TOTAL_BYTES = 64 << 30
#: Largest expansion of one zip member over its compressed size, for members above ``RATIO_FLOOR``
#: (ELF libraries compress 2-10x; a zip bomb expands 1000x and more).
MAX_RATIO = 200
#: Members up to this many bytes are never refused for their ratio alone: a library whose segments
#: are aligned to 2 MiB pages is mostly zeros and deflates 200-1000x (Pillow 13's libXau: 2,100,545
#: bytes from 9,389, 224x, was refused at a 1 MiB floor).  The package's budget still bounds them.
RATIO_FLOOR = 16 << 20
#: Smallest per-package budget, bytes (a tiny package of a few small libraries is never a bomb).
PACKAGE_FLOOR = 64 << 20
#: Most members one package may list.
MAX_MEMBERS = 1_000_000
#: The longest member name installed, and the longest ``RECORD`` path kept, bytes: Linux's
#: PATH_MAX less its NUL — no file system holds a longer path below a root, so no installer writes it.
MAX_NAME_BYTES = 4095
#: The most directories such a name may be nested in: as many as ``MAX_NAME_BYTES`` allows
#: (``a/a/...``).  Each directory above a member is recorded by its path (owners, clashes), so a
#: name of n bytes costs up to n²/4 characters — 4 MB at PATH_MAX; a wheel of 8 names 20,000
#: levels deep (642 KB) took 1.95 GB before names were held to PATH_MAX.
MAX_NAME_DEPTH = 2048
#: Threads that decompress a zip's binary members at once (bounded by the CPUs).
WORKERS = min(4, os.cpu_count() or 1)
#: Bytes read from or written to a stream at once.
CHUNK = 1 << 20
