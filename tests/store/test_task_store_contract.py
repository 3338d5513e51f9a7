"""One contract for every store's tasks and keys: what the task runner relies on.

A task is claimed by one worker at a time, finishes once, and a task whose worker
died (its lease ran out) is claimed again; events come back in order, a batch with
consecutive numbers; a terminal transition writes the task's "done" event with it
(both or neither, once per task); idempotency keys return the first task; finished
tasks expire, pending and running ones never.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from sleuth.store import KeyRecord, SqliteStore, Store, TaskRecord

T0 = 1_750_000_000.0
LEASE = 30.0
CANCELLED = {"code": "cancelled", "message": "cancelled by the caller"}
DONE = ("done", {"status": "failed", "error": "cancelled"})


def task(
    task_id: str,
    *,
    at: float = T0,
    key: str | None = None,
    tenant: str = "acme",
    priority: int = 0,
) -> TaskRecord:
    return TaskRecord(
        task_id=task_id,
        tenant=tenant,
        request={"query": f"query {task_id}", "max_results": 3},
        created_at=at,
        updated_at=at,
        idempotency_key=key,
        priority=priority,
    )


async def test_a_created_task_reads_back_pending_with_its_request(store: Store) -> None:
    record, created = await store.create_task(task("t1"))

    assert created
    stored = await store.get_task("t1")
    assert stored == record
    assert stored is not None and stored.status == "pending"
    assert stored.request == {"query": "query t1", "max_results": 3}
    assert await store.get_task("missing") is None


async def test_a_new_task_holds_its_first_event_before_any_worker_can_claim_it(
    store: Store,
) -> None:
    accepted = ("accepted", {"query": "query t1"}, T0)
    await store.create_task(task("t1", key="once"), first=accepted)
    claimed = await store.claim_task("w1", T0 + 1, LEASE)
    await store.append_event("t1", "started", {}, T0 + 1)
    # The same key again: the first task, and no second "accepted".
    _, created = await store.create_task(task("t2", key="once"), first=accepted)

    assert claimed is not None and claimed.task_id == "t1" and not created
    events = await store.task_events("t1")
    assert [(e.seq, e.kind, e.detail) for e in events] == [
        (1, "accepted", {"query": "query t1"}),
        (2, "started", {}),
    ]
    assert await store.task_events("t2") == []


async def test_an_idempotency_key_returns_the_first_task_per_tenant(store: Store) -> None:
    first, _ = await store.create_task(task("t1", key="retry-me"))
    again, created = await store.create_task(task("t2", key="retry-me"))
    other_tenant, other_created = await store.create_task(
        task("t3", key="retry-me", tenant="globex")
    )

    assert not created and again.task_id == first.task_id == "t1"
    assert other_created and other_tenant.task_id == "t3"
    assert await store.get_task("t2") is None


async def test_claims_take_high_priority_then_oldest_and_each_task_once(store: Store) -> None:
    await store.create_task(task("old", at=T0))
    await store.create_task(task("new", at=T0 + 1))
    await store.create_task(task("urgent", at=T0 + 2, priority=1))

    claimed = [await store.claim_task(f"w{n}", T0 + 10, LEASE) for n in range(4)]

    assert [c.task_id if c else None for c in claimed] == ["urgent", "old", "new", None]
    first = claimed[0]
    assert first is not None
    assert (first.status, first.worker, first.attempts) == ("running", "w0", 1)
    assert first.lease_until == T0 + 10 + LEASE and first.started_at == T0 + 10


async def test_concurrent_claims_never_share_a_task(store: Store) -> None:
    for n in range(20):
        await store.create_task(task(f"t{n:02}", at=T0 + n))

    claims = await asyncio.gather(*(store.claim_task(f"w{n}", T0, LEASE) for n in range(30)))

    taken = [c.task_id for c in claims if c is not None]
    assert sorted(taken) == [f"t{n:02}" for n in range(20)]


async def test_a_task_whose_lease_ran_out_is_claimed_again_and_finishes_once(
    store: Store,
) -> None:
    await store.create_task(task("t1"))
    await store.claim_task("dead", T0, LEASE)

    assert await store.claim_task("live", T0 + LEASE - 1, LEASE) is None  # lease still held
    again = await store.claim_task("live", T0 + LEASE + 1, LEASE)

    assert again is not None and (again.worker, again.attempts) == ("live", 2)
    assert again.started_at == T0  # first start kept
    # The dead worker comes back: it can neither renew nor finish what it lost.
    assert await store.renew_lease("t1", "dead", T0 + 32, LEASE) is None
    assert not await store.finish_task("t1", "dead", T0 + 33, result={"n": 1})
    assert await store.finish_task("t1", "live", T0 + 34, result={"n": 2})
    assert not await store.finish_task("t1", "live", T0 + 35, result={"n": 3})
    done = await store.get_task("t1")
    assert done is not None
    assert (done.status, done.result, done.finished_at) == ("success", {"n": 2}, T0 + 34)


async def test_a_renewed_lease_keeps_the_task_from_other_workers(store: Store) -> None:
    await store.create_task(task("t1"))
    await store.claim_task("w1", T0, LEASE)

    renewed = await store.renew_lease("t1", "w1", T0 + 20, LEASE)

    assert renewed is not None and renewed.lease_until == T0 + 20 + LEASE
    assert await store.claim_task("w2", T0 + LEASE + 1, LEASE) is None


async def test_a_failed_task_keeps_its_error(store: Store) -> None:
    await store.create_task(task("t1"))
    await store.claim_task("w1", T0, LEASE)

    assert await store.finish_task("t1", "w1", T0 + 1, error={"code": "timeout"})

    failed = await store.get_task("t1")
    assert failed is not None
    assert (failed.status, failed.error, failed.result) == ("failed", {"code": "timeout"}, None)


async def test_a_released_task_is_pending_again(store: Store) -> None:
    await store.create_task(task("t1"))
    await store.claim_task("w1", T0, LEASE)

    assert await store.release_task("t1", "w1", T0 + 1)
    assert not await store.release_task("t1", "w1", T0 + 2)

    again = await store.claim_task("w2", T0 + 3, LEASE)
    assert again is not None and (again.task_id, again.attempts) == ("t1", 2)


async def test_cancel_fails_a_pending_task_and_flags_a_running_one(store: Store) -> None:
    await store.create_task(task("waiting"))
    await store.create_task(task("working", at=T0 - 1))
    await store.claim_task("w1", T0, LEASE)  # takes "working", the older

    waiting = await store.cancel_task("waiting", CANCELLED, T0 + 1)
    working = await store.cancel_task("working", CANCELLED, T0 + 1)

    assert waiting is not None and (waiting.status, waiting.error) == ("failed", CANCELLED)
    assert working is not None and (working.status, working.cancel_requested) == (
        "running",
        True,
    )
    assert await store.cancel_task("missing", CANCELLED, T0) is None
    assert await store.claim_task("w2", T0 + 2, LEASE) is None  # a cancelled task never runs


async def test_cancelling_a_finished_task_changes_nothing(store: Store) -> None:
    await store.create_task(task("t1"))
    await store.claim_task("w1", T0, LEASE)
    await store.finish_task("t1", "w1", T0 + 1, result={"ok": True})

    after = await store.cancel_task("t1", CANCELLED, T0 + 2)

    assert after is not None and (after.status, after.result) == ("success", {"ok": True})


async def test_events_come_back_in_order_from_a_position(store: Store) -> None:
    await store.create_task(task("t1"))
    seqs = [
        await store.append_event("t1", kind, {"n": n, "名": "中文"}, T0 + n)
        for n, kind in enumerate(["accepted", "provider_started", "done"])
    ]

    assert seqs == [1, 2, 3]
    events = await store.task_events("t1")
    assert [(e.seq, e.kind, e.detail["n"]) for e in events] == [
        (1, "accepted", 0),
        (2, "provider_started", 1),
        (3, "done", 2),
    ]
    assert events[0].detail["名"] == "中文"
    assert [e.seq for e in await store.task_events("t1", after=2)] == [3]
    assert await store.task_events("other") == []


async def test_concurrent_events_get_distinct_positions(store: Store) -> None:
    await store.create_task(task("t1"))

    seqs = await asyncio.gather(
        *(store.append_event("t1", "stage", {"n": n}, T0) for n in range(25))
    )

    assert sorted(seqs) == list(range(1, 26))


async def test_a_batch_of_events_is_numbered_in_order_after_single_ones(store: Store) -> None:
    await store.create_task(task("t1"))
    await store.append_event("t1", "accepted", {}, T0)

    batch = await store.append_events(
        "t1", [("stage", {"stage": name, "名": "中文"}, T0 + n) for n, name in enumerate("abc")]
    )
    after = await store.append_event("t1", "stage", {"stage": "d"}, T0 + 3)

    assert (batch, after) == ([2, 3, 4], 5)
    assert await store.append_events("t1", []) == []
    events = await store.task_events("t1")
    assert [(e.seq, e.kind, e.detail.get("stage"), e.at) for e in events] == [
        (1, "accepted", None, T0),
        (2, "stage", "a", T0),
        (3, "stage", "b", T0 + 1),
        (4, "stage", "c", T0 + 2),
        (5, "stage", "d", T0 + 3),
    ]
    assert events[1].detail["名"] == "中文"


def _assert_batches_whole(seqs: list[list[int]], stored: list[tuple[int, int, int]]) -> None:
    """Each batch got consecutive numbers, every number once, and the stored events
    (seq, batch, position) are each batch's, in the batch's order."""
    assert sorted(seq for batch in seqs for seq in batch) == list(range(1, len(stored) + 1))
    for n, batch in enumerate(seqs):
        assert batch == list(range(batch[0], batch[0] + len(batch)))
        assert [(seq, b, at) for seq, b, at in stored if b == n] == [
            (seq, n, at) for at, seq in enumerate(batch)
        ]


async def test_concurrent_batches_never_interleave(store: Store) -> None:
    await store.create_task(task("t1"))

    seqs = await asyncio.gather(
        *(
            store.append_events("t1", [("stage", {"batch": b, "at": at}, T0) for at in range(5)])
            for b in range(8)
        )
    )

    stored = [(e.seq, e.detail["batch"], e.detail["at"]) for e in await store.task_events("t1")]
    _assert_batches_whole(seqs, stored)


async def test_batches_from_two_handles_never_interleave(
    open_shared: Callable[[], Store],
) -> None:
    first, second = open_shared(), open_shared()
    await first.create_task(task("t1"))

    seqs = await asyncio.gather(
        *(
            (first if b % 2 else second).append_events(
                "t1", [("stage", {"batch": b, "at": at}, T0) for at in range(6)]
            )
            for b in range(10)
        )
    )

    stored = [(e.seq, e.detail["batch"], e.detail["at"]) for e in await second.task_events("t1")]
    _assert_batches_whole(seqs, stored)


async def test_finishing_writes_done_with_the_state_only_for_the_lease_holder(
    store: Store,
) -> None:
    await store.create_task(task("t1"))
    await store.append_event("t1", "accepted", {}, T0)
    await store.claim_task("dead", T0, LEASE)
    await store.claim_task("live", T0 + LEASE + 1, LEASE)  # the dead worker's lease ran out

    lost = await store.finish_task("t1", "dead", T0 + 40, result={"n": 1}, done=("done", {}))
    still = await store.get_task("t1")
    assert not lost and still is not None and still.status == "running"
    assert [e.kind for e in await store.task_events("t1")] == ["accepted"]  # neither

    won = await store.finish_task(
        "t1", "live", T0 + 41, result={"n": 2}, done=("done", {"status": "success"})
    )
    again = await store.finish_task("t1", "live", T0 + 42, result={"n": 3}, done=("done", {}))

    assert won and not again
    finished = await store.get_task("t1")
    assert finished is not None and (finished.status, finished.result) == ("success", {"n": 2})
    events = await store.task_events("t1")
    assert [(e.seq, e.kind, e.at, e.detail) for e in events[1:]] == [
        (2, "done", T0 + 41, {"status": "success"})
    ]


async def test_a_done_event_that_cannot_be_stored_leaves_the_task_running(
    store: Store,
) -> None:
    await store.create_task(task("t1"))
    await store.claim_task("w1", T0, LEASE)

    with pytest.raises(TypeError):
        await store.finish_task("t1", "w1", T0 + 1, result={}, done=("done", {"x": object()}))

    still = await store.get_task("t1")
    assert still is not None and (still.status, still.worker) == ("running", "w1")
    assert await store.task_events("t1") == []
    assert await store.finish_task("t1", "w1", T0 + 2, result={}, done=("done", {}))
    assert [e.kind for e in await store.task_events("t1")] == ["done"]


async def test_cancel_writes_done_only_when_it_fails_a_pending_task(store: Store) -> None:
    await store.create_task(task("waiting"))
    await store.create_task(task("working", at=T0 - 1))
    await store.claim_task("w1", T0, LEASE)  # "working"
    await store.append_event("waiting", "accepted", {}, T0)

    await store.cancel_task("waiting", CANCELLED, T0 + 1, done=DONE)
    await store.cancel_task("waiting", CANCELLED, T0 + 2, done=DONE)  # failed already
    await store.cancel_task("working", CANCELLED, T0 + 1, done=DONE)  # its worker stops it

    waiting = await store.task_events("waiting")
    assert [(e.seq, e.kind, e.at, e.detail) for e in waiting] == [
        (1, "accepted", T0, {}),
        (2, "done", T0 + 1, {"status": "failed", "error": "cancelled"}),
    ]
    assert await store.task_events("working") == []
    assert await store.cancel_task("missing", CANCELLED, T0, done=DONE) is None
    assert await store.task_events("missing") == []


async def test_racing_finish_and_cancel_leave_one_done(open_shared: Callable[[], Store]) -> None:
    worker, caller = open_shared(), open_shared()
    for n in range(6):
        await caller.create_task(task(f"t{n}", at=T0 + n))
    for _ in range(3):  # t0, t1, t2 run; t3..t5 are still pending
        await worker.claim_task("w1", T0 + 10, LEASE)

    await asyncio.gather(
        *(
            worker.finish_task(f"t{n}", "w1", T0 + 11, result={}, done=("done", {}))
            for n in range(6)
        ),
        *(caller.cancel_task(f"t{n}", CANCELLED, T0 + 11, done=DONE) for n in range(6)),
    )

    for n in range(6):
        record = await caller.get_task(f"t{n}")
        assert record is not None and record.status == ("success" if n < 3 else "failed")
        assert [e.kind for e in await worker.task_events(f"t{n}")] == ["done"]


async def test_counts_by_status_and_expiry_of_finished_tasks_only(store: Store) -> None:
    for name in ["done", "running", "pending"]:
        await store.create_task(task(name, at=T0 + len(name)))
    await store.claim_task("w1", T0, LEASE)  # "done" (oldest)
    await store.finish_task("done", "w1", T0 + 5, result={})
    await store.append_event("done", "done", {}, T0 + 5)
    await store.claim_task("w1", T0, LEASE)  # "running"

    assert [await store.count_tasks(s) for s in ("pending", "running", "success")] == [1, 1, 1]
    assert await store.expire_tasks(T0 + 5) == 0  # finished at T0+5, not before
    assert await store.expire_tasks(T0 + 1000) == 1
    assert await store.get_task("done") is None
    assert await store.task_events("done") == []
    assert {t for t in ["running", "pending"] if await store.get_task(t)} == {
        "running",
        "pending",
    }


async def test_keys_are_found_by_hash_listed_by_tenant_and_revoked_by_prefix(
    store: Store,
) -> None:
    one = KeyRecord(key_hash="h1", tenant="acme", prefix="sk_aaaa", created_at=T0, name="ci")
    two = KeyRecord(key_hash="h2", tenant="globex", prefix="sk_bbbb", created_at=T0 + 1)
    await store.put_key(one)
    await store.put_key(two)

    assert await store.get_key("h1") == one
    assert await store.get_key("nope") is None
    assert [k.key_hash for k in await store.list_keys()] == ["h1", "h2"]
    assert [k.key_hash for k in await store.list_keys("globex")] == ["h2"]
    assert await store.revoke_key("sk_aaaa") == 1
    assert await store.revoke_key("sk_aaaa") == 0
    revoked = await store.get_key("h1")
    assert revoked is not None and revoked.revoked


async def test_a_key_keeps_its_role(store: Store) -> None:
    await store.put_key(KeyRecord("h9", "ops", "sk_cccc", T0, role="admin"))
    await store.put_key(KeyRecord("h8", "acme", "sk_dddd", T0))
    roles = {k.key_hash: k.role for k in await store.list_keys()}
    assert roles == {"h9": "admin", "h8": "tenant"}


async def test_a_key_table_without_roles_gains_the_column(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the api_keys table as schema 2 made it
        conn.execute(
            "CREATE TABLE api_keys (key_hash TEXT PRIMARY KEY, tenant TEXT NOT NULL, prefix "
            "TEXT NOT NULL, name TEXT NOT NULL, created_at REAL NOT NULL, revoked INTEGER "
            "NOT NULL DEFAULT 0)"
        )
        conn.execute("INSERT INTO api_keys VALUES ('h1', 'acme', 'sk_a', '', 1.0, 0)")
        conn.execute("PRAGMA user_version = 2")
    conn.close()
    store = SqliteStore(path)
    found = await store.get_key("h1")
    await store.aclose()
    assert found is not None and (found.tenant, found.role) == ("acme", "tenant")


async def test_handles_on_one_store_share_tasks(open_shared: Callable[[], Store]) -> None:
    first, second = open_shared(), open_shared()
    await first.create_task(task("t1"))

    claimed = await second.claim_task("w2", T0, LEASE)

    assert claimed is not None and claimed.task_id == "t1"
    assert await first.claim_task("w1", T0, LEASE) is None
    await second.append_event("t1", "done", {}, T0)
    assert [e.kind for e in await first.task_events("t1")] == ["done"]


async def test_waiting_for_events_returns_those_there_and_those_that_come(
    store: Store,
) -> None:
    await store.create_task(task("t1"))
    await store.append_event("t1", "accepted", {}, T0)

    at_once = await store.wait_task_events("t1", 0, timeout_s=5)
    nothing = await store.wait_task_events("t1", 1, timeout_s=0.05)

    assert [e.kind for e in at_once] == ["accepted"]
    assert nothing == []


async def test_a_waiting_follower_sees_an_event_appended_by_another_handle(
    open_shared: Callable[[], Store],
) -> None:
    follower, worker = open_shared(), open_shared()
    await worker.create_task(task("t1"))

    async def append_soon() -> None:
        await asyncio.sleep(0.05)
        await worker.append_event("t1", "started", {"attempt": 1}, T0)

    appending = asyncio.create_task(append_soon())
    seen = await follower.wait_task_events("t1", 0, timeout_s=0.5)
    await appending

    # Redis wakes the follower as the event lands; SQLite looks again after the wait.
    assert [e.kind for e in seen] == ["started"]
