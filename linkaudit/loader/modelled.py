"""Libraries of a target system known by name only: the system libraries of a platform policy.

A ``manylinux_2_17_aarch64`` wheel is loaded, on its users' machines, by aarch64's
``ld-linux-aarch64.so.1`` with that system's ``libc.so.6``, ``libm.so.6``, ``libstdc++.so.6``
... — files the auditing host (x86_64, say) does not have.  The policy guarantees them
(auditwheel's ``lib_whitelist``), so the emulated loader finds each of them *in the model* when
the host's files cannot stand in: a ``Binary`` with the name, the requester's machine and no
contents, at a path that names the policy (``"<manylinux_2_17_aarch64>/libc.so.6"``).

Binding treats such a library as one whose definitions are unknown (``loader.binding``): a
versioned reference binds to the modelled library its version need names (``vn_file``); an
unversioned one binds to the first modelled library in scope only when no real object defines
it.  Version needs are not checked against it (it defines no versions); the symbol-version
ceilings of the policy still are (rule ``symbol-version``).
"""

from __future__ import annotations

import posixpath

from ..model import Binary, Format, Kind, Libc, SymbolTable


def modelled_path(policy: str, name: str) -> str:
    """The path a modelled library is reported at: ``"<manylinux_2_17_aarch64>/libc.so.6"``."""
    return f"<{policy}>/{name}"


def is_modelled(path: str) -> bool:
    """True for a path made by ``modelled_path``."""
    return path.startswith("<") and ">/" in path


def modelled_library(path: str, want: Binary) -> Binary:
    """A library of the target system known by name only, for a requester ``want`` (same ELF
    class, byte order, machine and libc; no DT_NEEDED, no symbols, no versions)."""
    name = posixpath.basename(path)
    return Binary(
        path=path,
        format=Format.ELF,
        machine=want.machine,
        bits=want.bits,
        endian=want.endian,
        os_abi=want.os_abi,
        interpreter=None,
        libc=want.libc if want.libc is not Libc.NONE else Libc.UNKNOWN,
        kind=Kind.SHARED_LIBRARY,
        soname=name,
        needed=(),
        rpath=(),
        runpath=(),
        flags=0,
        flags_1=0,
        bind_now=False,
        version_needs=(),
        version_definitions=(),
        symbols=SymbolTable(),
    )
