"""Emulated filters for back ends that cannot filter themselves."""

from datetime import UTC, datetime, timedelta

from sleuth.contract import ResultItem
from sleuth.stages.scope import filter_domains, filter_time_range, in_domains

NOW = datetime(2026, 11, 30, tzinfo=UTC)


def item(domain: str | None, days: int | None = None) -> ResultItem:
    return ResultItem(
        id=str(domain),
        url=None,
        providers=["p"],
        domain=domain,
        published_at=None if days is None else NOW - timedelta(days=days),
    )


def test_subdomains_count_and_lookalikes_do_not() -> None:
    assert in_domains("docs.python.org", ["python.org"])
    assert in_domains("python.org", ["python.org"])
    assert not in_domains("notpython.org", ["python.org"])
    assert not in_domains("python.org.evil.com", ["python.org"])
    assert not in_domains(None, ["python.org"])


def test_filter_domains() -> None:
    kept = filter_domains([item("a.gov.cn"), item("b.com")], ["gov.cn"])
    assert [i.domain for i in kept] == ["a.gov.cn"]
    assert len(filter_domains([item("b.com")], [])) == 1


def test_time_range_keeps_dated_items_within_range() -> None:
    items = [item("a.com", 3), item("b.com", 20), item("c.com", 200), item("d.com")]
    assert [i.domain for i in filter_time_range(items, "past_week", NOW)] == ["a.com"]
    assert [i.domain for i in filter_time_range(items, "past_month", NOW)] == ["a.com", "b.com"]
    assert [i.domain for i in filter_time_range(items, "past_year", NOW)] == [
        "a.com",
        "b.com",
        "c.com",
    ]
    assert len(filter_time_range(items, "any", NOW)) == 4


def test_a_domain_filter_over_local_files_only_is_refused_with_the_reason() -> None:
    from sleuth import providers
    from sleuth.stages.scope import refusal

    local, brave = providers.get("local").info, providers.get("brave").info
    field, reason = refusal(["python.org"], [local]) or ("", "")
    assert field == "domain_filter"
    assert reason.startswith("domain_filter:") and "local" in reason
    assert refusal(["python.org"], [local, brave]) is None
    assert refusal([], [local]) is None


def test_a_domain_filter_splits_into_domains_and_source_names() -> None:
    from sleuth.stages.scope import only_sources, split_scope

    assert split_scope(["python.org", "support_tickets"]) == (("python.org",), ("support_tickets",))
    assert only_sources(["support_tickets"], [])
    assert not only_sources(["python.org", "support_tickets"], [])
    assert only_sources([], ["policy"])  # tags: only the knowledge base has them
    assert not only_sources(["python.org"], ["policy"])  # the web results kept by domain
    assert not only_sources([], [])


def test_source_names_over_web_back_ends_only_are_refused_with_the_reason() -> None:
    from sleuth import providers
    from sleuth.stages.scope import refusal

    local, brave = providers.get("local").info, providers.get("brave").info
    assert refusal(["support_tickets"], [brave]) == (
        "domain_filter",
        "domain_filter: brave hold no knowledge-base sources, so no result can come from "
        "support_tickets; add the local provider or drop the source names",
    )
    assert refusal(["support_tickets", "python.org"], [brave]) is not None
    assert refusal([], [brave], ["policy"]) is not None
    assert refusal(["support_tickets"], [local], ["policy"]) is None
    # Each kind of entry needs a provider that can serve it.
    assert refusal(["support_tickets", "python.org"], [local]) is not None
    assert refusal(["support_tickets", "python.org"], [local, brave]) is None
