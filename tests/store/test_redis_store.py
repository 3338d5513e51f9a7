"""What the Redis store promises beyond the shared contract: its settings, its key
layout and lifetimes, and that it carries on when Redis forgets its scripts.

The contract itself (`test_store_contract.py`, `test_task_store_contract.py`) runs
against Redis and a one-node Redis Cluster through the `store` and `open_shared`
fixtures.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from pydantic import ValidationError
from redis.asyncio import Redis
from test_store_contract import T0, Bucket, entry
from test_task_store_contract import LEASE, task

from redis_server import namespace, redis_url_or_skip
from sleuth.resilience.quota import PoolSettings, Quota, QuotaSettings
from sleuth.store import BreakerRecord, RedisStore, StoreSettings, WindowCall, open_store

DAY = 86400.0


def open_redis(key_namespace: str) -> RedisStore:
    return RedisStore(redis_url_or_skip(), namespace=key_namespace)


@pytest.fixture
async def raw() -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_url_or_skip(), decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
async def handle() -> AsyncIterator[RedisStore]:
    store = open_redis(namespace())
    yield store
    await store.aclose()


async def keys_of(raw: Redis, store: RedisStore) -> dict[str, float]:
    """Every key of the store's namespace, with its TTL in seconds (-1: none)."""
    keys = [key async for key in raw.scan_iter(f"{store.namespace}:*")]
    return {key: await raw.pttl(key) / 1000 for key in keys}


# --- settings ----------------------------------------------------------------------


def test_a_redis_url_alone_selects_the_redis_store() -> None:
    short = StoreSettings.model_validate("redis://127.0.0.1:6390/2")
    by_url = StoreSettings.model_validate({"url": "rediss://cache.internal:6380/0"})

    assert (short.backend, short.url) == ("redis", "redis://127.0.0.1:6390/2")
    assert by_url.backend == "redis"
    assert StoreSettings.model_validate("memory").backend == "memory"
    assert "6390" not in repr(short)  # a URL may carry a password


@pytest.mark.parametrize(
    "section",
    [
        "mongodb://127.0.0.1",
        {"backend": "redis", "url": "http://127.0.0.1:6379"},
        {"backend": "redis", "namespace": "a{b}"},
        {"backend": "redis", "task_shards": 0},
    ],
)
def test_unusable_redis_settings_are_refused(section: object) -> None:
    with pytest.raises(ValidationError):
        StoreSettings.model_validate(section)


async def test_open_store_opens_redis_with_its_settings() -> None:
    settings = StoreSettings(backend="redis", url=redis_url_or_skip(), namespace=namespace())
    store = open_store(settings)
    try:
        assert isinstance(store, RedisStore)
        assert await store.add("searches") == 1
    finally:
        await store.aclose()


# --- key layout and lifetimes ------------------------------------------------------


async def test_every_key_is_in_the_namespace_and_expires_when_it_should(
    handle: RedisStore, raw: Redis
) -> None:
    ns = handle.namespace
    await handle.take("brave", 1, T0, Bucket(rate=1.0, capacity=5))
    await handle.update_breaker("brave", lambda record: record)
    await handle.add("searches")
    await handle.put_cached(entry("k1", ttl=3600))
    await handle.create_task(task("waiting"))
    await handle.create_task(task("done", at=T0 - 1, key="retry-me"))
    await handle.claim_task("w1", T0, LEASE)  # "done", the older
    await handle.append_event("done", "accepted", {}, T0)
    await handle.finish_task("done", "w1", T0 + 1, result={})

    ttls = await keys_of(raw, handle)

    assert all(key.startswith(f"{ns}:") for key in ttls)
    done_shard = next(key for key in ttls if key.endswith(":task:done")).split(":task:")[0]
    assert ttls[f"{ns}:{{bucket:brave}}"] == pytest.approx(7 * DAY, abs=5)
    assert ttls[f"{ns}:{{breaker:brave}}"] == pytest.approx(7 * DAY, abs=5)
    assert ttls[f"{ns}:{{cache:k1}}"] == pytest.approx(3600 + 30 * DAY, abs=5)
    assert ttls[f"{done_shard}:task:done"] == pytest.approx(7 * DAY, abs=5)
    assert ttls[f"{done_shard}:events:done"] == pytest.approx(7 * DAY, abs=5)
    idempotency = [key for key in ttls if key.startswith(f"{ns}:{{idem:")]
    assert len(idempotency) == 1 and ttls[idempotency[0]] == pytest.approx(7 * DAY, abs=5)
    # What must never vanish: a task still to run, the counters, the indexes.
    never = {key for key, ttl in ttls.items() if ttl < 0}
    assert any(key.endswith(":task:waiting") for key in never)
    assert {f"{ns}:counters", f"{ns}:cache:index"} <= never


async def test_a_pending_task_s_events_expire_with_it_once_it_finishes(
    handle: RedisStore, raw: Redis
) -> None:
    await handle.create_task(task("t1"))
    await handle.append_event("t1", "accepted", {}, T0)
    await handle.claim_task("w1", T0, LEASE)
    events_key = next(key for key in await keys_of(raw, handle) if ":events:" in key)
    assert await raw.pttl(events_key) == -1  # the task is still running

    await handle.finish_task("t1", "w1", T0 + 1, error={"code": "timeout"})
    await handle.append_event("t1", "failed", {}, T0 + 1)

    assert await raw.pttl(events_key) / 1000 == pytest.approx(7 * DAY, abs=5)


async def test_the_store_carries_on_when_redis_forgets_its_scripts(
    handle: RedisStore, raw: Redis
) -> None:
    await handle.put_cached(entry("k1"))
    await raw.script_flush()  # as after a restart or a failover

    assert await handle.put_cached(entry("k2"))  # a pipelined script
    assert await handle.get_cached("k2", T0) is not None  # a lone script
    assert (await handle.take("search", 1, T0, Bucket(rate=0.0, capacity=1))).granted


# --- replicas ----------------------------------------------------------------------


async def test_three_replicas_share_one_quota_pool_exactly() -> None:
    shared = namespace()
    limits = PoolSettings(rate_per_s=50, burst_per_s=50, burst_window_s=0)
    settings = QuotaSettings(default=limits, max_wait_s=0)
    replicas = [open_redis(shared) for _ in range(3)]
    quotas = [Quota(replica, settings, clock=lambda: T0) for replica in replicas]
    try:
        grants = await asyncio.gather(
            *(
                quota.acquire("brave", "high" if n % 3 else "normal", deadline=T0)
                for quota in quotas
                for n in range(100)
            )
        )
    finally:
        for replica in replicas:
            await replica.aclose()

    assert sum(grant.granted for grant in grants) == 50  # 300 asked, one pool of 50


async def test_a_reader_on_one_replica_wakes_for_an_event_from_another(
    handle: RedisStore,
) -> None:
    other = open_redis(handle.namespace)
    try:
        await handle.create_task(task("t1"))
        waiting = asyncio.create_task(handle.wait_task_events("t1", after=0, timeout_s=5))
        await asyncio.sleep(0.05)
        await other.append_event("t1", "provider_started", {"provider": "brave"}, T0)
        events = await asyncio.wait_for(waiting, 2)
        none_yet = await handle.wait_task_events("t1", after=1, timeout_s=0.05)
    finally:
        await other.aclose()

    assert [(e.seq, e.kind, e.detail) for e in events] == [
        (1, "provider_started", {"provider": "brave"})
    ]
    assert none_yet == []


async def test_an_idempotency_key_whose_task_never_appeared_is_taken_over(
    handle: RedisStore, raw: Redis
) -> None:
    # A replica died between claiming the key and creating its task.
    await handle.create_task(task("t1", key="retry-me"))
    await raw.delete(*[key for key in await keys_of(raw, handle) if key.endswith(":task:t1")])

    again, created = await handle.create_task(task("t2", key="retry-me"))

    assert created and again.task_id == "t2"
    assert (await handle.create_task(task("t3", key="retry-me")))[0].task_id == "t2"


async def test_prune_repairs_the_index_of_entries_that_expired_on_their_own(
    handle: RedisStore, raw: Redis
) -> None:
    ns = handle.namespace
    await handle.put_cached(entry("gone", at=T0))
    await handle.put_cached(entry("old", at=T0))
    await raw.delete(f"{ns}:{{cache:gone}}")  # its TTL ran out

    removed = await handle.prune_cache(T0 + 40 * DAY, min_hits=3, older_than_days=30)

    assert removed == 1
    assert await raw.zrange(f"{ns}:cache:index", 0, -1) == []


async def test_claims_across_shards_take_the_best_task_of_all_shards() -> None:
    store = RedisStore(redis_url_or_skip(), namespace=namespace(), task_shards=4)
    records = [
        task(f"t{n:02}", at=T0 + (n * 7) % 16, priority=n % 3 - 1)
        for n in range(16)  # spread over the four shards by their ids
    ]
    try:
        for record in records:
            await store.create_task(record)
        claimed = [await store.claim_task("w1", T0 + 20, LEASE) for _ in range(17)]
    finally:
        await store.aclose()

    best_first = sorted(records, key=lambda r: (-r.priority, r.created_at))
    assert [c.task_id if c else None for c in claimed] == [
        *(r.task_id for r in best_first),
        None,
    ]


async def test_a_breaker_read_that_lands_after_a_write_does_not_make_the_next_one_retry(
    handle: RedisStore, raw: Redis
) -> None:
    """A read of the breaker (`get_breaker`, outside the write lock) answered before
    this handle's own write but handled after it must not leave the older state as the
    start of the next write: alone on a breaker, every write is one round trip."""
    record = BreakerRecord(calls=(WindowCall(T0, False),))
    await handle.update_breaker("brave", lambda current: current)
    real = handle._redis.execute_command
    read_answered, write_done = asyncio.Event(), asyncio.Event()

    async def late_reads(*args: object, **options: object) -> object:
        answer = await real(*args, **options)
        if args[0] == "HMGET":  # hold the reply until the write has been handled
            read_answered.set()
            await write_done.wait()
        return answer

    handle._redis.execute_command = late_reads  # type: ignore[method-assign]
    reading = asyncio.create_task(handle.get_breaker("brave"))
    await read_answered.wait()
    await handle.update_breaker("brave", lambda current: record)
    write_done.set()
    assert await reading == BreakerRecord()  # it read the state before the write
    handle._redis.execute_command = real  # type: ignore[method-assign]

    swaps = await evalsha_calls(raw)
    await handle.update_breaker("brave", lambda current: current)
    assert await evalsha_calls(raw) - swaps == 1
    assert await handle.get_breaker("brave") == record


async def evalsha_calls(raw: Redis) -> int:
    stats = await raw.info("commandstats")
    return int(stats["cmdstat_evalsha"]["calls"])
