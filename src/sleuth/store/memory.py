"""The in-process store: breakers, buckets, counters, cache, tasks and keys in dictionaries.

For tests, a single process without a data folder, and `sleuth.testing`. Each method
does its whole read-modify-write without awaiting, so on one event loop nothing can
interleave with it; a lock makes it safe across threads too (`search_sync` callers).
Records are kept serialised, as the other stores keep them, so a caller can never
change stored state by mutating what it was given.

>>> import asyncio
>>> asyncio.run(MemoryStore().add("searches"))
1
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from sleuth.store.base import (
    TERMINAL,
    BreakerRecord,
    BucketRule,
    CacheEntry,
    CacheRead,
    EventRecord,
    KeyRecord,
    NewEvent,
    Take,
    TaskRecord,
    done_events,
    events_after_a_wait,
    finished_status,
)
from sleuth.store.usage_memory import MemoryUsage

__all__ = ["MemoryStore"]

_DAY_S = 86400.0


class MemoryStore(MemoryUsage):
    """Implements `Store` (every store protocol) in memory."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._breakers: dict[str, str] = {}
        self._buckets: dict[str, str] = {}
        self._counters: dict[str, int] = {}
        self._cache: dict[str, tuple[CacheEntry, str]] = {}  # entry, its response as JSON
        # Records are frozen and their JSON parts copied in and out, so sharing is safe.
        self._tasks: dict[str, TaskRecord] = {}
        self._events: dict[str, list[EventRecord]] = {}
        self._keys: dict[str, KeyRecord] = {}

    async def aclose(self) -> None:
        return None

    # BreakerStore

    async def get_breaker(self, provider: str) -> BreakerRecord:
        with self._lock:
            stored = self._breakers.get(provider)
        return BreakerRecord.from_json(stored) if stored else BreakerRecord()

    async def update_breaker(
        self, provider: str, change: Callable[[BreakerRecord], BreakerRecord]
    ) -> BreakerRecord:
        with self._lock:
            stored = self._breakers.get(provider)
            new = change(BreakerRecord.from_json(stored) if stored else BreakerRecord())
            self._breakers[provider] = new.to_json()
        return new

    # CounterStore

    async def take(self, pool: str, tokens: float, now: float, rule: BucketRule) -> Take:
        with self._lock:
            stored = self._buckets.get(pool)
            state, result = rule.apply(json.loads(stored) if stored else None, tokens, now)
            self._buckets[pool] = json.dumps(state)
        return result

    async def add(self, name: str, n: int = 1) -> int:
        with self._lock:
            value = self._counters.get(name, 0) + n
            self._counters[name] = value
        return value

    async def counters(self, prefix: str = "") -> dict[str, int]:
        with self._lock:
            return {name: v for name, v in self._counters.items() if name.startswith(prefix)}

    # CacheStore

    async def get_cached(self, query_hash: str, now: float) -> CacheRead | None:
        with self._lock:
            found = self._cache.get(query_hash)
            if found is None:
                return None
            entry, response = found
            entry = replace(entry, hit_count=entry.hit_count + 1)
            self._cache[query_hash] = (entry, response)
        return CacheRead(
            replace(entry, response=json.loads(response)), fresh=now < entry.expires_at
        )

    async def put_cached(self, entry: CacheEntry) -> bool:
        response = json.dumps(entry.response)
        with self._lock:
            found = self._cache.get(entry.query_hash)
            if found is not None:
                old = found[0]
                if old.complete and not entry.complete:
                    return False
                entry = replace(entry, created_at=old.created_at, hit_count=old.hit_count)
            else:
                entry = replace(entry, hit_count=0)
            self._cache[entry.query_hash] = (replace(entry, response={}), response)
        return True

    async def prune_cache(
        self, now: float, *, min_hits: int = 3, older_than_days: float = 30.0
    ) -> int:
        cutoff = now - older_than_days * _DAY_S
        with self._lock:
            doomed = [
                key
                for key, (entry, _) in self._cache.items()
                if entry.hit_count < min_hits and entry.created_at < cutoff
            ]
            for key in doomed:
                del self._cache[key]
        return len(doomed)

    # TaskStore

    async def create_task(
        self, record: TaskRecord, first: NewEvent | None = None
    ) -> tuple[TaskRecord, bool]:
        events = _copied([first] if first is not None else [])
        with self._lock:
            if record.idempotency_key is not None:
                for existing in self._tasks.values():
                    if (existing.tenant, existing.idempotency_key) == (
                        record.tenant,
                        record.idempotency_key,
                    ):
                        return _copy(existing), False
            self._tasks[record.task_id] = _copy(record)
            self._append(record.task_id, events)
        return record, True

    async def get_task(self, task_id: str) -> TaskRecord | None:
        with self._lock:
            found = self._tasks.get(task_id)
        return _copy(found) if found else None

    async def claim_task(self, worker: str, now: float, lease_s: float) -> TaskRecord | None:
        with self._lock:
            runnable = [
                task
                for task in self._tasks.values()
                if task.status == "pending"
                or (task.status == "running" and (task.lease_until or 0.0) < now)
            ]
            if not runnable:
                return None
            chosen = min(runnable, key=lambda t: (t.status == "running", -t.priority, t.created_at))
            claimed = replace(
                chosen,
                status="running",
                worker=worker,
                lease_until=now + lease_s,
                attempts=chosen.attempts + 1,
                updated_at=now,
                started_at=chosen.started_at if chosen.started_at is not None else now,
            )
            self._tasks[claimed.task_id] = claimed
        return _copy(claimed)

    def _held(self, task_id: str, worker: str) -> TaskRecord | None:
        task = self._tasks.get(task_id)
        if task is None or task.status != "running" or task.worker != worker:
            return None
        return task

    async def renew_lease(
        self, task_id: str, worker: str, now: float, lease_s: float
    ) -> TaskRecord | None:
        with self._lock:
            task = self._held(task_id, worker)
            if task is None:
                return None
            task = replace(task, lease_until=now + lease_s, updated_at=now)
            self._tasks[task_id] = task
        return _copy(task)

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
        last = _copied(done_events(done, now))  # copied first: a bad detail changes nothing
        with self._lock:
            task = self._held(task_id, worker)
            if task is None:
                return False
            self._append(task_id, last)
            self._tasks[task_id] = _copy(
                replace(
                    task,
                    status=finished_status(error),
                    result=result,
                    error=error,
                    finished_at=now,
                    updated_at=now,
                    lease_until=None,
                )
            )
        return True

    async def release_task(self, task_id: str, worker: str, now: float) -> bool:
        with self._lock:
            task = self._held(task_id, worker)
            if task is None:
                return False
            self._tasks[task_id] = replace(
                task, status="pending", worker=None, lease_until=None, updated_at=now
            )
        return True

    async def cancel_task(
        self,
        task_id: str,
        error: Mapping[str, Any],
        now: float,
        *,
        done: tuple[str, Mapping[str, Any]] | None = None,
    ) -> TaskRecord | None:
        last = _copied(done_events(done, now))
        with self._lock:
            task = self._tasks.get(task_id)
            if task is None:
                return None
            if task.status == "pending":
                self._append(task_id, last)
                task = replace(
                    task,
                    status="failed",
                    error=_json_copy(error),
                    finished_at=now,
                    updated_at=now,
                    cancel_requested=True,
                )
            elif task.status not in TERMINAL:
                task = replace(task, cancel_requested=True, updated_at=now)
            self._tasks[task_id] = task
        return _copy(task)

    async def append_event(
        self, task_id: str, kind: str, detail: Mapping[str, Any], at: float
    ) -> int:
        return (await self.append_events(task_id, [(kind, detail, at)]))[0]

    async def append_events(self, task_id: str, events: Sequence[NewEvent]) -> list[int]:
        copied = _copied(events)
        with self._lock:
            return self._append(task_id, copied)

    def _append(self, task_id: str, events: Sequence[NewEvent]) -> list[int]:
        """Append already copied events; the caller holds the lock."""
        if not events:
            return []
        stored = self._events.setdefault(task_id, [])
        first = len(stored) + 1
        stored.extend(
            EventRecord(seq, at, kind, detail)
            for seq, (kind, detail, at) in enumerate(events, first)
        )
        return list(range(first, first + len(events)))

    async def task_events(self, task_id: str, after: int = 0) -> list[EventRecord]:
        with self._lock:
            events = list(self._events.get(task_id, ())[after:])
        return [replace(event, detail=_json_copy(event.detail)) for event in events]

    async def wait_task_events(
        self, task_id: str, after: int = 0, timeout_s: float = 1.0
    ) -> list[EventRecord]:
        return await events_after_a_wait(self, task_id, after, timeout_s)

    async def count_tasks(self, status: str) -> int:
        with self._lock:
            return sum(1 for task in self._tasks.values() if task.status == status)

    async def expire_tasks(self, finished_before: float) -> int:
        with self._lock:
            doomed = [
                task.task_id
                for task in self._tasks.values()
                if task.status in TERMINAL and (task.finished_at or 0.0) < finished_before
            ]
            for task_id in doomed:
                del self._tasks[task_id]
                self._events.pop(task_id, None)
        return len(doomed)

    # KeyStore

    async def put_key(self, record: KeyRecord) -> None:
        with self._lock:
            self._keys[record.key_hash] = record

    async def get_key(self, key_hash: str) -> KeyRecord | None:
        with self._lock:
            return self._keys.get(key_hash)

    async def list_keys(self, tenant: str | None = None) -> list[KeyRecord]:
        with self._lock:
            keys = [k for k in self._keys.values() if tenant is None or k.tenant == tenant]
        return sorted(keys, key=lambda k: k.created_at)

    async def revoke_key(self, prefix: str) -> int:
        with self._lock:
            doomed = [k for k in self._keys.values() if k.prefix == prefix and not k.revoked]
            for key in doomed:
                self._keys[key.key_hash] = replace(key, revoked=True)
        return len(doomed)


def _copied(events: Sequence[NewEvent]) -> list[NewEvent]:
    """The events with their details copied, ready for `_append`."""
    return [(kind, _json_copy(detail), at) for kind, detail, at in events]


def _json_copy(value: Mapping[str, Any]) -> dict[str, Any]:
    copied: dict[str, Any] = json.loads(json.dumps(value))
    return copied


def _copy(task: TaskRecord) -> TaskRecord:
    """The task with its JSON parts copied, as a store that serialises would return it."""
    return replace(
        task,
        request=_json_copy(task.request),
        result=_json_copy(task.result) if task.result is not None else None,
        error=_json_copy(task.error) if task.error is not None else None,
    )
