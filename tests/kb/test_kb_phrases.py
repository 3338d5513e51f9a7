"""Phrase credit: a query's neighbouring words found side by side in a section."""

from __future__ import annotations

from sleuth.kb.phrases import PHRASE_WEIGHT, phrase_credit

IDF = {
    ("text", "creat"): 2.0,
    ("text", "index"): 1.0,
    ("title", "creat"): 3.0,
    ("title", "index"): 3.0,
}
PAIRS = [("creat", "index")]


def test_a_pair_side_by_side_earns_credit_and_apart_or_reversed_none() -> None:
    assert phrase_credit({"text": ["creat", "index", "now"]}, PAIRS, IDF) > 0
    assert phrase_credit({"text": ["creat", "the", "index"]}, PAIRS, IDF) == 0
    assert phrase_credit({"text": ["index", "creat"]}, PAIRS, IDF) == 0
    assert phrase_credit({"text": []}, PAIRS, IDF) == 0


def test_once_it_is_a_tenth_of_the_two_words_rarity() -> None:
    credit = phrase_credit({"text": ["creat", "index"]}, PAIRS, IDF)
    assert abs(credit - PHRASE_WEIGHT * (2.0 + 1.0)) < 1e-9


def test_more_occurrences_earn_more_but_saturate() -> None:
    def credit(times: int) -> float:
        return phrase_credit({"text": ["creat", "index"] * times}, PAIRS, IDF)

    assert credit(1) < credit(2) < credit(10) < 2.2 * credit(1)


def test_each_field_counts_with_its_own_rarity() -> None:
    text = phrase_credit({"text": ["creat", "index"]}, PAIRS, IDF)
    title = phrase_credit({"title": ["creat", "index"]}, PAIRS, IDF)
    both = phrase_credit({"title": ["creat", "index"], "text": ["creat", "index"]}, PAIRS, IDF)
    assert title == 2 * text  # 3 + 3 against 2 + 1
    assert abs(both - (text + title)) < 1e-9


def test_only_the_query_pairs_count() -> None:
    fields = {"text": ["drop", "index", "creat", "tabl"]}
    assert phrase_credit(fields, PAIRS, IDF) == 0  # both words there, never side by side
    assert phrase_credit(fields, [("drop", "index")], {("text", "drop"): 1.0}) > 0
