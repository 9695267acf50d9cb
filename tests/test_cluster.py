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


def test_a_plain_check_imports_neither_dask_nor_the_streamed_report(tmp_path: Path) -> None:
    """``--scheduler``'s and ``--format jsonl``'s modules load only when asked for."""
    from tests.test_startup import ELF, _modules

    _, modules, _ = _modules(["check", "-q", str(ELF)], tmp_path)
    assert "linkaudit.cli.spread" in modules  # the guard looks at the right process
    assert not modules & {"distributed", "dask", "linkaudit.cluster", "linkaudit.output.jsonl", "tempfile"}
