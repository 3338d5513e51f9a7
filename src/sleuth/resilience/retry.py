"""Retry: call again after recoverable failures, with backoff, within the deadline.

Owns one policy: `retry_call` runs an attempt, asks the injected `classify` what a
failure is, and tries again only when the verdict's action is `retry`; at most
`max_attempts` attempts, waiting between them with exponential backoff and full
jitter (a uniform draw between 0 and `base * 2**(n-1)`, capped), never less than
the back end's Retry-After, and never past the request's deadline: when the next
wait (plus `min_attempt_s` for the attempt itself) would end after the deadline, it
stops and returns the error at once. It reads time only through the injected
`clock` and waits only through the injected `sleep`, so tests never sleep.

After a first failure, the loop is tenacity's `AsyncRetrying` with sleuth's own
parts: a `retry` predicate from the classification, a `wait` drawn from the injected
random generator (tenacity's jittered waits use the global one), and a `stop` that
measures the upcoming sleep against the deadline on the injected clock, as
tenacity's `stop_before_delay` does against its own clock. It does not bound how long
one attempt runs: the attempt itself is given its timeout (the gateway derives it
from the same deadline).

>>> import asyncio
>>> from sleuth.errors import ProviderTimeout
>>> calls = []
>>> async def search() -> str:
...     calls.append(1)
...     if len(calls) == 1:
...         raise ProviderTimeout("no answer within 2.0s")
...     return "answer"
>>> async def no_sleep(seconds: float) -> None: ...
>>> timeout = Classification("recoverable", "provider_timeout", "retry")
>>> outcome = asyncio.run(
...     retry_call(search, classify=lambda exc: timeout, deadline=1e9, sleep=no_sleep)
... )
>>> (outcome.value, outcome.attempts, outcome.stop_reason)
('answer', 2, 'ok')
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception

from sleuth.resilience.rules import Classification

T = TypeVar("T")

StopReason = Literal["ok", "not_retryable", "attempts", "deadline", "retry_after_too_long"]


class RetrySettings(BaseModel):
    """The `retry:` section of sleuth.yaml.

    >>> RetrySettings().max_attempts
    3
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_attempts: int = Field(
        default=3, ge=1, le=10, description="Attempts in all, the first one included."
    )
    base_delay_s: float = Field(
        default=0.2, ge=0, description="Backoff ceiling before the first retry; doubles each time."
    )
    max_delay_s: float = Field(default=2.0, ge=0, description="Largest backoff ceiling.")
    jitter: Literal["full", "none"] = Field(
        default="full",
        description=(
            "full: wait a uniform draw between 0 and the ceiling, so callers that failed "
            "together do not retry together; none: wait the ceiling."
        ),
    )
    retry_after_cap_s: float = Field(
        default=5.0,
        ge=0,
        description=(
            "Longest Retry-After honoured; a back end asking for more is not retried "
            "(the search moves on rather than wait)."
        ),
    )
    min_attempt_s: float = Field(
        default=0.05,
        ge=0,
        description=(
            "A retry starts only if at least this much of the deadline is left after the wait."
        ),
    )


class Rng(Protocol):
    """The part of `random.Random` the backoff uses."""

    def uniform(self, a: float, b: float) -> float: ...


@dataclass(frozen=True)
class RetryOutcome(Generic[T]):
    """How a retried call ended: its value or its last error, and what it cost.

    `classification` is the verdict on `error` (None on success or when `classify`
    had none); `waited_s` sums the backoff sleeps, not the attempts' own time.
    """

    value: T | None
    error: Exception | None
    classification: Classification | None
    attempts: int
    waited_s: float
    stop_reason: StopReason

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def retries(self) -> int:
        return self.attempts - 1


def backoff_ceiling(retry_number: int, settings: RetrySettings) -> float:
    """The most the `retry_number`-th retry (1, 2, ...) waits before jitter.

    >>> [backoff_ceiling(n, RetrySettings(base_delay_s=0.5, max_delay_s=1.5)) for n in (1, 2, 3)]
    [0.5, 1.0, 1.5]
    """
    return min(settings.max_delay_s, settings.base_delay_s * 2.0 ** (retry_number - 1))


class _Policy:
    """The retry, wait and stop parts for one call, sharing the last verdict."""

    def __init__(
        self,
        classify: Callable[[BaseException], Classification | None],
        deadline: float,
        clock: Callable[[], float],
        settings: RetrySettings,
        rng: Rng,
    ) -> None:
        self._classify = classify
        self._deadline = deadline
        self._clock = clock
        self._settings = settings
        self._rng = rng
        self.verdict: Classification | None = None
        self.retry_after_s: float | None = None
        self.stop_reason: StopReason = "not_retryable"

    def should_retry(self, exc: BaseException) -> bool:
        if not isinstance(exc, Exception):  # cancellation and exits are never retried
            self.verdict = None
            return False
        self.verdict = self._classify(exc)
        self.retry_after_s = None
        if self.verdict is not None:
            own = getattr(exc, "retry_after_s", None)
            self.retry_after_s = own if isinstance(own, int | float) else self.verdict.retry_after_s
        return self.verdict is not None and self.verdict.retryable

    def wait(self, state: RetryCallState) -> float:
        ceiling = backoff_ceiling(state.attempt_number, self._settings)
        delay = self._rng.uniform(0.0, ceiling) if self._settings.jitter == "full" else ceiling
        if self.retry_after_s is not None:
            delay = max(delay, float(self.retry_after_s))
        return delay

    def stop(self, state: RetryCallState) -> bool:
        settings = self._settings
        if state.attempt_number >= settings.max_attempts:
            self.stop_reason = "attempts"
        elif self.retry_after_s is not None and self.retry_after_s > settings.retry_after_cap_s:
            self.stop_reason = "retry_after_too_long"
        elif self._clock() + state.upcoming_sleep + settings.min_attempt_s > self._deadline:
            self.stop_reason = "deadline"
        else:
            return False
        return True


async def retry_call(
    fn: Callable[[], Awaitable[T]],
    *,
    classify: Callable[[BaseException], Classification | None],
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    settings: RetrySettings | None = None,
    rng: Rng | None = None,
    failed: Exception | None = None,
) -> RetryOutcome[T]:
    """Call `fn` until it succeeds, a failure is not classified `retry`, the attempts
    run out, or the next wait would end past `deadline` (a `clock()` reading).

    Never raises what `fn` raised (unless it is not an `Exception`, like a
    cancellation): the last error comes back in the outcome with its verdict.
    `failed`: the caller made the first attempt itself and it raised this; the
    policy takes it as the first attempt's failure.
    """
    # The first attempt is called directly (or was, by the caller): most calls
    # succeed, and tenacity's machinery costs more than the call's own parsing. A
    # failure is handed to tenacity as its first attempt, so the policy sees it
    # exactly as before.
    first: Exception | None = failed
    if first is None:
        try:
            value: T = await fn()
        except Exception as exc:  # noqa: BLE001 - retried or returned below
            first = exc
        else:
            return RetryOutcome(
                value=value,
                error=None,
                classification=None,
                attempts=1,
                waited_s=0.0,
                stop_reason="ok",
            )

    async def attempt() -> T:
        nonlocal first
        if first is not None:
            failed, first = first, None
            raise failed
        return await fn()

    settings = settings or RetrySettings()
    policy = _Policy(classify, deadline, clock, settings, rng or random.Random())  # noqa: S311 - jitter, not secrets
    retrying = AsyncRetrying(
        retry=retry_if_exception(policy.should_retry),
        wait=policy.wait,
        stop=policy.stop,
        sleep=sleep,
        reraise=True,
    )
    try:
        value = await retrying(attempt)
    except Exception as exc:  # noqa: BLE001 - the outcome carries the error; nothing is lost
        return RetryOutcome(
            value=None,
            error=exc,
            classification=policy.verdict,
            attempts=retrying.statistics["attempt_number"],
            waited_s=float(retrying.statistics["idle_for"]),
            stop_reason=policy.stop_reason,
        )
    return RetryOutcome(
        value=value,
        error=None,
        classification=None,
        attempts=retrying.statistics["attempt_number"],
        waited_s=float(retrying.statistics["idle_for"]),
        stop_reason="ok",
    )
