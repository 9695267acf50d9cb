"""Files named like a shared library that hold no binary are named with the reason, not dropped.

The whole kind: in a directory, a wheel, a tarball and a conda package; empty, a Git LFS
pointer, random bytes, text; a GNU ld script passed over; a symlink to a bad file said once,
by the real name; a platform wheel with no binary at all a warning (auditwheel's "This does
not look like a platform wheel"), a pure one a note.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import zipfile
from pathlib import Path

import pytest

from linkaudit.formats.libnames import library_named, not_a_library

from .output.schema import validate_report

HELPER = Path(__file__).resolve().parents[1] / "sample_bins/loader/pyext/lib/libhelper.so"
LFS = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"ab" * 32 + b"\nsize 123456\n"
LD_SCRIPT = b"/* GNU ld script\n   Use the shared library.  */\nOUTPUT_FORMAT(elf64-x86-64)\nGROUP ( /lib/libc.so.6 )\n"
GARBAGE = bytes((i * 151 + 7) % 256 for i in range(3000))

#: member name -> (bytes, the start of the reason it is refused for, or None: passed over)
MEMBERS: dict[str, tuple[bytes, str | None]] = {
    "pkg/_ext.cpython-312-x86_64-linux-gnu.so": (GARBAGE, "named like a shared library, but holds data"),
    "pkg/libempty.so.1": (b"", "named like a shared library, but empty (0 bytes)"),
    "pkg/libbig.so": (LFS, "named like a shared library, but a Git LFS pointer"),
    "pkg/readme.so.txt": (b"not a library name", None),
    "pkg/libc.so": (LD_SCRIPT, None),
    "pkg/helper.DLL": (b"MZ? no: text", None),
    "pkg/data.bin": (GARBAGE, None),
}


def _doc(run_cli, *args: str) -> dict:  # type: ignore[no-untyped-def, type-arg]
    doc = json.loads(run_cli("check", "--no-config", "--no-loader", "--format", "json", *args).stdout)
    validate_report(doc)
    return doc  # type: ignore[no-any-return]


def _refused(doc: dict, prefix: str) -> dict[str, str]:  # type: ignore[type-arg]
    return {
        f["file"][len(prefix) :]: f["evidence"]["reason"]
        for f in doc["findings"]
        if f["rule"] == "unreadable-input" and f["file"].startswith(prefix)
    }


def _expected() -> dict[str, str]:
    return {name: why for name, (_data, why) in MEMBERS.items() if why is not None}


def _check(refused: dict[str, str]) -> None:
    expected = _expected()
    # helper.DLL starts with "MZ": a PE to the sniffer, refused by the PE reader as one
    assert set(refused) == set(expected) | {"pkg/helper.DLL"}
    assert not refused["pkg/helper.DLL"].startswith("named like")
    for name, start in expected.items():
        assert refused[name].startswith(start), (name, refused[name])


@pytest.mark.parametrize(
    ("name", "yes"),
    [
        ("libz.so", True),
        ("libz.so.1", True),
        ("libz.so.1.2.13", True),
        ("_ext.cpython-312-x86_64-linux-gnu.so", True),
        ("zlib1.dll", True),
        ("ZLIB1.DLL", True),
        ("_ext.cp312-win_amd64.pyd", True),
        ("libz.1.dylib", True),
        ("libz.so.txt", False),
        ("libz.a", False),
        ("libz.so.1a", False),
        ("so", False),
    ],
)
def test_what_is_named_like_a_library(name: str, yes: bool) -> None:
    assert library_named(name) is yes


def test_why_a_file_named_like_a_library_is_none() -> None:
    assert not_a_library(LD_SCRIPT) is None
    assert not_a_library(b"INPUT(libncurses.so.6 -ltinfo)\n") is None
    assert "empty" in (not_a_library(b"") or "")
    assert "Git LFS pointer" in (not_a_library(LFS) or "")
    text = not_a_library(b"#!/bin/sh\necho not a library\n") or ""
    assert "holds text" in text and "23 21 2f 62" in text
    assert "holds data" in (not_a_library(GARBAGE) or "")
    assert "holds data" in (not_a_library(b"INPUT(\0") or ""), "a NUL byte: not a linker script"


def test_in_a_directory(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for name, (data, _why) in MEMBERS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(data)
    (tmp_path / "pkg/libhelper.so").write_bytes(HELPER.read_bytes())
    os.symlink("libempty.so.1", tmp_path / "pkg/libempty.so")  # sorted first: the real name is said
    doc = _doc(run_cli, str(tmp_path))
    refused = _refused(doc, f"{tmp_path}/")
    _check(refused)
    assert "pkg/libempty.so" not in refused
    audited = [f["path"] for f in doc["files"] if f["status"] == "audited"]
    assert audited == [str(tmp_path / "pkg/libhelper.so")]


def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_in_a_wheel(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    members = {name: data for name, (data, _why) in MEMBERS.items()}
    members["pkg/libhelper.so"] = HELPER.read_bytes()
    wheel = _wheel(tmp_path / "pkg-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", members)
    doc = _doc(run_cli, str(wheel))
    _check(_refused(doc, f"{wheel}!"))
    assert doc["summary"]["audited"] == 1


def test_in_a_tarball_and_a_conda_package(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    tarball = tmp_path / "pkg.tar.gz"
    with tarfile.open(tarball, "w:gz") as tf:
        for name, (data, _why) in MEMBERS.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    doc = _doc(run_cli, str(tarball))
    _check(_refused(doc, f"{tarball}!"))
    conda = tmp_path / "pkg-1.0-0.tar.bz2"
    with tarfile.open(conda, "w:bz2") as tf:
        for name, (data, _why) in MEMBERS.items():
            info = tarfile.TarInfo(name.replace("pkg/", "lib/"))
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        index = b'{"name": "pkg", "version": "1.0", "build": "0", "depends": []}'
        info = tarfile.TarInfo("info/index.json")
        info.size = len(index)
        tf.addfile(info, io.BytesIO(index))
    doc = _doc(run_cli, str(conda))
    refused = _refused(doc, f"{conda}!")
    assert set(refused) >= {"lib/libempty.so.1", "lib/libbig.so", "lib/_ext.cpython-312-x86_64-linux-gnu.so"}
    assert "lib/libc.so" not in refused and "lib/data.bin" not in refused


def test_a_platform_wheel_without_a_binary_is_a_warning(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    platform = _wheel(tmp_path / "p-1.0-cp312-cp312-manylinux_2_17_x86_64.whl", {"p/__init__.py": b""})
    pure = _wheel(tmp_path / "q-1.0-py3-none-any.whl", {"q/__init__.py": b""})
    notes = {
        (f["file"], f["severity"])
        for f in _doc(run_cli, str(platform), str(pure))["findings"]
        if f["rule"] == "no-binaries"
    }
    assert notes == {(str(platform), "warning"), ("site-packages", "note")}  # the site they make together
    alone = {(f["file"], f["severity"]) for f in _doc(run_cli, str(pure))["findings"] if f["rule"] == "no-binaries"}
    assert alone == {(str(pure), "note")}
    warning = next(f["message"] for f in _doc(run_cli, str(platform))["findings"] if f["rule"] == "no-binaries")
    assert "manylinux_2_17_x86_64" in warning and "py3-none-any" in warning


def test_a_zip_symlink_named_like_a_library(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """pip writes no symlink from a wheel: a member whose zip mode says symlink becomes a regular
    file holding the target's text, which the loader refuses."""
    wheel = tmp_path / "pkg-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("pkg/libhelper.so", HELPER.read_bytes())
        for name in ("pkg/libhelper.so.1", "pkg/helper.link"):
            link = zipfile.ZipInfo(name)
            link.external_attr = 0o120777 << 16
            zf.writestr(link, b"libhelper.so")
    refused = _refused(_doc(run_cli, str(wheel)), f"{wheel}!")
    assert list(refused) == ["pkg/libhelper.so.1"]  # helper.link is named like no library: passed over
    assert refused["pkg/libhelper.so.1"].startswith("a symlink in the zip (to 'libhelper.so'): pip installs it")


def test_a_fifo_or_socket_named_like_a_library_is_named(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A FIFO or a socket named like a library, in a directory given: named, never opened (the walk
    must not block on the FIFO), as a tarball's FIFO member is; other special files pass quietly."""
    import socket

    os.mkfifo(tmp_path / "libfifo.so")
    os.mkfifo(tmp_path / "pipe")  # named like nothing: passed over
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "libsock.so.1"))
    except OSError:  # a path too long for a socket here
        sock.close()
        pytest.skip("cannot bind a unix socket in the temporary directory")
    try:
        refused = _refused(_doc(run_cli, str(tmp_path)), f"{tmp_path}/")
    finally:
        sock.close()
    assert refused == {
        "libfifo.so": "named like a shared library, but a FIFO (named pipe), never read",
        "libsock.so.1": "named like a shared library, but a socket, never read",
    }


def test_past_a_thousand_refused_members_a_package_counts_the_rest(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A wheel of 1,200 zip symlinks named like libraries: the first 1,000 are named, the other 200
    counted in one error on the wheel (200,000 of them made 200,000 findings: 2.35 GB for the JSON
    report; stop 27's hostile round 3); the exit status is the same."""
    from linkaudit.packages.staging import MAX_REFUSALS_NAMED

    wheel = tmp_path / "evil-1.0-cp312-cp312-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for i in range(MAX_REFUSALS_NAMED + 200):
            link = zipfile.ZipInfo(f"e/l{i}.so")
            link.external_attr = 0o120777 << 16
            zf.writestr(link, b"libz.so.1")
    r = run_cli("check", "--no-config", "--no-loader", "--format", "json", str(wheel))
    assert r.exit_code == 2
    findings = [f for f in json.loads(r.stdout)["findings"] if f["rule"] == "unreadable-input"]
    named = [f for f in findings if f["file"].startswith(f"{wheel}!")]
    (counted,) = [f for f in findings if f["file"] == str(wheel)]
    assert len(named) == MAX_REFUSALS_NAMED
    assert counted["evidence"]["reason"].startswith("200 more members refused, not named one by one")
