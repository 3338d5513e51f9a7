"""What the observer counts: Prometheus metrics, and the in-process figures behind the
dashboard (a short time series, recent errors, hot keywords).

Owns the metric names and labels (docs/observability.md lists them; the Grafana
dashboard in deploy/grafana/ queries them) and the arithmetic of the dashboard's
figures. Nothing here decides what a search's status is or reads the store: that is
`sleuth.observe`, which feeds these.

Each `Metrics` has its own `CollectorRegistry`, so two apps (or two tests) in one
process never share a counter; `/metrics` renders the registry of its app's `Sleuth`.
Under `sleuth serve --processes N` the workers count into prometheus_client's
multiprocess files (`PROMETHEUS_MULTIPROC_DIR`, which the supervisor sets), and
`/metrics` renders all of them summed, whichever worker answers the scrape.

>>> window = SearchWindow(bucket_s=10, window_s=60)
>>> for ms in (100.0, 200.0, 300.0):
...     window.add(SearchSample(at=1000.0, latency_ms=ms, status="ok"))
>>> window.snapshot(now=1005.0)["p95_series"]
[{'t': 1000, 'p95_ms': 300.0, 'count': 3}]
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import unicodedata
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from sleuth.contract import Priority
from sleuth.resilience.quota import Grant, Quota, QuotaSettings
from sleuth.store.base import CounterStore

if TYPE_CHECKING:
    from prometheus_client.metrics import MetricWrapperBase

    _Metric = TypeVar("_Metric", bound=MetricWrapperBase)

__all__ = [
    "BREAKER_STATES",
    "DEFAULT_LATENCY_BUCKETS_S",
    "HotKeywords",
    "Metrics",
    "ObservedQuota",
    "SearchSample",
    "SearchWindow",
    "percentile",
]

#: The breaker gauge's values, in the order a failing provider goes through them.
BREAKER_STATES: Mapping[str, int] = {"closed": 0, "half_open": 1, "open": 2}

#: Seconds; search deadlines default to 3 s, so the detail is below that.
DEFAULT_LATENCY_BUCKETS_S: tuple[float, ...] = (
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    0.75,
    1.0,
    1.5,
    2.0,
    3.0,
    5.0,
    10.0,
    30.0,
)


class Metrics:
    """Every Prometheus metric sleuth exports, in a registry of its own."""

    def __init__(self, latency_buckets_s: Sequence[float] = DEFAULT_LATENCY_BUCKETS_S) -> None:
        # Imported here (0.2 s): the settings, which import this module for its
        # defaults, and commands that count nothing do not pay for it.
        from prometheus_client import (
            CollectorRegistry,
            Gauge,
            GCCollector,
            Histogram,
            ProcessCollector,
        )
        from prometheus_client import Counter as PromCounter

        self.registry = CollectorRegistry()
        #: The workers' figures live in files there (set before prometheus_client is
        #: imported, by `sleuth serve --processes N`): `render` sums them.
        self.multiprocess_dir = os.environ.get("PROMETHEUS_MULTIPROC_DIR") or None
        if self.multiprocess_dir is None:
            # Memory and CPU of the process: what an operator looks at next to latency.
            # (Not across processes: they would show the one that answered the scrape.)
            ProcessCollector(registry=self.registry)
            GCCollector(registry=self.registry)
        #: (metric, label values) -> the child `labels` gives: as many as the metric holds.
        self._children: dict[tuple[int, tuple[str, ...]], Any] = {}
        reg = self.registry
        buckets = tuple(latency_buckets_s)
        self.searches = PromCounter(
            "sleuth_searches",
            "Searches by adapter and status (ok, degraded, failed, cached).",
            ["tool_name", "status"],
            registry=reg,
        )
        self.search_seconds = Histogram(
            "sleuth_search_duration_seconds",
            "Time from the request to the answer, per search.",
            ["tool_name", "status"],
            buckets=buckets,
            registry=reg,
        )
        self.provider_seconds = Histogram(
            "sleuth_provider_duration_seconds",
            "One provider's call within a search, retries included.",
            ["provider"],
            buckets=buckets,
            registry=reg,
        )
        self.provider_calls = PromCounter(
            "sleuth_provider_calls",
            "Provider calls by outcome (ok, empty, error, skipped, timeout).",
            ["provider", "outcome"],
            registry=reg,
        )
        self.retries = PromCounter(
            "sleuth_provider_retries",
            "Requests sent again after a failure.",
            ["provider"],
            registry=reg,
        )
        self.errors = PromCounter(
            "sleuth_errors",
            "Errors reported in responses (or raised), by code; provider empty when none.",
            ["code", "provider"],
            registry=reg,
        )
        self.degradations = PromCounter(
            "sleuth_degradations",
            "Steps away from the ideal answer, by kind.",
            ["kind"],
            registry=reg,
        )
        self.cache = PromCounter(
            "sleuth_cache_lookups",
            "Answers by their cache state (hit, miss, stale), as the response says.",
            ["result"],
            registry=reg,
        )
        self.quota_waits = PromCounter(
            "sleuth_quota_waits", "Calls that waited for a quota token.", ["pool"], registry=reg
        )
        self.quota_wait_seconds = PromCounter(
            "sleuth_quota_wait_seconds",
            "Time spent waiting for quota tokens.",
            ["pool"],
            registry=reg,
        )
        self.quota_rejections = PromCounter(
            "sleuth_quota_rejections",
            "Calls refused because no token could come before the deadline.",
            ["pool"],
            registry=reg,
        )
        self.breaker_state = Gauge(
            "sleuth_breaker_state",
            "Circuit breaker per provider: 0 closed, 1 half_open, 2 open (read on scrape).",
            ["provider"],
            # Read from the shared store on scrape (these three gauges): the latest
            # reading, by whichever process, is the answer.
            multiprocess_mode="mostrecent",
            registry=reg,
        )
        self.queue_depth = Gauge(
            "sleuth_task_queue_depth",
            "Pending tasks (read from the store on scrape).",
            multiprocess_mode="mostrecent",
            registry=reg,
        )
        self.tasks = Gauge(
            "sleuth_tasks",
            "Tasks in the store by status (read on scrape).",
            ["status"],
            multiprocess_mode="mostrecent",
            registry=reg,
        )

    def child(self, metric: _Metric, *values: str) -> _Metric:
        """`metric.labels(*values)`, the same child each time, kept here: `labels` checks
        its arguments and takes a lock on every call (3-10 us; a search counts nine)."""
        key = (id(metric), values)
        found: _Metric | None = self._children.get(key)
        if found is None:
            found = self._children[key] = metric.labels(*values)
        return found

    def render(self) -> bytes:
        """The Prometheus text exposition of every metric (of every worker process,
        summed, under `--processes N`)."""
        from prometheus_client import CollectorRegistry, generate_latest
        from prometheus_client.multiprocess import MultiProcessCollector

        if self.multiprocess_dir is None:
            return generate_latest(self.registry)
        merged = CollectorRegistry()
        MultiProcessCollector(merged, path=self.multiprocess_dir)  # type: ignore[no-untyped-call]
        return generate_latest(merged)


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (`q` in 0..1) of unsorted values; None when empty.

    >>> percentile([5.0, 1.0, 3.0, 2.0, 4.0], 0.95), percentile([], 0.5)
    (5.0, None)
    """
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


@dataclass(frozen=True)
class SearchSample:
    """One finished search, as the dashboard counts it."""

    at: float
    latency_ms: float
    status: str
    #: Every error code the response reported (a failed search: its own code).
    error_codes: tuple[str, ...] = ()
    #: Each provider called and its outcome (none for a cached answer).
    providers: Mapping[str, str] = field(default_factory=dict)


@dataclass
class _Bucket:
    start: float
    latencies: list[float] = field(default_factory=list)
    seen: int = 0
    statuses: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    failed_calls: Counter[str] = field(default_factory=Counter)


class SearchWindow:
    """The last `window_s` seconds of searches in `bucket_s` buckets: enough for a p95
    line, a failure rate and shares, in bounded memory (each bucket keeps its latest
    `max_samples` latencies)."""

    def __init__(self, *, bucket_s: int = 10, window_s: int = 3600, max_samples: int = 500):
        self.bucket_s = bucket_s
        self.window_s = window_s
        self.max_samples = max_samples
        self._buckets: deque[_Bucket] = deque()
        # Searches finish on the event loop, but `search_sync` may run in other threads.
        self._lock = threading.Lock()

    def add(self, sample: SearchSample) -> None:
        start = math.floor(sample.at / self.bucket_s) * self.bucket_s
        with self._lock:
            bucket = self._bucket(start)
            bucket.seen += 1
            if len(bucket.latencies) < self.max_samples:
                bucket.latencies.append(sample.latency_ms)
            else:  # a ring: the bucket's latest samples, ten seconds are recent enough
                bucket.latencies[bucket.seen % self.max_samples] = sample.latency_ms
            bucket.statuses[sample.status] += 1
            bucket.errors.update(sample.error_codes)
            for provider, outcome in sample.providers.items():
                bucket.calls[provider] += 1
                if outcome in ("error", "timeout"):
                    bucket.failed_calls[provider] += 1
            self._prune(sample.at)

    def _bucket(self, start: float) -> _Bucket:
        if self._buckets and self._buckets[-1].start == start:
            return self._buckets[-1]
        for bucket in reversed(self._buckets):  # a late sample (clock skew, long search)
            if bucket.start == start:
                return bucket
        bucket = _Bucket(start)
        self._buckets.append(bucket)
        if len(self._buckets) > 1 and self._buckets[-2].start > start:
            self._buckets = deque(sorted(self._buckets, key=lambda b: b.start))
        return bucket

    def _prune(self, now: float) -> None:
        while self._buckets and self._buckets[0].start <= now - self.window_s - self.bucket_s:
            self._buckets.popleft()

    def snapshot(self, now: float) -> dict[str, Any]:
        """The window's figures (the `/dashboard/data` fields documented there)."""
        with self._lock:
            self._prune(now)
            buckets = [b for b in self._buckets if b.start > now - self.window_s - self.bucket_s]
            statuses: Counter[str] = Counter()
            errors: Counter[str] = Counter()
            calls: Counter[str] = Counter()
            failed_calls: Counter[str] = Counter()
            latencies: list[float] = []
            series = []
            for bucket in buckets:
                statuses.update(bucket.statuses)
                errors.update(bucket.errors)
                calls.update(bucket.calls)
                failed_calls.update(bucket.failed_calls)
                latencies.extend(bucket.latencies)
                p95 = percentile(bucket.latencies, 0.95)
                if p95 is not None:
                    series.append(
                        {"t": bucket.start, "p95_ms": round(p95, 1), "count": bucket.seen}
                    )
        searches = sum(statuses.values())
        total_calls = sum(calls.values())
        return {
            "searches": searches,
            "statuses": {s: statuses.get(s, 0) for s in ("ok", "degraded", "failed", "cached")},
            "failure_rate": round(statuses["failed"] / searches, 4) if searches else 0.0,
            "p50_ms": _rounded(percentile(latencies, 0.5)),
            "p95_ms": _rounded(percentile(latencies, 0.95)),
            "p95_series": series,
            "error_codes": [{"code": c, "count": n} for c, n in _top(errors)],
            "providers": [
                {
                    "provider": name,
                    "calls": n,
                    "share": round(n / total_calls, 4),
                    "failed": failed_calls.get(name, 0),
                }
                for name, n in _top(calls)
            ],
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


def _top(counts: Counter[str], n: int | None = None) -> list[tuple[str, int]]:
    """Most common first; ties by name, so the order is stable between refreshes."""
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return ordered if n is None else ordered[:n]


class HotKeywords:
    """Counts of search keywords in this process, in bounded memory: past `capacity`
    distinct keywords, the rarer half is forgotten (a hot keyword comes back at once).

    >>> hot = HotKeywords(capacity=100)
    >>> hot.add(["Python", "3.13"]); hot.add(["python", "jit"])
    >>> hot.top(2)
    [('python', 2), ('3.13', 1)]
    """

    def __init__(self, capacity: int = 5000) -> None:
        self.capacity = capacity
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, keywords: Iterable[str]) -> None:
        with self._lock:
            for keyword in keywords:
                word = unicodedata.normalize("NFKC", keyword).strip().casefold()
                if word:
                    self._counts[word] += 1
            if len(self._counts) > self.capacity:
                keep = self._counts.most_common(self.capacity // 2)
                self._counts = Counter(dict(keep))

    def top(self, n: int) -> list[tuple[str, int]]:
        with self._lock:
            return _top(self._counts, n)


#: The sleeps of the `ObservedQuota.acquire_from_store` running in this task (each provider call
#: runs in its own task, so concurrent acquires never see each other's).
_SLEPT: ContextVar[list[float] | None] = ContextVar("sleuth_quota_slept", default=None)


class ObservedQuota(Quota):
    """`Quota` that counts, per pool, the calls that waited for a token and those
    refused. A wait is a sleep inside `acquire`, not elapsed time: a garbage
    collection between two clock reads is not a quota wait."""

    def __init__(
        self,
        store: CounterStore,
        settings: QuotaSettings,
        *,
        metrics: Metrics | None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        super().__init__(store, settings, sleep=self._counted)
        self._metrics = metrics
        self._really_sleep = sleep

    async def _counted(self, seconds: float) -> None:
        slept = _SLEPT.get()
        if slept is not None:
            slept.append(seconds)
        await self._really_sleep(seconds)

    async def acquire_from_store(
        self, dependency: str, priority: Priority = "normal", deadline: float | None = None
    ) -> Grant:
        # A leased token (`leased`) never waits nor is refused: only this part counts.
        slept: list[float] = []
        token = _SLEPT.set(slept)
        try:
            grant = await super().acquire_from_store(dependency, priority, deadline)
        finally:
            _SLEPT.reset(token)
        metrics = self._metrics
        if metrics is not None:
            if slept:
                metrics.quota_waits.labels(grant.pool).inc()
                metrics.quota_wait_seconds.labels(grant.pool).inc(grant.waited_s)
            if not grant.granted:
                metrics.quota_rejections.labels(grant.pool).inc()
        return grant
