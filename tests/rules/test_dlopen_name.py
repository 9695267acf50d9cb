"""dlopen-name over many names in .rodata stays linear: each name's versioned forms found by
bisection, not a scan of every other name; a sibling's pattern compiled only when an entry starts
like one (stop 27's hostile round 2: 20,000 names took 59 s, now about 2 s)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from linkaudit import audit
from linkaudit.rules import dlopen_name
from tests.formats.elfbuild import section_header_offset, shared_library


def _with_rodata(path: Path, names: list[bytes]) -> None:
    """elfbuild's shared library with a .rodata section of ``names`` (NUL-terminated)."""
    base = bytearray(shared_library("libx.so", ["libc.so.6"]))
    shoff, shnum = section_header_offset(base), struct.unpack_from("<H", base, 0x3C)[0]
    old = bytes(base[shoff : shoff + 64 * shnum])
    rodata = b"\0" + b"".join(n + b"\0" for n in names)
    shstr = b"\0.rodata\0.shstrtab\0"
    at_ro = len(base)
    data = base + rodata
    at_sh = len(data)
    data += shstr + b"\0" * (-(len(data) + len(shstr)) % 8)
    new_shoff = len(data)
    data += old + struct.pack("<IIQQQQIIQQ", 1, 1, 2, at_ro, at_ro, len(rodata), 0, 0, 1, 0)
    data += struct.pack("<IIQQQQIIQQ", 9, 3, 0, 0, at_sh, len(shstr), 0, 0, 1, 0)
    struct.pack_into("<Q", data, 0x28, new_shoff)
    struct.pack_into("<HH", data, 0x3C, shnum + 2, shnum + 1)
    struct.pack_into("<QQ", data, 64 + 32, len(data), len(data))  # the PT_LOAD covers the file
    path.write_bytes(bytes(data))


def test_many_dlopen_names_cost_linear_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 3000
    _with_rodata(tmp_path / "libx.so", [b"lib%07d.so" % i for i in range(n)] + [b"libcuda.so", b"libcuda.so.1"])
    (tmp_path / "libq-0123abcd.so.2").write_bytes(b"")  # a hash-renamed sibling of libq.so.2
    _with_rodata(tmp_path / "liby.so", [b"libq.so.2"])
    compiled = []
    real = dlopen_name.re.compile

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        compiled.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(dlopen_name.re, "compile", counted)
    findings = [
        f for f in audit([str(tmp_path / "libx.so"), str(tmp_path / "liby.so")]).findings if f.rule == "dlopen-name"
    ]
    siblings = [c for c in compiled if "[0-9a-f]{8}" in str(c)]
    assert len(siblings) == 1  # libq's pattern: the 3,000 names start like no entry (3,001 before)
    assert {(Path(f.file).name, f.subject, f.evidence["problem"]) for f in findings} == {
        ("liby.so", "libq.so.2", "hash-renamed-sibling"),
        ("libx.so", "(+2000 more)", "too-many-names"),  # past MAX_NAMES_PER_FILE, but for the driver names
    }  # libcuda.so beside libcuda.so.1: a fallback, not a finding


def test_the_directories_tried_name_no_empty_one() -> None:
    """An attempt by name alone (a library outside the target's policy) has no directory: it was
    listed as an empty first entry ("tried: , pillow.libs")."""
    from linkaudit.loader.ldso import Attempt, Outcome, Source
    from linkaudit.rules.dlopen_name import _directories

    attempts = [
        Attempt("libfoo.so", Source.SYSTEM, None, Outcome.OUTSIDE_TARGET),
        Attempt("/site/pillow.libs/libfoo.so", Source.RUNPATH, None, Outcome.MISSING),
    ]
    assert _directories(attempts) == ["/site/pillow.libs"]
