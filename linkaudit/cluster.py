"""Installations as tasks on a Dask distributed cluster: ``check --scheduler`` (issue 14, section 4).

Imported only when ``--scheduler ADDRESS`` or ``--scheduler-file FILE`` is given, and only then
imports ``distributed`` (the optional extra ``native-linkage-auditor[dask]``).  What goes to the
workers is paths (the inputs must lie on a file system every worker sees at the same path) and
the audit's configuration, sent once (``Client.scatter``); what comes back is each installation's
part of the report.  Before any task is sent, every worker is asked (``Client.run``) which
linkaudit and which policy data it runs: a worker that differs would judge by other rules, so the
run stops with a usage error naming it.

Dask reschedules the tasks of a worker that dies; after ``distributed.scheduler.allowed-failures``
deaths it gives up on a task with ``KilledWorker``.  That, and any exception a task raises, is
the task's ``jobs.Failed``: ``audit`` makes it a finding for that package and keeps the rest.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from importlib import resources
from typing import Any

from .errors import ConfigError
from .jobs import Failed, OnDone, Work, failure_reason

#: How long to try reaching the scheduler before giving up (a ``distributed`` time string).
CONNECT_TIMEOUT = "20s"

#: The extra that installs ``distributed``, as the error and the test skips name it.
EXTRA = "native-linkage-auditor[dask]"


def data_version() -> str:
    """linkaudit's version and a SHA-256 (first 16 hex digits) of its policy and rule data
    (``rules/data``, ``packages/data``, the generated ``ruledata`` module): what must be equal on
    every worker for the workers to judge as the client does."""
    from . import __version__

    digest = hashlib.sha256()
    for package in ("linkaudit.rules", "linkaudit.packages"):
        folder = resources.files(package) / "data"
        for entry in sorted(folder.iterdir(), key=lambda e: e.name):
            if entry.is_file():
                digest.update(entry.name.encode() + b"\0" + entry.read_bytes())
    digest.update((resources.files("linkaudit") / "ruledata.py").read_bytes())
    return f"{__version__}+{digest.hexdigest()[:16]}"


def _worker_facts() -> tuple[str, str]:
    """On a worker: ``(data_version(), working directory)``."""
    return data_version(), os.getcwd()


class Cluster:
    """A connection to a running Dask scheduler; ``run`` is ``jobs.run_tasks`` on its workers.

    Args:
        address: the scheduler's address (``tcp://host:8786``), or ``None``.
        scheduler_file: the JSON file a scheduler writes (``dask scheduler --scheduler-file``),
            or ``None``; exactly one of the two.
        relative_inputs: some input paths are relative: every worker must then run in the
            client's working directory.

    Raises:
        ConfigError: ``distributed`` is not installed, the scheduler cannot be reached, it has no
            worker, or a worker runs another linkaudit or other policy data (or, for relative
            inputs, in another directory).
    """

    def __init__(self, address: str | None = None, scheduler_file: str | None = None, relative_inputs: bool = False):
        try:
            from distributed import Client
        except ImportError:
            raise ConfigError(f"--scheduler needs dask's distributed: pip install '{EXTRA}'") from None
        where = address if address is not None else f"--scheduler-file {scheduler_file}"
        try:
            self.client = Client(address, scheduler_file=scheduler_file, timeout=CONNECT_TIMEOUT, set_as_default=False)  # type: ignore[no-untyped-call]
        except (OSError, ValueError) as error:  # distributed raises OSError subclasses on timeouts
            raise ConfigError(f"--scheduler {where}: cannot reach the scheduler ({error})") from None
        try:
            self._check_workers(relative_inputs)
        except BaseException:
            self.client.close()  # type: ignore[no-untyped-call]
            raise

    def _check_workers(self, relative_inputs: bool) -> None:
        """Every worker runs this linkaudit with this policy data (and, for relative inputs, here)."""
        facts = self.client.run(_worker_facts)
        if not facts:
            raise ConfigError("--scheduler: the cluster has no worker")
        mine = data_version()
        for worker, (version, cwd) in sorted(facts.items()):
            if version != mine:
                raise ConfigError(
                    f"--scheduler: worker {worker} runs linkaudit {version}, this client {mine}: "
                    "install the same linkaudit on every worker"
                )
            if relative_inputs and cwd != os.getcwd():
                raise ConfigError(
                    f"--scheduler: worker {worker} runs in {cwd}, not {os.getcwd()}: give the inputs as absolute paths"
                )

    def close(self) -> None:
        """Disconnect (the cluster keeps running)."""
        self.client.close()  # type: ignore[no-untyped-call]

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, work: Work, common: Any, tasks: Sequence[Any], jobs: int, on_done: OnDone | None = None) -> list[Any]:
        """``work(common, task)`` for every task on the cluster's workers, as ``jobs.run_tasks``
        (``jobs`` is unused: the cluster's workers decide).

        Returns:
            One entry per task, in input order: its result or a ``jobs.Failed`` (``KilledWorker``
            after the allowed worker deaths, or the exception the task raised).
        """
        from distributed import as_completed

        shared = self.client.scatter(common, broadcast=True, hash=False)  # type: ignore[no-untyped-call]
        futures = {
            self.client.submit(work, shared, task, pure=False, key=f"linkaudit-task-{i}-{os.getpid()}-{id(tasks)}"): i
            for i, task in enumerate(tasks)
        }
        results: list[Any] = [None] * len(tasks)
        finished: set[int] = set()
        for future in as_completed(futures, loop=self.client.loop):  # type: ignore[no-untyped-call]
            i = futures[future]
            if i in finished:  # a result lost with a dead worker, computed again: taken once
                continue
            finished.add(i)
            try:
                results[i] = future.result()
            except BaseException as error:  # KilledWorker, a cancelled future, or what the task raised
                if isinstance(error, (KeyboardInterrupt, SystemExit)):
                    raise
                results[i] = Failed(i, failure_reason(error))
            future.release()
            if on_done is not None:
                on_done(i, results[i])
        return results
