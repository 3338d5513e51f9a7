"""The SQLite store's tables for tasks, their events and API keys (see `sqlite.py`
for the connection pool, the transactions and why calls run in threads).

Claiming is one `UPDATE ... RETURNING` whose WHERE picks the task: SQLite runs one
write statement at a time per file, so two workers (threads or processes) can never
take the same task. Completion is guarded by `status = 'running' AND worker = ?`: a
worker whose lease ran out (and whose task another worker claimed) cannot finish it.
Events are numbered inside a write transaction (the task's highest `seq` plus one),
so a batch gets consecutive numbers, and a terminal transition writes the task and its
"done" event in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sleuth.store.base import (
    EventRecord,
    KeyRecord,
    NewEvent,
    TaskRecord,
    done_events,
    events_after_a_wait,
    finished_status,
)

__all__ = ["TASK_SCHEMA", "TaskTables", "add_key_roles", "immediate"]

_T = TypeVar("_T")

TASK_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS tasks (
        task_id TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        status TEXT NOT NULL,
        request TEXT NOT NULL,
        result TEXT,
        error TEXT,
        priority INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        started_at REAL,
        finished_at REAL,
        attempts INTEGER NOT NULL DEFAULT 0,
        worker TEXT,
        lease_until REAL,
        cancel_requested INTEGER NOT NULL DEFAULT 0,
        idempotency_key TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS tasks_queue ON tasks (status, priority DESC, created_at)",
    "CREATE UNIQUE INDEX IF NOT EXISTS tasks_idempotency ON tasks (tenant, idempotency_key) "
    "WHERE idempotency_key IS NOT NULL",
    """CREATE TABLE IF NOT EXISTS task_events (
        task_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at REAL NOT NULL,
        kind TEXT NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (task_id, seq)
    )""",
    """CREATE TABLE IF NOT EXISTS api_keys (
        key_hash TEXT PRIMARY KEY,
        tenant TEXT NOT NULL,
        prefix TEXT NOT NULL,
        name TEXT NOT NULL,
        created_at REAL NOT NULL,
        revoked INTEGER NOT NULL DEFAULT 0,
        role TEXT NOT NULL DEFAULT 'tenant'
    )""",
)

_TASK_COLUMNS = (
    "task_id, tenant, status, request, result, error, priority, created_at, updated_at, "
    "started_at, finished_at, attempts, worker, lease_until, cancel_requested, idempotency_key"
)
_KEY_COLUMNS = "key_hash, tenant, prefix, name, created_at, revoked, role"


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """A write transaction that holds the write lock from its first read."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class TaskTables:
    """`TaskStore` and `KeyStore` over the store's connection pool (`_run`)."""

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    # TaskStore

    async def create_task(
        self, record: TaskRecord, first: NewEvent | None = None
    ) -> tuple[TaskRecord, bool]:
        rows = _event_rows([first] if first is not None else [])

        def create(conn: sqlite3.Connection) -> tuple[TaskRecord, bool]:
            with immediate(conn):
                if record.idempotency_key is not None:
                    row = conn.execute(
                        f"SELECT {_TASK_COLUMNS} FROM tasks "
                        "WHERE tenant = ? AND idempotency_key = ?",
                        (record.tenant, record.idempotency_key),
                    ).fetchone()
                    if row is not None:
                        return _task(row), False
                conn.execute(
                    f"INSERT INTO tasks ({_TASK_COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _task_row(record),
                )
                _insert_events(conn, record.task_id, rows)
            return record, True

        return await self._run(create)

    async def get_task(self, task_id: str) -> TaskRecord | None:
        def read(conn: sqlite3.Connection) -> TaskRecord | None:
            row = conn.execute(
                f"SELECT {_TASK_COLUMNS} FROM tasks WHERE task_id = ?", (task_id,)
            ).fetchone()
            return _task(row) if row else None

        return await self._run(read)

    async def claim_task(self, worker: str, now: float, lease_s: float) -> TaskRecord | None:
        def claim(conn: sqlite3.Connection) -> TaskRecord | None:
            # One statement picks and takes the task: no other claim can come between.
            rows = conn.execute(
                "UPDATE tasks SET status = 'running', worker = ?, lease_until = ?, "
                "attempts = attempts + 1, updated_at = ?, started_at = coalesce(started_at, ?) "
                "WHERE task_id = (SELECT task_id FROM tasks WHERE status = 'pending' "
                "OR (status = 'running' AND lease_until < ?) "
                "ORDER BY status = 'running', priority DESC, created_at LIMIT 1) "
                f"RETURNING {_TASK_COLUMNS}",
                (worker, now + lease_s, now, now, now),
            ).fetchall()
            return _task(rows[0]) if rows else None

        return await self._run(claim)

    async def renew_lease(
        self, task_id: str, worker: str, now: float, lease_s: float
    ) -> TaskRecord | None:
        def renew(conn: sqlite3.Connection) -> TaskRecord | None:
            rows = conn.execute(
                "UPDATE tasks SET lease_until = ?, updated_at = ? "
                "WHERE task_id = ? AND status = 'running' AND worker = ? "
                f"RETURNING {_TASK_COLUMNS}",
                (now + lease_s, now, task_id, worker),
            ).fetchall()
            return _task(rows[0]) if rows else None

        return await self._run(renew)

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
        status = finished_status(error)
        values = (status, _json_or_none(result), _json_or_none(error), now, now, task_id, worker)
        last = _event_rows(done_events(done, now))

        def finish(conn: sqlite3.Connection) -> bool:
            with immediate(conn):
                cursor = conn.execute(
                    "UPDATE tasks SET status = ?, result = ?, error = ?, finished_at = ?, "
                    "updated_at = ?, lease_until = NULL "
                    "WHERE task_id = ? AND status = 'running' AND worker = ?",
                    values,
                )
                if cursor.rowcount != 1:
                    return False
                _insert_events(conn, task_id, last)
            return True

        return await self._run(finish)

    async def release_task(self, task_id: str, worker: str, now: float) -> bool:
        def release(conn: sqlite3.Connection) -> bool:
            cursor = conn.execute(
                "UPDATE tasks SET status = 'pending', worker = NULL, lease_until = NULL, "
                "updated_at = ? WHERE task_id = ? AND status = 'running' AND worker = ?",
                (now, task_id, worker),
            )
            return cursor.rowcount == 1

        return await self._run(release)

    async def cancel_task(
        self,
        task_id: str,
        error: Mapping[str, Any],
        now: float,
        *,
        done: tuple[str, Mapping[str, Any]] | None = None,
    ) -> TaskRecord | None:
        last = _event_rows(done_events(done, now))

        def cancel(conn: sqlite3.Connection) -> TaskRecord | None:
            with immediate(conn):
                failed = conn.execute(
                    "UPDATE tasks SET status = 'failed', error = ?, finished_at = ?, "
                    "updated_at = ?, cancel_requested = 1 "
                    "WHERE task_id = ? AND status = 'pending'",
                    (json.dumps(error, ensure_ascii=False), now, now, task_id),
                )
                if failed.rowcount == 1:
                    _insert_events(conn, task_id, last)
                conn.execute(
                    "UPDATE tasks SET cancel_requested = 1, updated_at = ? "
                    "WHERE task_id = ? AND status = 'running'",
                    (now, task_id),
                )
                row = conn.execute(
                    f"SELECT {_TASK_COLUMNS} FROM tasks WHERE task_id = ?", (task_id,)
                ).fetchone()
            return _task(row) if row else None

        return await self._run(cancel)

    async def append_event(
        self, task_id: str, kind: str, detail: Mapping[str, Any], at: float
    ) -> int:
        return (await self.append_events(task_id, [(kind, detail, at)]))[0]

    async def append_events(self, task_id: str, events: Sequence[NewEvent]) -> list[int]:
        if not events:
            return []
        rows = _event_rows(events)

        def append(conn: sqlite3.Connection) -> list[int]:
            with immediate(conn):
                return _insert_events(conn, task_id, rows)

        return await self._run(append)

    async def task_events(self, task_id: str, after: int = 0) -> list[EventRecord]:
        def read(conn: sqlite3.Connection) -> list[EventRecord]:
            rows = conn.execute(
                "SELECT seq, at, kind, detail FROM task_events "
                "WHERE task_id = ? AND seq > ? ORDER BY seq",
                (task_id, after),
            ).fetchall()
            return [EventRecord(seq, at, kind, json.loads(data)) for seq, at, kind, data in rows]

        return await self._run(read)

    async def wait_task_events(
        self, task_id: str, after: int = 0, timeout_s: float = 1.0
    ) -> list[EventRecord]:
        return await events_after_a_wait(self, task_id, after, timeout_s)

    async def count_tasks(self, status: str) -> int:
        def count(conn: sqlite3.Connection) -> int:
            row = conn.execute("SELECT count(*) FROM tasks WHERE status = ?", (status,)).fetchone()
            return int(row[0])

        return await self._run(count)

    async def expire_tasks(self, finished_before: float) -> int:
        def expire(conn: sqlite3.Connection) -> int:
            with immediate(conn):
                doomed = "SELECT task_id FROM tasks WHERE status IN ('success', 'failed') "
                doomed += "AND finished_at < ?"
                conn.execute(
                    f"DELETE FROM task_events WHERE task_id IN ({doomed})", (finished_before,)
                )
                cursor = conn.execute(
                    f"DELETE FROM tasks WHERE task_id IN ({doomed})", (finished_before,)
                )
            return cursor.rowcount

        return await self._run(expire)

    # KeyStore

    async def put_key(self, record: KeyRecord) -> None:
        def put(conn: sqlite3.Connection) -> None:
            conn.execute(
                f"INSERT OR REPLACE INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    record.key_hash,
                    record.tenant,
                    record.prefix,
                    record.name,
                    record.created_at,
                    int(record.revoked),
                    record.role,
                ),
            )

        await self._run(put)

    async def get_key(self, key_hash: str) -> KeyRecord | None:
        def read(conn: sqlite3.Connection) -> KeyRecord | None:
            row = conn.execute(
                f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE key_hash = ?", (key_hash,)
            ).fetchone()
            return _key(row) if row else None

        return await self._run(read)

    async def list_keys(self, tenant: str | None = None) -> list[KeyRecord]:
        def read(conn: sqlite3.Connection) -> list[KeyRecord]:
            query = f"SELECT {_KEY_COLUMNS} FROM api_keys"
            params: tuple[str, ...] = ()
            if tenant is not None:
                query += " WHERE tenant = ?"
                params = (tenant,)
            rows = conn.execute(query + " ORDER BY created_at", params).fetchall()
            return [_key(row) for row in rows]

        return await self._run(read)

    async def revoke_key(self, prefix: str) -> int:
        def revoke(conn: sqlite3.Connection) -> int:
            cursor = conn.execute(
                "UPDATE api_keys SET revoked = 1 WHERE prefix = ? AND revoked = 0", (prefix,)
            )
            return cursor.rowcount

        return await self._run(revoke)


_EventRow = tuple[float, str, str]  # at, kind, detail (JSON)


def _event_rows(events: Sequence[NewEvent]) -> list[_EventRow]:
    """Events ready to insert, serialised before any transaction begins (a detail that
    is not JSON fails the call before it changes anything)."""
    return [(at, kind, json.dumps(detail, ensure_ascii=False)) for kind, detail, at in events]


def _insert_events(conn: sqlite3.Connection, task_id: str, rows: Sequence[_EventRow]) -> list[int]:
    """Number and insert `rows` after the task's last event; run inside a write
    transaction, so no other append can take the same numbers."""
    if not rows:
        return []
    (last,) = conn.execute(
        "SELECT coalesce(max(seq), 0) FROM task_events WHERE task_id = ?", (task_id,)
    ).fetchone()
    seqs = list(range(last + 1, last + 1 + len(rows)))
    conn.executemany(
        "INSERT INTO task_events (task_id, seq, at, kind, detail) VALUES (?, ?, ?, ?, ?)",
        [(task_id, seq, *row) for seq, row in zip(seqs, rows, strict=True)],
    )
    return seqs


def _json_or_none(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _task_row(record: TaskRecord) -> tuple[Any, ...]:
    return (
        record.task_id,
        record.tenant,
        record.status,
        json.dumps(record.request, ensure_ascii=False),
        _json_or_none(record.result),
        _json_or_none(record.error),
        record.priority,
        record.created_at,
        record.updated_at,
        record.started_at,
        record.finished_at,
        record.attempts,
        record.worker,
        record.lease_until,
        int(record.cancel_requested),
        record.idempotency_key,
    )


def _task(row: tuple[Any, ...]) -> TaskRecord:
    (task_id, tenant, status, request, result, error, priority, created, updated) = row[:9]
    (started, finished, attempts, worker, lease_until, cancel, idempotency_key) = row[9:]
    return TaskRecord(
        task_id=task_id,
        tenant=tenant,
        request=json.loads(request),
        status=status,
        created_at=created,
        updated_at=updated,
        started_at=started,
        finished_at=finished,
        result=json.loads(result) if result is not None else None,
        error=json.loads(error) if error is not None else None,
        attempts=attempts,
        worker=worker,
        lease_until=lease_until,
        cancel_requested=bool(cancel),
        idempotency_key=idempotency_key,
        priority=priority,
    )


def _key(row: tuple[Any, ...]) -> KeyRecord:
    key_hash, tenant, prefix, name, created_at, revoked, role = row
    return KeyRecord(
        key_hash=key_hash,
        tenant=tenant,
        prefix=prefix,
        name=name,
        created_at=created_at,
        revoked=bool(revoked),
        role="admin" if role == "admin" else "tenant",
    )


def add_key_roles(conn: sqlite3.Connection) -> None:
    """Give a schema-2 file made before key roles its `role` column (every old key a
    tenant's); an older sleuth reading the file names its columns and is unaffected."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(api_keys)")}
    if "role" not in columns:
        conn.execute("ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'tenant'")
