"""facts: numeric claims cross-checked across independent domains."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.contract import Fact, ResultItem
from sleuth.stages.facts import claims
from sleuth.stages.facts.agreement import (
    Claim,
    FactSettings,
    check_facts,
    extract_claims,
    score_claims,
)

SETTINGS = FactSettings()


def item(
    index: int, url: str | None, snippet: str, title: str = "", sources: tuple[str, ...] = ()
) -> ResultItem:
    return ResultItem(
        id=str(index),
        url=url,
        title=title,
        snippet=snippet,
        providers=["bing"],
        sources=list(sources),
    )


def only_fact(facts: list[Fact], unit: str) -> Fact:
    [fact] = [fact for fact in facts if fact.unit == unit]
    return fact


# --- agreement ---------------------------------------------------------------------------

ZH_PRICE = [
    item(0, "https://www.apple.com.cn/iphone-16/", "iPhone 16 国行售价 5999 元起，屏幕 6.1 英寸。"),
    item(
        1,
        "https://news.sina.com.cn/tech/2024-09-10/iphone16.html",
        "苹果 iPhone 16 价格公布：售价 5999 元。",
    ),
    item(2, "https://www.zol.com.cn/price/iphone16.html", "iPhone 16 报价 6999 元，京东有售。"),
    item(3, "https://docs.python.org/3/", "Python 3.13 was released on October 7, 2024."),
]


def test_a_price_two_domains_agree_on_and_a_third_contradicts_is_disputed() -> None:
    checked = check_facts(ZH_PRICE, ["iPhone", "16", "价格"], SETTINGS)

    fact = only_fact(checked.facts, "CNY")
    assert fact.status == "disputed"
    assert fact.attribute == "iphone 16"
    assert fact.value == 5999
    assert [(v.value, v.sources, v.domains) for v in fact.values] == [
        (5999, [0, 1], ["apple.com.cn", "sina.com.cn"]),
        (6999, [2], ["zol.com.cn"]),
    ]
    # the majority's sources agree; the odd one out says it is disputed
    assert [i.fact_check for i in checked.items] == ["agreed", "agreed", "disputed", None]


def test_two_values_each_stated_by_two_domains_leave_every_claim_disputed() -> None:
    tied = [
        item(0, "https://a.example.com/", "iPhone 16 售价 5999 元。"),
        item(1, "https://b.example.org/", "iPhone 16 售价 5999 元。"),
        item(2, "https://c.example.net/", "iPhone 16 售价 6999 元。"),
        item(3, "https://d.example.edu/", "iPhone 16 售价 6999 元。"),
        item(4, "https://e.example.io/", "iPhone 16 售价 7999 元。"),
    ]
    checked = check_facts(tied, ["iPhone", "16", "价格"], SETTINGS)

    fact = only_fact(checked.facts, "CNY")
    assert fact.status == "disputed"
    assert fact.value == 5999  # a tie goes to the best-ranked item's value
    # no value has strictly more sources than every other: nobody's majority agrees
    assert [i.fact_check for i in checked.items] == ["disputed"] * 5
    # one more domain for 6999 makes it the majority, and only its claims agree
    checked = check_facts(
        [*tied, item(5, "https://f.example.co/", "iPhone 16 售价 6999 元。")],
        ["iPhone", "16", "价格"],
        SETTINGS,
    )
    assert [i.fact_check for i in checked.items] == [
        "disputed", "disputed", "agreed", "agreed", "disputed", "agreed"
    ]  # fmt: skip


def test_the_same_in_english() -> None:
    items = [
        item(0, "https://www.apple.com/iphone-16/", "The iPhone 16 starts at $799 for 128GB."),
        item(1, "https://www.theverge.com/24240000/iphone-16", "Apple's iPhone 16 price is $799."),
        item(2, "https://deals.shopnow.example.com/iphone", "The iPhone 16 costs $829 at launch."),
    ]

    checked = check_facts(items, ["iPhone", "16", "price"], SETTINGS)

    fact = only_fact(checked.facts, "USD")
    assert (fact.status, fact.value) == ("disputed", 799)
    assert [(v.value, v.domains) for v in fact.values] == [
        (799, ["apple.com", "theverge.com"]),
        (829, ["example.com"]),
    ]
    assert [i.fact_check for i in checked.items] == ["agreed", "agreed", "disputed"]


def test_a_disputed_fact_is_listed_before_agreed_and_single_source_ones() -> None:
    checked = check_facts(ZH_PRICE, ["iPhone", "16", "价格"], SETTINGS)

    assert [(f.unit, f.status) for f in checked.facts] == [
        ("CNY", "disputed"),
        ("inch", "single_source"),
    ]


def test_two_items_on_one_registrable_domain_count_as_one_source() -> None:
    items = [
        item(0, "https://news.sina.com.cn/a", "iPhone 16 售价 5999 元。"),
        item(1, "https://tech.sina.com.cn/b", "iPhone 16 售价 5999 元。"),
        item(2, "https://www.zol.com.cn/c", "iPhone 16 售价 6999 元。"),
    ]

    checked = check_facts(items, ["iPhone", "16"], SETTINGS)

    fact = only_fact(checked.facts, "CNY")
    assert fact.status == "disputed"
    assert [(v.value, v.sources, v.domains) for v in fact.values] == [
        (5999, [0, 1], ["sina.com.cn"]),
        (6999, [2], ["zol.com.cn"]),
    ]
    # one source against one: the best-ranked item's value leads, nobody is a majority
    assert fact.value == 5999
    assert [i.fact_check for i in checked.items] == ["disputed"] * 3


def test_one_domain_alone_is_single_source_even_twice() -> None:
    items = [
        item(0, "https://news.sina.com.cn/a", "iPhone 16 售价 5999 元。"),
        item(1, "https://tech.sina.com.cn/b", "iPhone 16 国行 5999 元起。"),
    ]

    checked = check_facts(items, ["iPhone", "16"], SETTINGS)

    assert only_fact(checked.facts, "CNY").status == "single_source"
    assert [i.fact_check for i in checked.items] == ["single_source", "single_source"]


def test_the_urls_a_merged_result_was_found_at_count_as_its_domains() -> None:
    merged = item(
        0,
        "https://www.apple.com/iphone-16/",
        "The iPhone 16 starts at $799.",
        sources=("https://www.apple.com/iphone-16/", "https://www.theverge.com/iphone-16"),
    )

    checked = check_facts([merged], ["iPhone", "16"], SETTINGS)

    fact = only_fact(checked.facts, "USD")
    assert (fact.status, fact.values[0].domains) == ("agreed", ["apple.com", "theverge.com"])


def test_values_within_tolerance_agree() -> None:
    items = [
        item(0, "https://a.example.org/", "iPhone 16 售价 5999 元。"),
        item(1, "https://b.example.net/", "iPhone 16 售价 6000 元。"),
    ]

    loose = check_facts(items, ["iPhone", "16"], SETTINGS)
    strict = check_facts(items, ["iPhone", "16"], FactSettings(relative_tolerance=0))

    assert only_fact(loose.facts, "CNY").status == "agreed"
    assert only_fact(strict.facts, "CNY").status == "disputed"


@pytest.mark.parametrize(("other", "status"), [("3.6%", "agreed"), ("3.7%", "disputed")])
def test_percentages_agree_within_percentage_points(other: str, status: str) -> None:
    items = [
        item(0, "https://www.stats.gov.cn/a", "GDP 同比增长 3.5%。"),
        item(1, "https://www.reuters.com/b", f"China's GDP grew {other} year on year."),
    ]

    checked = check_facts(items, ["GDP"], SETTINGS)

    assert only_fact(checked.facts, "%").status == status


def test_a_site_listing_variant_prices_does_not_dispute_one_that_gives_one() -> None:
    items = [
        item(
            0, "https://www.apple.com.cn/a", "iPhone 16 售价 5999 元，iPhone 16 更高容量 6999 元。"
        ),
        item(1, "https://www.jd.com/b", "iPhone 16 售价 5999 元。"),
    ]

    checked = check_facts(items, ["iPhone", "16"], SETTINGS)

    fact = only_fact(checked.facts, "CNY")
    assert (fact.status, fact.value) == ("agreed", 5999)
    assert [i.fact_check for i in checked.items] == ["agreed", "agreed"]


def test_pro_and_base_prices_are_separate_facts() -> None:
    items = [
        item(0, "https://a.example.org/", "iPhone 16 Pro 售价 7999 元。"),
        item(1, "https://b.example.net/", "iPhone 16 售价 5999 元。"),
    ]

    checked = check_facts(items, ["iPhone", "16", "价格"], SETTINGS)

    assert sorted((f.attribute, f.status) for f in checked.facts) == [
        ("iphone 16", "single_source"),
        ("iphone 16 pro", "single_source"),
    ]


def test_items_without_claims_are_left_unlabelled_and_inputs_untouched() -> None:
    items = [item(0, "https://docs.python.org/3/", "Python 3.13 adds a JIT.")]

    checked = check_facts(items, ["Python", "3.13"], SETTINGS)

    assert checked.facts == []
    assert checked.items[0].fact_check is None
    assert items[0].fact_check is None


def test_local_results_without_a_host_count_together_as_one_source() -> None:
    items = [
        item(0, "file:///notes/a.md", "iPhone 16 售价 5999 元。"),
        item(1, None, "iPhone 16 售价 5999 元。"),
    ]

    checked = check_facts(items, ["iPhone", "16"], SETTINGS)

    fact = only_fact(checked.facts, "CNY")
    assert (fact.status, fact.values[0].domains) == ("single_source", [])


def test_max_facts_caps_the_list_but_every_item_is_still_labelled() -> None:
    checked = check_facts(ZH_PRICE, ["iPhone", "16", "价格"], FactSettings(max_facts=0))

    assert checked.facts == []
    assert checked.items[2].fact_check == "disputed"


def test_local_and_unparsable_urls_are_host_less_and_ip_addresses_their_own_source() -> None:
    items = [
        item(0, "http://192.168.1.1/a", "iPhone 16 售价 5999 元。"),
        item(1, "http://10.0.1.1/b", "iPhone 16 售价 5999 元。"),
        item(2, "http://[bad/c", "iPhone 16 售价 6999 元。"),
        item(3, "file:///notes/d.md", "iPhone 16 售价 6999 元。"),
    ]

    checked = check_facts(items, ["iPhone", "16"], SETTINGS)

    fact = only_fact(checked.facts, "CNY")
    assert [(v.value, v.domains) for v in fact.values] == [
        (5999, ["192.168.1.1", "10.0.1.1"]),
        (6999, []),
    ]
    assert [i.fact_check for i in checked.items] == ["agreed", "agreed", "disputed", "disputed"]


# --- settings ----------------------------------------------------------------------------


def test_settings_reject_unknown_keys_and_are_frozen() -> None:
    with pytest.raises(ValidationError):
        FactSettings(tolerance=0.1)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SETTINGS.relative_tolerance = 0.5  # type: ignore[misc]


def test_extraction_names_are_importable_from_facts_and_settings_are_one_section() -> None:
    assert (Claim, extract_claims, score_claims) == (
        claims.Claim,
        claims.extract_claims,
        claims.score_claims,
    )
    assert isinstance(SETTINGS, claims.ClaimSettings)
    assert FactSettings(max_claims_per_item=3, relative_tolerance=0).max_claims_per_item == 3
