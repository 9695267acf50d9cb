"""Reading inputs on every core: ``--jobs N`` (issue 14, section 3).

``read_paths`` reads files into ``Binary`` records in a process pool and hands the results
back in input order, so an audit with ``--jobs 4`` reports exactly what ``--jobs 1`` does.
The readers are pure functions of a file's bytes; the workers are forked with the paths, and
what crosses between processes is an index going out and the records (or the error) coming back
through a file of the run's own — never code to run.  A worker that dies (the OOM killer) costs
the run only the file that kills its process again when read alone (``_forked``).

``available_cpus`` is the default: the CPUs this process may run on
(``os.sched_getaffinity``), capped by the cgroup's CPU quota (cgroup v2 ``cpu.max``, v1
``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``), as a container limited to 2 CPUs on a
64-core host should use 2 workers, not 64.  Python 3.11 has no ``os.process_cpu_count``.
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .errors import InputError, PartialRead, UnsupportedFormat
from .formats import cached_already, read_path
from .model import Binary
from .records import dataclass

#: Fewer files, or fewer bytes in all, than these are read in the calling process: a pool
#: costs more than it saves (measured on this project's 2-core machine: 1,000 tiny files read
#: in 0.9 s in one process, 1.4 s through two).
MIN_POOL_FILES = 8
MIN_POOL_BYTES = 64 << 20
#: A file of at most this many bytes is read in the calling process even with a pool: parsing it
#: costs less than pickling its records back (``formats.copies`` parses such a file once per
#: content, and never caches it). ``/usr/lib/x86_64-linux-gnu`` (976 libraries, 641 files of
#: at most 64 KiB, the rest cached): 5.7 s CPU with a pool for every file, 5.0 s without one.
MIN_POOL_FILE_BYTES = 64 << 10


def available_cpus(cgroup: str = "/sys/fs/cgroup") -> int:
    """The CPUs this process may use: its affinity set, capped by the cgroup's quota (at least 1).

    Args:
        cgroup: the cgroup file system's mount point (a test passes a directory of its own).
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota(cgroup)
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


def _cgroup_quota(cgroup: str) -> float | None:
    """CPUs the cgroup quota allows (quota / period), or ``None`` without a quota."""
    v2 = _read_words(os.path.join(cgroup, "cpu.max"))
    if v2 is not None and len(v2) == 2:
        quota, period = v2
        return _ratio(quota, period)
    v1_quota = _read_words(os.path.join(cgroup, "cpu", "cpu.cfs_quota_us"))
    v1_period = _read_words(os.path.join(cgroup, "cpu", "cpu.cfs_period_us"))
    if v1_quota and v1_period:
        return _ratio(v1_quota[0], v1_period[0])
    return None


def _ratio(quota: str, period: str) -> float | None:
    """``quota / period`` as written in the cgroup files; ``None`` for ``max``, ``-1`` or junk."""
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None  # "max": no limit
    return q / p if q > 0 and p > 0 else None


def _read_words(path: str) -> list[str] | None:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read(256).split()
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class Read:
    """What reading one path gave: its binaries, or the error the reader raised.

    Attributes:
        path: the path read.
        binaries: the records read (empty on error).
        error: the ``InputError`` (an ``UnsupportedFormat`` for a recognised format not read),
            or ``None``.
        problems: an archive's members not read, each an ``InputError`` (``errors.PartialRead``):
            ``binaries`` holds the others.
    """

    path: str
    binaries: tuple[Binary, ...] = ()
    error: InputError | None = None
    problems: tuple[InputError, ...] = ()

    def get(self) -> list[Binary]:
        """The binaries, as ``read_path`` returns them.

        Raises:
            InputError: the error reading the path raised (an ``UnsupportedFormat`` included).
        """
        if self.error is not None:
            raise self.error
        return list(self.binaries)


def read_paths(
    paths: Sequence[str], jobs: int = 1, check: Callable[[str], None] | None = None, sizes: Sequence[int] = ()
) -> list[Read]:
    """Read every path with ``formats.read_path``, in a pool of ``jobs`` processes, results in input order.

    Args:
        paths: files to read.
        jobs: worker processes. Files the cache holds, and files of at most ``MIN_POOL_FILE_BYTES``,
            are read here in any case; the rest go to the pool unless they are fewer than
            ``MIN_POOL_FILES`` or ``MIN_POOL_BYTES`` in all, or the caller has threads of its
            own (see ``_can_fork``) — then they are read here too.
        check: run here on each path before it is read; an ``InputError`` it raises is that
            path's result (the sysroot escape check).
        sizes: each path's size in bytes as the walk saw it (``Collected.sizes``), or empty: a
            path no larger than ``MIN_POOL_FILE_BYTES`` then stays here without a ``stat``.

    Returns:
        One ``Read`` per path, in order: the same records and errors whatever ``jobs`` is, but for
        a file whose worker process died even reading it alone: an ``InputError`` saying so
        (``worker_died``: the signal that killed it).
    """
    results: list[Read | None] = [None] * len(paths)
    todo: list[int] = []
    for i, path in enumerate(paths):
        try:
            if check is not None:
                check(path)
        except InputError as error:
            results[i] = Read(path, error=error)
            continue
        todo.append(i)
    pooled = _worth_a_worker(todo, paths, sizes) if jobs > 1 else []
    if len(pooled) < MIN_POOL_FILES or _total_bytes([paths[i] for i in pooled]) < MIN_POOL_BYTES or not _can_fork():
        pooled = []
    taken = set(pooled)
    here = [i for i in todo if i not in taken]
    if not pooled:
        _read_here(here, paths, results)
    else:
        pooled_reads = _read_pooled(
            [paths[i] for i in pooled], min(jobs, len(pooled)), lambda: _read_here(here, paths, results)
        )
        for i, read in zip(pooled, pooled_reads, strict=True):
            results[i] = read
    return [r for r in results if r is not None]


def _read_pooled(paths: Sequence[str], workers: int, meanwhile: Callable[[], None]) -> list[Read]:
    """``paths`` read in ``workers`` forked processes (``meanwhile`` runs here as they read), in
    order.  A worker that dies (killed: the OOM killer) never hangs the run nor loses the rest
    (``_forked``): only a file whose process died even reading it alone is a ``Read`` of
    ``worker_died``."""
    reads: list[Read | None] = [None] * len(paths)

    def keep(i: int, outcome: _Outcome) -> None:
        reads[i] = _to_read(outcome)

    dead = _forked(lambda i: _read_one(paths[i]), len(paths), workers, keep, meanwhile)
    for i, exitcode in dead.items():
        reads[i] = Read(paths[i], error=InputError(paths[i], worker_died(exitcode)))
    return [read for read in reads if read is not None]


def worker_died(exitcode: int | None) -> str:
    """Why a file has no reading when the process reading it died with ``exitcode`` (``died``)."""
    return f"not read: the worker process reading it died ({died(exitcode)})"


def died(exitcode: int | None) -> str:
    """A dead process's end in words: ``exitcode`` as ``multiprocessing.Process`` gives it, minus
    the signal that killed it (SIGKILL: the OOM killer's, most likely), else its exit status."""
    import signal

    if exitcode is None or exitcode >= 0:
        return f"exit status {exitcode}"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = "unknown"
    return f"killed by signal {-exitcode}, {name}" + (": out of memory?" if -exitcode == signal.SIGKILL else "")


#: What ``_forked`` runs on each index in a worker, and the run's spill directory and started bytes
#: (set in this process before it forks: the workers inherit them, nothing is pickled to them).
_FORKED: tuple[Callable[[int], Any], str, Any] | None = None


def _forked(
    call: Callable[[int], Any],
    count: int,
    workers: int,
    on_result: Callable[[int, Any], None],
    meanwhile: Callable[[], None] | None = None,
) -> dict[int, int | None]:
    """``call(i)`` for each ``i < count`` in a pool of ``workers`` forked processes, told here as
    ``on_result(i, value)`` as each comes back (``meanwhile`` runs here once the pool has its work).

    A value reaches this process through a file of the run's own (``_in_worker``).  A worker that
    dies (killed: the OOM killer) breaks a ``ProcessPoolExecutor`` and fails everything it had not
    returned.  Each worker marks the items it starts (a byte of memory shared with this process):
    those a worker had started run again, each in a process of its own (``_alone``), so only one
    that kills its process again is lost; those none had started go to a fresh pool (each alone
    instead when a pool broke before any item was started or returned, so the loop ends).

    Returns:
        The items whose process died even alone, with its exit code (``died``).
    """
    import mmap
    import shutil
    import tempfile

    global _FORKED
    started = mmap.mmap(-1, max(count, 1))  # anonymous and shared: the forked workers write to it
    _FORKED = (call, tempfile.mkdtemp(prefix="linkaudit-pool-"), started)
    dead: dict[int, int | None] = {}
    try:
        pending = list(range(count))
        while pending:
            broken = _pool_round(pending, workers, on_result, meanwhile)
            meanwhile = None
            fresh = [i for i in broken if not started[i]]
            again = [i for i in broken if started[i]]
            if len(fresh) == len(pending):  # nothing started, nothing returned: no pool again
                again, fresh = fresh, []
            for i in again:
                exitcode = _alone(i)
                if exitcode is None:
                    on_result(i, _unspill(i))
                else:
                    dead[i] = exitcode
            pending = fresh
    finally:
        shutil.rmtree(_FORKED[1], ignore_errors=True)
        _FORKED = None
        started.close()
    return dead


def _pool_round(
    pending: Sequence[int], workers: int, on_result: Callable[[int, Any], None], meanwhile: Callable[[], None] | None
) -> list[int]:
    """One pool over ``pending`` (``_forked``): values told as they come back; the items the pool
    failed when a worker died (``BrokenProcessPool``), in order."""
    import multiprocessing  # the pool's modules (subprocess, tempfile, ...) only when a pool is used
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    broken = []
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(min(workers, len(pending)), mp_context=context, initializer=worker_signals) as pool:
        try:  # one item a message, submitted, not ``map``ped (see stop_workers)
            with _forking():  # the pool forks its workers as work is submitted
                futures = {pool.submit(_in_worker, i): i for i in pending}
            if meanwhile is not None:
                meanwhile()  # while the workers run theirs
            for future in as_completed(futures):
                try:
                    future.result()
                except BrokenProcessPool:
                    broken.append(futures[future])
                    continue
                on_result(futures[future], _unspill(futures[future]))
        except BaseException:  # interrupted (SIGTERM unwinds as Ctrl-C): no waiting for the workers
            stop_workers(pool)
            raise
    return sorted(broken)


def _in_worker(i: int) -> None:
    """Item ``i`` in a worker: marked started, its value left in the spill directory (``_unspill``),
    and nothing but ``None`` sent back, so every message in the pool's pipe is one ``write`` of
    less than ``PIPE_BUF`` bytes, whole or not at all.  A worker killed while writing a large
    result left half a message there, and the pool's thread waited for the rest for ever."""
    import pickle  # our own values, between our own processes, through a 0700 directory of ours

    assert _FORKED is not None
    call, spill, started = _FORKED
    started[i] = 1
    value = call(i)
    part = os.path.join(spill, f"{i}.part")
    with open(part, "wb") as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(part, os.path.join(spill, str(i)))  # whole, or not there


def _unspill(i: int) -> Any:
    """Item ``i``'s value as a worker left it (``_in_worker``); its file removed."""
    import pickle

    assert _FORKED is not None
    path = os.path.join(_FORKED[1], str(i))
    with open(path, "rb") as fh:
        value = pickle.load(fh)
    os.unlink(path)
    return value


def _alone(i: int) -> int | None:
    """Item ``i`` run in a forked process of its own: ``None`` once its value is in the spill
    directory, else the process's exit code (``died``)."""
    import multiprocessing

    process = multiprocessing.get_context("fork").Process(target=_alone_child, args=(i,), daemon=True)
    with _forking():
        process.start()
    try:
        process.join()
    except BaseException:  # interrupted: the run does not wait for it
        process.kill()
        process.join()
        raise
    return None if process.exitcode == 0 else process.exitcode


def _alone_child(i: int) -> None:
    worker_signals()
    _in_worker(i)


def worker_signals() -> None:
    """A pool worker's initializer: SIGTERM and SIGHUP end it, as the pool expects, and SIGINT is
    ignored.  The forked worker inherits the CLI's handlers, which unwind as Ctrl-C (``cli.app``):
    the pool's own SIGTERM to a worker then became a result the worker blocked writing back — a
    run hung for 18 minutes after one worker was killed.  Ctrl-C on a terminal reaches every
    process of the group: the parent decides (it stops its workers, ``stop_workers``), and an idle
    worker no longer dies printing a ``KeyboardInterrupt`` traceback of its own.  The worker was
    forked with these signals blocked (``_forking``): they are unblocked here, once handled so."""
    import signal

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _worker_signals())
    _die_with_parent()


#: This process's id as its workers are forked (``_forking``): a worker whose parent is another has
#: lost it already.
_PARENT = os.getpid()


def _die_with_parent() -> None:
    """On Linux, ask the kernel to SIGKILL this worker when the process that forked it ends
    (``prctl(PR_SET_PDEATHSIG)``, prctl(2)): a ``check`` killed by SIGKILL (the OOM killer, a CI
    runner's hard timeout) left its workers reading on, orphaned, for as long as their reads took.
    A parent gone before the request was made ends the worker at once."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != _PARENT:
        os._exit(1)


def _worker_signals() -> set[int]:
    """The signals ``worker_signals`` sets: SIGTERM, SIGHUP, SIGINT."""
    import signal

    return {getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)}


@contextlib.contextmanager
def _forking() -> Iterator[None]:
    """Hold back (block, not lose) the signals a worker handles its own way while this process
    forks workers: a child is born with them blocked until ``worker_signals`` has set its handlers.
    Ctrl-C in between ran the parent's handler in the child (a traceback from ``random``'s at-fork
    hook).  A signal held back here is delivered as the block ends."""
    import signal

    global _PARENT
    _PARENT = os.getpid()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _worker_signals())
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def stop_workers(pool: Any) -> None:
    """End ``pool``'s worker processes now (an interrupted run does not wait for their reads):
    ``shutdown`` without waiting, then SIGKILL to each worker still alive (a worker has nothing to
    clean up, and one forked a moment ago may still have the CLI's handlers).  The workers are
    taken before ``shutdown``, which forgets them: none was stopped, and a worker in a long read
    kept the run alive after "interrupted" (the pool's thread waits for its workers at exit).
    No future is cancelled (nor left to ``Executor.map``, whose iterator cancels the rest when it
    is interrupted): the dead workers fail them all, and Python 3.11's pool thread raised
    ``InvalidStateError`` (a traceback) setting that failure on a future cancelled already.  The
    pool's own thread is left to the interpreter's exit, which ``cli.app.run`` skips after an
    interrupt."""
    processes = dict(getattr(pool, "_processes", None) or {})  # the executor's own map of pid -> Process
    pool.shutdown(wait=False)
    for process in processes.values():
        with contextlib.suppress(OSError, ValueError, AttributeError):
            process.kill()


def _read_here(indices: Sequence[int], paths: Sequence[str], results: list[Read | None]) -> None:
    """Read ``paths[i]`` for each of ``indices`` in this process into ``results[i]``."""
    for i in indices:
        try:
            results[i] = Read(paths[i], tuple(read_path(paths[i])))
        except PartialRead as error:
            results[i] = Read(paths[i], error.binaries, problems=error.errors)
        except InputError as error:
            results[i] = Read(paths[i], error=error)


def _worth_a_worker(indices: Sequence[int], paths: Sequence[str], sizes: Sequence[int] = ()) -> list[int]:
    """Those of ``indices`` whose file is worth a worker: an ordinary file of more than
    ``MIN_POOL_FILE_BYTES`` that the cache does not hold (a warm read, or a small file's parse, costs
    less than sending its records back from a worker). ``sizes``: as ``read_paths``'."""
    out = []
    for i in indices:
        if sizes and sizes[i] <= MIN_POOL_FILE_BYTES:
            continue  # small when found: read here (200,000 tar members, 200,000 stat calls saved)
        try:
            st = os.stat(paths[i])
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_size > MIN_POOL_FILE_BYTES and not cached_already(paths[i]):
            out.append(i)
    return out


def _total_bytes(paths: Sequence[str]) -> int:
    """The sizes of ``paths`` added up (a path that cannot be stat'ed counts 0: its reader says why)."""
    total = 0
    for path in paths:
        with contextlib.suppress(OSError):
            total += os.stat(path).st_size
    return total


def _can_fork() -> bool:
    """Workers are forked: no re-import of the caller's main module (which ``spawn`` and
    ``forkserver`` do, breaking a script without a ``__main__`` guard), and no start-up cost.
    A process with other threads is not forked (a lock one of them holds would stay held in
    the child): it reads in the calling process instead, with the same results."""
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


#: What a worker leaves: the records, or the error's fields (exceptions whose ``__init__`` takes
#: other arguments than ``args`` do not pickle).
_Error = tuple[str, str, int | None, str | None]  # path, reason, offset, container (UnsupportedFormat)
_Outcome = tuple[str, tuple[Binary, ...], _Error | None, tuple[_Error, ...]]


def _read_one(path: str) -> _Outcome:
    """Read one path, in a worker: its records, its error, and the errors of members not read."""
    try:
        return path, tuple(read_path(path)), None, ()
    except PartialRead as error:
        return path, error.binaries, None, tuple((e.path, e.reason, e.offset, None) for e in error.errors)
    except UnsupportedFormat as error:
        return path, (), (error.path, error.reason, None, error.container), ()
    except InputError as error:
        return path, (), (error.path, error.reason, error.offset, None), ()


def _to_read(outcome: _Outcome) -> Read:
    """The ``Read`` a worker's outcome stands for (the errors rebuilt here)."""
    path, binaries, error, partial = outcome
    if partial:
        return Read(path, binaries, problems=tuple(InputError(*e[:3]) for e in partial))
    if error is None:
        return Read(path, binaries)
    where, reason, offset, container = error
    if container is not None:
        return Read(path, error=UnsupportedFormat(where, container, reason))
    return Read(path, error=InputError(where, reason, offset))


# --- Independent tasks (installations) over a pool: ``audit``'s installation loop -------------

#: Fewer tasks than this run in the calling process.  Measured (``benchmarks/bench_cluster.py
#: --small-only``, 2-core machine): forking and feeding a pool of two costs about 0.1 s of CPU
#: (channels of 4, 8, 16 tiny packages: 0.55, 0.55, 0.68 s with ``-j 2`` against 0.39, 0.47,
#: 0.60 s with ``-j 1``), and a tiny package's audit about 20 ms, so two cores win it back from
#: about ten packages on (a real wheel's audit takes far longer: any two would pay).
MIN_POOL_TASKS = 10


@dataclass(frozen=True, slots=True)
class Failed:
    """A task that did not give a result: it raised, or the worker running it died.

    Attributes:
        index: the task's position in the list given.
        reason: what happened, in words (the exception's type and message, or the worker's death).
    """

    index: int
    reason: str


#: A task function, ``work(common, task) -> result`` (module-level: it runs in the workers).
Work = Callable[[Any, Any], Any]
#: Told ``(index, result)`` as each task finishes.
OnDone = Callable[[int, Any], None]


@dataclass(frozen=True, slots=True)
class Spread:
    """Where and how ``audit`` runs its installations (each an independent task).

    Attributes:
        runner: runs the tasks, as ``run_tasks`` does (``cluster.Cluster.run`` for a Dask
            cluster); ``None``: ``run_tasks``, a pool of ``AuditConfig.jobs`` processes.
        each: every package its own installation (``--each``: a channel or a mirror, whose
            packages are not installed together), the other inputs one more.
        on_part: called with ``(index, packages, findings)`` as each installation finishes
            (completion order): its index in the plan, its packages (paths as given) and its
            findings not met before, with the configuration's severities and suppressions applied.
        on_plan: called with the number of installations once they are planned.
        on_links: called, before ``on_part``, with an installation's package symlinks that lead
            inside its staging (``Report.links``): a member asked by a link's name is its target.
    """

    runner: Callable[..., list[Any]] | None = None
    each: bool = False
    on_part: Callable[[int, tuple[str, ...], list[Any]], None] | None = None
    on_plan: Callable[[int], None] | None = None
    on_links: Callable[[dict[str, str]], None] | None = None


def pools(tasks: int, jobs: int) -> bool:
    """True when ``run_tasks`` runs ``tasks`` tasks in a pool of ``jobs`` processes."""
    return jobs > 1 and tasks >= MIN_POOL_TASKS and _can_fork()


def run_tasks(work: Work, common: Any, tasks: Sequence[Any], jobs: int, on_done: OnDone | None = None) -> list[Any]:
    """``work(common, task)`` for every task, in a pool of ``jobs`` forked processes.

    Args:
        work: a function run in the workers; ``common`` is its first argument for every task
            (the workers inherit both with the fork: neither is pickled).
        tasks: the tasks (inherited by the workers too); each result is pickled back through a
            file of the run's own (``_forked``).
        jobs: worker processes; 1, fewer than ``MIN_POOL_TASKS`` tasks or a caller with threads
            (``_can_fork``) runs them here, in order.
        on_done: called here with ``(index, result)`` as each task finishes (completion order);
            an exception it raises ends the run (its workers killed) and propagates.

    Returns:
        One entry per task, in input order: its result, or a ``Failed`` when the task raised or
        its worker died.  A dead worker breaks a ``ProcessPoolExecutor`` and every task still
        running or queued with it: those it had started run again, each in a process of its own,
        the others in a fresh pool, so only the task that kills its process again fails (as Dask
        retries a dead worker's tasks), named with the signal that killed it.
    """
    results: list[Any] = [None] * len(tasks)

    def done(i: int, result: Any) -> None:
        results[i] = result
        if on_done is not None:
            on_done(i, result)

    if not pools(len(tasks), jobs):
        for i, task in enumerate(tasks):
            done(i, work(common, task))
        return results
    dead = _forked(lambda i: _run_task(work, common, tasks, i), len(tasks), jobs, done)
    for i, exitcode in sorted(dead.items()):
        done(i, Failed(i, task_died(died(exitcode))))
    return results


def _run_task(work: Work, common: Any, tasks: Sequence[Any], i: int) -> Any:
    """Task ``i`` in a forked worker: its result, or a ``Failed`` when it raised."""
    try:
        return work(common, tasks[i])
    except Exception as error:
        return Failed(i, failure_reason(error))


def failure_reason(error: BaseException) -> str:
    """A task's failure in words: ``KilledWorker`` and a broken pool as a worker's death, any other
    exception as its type and message."""
    name = type(error).__name__
    if name in ("KilledWorker", "BrokenProcessPool"):
        return task_died(f"{name}: {error}")
    return f"{name}: {error}"


def task_died(how: str) -> str:
    """Why a task has no result when the worker auditing it died; ``how``: the signal, or the
    scheduler's exception."""
    return f"the worker auditing it died ({how}); the package may crash or exhaust a worker"
