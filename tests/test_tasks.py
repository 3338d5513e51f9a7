"""Asynchronous tasks as a caller sees them: accepted at once, events in order, one
result; idempotent submits; a bounded queue; tenants apart; cancel; and no task lost
when a worker dies or the service stops."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any

import pytest

from sleuth.config import Settings
from sleuth.errors import InvalidRequest, TaskNotFound, TooManyRequests
from sleuth.gateway import Sleuth
from sleuth.providers.base import HttpRequest
from sleuth.service_settings import TaskSettings
from sleuth.store import MemoryStore
from sleuth.store.base import NewEvent
from sleuth.tasks import TaskRunner
from sleuth.testing import fake_provider, registered
from sleuth.transport import RawResponse

FAST = TaskSettings(workers=2, lease_s=0.6, poll_s=0.05)


class GatedTransport:
    """Answers every provider with two hits, once `gate` is open (always, by default)."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.gate.set()
        self.calls = 0

    async def send(
        self, provider: str, query: str, request: HttpRequest, timeout_s: float
    ) -> RawResponse:
        self.calls += 1
        await self.gate.wait()
        hits = [
            {
                "url": f"https://example.com/{provider}/{n}",
                "title": f"{query} guide {n} by {provider}",
                "snippet": f"{provider} explains {query} in part {n} of its guide.",
            }
            for n in (1, 2)
        ]
        return RawResponse(200, {"content-type": "application/json"}, {"results": hits})

    async def aclose(self) -> None:
        return None


@pytest.fixture
def fakes() -> Iterator[None]:
    with registered(fake_provider("alpha"), fake_provider("beta")):
        yield


@pytest.fixture
def transport() -> GatedTransport:
    return GatedTransport()


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


def settings(**kw: Any) -> Settings:
    base: dict[str, Any] = {
        "chain": ["alpha", "beta"],
        "providers": {"alpha": {}, "beta": {}},
        "store": {"backend": "memory"},
        "deadline_s": 30.0,
        "cache": {"enabled": False},
    }
    base.update(kw)
    return Settings(**base)


@pytest.fixture
async def sleuth(
    fakes: None, transport: GatedTransport, store: MemoryStore
) -> AsyncIterator[Sleuth]:
    async with Sleuth(settings(), transport, store) as core:
        yield core


async def test_a_task_runs_to_success_with_its_events_in_order(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    async with TaskRunner(sleuth, store, FAST) as runner:
        task, created = await runner.submit({"query": "solar panels", "max_results": 3})
        assert created and task.status == "pending" and task.task_id.startswith("task_")

        done = await runner.wait(task.task_id, timeout_s=10)

    assert done.status == "success" and done.error is None
    assert done.result is not None and done.result.task_id == task.task_id
    assert len(done.result.results) == 3
    kinds = [event.kind for event in done.events]
    assert kinds[:2] == ["accepted", "started"] and kinds[-1] == "done"
    assert [e.seq for e in done.events] == list(range(1, len(kinds) + 1))
    finished = {
        e.detail["provider"]: e.detail for e in done.events if e.kind == "provider_finished"
    }
    assert finished["alpha"]["status"] == "ok" and finished["alpha"]["results"] == 2
    assert kinds.index("provider_started") < kinds.index("provider_finished")
    stages = [e.detail["stage"] for e in done.events if e.kind == "stage"]
    assert stages[:2] == ["guard", "rewrite"] and "rank" in stages
    assert done.started_at is not None and done.finished_at is not None
    assert done.created_at <= done.started_at <= done.finished_at
    assert done.attempts == 1


async def test_a_retried_submit_with_the_same_key_gets_the_same_task(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    runner = TaskRunner(sleuth, store, FAST)  # not started: the tasks stay pending
    first, created = await runner.submit({"query": "rust"}, idempotency_key="req-1")
    again, again_created = await runner.submit({"query": "rust"}, idempotency_key="req-1")
    other, _ = await runner.submit({"query": "rust"}, idempotency_key="req-2")

    assert created and not again_created
    assert again.task_id == first.task_id != other.task_id
    assert await store.count_tasks("pending") == 2


async def test_a_full_queue_refuses_with_retry_after_and_drops_nothing(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    runner = TaskRunner(sleuth, store, FAST.model_copy(update={"queue_max": 2}))
    for n in range(2):
        await runner.submit({"query": f"query {n}"})

    with pytest.raises(TooManyRequests) as refused:
        await runner.submit({"query": "one too many"})

    assert refused.value.status_hint == 429 and refused.value.retry_after_s == 2.0
    assert "queue is full" in refused.value.message
    assert await store.count_tasks("pending") == 2


async def test_bad_input_is_refused_at_submit_naming_the_field(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    runner = TaskRunner(sleuth, store, FAST)
    with pytest.raises(InvalidRequest) as bad:
        await runner.submit({"query": "x", "time_range": "yesterday"})
    assert bad.value.field == "time_range" and "past_week" in (bad.value.allowed or [])
    assert await store.count_tasks("pending") == 0


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        ({"query": "\u200b\u0007\u200d"}, "query"),
        ({"query": "x", "providers": ["nosuch"]}, "providers"),
        ({"query": "x", "providers": []}, "providers"),
    ],
)
async def test_what_search_refuses_is_refused_at_submit(
    sleuth: Sleuth, store: MemoryStore, request_: dict[str, Any], field: str
) -> None:
    runner = TaskRunner(sleuth, store, FAST)
    with pytest.raises(InvalidRequest) as refused_search:
        await sleuth.search(request_)
    with pytest.raises(InvalidRequest) as refused_task:
        await runner.submit(request_)
    assert refused_task.value.field == refused_search.value.field == field
    assert refused_task.value.message == refused_search.value.message
    assert await store.count_tasks("pending") == 0


async def test_another_tenants_task_is_not_found(sleuth: Sleuth, store: MemoryStore) -> None:
    runner = TaskRunner(sleuth, store, FAST)
    task, _ = await runner.submit({"query": "rust"}, tenant="acme")

    assert (await runner.get(task.task_id, "acme")).task_id == task.task_id
    for call in (runner.get, runner.cancel):
        with pytest.raises(TaskNotFound):
            await call(task.task_id, "globex")
    with pytest.raises(TaskNotFound):
        await runner.get("task_missing", "acme")


async def test_cancel_fails_a_pending_task_at_once(sleuth: Sleuth, store: MemoryStore) -> None:
    runner = TaskRunner(sleuth, store, FAST)
    task, _ = await runner.submit({"query": "rust"})

    cancelled = await runner.cancel(task.task_id)

    assert cancelled.status == "failed"
    assert cancelled.error is not None and cancelled.error.code == "cancelled"
    async with runner:
        await asyncio.sleep(0.2)
    assert (await runner.get(task.task_id)).status == "failed"  # never ran


async def test_cancel_stops_a_running_search(
    sleuth: Sleuth, store: MemoryStore, transport: GatedTransport
) -> None:
    transport.gate.clear()  # providers hang until cancelled
    async with TaskRunner(sleuth, store, FAST) as runner:
        task, _ = await runner.submit({"query": "rust"})
        await _until(lambda: transport.calls > 0)

        await runner.cancel(task.task_id)
        done = await runner.wait(task.task_id, timeout_s=5)

    assert done.status == "failed" and done.error is not None
    assert done.error.code == "cancelled"
    kinds = [e.kind for e in done.events]
    assert "cancel_requested" in kinds and kinds[-1] == "done"


async def test_a_task_whose_worker_died_is_run_again_once(
    sleuth: Sleuth, store: MemoryStore, transport: GatedTransport
) -> None:
    """A worker claims the task and dies (it never renews); after the lease another
    worker runs it to the end, and the dead one could not finish it any more."""
    runner = TaskRunner(sleuth, store, FAST)
    task, _ = await runner.submit({"query": "rust"})
    claimed = await store.claim_task("dead-worker", _now(), FAST.lease_s)
    assert claimed is not None

    async with runner:
        done = await runner.wait(task.task_id, timeout_s=10)

    assert done.status == "success" and done.attempts == 2
    assert not await store.finish_task(task.task_id, "dead-worker", _now(), result={})
    assert sum(e.kind == "done" for e in done.events) == 1


async def test_a_task_that_kept_killing_its_workers_is_abandoned(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    runner = TaskRunner(sleuth, store, FAST.model_copy(update={"max_attempts": 2}))
    task, _ = await runner.submit({"query": "rust"})
    for n in range(2):
        await store.claim_task(f"dead-{n}", _now() - 10 * (2 - n), FAST.lease_s)

    async with runner:
        done = await runner.wait(task.task_id, timeout_s=10)

    assert done.status == "failed" and done.attempts == 3
    assert done.error is not None and done.error.code == "task_abandoned"


async def test_a_stop_puts_running_tasks_back_and_the_next_start_finishes_them(
    sleuth: Sleuth, store: MemoryStore, transport: GatedTransport
) -> None:
    transport.gate.clear()
    first = TaskRunner(sleuth, store, FAST)
    await first.start()
    task, _ = await first.submit({"query": "rust"})
    await _until(lambda: transport.calls > 0)

    await first.stop(grace_s=0.1)

    pending = await store.get_task(task.task_id)
    assert pending is not None and pending.status == "pending"
    transport.gate.set()
    async with TaskRunner(sleuth, store, FAST) as second:
        done = await second.wait(task.task_id, timeout_s=10)
    assert done.status == "success" and done.attempts == 2
    assert "requeued" in [e.kind for e in done.events]


async def test_a_stop_lets_running_tasks_finish_within_the_grace(
    sleuth: Sleuth, store: MemoryStore, transport: GatedTransport
) -> None:
    transport.gate.clear()
    runner = TaskRunner(sleuth, store, FAST)
    await runner.start()
    task, _ = await runner.submit({"query": "rust"})
    await _until(lambda: transport.calls > 0)
    asyncio.get_running_loop().call_later(0.1, transport.gate.set)

    await runner.stop(grace_s=5)

    done = await store.get_task(task.task_id)
    assert done is not None and done.status == "success" and done.attempts == 1


class SlowAppends(MemoryStore):
    """A memory store whose event appends take a while, as a round trip to Redis does;
    it records the size of each batch."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    async def append_events(self, task_id: str, events: Sequence[NewEvent]) -> list[int]:
        self.batches.append(len(events))
        await asyncio.sleep(0.02)
        return await super().append_events(task_id, events)


async def test_events_queued_during_a_write_are_stored_together_in_order(
    fakes: None, transport: GatedTransport
) -> None:
    store = SlowAppends()
    async with (
        Sleuth(settings(), transport, store) as core,
        TaskRunner(core, store, FAST) as runner,
    ):
        task, _ = await runner.submit({"query": "solar panels"})
        done = await runner.wait(task.task_id, timeout_s=10)

    kinds = [e.kind for e in done.events]
    assert done.status == "success" and kinds[:2] == ["accepted", "started"]
    assert kinds.count("done") == 1 and kinds[-1] == "done"
    assert [e.seq for e in done.events] == list(range(1, len(kinds) + 1))
    assert [e.at for e in done.events] == sorted(e.at for e in done.events)  # emission order
    # "accepted" is written with the task, "done" with the terminal state.
    progress = len(kinds) - 2
    assert sum(store.batches) == progress and max(store.batches) > 1
    assert len(store.batches) < progress


async def test_following_a_finished_task_ends_without_waiting(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    """`follow` ends as soon as it reads a terminal task: its "done" was stored with
    the state, so there is nothing more to wait for (even for a task finished without
    one, as a version before this writes it)."""
    runner = TaskRunner(sleuth, store, FAST)
    task, _ = await runner.submit({"query": "rust"})
    await store.claim_task("w1", _now(), FAST.lease_s)
    assert await store.finish_task(task.task_id, "w1", _now(), result=None, error={"code": "x"})

    async with asyncio.timeout(0.5):  # the 2 s grace it used to wait for "done" is gone
        kinds = [event.kind async for event in runner.follow(task.task_id)]

    assert kinds == ["accepted"]


async def test_finished_tasks_expire_after_the_retention(
    sleuth: Sleuth, store: MemoryStore
) -> None:
    clock = [1_000_000.0]
    runner = TaskRunner(
        sleuth, store, FAST.model_copy(update={"retention_s": 60}), clock=lambda: clock[0]
    )
    task, _ = await runner.submit({"query": "rust"})
    await runner.run_once()
    clock[0] += 61

    async with runner:
        await _until(lambda: store.get_task(task.task_id), expect=None)

    with pytest.raises(TaskNotFound):
        await runner.get(task.task_id)


async def _until(check: Callable[[], Any], *, expect: Any = True, timeout_s: float = 5.0) -> None:
    """Wait until `check()` (or what it awaits) is `expect`."""
    async with asyncio.timeout(timeout_s):
        while True:
            value = check()
            if inspect.isawaitable(value):
                value = await value
            if value == expect:
                return
            await asyncio.sleep(0.01)


def _now() -> float:
    return time.time()
