"""Circuit breaker per provider: rest a back end that keeps failing, try it again
after a while with one probe, and rest it longer each time the probe fails.

Every state rule is in `TRANSITIONS` (as h11 keeps its in `_state.py`):

    state \\ event  success failure unexpected exhausted tripped cooled_down probe_sent
    closed          closed  closed  closed     open      open    -           -
    open            open    open    open       open      -       half_open   -
    half_open       closed  open    open       open      -       -           half_open

- closed: calls go through; each outcome enters a sliding window (at most
  `window_size` calls, none older than `window_s`). One bad answer never opens the
  breaker: a random fault now and then must not rest a provider that mostly works.
  The breaker is `tripped` open on evidence, by any of three rules over the window:
  the last `consecutive_to_open` calls all failed (a provider that is down); the last
  `unexpected_to_open` calls were all unexpected with the same code (a CAPTCHA wall,
  a changed format: an unexpected answer weighs more than a failure); or the share
  of failed calls reached `failure_rate` with at least `min_calls` in the window.
  `exhausted` (the provider said its plan's quota is used up) opens it at once.
- open: calls are refused (`Decision.allowed` false, with the reason and when the
  breaker lets a probe through) until `open_until`; then the next `allow` is
  `cooled_down` into half_open. The first opening lasts `first_open_s`; each failed
  probe multiplies that by `open_growth`, up to `max_open_s`, or up to `open_for_s`
  when the code is one of `long_rest_codes` (a CAPTCHA that keeps coming). An
  exhausted quota rests the provider until the reset it named (at most
  `rest_max_s`), else for `open_for_s`. Outcomes arriving while open are late
  answers of calls let through before it opened; they change nothing.
- half_open: the first `allow` sends exactly one probe (`probe_sent`); every other
  caller is refused while it is out. Any outcome recorded in half_open is taken as
  the probe's: success closes (with an empty window and the opening count reset),
  anything else opens again, for longer. A probe that never reports (its search was
  cancelled) is given up after `probe_timeout_s`; one whose call ended without a
  verdict on the provider (cut by the search's own deadline) is `release`d, so the
  next `allow` sends another at once.

The record lives in a `BreakerStore`, changed only through the store's atomic
`update_breaker`, so every process and replica sharing the store sees one breaker
and lets one probe through. The clock is injected (wall-clock `time.time` by
default, because the record is shared between processes and hosts), and so is the
sleep that times the batches below.

Two savings on the store's round trips, neither of which delays an opening here:

- Reads: a closed record this process read or wrote less than `read_cache_s` ago
  lets a call through without reading again; once it is half that old (`_RENEW_AT`),
  the call that finds it so renews it in the background (writing the successes
  waiting, else reading), so that a busy provider's calls never wait for the store.
  An open or half-open record, or an older one, is read as before, and this
  process's own writes refresh what it knows, so only an opening by another process
  or replica is seen late: within `read_cache_s`.
- Writes: in the closed state a success only joins the window, so successes wait
  in memory, per provider, and are written together (`observe` takes several calls
  at once, in the order they came): ahead of the next failure, after at most
  `flush_s`, when `flush_max_calls` wait, and on `aclose`. Failures, and every
  outcome outside the closed state (a probe's), are written at once. The window
  sees the same calls in the same order, only later; a success that waited is
  `deferred`: it joins only the closed window it was made in (one opened since has
  forgotten that window) and never counts as a half-open probe's outcome.

>>> import asyncio
>>> from sleuth.store import MemoryStore
>>> breaker = Breaker(MemoryStore(), BreakerSettings(), clock=lambda: 1000.0)
>>> async def demo() -> tuple[bool, bool, bool]:
...     await breaker.record("brave", "unexpected", detail="captcha")
...     once = (await breaker.allow("brave")).allowed        # one CAPTCHA: still closed
...     for _ in range(3):
...         await breaker.record("brave", "unexpected", detail="captcha")
...     decision = await breaker.allow("brave")               # four in a row: rested
...     return once, decision.allowed, decision.retry_at == 1015.0
>>> asyncio.run(demo())
(True, False, True)
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ErrorAction, ErrorCategory
from sleuth.store.base import BreakerRecord, BreakerState, BreakerStore, WindowCall

#: A closed record this share of `read_cache_s` old is renewed in the background.
_RENEW_AT = 0.5

__all__ = [
    "TRANSITIONS",
    "Breaker",
    "BreakerSettings",
    "Call",
    "Decision",
    "Event",
    "Outcome",
    "admit",
    "observe",
    "release",
]

log = logging.getLogger(__name__)

Outcome = Literal["success", "failure", "unexpected", "exhausted"]
Event = Literal[
    "success", "failure", "unexpected", "exhausted", "tripped", "cooled_down", "probe_sent"
]

TRANSITIONS: Mapping[BreakerState, Mapping[Event, BreakerState]] = {
    "closed": {
        "success": "closed",
        "failure": "closed",
        "unexpected": "closed",
        "exhausted": "open",
        "tripped": "open",
    },
    "open": {
        "success": "open",
        "failure": "open",
        "unexpected": "open",
        "exhausted": "open",
        "cooled_down": "half_open",
    },
    "half_open": {
        "success": "closed",
        "failure": "open",
        "unexpected": "open",
        "exhausted": "open",
        "probe_sent": "half_open",
    },
}


class BreakerSettings(BaseModel):
    """The `breaker:` section of sleuth.yaml (one breaker per provider, these settings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Skip providers whose breaker is open.")
    first_open_s: float = Field(
        15.0, gt=0, description="How long the first opening refuses calls before a probe."
    )
    open_growth: float = Field(
        2.0, ge=1, description="Each failed probe makes the next opening this many times longer..."
    )
    max_open_s: float = Field(
        30.0,
        gt=0,
        description="...up to this long, so a provider back from an outage serves again "
        "within this time...",
    )
    open_for_s: float = Field(
        300.0,
        gt=0,
        description="...or up to this long for the codes of long_rest_codes; also how long "
        "an exhausted quota rests a provider that named no reset.",
    )
    long_rest_codes: list[str] = Field(
        default_factory=lambda: ["captcha"],
        description="Error codes that mean the provider is blocking sleuth: while they keep "
        "coming, openings grow up to open_for_s instead of max_open_s.",
    )
    exhausted_codes: list[str] = Field(
        default_factory=lambda: ["quota_exceeded"],
        description="Error codes that mean the plan's quota is used up: they open the "
        "breaker at once, until the reset the provider named.",
    )
    rest_max_s: float = Field(
        3600.0,
        gt=0,
        description="An exhausted quota rests the provider until its reset, at most this "
        "long (a plan raised meanwhile is tried again within this time).",
    )
    consecutive_to_open: int = Field(
        5, ge=1, description="This many failed calls in a row open the breaker."
    )
    unexpected_to_open: int = Field(
        4,
        ge=1,
        description="This many unexpected answers in a row with the same code open it.",
    )
    failure_rate: float = Field(
        0.5, gt=0, le=1, description="Failure share of the window at which the breaker opens."
    )
    window_size: int = Field(20, ge=1, description="The window holds at most this many calls...")
    window_s: float = Field(60.0, gt=0, description="...none older than this many seconds.")
    min_calls: int = Field(
        10, ge=1, description="No rate-based opening until the window holds this many calls."
    )
    probe_timeout_s: float = Field(
        30.0, gt=0, description="A probe that has not reported by then is lost; send another."
    )
    failure_codes: list[str] = Field(
        default_factory=lambda: ["auth_failed"],
        description="Non-recoverable error codes that still count as a provider failure "
        "(others, like no_results, mean the provider answered).",
    )
    read_cache_s: float = Field(
        0.25,
        ge=0,
        description="A closed record read or written this recently lets calls through "
        "without reading the store again; an opening by another replica is seen within "
        "this time. 0: read on every call.",
    )
    flush_s: float = Field(
        0.25,
        ge=0,
        description="Successes in the closed state wait in memory and are written "
        "together, with the next failure or after at most this long; a hard kill "
        "loses at most this much of them. 0: write each at once.",
    )
    flush_max_calls: int = Field(
        100, ge=1, description="...or as soon as this many successes of one provider wait."
    )


@dataclass(frozen=True)
class Decision:
    """Whether a call may go to the provider now."""

    allowed: bool
    state: BreakerState
    #: True for the one call let through in half_open: its outcome decides.
    probe: bool = False
    #: Why the call is refused (for the response's degradations).
    reason: str | None = None
    #: Clock time at which the breaker will next let a call through.
    retry_at: float | None = None


#: What `allow` answers while the breaker is closed (a Decision is frozen: one will do).
_CLOSED = Decision(allowed=True, state="closed")


@dataclass(frozen=True)
class Call:
    """One call's outcome, as the breaker records it."""

    at: float
    outcome: Outcome
    #: The error code, for the reason an opening gives.
    detail: str = ""
    #: An exhausted quota: seconds until the reset the provider named, if it did.
    rest_s: float | None = None
    #: A success that waited in memory while the breaker was closed: it joins only
    #: the closed window it was made in (not one a probe closed after it), and is
    #: never taken for a half-open probe's outcome.
    deferred: bool = False

    def __post_init__(self) -> None:
        if self.deferred and self.outcome != "success":
            raise ValueError("only a success can wait to be written")


def _move(state: BreakerState, event: Event) -> BreakerState:
    try:
        return TRANSITIONS[state][event]
    except KeyError:
        raise ValueError(f"breaker in state {state!r} cannot take event {event!r}") from None


def _window(
    calls: tuple[WindowCall, ...], now: float, settings: BreakerSettings
) -> tuple[WindowCall, ...]:
    return tuple(call for call in calls if now - call.at < settings.window_s)[
        -settings.window_size :
    ]


def open_for(
    openings: int, code: str, settings: BreakerSettings, rest_s: float | None = None
) -> float:
    """How long an opening rests the provider, given the openings since it last
    closed and the code of the call that opened it.

    >>> settings = BreakerSettings()
    >>> [open_for(n, "provider_unavailable", settings) for n in range(4)]
    [15.0, 30.0, 30.0, 30.0]
    >>> [open_for(n, "captcha", settings) for n in range(6)]
    [15.0, 30.0, 60.0, 120.0, 240.0, 300.0]
    >>> open_for(0, "quota_exceeded", settings, rest_s=1800.0)
    1800.0
    """
    if code in settings.exhausted_codes:
        return settings.open_for_s if rest_s is None else min(rest_s, settings.rest_max_s)
    cap = settings.open_for_s if code in settings.long_rest_codes else settings.max_open_s
    return min(cap, settings.first_open_s * settings.open_growth**openings)


def _open(
    record: BreakerRecord,
    event: Event,
    now: float,
    reason: str,
    code: str,
    settings: BreakerSettings,
    rest_s: float | None = None,
) -> BreakerRecord:
    return BreakerRecord(
        state=_move(record.state, event),
        opened_at=now,
        open_until=now + open_for(record.openings, code, settings, rest_s),
        openings=record.openings + 1,
        reason=reason,
    )


def _enter(record: BreakerRecord, event: Event, now: float) -> BreakerRecord:
    """The record after an `event` that does not open it: the table gives the state,
    entering it its fields."""
    state = _move(record.state, event)
    if state == "half_open" and record.state == "open":
        return replace(record, state="half_open", probe_at=None)
    if state == "closed" and record.state == "half_open":
        return BreakerRecord(closed_at=now)
    return replace(record, state=state)


def _open_until(record: BreakerRecord, settings: BreakerSettings) -> float:
    if record.open_until is not None:
        return record.open_until
    return (record.opened_at or 0.0) + settings.first_open_s


def admit(
    record: BreakerRecord, now: float, settings: BreakerSettings
) -> tuple[BreakerRecord, Decision]:
    """Pure: whether a call may go now, and the record after deciding."""
    if record.state == "closed":
        return record, Decision(allowed=True, state="closed")
    if record.state == "open":
        reopen = _open_until(record, settings)
        if now < reopen:
            reason = f"circuit open ({record.reason}); next probe in {reopen - now:.0f}s"
            return record, Decision(False, "open", reason=reason, retry_at=reopen)
        record = _enter(record, "cooled_down", now)
    # half_open: one probe at a time
    if record.probe_at is not None and now - record.probe_at < settings.probe_timeout_s:
        retry_at = record.probe_at + settings.probe_timeout_s
        return record, Decision(
            False,
            "half_open",
            reason="circuit half-open: a probe is already out",
            retry_at=retry_at,
        )
    record = replace(_enter(record, "probe_sent", now), probe_at=now)
    return record, Decision(allowed=True, state="half_open", probe=True)


def release(record: BreakerRecord) -> BreakerRecord:
    """Pure: the record after the probe out ended with no verdict on the provider
    (the search's own deadline cut it): the next `allow` sends another probe."""
    if record.state == "half_open" and record.probe_at is not None:
        return replace(record, probe_at=None)
    return record


def observe(
    record: BreakerRecord, calls: Iterable[Call], settings: BreakerSettings
) -> BreakerRecord:
    """Pure: the record after the calls' outcomes, taken in order.

    >>> calls = [Call(1.0, "success", deferred=True), Call(2.0, "failure", "rate_limited")]
    >>> record = observe(BreakerRecord(), calls, BreakerSettings(min_calls=2))
    >>> record.state, record.reason
    ('open', '1 of the last 2 calls failed, last: rate_limited')
    """
    for call in calls:
        record = _observe_one(record, call, settings)
    return record


def _observe_one(record: BreakerRecord, call: Call, settings: BreakerSettings) -> BreakerRecord:
    now, outcome, detail = call.at, call.outcome, call.detail
    if call.deferred:
        forgotten = record.closed_at is not None and now < record.closed_at
        if record.state != "closed" or forgotten:
            return record
    if outcome == "exhausted":
        if record.state == "open":
            return record
        reason = f"quota used up: {detail or 'exhausted'}"
        return _open(record, "exhausted", now, reason, detail, settings, call.rest_s)
    if record.state == "open":
        return record  # a late answer of a call let through before the opening
    if record.state == "half_open":
        if outcome == "success":
            return _enter(record, "success", now)
        return _open(record, outcome, now, f"probe failed: {detail or outcome}", detail, settings)
    failed = outcome != "success"
    entry = WindowCall(now, failed, detail if failed else "", outcome == "unexpected")
    calls = _window((*record.calls, entry), now, settings)
    if entry.failed and (why := _evidence(calls, settings)):
        return _open(record, "tripped", now, why, detail, settings)
    return replace(record, calls=calls)


def _evidence(calls: tuple[WindowCall, ...], settings: BreakerSettings) -> str | None:
    """Why the window's calls, the last of them a failure, open the breaker, or None."""
    last = calls[-1]
    streak = 0
    for call in reversed(calls):
        if not call.failed:
            break
        streak += 1
    if streak >= settings.consecutive_to_open:
        return f"the last {streak} calls failed, last: {last.code or 'unknown'}"
    repeated = 0
    for call in reversed(calls):
        if not (call.unexpected and call.code == last.code):
            break
        repeated += 1
    if last.unexpected and repeated >= settings.unexpected_to_open:
        return f"{repeated} unexpected answers in a row: {last.code or 'unknown'}"
    failed = sum(1 for call in calls if call.failed)
    if len(calls) >= settings.min_calls and failed / len(calls) >= settings.failure_rate:
        return f"{failed} of the last {len(calls)} calls failed" + (
            f", last: {last.code}" if last.code else ""
        )
    return None


class _Classified(Protocol):
    @property
    def category(self) -> ErrorCategory: ...
    @property
    def action(self) -> ErrorAction: ...
    @property
    def code(self) -> str: ...


class Breaker:
    """The breakers of every provider, over a shared store.

    Call `allow(provider)` before a call and `record(provider, outcome)` after it;
    `aclose()` on a graceful stop writes the successes still waiting. Keep one per
    process (and event loop): what it knows and the successes it holds are its own.
    """

    def __init__(
        self,
        store: BreakerStore,
        settings: BreakerSettings,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._store = store
        self.settings = settings
        self._clock = clock
        self._sleep = sleep
        # The last record read or written per provider, with the clock time the read
        # or write was sent (so its age is never underestimated).
        self._known: dict[str, tuple[BreakerRecord, float]] = {}
        # Writes made per provider: a read that overlapped one may be older than what
        # the write returned, and must not replace it in `_known`.
        self._writes: defaultdict[str, int] = defaultdict(int)
        # The times of the successes waiting to be written, per provider, in the
        # order they came (a float each: a `Call` is made only to write them).
        self._waiting: dict[str, list[float]] = {}
        # Per provider, the task that writes them once `flush_s` has passed.
        self._timers: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # Per provider, the background read under way (`_refresh_soon`).
        self._refreshing: dict[str, asyncio.Task[None]] = {}

    @property
    def store(self) -> BreakerStore:
        return self._store

    def admits(self, provider: str) -> bool:
        """Whether a call may go to `provider` now on what this process knows, without
        the store: true when the breaker is off or its record is closed and fresh
        (then `allow` would say the same without awaiting anything). False means only
        "ask `allow`", which reads the store."""
        settings = self.settings
        if not settings.enabled:
            return True
        known = self._known.get(provider)
        if known is None or known[0].state != "closed":
            return False
        now = self._clock()
        age, fresh_for = now - known[1], settings.read_cache_s
        if not 0 <= age < fresh_for:
            return False
        if age >= fresh_for * _RENEW_AT:
            self._refresh_soon(provider, now)  # so that no later call waits for it
        return True

    async def allow(self, provider: str) -> Decision:
        """Whether to call `provider` now; refused calls say why and until when."""
        if self.admits(provider):
            return _CLOSED
        now = self._clock()
        record = await self._read(provider, now)
        unchanged, decision = admit(record, now, self.settings)
        if unchanged is record:
            return decision  # nothing to write: closed, or still open
        # A transition (open -> half_open, a probe going out): decide again inside
        # the store's atomic update, so that only one caller anywhere sends the probe.
        decided: list[Decision] = []

        def change(current: BreakerRecord) -> BreakerRecord:
            new, verdict = admit(current, now, self.settings)
            decided[:] = [verdict]
            return new

        await self._update(provider, change, now)
        return decided[-1]

    async def record(
        self, provider: str, outcome: Outcome, *, detail: str = "", rest_s: float | None = None
    ) -> None:
        """Enter a call's outcome; `detail` (the error code) goes into the reason and
        decides how long an opening lasts; `rest_s` is an exhausted quota's reset.

        A success while the breaker is closed (as this process last knew it) waits to
        be written with others; anything else is written at once, after them."""
        if not self.settings.enabled or (outcome == "success" and self.succeeded(provider)):
            return
        now = self._clock()
        known = self._known.get(provider)
        if outcome == "success" and self._batching(known):
            # The success that fills the batch: written at once, with those waiting.
            self._waiting.setdefault(provider, []).append(now)
            await self._write(provider, self._take(provider), now)
            return
        calls = [*self._take(provider), Call(now, outcome, detail, rest_s=rest_s)]
        await self._write(provider, calls, now)

    def succeeded(self, provider: str) -> bool:
        """Enter a success without awaiting, if it is one that waits in memory (the
        breaker closed as this process last knew it, and not the one that fills the
        batch): its time joins those waiting, to be written in the background. False
        means nothing was entered: `record` it."""
        settings = self.settings
        if not settings.enabled:
            return True
        if not self._batching(self._known.get(provider)):
            return False
        waiting = self._waiting.get(provider)
        if (0 if waiting is None else len(waiting)) + 1 >= settings.flush_max_calls:
            return False
        if waiting is None:
            waiting = self._waiting[provider] = []
        waiting.append(self._clock())
        self._flush_later(provider)
        return True

    def _batching(self, known: tuple[BreakerRecord, float] | None) -> bool:
        """Whether a success now waits to be written (closed, as last known here)."""
        return self.settings.flush_s > 0 and known is not None and known[0].state == "closed"

    def waiting(self, provider: str) -> list[Call]:
        """The successes of `provider` waiting to be written, as the calls they are."""
        return [Call(at, "success", deferred=True) for at in self._waiting.get(provider, ())]

    async def release(self, provider: str) -> None:
        """The probe this process sent ended with no verdict on the provider: let the
        next `allow` send another instead of waiting `probe_timeout_s`."""
        if self.settings.enabled:
            await self._update(provider, release, self._clock())

    async def aclose(self) -> None:
        """Write every success still waiting (a graceful stop loses none); a store
        that fails is logged, not raised."""
        for provider in list(self._waiting):
            await self._flush(provider)
        loop = asyncio.get_running_loop()
        under_way = [task for task in self._tasks if task.get_loop() is loop]
        if under_way:  # flushes a timer had started
            await asyncio.gather(*under_way, return_exceptions=True)

    # --- the store ----------------------------------------------------------------------

    async def _read(self, provider: str, now: float) -> BreakerRecord:
        writes = self._writes[provider]
        record = await self._store.get_breaker(provider)
        if self._writes[provider] == writes:
            self._known[provider] = (record, now)
        return record

    def _refresh_soon(self, provider: str, now: float) -> None:
        """Renew the record in the background (one renewal per provider at a time): a
        busy provider's closed record is then fresh again before it is too old to
        trust, and its calls never wait for the store. With successes waiting, writing
        them is the renewal (the store's update answers with the record)."""
        loop = asyncio.get_running_loop()
        under_way = self._refreshing.get(provider)
        if under_way is not None and not under_way.done() and under_way.get_loop() is loop:
            return
        task = loop.create_task(self._refresh(provider, now))
        self._refreshing[provider] = task
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _refresh(self, provider: str, now: float) -> None:
        try:
            if self._waiting.get(provider):
                await self._flush(provider)
            else:
                await self._read(provider, now)
        except Exception:  # the next call past read_cache_s reads it itself, and says so
            log.warning("breaker state of %s not refreshed", provider, exc_info=True)
        finally:
            if self._refreshing.get(provider) is asyncio.current_task():
                del self._refreshing[provider]

    async def _update(
        self, provider: str, change: Callable[[BreakerRecord], BreakerRecord], now: float
    ) -> None:
        record = await self._store.update_breaker(provider, change)
        self._writes[provider] += 1
        self._known[provider] = (record, now)

    async def _write(self, provider: str, calls: list[Call], now: float) -> None:
        settings = self.settings
        await self._update(provider, lambda current: observe(current, calls, settings), now)

    def _take(self, provider: str) -> list[Call]:
        """The successes waiting for `provider`, now this caller's to write.

        Of a run of successes in time order whose last `window_size` are less than
        `window_s` apart, only those last ones can stay in the window: they push
        every earlier call out (and whichever of them were made before a closing
        are the earliest, skipped either way), so only they are written; the record
        comes out the same, its update costs less. Other runs (a wall clock stepped
        back, a batch older than the window) are written whole."""
        timer = self._timers.pop(provider, None)
        # Not the timer that is flushing now, nor one of a loop that has finished.
        if (
            timer is not None
            and timer is not asyncio.current_task()
            and not timer.get_loop().is_closed()
        ):
            timer.cancel()
        times = self._waiting.pop(provider, None)
        if not times:
            return []
        keep = self.settings.window_size
        if (
            len(times) > keep
            and times[-1] - times[-keep] < self.settings.window_s
            and all(a <= b for a, b in itertools.pairwise(times))
        ):
            times = times[-keep:]
        return [Call(at, "success", deferred=True) for at in times]

    def _flush_later(self, provider: str) -> None:
        timer = self._timers.get(provider)
        loop = asyncio.get_running_loop()
        if timer is not None and not timer.done() and timer.get_loop() is loop:
            return
        timer = loop.create_task(self._flush_after(provider))
        self._timers[provider] = timer
        self._tasks.add(timer)
        timer.add_done_callback(self._tasks.discard)

    async def _flush_after(self, provider: str) -> None:
        await self._sleep(self.settings.flush_s)
        await self._flush(provider)

    async def _flush(self, provider: str) -> None:
        calls = self._take(provider)
        if not calls:
            return
        try:
            await self._write(provider, calls, self._clock())
        except Exception:
            log.exception(
                "breaker state unavailable for %s; %d successes not recorded", provider, len(calls)
            )

    def outcome_for(self, error: _Classified | None) -> Outcome:
        """How a call's result counts: no error is a success; a code of
        `exhausted_codes` is exhausted; `open_breaker` or an unexpected error is
        unexpected; a recoverable error, or a non-recoverable one listed in
        `failure_codes`, is a failure; any other error (no_results, a rejected query)
        means the provider answered, a success."""
        if error is None:
            return "success"
        if error.code in self.settings.exhausted_codes:
            return "exhausted"
        if error.action == "open_breaker" or error.category == "unexpected":
            return "unexpected"
        if error.category == "recoverable" or error.code in self.settings.failure_codes:
            return "failure"
        return "success"
