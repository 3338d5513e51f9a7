"""One contract for every store: what breakers, quotas and the cache can rely on.

Every test runs against each backend (`store`); the tests under "shared" run against
each backend that several processes can share (`open_shared` opens another handle on
the same state, as a second process or replica would).
"""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import textwrap
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from redis_server import namespace, redis_url_or_skip
from sleuth.store import BreakerRecord, CacheEntry, SqliteStore, Store, Take, WindowCall

DAY = 86400.0
T0 = 1_750_000_000.0  # a wall-clock time, as stores are given


@dataclass(frozen=True)
class Bucket:
    """A plain token bucket, as a `BucketRule`: the store only supplies state and atomicity."""

    rate: float
    capacity: float

    def apply(
        self, state: Mapping[str, Any] | None, tokens: float, now: float
    ) -> tuple[dict[str, Any], Take]:
        level = self.capacity
        if state is not None:
            level = min(self.capacity, state["level"] + (now - state["at"]) * self.rate)
        if level >= tokens:
            return {"level": level - tokens, "at": now}, Take(True)
        wait = (tokens - level) / self.rate if self.rate else math.inf
        return {"level": level, "at": now}, Take(False, wait, "empty")


def entry(
    key: str = "k1", *, complete: bool = True, at: float = T0, ttl: float = 3600.0
) -> CacheEntry:
    return CacheEntry(
        query_hash=key,
        query=f"query {key}",
        result_summary="Python 3.13 was released in October 2024.",
        source_urls=("https://python.org/downloads/", "https://docs.python.org/3.13/"),
        response={
            "query": f"query {key}",
            "results": [{"title": "Python 3.13"}],
            "complete": complete,
        },
        complete=complete,
        created_at=at,
        updated_at=at,
        expires_at=at + ttl,
    )


# --- breakers ----------------------------------------------------------------------


async def test_a_provider_never_seen_has_a_closed_empty_breaker(store: Store) -> None:
    assert await store.get_breaker("brave") == BreakerRecord()


async def test_a_breaker_update_is_kept_per_provider(store: Store) -> None:
    opened = BreakerRecord(
        state="open",
        opened_at=T0,
        open_until=T0 + 15,
        openings=1,
        calls=(WindowCall(T0 - 1, True, "captcha", True), WindowCall(T0, False)),
        reason="captcha",
    )
    returned = await store.update_breaker("brave", lambda _: opened)

    assert returned == opened
    assert await store.get_breaker("brave") == opened
    assert await store.get_breaker("google") == BreakerRecord()


def test_a_breaker_record_of_an_older_version_still_reads() -> None:
    """Before evidence-based openings a record held [when, failed] calls and no end."""
    old = '{"state":"open","opened_at":100.0,"probe_at":null,"calls":[[99.0,1]],"reason":"x"}'
    record = BreakerRecord.from_json(old)
    assert record.calls == (WindowCall(99.0, True, "", False),)
    assert (record.open_until, record.openings, record.closed_at) == (400.0, 0, None)
    assert BreakerRecord.from_json(record.to_json()) == record


async def test_concurrent_breaker_updates_lose_none(store: Store) -> None:
    def add_call(record: BreakerRecord) -> BreakerRecord:
        return replace(record, calls=(*record.calls, WindowCall(T0, False)))

    await asyncio.gather(*(store.update_breaker("brave", add_call) for _ in range(50)))

    assert len((await store.get_breaker("brave")).calls) == 50


async def test_a_change_that_fails_leaves_the_record_as_it_was(store: Store) -> None:
    await store.update_breaker("brave", lambda r: replace(r, reason="kept"))

    def broken(record: BreakerRecord) -> BreakerRecord:
        raise ValueError("bug in a policy")

    with pytest.raises(ValueError, match="bug in a policy"):
        await store.update_breaker("brave", broken)
    assert (await store.get_breaker("brave")).reason == "kept"


# --- buckets and counters ----------------------------------------------------------


async def test_concurrent_takes_spend_each_token_once(store: Store) -> None:
    bucket = Bucket(rate=0.0, capacity=100)

    takes = await asyncio.gather(*(store.take("search", 1, T0, bucket) for _ in range(150)))

    assert sum(take.granted for take in takes) == 100
    refused = [take for take in takes if not take.granted]
    assert all(take.reason == "empty" and take.wait_s == math.inf for take in refused)


async def test_a_bucket_keeps_its_state_between_takes_and_pools_are_apart(store: Store) -> None:
    bucket = Bucket(rate=10.0, capacity=10)
    first = [await store.take("brave", 1, T0, bucket) for _ in range(12)]
    later = [await store.take("brave", 1, T0 + 0.5, bucket) for _ in range(6)]
    other = await store.take("google", 1, T0, bucket)

    assert [t.granted for t in first].count(True) == 10
    assert first[-1].wait_s == pytest.approx(0.1)
    assert [t.granted for t in later].count(True) == 5  # half a second refills 5
    assert other.granted


async def test_counters_add_up_and_list_by_prefix(store: Store) -> None:
    assert await store.add("breaker.brave.skipped") == 1
    assert await store.add("breaker.brave.skipped", 4) == 5
    await store.add("quota.search.refused", 2)

    assert await store.counters("breaker.") == {"breaker.brave.skipped": 5}
    assert await store.counters() == {"breaker.brave.skipped": 5, "quota.search.refused": 2}


# --- cache -------------------------------------------------------------------------


async def test_a_cached_answer_reads_back_whole_and_fresh_then_stale(store: Store) -> None:
    original = entry(ttl=3600)
    assert await store.put_cached(original)

    fresh = await store.get_cached("k1", T0 + 3599)
    stale = await store.get_cached("k1", T0 + 3601)

    assert fresh is not None and fresh.fresh
    assert replace(fresh.entry, hit_count=0) == original
    assert stale is not None and not stale.fresh  # kept for the degradation ladder
    assert stale.entry.response == original.response
    assert await store.get_cached("missing", T0) is None


async def test_reads_count_hits_and_writes_do_not(store: Store) -> None:
    await store.put_cached(entry())
    await store.put_cached(entry(at=T0 + 10))
    for _ in range(3):
        await store.get_cached("k1", T0 + 20)
    await store.put_cached(entry(at=T0 + 30))

    read = await store.get_cached("k1", T0 + 40)
    assert read is not None and read.entry.hit_count == 4


async def test_replacing_an_answer_keeps_its_creation_time_and_hits(store: Store) -> None:
    await store.put_cached(entry(at=T0))
    await store.get_cached("k1", T0 + 1)
    newer = replace(entry(at=T0 + 100), result_summary="Python 3.13.1 is out.", hit_count=99)
    assert await store.put_cached(newer)

    read = await store.get_cached("k1", T0 + 101)
    assert read is not None
    assert read.entry.result_summary == "Python 3.13.1 is out."
    assert (read.entry.created_at, read.entry.updated_at) == (T0, T0 + 100)
    assert read.entry.hit_count == 2  # the earlier read and this one; 99 was ignored


async def test_a_partial_answer_never_replaces_a_complete_one(store: Store) -> None:
    await store.put_cached(entry(complete=True, ttl=60))
    # even once the complete answer is stale
    refused = await store.put_cached(entry(complete=False, at=T0 + 600, ttl=300))

    read = await store.get_cached("k1", T0 + 601)
    assert refused is False
    assert read is not None and read.entry.complete and not read.fresh


async def test_a_complete_answer_replaces_a_partial_one_and_partials_replace_each_other(
    store: Store,
) -> None:
    await store.put_cached(entry(complete=False))
    assert await store.put_cached(entry(complete=False, at=T0 + 5))
    partial = await store.get_cached("k1", T0 + 6)
    assert await store.put_cached(entry(complete=True, at=T0 + 10))
    complete = await store.get_cached("k1", T0 + 11)

    assert partial is not None and partial.entry.updated_at == T0 + 5
    assert complete is not None and complete.entry.complete


async def test_an_answer_read_back_cannot_change_the_cache(store: Store) -> None:
    await store.put_cached(entry())
    read = await store.get_cached("k1", T0)
    assert read is not None
    read.entry.response["results"].clear()

    again = await store.get_cached("k1", T0)
    assert again is not None and again.entry.response["results"] == [{"title": "Python 3.13"}]


async def test_prune_removes_only_old_rarely_read_answers(store: Store) -> None:
    now = T0 + 40 * DAY
    await store.put_cached(entry("old-rare", at=T0))
    await store.put_cached(entry("old-popular", at=T0))
    await store.put_cached(entry("new-rare", at=now - 2 * DAY))
    for _ in range(3):
        await store.get_cached("old-popular", now)

    removed = await store.prune_cache(now, min_hits=3, older_than_days=30)

    assert removed == 1
    assert await store.get_cached("old-rare", now) is None
    assert await store.get_cached("old-popular", now) is not None
    assert await store.get_cached("new-rare", now) is not None


# --- shared between processes ------------------------------------------------------


async def test_handles_on_one_store_share_breakers_buckets_and_cache(
    open_shared: Callable[[], Store],
) -> None:
    first, second = open_shared(), open_shared()
    await first.update_breaker("brave", lambda r: replace(r, state="open", opened_at=T0))
    bucket = Bucket(rate=0.0, capacity=3)
    spent = [await first.take("search", 1, T0, bucket) for _ in range(2)]
    await first.put_cached(entry())

    assert (await second.get_breaker("brave")).state == "open"
    assert [(await second.take("search", 1, T0, bucket)).granted for _ in range(2)] == [True, False]
    assert all(take.granted for take in spent)
    assert await second.get_cached("k1", T0) is not None


async def test_replicas_drawing_from_one_pool_never_overspend(
    open_shared: Callable[[], Store],
) -> None:
    replicas = [open_shared() for _ in range(3)]
    bucket = Bucket(rate=0.0, capacity=50)

    takes = await asyncio.gather(
        *(replica.take("search", 1, T0, bucket) for replica in replicas for _ in range(100))
    )

    assert sum(take.granted for take in takes) == 50


async def test_replicas_taking_turns_on_one_breaker_lose_no_update(
    open_shared: Callable[[], Store],
) -> None:
    # Each handle remembers the record it last wrote; the others' writes make it stale.
    first, second = open_shared(), open_shared()

    def add_call(record: BreakerRecord) -> BreakerRecord:
        return replace(record, calls=(*record.calls, WindowCall(T0, False)))

    for _ in range(3):
        await first.update_breaker("brave", add_call)
        await second.update_breaker("brave", add_call)

    assert len((await first.get_breaker("brave")).calls) == 6


_TAKER = textwrap.dedent(
    """
    import asyncio, json, math, sys
    from sleuth.store import StoreSettings, Take, open_store

    class Fixed:  # 100 tokens, never refilled
        def apply(self, state, tokens, now):
            level = 100.0 if state is None else state["level"]
            if level >= tokens:
                return {"level": level - tokens}, Take(True)
            return {"level": level}, Take(False, math.inf, "empty")

    async def main():
        store = open_store(StoreSettings.model_validate(json.loads(sys.argv[1])))
        takes = await asyncio.gather(*(store.take("search", 1, 0.0, Fixed()) for _ in range(60)))
        await store.aclose()
        print(sum(take.granted for take in takes))

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_processes_never_double_spend_a_token(tmp_path: Path, backend: str) -> None:
    if backend == "sqlite":
        path = tmp_path / "shared.sqlite"
        asyncio.run(SqliteStore(path).aclose())  # schema in place before the race
        settings: dict[str, Any] = {"backend": "sqlite", "path": str(path)}
    else:
        settings = {"backend": "redis", "url": redis_url_or_skip(), "namespace": namespace()}
    script = tmp_path / "taker.py"
    script.write_text(_TAKER, encoding="utf-8")

    workers = [
        subprocess.Popen(  # noqa: S603 - our own interpreter running our own script
            [sys.executable, str(script), json.dumps(settings)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(3)
    ]
    granted = [int(worker.communicate(timeout=60)[0]) for worker in workers]

    assert all(worker.returncode == 0 for worker in workers)
    assert sum(granted) == 100  # 180 asked, across three processes
