"""A finished search becomes usage rows and an audit entry; the report sums them."""

from __future__ import annotations

from decimal import Decimal

from sleuth.contract import ProviderReport, SearchResponse
from sleuth.store.usage_records import UsageRow
from sleuth.usage import Finished, PriceTable, account, summarise, total

PRICES = PriceTable.from_settings({"acme_api": {"per_1000": "1.234", "currency": "USD"}})
DAY = 86400.0


def answer(cache: str = "miss", **statuses: str) -> SearchResponse:
    reports = {
        name: ProviderReport(status=status, latency_ms=10.0, results=3)  # type: ignore[arg-type]
        for name, status in statuses.items()
    }
    return SearchResponse(
        task_id="t", query="q", rewritten_query="q", results=[], providers=reports, cache=cache
    )


def test_answered_calls_cost_their_price_failures_nothing_skips_are_not_calls() -> None:
    done = Finished(
        at=0.0,
        tenant="acme",
        response=answer(
            kagi="ok", acme_api="empty", brave="error", exa="timeout", tavily="skipped"
        ),
        key="sk_abcdefgh",
        tool="internal_search",
        workflow="steward",
        adapter="http_search",
        query="最近一周的客户投诉",
    )
    rows, entry = account(done, PRICES)
    assert {(r.provider, r.outcome, r.cost_micros, r.currency) for r in rows} == {
        ("kagi", "ok", 25000, "USD"),
        ("acme_api", "empty", 1234, "USD"),
        ("brave", "error", 0, None),
        ("exa", "timeout", 0, None),
    }
    assert {(r.key, r.tool, r.workflow, r.adapter) for r in rows} == {
        ("sk_abcdefgh", "internal_search", "steward", "http_search")
    }
    assert entry.cost_micros == {"USD": 26234}
    assert entry.providers == ("kagi", "acme_api", "brave", "exa")
    assert entry.query is None and entry.query_hash is not None  # the text only when asked


def test_an_answered_call_with_no_known_price_is_unpriced_not_free() -> None:
    rows, entry = account(Finished(at=0.0, tenant="acme", response=answer(brave="ok")), PRICES)
    assert [(r.cost_micros, r.currency) for r in rows] == [(None, None)]
    assert entry.unpriced_calls == 1 and entry.cost_micros == {}


def test_a_cache_hit_calls_nobody_and_saves_what_the_stored_calls_cost() -> None:
    hit = answer(cache="hit", kagi="ok", brave="ok", exa="error")
    rows, entry = account(Finished(at=0.0, tenant="acme", response=hit), PRICES)
    assert [(r.provider, r.outcome, r.cost_micros, r.saved_micros) for r in rows] == [
        ("kagi", "cached", 0, 25000),
        ("brave", "cached", 0, None),
    ]
    assert entry.providers == () and entry.cost_micros == {} and entry.cache == "hit"


def test_the_query_text_is_kept_only_when_configured() -> None:
    done = Finished(at=0.0, tenant="acme", response=answer(kagi="ok"), query="secret plans")
    assert account(done, PRICES, record_query=True)[1].query == "secret plans"


def test_costs_add_up_exactly_per_period_and_in_total() -> None:
    # 1.234 per 1,000 calls is 0.001234 a call: three calls a day for 400 days.
    rows: list[UsageRow] = []
    for n in range(1200):
        response = answer(acme_api="ok")
        rows.extend(account(Finished(at=n * DAY / 3, tenant="acme", response=response), PRICES)[0])
    days = summarise(rows, "day")
    months = summarise(rows, "month")
    expected = Decimal("0.001234") * 1200
    assert Decimal(total(rows)["cost"]["USD"]) == expected == Decimal("1.480800")
    assert sum(Decimal(day["cost"]["USD"]) for day in days) == expected
    assert sum(Decimal(month["cost"]["USD"]) for month in months) == expected
    assert sum(month["cost_micros"]["USD"] for month in months) == sum(
        r.cost_micros or 0 for r in rows
    )
    assert len(days) == 400 and {day["calls"] for day in days} == {3}


def test_a_report_groups_by_what_it_is_asked() -> None:
    rows = [
        UsageRow(0.0, "acme", "kagi", "ok", 25000, currency="USD", tool="internal_search"),
        UsageRow(1.0, "acme", "kagi", "error", 0, tool="internal_search"),
        UsageRow(2.0, "beta", "kagi", "cached", 0, 25000, "USD"),
    ]
    (day,) = summarise(rows, "day", ["tenant", "tool"])
    assert day["by_tenant"]["acme"]["calls"] == 2 and day["by_tenant"]["acme"]["failures"] == 1
    assert day["by_tenant"]["beta"]["cache_savings"] == {"USD": "0.025000"}
    assert set(day["by_tool"]) == {"internal_search", "none"}
