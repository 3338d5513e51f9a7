"""The admission gate as a busy service's caller sees it: searches past the limit
wait their turn in arrival order, one that cannot start in time is refused with a
429 and a Retry-After, a task waits as long as it takes, and the limit follows the
event loop's lag. Real time, in fractions of a second."""

from __future__ import annotations

import asyncio
import time

import pytest

from sleuth.admission import AdmissionSettings, FinishingTime, Gate
from sleuth.errors import TooManyRequests


def gate(**settings: object) -> Gate:
    return Gate(AdmissionSettings.model_validate(settings), deadline_s=3.0)


async def hold(g: Gate, name: str, entered: list[str], release: asyncio.Event) -> None:
    async with g.admit():
        entered.append(name)
        await release.wait()


async def test_searches_past_the_limit_wait_their_turn_in_arrival_order() -> None:
    g = gate(min_searches=1, max_searches=1)
    entered: list[str] = []
    release = asyncio.Event()
    first = asyncio.create_task(hold(g, "first", entered, release))
    await asyncio.sleep(0)
    later = [asyncio.create_task(hold(g, name, entered, asyncio.Event())) for name in "abc"]
    await asyncio.sleep(0.05)
    assert entered == ["first"]  # the others wait
    release.set()
    await first
    await asyncio.sleep(0.05)
    assert entered == ["first", "a"]  # one turn, to the first that came
    for task in later:
        task.cancel()
    await asyncio.gather(*later, return_exceptions=True)


async def test_a_search_that_cannot_start_in_time_is_refused_at_once_with_a_retry_after() -> None:
    g = gate(min_searches=1, max_searches=1, max_wait_s=0.1)
    release = asyncio.Event()
    busy = asyncio.create_task(hold(g, "busy", [], release))
    await asyncio.sleep(0)
    started = time.perf_counter()
    with pytest.raises(TooManyRequests) as refused:
        async with g.admit():
            pass
    waited = time.perf_counter() - started
    assert waited == pytest.approx(0.1, abs=0.05)
    assert refused.value.retry_after_s == 1.0 and refused.value.status_hint == 429
    assert "could not start within 0.1s" in refused.value.message
    release.set()
    await busy
    async with g.admit():  # the turn it would have had is free again
        pass


async def test_a_task_waits_as_long_as_it_takes() -> None:
    g = gate(min_searches=1, max_searches=1, max_wait_s=0.05)
    release = asyncio.Event()
    busy = asyncio.create_task(hold(g, "busy", [], release))
    await asyncio.sleep(0)

    async def patient() -> float:
        started = time.perf_counter()
        async with g.admit(patient=True):
            return time.perf_counter() - started

    waiting = asyncio.create_task(patient())
    await asyncio.sleep(0.2)  # four times max_wait_s
    release.set()
    await busy
    assert await waiting >= 0.2


async def test_the_limit_falls_while_the_loop_lags_and_grows_back_when_it_does_not() -> None:
    g = gate(min_searches=2, max_searches=64, lag_s=0.02)
    release = asyncio.Event()
    held = [asyncio.create_task(hold(g, str(n), [], release)) for n in range(3)]
    await asyncio.sleep(0.05)
    (state,) = g._loops.values()
    for _ in range(20):  # a loop busy with CPU work: timers wake up ~0.1 s late
        time.sleep(0.1)  # the point: a loop too busy to run timers
        await asyncio.sleep(0.021)
    assert state.limit == 2  # down to min_searches
    for _ in range(30):
        await asyncio.sleep(0.021)  # idle: the lag fades, one more turn per tick
    assert state.limit > 10
    release.set()
    await asyncio.gather(*held)


async def test_searches_waiting_at_the_gate_start_while_the_loop_is_idle() -> None:
    # A lag limit no wake-up is under: the limit never grows by the lag, so whoever
    # enters past the first entered because the loop was idle.
    g = gate(min_searches=1, max_searches=8, lag_s=1e-9)
    release = asyncio.Event()
    entered: list[str] = []
    first = asyncio.create_task(hold(g, "first", entered, release))
    await asyncio.sleep(0)
    (state,) = g._loops.values()
    state.limit, state.lag_s = 1.0, 10.0  # just after a busy spell: the lag fades slowly
    later = [asyncio.create_task(hold(g, name, entered, release)) for name in "abc"]
    started = time.monotonic()
    while len(entered) < 4 and time.monotonic() - started < 10:
        await asyncio.sleep(0.005)
    assert sorted(entered) == ["a", "b", "c", "first"]  # nothing held while nothing ran
    # Let in past the limit, which stays the lag's: raised, it would let more in on
    # every release, however busy the loop is then.
    assert state.limit < 2
    release.set()
    await asyncio.gather(first, *later)


def test_the_fan_out_ends_before_the_deadline_by_what_follows_it() -> None:
    finishing = FinishingTime(window=10)
    for seconds in (0.05,) * 9 + (0.4,):
        finishing.record(seconds)
    assert finishing.reserve_s(3.0) == 0.4  # the p95 of the last ten
    assert finishing.reserve_s(0.6) == pytest.approx(0.2)  # never more than a third
