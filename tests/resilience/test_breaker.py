"""The circuit breaker as an operator sees it: when a provider is skipped, for how
long, with which reason, and how it comes back; and the read cache and batched
successes that save round trips without changing a decision. A fake clock and a
manual sleep; no test sleeps."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import cast

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleuth.contract import ErrorInfo
from sleuth.resilience.breaker import (
    TRANSITIONS,
    Breaker,
    BreakerSettings,
    Call,
    Outcome,
    observe,
)
from sleuth.store import MemoryStore, SqliteStore
from sleuth.store.base import BreakerRecord, BreakerStore


class Clock:
    def __init__(self, now: float = 1_750_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


def breaker(clock: Clock, store: BreakerStore | None = None, **settings: object) -> Breaker:
    return Breaker(store or MemoryStore(), BreakerSettings.model_validate(settings), clock)


async def record_all(b: Breaker, outcomes: list[str], provider: str = "brave") -> None:
    for outcome in outcomes:
        await b.record(provider, cast(Outcome, outcome))


def test_every_state_has_its_rules_in_the_one_table() -> None:
    assert set(TRANSITIONS) == {"closed", "open", "half_open"}
    for state, moves in TRANSITIONS.items():
        # every outcome a caller can record is understood in every state
        assert {"success", "failure", "unexpected"} <= set(moves), state
    assert TRANSITIONS["closed"]["unexpected"] == "open"
    assert TRANSITIONS["open"]["cooled_down"] == "half_open"
    assert TRANSITIONS["half_open"]["success"] == "closed"
    assert TRANSITIONS["half_open"]["failure"] == "open"


async def test_a_closed_breaker_lets_calls_through(clock: Clock) -> None:
    decision = await breaker(clock).allow("brave")
    assert (decision.allowed, decision.state, decision.reason) == (True, "closed", None)


async def test_one_unexpected_error_opens_for_five_minutes(clock: Clock) -> None:
    b = breaker(clock)
    await b.record("brave", "unexpected", detail="captcha")
    clock.now += 60

    decision = await b.allow("brave")

    assert not decision.allowed and decision.state == "open"
    assert decision.retry_at == clock.now + 240
    assert decision.reason is not None
    assert "captcha" in decision.reason and "240s" in decision.reason
    assert (await b.allow("google")).allowed  # only that provider is skipped


async def test_the_failure_rate_over_the_window_opens_it(clock: Clock) -> None:
    b = breaker(clock, min_calls=10, failure_rate=0.5, window_size=20)
    await record_all(b, ["success"] * 5 + ["failure"] * 4)
    assert (await b.allow("brave")).allowed  # 4 of 9: below threshold and min_calls

    await b.record("brave", "failure", detail="provider_timeout")  # 5 of 10: 50%

    decision = await b.allow("brave")
    assert not decision.allowed
    assert decision.reason is not None
    assert "5 of the last 10 calls failed" in decision.reason
    assert "provider_timeout" in decision.reason


async def test_a_few_failures_on_a_quiet_provider_do_not_open_it(clock: Clock) -> None:
    b = breaker(clock, min_calls=10)
    await record_all(b, ["failure"] * 9)
    assert (await b.allow("brave")).allowed


async def test_failures_older_than_the_window_are_forgotten(clock: Clock) -> None:
    b = breaker(clock, min_calls=4, window_s=60)
    await record_all(b, ["failure"] * 3)
    clock.now += 61
    await record_all(b, ["success"] * 3 + ["failure"])  # 1 of 4 in the window
    assert (await b.allow("brave")).allowed


async def test_the_window_keeps_only_the_last_calls(clock: Clock) -> None:
    b = breaker(clock, min_calls=4, window_size=4)
    await record_all(b, ["failure"] * 3 + ["success"] * 4 + ["failure"])  # last 4: 1 failed
    assert (await b.allow("brave")).allowed


async def test_after_the_open_time_exactly_one_probe_goes_out(clock: Clock) -> None:
    b = breaker(clock, open_for_s=120)
    await b.record("brave", "unexpected")
    clock.now += 119
    assert not (await b.allow("brave")).allowed
    clock.now += 1

    decisions = await asyncio.gather(*(b.allow("brave") for _ in range(10)))

    assert [d.allowed for d in decisions].count(True) == 1
    probe = next(d for d in decisions if d.allowed)
    refused = [d for d in decisions if not d.allowed]
    assert probe.probe and probe.state == "half_open"
    assert all(d.reason == "circuit half-open: a probe is already out" for d in refused)


async def test_a_successful_probe_closes_the_breaker(clock: Clock) -> None:
    b = breaker(clock)
    await b.record("brave", "unexpected")
    clock.now += 300
    assert (await b.allow("brave")).probe

    await b.record("brave", "success")

    after = [await b.allow("brave") for _ in range(3)]
    assert all(d.allowed and d.state == "closed" and not d.probe for d in after)


async def test_a_failed_probe_opens_it_again_for_the_full_time(clock: Clock) -> None:
    b = breaker(clock)
    await b.record("brave", "unexpected")
    clock.now += 300
    await b.allow("brave")
    clock.now += 2

    await b.record("brave", "failure", detail="provider_unavailable")

    decision = await b.allow("brave")
    assert not decision.allowed and decision.retry_at == clock.now + 300
    assert decision.reason is not None and "probe failed: provider_unavailable" in decision.reason


async def test_a_probe_that_never_reports_is_replaced(clock: Clock) -> None:
    b = breaker(clock, probe_timeout_s=30)
    await b.record("brave", "unexpected")
    clock.now += 300
    assert (await b.allow("brave")).probe  # its search is cancelled; no outcome comes
    clock.now += 29
    assert not (await b.allow("brave")).allowed
    clock.now += 1
    assert (await b.allow("brave")).probe


async def test_late_outcomes_while_open_change_nothing(clock: Clock) -> None:
    b = breaker(clock)
    await b.record("brave", "unexpected")
    clock.now += 100
    await record_all(b, ["success", "unexpected", "failure"])

    decision = await b.allow("brave")
    assert not decision.allowed and decision.retry_at == clock.now + 200


async def test_open_time_is_configurable(clock: Clock) -> None:
    b = breaker(clock, open_for_s=10)
    await b.record("brave", "unexpected")
    clock.now += 10
    assert (await b.allow("brave")).allowed


async def test_a_disabled_breaker_never_skips(clock: Clock) -> None:
    b = breaker(clock, enabled=False)
    await b.record("brave", "unexpected")
    assert (await b.allow("brave")).allowed


async def test_replicas_sharing_a_store_share_the_breaker(clock: Clock, tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite"
    first_store, second_store = SqliteStore(path), SqliteStore(path)
    first, second = breaker(clock, first_store), breaker(clock, second_store)
    try:
        await first.record("brave", "unexpected", detail="bad_response")
        assert not (await second.allow("brave")).allowed
        clock.now += 300

        decisions = await asyncio.gather(
            *(replica.allow("brave") for replica in (first, second) for _ in range(5))
        )
        assert [d.allowed for d in decisions].count(True) == 1  # one probe between them
        await second.record("brave", "success")
        assert (await first.allow("brave")).state == "closed"
    finally:
        await first_store.aclose()
        await second_store.aclose()


def info(code: str, category: str, action: str = "report") -> ErrorInfo:
    return ErrorInfo.model_validate(
        {"code": code, "category": category, "action": action, "message": code}
    )


@pytest.mark.parametrize(
    ("error", "outcome"),
    [
        (None, "success"),
        (info("bad_response", "unexpected", "open_breaker"), "unexpected"),
        (info("captcha", "recoverable", "open_breaker"), "unexpected"),
        (info("provider_timeout", "recoverable", "retry"), "failure"),
        (info("rate_limited", "recoverable", "retry"), "failure"),
        (info("auth_failed", "non_recoverable"), "failure"),
        (info("no_results", "non_recoverable"), "success"),
        (info("provider_rejected", "non_recoverable"), "success"),
    ],
)
def test_what_a_call_counts_as(error: ErrorInfo | None, outcome: Outcome, clock: Clock) -> None:
    assert breaker(clock).outcome_for(error) == outcome


# --- fewer round trips: the read cache and successes written in batches ----------------


class Counting:
    """A breaker store that counts its reads and writes (and the calls each write adds)."""

    def __init__(self, store: BreakerStore | None = None) -> None:
        self.store = store or MemoryStore()
        self.reads = 0
        self.writes = 0

    async def get_breaker(self, provider: str) -> BreakerRecord:
        self.reads += 1
        return await self.store.get_breaker(provider)

    async def update_breaker(
        self, provider: str, change: Callable[[BreakerRecord], BreakerRecord]
    ) -> BreakerRecord:
        self.writes += 1
        return await self.store.update_breaker(provider, change)


class ManualSleep:
    """The breaker's sleep: every sleeper waits until the test calls `wake`."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self._waiting: list[asyncio.Future[None]] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.append(waiter)
        await waiter

    async def wake(self) -> None:
        waiting, self._waiting = self._waiting, []
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)
        for _ in range(5):  # the woken flushes run (the memory store never waits)
            await asyncio.sleep(0)


def batched(
    clock: Clock, store: BreakerStore, sleep: ManualSleep | None = None, **settings: object
) -> Breaker:
    return Breaker(
        store, BreakerSettings.model_validate(settings), clock, sleep=sleep or ManualSleep()
    )


async def test_a_closed_record_read_lately_lets_calls_through_without_a_read(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, read_cache_s=0.25)
    assert (await b.allow("brave")).allowed
    clock.now += 0.2
    decisions = [await b.allow("brave") for _ in range(5)]
    assert all(d.allowed and d.state == "closed" for d in decisions)
    assert store.reads == 1
    clock.now += 0.05  # read_cache_s after the read: read again
    assert (await b.allow("brave")).allowed
    assert store.reads == 2


async def test_without_the_read_cache_every_call_reads(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, read_cache_s=0)
    for _ in range(3):
        await b.allow("brave")
    assert store.reads == 3


async def test_another_replica_opening_it_is_seen_within_read_cache_s(clock: Clock) -> None:
    shared = MemoryStore()
    here, there = batched(clock, shared, read_cache_s=0.25), batched(clock, shared)
    assert (await here.allow("brave")).allowed
    await there.record("brave", "unexpected", detail="captcha")
    clock.now += 0.1
    assert (await here.allow("brave")).allowed  # what it read 0.1 s ago still stands
    clock.now += 0.15
    decision = await here.allow("brave")
    assert not decision.allowed and decision.reason is not None and "captcha" in decision.reason


async def test_this_process_sees_its_own_opening_at_once(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, read_cache_s=60)
    assert (await b.allow("brave")).allowed
    await b.record("brave", "unexpected")
    assert not (await b.allow("brave")).allowed  # its write told it; the cache held "closed"


async def test_an_open_record_is_read_again_every_time(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, read_cache_s=60, open_for_s=10)
    await b.record("brave", "unexpected")
    reads = store.reads
    clock.now += 10
    assert (await b.allow("brave")).probe  # cooled down: no cache hides it
    assert store.reads == reads + 1


async def test_successes_are_written_together_ahead_of_the_next_failure(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, min_calls=4, failure_rate=0.5)
    await b.allow("brave")
    for _ in range(3):
        clock.now += 1
        await b.record("brave", "success")
    assert store.writes == 0
    clock.now += 1
    await b.record("brave", "failure", detail="provider_timeout")
    assert store.writes == 1  # the three successes and the failure, in one update
    record = await store.store.get_breaker("brave")
    assert [failed for _, failed in record.calls] == [False, False, False, True]
    assert [when for when, _ in record.calls] == sorted(when for when, _ in record.calls)
    assert record.state == "closed"  # 1 of 4 failed


async def test_waiting_successes_are_written_after_flush_s(clock: Clock) -> None:
    store, sleep = Counting(), ManualSleep()
    b = batched(clock, store, sleep, flush_s=0.25)
    await b.allow("brave")
    await b.record("brave", "success")
    await b.record("brave", "success")
    await asyncio.sleep(0)  # the timer starts
    assert sleep.asked == [0.25] and store.writes == 0  # one timer per batch

    await sleep.wake()

    assert store.writes == 1
    assert len((await store.store.get_breaker("brave")).calls) == 2
    await b.record("brave", "success")
    await asyncio.sleep(0)
    assert sleep.asked == [0.25, 0.25]  # the next batch has its own


async def test_a_full_batch_is_written_at_once(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, flush_max_calls=3)
    await b.allow("brave")
    for _ in range(7):
        await b.record("brave", "success")
    assert store.writes == 2
    assert len((await store.store.get_breaker("brave")).calls) == 6


async def test_aclose_writes_what_waits(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store)
    for provider in ("brave", "exa"):
        await b.allow(provider)
        await b.record(provider, "success")
    await b.aclose()
    assert store.writes == 2
    assert all([len((await store.store.get_breaker(p)).calls) == 1 for p in ("brave", "exa")])


async def test_without_batching_each_success_is_written(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store, flush_s=0)
    await b.allow("brave")
    await record_all(b, ["success"] * 3)
    assert store.writes == 3


async def test_a_probe_outcome_is_written_at_once(clock: Clock) -> None:
    store = Counting()
    b = batched(clock, store)
    await b.record("brave", "unexpected")
    clock.now += 300
    assert (await b.allow("brave")).probe
    writes = store.writes
    await b.record("brave", "success")
    assert store.writes == writes + 1
    assert (await store.store.get_breaker("brave")).state == "closed"


async def test_a_waiting_success_is_never_taken_for_a_probe(clock: Clock) -> None:
    shared = MemoryStore()
    here, there = batched(clock, shared, open_for_s=10), batched(clock, shared, open_for_s=10)
    await here.allow("brave")
    await here.record("brave", "success")  # waits: closed, as `here` knows it
    await there.record("brave", "unexpected")
    clock.now += 10
    assert (await there.allow("brave")).probe  # the probe is out

    await here.aclose()

    record = await shared.get_breaker("brave")
    assert record.state == "half_open" and record.probe_at == clock.now


async def test_a_waiting_success_does_not_join_a_window_opened_since(clock: Clock) -> None:
    shared = MemoryStore()
    here, there = batched(clock, shared, open_for_s=10), batched(clock, shared, open_for_s=10)
    await here.allow("brave")
    await here.record("brave", "success")  # made in the first closed window
    await there.record("brave", "unexpected")
    clock.now += 10
    await there.allow("brave")
    await there.record("brave", "success")  # the probe closes it: a new, empty window
    clock.now += 1

    await here.aclose()

    assert (await shared.get_breaker("brave")).calls == ()


async def test_a_flush_the_store_refuses_is_logged(
    clock: Clock, caplog: pytest.LogCaptureFixture
) -> None:
    class Broken(Counting):
        async def update_breaker(
            self, provider: str, change: Callable[[BreakerRecord], BreakerRecord]
        ) -> BreakerRecord:
            raise ConnectionError("store down")

    b = batched(clock, Broken())
    await b.allow("brave")
    await b.record("brave", "success")
    await b.aclose()
    assert "1 successes not recorded" in caplog.text


def test_only_a_success_can_wait() -> None:
    with pytest.raises(ValueError, match="only a success"):
        Call(0.0, "failure", deferred=True)


# The property: batching changes when the window's calls are written, never what the
# breaker decides. A random run of calls, allows, timer flushes and clock steps goes to
# a breaker that writes everything at once and reads on every call, and to one with
# the read cache and batches; every decision is the same, every record agrees once the
# successes still waiting are taken in, and after aclose the records are equal.

STEP = st.tuples(
    st.sampled_from([0.0, 0.05, 0.2, 0.3, 1.0, 4.0, 11.0, 35.0, 130.0]),
    st.sampled_from(["success", "success", "success", "failure", "unexpected", "allow", "tick"]),
)
SETTINGS = st.fixed_dictionaries(
    {
        "open_for_s": st.sampled_from([5.0, 60.0]),
        "failure_rate": st.sampled_from([0.2, 0.5, 1.0]),
        "window_size": st.integers(1, 8),
        "window_s": st.sampled_from([3.0, 30.0]),
        "min_calls": st.integers(1, 6),
        "probe_timeout_s": st.sampled_from([2.0, 20.0]),
        "read_cache_s": st.sampled_from([0.1, 0.25, 2.0]),
        "flush_max_calls": st.integers(1, 6),
    }
).map(BreakerSettings.model_validate)


@given(settings=SETTINGS, steps=st.lists(STEP, max_size=80))
@hypothesis.settings(max_examples=300, deadline=None)
def test_batching_decides_exactly_as_writing_each_call(
    settings: BreakerSettings, steps: list[tuple[float, str]]
) -> None:
    async def run() -> None:
        clock, sleep = Clock(), ManualSleep()
        plain_store, batched_store = MemoryStore(), MemoryStore()
        plain = Breaker(
            plain_store, settings.model_copy(update={"read_cache_s": 0, "flush_s": 0}), clock
        )
        batching = Breaker(batched_store, settings, clock, sleep=sleep)
        for n, (later, what) in enumerate(steps):
            clock.now += later
            if what == "allow":
                assert await batching.allow("brave") == await plain.allow("brave"), n
            elif what == "tick":
                await sleep.wake()
            else:
                outcome = cast(Outcome, what)
                await plain.record("brave", outcome, detail=f"call {n}")
                await batching.record("brave", outcome, detail=f"call {n}")
            expected = await plain_store.get_breaker("brave")
            stored = await batched_store.get_breaker("brave")
            waiting = batching._waiting.get("brave", [])  # what is not written yet
            assert observe(stored, waiting, settings) == expected, n
            # state, opening, probe and reason never wait: only the window lags
            assert replace(stored, calls=()) == replace(expected, calls=()), n
        await batching.aclose()
        assert await batched_store.get_breaker("brave") == await plain_store.get_breaker("brave")

    asyncio.run(run())
