"""Quota pools as an operator sees them: how many calls a pool lets through over
time, that pools never take from each other, who goes first under contention, and
that a request falls back rather than outwait its deadline.

Simulated time: `VirtualTime` runs concurrent producers on one fake clock, moving
it to the next sleeper's wake-up only when every producer is asleep. One test runs
in real time against the SQLite store, on purpose.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Awaitable
from pathlib import Path

import pytest

from sleuth.contract import Priority
from sleuth.resilience.quota import PoolSettings, Quota, QuotaSettings
from sleuth.store import MemoryStore, SqliteStore


class VirtualTime:
    """A clock and a sleep for many tasks: time jumps to the earliest wake-up."""

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self.start = self.now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._running = False
        self.slept = 0.0

    def clock(self) -> float:
        return self.now

    async def sleep(self, delay: float) -> None:
        if not self._running:
            raise RuntimeError("nothing would ever wake this sleep: call it inside run()")
        self.slept += delay
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + max(0.0, delay), next(self._order), future))
        await future

    async def run(self, *jobs: Awaitable[None]) -> None:
        self._running = True
        tasks = [asyncio.ensure_future(job) for job in jobs]
        while not all(task.done() for task in tasks):
            for _ in range(5):  # let every woken task run until it sleeps again
                await asyncio.sleep(0)
            if self._sleepers:
                when, _, future = heapq.heappop(self._sleepers)
                self.now = max(self.now, when)
                future.set_result(None)
        self._running = False
        await asyncio.gather(*tasks)


def quota_on(vt: VirtualTime, **settings: object) -> Quota:
    return Quota(MemoryStore(), QuotaSettings.model_validate(settings), vt.clock, vt.sleep)


async def produce(
    quota: Quota,
    vt: VirtualTime,
    until: float,
    grants: list[float],
    dependency: str = "search",
    priority: Priority = "normal",
) -> None:
    """Ask for tokens as fast as they come until `until` seconds of simulated time."""
    while vt.now - vt.start < until:
        grant = await quota.acquire(dependency, priority, deadline=vt.now + 0.5)
        if grant.granted:
            grants.append(vt.now - vt.start)
        else:
            await vt.sleep(0.01)


def most_granted(limits: PoolSettings, t: float) -> float:
    """The documented bound: min(peak burst + peak rate * t, sustained size + rate * t)."""
    return min(
        limits.peak_capacity + limits.peak_rate * t,
        limits.sustained_capacity + limits.rate_per_s * t,
    )


def never_above_bound(grants: list[float], limits: PoolSettings) -> bool:
    """At every grant, the count so far is within the bound (to a thousandth of a token:
    the rule accepts a level a millionth short, see PoolRule)."""
    return all(count <= most_granted(limits, t) + 1e-3 for count, t in enumerate(sorted(grants), 1))


async def test_three_producers_on_one_pool_never_exceed_rate_plus_burst() -> None:
    vt = VirtualTime()
    quota = quota_on(vt)  # the defaults: 50/s, bursts to 100/s for 30 s
    grants: list[float] = []

    await vt.run(*(produce(quota, vt, 10.0, grants) for _ in range(3)))

    limits = QuotaSettings().default
    within = [t for t in grants if t <= 10.0]
    assert never_above_bound(grants, limits)
    assert len(within) <= 100 + 100 * 10  # peak burst + peak rate * 10 s
    assert len(within) >= 0.97 * most_granted(limits, 10.0)  # and the pool was used, not idle


async def test_a_busy_pool_bursts_for_thirty_seconds_then_holds_its_rate() -> None:
    vt = VirtualTime()
    quota = quota_on(vt)
    grants: list[float] = []

    await vt.run(*(produce(quota, vt, 60.0, grants) for _ in range(3)))

    limits = QuotaSettings().default
    assert never_above_bound(grants, limits)
    in_burst = sum(1 for t in grants if 1 <= t < 29)
    steady = sum(1 for t in grants if 40 <= t < 60)
    assert in_burst == pytest.approx(100 * 28, rel=0.03)
    assert steady == pytest.approx(50 * 20, rel=0.03)


async def test_without_a_burst_window_a_pool_is_rate_times_time_plus_burst() -> None:
    vt = VirtualTime()
    quota = quota_on(vt, default={"rate_per_s": 50, "burst_per_s": 100, "burst_window_s": 0})
    grants: list[float] = []

    await vt.run(*(produce(quota, vt, 10.0, grants) for _ in range(3)))

    assert all(count <= 100 + 50 * t + 1e-3 for count, t in enumerate(sorted(grants), 1))
    assert 0.97 * (100 + 50 * 10) <= len(grants) <= 100 + 50 * 10


async def test_a_busy_pool_takes_nothing_from_another() -> None:
    vt = VirtualTime()
    quota = quota_on(vt, default={"rate_per_s": 50, "burst_per_s": 50, "burst_window_s": 0})
    busy: list[float] = []
    search: list[float] = []

    await vt.run(
        *(produce(quota, vt, 10.0, busy, dependency="orders") for _ in range(5)),
        produce(quota, vt, 10.0, search, dependency="brave"),
    )

    # brave keeps its whole rate (far above the 5/s floor) while orders is saturated
    assert len(search) == pytest.approx(50 + 50 * 10, rel=0.03)
    assert len(busy) == pytest.approx(50 + 50 * 10, rel=0.03)


async def test_dependencies_mapped_to_one_pool_share_it() -> None:
    vt = VirtualTime()
    quota = quota_on(
        vt,
        default={"rate_per_s": 10, "burst_per_s": 10, "burst_window_s": 0},
        pool_of={"google": "google-key", "serpapi": "google-key"},
    )
    grants: list[float] = []

    await vt.run(
        produce(quota, vt, 5.0, grants, dependency="google"),
        produce(quota, vt, 5.0, grants, dependency="serpapi"),
    )

    assert len(grants) <= 10 + 10 * 5
    assert (await quota.acquire("serpapi", deadline=vt.now)).pool == "google-key"


def test_a_pool_configured_in_part_keeps_the_default_for_the_rest() -> None:
    settings = QuotaSettings.model_validate(
        {"default": {"rate_per_s": 20}, "pools": {"brave": {"rate_per_s": 1, "burst_per_s": 1}}}
    )
    brave, other = settings.limits("brave"), settings.limits("tavily")

    assert (brave.rate_per_s, brave.burst_per_s, brave.burst_window_s) == (1, 1, 30)
    assert (other.rate_per_s, other.burst_per_s) == (20, 100)


async def test_under_contention_high_priority_gets_twice_the_share_of_normal() -> None:
    vt = VirtualTime()
    quota = quota_on(vt)
    high: list[float] = []
    normal: list[float] = []

    await vt.run(
        *(produce(quota, vt, 20.0, high, priority="high") for _ in range(2)),
        *(produce(quota, vt, 20.0, normal, priority="normal") for _ in range(2)),
    )

    contended_high = sum(1 for t in high if t >= 2)
    contended_normal = sum(1 for t in normal if t >= 2)
    assert contended_high / contended_normal == pytest.approx(2.0, rel=0.05)
    assert never_above_bound(high + normal, QuotaSettings().default)


async def test_a_priority_alone_gets_the_whole_pool() -> None:
    vt = VirtualTime()
    quota = quota_on(vt, default={"rate_per_s": 50, "burst_per_s": 50, "burst_window_s": 0})
    normal: list[float] = []

    await vt.run(*(produce(quota, vt, 10.0, normal) for _ in range(2)))

    assert len(normal) == pytest.approx(50 + 50 * 10, rel=0.03)


async def test_below_contention_everybody_is_served_whatever_the_priority() -> None:
    vt = VirtualTime()
    quota = quota_on(vt)
    served: dict[Priority, int] = {"high": 0, "normal": 0}

    async def light(priority: Priority) -> None:  # 20/s each, well within 50/s
        for _ in range(200):
            grant = await quota.acquire("search", priority, deadline=vt.now)
            served[priority] += grant.granted
            await vt.sleep(0.05)

    await vt.run(light("high"), light("normal"))

    assert served == {"high": 200, "normal": 200}


async def test_a_request_waits_for_a_token_that_comes_before_its_deadline() -> None:
    vt = VirtualTime()
    quota = quota_on(vt, default={"rate_per_s": 10, "burst_per_s": 10, "burst_window_s": 0})
    grants: list[bool] = []

    async def burst_then_one_more() -> None:
        grants.extend([(await quota.acquire("brave", deadline=vt.now)).granted for _ in range(10)])
        grant = await quota.acquire("brave", deadline=vt.now + 0.5)
        grants.append(grant.granted)
        assert grant.waited_s == pytest.approx(0.1, abs=1e-6)

    await vt.run(burst_then_one_more())
    assert grants == [True] * 11


async def test_a_request_falls_back_at_once_when_no_token_can_come_in_time() -> None:
    vt = VirtualTime()
    quota = quota_on(vt, default={"rate_per_s": 1, "burst_per_s": 1, "burst_window_s": 0})
    await quota.acquire("brave")

    refused = await quota.acquire("brave", "high", deadline=vt.now + 0.3)

    assert not refused.granted and refused.waited_s == 0 and vt.slept == 0
    assert refused.retry_after_s == pytest.approx(1.0, abs=1e-5)
    assert refused.reason is not None and "'brave'" in refused.reason
    assert "next token in 1.000s" in refused.reason


async def test_no_request_waits_longer_than_max_wait_whatever_its_deadline() -> None:
    vt = VirtualTime()
    quota = quota_on(
        vt, default={"rate_per_s": 1, "burst_per_s": 1, "burst_window_s": 0}, max_wait_s=0.5
    )
    await quota.acquire("brave")

    grant = await quota.acquire("brave", deadline=vt.now + 10)

    assert not grant.granted and vt.slept == 0


async def test_a_disabled_quota_grants_everything() -> None:
    vt = VirtualTime()
    quota = quota_on(vt, enabled=False)
    grants = [await quota.acquire("brave", deadline=vt.now) for _ in range(500)]
    assert all(grant.granted for grant in grants)


async def test_three_tasks_in_real_time_on_two_sqlite_handles(tmp_path: Path) -> None:
    """About one real second: two handles on one file, as two processes would have."""
    path = tmp_path / "state.sqlite"
    stores = [SqliteStore(path), SqliteStore(path)]
    settings = QuotaSettings.model_validate(
        {"default": {"rate_per_s": 40, "burst_per_s": 40, "burst_window_s": 0}}
    )
    quotas = [Quota(store, settings) for store in stores]
    granted_at: list[float] = []
    started = time.time()

    async def worker(quota: Quota) -> None:
        while time.time() - started < 1.0:
            grant = await quota.acquire("search", deadline=time.time() + 0.2)
            if grant.granted:
                granted_at.append(time.time() - started)

    try:
        await asyncio.gather(*(worker(quotas[i % 2]) for i in range(3)))
    finally:
        for store in stores:
            await store.aclose()

    elapsed = time.time() - started
    assert len(granted_at) <= 40 + 40 * elapsed + 1
    assert len(granted_at) >= 40 + 40 * 0.8  # the burst, and most of a second's rate


# --- leases: a busy process takes several tokens per store round trip ---------------


class CountingStore(MemoryStore):
    """A memory store that counts the bucket round trips."""

    def __init__(self) -> None:
        super().__init__()
        self.takes = 0

    async def take(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        self.takes += 1
        return await super().take(*args, **kwargs)  # type: ignore[arg-type]


async def test_a_busy_process_leases_tokens_and_asks_the_store_less() -> None:
    vt = VirtualTime()
    store = CountingStore()
    quota = Quota(store, QuotaSettings(), clock=vt.clock, sleep=vt.sleep)
    granted = 0

    async def calls() -> None:
        nonlocal granted
        for _ in range(400):  # 40 calls a second for 10 s: well inside 50/s
            granted += (await quota.acquire("brave")).granted
            await vt.sleep(0.025)

    await vt.run(calls())
    assert granted == 400  # every call served, as without leases
    assert store.takes < 400 / 4, store.takes  # ~one round trip per lease of up to 8


async def test_a_busy_process_takes_its_next_lease_while_it_spends_the_last() -> None:
    vt = VirtualTime()
    store = CountingStore()
    quota = Quota(store, QuotaSettings(), clock=vt.clock, sleep=vt.sleep)
    waited = 0

    async def calls() -> None:
        nonlocal waited
        for _ in range(400):  # 40 calls a second for 10 s: leases of 8
            takes = store.takes
            assert (await quota.acquire("brave")).granted
            waited += store.takes > takes  # this call asked the store itself
            await vt.sleep(0.025)

    await vt.run(calls())
    assert store.takes < 400 / 4, store.takes  # leases, as before
    assert waited <= 8, waited  # the first leases, while demand grows; then none


class GatedStore(CountingStore):
    """Its bucket takes wait while `gate` is clear; `done` counts those that finished."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.gate.set()
        self.done = 0

    async def take(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        self.takes += 1
        await self.gate.wait()
        result = await MemoryStore.take(self, *args, **kwargs)  # type: ignore[arg-type]
        self.done += 1
        return result


async def test_closing_waits_for_the_lease_being_taken_in_the_background() -> None:
    store = GatedStore()
    quota = Quota(store, QuotaSettings())
    for _ in range(40):  # back to back: a busy process, which leases
        assert (await quota.acquire("brave")).granted
    store.gate.clear()
    for _ in range(40):  # spend the lease until its renewal waits on the store
        if store.takes > store.done:
            break
        assert (await asyncio.wait_for(quota.acquire("brave"), 1)).granted
    assert store.takes > store.done, "no lease was taken in the background"
    closing = asyncio.create_task(quota.aclose())
    await asyncio.sleep(0.01)
    assert not closing.done()  # the renewal still holds the store
    store.gate.set()
    await closing
    assert store.done == store.takes  # it finished before close returned


async def test_an_occasional_call_takes_one_token_at_a_time() -> None:
    vt = VirtualTime()
    store = CountingStore()
    quota = Quota(store, QuotaSettings(), clock=vt.clock, sleep=vt.sleep)

    async def calls() -> None:
        for _ in range(20):
            assert (await quota.acquire("brave")).granted
            await vt.sleep(1.0)  # far apart: nothing to lease for

    await vt.run(calls())
    assert store.takes == 20


async def test_leases_never_let_processes_past_the_pool_together() -> None:
    # Three "processes" (Quota objects) on one store, each asking as fast as it can:
    # however the tokens are leased, the pool's bound holds, and leases expire.
    vt = VirtualTime()
    store = MemoryStore()
    pool = PoolSettings(rate_per_s=50, burst_per_s=100, burst_window_s=0)
    settings = QuotaSettings(default=pool)
    quotas = [Quota(store, settings, clock=vt.clock, sleep=vt.sleep) for _ in range(3)]
    granted = [0, 0, 0]
    last_grant = vt.start

    async def process(n: int) -> None:
        nonlocal last_grant
        end = vt.start + 10
        while vt.now < end:
            grant = await quotas[n].acquire("brave", deadline=vt.now + 0.5)
            if grant.granted:
                granted[n] += 1
                last_grant = max(last_grant, vt.now)
            await vt.sleep(0.005)

    await vt.run(*(process(n) for n in range(3)))
    bound = pool.peak_capacity + pool.rate_per_s * (last_grant - vt.start)
    assert sum(granted) <= bound + 1e-6
    assert sum(granted) >= 0.9 * bound  # leases wasted little
    assert min(granted) > 0.2 * sum(granted)  # and none of the three was starved
