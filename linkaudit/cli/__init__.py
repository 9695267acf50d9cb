"""The ``linkaudit`` command line (click), thin: one module per command.

Exit status (every command):
    0  no finding of severity error
    1  at least one finding of severity error (``check``)
    2  usage or configuration error, an input that could not be read
       (every other input is still audited and reported), or the report
       could not be written (a full disk, a closed or broken stdout)
    3  internal error (a bug in linkaudit: please report it)

No traceback reaches the user: ``main`` maps project errors to these codes.

This module is the entry point and stays light: the click group (``app``) and each command's
module are imported only when needed, and ``linkaudit --version`` answers without importing
click at all (start-up is part of every run).
"""

from __future__ import annotations

import sys
from typing import Any


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status instead of raising ``SystemExit``."""
    from .app import main as app_main

    return app_main(argv)


def run() -> None:
    """Console-script entry point: SIGTERM and SIGHUP unwind as Ctrl-C does (exit 128 + signal).

    ``linkaudit --version`` alone is answered here, as click's ``version_option`` words it.
    """
    if sys.argv[1:] == ["--version"]:
        from .. import __version__

        try:
            sys.stdout.write(f"linkaudit, version {__version__}\n")
            sys.stdout.flush()
        except BrokenPipeError as exc:
            from .emit import silence_stdout

            silence_stdout()
            sys.stderr.write(f"linkaudit: error: cannot write to standard output: {exc.strerror or exc}\n")
            sys.exit(2)
        sys.exit(0)
    import gc

    # A run builds one large graph of records that lives until it ends: collecting every 700
    # allocations walked it again and again (200,000 tar members: 17.9 s, 1.7 s of it the
    # collector).  Cycles of garbage are still collected, 14 times less often.
    gc.set_threshold(10_000, 10, 100)
    from .app import run as app_run

    app_run()


def __getattr__(name: str) -> Any:
    """``cli`` (the click group), ``EXIT_*`` and the rest of ``app``, imported on first use.

    Raises:
        AttributeError: ``app`` has no such name.
    """
    import importlib

    # import_module, not ``from . import app``: that asks this module for ``app`` first, which
    # would call this function again before the submodule is imported (a RecursionError).
    app = importlib.import_module(".app", __name__)
    return app if name == "app" else getattr(app, name)
