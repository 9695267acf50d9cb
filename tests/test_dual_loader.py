"""A wheel tagged for glibc and musl at once (``manylinux_2_17_x86_64.musllinux_1_1_x86_64``, as
libc-free and static builds are) is loaded by both loaders: what musl alone refuses is reported too."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from tests.loader.dagbuild import Lib, elf_bytes

from .output.schema import validate_report

DUAL = "manylinux_2_17_x86_64.manylinux2014_x86_64.musllinux_1_1_x86_64"


def _not_found(run_cli, tmp_path: Path, tags: str, needed: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    wheel = tmp_path / f"st-1.0-py3-none-{tags}.whl"
    with zipfile.ZipFile(wheel, "w") as zf:  # a library naming no C library: neither loader's by itself
        zf.writestr("st/libs.so", elf_bytes(Lib("libs.so", soname="libs.so", needed=(needed,))))
    doc = json.loads(run_cli("check", "--no-config", "--format", "json", str(wheel)).stdout)
    validate_report(doc)
    return [f for f in doc["findings"] if f["rule"] == "library-not-found"]


def test_a_library_only_glibc_systems_provide(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """libstdc++.so.6 is a manylinux system library and no musllinux one (musllinux_1_1: libc.so, libz.so.1)."""
    (f,) = _not_found(run_cli, tmp_path, DUAL, "libstdc++.so.6")
    assert f["subject"] == "libstdc++.so.6"
    assert "Error loading shared library libstdc++.so.6" in f["message"]  # musl's words (ldso/dynlink.c)
    assert _not_found(run_cli, tmp_path, "manylinux_2_17_x86_64", "libstdc++.so.6") == []


def test_a_library_both_provide_is_found_by_both(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert _not_found(run_cli, tmp_path, DUAL, "libz.so.1") == []


def test_a_library_neither_provides_is_reported_once(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (f,) = _not_found(run_cli, tmp_path, DUAL, "libnowhere.so.1")
    assert "cannot open shared object file" in f["message"]  # glibc's, first; musl's is the same file and subject
