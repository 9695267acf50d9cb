"""``external-library``: a DT_NEEDED library that the package does not ship and its policy does not
let it take from the system."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..config.profiles import get_profile
from ..context import AuditContext
from ..model import Libc
from ..report import Finding, Severity
from .base import ELF_ONLY, Rule, preview
from .data import driver_index
from .wheel_libc import tag_libc

#: The ELF interpreter (the dynamic loader) is part of every glibc system.
_INTERPRETERS = ("ld-linux", "ld64.so", "ld.so", "ld-musl-")


def _is_musl_loader(name: str) -> bool:
    """``loader.musl.is_loader_name`` (imported for a musl input only: a glibc run never loads it)."""
    from ..loader.musl import is_loader_name

    return is_loader_name(name, "")


class ExternalLibrary(Rule):
    id = "external-library"
    needs_loader = True
    formats = ELF_ONLY
    severity = Severity.ERROR
    summary = "a DT_NEEDED library neither shipped in the package nor on its policy's list of system libraries"
    explain = """\
A manylinux wheel may take only a short list of libraries from the system it is
installed on — glibc's own (libc.so.6, libm.so.6, libpthread.so.0, ...), libgcc_s,
libstdc++, libz, libexpat, libGL and a few X11 and GLib libraries (PEP 599, PEP
600; auditwheel's policy file) — and must ship every other library it needs.
A library found on the build machine (a build container's /usr/lib64, a CUDA
toolkit, a conda prefix) is not on the user's machine: "ImportError: libX.so.1:
cannot open shared object file". This is what auditwheel checks, reported here
with where the library was found instead.

The policy is the profile given with --profile / profile = when it has such a
list (for directories of files as well), else the wheel's own platform tag (a
manylinux_2_28 wheel: the manylinux_2_28 list). A library resolves as shipped when the loader
emulation finds it among the inputs: inside the package, or in another package
given with it (the nvidia-* wheels torch's RPATH points into), or in the installed
site the inputs lie in (another distribution of that site-packages). A library found
nowhere is left to library-not-found; the GPU driver's libraries to driver-link.

Fix: vendor it (auditwheel repair grafts it under a hashed name), depend on the
wheel that ships it and reach it by RPATH, or, for a dependency the installer
guarantees (auditwheel repair --exclude), suppress the finding with that reason.
"""
    evidence = {
        "needed": "the DT_NEEDED entry",
        "policy": "the policy whose list it is not on (manylinux_2_28)",
        "policy_source": "where the policy comes from: the wheel's platform tag, or the configured profile",
        "resolved": "where the loader emulation found it on the auditing machine",
        "allowed": "the policy's list of system libraries",
    }

    def check(self, context: AuditContext) -> Iterator[Finding]:
        linkage = context.linkage
        if linkage is None:
            return
        configured = get_profile(context.config.profile) if context.config.profile else None
        drivers = driver_index()
        inputs = {os.path.normpath(b.path) for b in context.binaries}
        resolved: dict[tuple[str, str], str] = {}
        for part in linkage.parts():
            for (requester, needed), res in part.part.own_resolutions().items():
                if res.path is not None:
                    resolved.setdefault((linkage.audited.get(requester, requester), needed), res.path)
        for binary in context.binaries:
            promised = context.wheel_policies.get(binary.path)
            if configured is not None and configured.allowed_libraries:  # the configuration wins
                policy, allowed = configured.name, frozenset(configured.allowed_libraries)
                source = f"--profile {configured.name}"
            elif promised is not None and promised.allowed_libraries:
                policy, allowed = promised.policy or promised.tag, frozenset(promised.allowed_libraries)
                source = promised.said
            else:
                continue
            if tag_libc(policy) not in (None, binary.libc) and binary.libc is not Libc.UNKNOWN:
                continue  # linked against the other C library: wheel-libc says so, and vendoring cannot help
            for needed in (n.name for n in binary.needed):
                if needed in allowed or needed.startswith(_INTERPRETERS) or drivers.is_driver(needed):
                    continue
                if binary.libc is Libc.MUSL and _is_musl_loader(needed):
                    continue  # musl's libc.so, libm.so, libc.musl-x86_64.so.1...: the loader itself (load_library)
                where = resolved.get((binary.path, needed))
                if where is None or os.path.normpath(where) in inputs or linkage.audited.get(where) in inputs:
                    continue  # not found: library-not-found; found among the inputs: shipped
                if context.in_site(where):
                    continue  # installed beside it in the site given (another distribution's)
                yield self.finding(
                    binary,
                    needed,
                    f"DT_NEEDED {needed} is not shipped with the package and is not one of the system "
                    f"libraries {policy} allows ({preview(sorted(allowed), 3)}); it resolves here only to "
                    f"{where}, which users' machines need not have — vendor it (auditwheel repair) or "
                    "depend on the package that ships it",
                    {
                        "needed": needed,
                        "policy": policy,
                        "policy_source": source,
                        "resolved": where,
                        "allowed": sorted(allowed),
                    },
                )
