"""Installations on a Dask cluster (issue 14, section 4): a ``LocalCluster`` on the loopback
interface, no dashboard, two worker processes of one thread each; the report is the in-process one,
a worker killed mid-run loses nothing, ``KilledWorker`` is a finding for its package.  Skipped,
naming the extra, where ``distributed`` is not installed.

Named to run last: a process that has run a Dask client keeps its threads (the client's event
loop, distributed's offload pool), and ``jobs._can_fork`` then reads in the calling process
rather than fork a threaded process, so the tests that check a pool is used run before this file.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from linkaudit import AuditConfig, audit
from linkaudit.jobs import Spread
from tests import test_cluster as base

CHANNEL_SIZE, _same = base.CHANNEL_SIZE, base._same
channel, config, plain = base.channel, base.config, base.plain  # the same fixtures (module-scoped here)


def _local_cluster() -> Any:
    """Two worker processes of one thread each, on the loopback interface, no dashboard; skips
    naming the extra where ``distributed`` is not installed."""
    distributed = pytest.importorskip(
        "distributed", reason="dask's distributed is not installed: pip install 'native-linkage-auditor[dask]'"
    )
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", scheduler_port=0, dashboard_address=None
    )


@pytest.fixture(scope="module")
def cluster() -> Any:
    with _local_cluster() as local:
        yield local


def test_cluster_report_equals_the_in_process_one(cluster: Any, channel: Path, config: AuditConfig, plain: Any) -> None:
    from linkaudit.cluster import Cluster

    with Cluster(cluster.scheduler_address) as remote:
        on_cluster = audit([str(channel)], config, spread=Spread(runner=remote.run, each=True))
    _same(plain, on_cluster)


def test_a_worker_killed_mid_run_loses_nothing(cluster: Any, channel: Path, config: AuditConfig, plain: Any) -> None:
    """Dask reschedules the dead worker's tasks (the nanny starts a new worker): the report is whole."""
    from linkaudit.cluster import Cluster

    killed: list[int] = []
    with Cluster(cluster.scheduler_address) as remote:
        pids = remote.client.run(os.getpid)

        def on_part(index: int, packages: tuple[str, ...], findings: list[Any]) -> None:
            if not killed and len(seen) >= 20:
                pid = sorted(pids.values())[0]
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
            seen.append(index)

        seen: list[int] = []
        report = audit([str(channel)], config, spread=Spread(runner=remote.run, each=True, on_part=on_part))
    # each installation heard of once: the packages and the channel directory's own (no file of its own)
    assert killed and sorted(seen) == list(range(CHANNEL_SIZE + 1))
    _same(plain, report)


def test_cli_scheduler_json_equals_the_plain_run(run_cli, cluster: Any, channel: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    docs = []
    for extra in ((), ("--scheduler", cluster.scheduler_address)):
        out = tmp_path / f"r{len(docs)}.json"
        run_cli("check", "--no-config", "--each", *extra, "--format", "json", "-o", str(out), str(channel))
        doc = json.loads(out.read_text())
        doc["summary"].pop("seconds")
        docs.append(doc)
    assert docs[0] == docs[1]


def test_a_worker_running_other_policy_data_is_refused(cluster: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import linkaudit.cluster as module
    from linkaudit.errors import ConfigError

    monkeypatch.setattr(module, "data_version", lambda: "0.0.0+other")  # this client, not the workers
    with pytest.raises(ConfigError, match=r"runs linkaudit 0\.1\.0"):
        module.Cluster(cluster.scheduler_address)


def test_no_scheduler_is_a_usage_error(run_cli, channel: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("distributed", reason="pip install 'native-linkage-auditor[dask]'")
    import linkaudit.cluster

    monkeypatch.setattr(linkaudit.cluster, "CONNECT_TIMEOUT", "2s")
    result = run_cli("check", "--scheduler", "tcp://127.0.0.1:9", str(channel))
    assert result.exit_code == 2 and "cannot reach the scheduler" in result.stderr


def test_cli_scheduler_file_and_a_usage_error_for_both(run_cli, cluster: Any, channel: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """``--scheduler-file`` as HPC sites write it (``{"address": ...}``); the two options together: exit 2."""
    sched = tmp_path / "scheduler.json"
    sched.write_text(json.dumps({"address": cluster.scheduler_address}))
    packages = [str(p) for p in sorted(channel.iterdir())[:4]]
    runs = [
        run_cli("check", "--no-config", "--each", *extra, "--format", "json", *packages)
        for extra in ((), ("--scheduler-file", str(sched)))
    ]
    docs = [json.loads(r.stdout) for r in runs]
    for doc in docs:
        doc["summary"].pop("seconds")
    assert runs[0].exit_code == runs[1].exit_code and docs[0] == docs[1]
    both = run_cli("check", "--scheduler", cluster.scheduler_address, "--scheduler-file", str(sched), *packages)
    assert both.exit_code == 2 and "give one" in both.stderr


def _die_on(victim: str) -> None:
    """On a worker: its audit of ``victim`` kills the worker process (as a crashing reader would)."""
    driver = sys.modules["linkaudit.audit"]
    real = driver._audit_installation

    def dying(planned, config, *rest):  # type: ignore[no-untyped-def]
        if planned.paths == (victim,):
            os._exit(1)
        return real(planned, config, *rest)

    driver._audit_installation = dying


def test_killed_worker_is_a_finding_for_that_package_and_the_rest_is_audited(
    channel: Path, config: AuditConfig
) -> None:
    """With ``allowed-failures`` 0, the package whose audit kills its worker raises ``KilledWorker``."""
    pytest.importorskip("distributed", reason="pip install 'native-linkage-auditor[dask]'")
    import dask

    from linkaudit.cluster import Cluster

    packages = [str(p) for p in sorted(channel.iterdir())[:12]]
    victim = packages[5]
    expected = audit(packages, config, spread=Spread(each=True))
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        _local_cluster() as local,
        Cluster(local.scheduler_address) as remote,
    ):
        remote.client.run(_die_on, victim)
        report = audit(packages, config, spread=Spread(runner=remote.run, each=True))
    # With no failure allowed, a task the dying worker held besides the victim's fails too (Dask's
    # rule, why allowed-failures defaults to 3): each failed package is named, none is lost.
    failed = {f.file: f.message for f in report.findings if f.rule == "unreadable-input"}
    assert victim in failed and len(failed) <= 3
    assert all("KilledWorker" in m and "died" in m for m in failed.values())
    assert {f.path for f in report.files if f.status == "unreadable"} == set(failed)
    assert [f for f in report.findings if f.rule != "unreadable-input"] == [
        f for f in expected.findings if f.file.split("!")[0] not in failed
    ]
