"""Phrase credit: a query's neighbouring words found side by side in a section."""

from __future__ import annotations

from sleuth.kb.engine import PHRASE_WEIGHT, Statistics, field_norm
from sleuth.kb.phrases import K1, phrase_credit

IDF = {
    ("text", "creat"): 2.0,
    ("text", "index"): 1.0,
    ("title", "creat"): 3.0,
    ("title", "index"): 3.0,
}
PAIRS = [("creat", "index")]


def stats(average: float = 2.0) -> Statistics:
    return Statistics(IDF, {"text": average, "title": average})


def test_a_pair_side_by_side_earns_credit_and_apart_or_reversed_none() -> None:
    assert phrase_credit({"text": ["creat", "index", "now"]}, PAIRS, stats()) > 0
    assert phrase_credit({"text": ["creat", "the", "index"]}, PAIRS, stats()) == 0
    assert phrase_credit({"text": ["index", "creat"]}, PAIRS, stats()) == 0
    assert phrase_credit({"text": []}, PAIRS, stats()) == 0


def test_once_in_a_field_of_average_length_it_is_a_tenth_of_the_two_words_rarity() -> None:
    credit = phrase_credit({"text": ["creat", "index"]}, PAIRS, stats())
    assert abs(credit - PHRASE_WEIGHT * (2.0 + 1.0)) < 1e-9


def test_more_occurrences_earn_more_but_saturate() -> None:
    def credit(times: int) -> float:
        return phrase_credit({"text": ["creat", "index"] * times}, PAIRS, stats(2.0 * times))

    assert credit(1) < credit(2) < credit(10) < (K1 + 1) * credit(1)


def test_a_longer_field_earns_less() -> None:
    short = phrase_credit({"text": ["creat", "index"]}, PAIRS, stats(10.0))
    long = phrase_credit({"text": ["creat", "index", *["x"] * 28]}, PAIRS, stats(10.0))
    assert long < short
    # The length as indexed, when the terms given are not all of them.
    assert phrase_credit({"text": ["creat", "index"]}, PAIRS, stats(10.0), {"text": 30}) == long


def test_each_field_counts_with_its_own_rarity() -> None:
    text = phrase_credit({"text": ["creat", "index"]}, PAIRS, stats())
    title = phrase_credit({"title": ["creat", "index"]}, PAIRS, stats())
    both = phrase_credit({"title": ["creat", "index"], "text": ["creat", "index"]}, PAIRS, stats())
    assert title == 2 * text  # 3 + 3 against 2 + 1
    assert abs(both - (text + title)) < 1e-9


def test_only_the_query_pairs_count() -> None:
    fields = {"text": ["drop", "index", "creat", "tabl"]}
    assert phrase_credit(fields, PAIRS, stats()) == 0  # both words there, never side by side
    assert phrase_credit(fields, [("drop", "index")], Statistics({("text", "drop"): 1.0}, {})) > 0


def test_field_lengths_are_kept_as_the_engine_keeps_them() -> None:
    assert [field_norm(n) for n in (0, 7, 40, 41, 42, 43, 57, 60, 98, 226)] == [
        *(0, 7, 40, 40, 42, 42, 56, 60, 96, 216)
    ]
