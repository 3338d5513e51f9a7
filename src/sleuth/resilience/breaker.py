"""Circuit breaker per provider: stop calling a back end that is failing, try it
again after a while with one probe.

Every state rule is in `TRANSITIONS` (as h11 keeps its in `_state.py`):

    state \\ event   success  failure  unexpected  tripped  cooled_down  probe_sent
    closed           closed   closed   open        open     -            -
    open             open     open     open        -        half_open    -
    half_open        closed   open     open        -        -            half_open

- closed: calls go through; each outcome enters a sliding window (at most
  `window_size` calls, none older than `window_s`). An `unexpected` outcome opens
  the breaker at once; a `failure` that brings the window's failure rate to
  `failure_rate` or more, with at least `min_calls` in it, is `tripped` and opens it.
- open: calls are refused (`Decision.allowed` false, with the reason and when the
  breaker lets a probe through) until `open_for_s` has passed since it opened; then
  the next `allow` is `cooled_down` into half_open. Outcomes arriving while open
  are late answers of calls let through before it opened; they change nothing.
- half_open: the first `allow` sends exactly one probe (`probe_sent`); every other
  caller is refused while it is out. Any outcome recorded in half_open is taken as
  the probe's: success closes (with an empty window), failure or unexpected re-opens
  for another `open_for_s`. A probe that never reports (its search was cancelled)
  is given up after `probe_timeout_s`, and the next `allow` sends another.

The record lives in a `BreakerStore`, changed only through the store's atomic
`update_breaker`, so every process and replica sharing the store sees one breaker
and lets one probe through. The clock is injected (wall-clock `time.time` by
default, because the record is shared between processes and hosts).

>>> import asyncio
>>> from sleuth.store import MemoryStore
>>> breaker = Breaker(MemoryStore(), BreakerSettings(), clock=lambda: 1000.0)
>>> async def demo() -> tuple[bool, bool]:
...     await breaker.record("brave", "unexpected")
...     decision = await breaker.allow("brave")
...     return decision.allowed, decision.retry_at == 1300.0
>>> asyncio.run(demo())
(False, True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import ErrorAction, ErrorCategory
from sleuth.store.base import BreakerRecord, BreakerState, BreakerStore

__all__ = [
    "TRANSITIONS",
    "Breaker",
    "BreakerSettings",
    "Decision",
    "Event",
    "Outcome",
    "admit",
    "observe",
]

Outcome = Literal["success", "failure", "unexpected"]
Event = Literal["success", "failure", "unexpected", "tripped", "cooled_down", "probe_sent"]

TRANSITIONS: Mapping[BreakerState, Mapping[Event, BreakerState]] = {
    "closed": {"success": "closed", "failure": "closed", "unexpected": "open", "tripped": "open"},
    "open": {
        "success": "open",
        "failure": "open",
        "unexpected": "open",
        "cooled_down": "half_open",
    },
    "half_open": {
        "success": "closed",
        "failure": "open",
        "unexpected": "open",
        "probe_sent": "half_open",
    },
}


class BreakerSettings(BaseModel):
    """The `breaker:` section of sleuth.yaml (one breaker per provider, these settings)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Skip providers whose breaker is open.")
    open_for_s: float = Field(
        300.0, gt=0, description="How long an opened breaker refuses calls before a probe."
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


def _move(state: BreakerState, event: Event) -> BreakerState:
    try:
        return TRANSITIONS[state][event]
    except KeyError:
        raise ValueError(f"breaker in state {state!r} cannot take event {event!r}") from None


def _window(
    calls: tuple[tuple[float, bool], ...], now: float, settings: BreakerSettings
) -> tuple[tuple[float, bool], ...]:
    return tuple(call for call in calls if now - call[0] < settings.window_s)[
        -settings.window_size :
    ]


def _enter(record: BreakerRecord, event: Event, now: float, reason: str = "") -> BreakerRecord:
    """The record after `event`: the table gives the state, entering it its fields."""
    state = _move(record.state, event)
    if state == "open" and record.state != "open":
        return BreakerRecord(state="open", opened_at=now, reason=reason)
    if state == "half_open" and record.state == "open":
        return replace(record, state="half_open", probe_at=None)
    if state == "closed" and record.state == "half_open":
        return BreakerRecord()
    return replace(record, state=state)


def admit(
    record: BreakerRecord, now: float, settings: BreakerSettings
) -> tuple[BreakerRecord, Decision]:
    """Pure: whether a call may go now, and the record after deciding."""
    if record.state == "closed":
        return record, Decision(allowed=True, state="closed")
    if record.state == "open":
        opened_at = now if record.opened_at is None else record.opened_at
        reopen = opened_at + settings.open_for_s
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


def observe(
    record: BreakerRecord,
    outcome: Outcome,
    now: float,
    settings: BreakerSettings,
    detail: str = "",
) -> BreakerRecord:
    """Pure: the record after a call's outcome."""
    event: Event = outcome
    if record.state != "closed":
        reason = f"probe failed: {detail or outcome}"
        return _enter(record, event, now, reason)
    calls = _window((*record.calls, (now, outcome != "success")), now, settings)
    if outcome == "unexpected":
        return _enter(record, "unexpected", now, f"unexpected error: {detail or 'unknown'}")
    failed = sum(1 for _, bad in calls if bad)
    if (
        outcome == "failure"
        and len(calls) >= settings.min_calls
        and failed / len(calls) >= settings.failure_rate
    ):
        reason = f"{failed} of the last {len(calls)} calls failed" + (
            f", last: {detail}" if detail else ""
        )
        return _enter(record, "tripped", now, reason)
    return replace(_enter(record, event, now), calls=calls)


class _Classified(Protocol):
    @property
    def category(self) -> ErrorCategory: ...
    @property
    def action(self) -> ErrorAction: ...
    @property
    def code(self) -> str: ...


class Breaker:
    """The breakers of every provider, over a shared store.

    Call `allow(provider)` before a call and `record(provider, outcome)` after it.
    """

    def __init__(
        self,
        store: BreakerStore,
        settings: BreakerSettings,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self.settings = settings
        self._clock = clock

    async def allow(self, provider: str) -> Decision:
        """Whether to call `provider` now; refused calls say why and until when."""
        if not self.settings.enabled:
            return Decision(allowed=True, state="closed")
        now = self._clock()
        record = await self._store.get_breaker(provider)
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

        await self._store.update_breaker(provider, change)
        return decided[-1]

    async def record(self, provider: str, outcome: Outcome, *, detail: str = "") -> None:
        """Enter a call's outcome; `detail` (e.g. the error code) goes into the reason."""
        if not self.settings.enabled:
            return
        now = self._clock()
        await self._store.update_breaker(
            provider, lambda current: observe(current, outcome, now, self.settings, detail)
        )

    def outcome_for(self, error: _Classified | None) -> Outcome:
        """How a call's result counts: no error is a success; `open_breaker` or an
        unexpected error is unexpected; a recoverable error, or a non-recoverable one
        listed in `failure_codes`, is a failure; any other error (no_results, a
        rejected query) means the provider answered, a success."""
        if error is None:
            return "success"
        if error.action == "open_breaker" or error.category == "unexpected":
            return "unexpected"
        if error.category == "recoverable" or error.code in self.settings.failure_codes:
            return "failure"
        return "success"
