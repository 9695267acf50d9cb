"""The ``linkaudit`` click group and its error mapping (``linkaudit.cli`` is the entry point).

Exit status: the table in ``linkaudit.cli``'s docstring, the one place it is written.
No traceback reaches the user: ``main`` maps project errors to these codes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

import click

from .. import __version__
from ..errors import LinkauditError
from ..output import text_safe
from .cacheflag import cache_wanted, no_cache_option
from .emit import silence_stdout

EXIT_OK, EXIT_FINDINGS, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


#: Command name -> (module under ``linkaudit.cli``, attribute): each imported only when that
#: command runs (or ``--help`` lists them), so ``check`` never pays for ``tree``, ``why``, ``diff``.
_COMMANDS = {
    "check": ("check", "check"),
    "dupes": ("dupes", "dupes"),
    "tree": ("tree", "tree"),
    "why": ("why", "why"),
    "show": ("show", "show"),
    "rules": ("rules", "rules"),
    "explain": ("rules", "explain"),
    "profiles": ("profiles", "profiles_command"),
    "diff": ("diff", "diff"),
    "cache": ("cache", "cache"),
}


class _LazyGroup(click.Group):
    """A group whose subcommands are imported on first lookup (``_COMMANDS``), in listing order."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(_COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        home = _COMMANDS.get(cmd_name)
        if home is None:
            return None
        import importlib

        command = getattr(importlib.import_module(f"linkaudit.cli.{home[0]}"), home[1])
        return command if isinstance(command, click.Command) else None


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="linkaudit")
@no_cache_option
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Audit the linkage of shared libraries and executables without running them.

    linkaudit reads ELF, PE and Mach-O files, given alone, in directories, wheels or
    conda packages: their dependencies, search paths, symbol versions, imports and
    exports. It emulates each platform's loader (glibc's ld.so, Windows, dyld) and
    reports GPU-driver links, libraries not found, undefined symbols with no provider,
    symbol versions and minimum OS versions above a target baseline, leaked build
    paths and broken version needs.
    """
    from ..cache import configure

    configure(cache_wanted(ctx), warn=_unusable_cache)


def _unusable_cache(reason: str) -> None:
    """Say, once, on stderr that the cache cannot be used (``reason``: the path and the OS's
    word) and the run goes on uncached: a mistyped ``$LINKAUDIT_CACHE_DIR`` was silent."""
    click.echo(f"linkaudit: warning: the cache is not usable ({text_safe(reason)}); running uncached", err=True)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; returns the exit status instead of raising ``SystemExit``."""
    try:
        result = cli.main(args=argv, prog_name="linkaudit", standalone_mode=False)
    except click.exceptions.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # click turns Ctrl-C into Abort
            signum = exc.__context__.args[0] if isinstance(exc.__context__, _Terminated) else signal.SIGINT
            click.echo(f"linkaudit: interrupted ({signal.Signals(signum).name})", err=True)
            return 128 + int(signum)
        click.echo("linkaudit: aborted", err=True)
        return EXIT_INPUT
    except click.ClickException as exc:
        exc.show()
        return EXIT_INPUT
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except LinkauditError as exc:
        click.echo(f"linkaudit: error: {text_safe(str(exc))}", err=True)
        return EXIT_INPUT
    except BrokenPipeError as exc:  # a write to stdout outside emit() (click's own help text)
        silence_stdout()
        click.echo(f"linkaudit: error: cannot write to standard output: {exc.strerror or exc}", err=True)
        return EXIT_INPUT
    except KeyboardInterrupt as exc:
        signum = exc.args[0] if isinstance(exc, _Terminated) else signal.SIGINT
        click.echo(f"linkaudit: interrupted ({signal.Signals(signum).name})", err=True)
        return 128 + int(signum)
    except Exception as exc:
        click.echo(
            f"linkaudit: internal error: {type(exc).__name__}: {exc}\n"
            "This is a bug in linkaudit; please report it with the command line that triggered it.",
            err=True,
        )
        return EXIT_INTERNAL
    return int(result or 0)


class _Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP (a CI job's timeout, a closed terminal): unwinds like Ctrl-C, so that
    every ``finally`` runs — the staging tree of a package is removed."""


def _terminate(signum: int, _frame: object) -> None:
    raise _Terminated(signum)


def run() -> None:
    """Console-script entry point: SIGTERM and SIGHUP unwind as Ctrl-C does (exit 128 + signal).

    An interrupted run ends with ``os._exit`` once every ``finally`` has run and the streams are
    flushed: the interpreter's exit hooks are skipped; so does any run that leaves nothing for
    them to do (``_nothing_left_at_exit``).  ``concurrent.futures``' hook wakes each
    pool's thread through a pipe, and a pool whose workers were just killed (``jobs.stop_workers``)
    may be closing it: Python 3.11 printed "Exception ignored ... Bad file descriptor" at exit
    (3 of some 400 interrupted ``-j 2`` runs)."""
    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), _terminate)
    status = main()
    if status > 128:  # interrupted (128 + the signal): nothing is left to do but exit
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):  # None: closed (``>&-``)
                stream.flush()
        os._exit(status)
    if _nothing_left_at_exit():
        os._exit(status)  # the interpreter's teardown would free every record one by one
    sys.exit(status)


def _nothing_left_at_exit() -> bool:
    """True when exiting at once loses nothing: both streams flushed, no exit hook registered
    (``atexit``: pools, ``weakref.finalize``, logging's handlers register one), no other thread.
    Then the interpreter's teardown only frees memory — 0.3 s of 200,000 tar members' records
    (issue 14) — and is skipped."""
    import atexit
    import threading

    try:
        for stream in (sys.stdout, sys.stderr):  # ``None`` when the descriptor was closed (``>&-``)
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    hooks = getattr(atexit, "_ncallbacks", None)
    return hooks is not None and hooks() == 0 and threading.active_count() == 1
