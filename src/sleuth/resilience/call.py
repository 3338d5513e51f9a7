"""One provider's call with its resilience steps, and each chain slot's race.

One call (`ProviderCall`), in this order:

    build the request (pure; a missing key or bad option is this provider's error)
    breaker.allow        open: skipped, `breaker_open` degradation with when it retries
                         (not awaited when `breaker.admits` from memory: closed, fresh)
    the first attempt, then retry_call for the rest, each attempt:
        quota.acquire    no token before the deadline: `quota_exhausted`, no wait
                         (`quota.leased` first: a token on lease, nothing awaited)
        transport send   bounded by the provider's timeout and the deadline, whole
                         body included (a trickle cannot outlast it)
        parse            the provider's pure parser
      every failure is classified by the rules (`RuleBook`): the error carries the
      rule's code, category and action; only `retry` is retried, never past the deadline
    breaker.record       the call's outcome (`Breaker.outcome_for`); a success while
                         closed waits to be written with others (`breaker.flush_s`;
                         `breaker.succeeded` enters it without awaiting).
                         Never counted: a call cut by the search's own deadline or
                         left behind as a straggler, and a timeout that fired more
                         than `LOCAL_LAG_S` late (sleuth's own event loop was busy):
                         none of them says anything about the provider. A probe
                         that ends so is released for the next search to send.
    every attempt's latency goes to the `LatencyTracker`, which learns hedge delays

A chain slot (`ask_chain`): every chosen provider is asked at once, each in its own
slot, as before hedging existed. A slot whose provider fails (not answered: an error
whose action is not `report`, an open breaker, no quota) or has not answered within
its hedge delay starts the next backup provider not yet being asked (`backups:` in
sleuth.yaml), through `hedge.hedged`; the first good answer of the slot wins and the
others are cancelled. Each backup started is a `fallback` degradation with its
reason. With no backups configured nothing is added.

Stragglers (`stragglers.py`): once enough slots have answered, with enough results
between them, a slot still out past its provider's learned latency is stopped and
left behind (status `timeout`, a `straggler` degradation) instead of holding the
answer until the deadline.

No I/O of its own: the transport, the store (behind breaker and quota) and the rules
file are reached through what is passed in. Clock and sleep are injected.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from sleuth.contract import Degradation, Priority, ProviderStatus
from sleuth.errors import DeadlineExceeded, MissingApiKey, NoResults, ProviderTimeout, SearchError
from sleuth.providers.base import HttpRequest, RawHit
from sleuth.resilience.alarm import Alarm
from sleuth.resilience.breaker import Breaker, Decision
from sleuth.resilience.hedge import HedgeResult, HedgeSettings, LatencyTracker, hedge_delays, hedged
from sleuth.resilience.quota import Grant, Quota
from sleuth.resilience.retry import RetrySettings, Rng, retry_call
from sleuth.resilience.rules import (
    DEFAULT_BODY_PREVIEW_BYTES,
    Classification,
    Failure,
    RuleBook,
)
from sleuth.resilience.stragglers import StragglerSettings, enough, patience
from sleuth.transport import RawResponse

__all__ = ["LOCAL_LAG_S", "Exchange", "Policies", "ProviderCall", "ProviderOutcome", "ask_chain"]

log = logging.getLogger(__name__)

#: A timeout that fires this much later than it was set for was held up by sleuth's
#: own busy event loop; the provider may well have answered in time.
LOCAL_LAG_S = 0.1


@dataclass(frozen=True)
class Exchange:
    """How to talk to one provider: its pure `build` and `parse`, the transport's `send`."""

    build: Callable[[], HttpRequest]
    send: Callable[[HttpRequest, float], Awaitable[RawResponse]]
    parse: Callable[[RawResponse], list[RawHit]]
    timeout_s: float
    #: A paginated provider's next request: `(first request, pages done, results so
    #: far)` -> the request, or None when there is no page to ask for.
    next_page: Callable[[HttpRequest, int, int], HttpRequest | None] | None = None


@dataclass
class ProviderOutcome:
    """What one provider call produced, for the response's report, errors and degradations."""

    provider: str
    hits: list[RawHit] = field(default_factory=list)
    error: SearchError | None = None
    latency_ms: float = 0.0
    status: ProviderStatus = "ok"
    retries: int = 0
    degradations: list[Degradation] = field(default_factory=list)

    @property
    def answered(self) -> bool:
        """The provider gave an answer to keep: results, nothing found, or an error the
        caller must act on (`report`, e.g. a policy refusal no other provider would take)."""
        if self.status in ("ok", "empty"):
            return True
        return self.error is not None and self.error.action == "report"


@dataclass
class Policies:
    """The resilience policies every provider call of a search shares.

    `clock` measures the search's deadline (the gateway's `time.perf_counter`);
    `wall` is the breaker's and quota's clock (`time.time`: their state is shared
    between processes), to which quota deadlines are converted.
    """

    rules: RuleBook
    breaker: Breaker
    quota: Quota
    latency: LatencyTracker
    retry: RetrySettings = field(default_factory=RetrySettings)
    hedge: HedgeSettings = field(default_factory=HedgeSettings)
    stragglers: StragglerSettings = field(default_factory=StragglerSettings)
    body_preview_bytes: int = DEFAULT_BODY_PREVIEW_BYTES
    clock: Callable[[], float] = time.perf_counter
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    rng: Rng | None = None
    #: Told of each provider's outcome as soon as it is known (progress events).
    on_outcome: Callable[[ProviderOutcome], None] | None = None


class _QuotaRefused(Exception):
    """No token in time: not a provider failure, so never classified or retried."""

    def __init__(self, grant: Grant) -> None:
        super().__init__(grant.reason)
        self.grant = grant


class _NoBackup(Exception):
    """A slot wanted a backup and every one is already being asked."""


@dataclass
class _Stop:
    """Resolved when a slot is left behind as a straggler, with what its degradation
    says. A future, not an Event: `asyncio.wait` watches it without a task."""

    signal: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    #: How long its provider usually takes (the patience it ran out of).
    waited_s: float = 0.0
    #: The providers that had answered.
    answered: list[str] = field(default_factory=list)
    #: When the slot's first call began (on the policies' clock); None before. A slot
    #: that a busy event loop started late is given its whole patience from then.
    began: float | None = None


def _when(wall_time: float | None) -> str:
    if wall_time is None:
        return "unknown"
    return datetime.fromtimestamp(wall_time, UTC).isoformat(timespec="seconds")


class ProviderCall:
    """One provider's call in one search. `run()` it; if the run is cancelled (a
    backup won, the deadline passed), `interrupted` or `cut` say how it stood."""

    def __init__(
        self,
        provider: str,
        exchange: Exchange,
        policies: Policies,
        *,
        priority: Priority,
        deadline: float,
        deadline_s: float | None = None,
        cut_at_deadline: bool = False,
    ) -> None:
        self.provider = provider
        #: The caller cancels the call at the deadline (a chain slot's race does), so
        #: an attempt that the deadline bounds needs no timer of its own.
        self.cut_at_deadline = cut_at_deadline
        self.exchange = exchange
        self.policies = policies
        self.priority: Priority = priority
        self.deadline = deadline
        self._deadline_s = deadline_s
        self.started = policies.clock()
        #: Requests actually sent (the first and each retry).
        self.sends = 0
        #: Further pages sent after the first answered (paginated providers).
        self.pages = 0
        #: The latest failure, classified (`action` set), even while a retry waits.
        self.last_error: SearchError | None = None
        self.degradations: list[Degradation] = []
        self._response: RawResponse | None = None
        #: This call is the half-open breaker's one probe: its outcome decides.
        self._probe = False
        #: A timeout of this call fired late: sleuth was busy, not the provider slow.
        self._held_up = False

    @property
    def too_late(self) -> str:
        """What the deadline's error says (made only when it is needed)."""
        deadline_s = self._deadline_s
        within = f"the {deadline_s:.1f}s deadline" if deadline_s else "the search's deadline"
        return f"{self.provider} had not answered when {within} passed"

    async def run(self) -> ProviderOutcome:
        try:
            request = self.exchange.build()
        except Exception as exc:  # noqa: BLE001 - its configuration: classified and reported
            error = self._classified(exc)
            return self._outcome("skipped" if isinstance(exc, MissingApiKey) else "error", error)
        policies = self.policies
        breaker = policies.breaker
        # Closed, as this process knows it lately: nothing to ask the store.
        if not breaker.admits(self.provider):
            decision = await self._allow()
            self._probe = decision.probe
            if not decision.allowed:
                self.degradations.append(
                    Degradation(
                        kind="breaker_open",
                        provider=self.provider,
                        reason=f"{decision.reason}; skipped until {_when(decision.retry_at)}",
                    )
                )
                return self._outcome("skipped")
        # The first attempt is made here, the retries (if it fails) by `retry_call`.
        try:
            hits = await self._attempt(request)
        except Exception as exc:  # noqa: BLE001 - classified, retried or reported below
            return await self._retried(request, exc)
        if not breaker.succeeded(self.provider):  # not one that waits in memory
            await self._record(None)
        if hits and self.exchange.next_page is None:
            return self._outcome("ok", hits=hits)
        return await self._answered(request, hits)

    async def _answered(self, request: HttpRequest, hits: list[RawHit]) -> ProviderOutcome:
        if hits:
            if self.exchange.next_page is not None:
                hits = await self._more_pages(request, hits)
            return self._outcome("ok", hits=hits)
        found_nothing = NoResults(f"{self.provider} found nothing", provider=self.provider)
        return self._outcome("empty", self._classified(found_nothing, with_response=False))

    async def _retried(self, request: HttpRequest, first: Exception) -> ProviderOutcome:
        """The call after its first attempt raised `first`: retried as the rules say."""
        policies = self.policies
        outcome = await retry_call(
            functools.partial(self._attempt, request),
            classify=self._classify,
            deadline=self.deadline,
            clock=policies.clock,
            sleep=policies.sleep,
            settings=policies.retry,
            rng=policies.rng,
            failed=first,
        )
        if outcome.ok:
            await self._record(None)
            return await self._answered(request, outcome.value or [])
        if isinstance(outcome.error, _QuotaRefused):
            grant = outcome.error.grant
            self.degradations.append(
                Degradation(
                    kind="quota_exhausted",
                    provider=self.provider,
                    reason=f"{grant.reason}; not waiting past the deadline",
                )
            )
            if self.last_error is None:
                return self._outcome("skipped")
            # A retry found no token: the error before it stands.
        # Every Exception passes `_classify`, which keeps it; the rest is a safety net.
        failed = self.last_error or self._classified(outcome.error or RuntimeError("unknown"))
        await self._record(failed)
        return self._outcome("timeout" if isinstance(failed, DeadlineExceeded) else "error", failed)

    async def interrupted(self, status: ProviderStatus) -> ProviderOutcome:
        """How the call stood when it was cancelled because another answer won:
        its last failure if it had one, else `status`."""
        await self._record(None, verdict=False)
        if self.last_error is not None:
            return self._outcome("error", self.last_error)
        return self._outcome(status)

    async def cut(self) -> ProviderOutcome:
        """The call cut by the search's deadline: its last failure, or the deadline's
        error (classified by the rules). Only a real failure before the cut counts."""
        error = self.last_error
        if error is None:
            error = self._classified(DeadlineExceeded(self.too_late, provider=self.provider))
        await self._record(error, verdict=self.sends > 0)
        return self._outcome("timeout" if isinstance(error, DeadlineExceeded) else "error", error)

    async def left_behind(self, waited_s: float, answered: Sequence[str]) -> ProviderOutcome:
        """The call stopped because the others had answered and it was late, with a
        `straggler` degradation saying who answered. Being late is no verdict on the
        provider, nor is one failed attempt whose retry was waiting (a random fault);
        every attempt of two or more failed is one (a provider that is down)."""
        failed_twice = self.last_error is not None and self.sends >= 2
        await self._record(self.last_error, verdict=failed_twice)
        elapsed = self.policies.clock() - self.started
        self.degradations.append(
            Degradation(
                kind="straggler",
                provider=self.provider,
                reason=f"{self.provider} had not answered after {elapsed:.2f} s (it usually "
                f"answers within {waited_s:.2f} s); answered with {', '.join(answered)}",
            )
        )
        if self.last_error is not None:
            return self._outcome("error", self.last_error)
        return self._outcome("timeout")

    def crashed(self, exc: BaseException) -> ProviderOutcome:
        """The call raised what it never should (a bug): classified, reported."""
        log.error("provider call %s failed", self.provider, exc_info=exc)
        return self._outcome("error", self._classified(exc, with_response=False))

    # --- the steps ------------------------------------------------------------------

    async def _attempt(self, request: HttpRequest) -> list[RawHit]:
        policies = self.policies
        grant = policies.quota.leased(self.provider, self.priority)
        if grant is None:
            left = self.deadline - policies.clock()
            grant = await self._acquire(policies.wall() + left)
            if not grant.granted:
                raise _QuotaRefused(grant)
        self.sends += 1
        self._response = None
        started = policies.clock()
        timeout = max(0.05, min(self.exchange.timeout_s, self.deadline - started))
        # Bounded by the search's deadline rather than the provider's own timeout, being
        # too slow is the deadline's doing: the ladder moves on instead of retrying.
        by_deadline = self.deadline - started < self.exchange.timeout_s
        try:
            if by_deadline and self.cut_at_deadline:
                response = await self.exchange.send(request, timeout)
            else:
                loop = asyncio.get_running_loop()
                alarm = Alarm(loop, loop.time() + timeout)
                try:
                    response = await self.exchange.send(request, timeout)
                except asyncio.CancelledError as cancelled:
                    if alarm.expired():
                        raise TimeoutError from cancelled
                    raise
                finally:
                    alarm.clear()
        except (TimeoutError, ProviderTimeout) as exc:  # the whole answer, body included
            if policies.clock() - started - timeout > LOCAL_LAG_S:
                self._held_up = True
            if by_deadline:
                raise DeadlineExceeded(self.too_late, provider=self.provider) from exc
            if isinstance(exc, ProviderTimeout):
                raise
            raise ProviderTimeout(
                f"{self.provider} had not finished answering within {timeout:.1f}s",
                provider=self.provider,
            ) from exc
        finally:  # cancelled or cut, the time it ran is a lower bound worth learning
            policies.latency.record(self.provider, max(0.0, policies.clock() - started))
        self._response = response
        return self.exchange.parse(response)

    async def _more_pages(self, first: HttpRequest, hits: list[RawHit]) -> list[RawHit]:
        """The further pages of a paginated provider, each a call of its own (a quota
        token, the transport); not retried. A page that fails or finds no quota ends the
        paging with the results so far and a `pagination_stopped` degradation."""
        next_page = self.exchange.next_page
        done = 1
        while next_page is not None and (request := next_page(first, done, len(hits))):
            policies = self.policies
            left = self.deadline - policies.clock()
            if left <= 0:
                break
            try:
                grant = policies.quota.leased(self.provider, self.priority)
                if grant is None:
                    grant = await self._acquire(policies.wall() + left)
                if not grant.granted:
                    raise _QuotaRefused(grant)
                timeout = max(0.05, min(self.exchange.timeout_s, left))
                async with asyncio.timeout(timeout):
                    response = await self.exchange.send(request, timeout)
                page = self.exchange.parse(response)
            except Exception as exc:  # noqa: BLE001 - the first pages stand; said below
                reason = str(exc) or type(exc).__name__
                self.degradations.append(
                    Degradation(
                        kind="pagination_stopped",
                        provider=self.provider,
                        reason=f"page {done + 1} failed ({reason[:200]}); kept {len(hits)} "
                        f"results of {done} page(s)",
                    )
                )
                break
            self.pages += 1
            done += 1
            hits = [*hits, *page]
            if not page:
                break
        return hits

    def _classify(self, exc: BaseException) -> Classification | None:
        if isinstance(exc, _QuotaRefused):
            return None
        failure = Failure.of(
            self.provider,
            exc,
            response=self._response,
            body_preview_bytes=self.policies.body_preview_bytes,
        )
        verdict = self.policies.rules.classify(failure)
        error = verdict.error_for(failure)
        # A real failure before the deadline cut it short says more than the cut.
        if not (isinstance(error, DeadlineExceeded) and self.last_error is not None):
            self.last_error = error
        return verdict

    def _classified(self, exc: BaseException, *, with_response: bool = True) -> SearchError:
        failure = Failure.of(
            self.provider,
            exc,
            response=self._response if with_response else None,
            body_preview_bytes=self.policies.body_preview_bytes,
        )
        error = self.policies.rules.classify(failure).error_for(failure)
        error.provider = error.provider or self.provider
        return error

    # The store behind breaker and quota is shared state; when it fails, searches go
    # on without it (logged) rather than fail with it.

    async def _allow(self) -> Decision:
        try:
            return await self.policies.breaker.allow(self.provider)
        except Exception:
            log.exception("breaker state unavailable for %s; calling it anyway", self.provider)
            return Decision(allowed=True, state="closed")

    async def _acquire(self, wall_deadline: float) -> Grant:
        """A token from the store, once `quota.leased` had none."""
        quota = self.policies.quota
        try:
            return await quota.acquire_from_store(
                self.provider, self.priority, deadline=wall_deadline
            )
        except Exception:
            log.exception("quota state unavailable for %s; calling it anyway", self.provider)
            return Grant(True, quota.settings.pool_for(self.provider), self.priority)

    async def _record(self, error: SearchError | None, *, verdict: bool = True) -> None:
        """Tell the breaker how the call went; with no `verdict` on the provider (or a
        failure that is sleuth's own: the deadline, a timeout held up by a busy loop),
        only give back the probe, if this call was it."""
        breaker = self.policies.breaker
        timed_out = isinstance(error, ProviderTimeout | DeadlineExceeded)
        if isinstance(error, DeadlineExceeded) or (timed_out and self._held_up):
            verdict = False
        try:
            if verdict:
                await breaker.record(
                    self.provider,
                    breaker.outcome_for(error),
                    detail=error.code if error else "",
                    rest_s=error.retry_after_s if error else None,
                )
            elif self._probe:
                await breaker.release(self.provider)
        except Exception:
            log.exception("breaker state unavailable for %s; outcome not recorded", self.provider)

    def _outcome(
        self,
        status: ProviderStatus,
        error: SearchError | None = None,
        *,
        hits: list[RawHit] | None = None,
    ) -> ProviderOutcome:
        outcome = ProviderOutcome(
            provider=self.provider,
            hits=hits or [],
            error=error,
            latency_ms=(self.policies.clock() - self.started) * 1000,
            status=status,
            retries=max(0, self.sends - 1),
            degradations=list(self.degradations),
        )
        # Every way a call ends passes here, so this is where its outcome is announced.
        if self.policies.on_outcome is not None:
            self.policies.on_outcome(outcome)
        return outcome


# --- the chain ------------------------------------------------------------------------


class _Backups:
    """The backup providers of one search; each is asked for one slot at most."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self._free = list(names)

    def claim(self) -> str | None:
        return self._free.pop(0) if self._free else None


def _left_because(outcome: ProviderOutcome) -> str:
    if outcome.error is not None:
        tries = f" after {outcome.retries + 1} attempts" if outcome.retries else ""
        return f"failed ({outcome.error.code}{tries})"
    kinds = ", ".join(d.kind for d in outcome.degradations) or outcome.status
    return f"was skipped ({kinds})"


async def ask_chain(
    chosen: Sequence[str],
    backups: Sequence[str],
    exchange_for: Callable[[str], Exchange],
    policies: Policies,
    *,
    priority: Priority,
    deadline: float,
    deadline_s: float,
    want_results: int = 1,
) -> tuple[list[ProviderOutcome], list[Degradation]]:
    """Ask every `chosen` provider at once, each slot backed by the shared `backups`;
    return every provider's outcome (chosen first, then backups in the order they were
    asked) and the `fallback` degradations. Returns by `deadline` (on `policies.clock`),
    sooner when the slots still out are stragglers (`want_results` is what the request
    asked for)."""
    pool = _Backups([name for name in backups if name not in chosen])
    stops = [_Stop() for _ in chosen]
    slots = [
        asyncio.ensure_future(
            _slot(name, pool, exchange_for, policies, priority, deadline, deadline_s, stop)
        )
        for name, stop in zip(chosen, stops, strict=True)
    ]
    watch = _Stragglers(chosen, slots, stops, policies, want_results)
    try:
        done = await asyncio.gather(*slots)  # each slot ends itself at the deadline
    finally:
        watch.close()
        for slot in slots:
            slot.cancel()
    first = [outcomes[0] for outcomes, _ in done]
    later = [outcome for outcomes, _ in done for outcome in outcomes[1:]]
    return [*first, *later], [step for _, steps in done for step in steps]


_Slot = asyncio.Future[tuple[list["ProviderOutcome"], list[Degradation]]]


class _Stragglers:
    """Leaves the slots still out behind once enough have answered: each is stopped
    when it passes its provider's patience, counted from when its call began. Looked
    at as each slot ends and when the next patience runs out (a timer of the loop's,
    not a task)."""

    def __init__(
        self,
        chosen: Sequence[str],
        slots: Sequence[_Slot],
        stops: Sequence[_Stop],
        policies: Policies,
        want_results: int,
    ) -> None:
        self._slots, self._stops, self._want = slots, stops, want_results
        self._policies = policies
        settings = policies.stragglers
        self._waits = [patience(name, policies.latency, settings) for name in chosen]
        self._loop = asyncio.get_running_loop()
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False
        for slot in slots:
            slot.add_done_callback(self._look)

    def _look(self, _: object = None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        slots, stops = self._slots, self._stops
        if self._closed:
            return
        running = [
            i for i, slot in enumerate(slots) if not slot.done() and not stops[i].signal.done()
        ]
        if not running:
            return
        answered = [_answered(slot) for slot in slots if slot.done()]
        # A slot that ended with an error is finished too: only results count as found.
        found = [hits for _, hits in answered]
        policies = self._policies
        if not enough(found, len(slots), self._want, policies.stragglers):
            return
        now = policies.clock()
        late_at = {}
        for i in running:
            # A slot not begun yet cannot be late before its patience from now.
            began = stops[i].began
            late_at[i] = (now if began is None else began) + self._waits[i]
            if began is not None and now >= late_at[i]:
                stops[i].waited_s = self._waits[i]
                stops[i].answered = [name for name, hits in answered if hits]
                stops[i].signal.set_result(None)
        still = [late_at[i] for i in running if not stops[i].signal.done()]
        if still:
            self._timer = self._loop.call_later(max(0.0, min(still) - now), self._look)

    def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        for slot in self._slots:
            slot.remove_done_callback(self._look)


def _answered(slot: _Slot) -> tuple[str, int]:
    """A finished slot's provider that answered with results and how many, or its
    first provider and 0 (it failed, was skipped, found nothing)."""
    if slot.cancelled() or slot.exception() is not None:
        return "", 0
    outcomes = slot.result()[0]
    for outcome in outcomes:
        if outcome.status == "ok":
            return outcome.provider, len(outcome.hits)
    return outcomes[0].provider, 0


async def _slot(
    primary: str,
    pool: _Backups,
    exchange_for: Callable[[str], Exchange],
    policies: Policies,
    priority: Priority,
    deadline: float,
    deadline_s: float,
    stop: _Stop,
) -> tuple[list[ProviderOutcome], list[Degradation]]:
    def new_call(name: str) -> ProviderCall:
        return ProviderCall(
            name,
            exchange_for(name),
            policies,
            priority=priority,
            deadline=deadline,
            deadline_s=deadline_s,
            cut_at_deadline=True,  # `hedged` cancels every attempt at the deadline
        )

    # The primary's call exists from the start: even a race that never began (the
    # deadline had passed) reports it.
    calls: dict[int, ProviderCall] = {0: new_call(primary)}
    stop.began = calls[0].started

    def attempt(index: int) -> Callable[[], Awaitable[ProviderOutcome]]:
        async def ask() -> ProviderOutcome:
            if index > 0:
                name = pool.claim()
                if name is None:
                    raise _NoBackup
                calls[index] = new_call(name)
            return await calls[index].run()

        return ask

    # The delays of backups not known yet are those of the pool, in order: close enough.
    delays = hedge_delays([primary, *pool.names], policies.latency, policies.hedge)
    race = await hedged(
        attempt(0),
        [attempt(index) for index in range(1, len(pool.names) + 1)],
        delays,
        lambda outcome: outcome.answered,
        deadline,
        clock=policies.clock,
        stop=stop.signal,
    )
    outcomes = [await _settled(calls[index], race, index, stop) for index in sorted(calls)]
    return outcomes, _fallbacks(calls, outcomes, race, delays)


async def _settled(
    call: ProviderCall, race: HedgeResult[ProviderOutcome], index: int, stop: _Stop
) -> ProviderOutcome:
    attempt = race.attempts[index] if index < len(race.attempts) else None
    if attempt is not None and attempt.value is not None:
        return attempt.value
    if attempt is not None and attempt.outcome == "error":
        return call.crashed(attempt.error or RuntimeError("unknown failure"))
    if race.deadline_hit:
        return await call.cut()
    if race.stopped:
        return await call.left_behind(stop.waited_s, stop.answered)
    # Cancelled because another attempt won: before the winner it was too slow,
    # after it, a backup no longer needed.
    winner = race.winner if race.winner is not None else math.inf
    return await call.interrupted("timeout" if index < winner else "skipped")


def _fallbacks(
    calls: dict[int, ProviderCall],
    outcomes: list[ProviderOutcome],
    race: HedgeResult[ProviderOutcome],
    delays: Sequence[float],
) -> list[Degradation]:
    """One `fallback` per backup that was needed (not one cancelled because an earlier
    provider of its slot answered first), with why the provider before it was left."""
    steps = []
    winner = race.winner if race.winner is not None else math.inf
    for index in sorted(calls)[1:]:
        attempt = race.attempts[index]
        if index > winner and attempt.outcome == "cancelled":
            continue
        before, name = race.attempts[index - 1], calls[index].provider
        left = calls[index - 1].provider
        if before.ended_s is not None and before.ended_s <= attempt.started_s + 1e-6:
            why = _left_because(outcomes[index - 1])
            reason = f"{left} {why}; asked {name} instead"
        else:
            delay = delays[index - 1]
            reason = (
                f"{left} had not answered within its {delay:.2f} s hedge delay; asked {name} too"
            )
        steps.append(Degradation(kind="fallback", provider=left, reason=reason))
    return steps
