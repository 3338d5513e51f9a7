"""`UsageStore` in memory, for `MemoryStore`: one process, gone when it ends."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from sleuth.store.usage_records import AuditEntry, UsageRow

__all__ = ["MemoryUsage"]


class MemoryUsage:
    """Usage rows and audit entries in two lists, appended under a lock."""

    def __init__(self) -> None:
        self._usage_lock = threading.Lock()
        self._usage: list[UsageRow] = []
        self._audit: list[AuditEntry] = []

    async def add_usage(self, rows: Sequence[UsageRow], audits: Sequence[AuditEntry] = ()) -> None:
        with self._usage_lock:
            self._usage.extend(rows)
            self._audit.extend(audits)

    async def usage_rows(
        self, since: float, until: float, tenant: str | None = None
    ) -> list[UsageRow]:
        with self._usage_lock:
            found = [
                row
                for row in self._usage
                if since <= row.at < until and (tenant is None or row.tenant == tenant)
            ]
        return sorted(found, key=lambda row: row.at)

    async def spent_micros(self, tenant: str, since: float, currency: str) -> int:
        with self._usage_lock:
            return sum(
                row.cost_micros or 0
                for row in self._usage
                if row.tenant == tenant and row.at >= since and row.currency == currency
            )

    async def audit_entries(
        self, since: float, until: float, tenant: str | None = None, limit: int = 1000
    ) -> list[AuditEntry]:
        with self._usage_lock:
            found = [
                entry
                for entry in self._audit
                if since <= entry.at < until and (tenant is None or entry.tenant == tenant)
            ]
        return sorted(found, key=lambda entry: entry.at, reverse=True)[:limit]

    async def prune_usage(self, before: float) -> int:
        with self._usage_lock:
            kept = [row for row in self._usage if row.at >= before]
            gone, self._usage = len(self._usage) - len(kept), kept
        return gone

    async def prune_audit(self, before: float) -> int:
        with self._usage_lock:
            kept = [entry for entry in self._audit if entry.at >= before]
            gone, self._audit = len(self._audit) - len(kept), kept
        return gone
