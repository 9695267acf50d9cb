"""Loader options shared by ``check``, ``tree`` and ``why``; parsed into a ``TargetEnvironment``.

The CLI is the only place that reads the auditor's own environment, and only
when asked (``--env-from-host`` for ``LD_LIBRARY_PATH``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from ..errors import ConfigError
from ..loader.target import HWCAPS_SUBDIRS, TargetEnvironment

_LEVELS = [*sorted({level for levels in HWCAPS_SUBDIRS.values() for level in levels}), "none"]


def loader_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add the loader-emulation options to a click command (in this order in ``--help``: the
    roots and the ELF ld.so's, Windows', macOS', then the Python process's)."""
    options = [*_elf_options(), *_windows_options(), *_macos_options(), *_process_options()]
    for option in reversed(options):
        func = option(func)
    return func


def _elf_options() -> list[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """``--entry`` and the options of the ELF ld.so (search paths, sysroot, $PLATFORM, $LIB, hwcaps, LD_PRELOAD)."""
    return [
        click.option(
            "--entry",
            "entries",
            multiple=True,
            metavar="PATH",
            help="Import root to load (repeatable). Default: the Python extension modules and executables "
            "among the inputs, else every input as a plain dlopen.",
        ),
        click.option(
            "--ld-library-path",
            default="",
            metavar="DIRS",
            help="LD_LIBRARY_PATH of the target (colon-separated; default empty).",
        ),
        click.option("--env-from-host", is_flag=True, help="Take LD_LIBRARY_PATH from linkaudit's own environment."),
        click.option(
            "--target-env",
            type=click.Choice(["auto", "host", "policy"]),
            default="auto",
            show_default=True,
            help="What counts as present outside the inputs: the host (or --sysroot), or only the system libraries "
            "and loader of the policy (a manylinux or musllinux wheel's tags, else check's --profile), as on users' "
            "machines of any architecture; auto: policy for manylinux and musllinux wheels.",
        ),
        click.option(
            "--sysroot",
            default="/",
            metavar="DIR",
            type=click.Path(file_okay=False),
            help="Audit as if DIR were / (its ld.so.cache and ld.so; absolute symlinks resolved inside it).",
        ),
        click.option(
            "--system-dir",
            "system_dirs",
            multiple=True,
            metavar="DIR",
            help="The ld.so's built-in directories (repeatable). Default: read from the target's ld.so.",
        ),
        click.option("--platform", default=None, metavar="NAME", help="$PLATFORM value (default: from the machine)."),
        click.option("--lib", "lib", default=None, metavar="NAME", help="$LIB value (default: from the system dirs)."),
        click.option(
            "--hwcaps-level",
            type=click.Choice(_LEVELS),
            default=None,
            help="Highest glibc-hwcaps subdirectory the target CPU supports (default: x86-64-v2).",
        ),
        click.option("--no-ld-cache", is_flag=True, help="Do not read the target's /etc/ld.so.cache."),
        click.option(
            "--ld-preload",
            "ld_preload",
            multiple=True,
            metavar="PATH",
            help="LD_PRELOAD object for executable roots (repeatable).",
        ),
    ]


def _windows_options() -> list[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """The options of the Windows loader (``os.add_dll_directory``, preloaded DLLs, PATH)."""
    return [
        click.option(
            "--dll-directory",
            "dll_directories",
            multiple=True,
            metavar="DIR",
            help="Windows: a directory os.add_dll_directory() adds, searched after a .pyd's own (repeatable).",
        ),
        click.option(
            "--preload-dll",
            "preload_dlls",
            multiple=True,
            metavar="NAME",
            help="Windows: a DLL loaded before the roots, matched by base name (repeatable).",
        ),
        click.option(
            "--path",
            "windows_path",
            multiple=True,
            metavar="DIR",
            help="Windows: a PATH directory, searched last for an executable's imports, never for a .pyd's "
            "(repeatable).",
        ),
    ]


def _macos_options() -> list[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """The options of macOS dyld (@executable_path, DYLD_LIBRARY_PATH, DYLD_FALLBACK_LIBRARY_PATH)."""
    return [
        click.option(
            "--executable-path",
            default=None,
            metavar="PATH",
            help="macOS: the main executable, for @executable_path (for Python extensions: the interpreter).",
        ),
        click.option(
            "--dyld-library-path",
            "dyld_library_path",
            multiple=True,
            metavar="DIR",
            help="macOS: a DYLD_LIBRARY_PATH directory, searched by leaf name before the install name (repeatable).",
        ),
        click.option(
            "--dyld-fallback-library-path",
            "dyld_fallback_library_path",
            multiple=True,
            metavar="DIR",
            help="macOS: a DYLD_FALLBACK_LIBRARY_PATH directory, searched by leaf name after the install name "
            "(repeatable).",
        ),
    ]


def _process_options() -> list[Callable[[Callable[..., Any]], Callable[..., Any]]]:
    """The options of the Python process: RTLD_GLOBAL dlopens, the interpreter, GPU drivers."""
    return [
        click.option(
            "--dlopen-global",
            "dlopen_global",
            multiple=True,
            metavar="PATH",
            help="Object dlopen()ed with RTLD_GLOBAL before the roots (repeatable), as PyTorch does with "
            "libtorch_global_deps.so.",
        ),
        click.option(
            "--interpreter",
            default=None,
            metavar="PATH",
            help="Python interpreter executable for Python imports (default: a generic CPython).",
        ),
        click.option(
            "--with-driver",
            is_flag=True,
            help="Let GPU-driver libraries resolve where present (default: driverless, they are absent).",
        ),
    ]


def target_from_options(
    *,
    ld_library_path: str,
    env_from_host: bool,
    sysroot: str,
    system_dirs: tuple[str, ...],
    platform: str | None,
    lib: str | None,
    hwcaps_level: str | None,
    no_ld_cache: bool,
    ld_preload: tuple[str, ...],
    dlopen_global: tuple[str, ...],
    interpreter: str | None,
    with_driver: bool,
    **_ignored: Any,
) -> TargetEnvironment:
    """Build the ``TargetEnvironment`` the options describe.

    Raises:
        ConfigError: ``--sysroot`` is not a directory.
    """
    if not os.path.isdir(sysroot):
        raise ConfigError(f"--sysroot {sysroot}: not a directory")
    search = ld_library_path
    if env_from_host:
        search = os.environ.get("LD_LIBRARY_PATH", "")
    return TargetEnvironment(
        sysroot=sysroot,
        ld_library_path=tuple(search.split(":")) if search else (),
        ld_preload=ld_preload,
        dlopen_global=dlopen_global,
        system_dirs=tuple(d.rstrip("/") or "/" for d in system_dirs) or None,
        hwcaps_level=hwcaps_level,
        platform=platform,
        lib=lib,
        use_cache=not no_ld_cache,
        driverless=not with_driver,
        interpreter=interpreter,
    )
