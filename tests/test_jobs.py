"""``--jobs N`` (issue 14, section 3): reading in a process pool gives the report ``--jobs 1`` gives."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path

import pytest

from linkaudit import AuditConfig, audit, jobs
from linkaudit.errors import InputError, UnsupportedFormat
from linkaudit.jobs import MIN_POOL_FILES, available_cpus, read_paths
from linkaudit.loader.target import TargetEnvironment

SAMPLES = Path(__file__).resolve().parent.parent / "sample_bins"


@pytest.fixture(autouse=True)
def _pool_for_small_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The samples are small: use the pool for them all the same (else these tests prove nothing)."""
    monkeypatch.setattr(jobs, "MIN_POOL_BYTES", 0)
    monkeypatch.setattr(jobs, "MIN_POOL_FILE_BYTES", 0)


def test_pool_report_equals_one_process(tmp_path: Path) -> None:
    """Every sample (ELF, PE, Mach-O, archives, corrupt files) and a bitcode file, through 1 and 2 processes."""
    bitcode = tmp_path / "x.bc"
    bitcode.write_bytes(b"BC\xc0\xde" + b"\0" * 60)
    one = audit([str(SAMPLES), str(bitcode)], AuditConfig(jobs=1))
    two = audit([str(SAMPLES), str(bitcode)], AuditConfig(jobs=2))
    assert len(one.files) > MIN_POOL_FILES  # else the pool is never used
    assert {f.status for f in one.files} >= {"audited", "unreadable", "skipped"}
    assert one.findings == two.findings
    assert (one.files, one.roots, one.rules, one.config) == (two.files, two.roots, two.rules, two.config)


def test_pool_report_equals_one_process_with_the_loader(tmp_path: Path) -> None:
    from tests.loader.test_scale import random_dag

    for seed in range(3):
        base = tmp_path / str(seed)
        env = random_dag(base, seed)
        reports = [audit([str(base)], AuditConfig(target=env, jobs=n)) for n in (1, 3)]
        assert reports[0].findings == reports[1].findings
        assert reports[0].files == reports[1].files


def test_cli_jobs_same_json(run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    outputs = []
    for n in ("1", "2"):
        out = tmp_path / f"report-{n}.json"
        run_cli("check", "--jobs", n, "--format", "json", "-o", str(out), str(SAMPLES / "corrupt"), str(SAMPLES / "pe"))
        document = json.loads(out.read_text())
        document["summary"].pop("seconds")
        outputs.append(document)
    assert outputs[0] == outputs[1]


def test_cli_rejects_zero_jobs(run_cli) -> None:  # type: ignore[no-untyped-def]
    result = run_cli("check", "--jobs", "0", str(SAMPLES / "corrupt"))
    assert result.exit_code == 2


def test_read_paths_keeps_order_and_errors(tmp_path: Path) -> None:
    files = sorted(str(p) for p in (SAMPLES / "corrupt").iterdir() if p.is_file())
    files += [str(tmp_path / "missing.so"), str(SAMPLES / "loader")]
    refused = files[1]

    def check(path: str) -> None:
        if path == refused:
            raise InputError(path, "refused by the check")

    serial = read_paths(files, 1, check)
    pooled = read_paths(files, 2, check)
    assert [r.path for r in serial] == [r.path for r in pooled] == files
    for a, b in zip(serial, pooled, strict=True):
        assert type(a.error) is type(b.error)
        assert (str(a.error), getattr(a.error, "offset", None)) == (str(b.error), getattr(b.error, "offset", None))
        assert [x.path for x in a.binaries] == [x.path for x in b.binaries]
    assert str(pooled[1].error).endswith("refused by the check")
    assert isinstance(pooled[-2].error, InputError)
    with pytest.raises(InputError):
        pooled[-2].get()
    assert any(r.error is None and r.binaries for r in pooled)
    assert not any(isinstance(r.error, UnsupportedFormat) for r in pooled[:1])


@pytest.mark.parametrize(
    ("files", "cap"),
    [
        ({"cpu.max": "150000 100000\n"}, 2),
        ({"cpu.max": "50000 100000\n"}, 1),
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "300000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 3),
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({}, None),
    ],
)
def test_available_cpus_capped_by_cgroup_quota(tmp_path: Path, files: dict[str, str], cap: int | None) -> None:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    affinity = len(os.sched_getaffinity(0))
    assert available_cpus(str(tmp_path)) == (min(affinity, cap) if cap else affinity)


def test_unsupported_format_crosses_the_pool(tmp_path: Path) -> None:
    """An LLVM bitcode file is skipped (UnsupportedFormat), not unreadable, through the pool too."""
    bitcode = tmp_path / "x.bc"
    bitcode.write_bytes(b"BC\xc0\xde" + b"\0" * 60)
    paths = [str(bitcode)] * MIN_POOL_FILES
    results = read_paths(paths, 2)
    assert all(isinstance(r.error, UnsupportedFormat) for r in results), [r.error for r in results]
    assert results[0].error.container == read_paths(paths[:1], 1)[0].error.container  # type: ignore[union-attr]


def test_pool_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparisons above go through workers: a read in another process is seen here."""
    pids: set[int] = set()
    real = jobs._to_read

    def spy(outcome):  # type: ignore[no-untyped-def]
        pids.add(outcome[-1])
        return real(outcome[:-1])

    monkeypatch.setattr(jobs, "_read_one", _read_with_pid)
    monkeypatch.setattr(jobs, "_to_read", spy)
    read_paths(sorted(str(p) for p in (SAMPLES / "corrupt").iterdir() if p.is_file()) * 2, 2)
    assert pids and os.getpid() not in pids


_READ_ONE = jobs._read_one


def _read_with_pid(path: str):  # type: ignore[no-untyped-def]
    """``jobs._read_one``, also saying which process ran it."""
    return (*_READ_ONE(path), os.getpid())


def test_default_target_still_loads() -> None:
    """A pool-read audit runs the loader as the serial one does (roots found from the records read)."""
    one = audit([str(SAMPLES / "loader")], AuditConfig(target=TargetEnvironment(), jobs=1))
    two = audit([str(SAMPLES / "loader")], AuditConfig(target=TargetEnvironment(), jobs=2))
    assert one.roots and one.roots == two.roots
    assert one.findings == two.findings


def test_channels_doc_says_what_jobs_does(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """docs/channels.md said no --jobs meant one after the other; the default is the CPUs
    available. The table names the default and the pool thresholds with the code's values."""
    doc = (SAMPLES.parent / "docs/channels.md").read_text()
    assert "(none) or `--jobs 1`" not in doc and "no `--jobs` at all (N is then the CPUs available" in doc
    for name in ("MIN_POOL_TASKS", "MIN_POOL_FILES"):
        assert f"`jobs.{name}` ({getattr(jobs, name)})" in doc
    assert (
        f"`jobs.MIN_POOL_BYTES` ({64 << 20 >> 20} MiB)" in doc
        and "MIN_POOL_BYTES = 64 << 20" in Path(jobs.__file__).read_text()
    )  # the module's value (this file's fixture sets it to 0)
    given: list[int] = []

    def spy(paths, n=1, check=None, sizes=()):  # type: ignore[no-untyped-def]
        given.append(n)
        return read_paths(paths, n, check, sizes)

    import importlib

    monkeypatch.setattr(importlib.import_module("linkaudit.cli.check"), "available_cpus", lambda: 3)
    monkeypatch.setattr(importlib.import_module("linkaudit.audit"), "read_paths", spy)
    run_cli("check", "--no-config", "--no-loader", str(SAMPLES / "fixed/libnvrtc.so.12"))
    run_cli("check", "--no-config", "--no-loader", "--jobs", "1", str(SAMPLES / "fixed/libnvrtc.so.12"))
    assert given == [3, 1]  # no --jobs: the CPUs available


def test_small_and_cached_files_are_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a pool, only files worth a worker go to it: a small file (parsed once per content, never
    cached) and a file the cache holds are read in this process — pickling their records back cost
    more than reading them (``/usr/lib/x86_64-linux-gnu``: 641 small files sent to workers)."""
    from linkaudit import cache

    monkeypatch.setattr(jobs, "MIN_POOL_FILE_BYTES", 4096)
    monkeypatch.setattr("linkaudit.formats.copies.SMALL_FILE_BYTES", 4096)  # the samples are all small
    monkeypatch.setattr(jobs, "MIN_POOL_FILES", 1)
    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    files = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and not p.is_symlink())
    small = [str(p) for p in files if 0 < p.stat().st_size <= 4096][:6]
    large = [
        str(p)
        for p in files
        if p.stat().st_size > 4096 and p.read_bytes()[:4] == b"\x7fELF" and "corrupt" not in p.parts
    ][:6]
    assert len(small) == 6 and len(large) == 6
    cache.configure(True, str(tmp_path / "c"))
    paths = [p for pair in zip(small, large, strict=True) for p in pair]
    assert jobs._worth_a_worker(range(len(paths)), paths) == [i for i, p in enumerate(paths) if p in large]
    cold = read_paths(paths, 2)  # the large ones read (and cached) in workers
    read_paths(large[:3], 1)
    assert jobs._worth_a_worker(range(len(paths)), paths) == []  # every large one cached now
    again = read_paths(paths, 2)
    assert [[b.path for b in r.binaries] for r in again] == [[b.path for b in r.binaries] for r in cold]


def test_small_files_found_by_the_walk_are_not_stated_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``collect`` gives each file's size as the walk saw it; ``read_paths`` keeps a small one here
    without a ``stat`` of its own (200,000 tar members: 200,000 calls), a large one still goes to a worker."""
    from linkaudit.inputs import collect

    monkeypatch.setattr(jobs, "MIN_POOL_FILE_BYTES", 4096)
    collected = collect([str(SAMPLES / "loader")])
    assert len(collected.sizes) == len(collected.files) > 4
    assert collected.sizes == tuple(os.stat(p).st_size for p in collected.files)
    stated: list[str] = []
    real_stat = os.stat
    monkeypatch.setattr(jobs.os, "stat", lambda p, *a, **k: stated.append(p) or real_stat(p, *a, **k))
    picked = jobs._worth_a_worker(range(len(collected.files)), collected.files, collected.sizes)
    large = [i for i, size in enumerate(collected.sizes) if size > 4096]
    assert picked == [i for i in large if not jobs.cached_already(collected.files[i])]
    assert stated == [collected.files[i] for i in large]


_VICTIM = ""  # the path _kill_on_victim kills its worker on (set before the pool forks)
_REAL_READ_ONE = jobs._read_one


def _kill_on_victim(path: str):  # type: ignore[no-untyped-def]
    """``jobs._read_one``, but its own process is killed (SIGKILL, as the OOM killer does) on ``_VICTIM``."""
    import signal

    if path == _VICTIM:
        os.kill(os.getpid(), signal.SIGKILL)
    return _REAL_READ_ONE(path)


def _handlers() -> str:
    """This process's SIGTERM, SIGHUP and SIGINT handlers, in words."""
    import signal

    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])
    return repr([(signal.getsignal(s), s in blocked) for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)])


def _sigterm_handler_as_error(path: str):  # type: ignore[no-untyped-def]
    """A worker's outcome whose error reason is its signal handlers (``_handlers``)."""
    return path, (), (path, _handlers(), None, None), ()


def _seen(reads: list[jobs.Read]) -> list[tuple[str, list[str], str, str]]:
    """What each read gave, comparable (an error is not equal to its copy)."""
    return [(r.path, [b.path for b in r.binaries], type(r.error).__name__, str(r.error)) for r in reads]


def _spy_alone(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The items ``jobs._forked`` runs again alone, as it runs them."""
    alone: list[int] = []
    real = jobs._alone
    monkeypatch.setattr(jobs, "_alone", lambda i: alone.append(i) or real(i))
    return alone


def test_a_worker_killed_mid_read_loses_only_its_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed while reading (the OOM killer) broke the pool and ``read_paths`` hung or
    raised: every other file is read and only the file that kills its worker every time is named,
    with the signal.  Only the files a worker had started are read again alone (at most two per
    worker: the one it read, and one whose result it sent as the pool broke); the rest go to a
    fresh pool (all were read alone, one after the other, one fork each)."""
    import signal

    global _VICTIM
    paths = [str(p) for p in sorted((SAMPLES / "loader").rglob("*.so")) if p.is_file() and not p.is_symlink()][:12]
    assert len(paths) >= MIN_POOL_FILES
    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    monkeypatch.setattr(jobs, "_read_one", _kill_on_victim)
    alone = _spy_alone(monkeypatch)
    _VICTIM = paths[1]
    signal.alarm(120)  # a hang fails the test instead of the run
    try:
        reads = read_paths(paths, 2)
    finally:
        signal.alarm(0)
        _VICTIM = ""
    expected = read_paths(paths, 1)
    assert [r.path for r in reads] == paths
    assert reads[1].error is not None and reads[1].error.path == paths[1]
    assert reads[1].error.reason == jobs.worker_died(-signal.SIGKILL) and "signal 9, SIGKILL" in reads[1].error.reason
    assert 1 in alone and len(alone) <= 4, alone
    assert [x for i, x in enumerate(_seen(reads)) if i != 1] == [x for i, x in enumerate(_seen(expected)) if i != 1]


def _kill_on_task_one(_common: object, task: int) -> int:
    """A task whose worker is killed (SIGKILL, as the OOM killer does) on task 1."""
    import signal

    if task == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    return task * 2


def test_a_worker_killed_mid_task_fails_only_its_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_tasks``: as ``read_paths`` above, the task that kills its worker every time fails,
    named with the signal; every other task gives its result, and only those a worker had started
    run again alone (all the tasks the broken pool failed did, one after the other)."""
    import signal

    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    alone = _spy_alone(monkeypatch)
    tasks = list(range(jobs.MIN_POOL_TASKS + 6))
    done: list[int] = []
    signal.alarm(120)  # a hang fails the test instead of the run
    try:
        results = jobs.run_tasks(_kill_on_task_one, None, tasks, 2, lambda i, _: done.append(i))
    finally:
        signal.alarm(0)
    assert sorted(done) == tasks and 1 in alone and len(alone) <= 4, alone
    assert (
        isinstance(results[1], jobs.Failed)
        and "died (killed by signal 9, SIGKILL: out of memory?)" in results[1].reason
    )
    assert [r for i, r in enumerate(results) if i != 1] == [2 * i for i in tasks if i != 1]


def _handler_in_worker(_common: object, _task: object) -> str:
    return _handlers()


def test_pool_workers_end_on_sigterm_whatever_the_parent_handles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI turns SIGTERM into an unwinding exception; a forked worker inherited it, and the pool's
    own SIGTERM to a worker became a result the worker blocked writing back (a run hung 18 minutes).
    Workers of both pools end on SIGTERM and SIGHUP (the default action) and ignore SIGINT: Ctrl-C
    reaches the whole process group, and the parent, not each worker, decides what it does."""
    import signal

    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    previous = signal.signal(signal.SIGTERM, lambda *_: None)
    previous_hup = signal.signal(signal.SIGHUP, lambda *_: None)
    try:
        got = jobs.run_tasks(_handler_in_worker, None, list(range(jobs.MIN_POOL_TASKS + 2)), 2)
        monkeypatch.setattr(jobs, "_read_one", _sigterm_handler_as_error)
        paths = [str(SAMPLES / "fixed/libnvrtc.so.12")] * MIN_POOL_FILES
        reads = read_paths(paths, 2)
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGHUP, previous_hup)
    default = repr([(signal.SIG_DFL, False), (signal.SIG_DFL, False), (signal.SIG_IGN, False)])
    assert set(got) == {default}  # forked with the three blocked (jobs._forking), unblocked once handled
    assert not signal.pthread_sigmask(signal.SIG_BLOCK, []) & {signal.SIGTERM, signal.SIGHUP, signal.SIGINT}
    assert {r.error.reason for r in reads if r.error is not None} == {default} and len(reads) == len(paths)


_SIZES = ""  # the file _measured_sendback writes each message's size to (set before the pool forks)
_REAL_SENDBACK = None


def _measured_sendback(result_queue, *args, **kwargs):  # type: ignore[no-untyped-def]
    """``concurrent.futures.process._sendback_result``, each message's pickled size written to ``_SIZES``."""
    from multiprocessing.reduction import ForkingPickler

    class Measured:
        def put(self, message: object) -> None:
            with open(_SIZES, "a") as fh:
                fh.write(f"{len(ForkingPickler.dumps(message))}\n")
            result_queue.put(message)

    return _REAL_SENDBACK(Measured(), *args, **kwargs)  # type: ignore[misc]


def _large(_common: object, task: int) -> str:
    return "x" * 100_000 + str(task)


def test_every_message_in_a_pools_pipe_is_one_atomic_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed while writing a large message left half of it in the pool's pipe, and the
    pool's thread waited for the rest for ever (a hung run, 2 times in 5; at exit too, as it is
    joined).  Every message of both pools stays under PIPE_BUF (4,096 bytes on Linux), which one
    ``write`` puts whole or not at all: large records, an error naming a long path, and a task's
    large result (an installation's part of the report: 100 KB here, sent whole through the pipe
    before)."""
    import concurrent.futures.process as process
    import select

    global _SIZES, _REAL_SENDBACK
    from .loader.dagbuild import Lib, write

    deep = tmp_path / "/".join(["d" * 200] * 15)
    deep.mkdir(parents=True)
    (big,) = write(str(tmp_path), [Lib("libbig.so", "libbig.so", exports=tuple(f"f{i}" for i in range(2000)))])
    (deep / "corrupt.so").write_bytes(b"\x7fELF" + b"\xff" * 200)
    paths = [big, str(deep / "corrupt.so")] * (MIN_POOL_FILES // 2)
    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    _SIZES, _REAL_SENDBACK = str(tmp_path / "sizes"), process._sendback_result
    monkeypatch.setattr(process, "_sendback_result", _measured_sendback)
    try:
        reads = read_paths(paths, 2)
        results = jobs.run_tasks(_large, None, list(range(jobs.MIN_POOL_TASKS)), 2)
    finally:
        _SIZES, _REAL_SENDBACK = "", None
    sizes = [int(n) for n in (tmp_path / "sizes").read_text().split()]
    assert len(sizes) == len(paths) + jobs.MIN_POOL_TASKS and max(sizes) < select.PIPE_BUF, sizes
    assert results == [_large(None, i) for i in range(jobs.MIN_POOL_TASKS)]
    one = read_paths(paths, 1)
    assert _seen(reads) == _seen(one)
    assert reads[1].error is not None and len(str(deep)) > 3000  # an error naming a long path: spilled too


#: A ``check -j 2`` whose reader sleeps on ``victim`` (``pool``: in the pool's worker; ``alone``: the
#: pool's worker is killed on it first, so the sleep is in the read again alone), each reading
#: process's pid written to ``pids`` (a ``sleeping`` line when it sleeps).
_STUCK_RUN = """
import os, signal, sys, time
from linkaudit import jobs
from linkaudit.cli.app import run
jobs.MIN_POOL_BYTES = jobs.MIN_POOL_FILE_BYTES = 0
real, (victim, pids, phase), paths = jobs._read_one, sys.argv[1:4], sys.argv[4:]
def stuck(path):
    with open(pids, "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    if path == victim:
        if phase == "alone" and not os.path.exists(pids + ".killed"):
            open(pids + ".killed", "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        with open(pids, "a") as fh:
            fh.write(f"sleeping {os.getpid()}\\n")
        time.sleep(300)
    return real(path)
jobs._read_one = stuck
sys.argv = ["linkaudit", "check", "--no-cache", "-j", "2", *paths]
run()
"""


def _alive(pid: int) -> bool:
    """``pid`` runs (a zombie does not: it has ended, whoever reaps it)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.parametrize(
    ("phase", "signum", "group"),
    [("pool", "SIGTERM", False), ("pool", "SIGINT", False), ("pool", "SIGINT", True), ("alone", "SIGTERM", False)],
)
def test_a_signal_ends_a_run_whose_worker_is_stuck(tmp_path: Path, phase: str, signum: str, group: bool) -> None:
    """SIGTERM or SIGINT to ``check`` (``group``: Ctrl-C on a terminal, to every process of the group)
    while a worker reads for ever ends the run with 128 + the signal, no traceback and no worker
    left.  The read again alone after a worker's death was waited for (a SIGTERM did not end the
    run), and an idle worker given Ctrl-C died printing a ``KeyboardInterrupt`` traceback."""
    import signal
    import subprocess
    import sys
    import time

    paths = [str(p) for p in sorted((SAMPLES / "loader").rglob("*.so")) if p.is_file() and not p.is_symlink()][:12]
    pids = tmp_path / "pids"
    env = {**os.environ, "PYTHONPATH": str(Path(jobs.__file__).parent.parent)}
    argv = [sys.executable, "-c", _STUCK_RUN, paths[3], str(pids), phase, *paths]
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True) as run:
        deadline = time.monotonic() + 120
        while "sleeping" not in (pids.read_text() if pids.exists() else "") and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            number = getattr(signal, signum)
            os.killpg(run.pid, number) if group else os.kill(run.pid, number)
            _, err = run.communicate(timeout=60)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)  # a hang fails the test, not the suite
    workers = {int(line.split()[-1]) for line in pids.read_text().split("\n") if line}
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    told = err.decode(errors="replace")
    assert run.returncode == 128 + number and "Traceback" not in told and "Exception ignored" not in told, told
    assert os.getpid() not in workers and not [pid for pid in workers if _alive(pid)]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_workers_end_when_check_is_killed(tmp_path: Path) -> None:
    """``check -j 2`` SIGKILLed (the OOM killer, a runner's hard timeout) while a worker reads for
    ever: the workers end with it (they read on, orphaned, for as long as their reads took)."""
    import signal
    import subprocess
    import time

    paths = [str(p) for p in sorted((SAMPLES / "loader").rglob("*.so")) if p.is_file() and not p.is_symlink()][:12]
    pids = tmp_path / "pids"
    env = {**os.environ, "PYTHONPATH": str(Path(jobs.__file__).parent.parent)}
    argv = [sys.executable, "-c", _STUCK_RUN, paths[3], str(pids), "pool", *paths]
    with subprocess.Popen(
        argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    ) as run:
        try:
            deadline = time.monotonic() + 120
            while "sleeping" not in (pids.read_text() if pids.exists() else "") and time.monotonic() < deadline:
                time.sleep(0.05)
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=60)
            workers = {int(line.split()[-1]) for line in pids.read_text().split("\n") if line} - {run.pid}
            deadline = time.monotonic() + 10
            while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert workers and not [pid for pid in workers if _alive(pid)]
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(run.pid, signal.SIGKILL)  # what is left of the group, test or no test


def test_check_names_the_file_whose_worker_died_and_audits_the_rest(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """``check -j 2`` with a worker killed on one file every time: exit 2 (an input not audited),
    that file an ``unreadable-input`` saying why, every other file audited as with ``-j 1``."""
    import signal

    global _VICTIM
    paths = [str(p) for p in sorted((SAMPLES / "loader").rglob("*.so")) if p.is_file() and not p.is_symlink()][:12]
    monkeypatch.setattr(jobs, "_can_fork", lambda: True)
    one = tmp_path / "one.json"
    run_cli("check", "--no-cache", "-j", "1", "--format", "json", "-o", str(one), *paths)
    monkeypatch.setattr(jobs, "_read_one", _kill_on_victim)
    _VICTIM = paths[5]
    signal.alarm(120)  # a hang fails the test instead of the run
    try:
        two = tmp_path / "two.json"
        result = run_cli("check", "--no-cache", "-j", "2", "--format", "json", "-o", str(two), *paths)
    finally:
        signal.alarm(0)
        _VICTIM = ""
    report, expected = json.loads(two.read_text()), json.loads(one.read_text())
    dead = [f for f in report["findings"] if f["file"] == paths[5]]
    assert result.exit_code == 2 and [f["rule"] for f in dead] == ["unreadable-input"]
    assert "the worker process reading it died (killed by signal 9, SIGKILL: out of memory?)" in dead[0]["message"]
    files = {f["path"]: f for f in report["files"]}
    assert files[paths[5]]["status"] == "unreadable"
    assert [f for f in report["files"] if f["path"] != paths[5]] == [
        f for f in expected["files"] if f["path"] != paths[5]
    ]  # every other file audited (the findings of a file that needs the dead one's library differ)
