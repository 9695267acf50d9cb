"""A file that shrinks while it is read: a named ``InputError``, never SIGBUS, and the other inputs still audited.

The readers used to work on a memory map; touching a page past the new end of a truncated file
raised SIGBUS and killed the process (exit 135) with no report.  They now read with ``pread``
(``formats.filebytes``): a short read is an ``InputError`` naming the file.

Two kinds of test: deterministic ones truncate the file between two reads through a hook on the
reader's ``pread``; racing ones truncate and restore it from another process while readers run.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from linkaudit.errors import InputError
from linkaudit.formats import filebytes, read_path

from .elfbuild import DT_NEEDED, build, sym

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"
ROOT = Path(__file__).resolve().parents[2]


def _big_elf() -> bytes:
    """An ELF file whose tables lie megabytes apart: .dynstr (4 MB) first, .dynsym and .dynamic after it."""
    names = b"".join(b"sym_%07d\0" % i for i in range(400_000))
    dynstr = b"\0libc.so.6\0" + names
    symbols = sym(0, 0) + b"".join(sym(11 + 12 * i) for i in range(0, 400_000, 4000))
    return build(dynstr, [(DT_NEEDED, 1)], dynsym=symbols)


@pytest.fixture
def shrink_after_first_read(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """Files whose paths are added to the yielded set are truncated to 100 bytes after their first ``pread``.

    Blocks of 256 bytes (64 KiB in use) make even a 6 KB sample take several reads (a file under
    ``copies.SMALL_FILE_BYTES`` is otherwise read whole, in one ``pread``: nothing to race).
    """
    monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 0)
    monkeypatch.setattr(filebytes, "BLOCK", 256)
    monkeypatch.setattr(filebytes, "SMALL", 64)
    victims: set[str] = set()
    calls: dict[str, int] = {}
    real = filebytes._OpenFile.pread

    def pread(self: filebytes._OpenFile, offset: int, length: int) -> bytes:
        data = real(self, offset, length)
        calls[self.path] = calls.get(self.path, 0) + 1
        if self.path in victims and calls[self.path] == 1:
            os.truncate(self.path, 100)
        return data

    monkeypatch.setattr(filebytes._OpenFile, "pread", pread)
    yield victims


def test_a_file_truncated_between_two_reads_is_a_named_input_error(
    tmp_path: Path, shrink_after_first_read: set[str]
) -> None:
    victim = tmp_path / "libvictim.so"
    victim.write_bytes(_big_elf())
    shrink_after_first_read.add(str(victim))
    with pytest.raises(InputError) as info:
        read_path(str(victim))
    assert info.value.path == str(victim)
    assert "shrank while being read" in info.value.reason


@pytest.mark.parametrize("sample", ["broken/libtorch_cuda.so", "pe/fixed/torch_cuda.dll", "macho/misc/universal.dylib"])
def test_every_format_reports_the_shrunk_file(tmp_path: Path, shrink_after_first_read: set[str], sample: str) -> None:
    victim = tmp_path / Path(sample).name
    shutil.copyfile(SAMPLES / sample, victim)
    shrink_after_first_read.add(str(victim))
    with pytest.raises(InputError) as info:
        read_path(str(victim))
    assert info.value.path == str(victim)


def test_check_reports_the_shrunk_input_and_audits_the_others(
    run_cli,  # type: ignore[no-untyped-def]
    tmp_path: Path,
    shrink_after_first_read: set[str],
) -> None:
    victim = tmp_path / "libvictim.so"
    victim.write_bytes(_big_elf())
    good = tmp_path / "libnvrtc.so.12"
    shutil.copyfile(SAMPLES / "fixed/libnvrtc.so.12", good)
    shrink_after_first_read.add(str(victim))
    r = run_cli("check", "--format", "json", "--no-loader", str(victim), str(good))
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    unreadable = [f for f in doc["findings"] if f["rule"] == "unreadable-input"]
    assert [f["file"] for f in unreadable] == [str(victim)]
    assert "shrank while being read" in unreadable[0]["message"]
    assert str(good) in {f["path"] for f in doc["files"]}


# --- racing: another process truncates and restores the file while it is read -------------------

_TRUNCATOR = textwrap.dedent(
    """
    import os, random, sys, time
    path, content = sys.argv[1], open(sys.argv[1], "rb").read()
    fd = os.open(path, os.O_WRONLY)
    print("ready", flush=True)
    while True:  # whole for a few milliseconds (a reader starts), then cut under the reader for one
        os.pwrite(fd, content, 0)
        time.sleep(random.uniform(0.002, 0.01))
        os.ftruncate(fd, 64)
        time.sleep(0.001)
    """
)

_READER = textwrap.dedent(
    """
    import sys
    from linkaudit.errors import InputError
    from linkaudit.formats import read_path
    ok = refused = cut = 0
    for _ in range(int(sys.argv[2])):  # until enough reads were cut under the reader, or the cap
        try:
            read_path(sys.argv[1])
            ok += 1
        except InputError as exc:
            refused += 1
            cut += "shrank while being read" in exc.reason
        if ok >= 20 and cut >= 3:
            break
    print(ok, refused, cut)
    """
)


@pytest.fixture
def truncated_in_a_loop(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB ELF file that another process truncates to 64 bytes and restores, over and over."""
    victim = tmp_path / "libvictim.so"
    victim.write_bytes(_big_elf())
    proc = subprocess.Popen([sys.executable, "-c", _TRUNCATOR, str(victim)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield victim
    finally:
        proc.kill()
        proc.wait()


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def test_reads_racing_a_truncating_process_never_fault(truncated_in_a_loop: Path) -> None:
    # With the memory map this died of SIGBUS within a few hundred reads.
    r = subprocess.run(
        [sys.executable, "-c", _READER, str(truncated_in_a_loop), "20000"],
        capture_output=True,
        text=True,
        env=_env(),
        timeout=600,
    )
    assert r.returncode == 0, (
        f"reader died with {signal.Signals(-r.returncode).name if r.returncode < 0 else r.returncode}: {r.stderr[-2000:]}"
    )
    ok, refused, cut = map(int, r.stdout.split())
    assert cut <= refused and ok + refused <= 20000


def test_check_racing_a_truncating_process_reports_and_audits_the_rest(truncated_in_a_loop: Path) -> None:
    good = SAMPLES / "fixed/libnvrtc.so.12"
    for _ in range(3):
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "linkaudit",
                "check",
                "--format",
                "json",
                "--no-loader",
                str(truncated_in_a_loop),
                str(good),
            ],
            capture_output=True,
            text=True,
            env=_env(),
            timeout=600,
        )
        assert r.returncode in (0, 1, 2), r.stderr[-2000:]
        doc = json.loads(r.stdout)
        assert str(good) in {f["path"] for f in doc["files"]}
        for finding in doc["findings"]:
            if finding["rule"] == "unreadable-input":
                assert finding["file"] == str(truncated_in_a_loop)
