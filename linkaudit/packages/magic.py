"""First bytes that tell a package apart, kept in a module that imports nothing, so that telling
a plain binary from a package (``prepare.package_kind``, on every input) loads no archive reader."""

from __future__ import annotations

#: First bytes of the compressed streams a tarball may come in (gzip, bzip2, xz, zstd).
COMPRESSED = (b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd")
#: A Zstandard frame (the inner tarballs of a ``.conda``).
ZSTD = b"\x28\xb5\x2f\xfd"
