"""Where reports go: standard output or ``--output FILE``, as UTF-8, with every write error a clean message.

``emit`` writes to standard output; ``write_output`` writes a file: through the
path when it is not a regular file (a FIFO, ``/dev/stdout``, a terminal, or a
symlink to one), else atomically (a temporary file beside the target, renamed
over it; the target's mode kept, a new file created ``0666 & ~umask``), and
never over a file being audited.  Errors raise ``OutputError`` (exit status 2),
never an internal error.
"""

from __future__ import annotations

import contextlib
import os
import stat
import sys
from collections.abc import Iterable

from ..errors import ConfigError, OutputError

#: The file name that means standard output (``--output -``), as for most command-line tools.
STDOUT = "-"


def stdout_is_tty() -> bool:
    """True when standard output is open and a terminal (False when it is closed: ``sys.stdout`` is ``None``)."""
    stream = sys.stdout
    if stream is None:
        return False
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def use_color(flag: bool | None, output: str | None) -> bool:
    """Colour or not: ``--color``/``--no-color`` force it; by default, on a terminal when ``NO_COLOR`` is unset."""
    if flag is not None:
        return flag
    return output is None and stdout_is_tty() and "NO_COLOR" not in os.environ


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def silence_stdout() -> None:
    """Point file descriptor 1 at /dev/null, so the interpreter's final flush of a broken stdout stays quiet."""
    try:
        fd = sys.stdout.fileno() if sys.stdout is not None else 1
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def emit(text: str) -> None:
    """Write ``text`` to standard output as UTF-8 and flush it.

    Bytes go straight to the binary layer: the locale's encoding cannot reject
    a character, and colour codes are kept (the caller decided on colour).

    Raises:
        OutputError: standard output is closed, full (``/dev/full``), a broken
            pipe, or fails otherwise.
    """
    stream = sys.stdout
    if stream is None:
        raise OutputError("standard output is closed: nothing to write the report to (use --output FILE)")
    data = text.encode("utf-8", "backslashreplace")
    try:
        stream.flush()
        fd = _descriptor(stream)
        binary = getattr(stream, "buffer", None)
        if fd is not None:
            _write_all(fd, data)
        elif binary is not None:
            binary.write(data)
            binary.flush()
        else:
            stream.write(text)
            stream.flush()
    except (OSError, ValueError) as exc:
        silence_stdout()
        raise OutputError(f"cannot write the report to standard output: {_reason(exc)}") from exc


def _descriptor(stream: object) -> int | None:
    """The file descriptor under ``stream``, or ``None`` for an in-memory stream (a test's capture)."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return None
    return fd if isinstance(fd, int) else None


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: a short write is continued, and a descriptor left
    non-blocking by the caller (a CI runner's pipe) is waited on until it takes more.  Python's
    own layers drop the rest of a short write when ``PYTHONUNBUFFERED=1`` makes ``sys.stdout.buffer``
    a raw file (a 200 KB report cut at 64 KiB with exit 0), or fail with ``BlockingIOError``.

    Raises:
        OSError: the write failed (a broken pipe, no space, ...).
    """
    import select  # only when the report goes to a real descriptor

    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [], 1.0)


def check_output_path(path: str, option: str = "--output") -> None:
    """Reject an ``--output`` that can never be written, before the audit runs.

    Raises:
        ConfigError: the path is empty or names a directory (the message names ``option``).
    """
    if not path:
        raise ConfigError(f"{option}: empty file name")
    if os.path.isdir(path):
        raise ConfigError(f"{option} {path}: is a directory")


def _same_file(st: os.stat_result, paths: Iterable[str]) -> str | None:
    key = (st.st_dev, st.st_ino)
    for p in paths:
        try:
            other = os.stat(p)
        except (OSError, ValueError):
            continue
        if (other.st_dev, other.st_ino) == key:
            return p
    return None


def write_output(path: str, text: str, inputs: Iterable[str], option: str = "--output") -> None:
    """Write ``text`` (as UTF-8) to ``path``.

    Args:
        path: the ``--output`` path.
        text: the report.
        inputs: every file being audited (and the paths given); ``path`` must
            not be any of them, compared by (st_dev, st_ino), so neither a
            second name nor a symlink nor a hard link gets past.

    Raises:
        ConfigError: ``path`` is empty, a directory, or one of ``inputs``.
        OutputError: writing failed (no space, permission denied, ...); a
            temporary file is never left behind.
    """
    check_output_path(path, option)
    data = text.encode("utf-8", "backslashreplace")
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from exc
    mode = None
    if st is not None:
        clash = _same_file(st, inputs)
        if clash is not None:
            raise ConfigError(f"{option} {path}: refusing to overwrite an input ({clash})")
        if not stat.S_ISREG(st.st_mode):
            _write_through(path, data, option)
            return
        mode = stat.S_IMODE(st.st_mode)
    # Replace the file a symlink points to, not the symlink.
    target = os.path.realpath(path)
    directory, base = os.path.split(target)
    import secrets  # only when a report is written to a file (hmac, hashlib: kept off start-up)

    tmp = os.path.join(directory, f".{base}.linkaudit-{secrets.token_hex(6)}.tmp")
    try:
        # O_EXCL: never an existing file; mode 0666, which the umask trims as for any new file.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from exc
    done = False
    try:
        try:
            if mode is not None:
                os.fchmod(fd, mode)
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(tmp, target)
        done = True
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from exc
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _write_through(path: str, data: bytes, option: str) -> None:
    """Write into an existing FIFO, device or other non-regular file as it is (no temporary file, no rename)."""
    try:
        fd = os.open(path, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except OSError as exc:
        raise OutputError(f"{option} {path}: cannot write: {_reason(exc)}") from exc
