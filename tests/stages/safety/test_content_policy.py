"""Content policy: a violating result is replaced by the fixed notice and recorded;
everything else passes untouched; the spelling of a term does not hide it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.contract import ResultItem
from sleuth.extract.models import ExtractedPage
from sleuth.stages.safety.content_policy import (
    NOTICES,
    WITHHELD_FLAG,
    ContentPolicySettings,
    apply_content_policy,
)

POLICY = ContentPolicySettings(
    terms={"zh": ["赌博网站", "违禁品"], "en": ["casino", "online betting", "ass"]},
    domains=["bad.example"],
)


def item(
    title: str = "", snippet: str = "", url: str | None = "https://ok.example/a", **extra: object
) -> ResultItem:
    return ResultItem.model_validate(
        {
            "id": "id-1",
            "url": url,
            "title": title,
            "snippet": snippet,
            "providers": ["searxng"],
            "domain": extra.pop("domain", "ok.example" if url else None),
            "sources": [url] if url else [],
            **extra,
        }
    )


def withheld(result: ResultItem) -> bool:
    return WITHHELD_FLAG in result.flags


def test_the_default_policy_withholds_nothing() -> None:
    items = [item("赌博网站大全", "casino"), item("Python 3.13")]
    kept, degradations = apply_content_policy(items, ContentPolicySettings())
    assert kept == items
    assert degradations == []


def test_a_violating_result_becomes_the_notice_and_loses_its_content() -> None:
    violating = item(
        "Top casino bonuses",
        "Play now.",
        fields={"price": "$5"},
        flags=["suspected_injection"],
        fact_check="single_source",
    )
    (kept,), (degradation,) = apply_content_policy([violating], POLICY, language="en")
    assert kept.title == kept.snippet == "This result is withheld under the content policy"
    assert (kept.url, kept.domain, kept.sources, kept.fields, kept.fact_check) == (
        None,
        None,
        [],
        {},
        None,
    )
    assert kept.flags == ["suspected_injection", WITHHELD_FLAG]
    assert (kept.id, kept.providers) == (violating.id, violating.providers)
    assert degradation.kind == "result_withheld"
    assert degradation.provider == "searxng"
    assert degradation.reason == (
        "result id-1 withheld: its title matches content_policy.terms.en entry #1"
    )
    assert "casino" not in degradation.reason  # the record names the entry, not the term


def test_the_notice_follows_the_query_language() -> None:
    items = [item("Casino guide")]
    (zh,), _ = apply_content_policy(items, POLICY, language="zh")
    (en,), _ = apply_content_policy(items, POLICY, language="en")
    assert zh.title == zh.snippet == "根据内容安全策略，该结果暂不展示" == NOTICES["zh"]
    assert en.title == NOTICES["en"]


def test_without_a_query_language_each_result_picks_its_own() -> None:
    items = [item("最好的赌博网站推荐"), item("Casino guide")]
    (zh, en), _ = apply_content_policy(items, POLICY)
    assert (zh.title, en.title) == (NOTICES["zh"], NOTICES["en"])


@pytest.mark.parametrize(
    "text",
    [
        "最新赌博网站推荐",  # inside a longer Chinese run
        "赌博 网站 大全",  # spaces between the characters
        "赌\u200b博网\u200d站",  # zero-width characters
        "出售违禁品",
        "Best CASINO in town",
        "ＣＡＳＩＮＯ bonuses",  # full-width letters
        "ca\u00adsino night",  # a soft hyphen
        "Online   Betting odds",  # a phrase across several spaces
        "澳门casino攻略",  # a Latin word next to Chinese characters
    ],
)
def test_spelling_does_not_hide_a_term(text: str) -> None:
    (kept,), degradations = apply_content_policy([item(snippet=text)], POLICY, language="en")
    assert withheld(kept) and len(degradations) == 1
    assert "its snippet matches" in degradations[0].reason


@pytest.mark.parametrize(
    "text",
    [
        "Python class reference",  # "ass" is a whole-word term
        "casinos",  # a different word
        "Occasional showers",
        "online and betting are separate words here: online, then betting",
        "赌博危害与网站安全",  # the characters, but not the term
        "",
    ],
)
def test_benign_text_passes(text: str) -> None:
    original = item("Title", text)
    kept, degradations = apply_content_policy([original], POLICY)
    assert kept == [original] and degradations == []


@pytest.mark.parametrize(
    ("url", "domain", "held"),
    [
        ("https://bad.example/page", "bad.example", True),
        ("https://www.bad.example/page", "bad.example", True),
        ("https://cdn.bad.example/x", "cdn.bad.example", True),
        ("https://notbad.example/x", "notbad.example", False),
        ("https://bad.example.org/x", "bad.example.org", False),
        ("https://BAD.example/x", None, True),  # no domain field: the link's host counts
    ],
)
def test_domains_and_their_subdomains_are_withheld(
    url: str, domain: str | None, held: bool
) -> None:
    (kept,), degradations = apply_content_policy([item("t", url=url, domain=domain)], POLICY)
    assert withheld(kept) is held
    if held:
        assert degradations[0].reason.endswith("its link matches content_policy.domains entry #1")


def test_order_is_kept_and_clean_items_are_the_same_objects() -> None:
    items = [item("one"), item("casino"), item("three")]
    kept, degradations = apply_content_policy(items, POLICY)
    assert kept[0] is items[0] and kept[2] is items[2]
    assert withheld(kept[1]) and len(degradations) == 1


def test_applying_twice_changes_nothing_more() -> None:
    once, _ = apply_content_policy([item("casino")], POLICY, language="en")
    twice, again = apply_content_policy(once, POLICY, language="en")
    assert twice == once and again == []


def test_settings_normalise_domains_and_refuse_empty_entries() -> None:
    settings = ContentPolicySettings(domains=["https://www.Bad.Example/path", "x.example."])
    assert settings.domains == ["bad.example", "x.example"]
    with pytest.raises(ValidationError, match=r"terms.en\[1\] is empty"):
        ContentPolicySettings(terms={"en": ["ok", " \u200b "]})
    with pytest.raises(ValidationError, match="is not a domain"):
        ContentPolicySettings(domains=["localhost"])
    with pytest.raises(ValidationError):
        ContentPolicySettings.model_validate({"term": {"en": ["x"]}})


# --- a read page (include content) ---------------------------------------------------------


def test_a_term_in_the_pages_text_withholds_the_result_and_its_content() -> None:
    found = item("Travel deals", "Cheap trains this winter.", content="Book now ...")
    page = ExtractedPage(url=found.url or "", text="The best online betting odds for your trip.")
    (kept,), (why,) = apply_content_policy([found], POLICY, "en", {found.id: page})
    assert withheld(kept) and kept.content is None
    assert why.reason == "result id-1 withheld: its page matches content_policy.terms.en entry #2"
    assert apply_content_policy([found], POLICY, "en") == ([found], [])  # its snippet alone is fine


def test_a_page_that_ends_on_a_listed_domain_withholds_the_result() -> None:
    found = item("Travel deals", "Cheap trains this winter.")
    moved = ExtractedPage(url=found.url or "", final_url="https://www.bad.example/landing")
    (kept,), (why,) = apply_content_policy([found], POLICY, "en", {found.id: moved})
    assert withheld(kept)
    assert why.reason.endswith("its page's address matches content_policy.domains entry #1")
