"""Loader-emulation tests.  ``STATS`` collects what the ldd differential test compared."""

from collections import Counter

STATS: Counter[str] = Counter()
