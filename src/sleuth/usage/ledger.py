"""The usage ledger of one `Sleuth`: budgets before a search, rows and an audit entry
after it, reports and retention. The policy over a `UsageStore`; no I/O of its own.

Rows are written after the answer is made, by a writer task, so a search does not
wait for the store's write. The writer gathers what is recorded for `GATHER_S` after
the first search it finds waiting, then writes it in one go (a group commit): one
SQLite commit costs about as much CPU as the rows of six searches, so a service
answering 80 searches a second spends a quarter of the CPU on its usage rows that a
commit per search would (`bench/usage_ledger.py`). No row waits longer than
`GATHER_S` and one write. `flush()` writes at once what waits and waits until all
recorded is written (`Sleuth.aclose` does, and so do reports and the budget check of
a tenant with a budget, which must see what its earlier searches spent).

Budgets are checked when a search is about to call providers (a fresh cached answer
costs nothing and is served whatever the budget). Searches already running when the
budget runs out finish, so a budget can be passed by what they cost: it is a limit on
starting paid calls, not an escrow. Like breakers and quotas, a store that does not
answer never fails a search: the check lets it through and the failure is logged.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sleuth.contract import Degradation
from sleuth.errors import BudgetExceeded
from sleuth.store.usage_records import AuditEntry, UsageRow, UsageStore, period_starts
from sleuth.usage.accounting import Finished, account
from sleuth.usage.prices import PriceTable, format_micros
from sleuth.usage.report import Group, period_range, summarise, total
from sleuth.usage.settings import AuditSettings, Period, UsageSettings

__all__ = ["Ledger", "Spending"]

log = logging.getLogger(__name__)

_ADJECTIVE: dict[Period, str] = {"day": "daily", "month": "monthly"}

#: How long the writer gathers searches before it writes them together.
GATHER_S = 0.1


@dataclass(frozen=True)
class Spending:
    """What a budget check decided: the providers to ask (the same ones, or the free
    ones when the budget is spent and its rule degrades), and why."""

    providers: list[str]
    backups: list[str]
    degradation: Degradation | None = None


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


def _period_end(start: float, period: Period) -> float:
    label = datetime.fromtimestamp(start, UTC).strftime("%Y-%m-%d" if period == "day" else "%Y-%m")
    return period_range(label)[1]


class Ledger:
    """Prices, budgets, usage rows and the audit log of one `Sleuth`."""

    def __init__(
        self,
        usage: UsageSettings,
        audit: AuditSettings,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.usage = usage
        self.audit = audit
        self.prices = PriceTable.from_settings(usage.prices)
        self._clock = clock
        #: Recorded, not yet taken by the writer: (store, rows, audit entry or None).
        self._waiting: list[tuple[UsageStore, list[UsageRow], AuditEntry | None]] = []
        self._writer: asyncio.Task[None] | None = None
        #: Flushes waiting: while any does, the writer writes without gathering
        #: (`_hurry` wakes one that is gathering).
        self._flushes = 0
        self._hurry: asyncio.Future[None] | None = None

    async def flush(self) -> None:
        """Wait until every recorded search is written (what a writer of a loop gone
        left waiting too)."""
        self._flushes += 1
        try:
            while True:
                if self._writing() and self._hurry is not None and not self._hurry.done():
                    self._hurry.set_result(None)
                if self._waiting and not self._writing():
                    self._writer = asyncio.create_task(self._write_waiting())
                writer = self._writer
                if writer is None or not self._writing():
                    return
                await asyncio.gather(writer, return_exceptions=True)
        finally:
            self._flushes -= 1

    async def spending(
        self,
        store: UsageStore,
        tenant: str,
        providers: Sequence[str],
        backups: Sequence[str],
        enabled: Collection[str],
    ) -> Spending:
        """The providers a search of `tenant` may ask, by its budget; `BudgetExceeded`
        when it is spent and its rule refuses (or there is nothing free to ask)."""
        unchanged = Spending(list(providers), list(backups))
        rule = self.usage.budget_for(tenant)
        if rule is None or not self.usage.enabled:
            return unchanged
        await self.flush()
        now = self._clock()
        day, month = period_starts(now)
        since = day if rule.period == "day" else month
        try:
            spent = await store.spent_micros(tenant, since, rule.currency)
        except Exception:
            log.exception("the usage store does not answer; %s's budget is not checked", tenant)
            return unchanged
        if spent < rule.limit_micros:
            return unchanged
        ends = _period_end(since, rule.period)
        currency, limit = rule.currency, format_micros(rule.limit_micros)
        said = (
            f"tenant {tenant!r} has spent {format_micros(spent)} {currency} of its "
            f"{_ADJECTIVE[rule.period]} budget of {limit} {currency}; "
            f"it is renewed at {_iso(ends)}"
        )
        if rule.when_spent == "degrade":
            candidates = [*providers, *backups, *self.usage.degrade_to]
            free = [
                name
                for name in dict.fromkeys(candidates)
                if name in enabled and self.prices.is_free(name)
            ]
            if free:
                reason = f"{said}; only free providers were asked: {', '.join(free)}"
                return Spending(free, [], Degradation(kind="budget_exhausted", reason=reason))
            said += "; no free provider is enabled to degrade to (usage.degrade_to)"
        raise BudgetExceeded(said, retry_after_s=max(1.0, ends - now))

    def record(self, store: UsageStore, done: Finished) -> None:
        """Start appending the search's rows and audit entry (`flush` waits for it).
        Never raises: accounting that fails is logged, and the answer still goes out."""
        rows, entry = account(done, self.prices, record_query=self.audit.record_query)
        audit: AuditEntry | None = entry if self.audit.enabled else None
        if not self.usage.enabled:
            rows = []
        if not rows and audit is None:
            return
        self._waiting.append((store, rows, audit))
        if not self._writing():
            self._writer = asyncio.create_task(self._write_waiting())

    def _writing(self) -> bool:
        """A writer is at work on this loop (one of a loop gone never runs again: what
        it left waiting goes with the next writer)."""
        writer = self._writer
        return (
            writer is not None
            and not writer.done()
            and writer.get_loop() is asyncio.get_running_loop()
        )

    async def _write_waiting(self) -> None:
        while self._waiting:
            if not self._flushes:
                self._hurry = asyncio.get_running_loop().create_future()
                await asyncio.wait([self._hurry], timeout=GATHER_S)
            taken, self._waiting = self._waiting, []
            # One write per store (a Ledger is normally given one), in recorded order.
            by_store: dict[int, tuple[UsageStore, list[UsageRow], list[AuditEntry]]] = {}
            for store, rows, audit in taken:
                _, all_rows, audits = by_store.setdefault(id(store), (store, [], []))
                all_rows.extend(rows)
                if audit is not None:
                    audits.append(audit)
            for store, all_rows, audits in by_store.values():
                try:
                    await store.add_usage(all_rows, audits)
                except Exception:
                    log.exception(
                        "the usage of %d search(es) could not be recorded",
                        len(taken),
                    )

    async def report(
        self,
        store: UsageStore,
        *,
        since: float,
        until: float,
        period: Period = "day",
        tenant: str | None = None,
        by: Sequence[Group] = (),
    ) -> dict[str, Any]:
        """Calls, cost, cache savings and failures per period of [since, until), for one
        tenant or (None) all; the shape `GET /v1/usage` and `sleuth usage --json` give."""
        await self.flush()
        rows = await store.usage_rows(since, until, tenant)
        return {
            "tenant": tenant,
            "period": period,
            "from": _iso(since),
            "until": _iso(until),
            "periods": summarise(rows, period, by),
            "total": total(rows),
        }

    async def audit_entries(
        self,
        store: UsageStore,
        *,
        since: float,
        until: float,
        tenant: str | None = None,
        limit: int = 100,
    ) -> list[AuditEntry]:
        """The audit log of [since, until), newest first, once every search is written."""
        await self.flush()
        return await store.audit_entries(since, until, tenant, limit)

    async def prune(self, store: UsageStore) -> tuple[int, int]:
        """Delete usage rows and audit entries past their retention: (rows, entries)."""
        await self.flush()
        now = self._clock()
        rows = await store.prune_usage(now - self.usage.retention_days * 86400)
        entries = await store.prune_audit(now - self.audit.retention_days * 86400)
        return rows, entries
