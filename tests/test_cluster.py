"""Installations as tasks (issue 14, sections 3 and 4): on a process pool and on a Dask cluster the
report is the in-process one; a worker killed mid-run loses nothing; ``--format jsonl`` streams.

The cluster is a ``LocalCluster`` on the loopback interface with no dashboard (two worker
processes of one thread each); these tests skip, naming the extra, where ``distributed`` is not
installed.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from linkaudit import AuditConfig, audit, jobs
from linkaudit.jobs import Failed, Spread, run_tasks
from linkaudit.loader.target import TargetEnvironment
from tests.channel import make_channel
from tests.output.schema import _schema

CHANNEL_SIZE = 200


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("channel")
    make_channel(directory, CHANNEL_SIZE)
    return directory


@pytest.fixture(scope="module")
def config() -> AuditConfig:
    return AuditConfig(target=TargetEnvironment(), jobs=1)


@pytest.fixture(scope="module")
def plain(channel: Path, config: AuditConfig) -> Any:
    return audit([str(channel)], config, spread=Spread(each=True))


def _same(a: Any, b: Any) -> None:
    assert a.findings == b.findings
    assert (a.files, a.roots, a.rules, a.config) == (b.files, b.roots, b.rules, b.config)


def test_the_channel_is_worth_comparing(plain: Any) -> None:
    """Every package its own installation, all audited, findings of several rules."""
    assert len(plain.config["installations"]) == CHANNEL_SIZE
    assert {f.status for f in plain.files} == {"audited"}
    assert len({f.path.split("!")[0] for f in plain.files}) == CHANNEL_SIZE
    assert len({f.rule for f in plain.findings}) >= 4


def test_process_pool_over_installations_gives_the_plain_report(
    channel: Path, config: AuditConfig, plain: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    used = []
    real = jobs.pools
    driver = sys.modules["linkaudit.audit"]  # the module: ``linkaudit.audit`` is the function
    monkeypatch.setattr(driver, "pools", lambda n, j: used.append(real(n, j)) or real(n, j))
    pooled = audit([str(channel)], AuditConfig(target=config.target, jobs=2), spread=Spread(each=True))
    assert used == [True]  # else the pool was never used
    _same(plain, pooled)


def _explode(common: object, task: int) -> int:
    if task == 3:
        raise RuntimeError("boom")
    if task == 5:
        os.kill(os.getpid(), signal.SIGKILL)
    return task * 2


def test_a_failed_task_and_a_dead_pool_worker_are_results_of_their_own() -> None:
    done: list[int] = []
    tasks = list(range(jobs.MIN_POOL_TASKS + 2))
    assert jobs.pools(len(tasks), 2)  # in a pool: task 5 would kill this process
    results = run_tasks(_explode, None, tasks, 2, lambda i, r: done.append(i))
    assert sorted(done) == tasks
    assert isinstance(results[3], Failed) and "RuntimeError: boom" in results[3].reason
    assert isinstance(results[5], Failed) and "died" in results[5].reason
    # the tasks the dead worker took down with the pool ran again: only the culprit failed
    assert [r for i, r in enumerate(results) if i not in (3, 5)] == [2 * i for i in tasks if i not in (3, 5)]


def test_a_package_whose_task_fails_is_an_unreadable_input_and_the_rest_is_audited(
    channel: Path, config: AuditConfig, plain: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = sorted(channel.iterdir())[7]
    real = jobs.run_tasks

    def failing(work, common, tasks, n, on_done):  # type: ignore[no-untyped-def]
        def wrapped(common, planned):  # type: ignore[no-untyped-def]
            if planned.paths == (str(victim),):
                return Failed(0, "KilledWorker: the worker auditing it died")
            return work(common, planned)

        return real(wrapped, common, tasks, n, on_done)

    report = audit([str(channel)], config, spread=Spread(runner=failing, each=True))
    unreadable = [f for f in report.findings if f.rule == "unreadable-input"]
    assert [f.file for f in unreadable] == [str(victim)] and "KilledWorker" in unreadable[0].message
    others = [f for f in plain.findings if not f.file.startswith(str(victim))]
    assert [f for f in report.findings if f.rule != "unreadable-input"] == others


def test_jsonl_streams_every_finding_and_sorts_back_to_the_json_order(run_cli, channel: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import jsonschema
    from referencing import Registry, Resource

    out, doc = tmp_path / "r.jsonl", tmp_path / "r.json"
    run_cli("check", "--no-config", "--each", "-j", "2", "--format", "jsonl", "-o", str(out), str(channel))
    run_cli("check", "--no-config", "--each", "-j", "1", "--format", "json", "-o", str(doc), str(channel))
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    registry = Registry().with_resources(
        (name, Resource.from_contents(_schema(name))) for name in ("report.schema.json", "jsonl.schema.json")
    )
    validator = jsonschema.Draft202012Validator(_schema("jsonl.schema.json"), registry=registry)
    for line in lines:
        validator.validate(line)
    assert lines[-1]["type"] == "summary" and [x["type"] for x in lines[:-1]] == ["finding"] * (len(lines) - 1)
    expected = json.loads(doc.read_text())
    findings = sorted(lines[:-1], key=lambda x: x["order"])
    strip = ("type", "order", "package")
    assert [{k: v for k, v in x.items() if k not in strip} for x in findings] == expected["findings"]
    assert all(x["file"].startswith(x["package"] + "!") for x in findings)
    summary = dict(lines[-1]["summary"], seconds=0)
    assert summary == dict(expected["summary"], seconds=0)


# --- on a Dask cluster -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def cluster() -> Any:
    distributed = pytest.importorskip(
        "distributed", reason="dask's distributed is not installed: pip install 'native-linkage-auditor[dask]'"
    )
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        scheduler_port=0,
        dashboard_address=None,
    ) as local:
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


def test_a_plain_check_imports_neither_dask_nor_the_streamed_report(tmp_path: Path) -> None:
    """``--scheduler``'s and ``--format jsonl``'s modules load only when asked for."""
    from tests.test_startup import ELF, _modules

    _, modules, _ = _modules(["check", "-q", str(ELF)], tmp_path)
    assert "linkaudit.cli.spread" in modules  # the guard looks at the right process
    assert not modules & {"distributed", "dask", "linkaudit.cluster", "linkaudit.output.jsonl", "tempfile"}


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


def test_progress_counts_packages_and_findings() -> None:
    import io

    from linkaudit.cli.spread import PartProgress

    stream = io.StringIO()
    progress = PartProgress(stream)
    progress.total = 3
    for findings in (2, 0, 5):
        progress.part(findings)
    progress.close()
    assert stream.getvalue().split("\r")[-1] == "linkaudit: 3/3 packages audited, 7 findings so far\n"


def _die_on(victim: str) -> None:
    """On a worker: its audit of ``victim`` kills the worker process (as a crashing reader would)."""
    driver = sys.modules["linkaudit.audit"]
    real = driver._audit_installation

    def dying(planned, config, progress):  # type: ignore[no-untyped-def]
        if planned.paths == (victim,):
            os._exit(1)
        return real(planned, config, progress)

    driver._audit_installation = dying


def test_killed_worker_is_a_finding_for_that_package_and_the_rest_is_audited(
    channel: Path, config: AuditConfig
) -> None:
    """With ``allowed-failures`` 0, the package whose audit kills its worker raises ``KilledWorker``."""
    distributed = pytest.importorskip("distributed", reason="pip install 'native-linkage-auditor[dask]'")
    import dask

    from linkaudit.cluster import Cluster

    packages = [str(p) for p in sorted(channel.iterdir())[:12]]
    victim = packages[5]
    expected = audit(packages, config, spread=Spread(each=True))
    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            scheduler_port=0,
            dashboard_address=None,
        ) as local,
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
