"""The circuit breaker as an operator sees it: when a provider is skipped, for how
long, with which reason, and how it comes back. A fake clock; no test sleeps."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import cast

import pytest

from sleuth.contract import ErrorInfo
from sleuth.resilience.breaker import TRANSITIONS, Breaker, BreakerSettings, Outcome
from sleuth.store import MemoryStore, SqliteStore
from sleuth.store.base import BreakerStore


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
