"""The embedded store: breakers, buckets, counters and the response cache in one
SQLite file, shared safely by every sleuth process on the host (service workers,
`sleuth cache prune` from cron).

Tables (schema version in `PRAGMA user_version`):
    breakers   provider PK, record (JSON of BreakerRecord)
    buckets    pool PK, state (JSON owned by the bucket rule)
    counters   name PK, value
    cache      query_hash PK, query, result_summary, source_urls (JSON array),
               response (the full SearchResponse JSON), complete (0/1),
               created_at, updated_at, expires_at (epoch seconds), hit_count;
               indexed by (created_at, hit_count) for pruning
    tasks      task_id PK, tenant, status, request/result/error (JSON), priority,
               created_at, updated_at, started_at, finished_at, attempts, worker,
               lease_until, cancel_requested, idempotency_key (unique per tenant);
               indexed by (status, priority, created_at) for claiming
    task_events  (task_id, seq) PK, at, kind, detail (JSON)
    api_keys   key_hash PK, tenant, prefix, name, created_at, revoked, role (tenant | admin;
               added in place to a schema-2 file that lacks it)
    usage_rows, audit_log   the usage ledger, append-only (`usage_sqlite.py`; created in
               place in a schema-2 file that lacks them)

Schema 1 (no tasks or keys) is upgraded in place by creating the new tables.

Concurrency: the file is in WAL mode, so readers never wait for the writer. Every
read-modify-write (a breaker change, a token take) runs in `BEGIN IMMEDIATE`, which
takes the write lock before reading: two processes can never read the same token
count and both spend it. Cache reads and writes are single statements (an UPDATE ...
RETURNING that counts the hit; an upsert whose WHERE refuses a partial answer over a
complete one), atomic on their own. `prune_cache` deletes in small batches, one short
transaction each, so a cron prune never holds the write lock for long.

Why threads: SQLite calls block, and under contention a write waits for another
process's lock (up to `busy_timeout_s`) and for the commit's fsync. On the event
loop that would stall every search in flight, so each call runs in a worker thread
(`asyncio.to_thread`) on a connection from a small pool (a connection is used by one
thread at a time; there are never more than the default executor's threads). The
thread hop costs tens of microseconds, nothing next to a provider call. If the
awaiting task is cancelled, the thread still finishes its transaction: a token taken
for a search that gave up stays spent, which errs on the side of the quota.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from sleuth.errors import ConfigError
from sleuth.store.base import BreakerRecord, BucketRule, CacheEntry, CacheRead, Take
from sleuth.store.sqlite_tasks import TASK_SCHEMA, TaskTables, add_key_roles, immediate
from sleuth.store.usage_sqlite import USAGE_SCHEMA, UsageTables

__all__ = ["SCHEMA_VERSION", "SqliteStore"]

SCHEMA_VERSION = 2
_DAY_S = 86400.0
#: The pause between two prune batches, so the service's writes get in between.
_PRUNE_PAUSE_S = 0.001
_T = TypeVar("_T")

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS breakers (provider TEXT PRIMARY KEY, record TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS buckets (pool TEXT PRIMARY KEY, state TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL)",
    """CREATE TABLE IF NOT EXISTS cache (
        query_hash TEXT PRIMARY KEY,
        query TEXT NOT NULL,
        result_summary TEXT NOT NULL,
        source_urls TEXT NOT NULL,
        response TEXT NOT NULL,
        complete INTEGER NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        expires_at REAL NOT NULL,
        hit_count INTEGER NOT NULL DEFAULT 0
    )""",
    "CREATE INDEX IF NOT EXISTS cache_by_age ON cache (created_at, hit_count)",
    *TASK_SCHEMA,
    *USAGE_SCHEMA,
)

_CACHE_COLUMNS = (
    "query_hash, query, result_summary, source_urls, response, complete, "
    "created_at, updated_at, expires_at, hit_count"
)


class SqliteStore(TaskTables, UsageTables):
    """Implements `Store` over one SQLite file.

    >>> import asyncio, tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "state.sqlite"
    >>> async def demo() -> int:
    ...     store = SqliteStore(path)
    ...     try:
    ...         return await store.add("searches", 2)
    ...     finally:
    ...         await store.aclose()
    >>> asyncio.run(demo())
    2
    """

    def __init__(
        self, path: Path | str, *, busy_timeout_s: float = 5.0, prune_batch: int = 500
    ) -> None:
        self.path = Path(path).expanduser()
        self._busy_timeout_s = busy_timeout_s
        self._prune_batch = prune_batch
        self._idle: list[sqlite3.Connection] = []
        self._pool_lock = threading.Lock()
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._with_connection(self._prepare)

    # connections

    def _connect(self) -> sqlite3.Connection:
        # isolation_level=None: no implicit transactions; every one is explicit here.
        conn = sqlite3.connect(
            self.path,
            timeout=self._busy_timeout_s,
            isolation_level=None,
            check_same_thread=False,  # used by one worker thread at a time, via the pool
        )
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")  # durable in WAL except the last commit
        return conn

    def _with_connection(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._pool_lock:
            if self._closed:
                raise RuntimeError(f"the store at {self.path} is closed")
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            return work(conn)
        finally:
            with self._pool_lock:
                if self._closed:
                    conn.close()
                else:
                    self._idle.append(conn)

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        return await asyncio.to_thread(self._with_connection, work)

    async def aclose(self) -> None:
        with self._pool_lock:
            self._closed = True
            idle, self._idle = self._idle, []
        for conn in idle:
            conn.close()

    def _prepare(self, conn: sqlite3.Connection) -> None:
        with immediate(conn):
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, 1, SCHEMA_VERSION):
                raise ConfigError(
                    f"{self.path} has store schema {version}; this sleuth knows "
                    f"{SCHEMA_VERSION}. Use another store path or a matching sleuth."
                )
            for statement in _SCHEMA:
                conn.execute(statement)
            add_key_roles(conn)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # BreakerStore

    async def get_breaker(self, provider: str) -> BreakerRecord:
        def read(conn: sqlite3.Connection) -> BreakerRecord:
            row = conn.execute(
                "SELECT record FROM breakers WHERE provider = ?", (provider,)
            ).fetchone()
            return BreakerRecord.from_json(row[0]) if row else BreakerRecord()

        return await self._run(read)

    async def update_breaker(
        self, provider: str, change: Callable[[BreakerRecord], BreakerRecord]
    ) -> BreakerRecord:
        def update(conn: sqlite3.Connection) -> BreakerRecord:
            with immediate(conn):
                row = conn.execute(
                    "SELECT record FROM breakers WHERE provider = ?", (provider,)
                ).fetchone()
                new = change(BreakerRecord.from_json(row[0]) if row else BreakerRecord())
                conn.execute(
                    "INSERT INTO breakers (provider, record) VALUES (?, ?) "
                    "ON CONFLICT (provider) DO UPDATE SET record = excluded.record",
                    (provider, new.to_json()),
                )
            return new

        return await self._run(update)

    # CounterStore

    async def take(self, pool: str, tokens: float, now: float, rule: BucketRule) -> Take:
        def take(conn: sqlite3.Connection) -> Take:
            with immediate(conn):
                row = conn.execute("SELECT state FROM buckets WHERE pool = ?", (pool,)).fetchone()
                state, result = rule.apply(json.loads(row[0]) if row else None, tokens, now)
                conn.execute(
                    "INSERT INTO buckets (pool, state) VALUES (?, ?) "
                    "ON CONFLICT (pool) DO UPDATE SET state = excluded.state",
                    (pool, json.dumps(state)),
                )
            return result

        return await self._run(take)

    async def add(self, name: str, n: int = 1) -> int:
        def add(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "INSERT INTO counters (name, value) VALUES (?, ?) ON CONFLICT (name) "
                "DO UPDATE SET value = value + excluded.value RETURNING value",
                (name, n),
            ).fetchall()[0]
            return int(row[0])

        return await self._run(add)

    async def counters(self, prefix: str = "") -> dict[str, int]:
        def read(conn: sqlite3.Connection) -> dict[str, int]:
            rows = conn.execute(
                "SELECT name, value FROM counters WHERE substr(name, 1, ?) = ?",
                (len(prefix), prefix),
            ).fetchall()
            return {str(name): int(value) for name, value in rows}

        return await self._run(read)

    # CacheStore

    async def get_cached(self, query_hash: str, now: float) -> CacheRead | None:
        def read(conn: sqlite3.Connection) -> CacheRead | None:
            # One statement: counting the hit and reading the entry cannot be torn apart.
            rows = conn.execute(
                "UPDATE cache SET hit_count = hit_count + 1 WHERE query_hash = ? "
                f"RETURNING {_CACHE_COLUMNS}",
                (query_hash,),
            ).fetchall()
            if not rows:
                return None
            entry = _entry(rows[0])
            return CacheRead(entry, fresh=now < entry.expires_at)

        return await self._run(read)

    async def put_cached(self, entry: CacheEntry) -> bool:
        def write(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                f"INSERT INTO cache ({_CACHE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0) "
                "ON CONFLICT (query_hash) DO UPDATE SET query = excluded.query, "
                "result_summary = excluded.result_summary, source_urls = excluded.source_urls, "
                "response = excluded.response, complete = excluded.complete, "
                "updated_at = excluded.updated_at, expires_at = excluded.expires_at "
                # a partial answer never replaces a complete one
                "WHERE excluded.complete = 1 OR cache.complete = 0",
                (
                    entry.query_hash,
                    entry.query,
                    entry.result_summary,
                    json.dumps(list(entry.source_urls), ensure_ascii=False),
                    json.dumps(entry.response, ensure_ascii=False),
                    int(entry.complete),
                    entry.created_at,
                    entry.updated_at,
                    entry.expires_at,
                ),
            )
            return cursor.rowcount == 1

        return await self._run(write)

    async def prune_cache(
        self, now: float, *, min_hits: int = 3, older_than_days: float = 30.0
    ) -> int:
        cutoff = now - older_than_days * _DAY_S

        def prune(conn: sqlite3.Connection) -> int:
            removed = 0
            while True:
                # Each batch is its own short transaction: readers and writers of the
                # running service get in between batches.
                cursor = conn.execute(
                    "DELETE FROM cache WHERE query_hash IN (SELECT query_hash FROM cache "
                    "WHERE created_at < ? AND hit_count < ? LIMIT ?)",
                    (cutoff, min_hits, self._prune_batch),
                )
                removed += cursor.rowcount
                if cursor.rowcount < self._prune_batch:
                    return removed
                # A writer waiting on the lock polls with short sleeps; without a pause
                # this loop would take the lock again first, every time, and starve it.
                time.sleep(_PRUNE_PAUSE_S)

        return await self._run(prune)


def _entry(row: tuple[Any, ...]) -> CacheEntry:
    (query_hash, query, summary, urls, response, complete, created, updated, expires, hits) = row
    return CacheEntry(
        query_hash=query_hash,
        query=query,
        result_summary=summary,
        source_urls=tuple(json.loads(urls)),
        response=json.loads(response),
        complete=bool(complete),
        created_at=created,
        updated_at=updated,
        expires_at=expires,
        hit_count=hits,
    )
