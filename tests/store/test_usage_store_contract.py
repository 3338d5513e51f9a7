"""The usage ledger's contract, against every store (memory, SQLite, Redis, a Redis
Cluster node): rows and audit entries come back as written, by time and tenant, the
spending since a period began is exact, and only retention deletes."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from sleuth.store import SqliteStore, Store
from sleuth.store.usage_records import AuditEntry, UsageRow, period_starts

T0 = 1_764_590_400.0  # 2025-12-01T12:00:00Z
DAY = 86400.0


def row(at: float, tenant: str = "acme", cost: int | None = 5000, **kw: object) -> UsageRow:
    fields: dict[str, object] = {"provider": "kagi", "outcome": "ok", "currency": "USD"}
    fields.update(kw)
    return UsageRow(at=at, tenant=tenant, cost_micros=cost, **fields)  # type: ignore[arg-type]


def entry(at: float, tenant: str = "acme", **kw: object) -> AuditEntry:
    return AuditEntry(at=at, tenant=tenant, status="ok", query_hash="h" * 64, **kw)  # type: ignore[arg-type]


async def test_rows_come_back_as_written_by_time_and_tenant(store: Store) -> None:
    written = [
        row(T0, key="sk_abcdefgh", tool="internal_search", workflow="steward", task_id="t1"),
        row(T0 + 1, tenant="beta", cost=None, currency=None),
        row(T0 + 2, outcome="cached", cost=0, saved_micros=5000),
        row(T0 + 2, outcome="cached", cost=0, saved_micros=5000),  # two equal rows both stay
    ]
    await store.add_usage(written)
    assert await store.usage_rows(T0, T0 + 10) == sorted(written, key=lambda r: r.at)
    assert await store.usage_rows(T0, T0 + 10, "acme") == [written[0], written[2], written[3]]
    assert await store.usage_rows(T0 + 1, T0 + 2) == [written[1]]  # until is excluded


@pytest.mark.parametrize("at", [T0, T0 + 14 * DAY], ids=["first_of_month", "mid_month"])
async def test_spending_since_a_period_began_is_an_exact_integer_sum(
    store: Store, at: float
) -> None:
    day, month = period_starts(at)
    await store.add_usage(
        [
            row(month - DAY, cost=1_000),  # the month before
            row(at, cost=5000),
            row(at + 60, cost=2500),
            row(at + 60, cost=None, currency=None),  # unpriced: counts nothing
            row(at + 60, cost=9, currency="EUR"),
            row(at + 60, tenant="beta", cost=1_000_000),
        ]
    )
    if day != month:
        await store.add_usage([row(day - 3600, cost=7)])  # this month, an earlier day
    assert await store.spent_micros("acme", day, "USD") == 7500
    assert await store.spent_micros("acme", month, "USD") == 7500 + (7 if day != month else 0)
    assert await store.spent_micros("acme", day, "EUR") == 9
    assert await store.spent_micros("gamma", day, "USD") == 0


async def test_audit_entries_come_newest_first_per_tenant_and_limited(store: Store) -> None:
    for n in range(5):
        await store.add_usage([], [entry(T0 + n, tenant="acme" if n % 2 == 0 else "beta")])
    first = entry(T0 + 10, providers=("kagi",), cost_micros={"USD": 25000}, query="q", key="sk_x")
    await store.add_usage([row(T0 + 10)], [first])
    found = await store.audit_entries(T0, T0 + 100)
    assert [e.at for e in found] == [T0 + 10, T0 + 4, T0 + 3, T0 + 2, T0 + 1, T0]
    assert found[0] == first
    assert [e.at for e in await store.audit_entries(T0, T0 + 100, "beta")] == [T0 + 3, T0 + 1]
    assert [e.at for e in await store.audit_entries(T0, T0 + 100, "acme", limit=2)] == [
        T0 + 10,
        T0 + 4,
    ]


async def test_retention_deletes_only_what_is_older(store: Store) -> None:
    await store.add_usage([row(T0 - 2 * DAY), row(T0)], [entry(T0 - 2 * DAY)])
    await store.add_usage([], [entry(T0)])
    assert await store.prune_usage(T0 - DAY) == 1
    assert await store.prune_audit(T0 - DAY) == 1
    assert [r.at for r in await store.usage_rows(0, T0 + 1)] == [T0]
    assert [e.at for e in await store.audit_entries(0, T0 + 1)] == [T0]


async def test_sqlite_refuses_to_rewrite_a_recorded_row(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.sqlite")
    await store.add_usage([row(T0)], [entry(T0)])
    await store.aclose()
    conn = sqlite3.connect(tmp_path / "state.sqlite")
    try:
        for table, column in (("usage_rows", "cost_micros"), ("audit_log", "tenant")):
            with pytest.raises(sqlite3.IntegrityError, match="append-only"):
                conn.execute(f"UPDATE {table} SET {column} = 0")
    finally:
        conn.close()
