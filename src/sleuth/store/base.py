"""The store protocols, the records they carry, and the cache's key and lifetimes.

Resilience state lives behind three narrow protocols so that one process (memory),
several processes on one host (SQLite) and several replicas (Redis) share it
the same way; one contract suite (`tests/store/test_store_contract.py`) runs against
every implementation.

    BreakerStore   a provider's circuit-breaker record, read and changed atomically
    CounterStore   token buckets (`take`) and plain counters (`add`) for the dashboard
    CacheStore     the response cache: get (counts a hit), put, prune
    TaskStore      asynchronous tasks, their leases and progress events
    KeyStore       API keys (only their hashes) and the tenant each belongs to
    UsageStore     the usage ledger and the audit log, append-only (`usage_records.py`)

Stores never read a clock: every method that depends on time takes `now`, from the
clock of the policy that calls it (wall-clock seconds, `time.time`, because the state
is shared between processes and hosts, whose monotonic clocks do not agree). Stores
hold no policy either: a breaker or bucket passes a pure function (`change`,
`BucketRule.apply`) that the store runs inside its atomic section, so the arithmetic
lives once, in `resilience/`, and each store only has to make it atomic.

>>> key = cache_key(SearchRequest(query="  Python   3.13 "))
>>> key == cache_key(SearchRequest(query="python 3.13"))
True
>>> CacheSettings().ttl_for("past_week", complete=True)
3600.0
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

from pydantic import BaseModel, ConfigDict, Field

from sleuth.contract import SearchRequest, SearchResponse, TimeRange
from sleuth.store.usage_records import UsageStore

__all__ = [
    "BreakerRecord",
    "BreakerState",
    "BreakerStore",
    "BucketRule",
    "CacheEntry",
    "CacheRead",
    "CacheSettings",
    "CacheStore",
    "CacheTtl",
    "CounterStore",
    "EventRecord",
    "KeyRecord",
    "KeyRole",
    "KeyStore",
    "NewEvent",
    "Store",
    "Take",
    "TaskRecord",
    "TaskState",
    "TaskStore",
    "WindowCall",
    "cache_key",
    "done_events",
    "entry_for",
    "events_after_a_wait",
    "finished_status",
]

BreakerState = Literal["closed", "open", "half_open"]
KeyRole = Literal["tenant", "admin"]

#: Bumped when the normalisation of `cache_key` changes, so old entries stop matching.
_KEY_VERSION = 1


# --- circuit breaker -------------------------------------------------------------


class WindowCall(NamedTuple):
    """One call in a breaker's window: when it ended and how (`code` is the error's,
    "" for a success)."""

    at: float
    failed: bool
    code: str = ""
    unexpected: bool = False


@dataclass(frozen=True)
class BreakerRecord:
    """One provider's breaker, as stored: small and JSON-serialisable.

    `calls` is the sliding window, oldest first, already trimmed to the configured
    size and age by the breaker. `open_until` is when an open breaker lets a probe
    through; `openings` counts the openings since the breaker last closed, so each
    failed probe rests the provider longer. `closed_at` is when a probe last closed
    the breaker (None until one has): a success made before it belongs to a window
    that the opening forgot.
    """

    state: BreakerState = "closed"
    opened_at: float | None = None
    probe_at: float | None = None
    calls: tuple[WindowCall, ...] = ()
    reason: str = ""
    closed_at: float | None = None
    open_until: float | None = None
    openings: int = 0

    def to_json(self) -> str:
        return json.dumps(
            {
                "state": self.state,
                "opened_at": self.opened_at,
                "probe_at": self.probe_at,
                "calls": [
                    [call.at, int(call.failed), call.code, int(call.unexpected)]
                    for call in self.calls
                ],
                "reason": self.reason,
                "closed_at": self.closed_at,
                "open_until": self.open_until,
                "openings": self.openings,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, text: str) -> BreakerRecord:
        data = json.loads(text)
        opened_at = data["opened_at"]
        open_until = data.get("open_until")
        if open_until is None and data["state"] == "open" and opened_at is not None:
            open_until = opened_at + _OLD_OPEN_FOR_S  # a record of an older version
        return cls(
            state=data["state"],
            opened_at=opened_at,
            probe_at=data["probe_at"],
            # older versions stored [when, failed] only
            calls=tuple(
                WindowCall(float(call[0]), bool(call[1]), *_code_and_kind(call[2:]))
                for call in data["calls"]
            ),
            reason=data["reason"],
            closed_at=data.get("closed_at"),
            open_until=open_until,
            openings=int(data.get("openings", 0)),
        )


#: How long older versions kept every breaker open (their records name no end).
_OLD_OPEN_FOR_S = 300.0


def _code_and_kind(rest: list[Any]) -> tuple[str, bool]:
    return (str(rest[0]), bool(rest[1])) if len(rest) >= 2 else ("", False)


class BreakerStore(Protocol):
    async def get_breaker(self, provider: str) -> BreakerRecord:
        """The provider's record; a closed, empty one when none was stored."""
        ...

    async def update_breaker(
        self, provider: str, change: Callable[[BreakerRecord], BreakerRecord]
    ) -> BreakerRecord:
        """Replace the record with `change(record)` atomically and return the new one.

        No other update of the same provider (in any process sharing the store)
        runs between the read and the write. `change` must be pure and quick: a
        store may run it in a worker thread, inside a transaction, or more than once.
        """
        ...


# --- token buckets and counters --------------------------------------------------


@dataclass(frozen=True)
class Take:
    """The answer to one `take`: granted, or refused with how long to wait."""

    granted: bool
    #: When refused: seconds until the same take could succeed (inf: never).
    wait_s: float = 0.0
    reason: str = ""


class BucketRule(Protocol):
    """The arithmetic of a bucket; the store supplies the state and the atomicity.

    `state` is what the previous `apply` returned for this pool (None at first);
    it must be JSON-serialisable. Pure: no clock, no I/O.
    """

    def apply(
        self, state: Mapping[str, Any] | None, tokens: float, now: float
    ) -> tuple[dict[str, Any], Take]: ...


class CounterStore(Protocol):
    async def take(self, pool: str, tokens: float, now: float, rule: BucketRule) -> Take:
        """Atomically apply `rule` to the pool's bucket and store the new state.

        Two callers (threads, processes, replicas) never both spend the same token.
        """
        ...

    async def add(self, name: str, n: int = 1) -> int:
        """Add `n` to a counter (created at 0) and return its new value."""
        ...

    async def counters(self, prefix: str = "") -> dict[str, int]:
        """Every counter whose name starts with `prefix`."""
        ...


# --- response cache --------------------------------------------------------------


@dataclass(frozen=True)
class CacheEntry:
    """One cached answer. Times are wall-clock seconds since the epoch."""

    query_hash: str
    query: str
    result_summary: str
    source_urls: tuple[str, ...]
    #: The full `SearchResponse` as JSON (what a cache hit returns).
    response: Mapping[str, Any]
    #: False when some provider failed: a partial answer, kept only briefly.
    complete: bool
    created_at: float
    updated_at: float
    expires_at: float
    #: Reads that found this entry (fresh or stale); writes never count.
    hit_count: int = 0


@dataclass(frozen=True)
class CacheRead:
    entry: CacheEntry
    #: False once `expires_at` has passed; a stale entry is still returned, for the
    #: degradation ladder to fall back on when every provider fails.
    fresh: bool


class CacheStore(Protocol):
    async def get_cached(self, query_hash: str, now: float) -> CacheRead | None:
        """The entry and whether it is fresh; counts one hit when found."""
        ...

    async def put_cached(self, entry: CacheEntry) -> bool:
        """Store an answer; False when refused.

        A partial entry never replaces a complete one (fresh or stale). Replacing
        keeps the existing `created_at` and `hit_count`; `entry.hit_count` is ignored.
        """
        ...

    async def prune_cache(
        self, now: float, *, min_hits: int = 3, older_than_days: float = 30.0
    ) -> int:
        """Delete entries read fewer than `min_hits` times and created more than
        `older_than_days` ago; return how many. Safe while the service runs."""
        ...


# --- asynchronous tasks ----------------------------------------------------------

TaskState = Literal["pending", "running", "success", "failed"]
TERMINAL: frozenset[str] = frozenset({"success", "failed"})


@dataclass(frozen=True)
class TaskRecord:
    """One task as stored. Times are wall-clock seconds since the epoch.

    A worker owns a running task while its lease lasts (`lease_until`) and renews it
    as it works; a task whose lease ran out belongs to nobody (its worker died) and is
    claimed again. `attempts` counts claims, so a task run twice shows 2.
    """

    task_id: str
    tenant: str
    #: The `SearchRequest`, as JSON.
    request: Mapping[str, Any]
    status: TaskState = "pending"
    created_at: float = 0.0
    updated_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    #: The `SearchResponse` (on success) or the `ErrorInfo` (on failure), as JSON.
    result: Mapping[str, Any] | None = None
    error: Mapping[str, Any] | None = None
    attempts: int = 0
    worker: str | None = None
    lease_until: float | None = None
    cancel_requested: bool = False
    #: A retried submit with the same key (and tenant) gets this task back.
    idempotency_key: str | None = None
    #: Higher first; then the oldest.
    priority: int = 0


@dataclass(frozen=True)
class EventRecord:
    """One progress event of a task; `seq` rises by one per task from 1."""

    seq: int
    at: float
    kind: str
    detail: Mapping[str, Any]


#: A progress event to append: (kind, detail, at).
NewEvent = tuple[str, Mapping[str, Any], float]


class TaskStore(Protocol):
    """Tasks, their leases and their progress events.

    Every terminal transition (`finish_task`, `cancel_task` of a pending task) can
    append the task's last event in the same atomic step (`done`), so a store never
    holds that event for a task that is not terminal, nor a terminal task without it,
    and a task (finishing once) gets it once.
    """

    async def create_task(
        self, record: TaskRecord, first: NewEvent | None = None
    ) -> tuple[TaskRecord, bool]:
        """Store a new task, or, when the tenant already has a task with the same
        `idempotency_key`, return that one instead: (record, created). A new task gets
        `first` as its first event in the same atomic step, so a worker that claims it
        at once appends after it (an existing task gets nothing)."""
        ...

    async def get_task(self, task_id: str) -> TaskRecord | None: ...

    async def claim_task(self, worker: str, now: float, lease_s: float) -> TaskRecord | None:
        """Take the next runnable task for `worker`, atomically: the highest-priority,
        oldest pending one, else a running one whose lease has run out. It becomes
        running, leased until `now + lease_s`, with `attempts` one higher. Two workers
        never claim the same task while its lease lasts."""
        ...

    async def renew_lease(
        self, task_id: str, worker: str, now: float, lease_s: float
    ) -> TaskRecord | None:
        """Extend `worker`'s lease; None when the worker no longer holds the task
        (it finished, or another worker claimed it after the lease ran out)."""
        ...

    async def finish_task(
        self,
        task_id: str,
        worker: str,
        now: float,
        *,
        result: Mapping[str, Any] | None = None,
        error: Mapping[str, Any] | None = None,
        done: tuple[str, Mapping[str, Any]] | None = None,
    ) -> bool:
        """Make a running task held by `worker` terminal: success with `result`, or
        failed with `error`, and append `done` (kind, detail; at `now`) as its next
        event in the same atomic step. False (and no change, no event) when `worker`
        does not hold it: a task finishes once, whoever ran it."""
        ...

    async def release_task(self, task_id: str, worker: str, now: float) -> bool:
        """Give a running task held by `worker` back to the queue (pending), as on a
        graceful shutdown; False when `worker` does not hold it."""
        ...

    async def cancel_task(
        self,
        task_id: str,
        error: Mapping[str, Any],
        now: float,
        *,
        done: tuple[str, Mapping[str, Any]] | None = None,
    ) -> TaskRecord | None:
        """Cancel a task: a pending one fails at once with `error` (and `done` is
        appended at `now` in the same atomic step); a running one is marked
        `cancel_requested` for its worker to stop; a finished one is left as it is.
        Returns the task as it now stands, or None when there is no such task."""
        ...

    async def append_event(
        self, task_id: str, kind: str, detail: Mapping[str, Any], at: float
    ) -> int:
        """Record a progress event; returns its `seq`."""
        ...

    async def append_events(self, task_id: str, events: Sequence[NewEvent]) -> list[int]:
        """Record several progress events atomically and in order; returns their
        `seq`s, which are consecutive: no other append (from any process) comes
        between them."""
        ...

    async def task_events(self, task_id: str, after: int = 0) -> list[EventRecord]:
        """The task's events with `seq > after`, in order."""
        ...

    async def wait_task_events(
        self, task_id: str, after: int = 0, timeout_s: float = 1.0
    ) -> list[EventRecord]:
        """Like `task_events`, but when there is none yet, wait up to `timeout_s` for
        one appended by any process; [] when none came. A store that cannot be woken
        by other processes (SQLite) looks again once the time is up."""
        ...

    async def count_tasks(self, status: TaskState) -> int:
        """How many tasks are in `status` (the queue depth, for `pending`)."""
        ...

    async def expire_tasks(self, finished_before: float) -> int:
        """Delete finished tasks (and their events) that finished before the time
        given; returns how many. Pending and running tasks are never expired."""
        ...


def finished_status(error: Mapping[str, Any] | None) -> TaskState:
    """The status `finish_task` gives: failed when there is an error, else success."""
    return "failed" if error is not None else "success"


def done_events(done: tuple[str, Mapping[str, Any]] | None, at: float) -> list[NewEvent]:
    """A terminal transition's `done` (kind, detail) as the events it appends at `at`."""
    return [] if done is None else [(done[0], done[1], at)]


async def events_after_a_wait(
    store: TaskStore, task_id: str, after: int, timeout_s: float
) -> list[EventRecord]:
    """`wait_task_events` for a store no other process can wake (SQLite, memory): the
    events there are, else those there are once `timeout_s` has passed."""
    found = await store.task_events(task_id, after)
    if found:
        return found
    await asyncio.sleep(timeout_s)
    return await store.task_events(task_id, after)


# --- API keys --------------------------------------------------------------------


@dataclass(frozen=True)
class KeyRecord:
    """An API key as stored: the SHA-256 of the key, never the key itself."""

    key_hash: str
    tenant: str
    #: The key's first characters, shown so that a person can tell keys apart.
    prefix: str
    created_at: float
    name: str = ""
    revoked: bool = False
    #: "admin": an operator's key, which sees every tenant's figures (the dashboard's
    #: global view, /metrics); "tenant": only its own tenant's.
    role: KeyRole = "tenant"


class KeyStore(Protocol):
    async def put_key(self, record: KeyRecord) -> None: ...

    async def get_key(self, key_hash: str) -> KeyRecord | None: ...

    async def list_keys(self, tenant: str | None = None) -> list[KeyRecord]: ...

    async def revoke_key(self, prefix: str) -> int:
        """Revoke every key whose prefix is `prefix`; returns how many."""
        ...


class Store(BreakerStore, CounterStore, CacheStore, TaskStore, KeyStore, UsageStore, Protocol):
    """Everything sleuth keeps, in one backend."""

    async def aclose(self) -> None: ...


# --- cache policy: key, lifetimes, entries ---------------------------------------


class CacheTtl(BaseModel):
    """How long an answer stays fresh, by the request's `time_range`: the narrower
    the range, the sooner new results appear, so the sooner the answer goes stale."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    any: float = Field(24 * 3600.0, gt=0, description="Seconds; no time range: 24 h.")
    past_year: float = Field(12 * 3600.0, gt=0, description="Seconds for past_year: 12 h.")
    past_month: float = Field(6 * 3600.0, gt=0, description="Seconds for past_month: 6 h.")
    past_week: float = Field(3600.0, gt=0, description="Seconds for past_week: 1 h.")


class CacheSettings(BaseModel):
    """The `cache:` section of sleuth.yaml."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = Field(True, description="Answer repeated queries from the local cache.")
    ttl_s: CacheTtl = Field(default_factory=CacheTtl, description="Freshness by time_range.")
    partial_ttl_s: float = Field(
        300.0,
        gt=0,
        description="Freshness of a partial answer (some providers failed), if shorter.",
    )
    prune_min_hits: int = Field(
        3, ge=0, description="`sleuth cache prune` deletes entries read fewer times than this..."
    )
    prune_older_than_days: float = Field(
        30.0, ge=0, description="...and created more than this many days ago."
    )

    def ttl_for(self, time_range: TimeRange, *, complete: bool) -> float:
        ttl = float(getattr(self.ttl_s, time_range))
        return ttl if complete else min(ttl, self.partial_ttl_s)


def _normal_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def cache_key(request: SearchRequest, chain: Sequence[str] | None = None) -> str:
    """`query_hash`: SHA-256 of the request's normalised, answer-shaping fields.

    The query (and each context turn) is NFKC-normalised, whitespace-collapsed and
    case-folded; lists are de-duplicated and sorted. `context` is part of the key
    because it changes what an elliptical query means ("那明天呢"). `priority` and
    `no_cache` are not: they change how, not what, sleuth answers. A request that
    names no providers is keyed with `chain` (the configured one) when given, so a
    changed chain does not answer from another chain's results.

    >>> a = SearchRequest(query="Rust", domain_filter=["b.org", "a.org"], include=["url"])
    >>> b = SearchRequest(query="rust", domain_filter=["a.org", "b.org"], include=["url"])
    >>> cache_key(a) == cache_key(b), len(cache_key(a))
    (True, 64)
    """
    providers = request.providers if request.providers is not None else chain
    shape = {
        "v": _KEY_VERSION,
        "query": _normal_text(request.query),
        "context": [_normal_text(turn) for turn in request.context],
        "time_range": request.time_range,
        "domain_filter": sorted(set(request.domain_filter)),
        "providers": sorted(set(providers)) if providers is not None else None,
        "include": sorted(set(request.include)),
        "max_results": request.max_results,
    }
    canonical = json.dumps(shape, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def entry_for(
    request: SearchRequest,
    response: SearchResponse,
    *,
    complete: bool,
    now: float,
    settings: CacheSettings,
    chain: Sequence[str] | None = None,
    source_urls: Sequence[str] | None = None,
) -> CacheEntry:
    """The cache entry for an answer: keyed by `cache_key`, fresh for `ttl_for`.

    `result_summary` is the summary's sentences, else the result titles; the source
    URLs are the results' `url` and `sources` (when projected) unless given.
    """
    summary = " ".join(sentence.text for sentence in response.summary)
    if not summary:
        summary = "; ".join(item.title for item in response.results if item.title)
    if source_urls is None:
        found: list[str] = []
        for item in response.results:
            found.extend(url for url in [item.url, *(item.sources or [])] if url)
        source_urls = list(dict.fromkeys(found))
    return CacheEntry(
        query_hash=cache_key(request, chain),
        query=request.query,
        result_summary=summary,
        source_urls=tuple(source_urls),
        response=response.model_dump(mode="json"),
        complete=complete,
        created_at=now,
        updated_at=now,
        expires_at=now + settings.ttl_for(request.time_range, complete=complete),
    )
