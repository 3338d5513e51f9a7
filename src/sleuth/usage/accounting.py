"""What one finished search cost: its usage rows and its audit entry. Pure.

A provider call is billed at its price when the provider answered (`ok`, or `empty`:
it searched and found nothing); a call that failed or timed out is recorded as a
failure at no cost (the providers in the price table bill answered requests), and a
provider that was skipped (open breaker, no key, no quota) was not called at all.
A fresh cached answer calls nobody: each provider whose answer it holds is a row
`cached`, whose price is the saving. Unknown prices stay None all the way: such a
call is an unpriced call, never a free one.

>>> from sleuth.contract import ProviderReport, SearchResponse
>>> from sleuth.usage.prices import PriceTable
>>> answer = SearchResponse(task_id="t", query="q", rewritten_query="q", results=[],
...     providers={"kagi": ProviderReport(status="ok", latency_ms=9, results=3)})
>>> rows, entry = account(Finished(at=0.0, tenant="acme", response=answer),
...     PriceTable.from_settings({}))
>>> [(r.provider, r.outcome, r.cost_micros, r.currency) for r in rows], entry.cost_micros
([('kagi', 'ok', 25000, 'USD')], {'USD': 25000})
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sleuth.call_log import query_hash, search_status
from sleuth.contract import SearchResponse
from sleuth.store.usage_records import AuditEntry, UsageOutcome, UsageRow
from sleuth.usage.prices import PriceTable

__all__ = ["Finished", "account"]

_BILLED = frozenset({"ok", "empty"})
_CALLED: frozenset[str] = frozenset({"ok", "empty", "error", "timeout"})


@dataclass(frozen=True)
class Finished:
    """A search that ended, with who asked: what the ledger records."""

    at: float
    tenant: str
    response: SearchResponse | None = None
    #: The error that ended it instead (an `ErrorInfo` code), e.g. budget_exceeded.
    error_code: str | None = None
    key: str | None = None
    tool: str | None = None
    workflow: str | None = None
    adapter: str = "library"
    task_id: str | None = None
    query: str | None = None


def account(
    done: Finished, prices: PriceTable, *, record_query: bool = False
) -> tuple[list[UsageRow], AuditEntry]:
    """The usage rows and the audit entry of `done`."""
    response = done.response
    rows: list[UsageRow] = []
    if response is not None:
        cached = response.cache == "hit"
        for name, report in response.providers.items():
            if report.status not in _CALLED:
                continue
            if cached and report.status not in _BILLED:
                continue  # the stored answer's failures were recorded when they happened
            rows.append(_row(done, name, "cached" if cached else report.status, prices))
    spent: Counter[str] = Counter()
    for row in rows:
        if row.cost_micros and row.currency:
            spent[row.currency] += row.cost_micros
    entry = AuditEntry(
        at=done.at,
        tenant=done.tenant,
        status=search_status(response) if response is not None else "refused",
        query_hash=query_hash(done.query) if done.query is not None else None,
        providers=tuple(row.provider for row in rows if row.outcome != "cached"),
        cost_micros=dict(spent),
        unpriced_calls=sum(1 for row in rows if row.cost_micros is None),
        cache=response.cache if response is not None else None,
        key=done.key,
        tool=done.tool,
        workflow=done.workflow,
        adapter=done.adapter,
        task_id=done.task_id,
        query=done.query if record_query else None,
        error_code=done.error_code,
    )
    return rows, entry


def _row(done: Finished, provider: str, outcome: str, prices: PriceTable) -> UsageRow:
    price = prices.of(provider)
    micros = price.micros_per_call if price is not None else None
    status: UsageOutcome = outcome  # type: ignore[assignment]  # one of _CALLED or "cached"
    cost: int | None
    saved: int | None
    if status == "cached":
        cost, saved = 0, micros
    elif status in _BILLED:
        cost, saved = micros, None
    else:
        cost, saved = 0, None
    return UsageRow(
        at=done.at,
        tenant=done.tenant,
        provider=provider,
        outcome=status,
        cost_micros=cost,
        saved_micros=saved,
        currency=price.currency if price is not None else None,
        key=done.key,
        tool=done.tool,
        workflow=done.workflow,
        adapter=done.adapter,
        task_id=done.task_id,
    )
