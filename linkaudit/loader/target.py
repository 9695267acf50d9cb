"""The target system the loader is emulated for: every input of the search, made explicit.

Nothing in ``linkaudit.loader`` reads ``os.environ`` or the host on its own: the
CLI builds a ``TargetEnvironment`` (``--ld-library-path``, ``--env-from-host``,
``--sysroot``, ``--platform``, ``--hwcaps-level``, ...) and passes it in.

Sources: glibc ``ld.so(8)`` (search order, ``$ORIGIN``/``$LIB``/``$PLATFORM``,
glibc-hwcaps subdirectories), ``elf/dl-load.c`` (``_dl_dst_substitute``,
``fillin_rpath``), ``elf/dl-hwcaps.c`` and ``sysdeps/x86/dl-hwcaps-subdirs.c``
(the x86-64-v2/v3/v4 subdirectories, most capable first).
"""

from __future__ import annotations

import re

from ..records import dataclass

#: glibc-hwcaps subdirectories per machine, most capable first (glibc 2.33+).
HWCAPS_SUBDIRS: dict[str, tuple[str, ...]] = {
    "x86-64": ("x86-64-v4", "x86-64-v3", "x86-64-v2"),
    "ppc64le": ("power11", "power10", "power9"),
    "s390x": ("z17", "z16", "z15", "z14", "z13"),
}

#: Default hwcaps level per machine when the target's CPU is unknown ("v2 when unsure").
DEFAULT_HWCAPS_LEVEL: dict[str, str] = {"x86-64": "x86-64-v2", "ppc64le": "power9", "s390x": "z13"}

#: AT_PLATFORM strings ld.so substitutes for ``$PLATFORM`` by machine (kernel auxv).
DEFAULT_PLATFORM: dict[str, str] = {
    "x86-64": "x86_64",
    "x86": "i686",
    "aarch64": "aarch64",
    "ppc64le": "ppc64le",
    "ppc64": "ppc64",
    "s390x": "s390x",
    "arm": "v7l",
    "riscv64": "riscv64",
}

#: Built-in system directories of common glibc builds, used only when the target's ld.so
#: cannot be read (it embeds its own list; see ``linkaudit.loader.ldso.read_system_dirs``).
FALLBACK_SYSTEM_DIRS: dict[str, tuple[str, ...]] = {
    "x86-64": ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"),
    "aarch64": ("/lib/aarch64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"),
    "x86": ("/lib/i386-linux-gnu", "/usr/lib/i386-linux-gnu", "/lib", "/usr/lib"),
    "ppc64le": (
        "/lib/powerpc64le-linux-gnu",
        "/usr/lib/powerpc64le-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
    ),
    "s390x": ("/lib/s390x-linux-gnu", "/usr/lib/s390x-linux-gnu", "/lib64", "/usr/lib64", "/lib", "/usr/lib"),
}

_DST = re.compile(r"\$(ORIGIN|LIB|PLATFORM)\b|\$\{(ORIGIN|LIB|PLATFORM)\}")


@dataclass(frozen=True, slots=True)
class TargetEnvironment:
    """What the emulated loader knows about the target system.

    Attributes:
        sysroot: the directory that is ``/`` for the target (``"/"`` for the host).
        ld_library_path: LD_LIBRARY_PATH entries, in order (default: none).
        ld_preload: LD_PRELOAD objects (executable roots), in order.
        dlopen_global: objects opened with ``RTLD_GLOBAL`` before the import roots, in order.
        system_dirs: the ld.so's built-in directories; ``None`` = read them from the
            target's ld.so, falling back to ``FALLBACK_SYSTEM_DIRS``.
        hwcaps_level: highest glibc-hwcaps subdirectory to try (``"x86-64-v3"``), or
            ``"none"``; ``None`` = the default of ``DEFAULT_HWCAPS_LEVEL``.
        platform: ``$PLATFORM`` value; ``None`` = ``DEFAULT_PLATFORM`` of the machine.
        lib: ``$LIB`` value; ``None`` = derived from the first system directory
            (``/lib/x86_64-linux-gnu`` -> ``lib/x86_64-linux-gnu``, ``/lib64`` -> ``lib64``).
        use_cache: read ``etc/ld.so.cache`` under the sysroot.
        driverless: treat the GPU driver's libraries as absent even where present.
        interpreter: path of the Python interpreter executable for Python imports, or
            ``None`` for a generic CPython (no RPATH; provides the ``Py*``/``_Py*`` API).
        executable: the main executable for plain ``dlopen`` roots (its RPATH and
            ``$ORIGIN``), or ``None``.
        system_libraries: the libraries (names, as DT_NEEDED writes them) the target system
            provides, when it is a policy rather than the machine at hand (a manylinux
            wheel's users: glibc's libraries, libstdc++, ...); the ld.so.cache and the system
            directories are searched for those only, every other name resolves only through
            RPATH/RUNPATH/LD_LIBRARY_PATH.  ``None``: the system is the host (or ``sysroot``)
            as it is.
        system_policy: the name of that policy (``"manylinux_2_28_x86_64"``), for messages.
        musl_system_libraries: as ``system_libraries``, for the objects musl loads (a musllinux
            wheel's policy: ``libc.so``, ``libz.so.1``); ``None``: the host's (or sysroot's).
        musl_policy: the name of that policy (``"musllinux_1_2_x86_64"``), for messages.
    """

    sysroot: str = "/"
    ld_library_path: tuple[str, ...] = ()
    ld_preload: tuple[str, ...] = ()
    dlopen_global: tuple[str, ...] = ()
    system_dirs: tuple[str, ...] | None = None
    hwcaps_level: str | None = None
    platform: str | None = None
    lib: str | None = None
    use_cache: bool = True
    driverless: bool = True
    interpreter: str | None = None
    executable: str | None = None
    system_libraries: frozenset[str] | None = None
    system_policy: str | None = None
    musl_system_libraries: frozenset[str] | None = None
    musl_policy: str | None = None

    def hwcaps_subdirs(self, machine: str) -> tuple[str, ...]:
        """The glibc-hwcaps subdirectories tried for ``machine``, most capable first.

        Those above ``hwcaps_level`` are left out (the CPU would not support them).
        """
        subdirs = HWCAPS_SUBDIRS.get(machine, ())
        level = self.hwcaps_level or DEFAULT_HWCAPS_LEVEL.get(machine)
        if not subdirs or level == "none":
            return ()
        if level not in subdirs:
            level = subdirs[-1]
        return subdirs[subdirs.index(level) :]

    def platform_for(self, machine: str) -> str:
        """``$PLATFORM`` for ``machine``."""
        return self.platform or DEFAULT_PLATFORM.get(machine, machine)

    def lib_for(self, system_dirs: tuple[str, ...]) -> str:
        """``$LIB``: the library directory name of the target's glibc build."""
        if self.lib:
            return self.lib
        first = system_dirs[0] if system_dirs else "/lib"
        return first.strip("/") or "lib"


def expand_dst(text: str, origin: str, lib: str, platform: str) -> str:
    """Substitute ``$ORIGIN``, ``$LIB``, ``$PLATFORM`` (and the ``${X}`` forms) as ld.so does.

    Source: glibc ``elf/dl-load.c`` ``_dl_dst_substitute``; ``ld.so(8)`` "Dynamic string tokens".
    """
    if "$" not in text:
        return text

    def repl(m: re.Match[str]) -> str:
        token = m.group(1) or m.group(2)
        return origin if token == "ORIGIN" else lib if token == "LIB" else platform

    return _DST.sub(repl, text)
