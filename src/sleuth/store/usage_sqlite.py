"""`UsageStore` over the SQLite store's connection pool (`SqliteStore` mixes it in).

Tables (created in place in any schema-2 file; older sleuths ignore them):
    usage_rows  id PK, at, tenant, provider, outcome, cost_micros, saved_micros,
                currency, key, tool, workflow, adapter, task_id; indexed by (tenant, at)
                and (at)
    audit_log   id PK, at, tenant, entry (the AuditEntry JSON); indexed likewise

Both are append-only: a trigger refuses any UPDATE, so nothing sleuth runs (nor a
stray statement) can rewrite what was recorded; only retention deletes, oldest first.
A search's rows and its audit entry are written in one transaction. Sums are SQL
integer sums of micro-units: exact.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from typing import TypeVar

from sleuth.store.usage_records import AuditEntry, UsageRow

__all__ = ["USAGE_SCHEMA", "UsageTables"]

_T = TypeVar("_T")

USAGE_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS usage_rows (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        tenant TEXT NOT NULL,
        provider TEXT NOT NULL,
        outcome TEXT NOT NULL,
        cost_micros INTEGER,
        saved_micros INTEGER,
        currency TEXT,
        key TEXT,
        tool TEXT,
        workflow TEXT,
        adapter TEXT NOT NULL,
        task_id TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS usage_by_tenant ON usage_rows (tenant, at)",
    "CREATE INDEX IF NOT EXISTS usage_by_at ON usage_rows (at)",
    """CREATE TABLE IF NOT EXISTS audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        tenant TEXT NOT NULL,
        entry TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS audit_by_tenant ON audit_log (tenant, at)",
    "CREATE INDEX IF NOT EXISTS audit_by_at ON audit_log (at)",
    """CREATE TRIGGER IF NOT EXISTS usage_rows_append_only BEFORE UPDATE ON usage_rows
       BEGIN SELECT RAISE(ABORT, 'usage rows are append-only'); END""",
    """CREATE TRIGGER IF NOT EXISTS audit_log_append_only BEFORE UPDATE ON audit_log
       BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END""",
)

_ROW_COLUMNS = (
    "at, tenant, provider, outcome, cost_micros, saved_micros, currency, key, tool, "
    "workflow, adapter, task_id"
)


def _row(values: Sequence[object]) -> UsageRow:
    return UsageRow(*values)  # type: ignore[arg-type]


def _between(since: float, until: float, tenant: str | None) -> tuple[str, list[object]]:
    """The WHERE clause (and its arguments) of a time range, for one tenant or all."""
    if tenant is None:
        return "at >= ? AND at < ?", [since, until]
    return "tenant = ? AND at >= ? AND at < ?", [tenant, since, until]


class UsageTables:
    """`UsageStore` over `_run` (a worker thread with a pooled connection)."""

    async def _run(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        raise NotImplementedError

    async def add_usage(self, rows: Sequence[UsageRow], audits: Sequence[AuditEntry] = ()) -> None:
        def add(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    f"INSERT INTO usage_rows ({_ROW_COLUMNS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            r.at,
                            r.tenant,
                            r.provider,
                            r.outcome,
                            r.cost_micros,
                            r.saved_micros,
                            r.currency,
                            r.key,
                            r.tool,
                            r.workflow,
                            r.adapter,
                            r.task_id,
                        )
                        for r in rows
                    ],
                )
                conn.executemany(
                    "INSERT INTO audit_log (at, tenant, entry) VALUES (?, ?, ?)",
                    [(audit.at, audit.tenant, audit.to_json()) for audit in audits],
                )
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise

        await self._run(add)

    async def usage_rows(
        self, since: float, until: float, tenant: str | None = None
    ) -> list[UsageRow]:
        def read(conn: sqlite3.Connection) -> list[UsageRow]:
            where, args = _between(since, until, tenant)
            cursor = conn.execute(
                f"SELECT {_ROW_COLUMNS} FROM usage_rows WHERE {where} ORDER BY at, id", args
            )
            return [_row(values) for values in cursor.fetchall()]

        return await self._run(read)

    async def spent_micros(self, tenant: str, since: float, currency: str) -> int:
        def read(conn: sqlite3.Connection) -> int:
            found = conn.execute(
                "SELECT COALESCE(SUM(cost_micros), 0) FROM usage_rows "
                "WHERE tenant = ? AND at >= ? AND currency = ?",
                (tenant, since, currency),
            ).fetchone()
            return int(found[0])

        return await self._run(read)

    async def audit_entries(
        self, since: float, until: float, tenant: str | None = None, limit: int = 1000
    ) -> list[AuditEntry]:
        def read(conn: sqlite3.Connection) -> list[AuditEntry]:
            where, args = _between(since, until, tenant)
            cursor = conn.execute(
                f"SELECT entry FROM audit_log WHERE {where} ORDER BY at DESC, id DESC LIMIT ?",
                [*args, limit],
            )
            return [AuditEntry.from_json(text) for (text,) in cursor.fetchall()]

        return await self._run(read)

    async def prune_usage(self, before: float) -> int:
        return await self._delete("usage_rows", before)

    async def prune_audit(self, before: float) -> int:
        return await self._delete("audit_log", before)

    async def _delete(self, table: str, before: float) -> int:
        def delete(conn: sqlite3.Connection) -> int:
            return conn.execute(f"DELETE FROM {table} WHERE at < ?", (before,)).rowcount

        return await self._run(delete)
