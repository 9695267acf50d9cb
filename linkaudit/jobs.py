"""Reading inputs on every core: ``--jobs N`` (issue 14, section 3).

``read_paths`` reads files into ``Binary`` records in a process pool and hands the results
back in input order, so an audit with ``--jobs 4`` reports exactly what ``--jobs 1`` does.
The readers are pure functions of a file's bytes; what crosses between processes is the
path going out and the records (or the error) coming back — never code to run.

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
from collections.abc import Callable, Sequence
from typing import Any

from .errors import InputError, UnsupportedFormat
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
    """

    path: str
    binaries: tuple[Binary, ...] = ()
    error: InputError | None = None

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
        One ``Read`` per path, in order: the same records and errors whatever ``jobs`` is.
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


#: Why a file has no reading when the worker reading it died.
WORKER_DIED = "not read: the worker process reading it died (killed by a signal: out of memory?)"


def _read_pooled(paths: Sequence[str], workers: int, meanwhile: Callable[[], None]) -> list[Read]:
    """``paths`` read in a pool of ``workers`` forked processes (``meanwhile`` runs here as they
    read), in order.  A worker that dies (killed: the OOM killer) breaks the pool: the paths it
    had not returned are read again, each in a process of its own, so only the file that kills its
    worker again is a ``Read`` of ``WORKER_DIED`` — never a hang, never the rest lost."""
    import multiprocessing  # the pool's modules (subprocess, tempfile, ...) only when a pool is used
    import shutil
    import tempfile
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _SPILL
    done: list[Read] = []
    context = multiprocessing.get_context("fork")
    _SPILL = tempfile.mkdtemp(prefix="linkaudit-reads-")
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=worker_signals) as pool:
            try:  # one path a message: a chunk's results together could pass PIPE_BUF
                futures = [pool.submit(_read_one, path) for path in paths]  # not ``map``: see stop_workers
                meanwhile()  # while the workers read theirs
                for future in futures:
                    done.append(_to_read(future.result()))
            except BrokenProcessPool:
                pass
            except BaseException:  # interrupted (SIGTERM unwinds as Ctrl-C): no waiting for the workers
                stop_workers(pool)
                raise
        for path in paths[len(done) :]:
            done.append(_read_alone(path, context))
    finally:
        shutil.rmtree(_SPILL, ignore_errors=True)
        _SPILL = None
    return done


def _read_alone(path: str, context: Any) -> Read:
    """``path`` read in a forked process of its own; ``WORKER_DIED`` when that process dies too."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    with ProcessPoolExecutor(1, mp_context=context, initializer=worker_signals) as alone:
        try:
            return _to_read(alone.submit(_read_one, path).result())
        except BrokenProcessPool:
            return Read(path, error=InputError(path, WORKER_DIED))
        except BaseException:  # interrupted: the read is not waited for
            stop_workers(alone)
            raise


def worker_signals() -> None:
    """A pool worker's initializer: SIGTERM and SIGHUP end it, as the pool expects, and SIGINT is
    ignored.  The forked worker inherits the CLI's handlers, which unwind as Ctrl-C (``cli.app``):
    the pool's own SIGTERM to a worker then became a result the worker blocked writing back — a
    run hung for 18 minutes after one worker was killed.  Ctrl-C on a terminal reaches every
    process of the group: the parent decides (it stops its workers, ``stop_workers``), and an idle
    worker no longer dies printing a ``KeyboardInterrupt`` traceback of its own."""
    import signal

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_workers(pool: Any) -> None:
    """End ``pool``'s worker processes now (an interrupted run does not wait for their reads):
    ``shutdown`` without waiting, then SIGKILL to each worker still alive (a worker has nothing to
    clean up, and one forked a moment ago may still have the CLI's handlers).  The workers are
    taken before ``shutdown``, which forgets them: none was stopped, and a worker in a long read
    kept the run alive after "interrupted" (the pool's thread waits for its workers at exit).
    No future is cancelled (nor left to ``Executor.map``, whose iterator cancels the rest when it
    is interrupted): the dead workers fail them all, and Python 3.11's pool thread raised
    ``InvalidStateError`` (a traceback) setting that failure on a future cancelled already."""
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


#: What a worker sends back: the records, or the error's fields (exceptions whose ``__init__``
#: takes other arguments than ``args`` do not pickle).
_Outcome = tuple[str, tuple[Binary, ...] | str, tuple[str, str, int | None, str | None] | None]


#: The private directory (made by the parent before it forks) where workers leave their records.
_SPILL: str | None = None


def _read_one(path: str) -> _Outcome:
    """Read one path, in a worker: the records are left in a file of ``_SPILL`` and its name sent
    back, so every message through the pool's pipe is small — written whole by one ``write`` of
    at most ``PIPE_BUF`` bytes.  A worker killed while writing a large result left half a message
    in the pipe, and the pool's manager thread waited for the rest for ever (a hung run)."""
    try:
        binaries = tuple(read_path(path))
    except UnsupportedFormat as error:
        return path, (), (error.path, error.reason, None, error.container)
    except InputError as error:
        return path, (), (error.path, error.reason, error.offset, None)
    if _SPILL is None:
        return path, binaries, None
    import pickle  # our own records, between our own processes, through a 0700 directory of ours
    import tempfile

    fd, spilled = tempfile.mkstemp(dir=_SPILL)
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(binaries, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path, spilled, None


def _to_read(outcome: _Outcome) -> Read:
    """The ``Read`` a worker's outcome stands for (the error rebuilt here; spilled records loaded
    and their file removed)."""
    path, sent, error = outcome
    binaries: tuple[Binary, ...] = () if isinstance(sent, str) else sent
    if isinstance(sent, str):
        import pickle

        with open(sent, "rb") as fh:
            binaries = pickle.load(fh)
        os.unlink(sent)
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
    """

    runner: Callable[..., list[Any]] | None = None
    each: bool = False
    on_part: Callable[[int, tuple[str, ...], list[Any]], None] | None = None
    on_plan: Callable[[int], None] | None = None


def pools(tasks: int, jobs: int) -> bool:
    """True when ``run_tasks`` runs ``tasks`` tasks in a pool of ``jobs`` processes."""
    return jobs > 1 and tasks >= MIN_POOL_TASKS and _can_fork()


def run_tasks(work: Work, common: Any, tasks: Sequence[Any], jobs: int, on_done: OnDone | None = None) -> list[Any]:
    """``work(common, task)`` for every task, in a pool of ``jobs`` forked processes.

    Args:
        work: a module-level function (it runs in the workers); ``common`` is its first argument
            for every task (sent to each worker once, with the fork).
        tasks: the tasks; each is pickled to a worker and its result pickled back.
        jobs: worker processes; 1, fewer than ``MIN_POOL_TASKS`` tasks or a caller with threads
            (``_can_fork``) runs them here, in order.
        on_done: called here with ``(index, result)`` as each task finishes (completion order).

    Returns:
        One entry per task, in input order: its result, or a ``Failed`` when the task raised or
        its worker died.  A dead worker breaks a ``ProcessPoolExecutor`` and every task still
        running or queued with it: those run again, each in a process of its own, so only the
        task that kills its worker fails (as Dask retries a dead worker's tasks).
    """
    results: list[Any] = [None] * len(tasks)
    if not pools(len(tasks), jobs):
        for i, task in enumerate(tasks):
            results[i] = work(common, task)
            if on_done is not None:
                on_done(i, results[i])
        return results
    global _COMMON
    _COMMON = (work, common)  # inherited by the forked workers, never pickled
    try:
        broken = _run_pool(tasks, jobs, results, on_done)
        for i in broken:  # again, each in a process of its own: only the culprit dies again
            results[i] = _run_pool_of_one(tasks[i], i)
            if on_done is not None:
                on_done(i, results[i])
    finally:
        _COMMON = None
    return results


def _run_pool(tasks: Sequence[Any], jobs: int, results: list[Any], on_done: OnDone | None) -> list[int]:
    """``run_tasks``' pool: results set (and told) as tasks finish; the indices of the tasks a dead
    worker took down with the pool (``BrokenProcessPool``), in order."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    broken = []
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=context, initializer=worker_signals) as pool:
        try:
            futures = {pool.submit(_run_forked, task): i for i, task in enumerate(tasks)}
            for future in as_completed(futures):
                i = futures[future]
                try:
                    results[i] = future.result()
                except BrokenProcessPool:  # a worker died: every task not finished fails with it
                    broken.append(i)
                    continue
                except Exception as error:  # the task raised
                    results[i] = Failed(i, failure_reason(error))
                if on_done is not None:
                    on_done(i, results[i])
        except BaseException:  # interrupted (SIGTERM unwinds as Ctrl-C): no waiting for the workers
            stop_workers(pool)
            raise
    return sorted(broken)


def _run_pool_of_one(task: Any, index: int) -> Any:
    """One task in a forked process of its own: its result, or a ``Failed``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"), initializer=worker_signals) as alone:
        try:
            return alone.submit(_run_forked, task).result()
        except Exception as error:
            return Failed(index, failure_reason(error))
        except BaseException:
            stop_workers(alone)
            raise


_COMMON: tuple[Work, Any] | None = None


def _run_forked(task: Any) -> Any:
    """One task in a forked worker, with the ``work`` and ``common`` the parent set before forking."""
    assert _COMMON is not None
    work, common = _COMMON
    return work(common, task)


def failure_reason(error: BaseException) -> str:
    """A task's failure in words: ``KilledWorker`` and a broken pool as a worker's death, any other
    exception as its type and message."""
    name = type(error).__name__
    if name in ("KilledWorker", "BrokenProcessPool"):
        return f"the worker auditing it died ({name}: {error}); the package may crash or exhaust a worker"
    return f"{name}: {error}"
