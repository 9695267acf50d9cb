"""Packages as inputs: wheels (``.whl``), conda packages (``.conda``, ``.tar.bz2``) and plain tarballs.

A package given on the command line is recognised by its magic bytes (zip ``PK\\x03\\x04``, gzip,
bzip2, xz, zstd, or a POSIX tar header) and *staged*: only the members that are binaries (their
own magic bytes say ELF, Mach-O, PE or ``ar``) and the symlinks between members are written,
streamed, into a private temporary directory laid out as the package installs — a wheel's files
at the root of a ``site-packages``, a conda package's at the root of its prefix, a wheel's
``NAME.data/purelib`` and ``platlib`` merged into that root.  Python sources, headers and data are
never written.  The audit (and the loader emulation, so that ``$ORIGIN`` resolves against the
member layout) then runs on the staged tree, and every path is reported as
``PACKAGE!member`` (``dist/torch-2.14.1-....whl!torch/lib/libc10.so``).

Several wheels given together are staged into one ``site-packages`` — the virtual site they make
once installed side by side, so that torch's ``$ORIGIN/../../nvidia/cu13/lib`` finds the files of
the ``nvidia-*`` wheels given with it — and several conda packages into one prefix.

Hostile archives are refused member by member, each refusal an ``InputError`` naming
``PACKAGE!member`` and the reason, while every other member is still audited:

* names that are absolute, carry a drive letter, a ``..`` component, a NUL or a backslash-separated
  ``..`` (path traversal);
* symlinks whose target leaves the package (checked on the name, then again on the real path of
  what was created), links to a missing member, device files;
* decompression bombs: a member larger than ``MAX_MEMBER_BYTES``, a zip member expanding more than
  ``MAX_RATIO`` times its compressed size, more than ``MAX_TOTAL_BYTES`` written in all, or more
  than ``MAX_MEMBERS`` members — sizes counted on the bytes actually decompressed, never taken
  from headers;
* corrupt archives (a bad CRC, a truncated stream) end with an error for the member or the
  archive.

The room, one module per job: ``limits`` (the budgets), ``staging`` (names checked, members
written, links made: what every kind shares), ``wheel``, ``conda``, ``tar`` and ``zipped`` (one
per container kind), ``staged`` (the result, and ``PACKAGE!member`` labels), ``planner`` (which
package is staged where).  Data flows one way: planner -> kinds -> staging -> limits.

``staging`` (and with it ``zipfile``, ``lzma``) is imported only once a package is among the
inputs: a plain file's audit never loads it (``tests/test_startup.py``).  ``staging.Progress`` is
the progress protocol ``audit`` takes.
"""

from __future__ import annotations

from .metadata import Distribution
from .planner import Installation
from .prepare import PACKAGE_SUFFIXES, PlannedInputs, package_kind, plan_each, plan_inputs, staged_inputs
from .site import Site, claimed_glibc, find_site, most_demanding, owner_in, site_targets, sites_below
from .staged import Staged

__all__ = [
    "PACKAGE_SUFFIXES",
    "Distribution",
    "Installation",
    "PlannedInputs",
    "Site",
    "Staged",
    "claimed_glibc",
    "find_site",
    "most_demanding",
    "owner_in",
    "package_kind",
    "plan_each",
    "plan_inputs",
    "site_targets",
    "sites_below",
    "staged_inputs",
]
