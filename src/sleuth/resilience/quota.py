"""Quota pools: how fast sleuth may call each outbound dependency, and who goes
first when a pool runs short.

Pools. Every dependency (each provider, any other outbound service) draws from its
own pool, named after it unless `pool_of` maps several dependencies onto one pool
(e.g. two providers behind one API key). Pools are independent: each has its own
buckets in the store and nothing is shared or borrowed between them, so however
busy one dependency is, it cannot take a single token from another. The production
rule "a reserved floor of 5 requests/s that other pools can never take" therefore
holds by construction, and more strongly: every pool keeps its whole configured
rate. (A shared global budget, say the egress proxy's capacity, would make the
floor a real knob: each pool would draw its first `floor` requests/s from a reserve
of its own and only the rest from the shared budget. sleuth has no such shared
resource today, so there is no such knob.)

Buckets. A pool is two token buckets, both of which a request must pass:

    peak       refills at burst_per_s (100/s), holds burst_per_s tokens (1 s)
    sustained  refills at rate_per_s (50/s), holds
               (burst_per_s - rate_per_s) * burst_window_s + burst_per_s tokens (1600)

So a rested pool serves a burst of 100 at once, then up to 100/s until the sustained
bucket runs dry (30 s of 100/s with the defaults), then 50/s. Over any span of t
seconds it grants at most min(100 + 100 t, 1600 + 50 t). With burst_window_s = 0 it
is the plain bucket: rate_per_s, with a one-off burst of burst_per_s.

Priority. When the pool is contended (a take would leave either bucket below
`contention_fraction` of its size), requests are served by weighted fair queueing
between the priorities that asked within `active_window_s`: each priority has a
virtual time that a grant advances by 1 / weight (normal 1, high `high_weight` = 2),
and a request is served only if no other active priority is behind it. With both
priorities waiting, high gets two tokens for every one normal gets; a priority that
is alone gets the whole pool (no token is withheld for a class that is not asking);
when the pool is not contended everybody is served and the accounts reset. The
arithmetic is `PoolRule.apply`, pure; the store makes it atomic across processes.

Leases. A process that calls a pool often takes several tokens in one store round
trip (as many as it asked for in the last `lease_s`, at most `lease_max_tokens`) and
spends them on its next calls within `lease_s` (`leased`: without awaiting;
`acquire` is `leased`, else `acquire_from_store`). A lease is taken only while the pool
is not contended (once refused, the process takes one token at a time for `lease_s`),
so priority works as above when it matters; one lease request per pool and priority
is out at a time, the other calls waiting for it and spending from it. When one
leased token is left, the next lease (the demand less that token) is taken in the
background, so a busy process's calls do not wait for the store. A leased token
not spent in time is lost, so the pool's bound holds across processes however tokens
are leased (a busy pool may serve a little less than its rate, never more).

Waiting. `acquire` waits for a token only while one can come before the request's
deadline (and never longer than `max_wait_s`); otherwise it refuses at once, with
the reason, so the caller falls back instead of waiting.

>>> import asyncio
>>> from sleuth.store import MemoryStore
>>> quota = Quota(MemoryStore(), QuotaSettings(), clock=lambda: 0.0)
>>> async def burst() -> int:
...     grants = [await quota.acquire("brave", deadline=0.0) for _ in range(120)]
...     return sum(grant.granted for grant in grants)
>>> asyncio.run(burst())
100
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from sleuth.contract import Priority
from sleuth.store.base import CounterStore, Take

__all__ = ["Grant", "PoolRule", "PoolSettings", "Quota", "QuotaSettings"]

log = logging.getLogger(__name__)

_MIN_SLEEP_S = 0.001
_SLACK = 1e-6


class PoolSettings(BaseModel):
    """One pool's limits (`quota.default`, or `quota.pools.<name>` over the default)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rate_per_s: float = Field(50.0, gt=0, description="Sustained requests per second.")
    burst_per_s: float = Field(
        100.0, gt=0, description="Peak requests per second (below rate_per_s: the rate)."
    )
    burst_window_s: float = Field(
        30.0, ge=0, description="How long a rested pool can hold the peak rate."
    )

    @property
    def peak_rate(self) -> float:
        return max(self.burst_per_s, self.rate_per_s)

    @property
    def peak_capacity(self) -> float:
        return self.peak_rate * 1.0

    @property
    def sustained_capacity(self) -> float:
        return (self.peak_rate - self.rate_per_s) * self.burst_window_s + self.peak_capacity


class QuotaSettings(BaseModel):
    """The `quota:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Limit outbound calls per pool.")
    default: PoolSettings = Field(
        default_factory=PoolSettings, description="Limits of every pool not listed in `pools`."
    )
    pools: dict[str, PoolSettings] = Field(
        default_factory=dict,
        description="Per-pool limits; unset fields come from `default`.",
    )
    pool_of: dict[str, str] = Field(
        default_factory=dict,
        description="Dependency -> pool name, for dependencies that share a pool; "
        "by default each dependency is its own pool.",
    )
    high_weight: float = Field(
        2.0, ge=1, description="Share of a priority: high request versus a normal one."
    )
    contention_fraction: float = Field(
        0.1,
        ge=0,
        le=1,
        description="The pool is contended when a take would leave a bucket below this "
        "fraction of its size; only then does priority decide who is served.",
    )
    active_window_s: float = Field(
        0.5, gt=0, description="A priority that asked this recently is waiting for tokens."
    )
    max_wait_s: float = Field(
        0.5, ge=0, description="Longest wait for a token, even when the deadline allows more."
    )
    lease_max_tokens: int = Field(
        8,
        ge=1,
        description="Most tokens a busy process takes from a pool at once, to spend on "
        "its next calls within lease_s (1: one store round trip per call). Only taken "
        "while the pool is not contended; a token not spent in time is lost, never "
        "granted twice.",
    )
    lease_s: float = Field(
        0.25,
        gt=0,
        description="How long leased tokens may be spent, and the window over "
        "which a process's demand sizes its next lease.",
    )

    @field_validator("pools", mode="before")
    @classmethod
    def _over_default(cls, value: Any, info: ValidationInfo) -> Any:
        default = info.data.get("default")
        if not isinstance(value, Mapping) or not isinstance(default, PoolSettings):
            return value
        merged = {}
        for name, override in value.items():
            if isinstance(override, PoolSettings):
                override = override.model_dump(exclude_unset=True)
            merged[name] = (
                {**default.model_dump(), **override} if isinstance(override, Mapping) else override
            )
        return merged

    def pool_for(self, dependency: str) -> str:
        return self.pool_of.get(dependency, dependency)

    def limits(self, pool: str) -> PoolSettings:
        return self.pools.get(pool, self.default)


@dataclass(frozen=True)
class PoolRule:
    """The bucket arithmetic of one request on one pool (a `BucketRule`).

    State (JSON): `sustained` and `peak` token levels at time `at`; `vt`, the
    virtual time of each priority during contention; `seen`, when each priority
    last asked.
    """

    limits: PoolSettings
    priority: Priority
    settings: QuotaSettings
    #: A lease (several tokens for one process to spend): granted only when the pool
    #: is not contended, so that leases never change who is served under contention.
    lease: bool = False

    def apply(
        self, state: Mapping[str, Any] | None, tokens: float, now: float
    ) -> tuple[dict[str, Any], Take]:
        limits, settings = self.limits, self.settings
        cap_s, cap_p = limits.sustained_capacity, limits.peak_capacity
        if state is None:
            sustained, peak, at = cap_s, cap_p, now
            vt: dict[str, float] = {}
            seen: dict[str, float] = {}
        else:
            sustained, peak, at = state["sustained"], state["peak"], state["at"]
            vt, seen = dict(state["vt"]), dict(state["seen"])
        # A clock that steps back never mints tokens.
        elapsed = max(0.0, now - at)
        sustained = min(cap_s, sustained + elapsed * limits.rate_per_s)
        peak = min(cap_p, peak + elapsed * limits.peak_rate)
        at = max(at, now)
        seen = {p: t for p, t in seen.items() if now - t <= settings.active_window_s}
        seen[self.priority] = now

        def answer(
            take: Take, sustained: float, peak: float, vt: dict[str, float]
        ) -> tuple[dict[str, Any], Take]:
            return {"sustained": sustained, "peak": peak, "at": at, "vt": vt, "seen": seen}, take

        if tokens > min(cap_s, cap_p):
            too_big = Take(False, math.inf, "the request needs more than the pool holds")
            return answer(too_big, sustained, peak, vt)
        # Within a millionth of a token counts as enough: elapsed times computed from
        # a clock reading 1.7e9 are off by ~1e-7 s. The shortfall stays in the level
        # as a tiny debt, so nothing is granted twice over time.
        short_s, short_p = tokens - sustained - _SLACK, tokens - peak - _SLACK
        wait = max(0.0, short_s / limits.rate_per_s, short_p / limits.peak_rate)
        if wait > 0:
            empty = Take(False, wait, f"pool empty, next token in {wait:.3f}s")
            return answer(empty, sustained, peak, vt)
        contended = (
            sustained - tokens < settings.contention_fraction * cap_s
            or peak - tokens < settings.contention_fraction * cap_p
        )
        if not contended:  # everybody is served; the fairness accounts start afresh
            return answer(Take(True), sustained - tokens, peak - tokens, {})
        if self.lease:
            return answer(Take(False, 0.0, "pool contended: no lease"), sustained, peak, vt)
        # Weighted fair queueing between the priorities that are asking: a priority
        # that was idle joins at the front-runner's virtual time (no saved credit).
        base = min((vt[p] for p in seen if p in vt), default=0.0)
        vt = {p: vt.get(p, base) for p in seen}
        mine = vt[self.priority]
        if any(theirs < mine for p, theirs in vt.items() if p != self.priority):
            wait_turn = Take(False, tokens / limits.rate_per_s, "pool contended, another's turn")
            return answer(wait_turn, sustained, peak, vt)
        weight = settings.high_weight if self.priority == "high" else 1.0
        vt[self.priority] = mine + tokens / weight
        lowest = min(vt.values())  # keep the numbers small over a long contention
        vt = {p: v - lowest for p, v in vt.items()}
        return answer(Take(True), sustained - tokens, peak - tokens, vt)


@dataclass(frozen=True)
class Grant:
    """The answer to `acquire`: a token, or a refusal to fall back on."""

    granted: bool
    pool: str
    priority: Priority
    waited_s: float = 0.0
    #: Why it was refused.
    reason: str | None = None
    #: When refused: seconds until a token could be had.
    retry_after_s: float | None = None


class Quota:
    """Every pool, over a shared `CounterStore`; clock and sleep are injected.

    `acquire(dependency, priority, deadline)` before each outbound call; the
    deadline is on this object's clock (wall-clock `time.time` by default, because
    the buckets are shared between processes).
    """

    def __init__(
        self,
        store: CounterStore,
        settings: QuotaSettings,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._store = store
        # Per dependency and priority, its pool and the grant of a token from it (a
        # Grant is frozen: one will do), for the settings they were made under.
        self._granted: dict[tuple[str, Priority], Grant] = {}
        # Per pool, priority and lease or not, its rule (frozen: one will do).
        self._rules: dict[tuple[str, Priority, bool], PoolRule] = {}
        self.settings = settings
        self._clock = clock
        self._sleep = sleep
        # Per pool and priority, the leases taken, the earliest to run out first.
        self._leases: dict[tuple[str, Priority], deque[_Lease]] = {}
        self._asked: dict[str, deque[float]] = {}
        self._no_lease_until: dict[str, float] = {}
        self._locks: dict[tuple[str, Priority], tuple[asyncio.AbstractEventLoop, asyncio.Lock]] = {}
        # Per pool and priority, the lease being taken in the background.
        self._renewing: dict[tuple[str, Priority], asyncio.Task[None]] = {}

    @property
    def settings(self) -> QuotaSettings:
        return self._settings

    @settings.setter
    def settings(self, settings: QuotaSettings) -> None:
        if settings is not getattr(self, "_settings", None):
            self._settings = settings
            self._granted = {}
            self._rules = {}

    async def acquire(
        self, dependency: str, priority: Priority = "normal", deadline: float | None = None
    ) -> Grant:
        """A token from the dependency's pool, waiting only while one can come in time."""
        grant = self.leased(dependency, priority)
        if grant is not None:
            return grant
        return await self.acquire_from_store(dependency, priority, deadline)

    def leased(self, dependency: str, priority: Priority = "normal") -> Grant | None:
        """`acquire` without awaiting: a token this process holds on lease (or any,
        with quotas off), or None. This counts as the ask; after None, call
        `acquire_from_store`, which does not count it again."""
        grant = self._granted.get((dependency, priority))
        if grant is None:
            grant = Grant(True, self._settings.pool_for(dependency), priority)
            self._granted[(dependency, priority)] = grant
        if not self._settings.enabled:
            return grant
        pool = grant.pool
        now = self._clock()
        size = self._lease_size(pool, now)
        if self._spend_leased(pool, priority, now):  # no lock needed: nothing awaits
            self._renew_early(pool, priority, size, now)
            return grant
        return None

    async def acquire_from_store(
        self, dependency: str, priority: Priority = "normal", deadline: float | None = None
    ) -> Grant:
        """The rest of `acquire` once `leased` found no token: a lease or one token
        from the store, waiting only while one can come in time."""
        pool = self.settings.pool_for(dependency)
        if not self.settings.enabled:
            return Grant(True, pool, priority)
        started = self._clock()
        size = self._lease_size(pool, started, ask=False)
        if size > 1 and started >= self._no_lease_until.get(pool, -math.inf):
            # One lease request at a time per pool and priority: the others wait for it
            # and spend from it, so no leased token is left behind by a lease made
            # beside another (a pool under a burst still grants all it holds).
            async with self._lease_lock(pool, priority):
                now = self._clock()
                if self._spend_leased(pool, priority, now) or (
                    await self._lease(pool, priority, size, now)
                    and self._spend_leased(pool, priority, now)
                ):
                    return Grant(True, pool, priority, waited_s=now - started)
        rule = self._rule(pool, priority, lease=False)
        give_up = started + self.settings.max_wait_s
        if deadline is not None:
            give_up = min(give_up, deadline)
        while True:
            now = self._clock()
            if self._spend_leased(pool, priority, now):
                return Grant(True, pool, priority, waited_s=now - started)
            take = await self._store.take(pool, 1.0, now, rule)
            if take.granted:
                return Grant(True, pool, priority, waited_s=now - started)
            if now + take.wait_s > give_up:
                return Grant(
                    False,
                    pool,
                    priority,
                    waited_s=now - started,
                    reason=f"no token from pool {pool!r} in time ({take.reason})",
                    retry_after_s=take.wait_s,
                )
            # At least a millisecond: a wait of a few ulps would not move a wall clock
            # reading 1.7e9 (nor a fake one), and the caller would spin.
            await self._sleep(max(take.wait_s, _MIN_SLEEP_S))

    def _rule(self, pool: str, priority: Priority, *, lease: bool) -> PoolRule:
        rule = self._rules.get((pool, priority, lease))
        if rule is None:
            settings = self._settings
            rule = PoolRule(settings.limits(pool), priority, settings, lease=lease)
            self._rules[(pool, priority, lease)] = rule
        return rule

    def _lease_lock(self, pool: str, priority: Priority) -> asyncio.Lock:
        """The lock of this pool and priority in the running loop (a lock belongs to
        the loop it first waited in; `Sleuth.search_sync` runs a loop per call)."""
        loop = asyncio.get_running_loop()
        held = self._locks.get((pool, priority))
        if held is None or held[0] is not loop:
            held = (loop, asyncio.Lock())
            self._locks[(pool, priority)] = held
        return held[1]

    async def _lease(self, pool: str, priority: Priority, size: int, now: float) -> bool:
        """Take `size` tokens for this process to spend within `lease_s`; refused when
        the pool is contended (or short), after which it takes one token at a time
        for `lease_s`, as before leases."""
        rule = self._rule(pool, priority, lease=True)
        if (await self._store.take(pool, float(size), now, rule)).granted:
            lease = _Lease(size, now + self.settings.lease_s)
            self._leases.setdefault((pool, priority), deque()).append(lease)
            return True
        self._no_lease_until[pool] = now + self.settings.lease_s
        return False

    def _renew_early(self, pool: str, priority: Priority, size: int, now: float) -> None:
        """With one leased token left, take the next lease in the background (as many
        tokens as this process's demand less that one, so that none is likely to
        expire unspent): a busy process's calls then never wait for the store."""
        key = (pool, priority)
        leases = self._leases.get(key)
        if leases and leases[0].tokens > 1 and now < leases[0].until:
            return  # more than one left: the common case, without adding them up
        left = self._leased(pool, priority, now)
        wanted = size - left
        if left > 1 or wanted < 2 or now < self._no_lease_until.get(pool, -math.inf):
            return
        loop = asyncio.get_running_loop()
        under_way = self._renewing.get(key)
        if under_way is not None and not under_way.done() and under_way.get_loop() is loop:
            return
        self._renewing[key] = loop.create_task(self._renew(pool, priority, wanted))

    async def _renew(self, pool: str, priority: Priority, size: int) -> None:
        try:
            async with self._lease_lock(pool, priority):
                now = self._clock()
                if self._leased(pool, priority, now) <= 1:  # not renewed meanwhile
                    await self._lease(pool, priority, size, now)
        except Exception:  # a call that finds no lease takes its token itself
            log.warning("quota lease of pool %r not renewed", pool, exc_info=True)

    async def aclose(self) -> None:
        """Let the leases being taken in the background finish (before the store they
        write to is closed); one that fails is logged, not raised."""
        loop = asyncio.get_running_loop()
        under_way = [task for task in self._renewing.values() if task.get_loop() is loop]
        if under_way:
            await asyncio.gather(*under_way, return_exceptions=True)
        self._renewing.clear()

    def _leased(self, pool: str, priority: Priority, now: float) -> int:
        """Leased tokens that may still be spent."""
        leases = self._leases.get((pool, priority), ())
        return sum(lease.tokens for lease in leases if now < lease.until)

    def _spend_leased(self, pool: str, priority: Priority, now: float) -> bool:
        leases = self._leases.get((pool, priority))
        if not leases:
            return False
        while leases and (leases[0].tokens < 1 or now >= leases[0].until):
            leases.popleft()  # spent, or expired: its tokens are lost
        if not leases:
            return False
        leases[0].tokens -= 1
        return True

    def _lease_size(self, pool: str, now: float, *, ask: bool = True) -> int:
        """How many tokens this process asked the pool for within the last `lease_s`,
        this one included (capped; `ask`: count this one now, else it was counted):
        a process making a call now and then takes one token at a time, a busy one as
        many as it is likely to spend before the lease ends."""
        asked = self._asked.get(pool)
        if asked is None:
            asked = self._asked[pool] = deque()
        since = now - self._settings.lease_s
        while asked and asked[0] <= since:
            asked.popleft()
        if ask:
            asked.append(now)
        return min(self._settings.lease_max_tokens, len(asked))


@dataclass
class _Lease:
    """Tokens this process took from a pool's buckets and may spend until `until`."""

    tokens: int
    until: float
