"""``check --each``, ``--scheduler``, ``--scheduler-file`` and the streamed ``--format jsonl``: where
the installations run, what is told as each one finishes (issue 14, section 4).

``spreading`` sets up a ``jobs.Spread`` for ``audit``: the Dask cluster's runner (``cluster``,
imported only with ``--scheduler``), a progress line on a terminal (packages done / total,
findings so far), and for ``--format jsonl`` the lines written as packages finish — to standard
output, or to a temporary file beside ``--output`` renamed into place at the end.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import field
from typing import IO, Any

from ..errors import ConfigError, OutputError
from ..jobs import Spread
from ..records import dataclass
from ..report import Finding, Report
from .emit import emit


class PartProgress:
    """``packages done / total, findings so far`` on one stderr line, redrawn as parts finish."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self.total = 0
        self.done = 0
        self.findings = 0

    def part(self, findings: int) -> None:
        """One more installation done, with ``findings`` new findings."""
        self.done += 1
        self.findings += findings
        noun = "package" if self.total == 1 else "packages"
        self._stream.write(f"\rlinkaudit: {self.done}/{self.total} {noun} audited, {self.findings} findings so far")
        self._stream.flush()

    def close(self) -> None:
        """End the line (when one was drawn)."""
        if self.done:
            self._stream.write("\n")
            self._stream.flush()


@dataclass
class Spreading:
    """What ``spreading`` set up: ``spread`` for ``audit``; ``finish`` ends the streamed report."""

    spread: Spread
    stream: Any = None
    progress: PartProgress | None = None
    _file: IO[str] | None = None
    _temp: str | None = None
    _output: str | None = None
    keep: Callable[[str, str | None], bool] | None = None  # a finding's file and rule -> streamed
    links: dict[str, str] = field(default_factory=dict)  # the packages' symlinks met so far (``keep``'s)

    def on_part(self, index: int, packages: tuple[str, ...], findings: list[Finding]) -> None:
        """``Spread.on_part``: the lines of one installation (those ``keep`` keeps: the members of a
        package given as ``PACKAGE!member``, ``members.member_filter``), and the progress line."""
        if self.keep is not None:
            keep = self.keep
            findings = [f for f in findings if keep(f.file, f.rule)]
        if self.stream is not None:
            self.stream.part(index, packages, findings)
        if self.progress is not None:
            self.progress.part(len(findings))

    def finish(self, report: Report, protected: Sequence[str]) -> None:
        """The streamed report's last lines; ``--output`` renamed into place (never over ``protected``).

        Raises:
            ConfigError: ``--output`` names one of the inputs.
            OutputError: the report could not be written.
        """
        assert self.stream is not None
        self.stream.finish(report)
        if self._file is not None and self._temp is not None and self._output is not None:
            from .emit import write_output

            self._file.close()
            write_output(
                self._output, "", [*protected, *report.packages, *(f.path for f in report.files)]
            )  # the checks
            os.replace(self._temp, self._output)
            self._temp = None

    def _write(self, line: str) -> None:
        if self._file is not None:
            try:
                self._file.write(line)
                self._file.flush()
            except OSError as error:
                raise OutputError(f"--output {self._output}: cannot write: {error.strerror or error}") from error
        else:
            emit(line)


@contextlib.contextmanager
def spreading(
    paths: Sequence[str],
    fmt: str,
    output: str | None,
    quiet: bool,
    each: bool,
    scheduler: str | None,
    scheduler_file: str | None,
) -> Iterator[Spreading]:
    """The ``Spread`` these options ask for, and its streamed report (``fmt == "jsonl"``).

    Raises:
        ConfigError: ``--scheduler`` with ``--scheduler-file``, or the cluster refused
            (``cluster.Cluster``).
    """
    if scheduler is not None and scheduler_file is not None:
        raise ConfigError("--scheduler and --scheduler-file: give one")
    with contextlib.ExitStack() as stack:
        runner = None
        if scheduler is not None or scheduler_file is not None:
            from ..cluster import Cluster  # distributed: only with --scheduler

            relative = any(not os.path.isabs(p) for p in paths)
            runner = stack.enter_context(Cluster(scheduler, scheduler_file, relative)).run
        out = Spreading(Spread(runner, each))
        progress = None if quiet or sys.stderr is None or not sys.stderr.isatty() else PartProgress(sys.stderr)
        if progress is not None:
            stack.callback(progress.close)
        out.progress = progress
        if fmt == "jsonl":
            from ..output.jsonl import Stream

            out.stream = Stream(out._write)
            if output is not None:
                _open_temp(out, output, stack)
        total = (lambda n: setattr(progress, "total", n)) if progress else None
        out.spread = Spread(runner, each, out.on_part, total, out.links.update)
        yield out


def _open_temp(out: Spreading, output: str, stack: contextlib.ExitStack) -> None:
    """A temporary file beside ``output`` for the streamed lines, removed unless renamed into place.

    Raises:
        OutputError: it cannot be created.
    """
    import tempfile  # only for a streamed --output: a plain check imports no tempfile

    directory = os.path.dirname(os.path.abspath(output))
    try:
        fd, temp = tempfile.mkstemp(prefix=".linkaudit-", suffix=".jsonl", dir=directory)
    except OSError as error:
        raise OutputError(f"--output {output}: cannot write: {error.strerror or error}") from error
    out._file, out._temp, out._output = os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace"), temp, output

    def cleanup() -> None:
        if out._file is not None:
            out._file.close()
        if out._temp is not None:
            with contextlib.suppress(OSError):
                os.unlink(out._temp)

    stack.callback(cleanup)
