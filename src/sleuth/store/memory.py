"""The in-process store: breakers, buckets, counters and cache in dictionaries.

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
from collections.abc import Callable
from dataclasses import replace

from sleuth.store.base import BreakerRecord, BucketRule, CacheEntry, CacheRead, Take

__all__ = ["MemoryStore"]

_DAY_S = 86400.0


class MemoryStore:
    """Implements `Store` (breaker, counter and cache protocols) in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._breakers: dict[str, str] = {}
        self._buckets: dict[str, str] = {}
        self._counters: dict[str, int] = {}
        self._cache: dict[str, tuple[CacheEntry, str]] = {}  # entry, its response as JSON

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
