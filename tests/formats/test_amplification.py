"""Amplification: small inputs that name far more than they hold get a named error or a bounded result.

Each shape comes from a committed generator (``elfbuild``, ``arbuild``) and runs in a child
process under ``RLIMIT_AS`` (``LIMIT``): before the budgets, the DT_NEEDED and ``.dynsym`` shapes
died there of ``MemoryError`` (exit 3, "internal error", the other inputs lost) — or used
gigabytes without the limit — and the thin archive read its member 1,500 times.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from linkaudit import read
from linkaudit.errors import InputError
from linkaudit.formats import archive, elf

from .arbuild import repeated_member, thin_archive
from .bombbuild import gzip_tar_bomb, lying_deflate_wheel, many_members_ar, many_members_tar, zstd_conda_bomb
from .elfbuild import DT_NEEDED, build, needed_into_one_string, sym, symbols_into_one_string

ROOT = Path(__file__).resolve().parents[2]
GOOD = ROOT / "sample_bins/fixed/libnvrtc.so.12"
#: Address space of each child: far above what any of these inputs needs once budgeted.
LIMIT = 512 << 20
#: CPU time of each child, seconds: minutes above what any of these inputs needs (a hang is killed).
CPU_SECONDS = 300
COMMANDS = {
    "check": ["check", "--format", "json"],
    "tree": ["tree", "--format", "json"],
    "show": ["show", "--symbols", "--format", "json"],
}


def limited(*args: str) -> subprocess.CompletedProcess[str]:
    """``linkaudit ARGS`` in a child process whose address space is capped at ``LIMIT``."""

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))
        resource.setrlimit(resource.RLIMIT_CPU, (CPU_SECONDS, CPU_SECONDS))  # a hang ends in SIGXCPU

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "linkaudit", *args], capture_output=True, text=True, preexec_fn=cap, env=env, timeout=600
    )


def plain_symbols(count: int) -> bytes:
    """A file with ``count`` symbols, each its own 19-byte name: what a real table looks like."""
    dynstr = b"\0libc.so.6\0" + b"".join(b"name_%014d\0" % i for i in range(count))
    return build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + b"".join(sym(11 + 20 * i) for i in range(count)))


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize(
    ("shape", "what"),
    [(needed_into_one_string, "DT_NEEDED"), (symbols_into_one_string, "60000 symbol names")],
    ids=["needed", "dynsym"],
)
def test_names_into_one_string_are_refused_by_name_under_a_memory_limit(
    tmp_path: Path, command: str, shape: object, what: str
) -> None:
    hostile = tmp_path / "libhostile.so"
    hostile.write_bytes(shape())  # type: ignore[operator]
    r = limited(*COMMANDS[command], str(hostile), str(GOOD))
    assert r.returncode == 2, r.stderr[-2000:]
    assert "internal error" not in r.stderr and "MemoryError" not in r.stderr
    text = r.stdout + r.stderr
    assert f"{what}: the file's names spell out more than" in text
    if command == "check":
        doc = json.loads(r.stdout)
        assert str(GOOD) in {f["path"] for f in doc["files"]}  # the other input is still audited
        assert {f["file"] for f in doc["findings"] if f["rule"] == "unreadable-input"} == {str(hostile)}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_real_shaped_table_of_60000_names_is_read_under_the_same_limit(tmp_path: Path, command: str) -> None:
    lib = tmp_path / "libmany.so"
    lib.write_bytes(plain_symbols(60_000))
    r = limited(*COMMANDS[command], str(lib))
    assert r.returncode in (0, 1), r.stderr[-2000:]
    if command == "show":
        (binary,) = json.loads(r.stdout)["binaries"]
        assert len(binary["symbols"]) == 60_000


def test_the_budget_is_relative_to_the_string_tables(tmp_path: Path) -> None:
    """Names may spell 1 MiB more than twice their tables: 16 suffixes of a 64 KiB string pass, 60,000 do not."""
    ok = tmp_path / "libok.so"
    ok.write_bytes(symbols_into_one_string(16, 65_535))
    (b,) = read(str(ok))
    assert len(b.symbols) == 16
    with pytest.raises(InputError, match="names spell out more than"):
        read(str(_write(tmp_path / "libbad.so", symbols_into_one_string(60_000, 65_535))))


def test_symbols_naming_one_inner_offset_share_one_decoded_name(tmp_path: Path) -> None:
    """10,000 symbols naming the same suffix of a 64 KiB string: one ``str``, not 10,000 copies."""
    dynstr = b"\0libc.so.6\0" + b"x" * 65_535 + b"\0"
    lib = _write(tmp_path / "libshared.so", build(dynstr, [(DT_NEEDED, 1)], dynsym=sym(0, 0) + sym(12) * 10_000))
    (b,) = read(str(lib))
    names = [s.name for s in b.symbols]
    assert len(names) == 10_000 and len({id(n) for n in names}) == 1
    assert b.symbols.name_at(5) is names[0]
    assert len({id(s.name) for s in b.symbols.undefined()}) == 1


def test_dynamic_names_have_their_own_tighter_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(elf, "MAX_DYNAMIC_NAME_BYTES", 100)
    lib = _write(tmp_path / "lib.so", needed_into_one_string(20, 60))  # 20 names of 60..3 bytes
    with pytest.raises(InputError, match=r"DT_NEEDED: the file's names spell out more than 100 bytes"):
        read(str(lib))


def test_dynamic_names_are_bounded_by_their_string_table(tmp_path: Path) -> None:
    """16 KiB + twice the table: 900 suffixes of a 1.2 KB string (540 KB of names) are refused, 24 read."""
    with pytest.raises(
        InputError, match=r"DT_NEEDED: the file's names spell out more than 18788 bytes"
    ):  # 16,384 + 2 x 1,202
        read(str(_write(tmp_path / "libbad.so", needed_into_one_string(900, 1_200))))
    (b,) = read(str(_write(tmp_path / "libok.so", needed_into_one_string(24, 1_200))))
    assert len(b.needed) == 24


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


# --- thin archives -----------------------------------------------------------------------------


def test_a_thin_archive_naming_one_large_member_1500_times_reads_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    member = _write(tmp_path / "big.o", plain_symbols(60_000))
    lib = _write(tmp_path / "libthin.a", repeated_member(b"big.o", member.stat().st_size, 1500))
    calls: list[str] = []
    real = archive.read_elf

    def counting(path: str, *args: object, **kwargs: object) -> object:
        calls.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(archive, "read_elf", counting)
    binaries = read(str(lib))
    assert len(calls) == 1
    assert [(b.member, b.member_file) for b in binaries] == [("big.o", str(member))]


def test_a_thin_archive_naming_one_large_member_1500_times_is_audited_under_a_memory_limit(tmp_path: Path) -> None:
    member = _write(tmp_path / "big.o", plain_symbols(60_000))
    lib = _write(tmp_path / "libthin.a", repeated_member(b"big.o", member.stat().st_size, 1500))
    r = limited("check", "--format", "json", str(lib))
    assert r.returncode in (0, 1), r.stderr[-2000:]
    assert len(json.loads(r.stdout)["files"]) == 1


def test_thin_archive_budgets_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a.o", "b.o", "c.o"):
        shutil.copyfile(ROOT / "sample_bins/objects/thin/thin_a.o", tmp_path / name)
    size = (tmp_path / "a.o").stat().st_size
    lib = _write(tmp_path / "libthin.a", thin_archive([(b"a.o", size), (b"b.o", size), (b"c.o", size)]))
    assert len(read(str(lib))) == 3
    monkeypatch.setattr(archive, "MAX_THIN_MEMBERS", 2)
    with pytest.raises(InputError, match="thin archive names more than 2 members"):
        read(str(lib))
    monkeypatch.setattr(archive, "MAX_THIN_MEMBERS", 10)
    monkeypatch.setattr(archive, "MAX_THIN_BYTES", 2 * size)
    with pytest.raises(InputError, match="thin archive members total more than"):
        read(str(lib))


def test_a_nul_in_a_thin_member_name_is_said_so(tmp_path: Path) -> None:
    lib = _write(tmp_path / "libthin.a", thin_archive([(b"a\0b.o", 100), (b"long_member_name\0x.o", 100)]))
    with pytest.raises(InputError) as info:
        read(str(lib))
    assert info.value.reason == "thin archive member name a\\x00b.o holds a NUL byte"
    assert "embedded null byte" not in str(info.value)


def test_a_thin_member_that_shrinks_while_read_is_the_archives_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member file that reads shorter than its size (a ``/sys`` file; one truncated mid-read) was
    reported under the member's host path, which no input names: it is the archive's error, naming
    the member, as its other member errors are."""
    shutil.copyfile(ROOT / "sample_bins/objects/thin/thin_a.o", tmp_path / "a.o")
    size = (tmp_path / "a.o").stat().st_size
    lib = _write(tmp_path / "libthin.a", thin_archive([(b"a.o", size)]))
    real = archive.file_bytes
    monkeypatch.setattr(archive, "file_bytes", lambda fd, path, n: real(fd, path, n + 4096))  # as it was when opened
    with pytest.raises(InputError) as info:
        read(str(lib))
    assert info.value.path == str(lib)
    assert info.value.reason.startswith("thin archive member a.o: the file shrank while being read")


# --- package bombs and member floods ----------------------------------------------------------

#: What each bomb expands to: more than the child's whole address space.
BOMB = 768 << 20
HELPER = (ROOT / "sample_bins/loader/pyext/lib/libhelper.so").read_bytes()
BOMBS = {
    "deflate-lying-size.whl": lambda p: lying_deflate_wheel(p, BOMB, extra={"lib/libhelper.so": HELPER}),
    "zeros.tar.gz": lambda p: gzip_tar_bomb(p, BOMB),
    "zeros-1.0-0.conda": lambda p: zstd_conda_bomb(p, BOMB),
}


@pytest.mark.parametrize("name", BOMBS)
def test_package_bombs_are_refused_by_name_under_a_memory_limit(tmp_path: Path, name: str) -> None:
    """768 MiB of zeros behind a zip header declaring 4 KiB, in a gzip tarball, in a conda zstd
    stream: each refused by name as a decompression bomb (exit 2) inside a 512 MiB address space,
    and the library beside the wheel's bomb, and a good file given after them, still audited."""
    bomb = BOMBS[name](tmp_path / ("bomb-1.0-py3-none-any.whl" if name.endswith(".whl") else name))
    r = limited("check", "--format", "json", str(bomb), str(GOOD))
    assert r.returncode == 2, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    status = {f["path"]: (f["status"], f["error"] or "") for f in doc["files"]}
    assert status[f"{bomb}!lib/bomb.so"][0] == "unreadable"
    reason = status[f"{bomb}!lib/bomb.so"][1]
    # zip: inflated no further than the 4 KiB its headers declare, then its CRC fails; the others:
    # stopped at the package's budget, counted on the bytes actually decompressed
    assert ("Bad CRC-32" if name.endswith(".whl") else "decompression bomb") in reason, reason
    assert status[str(GOOD)][0] == "audited"
    if name.endswith(".whl"):
        assert status[f"{bomb}!lib/libhelper.so"][0] == "audited"


def test_many_members_are_walked_in_linear_time_under_the_limits(tmp_path: Path) -> None:
    """50,000 tarball members and a 200,000-member ``ar`` archive (12 MB of headers): read within
    the memory and CPU limits, with nothing to audit said so (a note, exit 0)."""
    tar = many_members_tar(tmp_path / "many.tar", 50_000, b"hi\n")
    ar = _write(tmp_path / "libmany.a", many_members_ar(200_000))
    r = limited("check", "--format", "json", str(tar), str(ar))
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(r.stdout)
    assert {f["rule"] for f in doc["findings"]} == {"no-binaries"}
