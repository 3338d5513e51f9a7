"""Retry: at most 3 attempts, growing jittered backoff, Retry-After honoured, the
deadline never passed, non-retryable errors returned at once.

Time is a fake clock that only the fake sleep (and a simulated call latency) moves;
nothing here sleeps for real.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import pytest

from sleuth.errors import AuthFailed, ProviderTimeout, RateLimited, from_status
from sleuth.resilience.retry import RetrySettings, backoff_ceiling, retry_call
from sleuth.resilience.rules import Classification, Failure, RuleBook

BOOK = RuleBook()


def by_default_rules(exc: BaseException) -> Classification:
    return BOOK.classify(Failure.of("brave", exc))


@dataclass
class FakeTime:
    now: float = 100.0
    sleeps: list[float] = field(default_factory=list)

    def clock(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@dataclass
class Provider:
    """Answers from a script: each entry is raised if an exception, returned otherwise;
    every call takes `latency` seconds of fake time."""

    time: FakeTime
    script: list[object]
    latency: float = 0.1
    calls: list[float] = field(default_factory=list)

    async def __call__(self) -> str:
        self.calls.append(self.time.now)
        self.time.now += self.latency
        answer = self.script[min(len(self.calls), len(self.script)) - 1]
        if isinstance(answer, BaseException):
            raise answer
        return str(answer)


@pytest.fixture
def fake() -> FakeTime:
    return FakeTime()


class Ceiling:
    """A generator that always draws the top of the jitter range."""

    def uniform(self, a: float, b: float) -> float:
        return b


class Floor:
    def uniform(self, a: float, b: float) -> float:
        return a


def gateway_timeout() -> Exception:
    return from_status("brave", 504, "<html>504 Gateway Time-out</html>")


async def test_at_most_three_attempts_then_the_last_error(fake: FakeTime) -> None:
    provider = Provider(fake, [gateway_timeout()])
    outcome = await retry_call(
        provider,
        classify=by_default_rules,
        deadline=fake.now + 60,
        clock=fake.clock,
        sleep=fake.sleep,
    )
    assert not outcome.ok
    assert (outcome.attempts, outcome.retries, len(provider.calls)) == (3, 2, 3)
    assert outcome.stop_reason == "attempts"
    assert outcome.classification is not None
    assert (outcome.classification.code, outcome.classification.action) == (
        "provider_unavailable",
        "retry",
    )
    assert isinstance(outcome.error, Exception)
    assert outcome.error.http_status == 504  # type: ignore[attr-defined]
    assert len(fake.sleeps) == 2


async def test_backoff_grows_and_is_capped(fake: FakeTime) -> None:
    settings = RetrySettings(max_attempts=5, base_delay_s=0.25, max_delay_s=1.5)
    await retry_call(
        Provider(fake, [gateway_timeout()]),
        classify=by_default_rules,
        deadline=fake.now + 60,
        clock=fake.clock,
        sleep=fake.sleep,
        settings=settings,
        rng=Ceiling(),
    )
    assert fake.sleeps == [0.25, 0.5, 1.0, 1.5]
    assert [backoff_ceiling(n, settings) for n in (1, 2, 3, 4, 5)] == [0.25, 0.5, 1.0, 1.5, 1.5]


async def test_full_jitter_draws_below_the_ceiling(fake: FakeTime) -> None:
    settings = RetrySettings(max_attempts=3, base_delay_s=1.0, max_delay_s=10.0)
    ceilings = [1.0, 2.0]
    draws: list[float] = []
    for seed in range(40):
        fake.sleeps.clear()
        await retry_call(
            Provider(fake, [gateway_timeout()]),
            classify=by_default_rules,
            deadline=fake.now + 60,
            clock=fake.clock,
            sleep=fake.sleep,
            settings=settings,
            rng=random.Random(seed),  # noqa: S311 - jitter, not secrets
        )
        assert all(0 <= s <= c for s, c in zip(fake.sleeps, ceilings, strict=True))
        draws.extend(fake.sleeps)
    assert len(set(draws)) == len(draws)  # callers that failed together spread out
    assert min(draws) < 0.5 < max(draws)


async def test_no_jitter_waits_the_ceiling(fake: FakeTime) -> None:
    await retry_call(
        Provider(fake, [gateway_timeout()]),
        classify=by_default_rules,
        deadline=fake.now + 60,
        clock=fake.clock,
        sleep=fake.sleep,
        settings=RetrySettings(jitter="none"),
    )
    assert fake.sleeps == [0.2, 0.4]


async def test_retry_after_is_honoured(fake: FakeTime) -> None:
    limited = RateLimited(
        "serpapi answered HTTP 429", provider="serpapi", http_status=429, retry_after_s=1.5
    )
    provider = Provider(fake, [limited, "results"])
    outcome = await retry_call(
        provider,
        classify=by_default_rules,
        deadline=fake.now + 3,
        clock=fake.clock,
        sleep=fake.sleep,
        rng=Floor(),  # backoff alone would not wait at all
    )
    assert (outcome.value, outcome.attempts) == ("results", 2)
    assert fake.sleeps == [1.5]
    # the second call went out 1.5 s after the 429 came back (each call takes 0.1 s)
    assert provider.calls[1] - provider.calls[0] == pytest.approx(0.1 + 1.5)


async def test_retry_after_from_the_header_when_the_error_has_none(fake: FakeTime) -> None:
    limited = RateLimited("429", provider="serpapi", http_status=429)

    def with_header(exc: BaseException) -> Classification:
        return BOOK.classify(Failure.of("serpapi", exc, headers={"Retry-After": "2"}))

    outcome = await retry_call(
        Provider(fake, [limited, "results"]),
        classify=with_header,
        deadline=fake.now + 3,
        clock=fake.clock,
        sleep=fake.sleep,
        rng=Floor(),
    )
    assert outcome.ok
    assert fake.sleeps == [2.0]


async def test_a_retry_after_over_the_cap_is_not_waited_for(fake: FakeTime) -> None:
    limited = RateLimited("429", provider="serpapi", http_status=429, retry_after_s=3600)
    outcome = await retry_call(
        Provider(fake, [limited, "results"]),
        classify=by_default_rules,
        deadline=fake.now + 7200,
        clock=fake.clock,
        sleep=fake.sleep,
        settings=RetrySettings(retry_after_cap_s=5),
    )
    assert (outcome.ok, outcome.attempts, outcome.stop_reason) == (
        False,
        1,
        "retry_after_too_long",
    )
    assert fake.sleeps == []


async def test_the_deadline_stops_retries_at_once(fake: FakeTime) -> None:
    started = fake.now
    deadline = started + 1.0
    provider = Provider(fake, [gateway_timeout()], latency=0.6)
    outcome = await retry_call(
        provider,
        classify=by_default_rules,
        deadline=deadline,
        clock=fake.clock,
        sleep=fake.sleep,
        rng=Ceiling(),  # 0.6 + 0.2 wait + 0.6 > 1.0: a second attempt cannot finish
        settings=RetrySettings(min_attempt_s=0.6),
    )
    assert (outcome.attempts, outcome.stop_reason, fake.sleeps) == (1, "deadline", [])
    assert fake.now == pytest.approx(started + 0.6)  # returned when the error came back


async def test_a_retry_after_past_the_deadline_is_not_waited_for(fake: FakeTime) -> None:
    limited = RateLimited("429", provider="brave", http_status=429, retry_after_s=2)
    outcome = await retry_call(
        Provider(fake, [limited, "results"]),
        classify=by_default_rules,
        deadline=fake.now + 1.5,
        clock=fake.clock,
        sleep=fake.sleep,
    )
    assert (outcome.ok, outcome.attempts, outcome.stop_reason) == (False, 1, "deadline")
    assert fake.sleeps == []


async def test_no_wait_ever_ends_past_the_deadline(fake: FakeTime) -> None:
    for seed in range(50):
        fake.sleeps.clear()
        deadline = fake.now + 0.9
        provider = Provider(fake, [gateway_timeout()], latency=0.15)
        outcome = await retry_call(
            provider,
            classify=by_default_rules,
            deadline=deadline,
            clock=fake.clock,
            sleep=fake.sleep,
            settings=RetrySettings(base_delay_s=0.3),
            rng=random.Random(seed),  # noqa: S311 - jitter, not secrets
        )
        # every attempt started with at least min_attempt_s (0.05 s) of the deadline left
        assert all(deadline - start >= 0.05 for start in provider.calls)
        assert fake.now <= deadline + 0.15  # past it by at most the last attempt's own time
        assert outcome.waited_s == pytest.approx(sum(fake.sleeps))
        assert outcome.attempts == len(provider.calls)


@pytest.mark.parametrize(
    ("error", "action"),
    [
        (AuthFailed("brave answered HTTP 401", provider="brave", http_status=401), "fallback"),
        (from_status("brave", 451, "geoblocked"), "fallback"),
        (KeyError("web"), "open_breaker"),
    ],
    ids=["bad_key", "geoblocked", "unforeseen"],
)
async def test_errors_not_classified_retry_are_returned_at_once(
    fake: FakeTime, error: Exception, action: str
) -> None:
    provider = Provider(fake, [error, "results"])

    def classify(exc: BaseException) -> Classification:
        return BOOK.classify(Failure.of("brave", exc, body="geoblocked"))

    outcome = await retry_call(
        provider, classify=classify, deadline=fake.now + 60, clock=fake.clock, sleep=fake.sleep
    )
    assert outcome.error is error
    assert (outcome.attempts, outcome.stop_reason, fake.sleeps) == (1, "not_retryable", [])
    assert outcome.classification is not None
    assert outcome.classification.action == action


async def test_an_unclassified_error_is_not_retried(fake: FakeTime) -> None:
    outcome = await retry_call(
        Provider(fake, [ProviderTimeout("slow"), "results"]),
        classify=lambda exc: None,
        deadline=fake.now + 60,
        clock=fake.clock,
        sleep=fake.sleep,
    )
    assert (outcome.attempts, outcome.classification, outcome.stop_reason) == (
        1,
        None,
        "not_retryable",
    )


async def test_success_after_retries_reports_attempts_and_time_waited(fake: FakeTime) -> None:
    timeout = ProviderTimeout("brave did not answer within 2.0s", provider="brave")
    outcome = await retry_call(
        Provider(fake, [timeout, gateway_timeout(), "results"]),
        classify=by_default_rules,
        deadline=fake.now + 10,
        clock=fake.clock,
        sleep=fake.sleep,
        rng=Ceiling(),
    )
    assert (outcome.ok, outcome.value, outcome.error, outcome.classification) == (
        True,
        "results",
        None,
        None,
    )
    assert (outcome.attempts, outcome.retries, outcome.stop_reason) == (3, 2, "ok")
    assert outcome.waited_s == pytest.approx(0.2 + 0.4) == pytest.approx(sum(fake.sleeps))


async def test_first_answer_needs_no_retry(fake: FakeTime) -> None:
    outcome = await retry_call(
        Provider(fake, ["results"]),
        classify=by_default_rules,
        deadline=fake.now + 1,
        clock=fake.clock,
        sleep=fake.sleep,
    )
    assert (outcome.value, outcome.attempts, outcome.waited_s, fake.sleeps) == (
        "results",
        1,
        0.0,
        [],
    )


async def test_cancellation_propagates_and_is_never_classified(fake: FakeTime) -> None:
    seen: list[BaseException] = []

    def classify(exc: BaseException) -> Classification:
        seen.append(exc)
        return Classification("recoverable", "x", "retry")

    with pytest.raises(asyncio.CancelledError):
        await retry_call(
            Provider(fake, [asyncio.CancelledError()]),
            classify=classify,
            deadline=fake.now + 60,
            clock=fake.clock,
            sleep=fake.sleep,
        )
    assert seen == []


def test_settings_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="max_attempts"):
        RetrySettings(max_attempts=0)
    with pytest.raises(ValueError, match="jitter"):
        RetrySettings(jitter="half")
