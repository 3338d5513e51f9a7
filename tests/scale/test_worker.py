"""`sleuth worker`: a process that only runs tasks, and stops gracefully: on SIGTERM
running tasks get `serve.shutdown_grace_s` to finish and the rest go back to the
queue; a second signal puts them back at once."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fleet import Fleet, Proc, private_redis, write_config
from typer.testing import CliRunner

from fault_server import FaultServer
from redis_server import namespace
from sleuth.api.cli import app
from sleuth.config import load_settings
from sleuth.gateway import Sleuth
from sleuth.store import RedisStore, TaskRecord
from sleuth.tasks import TaskRunner

#: Each search waits this long at the back end: long enough to signal mid-task.
SEARCH_S = 2.0
#: A back end that takes this long: a worker that stops before it answers has put its
#: tasks back rather than waited (with room for a loaded machine's slow exit).
STUCK_S = 30.0
EXIT_S = 10.0


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    yield from private_redis()


@pytest.fixture
async def provider() -> AsyncIterator[FaultServer]:
    with FaultServer(slow_s=SEARCH_S) as server:
        yield server


@pytest.fixture
async def stuck_provider() -> AsyncIterator[FaultServer]:
    with FaultServer(slow_s=STUCK_S) as server:
        yield server


async def submit_and_wait_running(config: Path, count: int) -> tuple[RedisStore, list[str]]:
    """Submit `count` tasks straight to the store; return once all are running."""
    settings = load_settings(config)
    store = RedisStore(settings.store.url, namespace=settings.store.namespace)
    runner = TaskRunner(Sleuth(settings, store=store), store)
    ids = [(await runner.submit({"query": f"graceful {n}"}))[0].task_id for n in range(count)]
    deadline = time.monotonic() + 20
    while await store.count_tasks("running") < count:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    return store, ids


async def records(store: RedisStore, ids: list[str]) -> list[TaskRecord]:
    found = [await store.get_task(task_id) for task_id in ids]
    assert all(record is not None for record in found)
    return [record for record in found if record is not None]


def exited(proc: Proc, within_s: float) -> int:
    code = proc.process.wait(timeout=within_s)
    assert "stopped" in proc.output(), proc.output()
    return code


async def test_sigterm_with_no_grace_puts_running_tasks_back_in_the_queue(
    tmp_path: Path, redis_url: str, stuck_provider: FaultServer
) -> None:
    config = write_config(tmp_path, redis_url, namespace(), stuck_provider.url_for("slow"))
    with Fleet(tmp_path) as fleet:
        (worker,) = fleet.workers(config, 1, "--concurrency", "2")
        assert " 2 tasks at once" in worker.output()
        store, ids = await submit_and_wait_running(config, 2)
        try:
            worker.process.send_signal(signal.SIGTERM)
            assert exited(worker, within_s=EXIT_S) == 0  # long before the searches could end
            back = await records(store, ids)
            events = [await store.task_events(task_id) for task_id in ids]
        finally:
            await store.aclose()
    assert [record.status for record in back] == ["pending", "pending"]
    assert all(record.attempts == 1 for record in back)
    assert all(e[-1].kind == "requeued" for e in events), events


async def test_sigterm_gives_running_tasks_the_grace_to_finish(
    tmp_path: Path, redis_url: str, provider: FaultServer
) -> None:
    config = write_config(
        tmp_path, redis_url, namespace(), provider.url_for("slow"), serve={"shutdown_grace_s": 10}
    )
    with Fleet(tmp_path) as fleet:
        (worker,) = fleet.workers(config, 1)
        store, ids = await submit_and_wait_running(config, 2)
        try:
            worker.process.send_signal(signal.SIGTERM)
            assert exited(worker, within_s=10) == 0
            done = await records(store, ids)
        finally:
            await store.aclose()
    assert [record.status for record in done] == ["success", "success"]


async def test_a_second_signal_cuts_the_grace_short(
    tmp_path: Path, redis_url: str, stuck_provider: FaultServer
) -> None:
    url = stuck_provider.url_for("slow")
    config = write_config(tmp_path, redis_url, namespace(), url, serve={"shutdown_grace_s": 60})
    with Fleet(tmp_path) as fleet:
        (worker,) = fleet.workers(config, 1)
        store, ids = await submit_and_wait_running(config, 1)
        try:
            worker.process.send_signal(signal.SIGINT)
            await asyncio.sleep(0.2)
            worker.process.send_signal(signal.SIGINT)
            assert exited(worker, within_s=EXIT_S) == 0
            (back,) = await records(store, ids)
        finally:
            await store.aclose()
    assert back.status == "pending"


def test_a_worker_refuses_a_store_no_one_else_can_see(tmp_path: Path) -> None:
    config = tmp_path / "sleuth.yaml"
    config.write_text("store: memory\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["worker", "--config", str(config)])
    assert result.exit_code == 1
    assert "shared store" in result.output
