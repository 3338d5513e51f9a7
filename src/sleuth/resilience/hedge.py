"""Deadline and hedging: when a provider is slow, ask the next one too; the first good answer wins.

What lives here, all pure (the clock and the sleep are injected, nothing reads the time):

- `HedgeSettings`, the `hedge:` section of sleuth.yaml;
- `LatencyTracker`, each provider's last N latencies and their p95, in memory;
- `hedge_delay()`, how long a provider gets before the next one in the chain is asked
  too: fixed per provider, else learned from its recent p95 (between a floor and a cap),
  else a default until enough latencies are known;
- `hedged()`, the race itself.

The race, with delays d0, d1 and the search's deadline D:

    t = 0          attempt 0 (the primary) starts
    t = d0         the primary has not answered: attempt 1 (backup) starts too
    t = d0 + d1    neither has answered: attempt 2 starts too
    ...            the first GOOD answer wins and every other attempt is cancelled
    t = D          nobody answered well: all are cancelled, `deadline_hit`

A stable answer within the deadline beats a fast but flaky one: a bad answer (an
exception, or a value `is_good` rejects, such as an empty list) never wins and never
ends the race. It is recorded, the next backup starts at once instead of after the
hedge delay, and the race goes on until a good answer, the deadline, or every attempt
has failed. A provider that answers quickly with an error or nothing only makes the
race move on sooner; it cannot take the place of a slower good answer.

What must not live here: I/O, provider knowledge, classification of errors (the rules
engine decides what is good; here it is only the caller's `is_good`).
"""

from __future__ import annotations

import asyncio
import bisect
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sleuth.resilience.alarm import Alarm

T = TypeVar("T")

AttemptOutcome = Literal["running", "good", "bad", "error", "cancelled"]


class HedgeSettings(BaseModel):
    """The `hedge:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(
        default=True,
        description="Off: each provider gets the whole deadline; the next starts only on failure.",
    )
    delay_s: dict[str, Annotated[float, Field(gt=0)]] = Field(
        default_factory=dict,
        description="Fixed hedge delay per provider, in seconds; such a provider is not learned.",
    )
    default_delay_s: float = Field(
        default=0.5,
        gt=0,
        description="Hedge delay of a provider with no fixed delay and too few latencies to learn.",
    )
    learn: bool = Field(
        default=True, description="Learn each provider's delay from its recent latencies."
    )
    quantile: float = Field(
        default=0.95,
        gt=0,
        le=1,
        description="Which latency quantile is learned: 0.95 hedges the slowest 5% of calls.",
    )
    window: int = Field(
        default=200, ge=1, description="How many of a provider's latest latencies are kept."
    )
    min_samples: int = Field(
        default=20,
        ge=1,
        description="Latencies needed before the learned delay replaces the default.",
    )
    floor_s: float = Field(
        default=0.1,
        ge=0,
        description="A learned delay is never shorter: a fast provider is not hedged at once.",
    )
    cap_s: float = Field(
        default=0.6,
        gt=0,
        description=(
            "A learned delay is never longer. A provider with a long tail has a p95 past the "
            "deadline; the cap leaves the backup (typically ~1.2 s) time to answer within it."
        ),
    )

    @model_validator(mode="after")
    def _floor_below_cap(self) -> Self:
        if self.floor_s > self.cap_s:
            raise ValueError(f"hedge.floor_s ({self.floor_s}) is above hedge.cap_s ({self.cap_s})")
        return self


class LatencyTracker:
    """Each provider's last `window` latencies in seconds, and their quantiles.

    In memory and per process: a restart relearns within `min_samples` searches.
    Record every call that answered (well or badly) with its latency, and a call that
    was cancelled or cut by the deadline with the time it had run, a lower bound that
    keeps a slow provider from looking faster than it is.

    >>> tracker = LatencyTracker(window=100)
    >>> for ms in range(1, 201):
    ...     tracker.record("brave", ms / 1000)
    >>> tracker.count("brave"), tracker.p95("brave")   # only the last 100 (101..200 ms) count
    (100, 0.195)
    >>> tracker.p95("exa") is None
    True
    """

    def __init__(self, window: int = 200) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, not {window}")
        self.window = window
        self._latencies: dict[str, deque[float]] = {}
        #: The same window kept sorted: every call reads a quantile or two, and
        #: sorting the window each time cost more than the rest of the call's policy.
        self._sorted: dict[str, list[float]] = {}

    def record(self, provider: str, latency_s: float) -> None:
        if not latency_s >= 0:  # also refuses NaN
            raise ValueError(f"a latency is a duration >= 0, not {latency_s!r}")
        window = self._latencies.get(provider)
        if window is None:
            window = self._latencies[provider] = deque()
            self._sorted[provider] = []
        ordered = self._sorted[provider]
        if len(window) == self.window:
            del ordered[bisect.bisect_left(ordered, window.popleft())]
        window.append(latency_s)
        bisect.insort(ordered, latency_s)

    def count(self, provider: str) -> int:
        return len(self._latencies.get(provider, ()))

    def quantile(self, provider: str, q: float) -> float | None:
        """The nearest-rank `q` quantile of the provider's window; None with no latencies."""
        if not 0 < q <= 1:
            raise ValueError(f"a quantile is in (0, 1], not {q}")
        latencies = self._sorted.get(provider)
        if not latencies:
            return None
        return latencies[math.ceil(q * len(latencies)) - 1]

    def p95(self, provider: str) -> float | None:
        return self.quantile(provider, 0.95)

    def learned(self, provider: str, q: float, min_samples: int) -> float | None:
        """The `q` quantile once at least `min_samples` latencies are known, else None."""
        if self.count(provider) < min_samples:
            return None
        return self.quantile(provider, q)


def hedge_delay(provider: str, tracker: LatencyTracker, settings: HedgeSettings) -> float | None:
    """How long `provider` gets before the next provider is asked too; None when hedging is off.

    >>> settings = HedgeSettings(delay_s={"wikipedia": 0.8}, min_samples=3)
    >>> tracker = LatencyTracker()
    >>> hedge_delay("wikipedia", tracker, settings)   # fixed
    0.8
    >>> hedge_delay("brave", tracker, settings)       # nothing learned yet: the default
    0.5
    >>> for latency in (0.2, 0.3, 0.4):
    ...     tracker.record("brave", latency)
    >>> hedge_delay("brave", tracker, settings)       # its p95
    0.4
    >>> tracker.record("brave", 12.0)
    >>> hedge_delay("brave", tracker, settings)       # a long tail is capped
    0.6
    """
    if not settings.enabled:
        return None
    if provider in settings.delay_s:
        return settings.delay_s[provider]
    learned = tracker.learned(provider, settings.quantile, settings.min_samples)
    if settings.learn and learned is not None:
        return min(settings.cap_s, max(settings.floor_s, learned))
    return settings.default_delay_s


def hedge_delays(
    chain: Sequence[str], tracker: LatencyTracker, settings: HedgeSettings
) -> list[float]:
    """The `delays` argument of `hedged()` for a chain of providers: each one's hedge
    delay but the last's, `math.inf` (start the next only on a bad answer) when off.

    >>> hedge_delays(["searxng", "brave", "exa"], LatencyTracker(), HedgeSettings())
    [0.5, 0.5]
    >>> hedge_delays(["searxng", "brave"], LatencyTracker(), HedgeSettings(enabled=False))
    [inf]
    """
    delays = []
    for provider in chain[:-1]:
        delay = hedge_delay(provider, tracker, settings)
        delays.append(math.inf if delay is None else delay)
    return delays


@dataclass
class Attempt(Generic[T]):
    """One call of the race. Times are seconds since the race began, on its clock."""

    index: int  # 0 is the primary, 1.. the backups in order
    started_s: float
    ended_s: float | None = None
    outcome: AttemptOutcome = "running"
    value: T | None = None  # what it answered, good or bad
    error: BaseException | None = None  # what it raised


@dataclass(frozen=True)
class HedgeResult(Generic[T]):
    """How the race ended: the winning value, if any, and what every attempt did."""

    value: T | None
    winner: int | None  # index of the attempt whose answer won; None: no good answer
    attempts: tuple[Attempt[T], ...]
    deadline_hit: bool  # the deadline ended the race
    elapsed_s: float
    stopped: bool = False  # the caller's `stop` ended the race (it had enough elsewhere)

    @property
    def ok(self) -> bool:
        return self.winner is not None

    @property
    def hedged(self) -> bool:
        """Whether any backup was started."""
        return len(self.attempts) > 1


async def hedged(
    primary: Callable[[], Awaitable[T]],
    backups: Sequence[Callable[[], Awaitable[T]]],
    delays: Sequence[float],
    is_good: Callable[[T], bool],
    deadline: float,
    clock: Callable[[], float] = time.monotonic,
    stop: asyncio.Future[None] | None = None,
) -> HedgeResult[T]:
    """Race `primary` and, one by one, `backups`; the first answer `is_good` accepts wins.

    `delays[i]` is how long attempt `i` (0 = primary) runs alone before attempt `i + 1`
    starts too (`math.inf`: only when it answers badly). `deadline` is an absolute time
    on `clock`. Losers and anything still running at the deadline are cancelled, and
    awaited, before this returns, so the calls must honour cancellation. An exception
    from a call is a bad answer (in its `Attempt.error`); one from `is_good` is a bug
    and propagates. Resolving `stop` ends the race like the deadline would (`stopped`).

    Timers are the event loop's own (`asyncio.wait`'s timeout), not tasks: a race
    whose primary answers at once costs one task, and a race without backups none
    (the primary runs in the caller's task).
    """
    if len(delays) != len(backups):
        raise ValueError(f"{len(backups)} backups need {len(backups)} delays, not {len(delays)}")
    if any(not delay >= 0 for delay in delays):
        raise ValueError(f"hedge delays are durations >= 0, not {list(delays)}")
    if not backups:
        return await _alone(primary, is_good, deadline, clock, stop)
    calls = [primary, *backups]
    started = clock()
    attempts: list[Attempt[T]] = []
    running: dict[asyncio.Future[Any], Attempt[T]] = {}
    next_start = math.inf  # when the next backup starts if nothing good has come by then

    def start_next() -> None:
        nonlocal next_start
        index = len(attempts)
        attempt: Attempt[T] = Attempt(index=index, started_s=clock() - started)
        attempts.append(attempt)
        running[asyncio.ensure_future(_call(calls[index]))] = attempt
        next_start = clock() + delays[index] if index < len(delays) else math.inf

    winner: Attempt[T] | None = None
    deadline_hit = stopped = False
    try:
        while winner is None:
            now = clock()
            if now >= deadline:
                deadline_hit = True
                break
            if stop is not None and stop.done():
                stopped = True
                break
            more = len(attempts) < len(calls)
            if more and (now >= next_start or not running):
                start_next()
                continue
            if not running:
                break  # every attempt answered badly
            waiting = [*running, *([stop] if stop is not None else [])]
            wake = min(deadline, next_start if more else math.inf)
            done, _ = await asyncio.wait(
                waiting, timeout=wake - now, return_when=asyncio.FIRST_COMPLETED
            )
            for future in sorted((f for f in done if f in running), key=lambda f: running[f].index):
                attempt = running.pop(future)
                _settle(attempt, future, is_good, clock() - started)
                if attempt.outcome == "good":
                    if winner is None:
                        winner = attempt  # same instant: the earlier attempt wins
                elif winner is None and len(attempts) < len(calls):
                    start_next()  # a bad answer: the next one starts now, not after a delay
    finally:
        for future, attempt in running.items():
            if future.done():
                _settle(attempt, future, is_good, clock() - started)
            else:
                future.cancel()
                attempt.outcome, attempt.ended_s = "cancelled", clock() - started
        await asyncio.gather(*running, return_exceptions=True)
    return HedgeResult(
        value=winner.value if winner else None,
        winner=winner.index if winner else None,
        attempts=tuple(attempts),
        deadline_hit=deadline_hit,
        elapsed_s=clock() - started,
        stopped=stopped,
    )


async def _alone(
    call: Callable[[], Awaitable[T]],
    is_good: Callable[[T], bool],
    deadline: float,
    clock: Callable[[], float],
    stop: asyncio.Future[None] | None,
) -> HedgeResult[T]:
    """A race of one, run in the caller's task: the deadline and `stop` cancel the
    call through an alarm (which `stop` brings forward to now), as they would cancel
    a racer's task, and the result says the same as the race would."""
    started = clock()
    if started >= deadline:
        return HedgeResult(None, None, (), deadline_hit=True, elapsed_s=0.0)
    if stop is not None and stop.done():
        return HedgeResult(None, None, (), deadline_hit=False, elapsed_s=0.0, stopped=True)
    attempt: Attempt[T] = Attempt(index=0, started_s=clock() - started)
    loop = asyncio.get_running_loop()
    cut = Alarm(loop, loop.time() + (deadline - started))
    inside = True

    def stopped(_: asyncio.Future[None]) -> None:
        if inside:  # a callback that runs after the call ended has nothing to stop
            cut.ring_soon()

    if stop is not None:
        stop.add_done_callback(stopped)
    try:
        try:
            value = await call()
        except Exception as exc:  # noqa: BLE001 - a bad answer, as a racer's would be
            attempt.outcome, attempt.error = "error", exc
        else:
            attempt.value = value
            attempt.outcome = "good" if is_good(value) else "bad"
        finally:
            inside = False
    except asyncio.CancelledError:
        if not cut.expired():
            raise
        attempt.outcome = "cancelled"
    finally:
        cut.clear()
        if stop is not None:
            stop.remove_done_callback(stopped)
    ended = clock()
    attempt.ended_s = ended - started
    cancelled = attempt.outcome == "cancelled"
    by_stop = cancelled and stop is not None and stop.done() and ended < deadline
    return HedgeResult(
        value=attempt.value if attempt.outcome == "good" else None,
        winner=0 if attempt.outcome == "good" else None,
        attempts=(attempt,),
        deadline_hit=cancelled and not by_stop,
        elapsed_s=ended - started,
        stopped=by_stop,
    )


async def _call(call: Callable[[], Awaitable[T]]) -> T:
    """`call()` inside the task, so that even a synchronous raise is the attempt's error."""
    return await call()


def _settle(
    attempt: Attempt[T], future: asyncio.Future[Any], is_good: Callable[[T], bool], at: float
) -> None:
    """Record how a finished call ended."""
    attempt.ended_s = at
    if future.cancelled():
        attempt.outcome = "cancelled"
        return
    error = future.exception()
    if error is not None:
        attempt.outcome, attempt.error = "error", error
        return
    value: T = future.result()
    attempt.value = value
    attempt.outcome = "good" if is_good(value) else "bad"
