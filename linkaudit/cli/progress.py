"""A progress bar on standard error while packages are decompressed: only on a terminal, only
for large inputs, never with ``--quiet`` (CI logs, pipes and files get none)."""

from __future__ import annotations

import sys
import threading
from typing import Any

import click

#: Bytes of package members expected before a bar is worth drawing.
THRESHOLD = 64 << 20


class StderrProgress:
    """``packages.Progress`` drawn with ``click.progressbar`` on stderr, from the first moment more
    than ``THRESHOLD`` bytes are expected; safe to call from the decompressing threads."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._expected = 0
        self._lock = threading.Lock()

    def expect(self, nbytes: int) -> None:
        """Add ``nbytes`` bytes to the total the bar runs to."""
        with self._lock:
            self._expected += nbytes
            if self._bar is not None:
                self._bar.length = self._expected
            elif self._expected >= THRESHOLD:
                self._bar = click.progressbar(
                    length=self._expected, label="decompressing package members", file=sys.stderr, show_pos=False
                )
                self._bar.__enter__()

    def advance(self, nbytes: int) -> None:
        """Move the bar on by ``nbytes`` bytes done."""
        with self._lock:
            if self._bar is not None:
                self._bar.update(nbytes)

    def close(self) -> None:
        """Finish the bar (a no-op when none was drawn)."""
        with self._lock:
            if self._bar is not None:
                self._bar.__exit__(None, None, None)
                self._bar = None


def stderr_progress(quiet: bool) -> StderrProgress | None:
    """A progress reporter, or ``None`` with ``--quiet`` or when stderr is not a terminal."""
    stream = sys.stderr
    if quiet or stream is None or not stream.isatty():
        return None
    return StderrProgress()
