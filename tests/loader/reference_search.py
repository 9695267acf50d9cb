"""The unshared reference for the equivalence tests: ld.so's search as one function per call.

This is ``linkaudit.loader.ldso.search`` as it was before searches were memoised (issue 14):
every call walks the whole search — already-loaded names, the driver check, every directory —
with nothing kept between calls.  ``tests/loader/test_scale.py`` runs the emulation with it in
place of the memoised search and asserts the same loads, bindings and findings.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence

from linkaudit.loader.ldcache import expected_cache_flags
from linkaudit.loader.ldso import (
    MAX_ATTEMPTS,
    RELATIVE_TO_CWD,
    Attempt,
    Outcome,
    Requester,
    Resolution,
    SearchContext,
    Source,
    _verify,
)
from linkaudit.loader.target import expand_dst
from linkaudit.model import DF_1_NODEFLIB, Binary


def reference_search(
    name: str,
    requester: Requester,
    main: Requester | None,
    loaded: Mapping[str, str],
    ctx: SearchContext,
) -> tuple[Resolution, Binary | None]:
    """Resolve one DT_NEEDED ``name`` of ``requester`` the way ld.so does.

    Args:
        name: the DT_NEEDED string.
        requester: the object that needs it, with its loader chain.
        main: the main executable (for its DT_RPATH), or ``None``.
        loaded: names already loaded -> path (SONAMEs and the names they were loaded by).
        ctx: target, file-system view, cache, system directories.

    Returns:
        The ``Resolution`` (with every path tried) and the ``Binary`` found, if any.
    """
    want = requester.binary
    machine = want.machine
    platform = ctx.env.platform_for(machine)
    attempts: list[Attempt] = []
    skipped = [0]  # attempts beyond MAX_ATTEMPTS, counted, not kept

    def expand(text: str, origin: str) -> str:
        return expand_dst(text, origin, ctx.lib, platform)

    def done(
        path: str | None, source: Source | None, owner: str | None, found: Binary | None, error: str | None = None
    ) -> tuple[Resolution, Binary | None]:
        return Resolution(name, requester.path, path, source, owner, tuple(attempts), error, skipped[0]), found

    if name in loaded:
        return done(loaded[name], Source.LOADED, None, None)

    if ctx.env.driverless and ctx.is_driver(name):
        attempts.append(Attempt(name, Source.SYSTEM, None, Outcome.DRIVER_ABSENT, "GPU driver library (driverless)"))
        return done(None, None, None, None)

    if "/" in name:
        path = expand(name, requester.origin)
        if not path.startswith("/"):  # from the process's working directory, which no file tells
            attempts.append(Attempt(path, Source.PATH, None, Outcome.MISSING, RELATIVE_TO_CWD))
            return done(None, None, None, None)
        outcome, detail, found = _verify(ctx.fs, path, want)
        attempts.append(Attempt(path, Source.PATH, None, outcome, detail))
        if outcome is Outcome.FOUND:
            return done(path, Source.PATH, None, found)
        return done(None, None, None, None, detail if outcome is Outcome.INVALID else None)

    hwcaps = ctx.env.hwcaps_subdirs(machine)

    def record(attempt: Attempt) -> None:
        if len(attempts) < MAX_ATTEMPTS:
            attempts.append(attempt)
        else:
            skipped[0] += 1

    def try_dirs(
        dirs: Sequence[str], source: Source, owner: Requester | None
    ) -> tuple[str, Binary | None, str | None] | None:
        for directory in dirs:
            if not directory:
                directory = "."  # an empty entry is the current directory
            if not ctx.fs.is_dir(directory):
                # ld.so marks a directory that does not exist and never looks in it again.
                record(
                    Attempt(
                        posixpath.join(directory, name),
                        source,
                        owner.path if owner else None,
                        Outcome.MISSING,
                        "no such directory",
                    )
                )
                continue
            candidates = [posixpath.join(directory, "glibc-hwcaps", h, name) for h in hwcaps]
            candidates.append(posixpath.join(directory, name))
            for path in candidates:
                outcome, detail, found = _verify(ctx.fs, path, want)
                if outcome is Outcome.MISSING and path != candidates[-1]:
                    continue  # absent hwcaps subdirectories are not worth listing
                record(Attempt(path, source, owner.path if owner else None, outcome, detail))
                if outcome is Outcome.FOUND:
                    return path, found, None
                if outcome is Outcome.INVALID:
                    return path, None, detail
        return None

    def result(
        hit: tuple[str, Binary | None, str | None], source: Source, owner: Requester | None
    ) -> tuple[Resolution, Binary | None]:
        path, found, error = hit
        if error is not None:
            return done(None, None, None, None, f"{path}: {error}")
        return done(path, source, owner.path if owner else None, found)

    binary = requester.binary
    if not binary.runpath:
        seen_main = False
        chain: Requester | None = requester
        while chain is not None:
            if chain.binary.rpath and not chain.binary.runpath:
                hit = try_dirs([expand(d, chain.origin) for d in chain.binary.rpath], Source.RPATH, chain)
                if hit:
                    return result(hit, Source.RPATH, chain)
            seen_main |= chain is main
            chain = chain.loader
        if main is not None and not seen_main and main.binary.rpath and not main.binary.runpath:
            hit = try_dirs([expand(d, main.origin) for d in main.binary.rpath], Source.RPATH, main)
            if hit:
                return result(hit, Source.RPATH, main)

    if ctx.env.ld_library_path:
        hit = try_dirs([expand(d, requester.origin) for d in ctx.env.ld_library_path], Source.LD_LIBRARY_PATH, None)
        if hit:
            return result(hit, Source.LD_LIBRARY_PATH, None)

    if binary.runpath:
        hit = try_dirs([expand(d, requester.origin) for d in binary.runpath], Source.RUNPATH, requester)
        if hit:
            return result(hit, Source.RUNPATH, requester)

    allowed = ctx.env.system_libraries
    driver = not ctx.env.driverless and ctx.is_driver(name)  # --with-driver: the driver's are the system's
    if (
        allowed is not None
        and name not in allowed
        and not driver
        and name != (ctx.rtld and posixpath.basename(ctx.rtld))
    ):
        record(
            Attempt(
                name,
                Source.SYSTEM,
                None,
                Outcome.OUTSIDE_TARGET,
                f"not one of the system libraries of the target environment ({ctx.env.system_policy or 'policy'})",
            )
        )
        return done(None, None, None, None)

    nodeflib = bool(binary.flags_1 & DF_1_NODEFLIB)
    if ctx.cache is not None:
        entry = ctx.cache.lookup(name, expected_cache_flags(machine, binary.bits or 64), hwcaps)
        if entry is not None:
            in_system = posixpath.dirname(entry.path) in ctx.system_dirs
            if nodeflib and in_system:
                record(Attempt(entry.path, Source.CACHE, None, Outcome.SKIPPED_NODEFLIB, "DF_1_NODEFLIB"))
            else:
                outcome, detail, found = _verify(ctx.fs, entry.path, want)
                record(Attempt(entry.path, Source.CACHE, None, outcome, detail))
                if outcome is Outcome.FOUND:
                    return done(entry.path, Source.CACHE, None, found)
                if outcome is Outcome.INVALID:
                    return done(None, None, None, None, f"{entry.path}: {detail}")

    if nodeflib:
        attempts.append(
            Attempt(":".join(ctx.system_dirs), Source.SYSTEM, None, Outcome.SKIPPED_NODEFLIB, "DF_1_NODEFLIB")
        )
    else:
        hit = try_dirs(ctx.system_dirs, Source.SYSTEM, None)
        if hit:
            return result(hit, Source.SYSTEM, None)
    return done(None, None, None, None)
