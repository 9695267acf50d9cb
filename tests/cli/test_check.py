"""``linkaudit check``: exit codes, text and JSON output, bad input, --output, --ignore."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..output.schema import validate_report

SAMPLES = Path(__file__).resolve().parents[2] / "sample_bins"


def test_broken_seed_exit_1_with_both_findings(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "broken/libtorch_cuda.so"))
    assert r.exit_code == 1
    assert "[driver-link] libcuda.so.1" in r.stdout
    assert "unused" in r.stdout
    assert "[missing-provider]" in r.stdout and "9 undefined symbols" in r.stdout
    assert r.stdout.rstrip().splitlines()[-1].startswith("1 file: 1 audited; 2 errors, 0 warnings, 0 notes (")


def test_fixed_twin_exit_0(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "fixed"))
    assert r.exit_code == 0, r.stdout
    assert "0 errors" in r.stdout


def test_warning_only_exits_0(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "misc/libabs.so"))
    assert r.exit_code == 0
    assert "warning [rpath-leak]" in r.stdout


def test_json_is_valid_against_schema_and_keeps_relative_paths(run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(SAMPLES.parent)
    r = run_cli("check", "--format", "json", "--max-version", "GLIBC_2.17", "sample_bins")
    assert r.exit_code == 2  # sample_bins/corrupt holds unreadable files
    doc = json.loads(r.stdout)
    validate_report(doc)
    assert doc["schema"] == "linkaudit/1"
    files = {f["path"] for f in doc["files"]}
    assert "sample_bins/broken/libtorch_cuda.so" in files
    assert all(not p.startswith("/") for p in files)
    rules = {(f["rule"], f["file"]) for f in doc["findings"]}
    assert ("driver-link", "sample_bins/broken/libtorch_cuda.so") in rules
    assert ("missing-provider", "sample_bins/broken/libtorch_cuda.so") in rules
    assert ("unreadable-input", "sample_bins/corrupt/truncated.so") in rules
    assert ("verneed-mismatch", "sample_bins/misc/libverneed_mismatch.so") in rules


def test_bad_inputs_are_named_and_others_still_audited(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    loop = tmp_path / "loop.so"
    os.symlink(loop, loop)
    missing = tmp_path / "nope.so"
    r = run_cli(
        "check",
        str(SAMPLES / "corrupt/truncated.so"),
        str(loop),
        str(missing),
        str(SAMPLES / "corrupt/not_elf.txt"),
        str(SAMPLES / "corrupt/empty.so"),
        str(SAMPLES / "broken/libtorch_cuda.so"),
    )
    assert r.exit_code == 2
    assert "Traceback" not in r.stdout + r.stderr
    assert f"{loop}: symlink loop" in r.stdout
    assert f"{missing}: no such file or directory" in r.stdout
    assert "not_elf.txt: not a binary" in r.stdout
    assert "empty.so: empty file" in r.stdout
    assert "truncated.so: program header table" in r.stdout
    assert "[driver-link] libcuda.so.1" in r.stdout  # the good input is still audited
    assert "5 unreadable" in r.stdout


def test_symlinked_directory_loop_is_walked_once(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "libtorch_cuda.so").write_bytes((SAMPLES / "broken/libtorch_cuda.so").read_bytes())
    os.symlink("..", tmp_path / "lib" / "up")  # lib/up -> tmp_path: a directory loop
    os.symlink("libtorch_cuda.so", tmp_path / "lib" / "libtorch_cuda.so.2")  # a second name
    r = run_cli("check", "--format", "json", str(tmp_path))
    doc = json.loads(r.stdout)
    assert [f["path"] for f in doc["files"]] == [str(tmp_path / "lib" / "libtorch_cuda.so")]
    assert r.exit_code == 1


def test_directory_without_binaries_is_a_note(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("x = 1\n")
    r = run_cli("check", str(tmp_path / "pkg"))
    assert r.exit_code == 0
    assert "[no-binaries]" in r.stdout


def test_unreadable_file(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "secret.so"
    target.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    real_open = os.open

    def deny(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    r = run_cli("check", str(target), str(SAMPLES / "fixed/libtorch_cuda.so"))
    assert r.exit_code == 2
    assert f"{target}: permission denied" in r.stdout


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_by_mode(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "secret.so"
    target.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    target.chmod(0)
    r = run_cli("check", str(target))
    assert r.exit_code == 2 and "permission denied" in r.stdout


def test_usage_errors_exit_2(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("check").exit_code == 2
    r = run_cli("check", "--max-version", "banana", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "GLIBC_2.17" in r.stderr
    r = run_cli("check", "--ignore", "no-such-rule", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "no-such-rule" in r.stderr
    assert run_cli("check", "--format", "xml", str(SAMPLES / "fixed")).exit_code == 2


def test_ignore_rule(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(
        "check", "--ignore", "driver-link", "--ignore", "missing-provider", str(SAMPLES / "broken/libtorch_cuda.so")
    )
    assert r.exit_code == 0
    assert "driver-link" not in r.stdout


def test_output_file_and_refusal_to_overwrite_an_input(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "report.json"
    r = run_cli("check", "--format", "json", "--output", str(out), str(SAMPLES / "broken/libtorch_cuda.so"))
    assert r.exit_code == 1 and r.stdout == ""
    validate_report(json.loads(out.read_text()))
    victim = tmp_path / "lib.so"
    victim.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    before = victim.read_bytes()
    r = run_cli("check", "--output", str(victim), str(victim))
    assert r.exit_code == 2 and "refusing to overwrite an input" in r.stderr
    assert victim.read_bytes() == before


def test_python_dash_m_and_no_traceback_in_a_real_process(tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "linkaudit",
            "check",
            str(SAMPLES / "corrupt/lying_dynsym.so"),
            str(tmp_path / "missing"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "lying_dynsym.so" in proc.stdout


def test_version_and_help(run_cli) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("--version").exit_code == 0
    r = run_cli("check", "--help")
    assert r.exit_code == 0 and "--max-version" in r.stdout


# --- usage errors ---------------------------------------------------------------


def test_bad_max_version_is_a_usage_error_not_a_crash(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--max-version", "GLIBC_2." + "9" * 5000, str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "internal error" not in r.stderr and "digits" in r.stderr
    r = run_cli("check", "--max-version", "glibc_2.17", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "did you mean GLIBC_2.17" in r.stderr


def test_unreadable_input_cannot_be_ignored(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--ignore", "unreadable-input", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "never hidden" in r.stderr


def test_help_documents_every_exit_status(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--help")
    assert all(f"  {code}  " in r.stdout for code in "0123") and "internal error" in r.stdout


def test_unreadable_named_file_does_not_abort_the_others(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Click must not check readability itself (it would abort before any audit)."""
    target = tmp_path / "secret.so"
    target.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    real_access, real_open = os.access, os.open
    monkeypatch.setattr(os, "access", lambda p, m, *a, **k: False if str(p) == str(target) else real_access(p, m))

    def deny(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", deny)
    r = run_cli("check", str(target), str(SAMPLES / "broken/libtorch_cuda.so"))
    assert r.exit_code == 2
    assert f"{target}: permission denied" in r.stdout
    assert "[driver-link] libcuda.so.1" in r.stdout


# --- --output ---------------------------------------------------------------------


def test_output_refuses_a_file_found_under_a_directory_given(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pkg").mkdir()
    victim = tmp_path / "pkg" / "lib.so"
    victim.write_bytes((SAMPLES / "fixed/libtorch_cuda.so").read_bytes())
    before = victim.read_bytes()
    link = tmp_path / "out-link"
    os.symlink(victim, link)
    for out in (victim, link):
        r = run_cli("check", "--output", str(out), str(tmp_path / "pkg"))
        assert r.exit_code == 2 and "refusing to overwrite an input" in r.stderr
    assert victim.read_bytes() == before


def test_output_empty_name_is_a_usage_error(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", "--output", "", str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "empty file name" in r.stderr


def test_output_keeps_the_mode_and_new_files_follow_the_umask(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    existing = tmp_path / "existing.txt"
    existing.write_text("old\n")
    existing.chmod(0o640)
    assert run_cli("check", "-o", str(existing), str(SAMPLES / "fixed")).exit_code == 0
    assert (existing.stat().st_mode & 0o777, "0 errors" in existing.read_text()) == (0o640, True)
    old = os.umask(0o027)
    try:
        assert run_cli("check", "-o", str(tmp_path / "new.txt"), str(SAMPLES / "fixed")).exit_code == 0
    finally:
        os.umask(old)
    assert (tmp_path / "new.txt").stat().st_mode & 0o777 == 0o640  # 0666 & ~027
    assert not [p for p in tmp_path.iterdir() if ".linkaudit-" in p.name]


def test_output_writes_through_symlinks_and_special_files(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import threading

    real = tmp_path / "real.txt"
    real.write_text("old\n")
    link = tmp_path / "link.txt"
    os.symlink(real, link)
    assert run_cli("check", "-o", str(link), str(SAMPLES / "fixed")).exit_code == 0
    assert link.is_symlink() and "0 errors" in real.read_text()

    devnull = tmp_path / "null"
    os.symlink(os.devnull, devnull)
    assert run_cli("check", "-o", str(devnull), str(SAMPLES / "fixed")).exit_code == 0
    assert devnull.is_symlink()

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = run_cli("check", "-o", str(fifo), str(SAMPLES / "fixed"))
    reader.join(10)
    assert r.exit_code == 0 and b"0 errors" in got[0]
    assert fifo.is_fifo()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_output_write_errors_are_clean(run_cli, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    full = tmp_path / "full"
    os.symlink("/dev/full", full)
    r = run_cli("check", "-o", str(full), str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "No space left on device" in r.stderr and "internal error" not in r.stderr

    def no_space(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", no_space)
    r = run_cli("check", "-o", str(tmp_path / "report.txt"), str(SAMPLES / "fixed"))
    assert r.exit_code == 2 and "No space left on device" in r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["full"]  # no temporary file left


# --- standard output ----------------------------------------------------------------


def test_closed_stdout_is_a_clean_error(run_cli, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "stdout", None)
    from linkaudit.cli import main

    code = main(["check", str(SAMPLES / "fixed")])
    assert code == 2


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_full_and_broken_stdout_in_a_real_process() -> None:
    cmd = [sys.executable, "-m", "linkaudit", "check", "--format", "json", str(SAMPLES / "fixed")]
    with open("/dev/full", "w") as full:
        proc = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2 and "No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr
    pipe = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert pipe.stdout is not None
    pipe.stdout.close()  # the reader goes away: EPIPE
    _out, err = pipe.communicate()
    assert pipe.returncode == 2 and "Broken pipe" in err and "Traceback" not in err
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0
    proc = subprocess.run(" ".join(cmd) + " >&-", shell=True, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2 and "standard output is closed" in proc.stderr


def test_color_is_forced_either_way(run_cli) -> None:  # type: ignore[no-untyped-def]
    broken = str(SAMPLES / "broken/libtorch_cuda.so")
    assert "\x1b[31m" in run_cli("check", "--color", broken).stdout  # captured: not a terminal
    assert "\x1b[" not in run_cli("check", "--no-color", broken).stdout
    assert "\x1b[" not in run_cli("check", broken).stdout


# --- skipped formats and the summary ----------------------------------------------------


def test_unsupported_formats_are_skipped_not_unreadable(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "libfoo.bc").write_bytes(b"BC\xc0\xde" + b"\0" * 60)  # LLVM bitcode: not read
    (tmp_path / "pkg" / "lib.so").write_bytes((SAMPLES / "fixed/libnvrtc.so.12").read_bytes())
    macho = tmp_path / "libbar.o"
    macho.write_bytes(b"\xde\xc0\x17\x0b" + b"\0" * 60)  # the bitcode wrapper
    r = run_cli("check", str(tmp_path / "pkg"), str(macho))
    assert r.exit_code == 0, r.stdout
    assert r.stdout.splitlines()[-1].startswith("3 files: 1 audited, 2 skipped (format not supported yet); 0 errors,")
    r = run_cli("check", "--format", "json", str(tmp_path / "pkg"), str(macho))
    doc = json.loads(r.stdout)
    validate_report(doc)
    skipped = {f["path"]: f for f in doc["files"] if f["status"] == "skipped"}
    assert set(skipped) == {str(tmp_path / "pkg" / "libfoo.bc"), str(macho)}
    assert skipped[str(macho)]["format"] == "llvm-bitcode" and "LLVM bitcode" in skipped[str(macho)]["reason"]
    assert doc["summary"]["skipped"] == 2 and doc["summary"]["unreadable"] == 0


def test_summary_line_totals_first(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli("check", str(SAMPLES / "corrupt/empty.so"), str(SAMPLES / "fixed"))
    assert r.stdout.splitlines()[-1].startswith("3 files: 2 audited, 1 unreadable; ")


def test_json_records_the_settings(run_cli) -> None:  # type: ignore[no-untyped-def]
    r = run_cli(
        "check", "--format", "json", "--max-version", "GLIBC_2.17", "--ignore", "rpath-leak", str(SAMPLES / "fixed")
    )
    doc = json.loads(r.stdout)
    validate_report(doc)
    assert doc["config"]["max_versions"] == ["GLIBC_2.17"] and doc["config"]["ignore"] == ["rpath-leak"]
    assert "driverless=yes" in doc["config"]["loader"]
    r = run_cli("check", "--format", "json", "--no-loader", str(SAMPLES / "fixed"))
    assert json.loads(r.stdout)["config"]["loader"] == ["off"]


@pytest.mark.parametrize("how", [(), ("--format", "jsonl"), ("--write-baseline",)])
def test_output_refuses_a_package_found_under_a_directory_given(run_cli, tmp_path: Path, how: tuple[str, ...]) -> None:  # type: ignore[no-untyped-def]
    """A wheel or conda package found by walking ``dist/`` is an input too: ``-o`` onto it (or
    ``--write-baseline``) is refused, as for one named (it was replaced by the report, exit 0)."""
    import io
    import tarfile
    import zipfile

    dist = tmp_path / "dist"
    dist.mkdir()
    helper = (SAMPLES / "loader/pyext/lib/libhelper.so").read_bytes()
    wheel = dist / "demo-1.0-py3-none-manylinux_2_17_x86_64.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        zf.writestr("demo/libhelper.so", helper)
        zf.writestr("demo-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nTag: py3-none-manylinux_2_17_x86_64\n")
    tarball = dist / "demo-1.0-0.tar.bz2"
    with tarfile.open(tarball, "w:bz2") as tf:
        info = tarfile.TarInfo("lib/libhelper.so")
        info.size = len(helper)
        tf.addfile(info, io.BytesIO(helper))
    for victim in (wheel, tarball):
        before = victim.read_bytes()
        option = list(how) if how == ("--write-baseline",) else [*how, "--output"]
        r = run_cli("check", *option, str(victim), str(dist))
        assert r.exit_code == 2 and "refusing to overwrite an input" in r.stderr, r.stderr
        assert victim.read_bytes() == before


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_a_slow_non_blocking_stdout_gets_the_whole_report(unbuffered: str) -> None:
    """A CI runner's pipe left non-blocking, read slowly: every byte arrives (with
    ``PYTHONUNBUFFERED=1`` the report was cut at 64 KiB with exit 0; without, exit 2)."""
    import fcntl
    import threading
    import time

    cmd = [sys.executable, "-m", "linkaudit", "check", "--format", "json", str(SAMPLES)]
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETFL, fcntl.fcntl(write_end, fcntl.F_GETFL) | os.O_NONBLOCK)
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}
    proc = subprocess.Popen(cmd, stdout=write_end, stderr=subprocess.PIPE, env=env)
    os.close(write_end)
    chunks: list[bytes] = []

    def slow_reader() -> None:
        time.sleep(1.0)  # the pipe fills while nobody reads
        while chunk := os.read(read_end, 4096):
            chunks.append(chunk)
            time.sleep(0.0005)

    reader = threading.Thread(target=slow_reader)
    reader.start()
    _out, err = proc.communicate(timeout=300)
    reader.join()
    os.close(read_end)
    out = b"".join(chunks)
    assert len(out) > 100_000, len(out)  # more than a pipe holds
    assert proc.returncode == 2, err  # sample_bins/corrupt: exit 2 by design, the report whole
    assert json.loads(out)["summary"]["files"] > 100
    assert b"Traceback" not in err


def test_a_run_exits_at_once_only_when_nothing_is_left_for_the_exit_hooks() -> None:
    """The console script skips the interpreter's teardown (0.3 s of freeing 200,000 members'
    records) only when no exit hook is registered and no other thread runs; the streams are
    flushed first, so the report is whole."""
    probe = "from linkaudit.cli.app import _nothing_left_at_exit as f; {setup}; print(f())"
    cases = {
        "pass": "True",
        "import atexit; atexit.register(print)": "False",
        "import threading, time; threading.Thread(target=time.sleep, args=(2,), daemon=True).start()": "False",
    }
    for setup, expected in cases.items():
        out = subprocess.run(
            [sys.executable, "-c", probe.format(setup=setup)], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected, (setup, out.stdout, out.stderr)
    sample = Path(__file__).resolve().parents[2] / "sample_bins/misc/libleak.so"
    run = subprocess.run(
        [sys.executable, "-m", "linkaudit", "check", "--no-config", "--format", "json", str(sample)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1 and json.loads(run.stdout)["summary"]["errors"] >= 1
