"""Hedging: the backup starts after the hedge delay, the first good answer wins, losers
are cancelled, a fast bad answer never wins, and the deadline is never passed.

The races run on an event loop with virtual time: when nothing is ready the loop jumps
to its next timer, so a 10-second race takes microseconds and times are exact. The
policy gets that loop's clock and `asyncio.sleep` as its injected clock and sleep.
"""

from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

import pytest
from pydantic import ValidationError

from sleuth.errors import ProviderUnavailable
from sleuth.resilience.hedge import (
    HedgeResult,
    HedgeSettings,
    LatencyTracker,
    hedge_delay,
    hedge_delays,
    hedged,
)
from sleuth.testing import run_in_virtual_time

run = run_in_virtual_time


def now() -> float:
    return asyncio.get_running_loop().time()


@dataclass
class FakeProvider:
    """A call that answers `answer` (or raises) after `latency` virtual seconds."""

    latency: float
    answer: list[str] | None = None
    fails: bool = False
    calls: int = 0
    started_at: float | None = None
    cancelled: bool = False

    async def __call__(self) -> list[str]:
        self.calls += 1
        self.started_at = now()
        try:
            await asyncio.sleep(self.latency)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        if self.fails:
            raise ProviderUnavailable("answered HTTP 503", provider="fake", http_status=503)
        return ["result"] if self.answer is None else self.answer


def has_results(answer: list[str]) -> bool:
    return bool(answer)


def race(
    primary: FakeProvider,
    backups: Sequence[FakeProvider] = (),
    delays: Sequence[float] = (),
    deadline_s: float = 3.0,
) -> HedgeResult[list[str]]:
    async def main() -> HedgeResult[list[str]]:
        calls: list[Callable[[], Awaitable[list[str]]]] = list(backups)
        return await hedged(
            primary,
            calls,
            delays,
            has_results,
            deadline=now() + deadline_s,
            clock=now,
        )

    return run(main)


def test_a_fast_primary_answers_alone_and_no_backup_is_asked() -> None:
    primary, backup = FakeProvider(0.2, ["a"]), FakeProvider(1.0, ["b"])
    result = race(primary, [backup], [0.5])
    assert result.value == ["a"] and result.winner == 0
    assert result.elapsed_s == pytest.approx(0.2)
    assert backup.calls == 0 and not result.hedged


def test_the_backup_starts_when_the_primary_has_not_answered_within_its_hedge_delay() -> None:
    primary, backup = FakeProvider(5.0, ["slow"]), FakeProvider(1.0, ["steady"])
    result = race(primary, [backup], [0.5])
    assert backup.started_at == pytest.approx(0.5)
    assert result.attempts[1].started_s == pytest.approx(0.5)
    assert result.value == ["steady"] and result.winner == 1
    assert result.elapsed_s == pytest.approx(1.5)


def test_a_backup_win_cancels_the_primary() -> None:
    primary, backup = FakeProvider(5.0), FakeProvider(1.0)
    result = race(primary, [backup], [0.5])
    assert primary.cancelled
    assert result.attempts[0].outcome == "cancelled"
    assert result.attempts[0].ended_s == pytest.approx(1.5)


def test_a_primary_win_cancels_the_backup() -> None:
    primary, backup = FakeProvider(1.0, ["primary"]), FakeProvider(2.0, ["backup"])
    result = race(primary, [backup], [0.5])
    assert backup.calls == 1 and backup.cancelled
    assert result.value == ["primary"] and result.winner == 0
    assert [a.outcome for a in result.attempts] == ["good", "cancelled"]
    assert result.elapsed_s == pytest.approx(1.0)


def test_a_fast_failure_starts_the_backup_at_once_not_after_the_delay() -> None:
    primary, backup = FakeProvider(0.05, fails=True), FakeProvider(0.3, ["b"])
    result = race(primary, [backup], [0.5])
    assert backup.started_at == pytest.approx(0.05)
    assert result.value == ["b"]
    assert result.elapsed_s == pytest.approx(0.35)
    assert result.attempts[0].outcome == "error"
    assert isinstance(result.attempts[0].error, ProviderUnavailable)


def test_a_fast_empty_answer_does_not_beat_a_slower_good_one() -> None:
    flaky, stable = FakeProvider(0.01, []), FakeProvider(1.2, ["stable"])
    result = race(flaky, [stable], [0.5])
    assert result.value == ["stable"] and result.winner == 1
    assert result.attempts[0].outcome == "bad" and result.attempts[0].value == []
    assert result.elapsed_s == pytest.approx(1.21)


def test_a_bad_backup_does_not_end_the_race_while_the_primary_may_still_answer() -> None:
    primary, backup = FakeProvider(2.0, ["late but good"]), FakeProvider(0.1, fails=True)
    result = race(primary, [backup], [0.5])
    assert result.value == ["late but good"] and result.winner == 0
    assert not primary.cancelled
    assert result.elapsed_s == pytest.approx(2.0)


def test_each_backup_of_a_chain_starts_after_the_previous_ones_delay() -> None:
    slow, slower, fast = FakeProvider(9.0), FakeProvider(9.0), FakeProvider(0.4, ["third"])
    result = race(slow, [slower, fast], [0.5, 0.7])
    assert slower.started_at == pytest.approx(0.5)
    assert fast.started_at == pytest.approx(1.2)
    assert result.value == ["third"] and result.elapsed_s == pytest.approx(1.6)
    assert slow.cancelled and slower.cancelled


def test_the_deadline_ends_the_race_and_cancels_everyone() -> None:
    primary, backup = FakeProvider(10.0), FakeProvider(10.0)
    result = race(primary, [backup], [0.5], deadline_s=3.0)
    assert result.deadline_hit and not result.ok and result.value is None
    assert result.elapsed_s == pytest.approx(3.0)
    assert primary.cancelled and backup.cancelled


def test_no_backup_starts_after_the_deadline() -> None:
    primary, backup = FakeProvider(10.0), FakeProvider(0.1)
    result = race(primary, [backup], [5.0], deadline_s=3.0)
    assert backup.calls == 0
    assert result.deadline_hit and result.elapsed_s == pytest.approx(3.0)


def test_a_passed_deadline_calls_nobody() -> None:
    primary = FakeProvider(0.1)
    result = race(primary, deadline_s=0.0)
    assert primary.calls == 0 and result.deadline_hit and result.attempts == ()


def test_when_every_provider_fails_the_race_ends_at_once_with_their_errors() -> None:
    primary, backup = FakeProvider(0.1, fails=True), FakeProvider(0.2, [])
    result = race(primary, [backup], [0.5])
    assert not result.ok and not result.deadline_hit
    assert result.elapsed_s == pytest.approx(0.3)
    assert [a.outcome for a in result.attempts] == ["error", "bad"]


def test_an_infinite_delay_asks_the_backup_only_after_a_failure() -> None:
    patient = FakeProvider(2.0, ["primary"])
    unused = FakeProvider(0.1)
    assert race(patient, [unused], [math.inf]).value == ["primary"]
    assert unused.calls == 0

    failing, backup = FakeProvider(0.4, fails=True), FakeProvider(0.1)
    result = race(failing, [backup], [math.inf])
    assert backup.started_at == pytest.approx(0.4) and result.winner == 1


def test_a_call_that_raises_before_awaiting_is_a_bad_answer_not_a_crash() -> None:
    def broken() -> Awaitable[list[str]]:
        raise RuntimeError("bug in the provider module")

    async def main() -> HedgeResult[list[str]]:
        return await hedged(broken, [FakeProvider(0.1)], [0.5], has_results, now() + 3, clock=now)

    result = run(main)
    assert result.value == ["result"]
    assert isinstance(result.attempts[0].error, RuntimeError)


def test_cancelling_the_search_cancels_every_attempt() -> None:
    primary, backup = FakeProvider(10.0), FakeProvider(10.0)

    async def main() -> None:
        race_task = asyncio.ensure_future(
            hedged(primary, [backup], [0.5], has_results, now() + 30, clock=now)
        )
        await asyncio.sleep(1.0)
        race_task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await race_task

    run(main)
    assert primary.cancelled and backup.cancelled


def test_delays_must_match_the_backups() -> None:
    async def main() -> None:
        with pytest.raises(ValueError, match="1 backups need 1 delays"):
            await hedged(FakeProvider(0.1), [FakeProvider(0.1)], [], has_results, now() + 3)

    run(main)


def test_the_learned_delay_is_the_providers_recent_p95() -> None:
    settings = HedgeSettings(min_samples=20, floor_s=0.1, cap_s=2.0)
    tracker = LatencyTracker(window=100)
    for ms in range(300, 320):  # 20 latencies, 300..319 ms
        tracker.record("searxng", ms / 1000)
    assert tracker.p95("searxng") == pytest.approx(0.318)
    assert hedge_delay("searxng", tracker, settings) == pytest.approx(0.318)


def test_until_enough_latencies_are_known_the_default_delay_applies() -> None:
    settings = HedgeSettings(min_samples=20, default_delay_s=0.7)
    tracker = LatencyTracker()
    for _ in range(19):
        tracker.record("brave", 0.2)
    assert hedge_delay("brave", tracker, settings) == 0.7
    tracker.record("brave", 0.2)
    assert hedge_delay("brave", tracker, settings) == pytest.approx(0.2)


def test_a_learned_delay_stays_between_the_floor_and_the_cap() -> None:
    settings = HedgeSettings(min_samples=1, floor_s=0.15, cap_s=0.6)
    tracker = LatencyTracker()
    tracker.record("fast", 0.01)
    tracker.record("long_tail", 12.0)
    assert hedge_delay("fast", tracker, settings) == 0.15
    assert hedge_delay("long_tail", tracker, settings) == 0.6


def test_a_fixed_delay_wins_over_learning_and_disabled_hedging_gives_none() -> None:
    tracker = LatencyTracker()
    for _ in range(50):
        tracker.record("exa", 0.2)
    assert hedge_delay("exa", tracker, HedgeSettings(delay_s={"exa": 1.1})) == 1.1
    assert hedge_delay("exa", tracker, HedgeSettings(learn=False)) == 0.5
    assert hedge_delay("exa", tracker, HedgeSettings(enabled=False)) is None
    assert hedge_delays(["exa", "brave"], tracker, HedgeSettings(enabled=False)) == [math.inf]


def test_the_window_forgets_old_latencies() -> None:
    tracker = LatencyTracker(window=10)
    for _ in range(10):
        tracker.record("wikipedia", 9.0)
    for _ in range(10):
        tracker.record("wikipedia", 0.3)
    assert tracker.count("wikipedia") == 10 and tracker.p95("wikipedia") == 0.3


def test_every_quantile_is_the_nearest_rank_of_the_last_window_latencies() -> None:
    rng = random.Random(11)  # noqa: S311 - latencies, repeatable
    tracker, window = LatencyTracker(window=25), 25
    seen: list[float] = []
    for _ in range(400):
        # Repeated values too: the window must drop the oldest copy, not another.
        latency = round(rng.lognormvariate(-1.5, 0.8), 2)
        tracker.record("brave", latency)
        seen.append(latency)
        last = sorted(seen[-window:])
        for q in (0.5, 0.9, 0.95, 1.0):
            assert tracker.quantile("brave", q) == last[math.ceil(q * len(last)) - 1]


def test_a_negative_or_nan_latency_is_refused() -> None:
    tracker = LatencyTracker()
    for bad in (-0.1, math.nan):
        with pytest.raises(ValueError, match="duration"):
            tracker.record("brave", bad)


def test_the_race_uses_the_learned_delay() -> None:
    settings = HedgeSettings(min_samples=5, cap_s=2.0)
    tracker = LatencyTracker()
    for latency in (0.2, 0.3, 0.4, 0.8, 0.9):
        tracker.record("primary", latency)
    (delay,) = hedge_delays(["primary", "backup"], tracker, settings)
    primary, backup = FakeProvider(5.0), FakeProvider(1.0)
    result = race(primary, [backup], [delay])
    assert backup.started_at == pytest.approx(0.9)
    assert result.elapsed_s == pytest.approx(1.9)


def test_settings_refuse_a_floor_above_the_cap_and_unknown_keys() -> None:
    with pytest.raises(ValidationError, match="floor_s"):
        HedgeSettings(floor_s=1.0, cap_s=0.5)
    with pytest.raises(ValidationError, match="extra"):
        HedgeSettings.model_validate({"delay": 1})
    with pytest.raises(ValidationError):
        HedgeSettings(delay_s={"brave": 0})


def test_a_race_without_backups_runs_in_the_callers_task_and_ends_as_a_race_would() -> None:
    async def main() -> tuple[list[bool], HedgeResult[list[str]], HedgeResult[list[str]]]:
        caller = asyncio.current_task()
        same: list[bool] = []

        async def primary() -> list[str]:
            same.append(asyncio.current_task() is caller)
            return ["result"]

        answered = await hedged(primary, [], [], has_results, now() + 3.0, clock=now)
        slow = FakeProvider(10.0)
        cut = await hedged(slow, [], [], has_results, now() + 3.0, clock=now)
        return same, answered, cut

    same, answered, cut = run(main)
    assert same == [True]  # no task of its own
    assert answered.value == ["result"] and answered.winner == 0
    assert cut.deadline_hit and not cut.stopped and cut.elapsed_s == pytest.approx(3.0)
    assert [a.outcome for a in cut.attempts] == ["cancelled"]


def test_stop_ends_a_race_without_backups_and_cancels_its_call() -> None:
    slow = FakeProvider(10.0)

    async def main() -> HedgeResult[list[str]]:
        stop = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_later(1.0, stop.set_result, None)
        return await hedged(slow, [], [], has_results, now() + 3.0, clock=now, stop=stop)

    result = run(main)
    assert result.stopped and not result.deadline_hit and slow.cancelled
    assert result.elapsed_s == pytest.approx(1.0)


def test_cancelling_the_caller_cancels_a_race_without_backups() -> None:
    slow = FakeProvider(10.0)

    async def main() -> None:
        race_task = asyncio.ensure_future(hedged(slow, [], [], has_results, now() + 30, clock=now))
        await asyncio.sleep(1.0)
        race_task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await race_task

    run(main)
    assert slow.cancelled
