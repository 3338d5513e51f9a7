"""What the usage ledger stores: one row per provider call (and per call a cached
answer saved), one audit entry per search, and the protocol every store implements.

    UsageStore   append rows and an audit entry together; read rows and entries back
                 by time and tenant; the spending of a tenant since a period began;
                 delete what is older than the retention (the only deletion there is)

Money is in whole micro-units (millionths of `currency`); `cost_micros` is None when
the provider's price is unknown. Like every store, none reads a clock: times are
wall-clock seconds handed in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Literal, Protocol

__all__ = ["AuditEntry", "UsageOutcome", "UsageRow", "UsageStore", "period_starts"]

#: How the call went: the provider report's status, or `cached` for a call that a
#: cached answer saved (its price is the saving).
UsageOutcome = Literal["ok", "empty", "error", "timeout", "cached"]


def _fields_of(record: UsageRow | AuditEntry) -> dict[str, Any]:
    """The record's fields by name, as they are: plain values, but for the audit
    entry's sequence and mapping, which its `to_json` copies (a third of the CPU of
    `dataclasses.asdict`, which copies every value deeply; one entry per search)."""
    return {f.name: getattr(record, f.name) for f in fields(record)}


@dataclass(frozen=True)
class UsageRow:
    """One provider call of one search (or one call a cached answer saved)."""

    at: float
    tenant: str
    provider: str
    outcome: UsageOutcome
    #: The call's price, spent (None: the price is unknown). 0 for a failed call.
    cost_micros: int | None
    #: What a cached answer saved: the price of the call it stood in for.
    saved_micros: int | None = None
    currency: str | None = None
    #: The API key's prefix (never the key), when the search came with one.
    key: str | None = None
    #: The declarative tool and the workflow that asked, when a caller named them.
    tool: str | None = None
    workflow: str | None = None
    #: The adapter: http_search, web_search (MCP), task, cli, library.
    adapter: str = "library"
    task_id: str | None = None

    def to_json(self) -> str:
        return json.dumps(_fields_of(self), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> UsageRow:
        return cls(**json.loads(text))


@dataclass(frozen=True)
class AuditEntry:
    """One search, as the audit log keeps it: who, with which key and tool, when,
    which providers, what it cost. `query` only when `audit.record_query` is on."""

    at: float
    tenant: str
    status: str
    query_hash: str | None
    providers: Sequence[str] = ()
    #: Spent per currency, in micro-units (unpriced calls are not in it).
    cost_micros: Mapping[str, int] = field(default_factory=dict)
    unpriced_calls: int = 0
    cache: str | None = None
    key: str | None = None
    tool: str | None = None
    workflow: str | None = None
    adapter: str = "library"
    task_id: str | None = None
    query: str | None = None
    error_code: str | None = None

    def to_json(self) -> str:
        data = _fields_of(self)
        data["providers"] = list(self.providers)
        data["cost_micros"] = dict(self.cost_micros)
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> AuditEntry:
        data: dict[str, Any] = json.loads(text)
        data["providers"] = tuple(data.get("providers") or ())
        return cls(**data)


class UsageStore(Protocol):
    async def add_usage(self, rows: Sequence[UsageRow], audits: Sequence[AuditEntry] = ()) -> None:
        """Append usage rows and audit entries, of one search or of several written
        together, in one write. Nothing updates them."""
        ...

    async def usage_rows(
        self, since: float, until: float, tenant: str | None = None
    ) -> list[UsageRow]:
        """Rows with `since <= at < until`, oldest first; one tenant's, or everyone's."""
        ...

    async def spent_micros(self, tenant: str, since: float, currency: str) -> int:
        """What `tenant` spent in `currency` since `since`, which is the start of a UTC
        day or month (a budget's period)."""
        ...

    async def audit_entries(
        self, since: float, until: float, tenant: str | None = None, limit: int = 1000
    ) -> list[AuditEntry]:
        """Entries with `since <= at < until`, newest first, at most `limit`."""
        ...

    async def prune_usage(self, before: float) -> int:
        """Delete usage rows older than `before`; how many."""
        ...

    async def prune_audit(self, before: float) -> int:
        """Delete audit entries older than `before`; how many."""
        ...


def period_starts(at: float) -> tuple[float, float]:
    """The start of the UTC day and of the UTC month that `at` falls in (calendar
    arithmetic on the time given, no clock).

    >>> period_starts(1_764_590_400.0)  # 2025-12-01T12:00:00Z
    (1764547200.0, 1764547200.0)
    """
    moment = datetime.fromtimestamp(at, UTC)
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    return day.timestamp(), day.replace(day=1).timestamp()
