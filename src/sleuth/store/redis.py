"""The scale-out store: breakers, quota buckets, counters, the response cache, tasks
and API keys in Redis (7 or later) or Valkey, shared by every sleuth replica.

Key layout (`ns` is the namespace, `sleuth` by default; `{...}` is a Redis Cluster
hash tag: the keys a script touches together always share one, so every script runs
on one slot and the store works on a cluster as on a single server):

    ns:{breaker:<provider>}       HASH  s: BreakerRecord JSON, t: CAS token       TTL state_ttl_s
    ns:{bucket:<pool>}            HASH  s: the bucket rule's state JSON, t        TTL state_ttl_s
    ns:counters                   HASH  counter name -> integer                   no TTL
    ns:{cache:<query_hash>}       HASH  query, summary, urls, response, complete,
                                        created, updated, expires, hits           TTL see below
    ns:cache:index                ZSET  query_hash by its earliest created_at     trimmed by prune
    ns:{tasks:<n>}:...            one task shard: the queue, the tasks and their events
                                  (see `redis_tasks.py`; the Lua scripts are in `redis_lua.py`)
    ns:{idem:<sha256>}            STRING a tenant's idempotency key -> task id    TTL once finished
    ns:{keys}:key:<key_hash>      HASH  tenant, prefix, name, created, revoked    no TTL
    ns:{keys}:all|tenant:<t>|prefix:<p>   SET of key hashes (the lookups)         no TTL
    ns:{usage}:...                the usage ledger and the audit log (`usage_redis.py`)

Breakers and buckets: optimistic compare-and-set. The arithmetic is a pure Python
function (`change`, `BucketRule.apply`, with priorities and fair queueing in the
quota rule) that must live once, in `resilience/`; rewriting it in Lua would make two
implementations to keep in step. So the store reads the record with a random token,
computes in Python, and writes with a small Lua script that sets the new state only
if the token is still the one read; otherwise the script answers the current state
and the function runs again on it. A token rather than a counter: a record that
expired and was created again can never match a token read before (no ABA). Why not
WATCH/MULTI/EXEC: the same optimistic scheme, but it pins a connection per caller and
costs three round trips (WATCH+HGET, MULTI..EXEC) where the script costs one; and a
script is atomic on a cluster slot as well. Two things keep the round trips down:
each handle remembers the last state it saw and computes on it speculatively (one
round trip when no other replica wrote in between, two when one did), and calls on
one handle for one key queue on an in-process lock, so only replicas, never the
coroutines of one process, race each other. Every write refreshes the key's TTL;
an idle bucket or breaker that expires comes back full or closed, as it would be.

Cache: a hash per answer. A read is one script (count the hit, return the entry);
a write is one script (refuse a partial answer over a complete one, keep `created`
and `hits`) pipelined with the index update. An entry lives `expires_at - updated_at`
(its freshness, measured from the write, so on the caller's clock and not Redis's)
plus `cache_keep_s`, because the degradation ladder still answers from a stale entry
when every provider fails. `prune_cache` walks `cache:index` (candidates by creation
time; each entry's own fields decide, in a per-entry script) instead of SCAN; the
index is a hint that prune repairs, and the TTLs are the backstop.

Clocks: like every store, this one never reads a clock; `now` comes from the caller
(wall-clock), so replicas' clocks must agree to well within a lease or a bucket's
refill time (NTP). Only TTLs are relative to Redis's clock.

Memory: every key that can grow without bound expires (cache entries, finished tasks
and their events, idle buckets and breakers); with `maxmemory-policy volatile-lru`
Redis evicts only those, never a pending task.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError

from sleuth.store import redis_lua as lua
from sleuth.store.base import BreakerRecord, BucketRule, CacheEntry, CacheRead, KeyRecord, Take
from sleuth.store.redis_lua import Script, pairs
from sleuth.store.redis_tasks import RedisTasks
from sleuth.store.usage_redis import RedisUsage

__all__ = ["RedisStore"]

_DAY_S = 86400.0
_T = TypeVar("_T")
#: Attempts of one compare-and-set; each failure means another replica wrote first.
_MAX_SWAPS = 200
#: The longest pause between two lost compare-and-set rounds, in milliseconds.
_BACKOFF_CAP_MS = 20
_NAMESPACE = re.compile(r"^[A-Za-z0-9_.:-]+$")


class RedisStore(RedisTasks, RedisUsage):
    """Implements `Store` over Redis, for several replicas sharing one state.

    Open one per event loop (the client's connections belong to the loop), e.g.::

        store = RedisStore("redis://127.0.0.1:6379/0", namespace="sleuth")
        try:
            await store.add("searches")
        finally:
            await store.aclose()
    """

    def __init__(
        self,
        url: str,
        *,
        namespace: str = "sleuth",
        cluster: bool = False,
        task_shards: int = 1,
        task_ttl_s: float = 7 * _DAY_S,
        cache_keep_s: float = 30 * _DAY_S,
        state_ttl_s: float = 7 * _DAY_S,
        prune_batch: int = 500,
    ) -> None:
        if not _NAMESPACE.match(namespace):
            # A brace would become the hash tag of every key: one cluster slot for all.
            raise ValueError(f"namespace {namespace!r}: use letters, digits and _ . : - only")
        if task_shards < 1:
            raise ValueError("task_shards must be at least 1")
        self._redis: Redis | RedisCluster = (
            RedisCluster.from_url(url, decode_responses=True)
            if cluster
            else Redis.from_url(url, decode_responses=True)
        )
        self._ns = namespace
        self._shards = task_shards
        self._task_ttl_ms = _ms(task_ttl_s)
        self._task_ttl_s = task_ttl_s
        self._cache_keep_s = cache_keep_s
        self._state_ttl_ms = _ms(state_ttl_s)
        self._prune_batch = prune_batch
        # The last (token, state) this handle saw per record: the speculative start.
        self._seen: dict[str, tuple[str, str | None]] = {}
        # Writes this handle made per record: a read that overlapped one is older than
        # what `_seen` holds, and must not replace it.
        self._writes: defaultdict[str, int] = defaultdict(int)
        self._locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    @property
    def namespace(self) -> str:
        """The prefix of every key of this store."""
        return self._ns

    async def aclose(self) -> None:
        await self._redis.aclose()

    # plumbing

    async def _eval(self, script: Script, keys: Sequence[str], args: Sequence[Any]) -> Any:
        try:
            return await self._redis.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
        except NoScriptError:  # a new or restarted server: EVAL also caches the script
            return await self._redis.execute_command("EVAL", script.text, len(keys), *keys, *args)

    async def _pipeline(self, calls: Sequence[tuple[Any, ...]]) -> list[Any]:
        """Run commands (or `(Script, keys, args)` calls) in one round trip, in order.

        Not a transaction: each command is atomic on its own, and a cluster pipeline
        cannot span slots atomically anyway. A script the server did not know (it was
        not run) is run again on its own.
        """
        pipe = self._redis.pipeline(transaction=False)
        for call in calls:
            if isinstance(call[0], Script):
                script, keys, args = call
                pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            else:
                pipe.execute_command(*call)
        results = list(await pipe.execute(raise_on_error=False))
        for n, (call, result) in enumerate(zip(calls, results, strict=True)):
            if isinstance(result, NoScriptError):
                results[n] = await self._eval(*call)
            elif isinstance(result, Exception):
                raise result
        return results

    def _key(self, *parts: str) -> str:
        return ":".join((self._ns, *parts))

    async def _swap(self, key: str, compute: Callable[[str | None], tuple[str, _T]]) -> _T:
        """Replace the record at `key` with `compute(state)`'s first value, atomically
        (optimistic compare-and-set; see the module docstring), and return the second."""
        async with self._locks[key]:
            # Never seen: guess "absent"; if wrong, the failed swap answers the state.
            token, state = self._seen.get(key, ("", None))
            speculative = True
            for attempt in range(_MAX_SWAPS):
                if attempt > 1:
                    # Lost twice in a row: another replica is writing this key right now.
                    # A short random pause breaks the lockstep, so no replica starves.
                    cap_ms = min(_BACKOFF_CAP_MS, 2**attempt)
                    await asyncio.sleep(secrets.randbelow(cap_ms + 1) / 1000)
                try:
                    new_state, result = compute(state)
                except Exception:
                    if not speculative:
                        raise
                    # It may be the remembered state that is out of date: ask again.
                    token, state = await self._read(key)
                    speculative = False
                    continue
                new_token = secrets.token_hex(8)
                answer = await self._eval(
                    lua.SWAP, [key], [token, new_token, new_state, self._state_ttl_ms]
                )
                if answer[0] == 1:
                    self._seen[key] = (new_token, new_state)
                    self._writes[key] += 1
                    return result
                token, state = answer[1], answer[2] or None
                speculative = False
        raise RuntimeError(f"{key}: {_MAX_SWAPS} replicas' writes in a row came first")

    async def _read(self, key: str) -> tuple[str, str | None]:
        writes = self._writes[key]
        token, state = await self._redis.execute_command("HMGET", key, "t", "s")
        found = (token or "", state or None)
        # `get_breaker` reads outside the lock: a write of ours may have landed while
        # this read was out, and its state is the newer one.
        if self._writes[key] == writes:
            self._seen[key] = found
        return found

    # BreakerStore

    async def get_breaker(self, provider: str) -> BreakerRecord:
        _, state = await self._read(self._key(f"{{breaker:{provider}}}"))
        return BreakerRecord.from_json(state) if state else BreakerRecord()

    async def update_breaker(
        self, provider: str, change: Callable[[BreakerRecord], BreakerRecord]
    ) -> BreakerRecord:
        def compute(state: str | None) -> tuple[str, BreakerRecord]:
            new = change(BreakerRecord.from_json(state) if state else BreakerRecord())
            return new.to_json(), new

        return await self._swap(self._key(f"{{breaker:{provider}}}"), compute)

    # CounterStore

    async def take(self, pool: str, tokens: float, now: float, rule: BucketRule) -> Take:
        def compute(state: str | None) -> tuple[str, Take]:
            new, result = rule.apply(json.loads(state) if state else None, tokens, now)
            return json.dumps(new), result

        return await self._swap(self._key(f"{{bucket:{pool}}}"), compute)

    async def add(self, name: str, n: int = 1) -> int:
        return int(await self._redis.execute_command("HINCRBY", self._key("counters"), name, n))

    async def counters(self, prefix: str = "") -> dict[str, int]:
        found = await self._redis.execute_command("HGETALL", self._key("counters"))
        return {name: int(v) for name, v in found.items() if name.startswith(prefix)}

    # CacheStore

    def _cache_key(self, query_hash: str) -> str:
        return self._key(f"{{cache:{query_hash}}}")

    async def get_cached(self, query_hash: str, now: float) -> CacheRead | None:
        found = await self._eval(lua.CACHE_GET, [self._cache_key(query_hash)], [])
        if not found:
            return None
        entry = _entry(query_hash, pairs(found))
        return CacheRead(entry, fresh=now < entry.expires_at)

    async def put_cached(self, entry: CacheEntry) -> bool:
        keep_s = max(0.0, entry.expires_at - entry.updated_at) + self._cache_keep_s
        fields = {
            "query": entry.query,
            "summary": entry.result_summary,
            "urls": json.dumps(list(entry.source_urls), ensure_ascii=False),
            "response": json.dumps(entry.response, ensure_ascii=False),
            "updated": repr(entry.updated_at),
            "expires": repr(entry.expires_at),
        }
        args = [int(entry.complete), _ms(keep_s), repr(entry.created_at)]
        args += [part for item in fields.items() for part in item]
        written, _ = await self._pipeline(
            [
                (lua.CACHE_PUT, [self._cache_key(entry.query_hash)], args),
                # LT keeps the earliest creation time: the index never hides a candidate.
                ("ZADD", self._key("cache:index"), "LT", entry.created_at, entry.query_hash),
            ]
        )
        return bool(written)

    async def prune_cache(
        self, now: float, *, min_hits: int = 3, older_than_days: float = 30.0
    ) -> int:
        cutoff = now - older_than_days * _DAY_S
        index = self._key("cache:index")
        removed = offset = 0
        while True:
            # Candidates created before the cutoff; kept ones stay ahead of `offset`.
            batch = await self._redis.execute_command(
                "ZRANGE",
                index,
                "-inf",
                f"({cutoff!r}",
                "BYSCORE",
                "LIMIT",
                offset,
                self._prune_batch,
            )
            if not batch:
                return removed
            checks = [
                (lua.CACHE_PRUNE_ONE, [self._cache_key(h)], [repr(cutoff), min_hits]) for h in batch
            ]
            outcomes = await self._pipeline(checks)
            fixes: list[tuple[Any, ...]] = []
            for query_hash, outcome in zip(batch, outcomes, strict=True):
                if outcome in ("gone", "deleted"):
                    removed += outcome == "deleted"
                    fixes.append(("ZREM", index, query_hash))
                elif float(outcome) >= cutoff:  # created again since: move it on
                    fixes.append(("ZADD", index, "XX", outcome, query_hash))
                else:
                    offset += 1
            if fixes:
                await self._pipeline(fixes)

    # KeyStore (few keys: one hash tag, so every change is one atomic script)

    async def put_key(self, record: KeyRecord) -> None:
        base = self._key("{keys}:")
        fields = ["tenant", record.tenant, "prefix", record.prefix, "name", record.name]
        fields += ["created", repr(record.created_at), "revoked", str(int(record.revoked))]
        fields += ["role", record.role]
        keys = [f"{base}key:{record.key_hash}", f"{base}all"]
        await self._eval(lua.KEY_PUT, keys, [base, record.key_hash, *fields])

    async def get_key(self, key_hash: str) -> KeyRecord | None:
        found = await self._redis.execute_command("HGETALL", self._key(f"{{keys}}:key:{key_hash}"))
        return _key_record({**found, "key_hash": key_hash}) if found else None

    async def list_keys(self, tenant: str | None = None) -> list[KeyRecord]:
        base = self._key("{keys}:")
        members = f"{base}all" if tenant is None else f"{base}tenant:{tenant}"
        rows = await self._eval(lua.KEY_LIST, [members], [base])
        keys = [_key_record(pairs(row)) for row in rows]
        return sorted(
            (k for k in keys if tenant is None or k.tenant == tenant),
            key=lambda k: (k.created_at, k.key_hash),
        )

    async def revoke_key(self, prefix: str) -> int:
        base = self._key("{keys}:")
        return int(await self._eval(lua.KEY_REVOKE, [f"{base}prefix:{prefix}"], [base, prefix]))


def _ms(seconds: float) -> int:
    return max(1, math.ceil(seconds * 1000))


def _entry(query_hash: str, h: dict[str, str]) -> CacheEntry:
    return CacheEntry(
        query_hash=query_hash,
        query=h["query"],
        result_summary=h["summary"],
        source_urls=tuple(json.loads(h["urls"])),
        response=json.loads(h["response"]),
        complete=h["complete"] == "1",
        created_at=float(h["created"]),
        updated_at=float(h["updated"]),
        expires_at=float(h["expires"]),
        hit_count=int(h["hits"]),
    )


def _key_record(h: dict[str, str]) -> KeyRecord:
    return KeyRecord(
        key_hash=h["key_hash"],
        tenant=h["tenant"],
        prefix=h["prefix"],
        created_at=float(h["created"]),
        name=h["name"],
        revoked=h["revoked"] == "1",
        # Keys made before roles existed are tenants' keys.
        role="admin" if h.get("role") == "admin" else "tenant",
    )
