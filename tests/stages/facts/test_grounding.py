"""grounding: each summary sentence is said by one result, or flagged as mixed or unsupported."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.contract import ResultItem
from sleuth.stages.facts.grounding import (
    GroundingSettings,
    SentenceCheck,
    key_facts,
    split_claims,
    verify_summary,
)


def result(title: str, snippet: str) -> ResultItem:
    return ResultItem(id=title, url=None, providers=["p"], title=title, snippet=snippet)


# The issue's example: A gives the iPhone 15's price, B the Mate 60 Pro's satellite calling.
ZH = [
    result("iPhone 15 国行价格", "iPhone 15 售价 5999 元。"),
    result("华为 Mate 60 Pro 评测", "Mate 60 Pro 支持卫星通话。"),
]
EN = [
    result("iPhone 15 price", "The iPhone 15 sells for $799 in the US."),
    result("Mate 60 Pro review", "The Mate 60 Pro supports satellite calling."),
]


def check(text: str, results: list[ResultItem]) -> SentenceCheck:
    (only,) = verify_summary(text, results)
    return only


# --- the classic mixed-source error ---------------------------------------------------


def test_the_issues_example_in_chinese_is_flagged_mixed() -> None:
    verdict = check("iPhone 15 支持卫星通话。", ZH)

    assert verdict.status == "mixed"
    assert verdict.supported_by == (0, 1)
    assert "'iPhone 15' is in results [0]" in verdict.reasons
    assert "the rest ('支持卫星通话') is in results [1]" in verdict.reasons


def test_the_issues_example_in_english_is_flagged_mixed() -> None:
    verdict = check("The iPhone 15 supports satellite calling.", EN)

    assert verdict.status == "mixed"
    assert verdict.supported_by == (0, 1)
    assert "'iPhone 15' is in results [0]" in verdict.reasons
    assert "the rest ('supports satellite calling') is in results [1]" in verdict.reasons


@pytest.mark.parametrize(
    ("text", "results"),
    [
        ("Mate 60 Pro 售价 5999 元。", ZH),  # the name from B, the price from A
        ("The Mate 60 Pro sells for $799.", EN),
    ],
)
def test_facts_from_two_results_stated_as_one_are_mixed(
    text: str, results: list[ResultItem]
) -> None:
    verdict = check(text, results)

    assert verdict.status == "mixed"
    assert verdict.supported_by == (0, 1)
    assert any("Mate 60 Pro" in reason and "[1]" in reason for reason in verdict.reasons)


def test_each_sentence_of_a_text_is_judged_on_its_own() -> None:
    text = "iPhone 15 售价 5999 元。Mate 60 Pro 支持卫星通话。iPhone 15 支持卫星通话。"

    checks = verify_summary(text, ZH)

    assert [(c.status, c.supported_by) for c in checks] == [
        ("supported", (0,)),
        ("supported", (1,)),
        ("mixed", (0, 1)),
    ]
    assert [text[c.span[0] : c.span[1]] for c in checks] == [c.sentence for c in checks]


# --- supported ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "results", "by"),
    [
        ("iPhone 15 售价 5999 元。", ZH, (0,)),
        ("iPhone15 的售价是 5,999 元。", ZH, (0,)),  # spacing and thousands separator
        ("iPhone 15 售价为 5999元。", ZH, (0,)),
        ("Mate 60 Pro 支持卫星通话。", ZH, (1,)),
        ("华为 Mate 60 Pro 支持卫星通话。", ZH, (1,)),  # 华为 is in B's title
        ("The iPhone 15 sells for $799.", EN, (0,)),
        ("In the US, the iPhone 15 sells for 799 dollars.", EN, (0,)),
        ("Satellite calling is supported by the Mate 60 Pro.", EN, (1,)),  # word order
        ("The iPhone 15 sells for $799 [1].", EN, (0,)),
    ],
)
def test_a_sentence_one_result_states_is_supported_by_it(
    text: str, results: list[ResultItem], by: tuple[int, ...]
) -> None:
    verdict = check(text, results)

    assert (verdict.status, verdict.supported_by, verdict.reasons) == ("supported", by, ())


def test_every_result_that_states_it_supports_it() -> None:
    results = [
        result("Python 3.13 released", "Python 3.13 was released on October 7, 2024."),
        result("Rust 1.82", "Rust 1.82 was released on October 17, 2024."),
        result("What's new", "Python 3.13 was released on 7 October 2024 with a new REPL."),
    ]

    verdict = check("Python 3.13 was released on October 7, 2024.", results)

    assert verdict.supported_by == (0, 2)


# --- unsupported ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "results", "reason"),
    [
        ("iPhone 15 售价 6999 元。", ZH, "'6999 元' is in no result"),
        ("iPhone 15 售价 5999 美元。", ZH, "'5999 美元' is in no result"),  # wrong currency
        ("iPhone 15 Pro 售价 5999 元。", ZH, "'iPhone 15 Pro' is in no result"),  # another model
        ("The iPhone 15 sells for $899.", EN, "'$899' is in no result"),
        ("Pixel 8 supports satellite calling.", EN, "'Pixel 8' is in no result"),
    ],
)
def test_a_fact_no_result_holds_is_unsupported(
    text: str, results: list[ResultItem], reason: str
) -> None:
    verdict = check(text, results)

    assert verdict.status == "unsupported"
    assert verdict.supported_by == ()
    assert reason in verdict.reasons


@pytest.mark.parametrize(
    ("text", "results"),
    [
        ("iPhone 15 采用钛金属边框。", ZH),  # the name is there, the claim is not
        ("The iPhone 15 has a titanium frame.", EN),
        ("苹果股价今天上涨。", ZH),
    ],
)
def test_a_claim_no_result_makes_is_unsupported(text: str, results: list[ResultItem]) -> None:
    verdict = check(text, results)

    assert verdict.status == "unsupported"
    assert any("of its words are in one result" in reason for reason in verdict.reasons)


def test_a_chinese_name_from_the_configured_list_must_match() -> None:
    results = [result("苹果新机", "苹果支持卫星通话。")]

    assert check("华为支持卫星通话。", results).status == "unsupported"
    assert check("苹果支持卫星通话。", results).status == "supported"


def test_without_results_nothing_is_supported() -> None:
    verdict = check("iPhone 15 售价 5999 元。", [])

    assert verdict.status == "unsupported"
    assert verdict.reasons


# --- citations, lists and spans ---------------------------------------------------------


def test_citation_markers_are_read_and_a_wrong_one_is_reported() -> None:
    text = "iPhone 15 售价 5999 元 [1]。Mate 60 Pro 支持卫星通话。[1]"

    first, second = verify_summary(text, ZH)

    assert (first.cited, first.reasons) == ((0,), ())
    assert second.cited == (0,)
    assert second.status == "supported"
    assert second.reasons == ("cites results [0] but only results [1] states it",)


def test_list_items_and_markers_split_into_sentences_with_exact_spans() -> None:
    text = (
        "Summary:\n- The iPhone 15 sells for $799.[1] The Mate 60 Pro supports satellite "
        "calling [2].\n- 【2】\n1. Python 3.13 is out"
    )

    spans = split_claims(text)

    assert [text[a:b] for a, b in spans] == [
        "Summary:",
        "- The iPhone 15 sells for $799.[1]",
        "The Mate 60 Pro supports satellite calling [2].",
        "Python 3.13 is out",  # "1." alone is no sentence
    ]
    checks = verify_summary(text, EN)
    assert [c.status for c in checks[1:3]] == ["supported", "supported"]
    assert [c.cited for c in checks[1:3]] == [(0,), (1,)]


def test_version_numbers_and_abbreviations_do_not_split_sentences() -> None:
    text = "Python 3.13.1 fixes bugs, e.g. in the REPL. Done."
    assert [text[a:b] for a, b in split_claims(text)] == [
        "Python 3.13.1 fixes bugs, e.g. in the REPL.",
        "Done.",
    ]


def test_an_empty_text_has_nothing_to_check() -> None:
    assert verify_summary("", ZH) == []
    assert verify_summary("  \n ", ZH) == []


# --- key facts ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        (
            "iPhone 15 售价 5999 元，比 Mate 60 Pro 便宜 10%。",
            ["iPhone 15", "Mate 60 Pro", "5999 元", "10%"],
        ),
        ("小米14 售价 3999 元，2025年3月1日发布。", ["小米14", "3999 元", "2025年", "3月", "1日"]),
        ("Galaxy S24 Ultra costs US$1,299.", ["Galaxy S24 Ultra", "US$1,299"]),
        ("GPT-4o handles 1.2 million users at 120 Hz.", ["GPT-4o", "1.2 million", "120 Hz"]),
        ("清华大学发布《人工智能发展报告》。", ["清华大学", "人工智能发展报告"]),
        ("128GB 版本，刷新率 60Hz。", ["128GB", "60Hz"]),  # units, not names
        ("Satellite calling works. It is new.", []),  # a capital that only starts a sentence
        ("Python 3.13 was released on October 7, 2024.", ["Python 3.13", "7", "2024"]),
        ("共有3种颜色，今年3月上市。", ["3种", "3月"]),  # counters are units, not model names
    ],
)
def test_key_facts_are_numbers_with_units_and_names(text: str, facts: list[str]) -> None:
    assert key_facts(text) == facts


def test_the_coverage_threshold_is_configurable() -> None:
    results = [result("Mate 60 Pro", "Mate 60 Pro 支持卫星通话。")]
    text = "Mate 60 Pro 支持卫星通话，还能发北斗短信。"  # 5 of its 11 claim bigrams

    assert check(text, results).status == "unsupported"
    lenient = GroundingSettings(min_coverage=0.4)
    assert verify_summary(text, results, lenient)[0].status == "supported"
    with pytest.raises(ValidationError):
        GroundingSettings(min_coverage=2)
