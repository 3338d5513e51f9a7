"""Language helpers: tokens and sentence ends, Chinese and English."""

import importlib

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from sleuth.text import language_of, sentence_prefix, sentence_spans, split_sentences, tokens


def test_tokens_split_latin_words_and_chinese_bigrams() -> None:
    assert tokens("Python3.12发布 说明") == ("python3.12", "发布", "说明")
    assert tokens("iPhone 16 售价") == ("iphone", "16", "售价")
    assert tokens("don't stop, covid-19!") == ("don't", "stop", "covid-19")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Without Chinese a shorter path runs: the same words, underscores and all.
        ("snake_case__x  Ünïcode café’s 3.12.1 -x- a..b", ("snake", "case", "x", "ünïcode")),
        ("Ⅻ ½ ² ١٢٣ ΣΑΣ", ("ⅻ", "½", "²", "١٢٣", "σας")),
    ],
)
def test_texts_without_chinese_keep_their_tokens(text: str, expected: tuple[str, ...]) -> None:
    assert tokens(text)[: len(expected)] == expected
    assert tokens(text) == tokens(text + " 中")[:-1]  # as the Chinese path reads them


@pytest.mark.parametrize(
    "text", ["Don't stop: covid-19, v3.12.1 -x- a..b snake_case 'quoted' it's", "ABC-def.GHI"]
)
def test_ascii_texts_read_as_any_other(text: str) -> None:
    # An ASCII text takes the shortest path; the same words come out of the others.
    assert tokens(text) == tokens(text + " é")[:-1] == tokens(text + " 中")[:-1]


def test_long_chinese_runs_are_read_as_bigrams() -> None:
    run = "中文" * 50
    assert tokens(run) == tuple(run[i : i + 2] for i in range(len(run) - 1))
    assert tokens(f"a{run}b") == ("a", *tokens(run), "b")


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("第一句。第二句！第三句？", ["第一句。", "第二句！", "第三句？"]),
        ("Version 3.5 is out. It is faster.", ["Version 3.5 is out.", "It is faster."]),
        (
            "Strip the www. prefix first. Then compare.",
            ["Strip the www. prefix first.", "Then compare."],
        ),
        ("Use a tuple, e.g. a pair. Done!", ["Use a tuple, e.g. a pair.", "Done!"]),
        ("Ask Dr. Smith. He knows.", ["Ask Dr. Smith.", "He knows."]),
        ("他说：“好的。”然后走了。", ["他说：“好的。”", "然后走了。"]),
        (
            "1. `threejs` 会操作 `DOM`,但是小程序里面没有 `DOM` 2. 小程序的 canvas 和 web 不一样",
            [
                "1. `threejs` 会操作 `DOM`,但是小程序里面没有 `DOM`",
                "2. 小程序的 canvas 和 web 不一样",
            ],
        ),
        ("Steps: 1. Open it. 2. Close it.", ["Steps: 1. Open it.", "2. Close it."]),
        ("It costs 12. Then it rises.", ["It costs 12.", "Then it rises."]),
        ("No end mark here", ["No end mark here"]),
        ("   ", []),
    ],
)
def test_sentences_end_where_a_reader_would_end_them(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences
    assert [text[a:b] for a, b in sentence_spans(text)] == sentences


def test_language_of_unassigned_code_points_among_the_chinese_ones() -> None:
    # U+FA6E and U+FA6F lie in the compatibility ideographs' block but are no letters.
    assert language_of("\ufa6e\ufa6f") == "en"


def test_language_of_a_mixed_query() -> None:
    assert language_of("北京明天天气 weather") == "zh"
    assert language_of("what's new in python 3.13") == "en"
    assert language_of("iPhone 16 价格") == "zh"  # a Chinese query about a Latin-named product
    assert language_of("the word 你好 means hello in Chinese") == "en"


# Words, marks and numbers that sentence ends depend on: abbreviations, decimals, list
# markers, closing quotes, Chinese marks, lower- and upper-case next words.
# fmt: off
_PIECES = [
    "One", "two", "Dr.", "e.g.", "no.", "3.5", "1.", "2.", "3.", "12.", "x.", ".", "!", "?",
    "。", "！", "？", "”", '"', ")", "’", "(", "“", "第一句", "iPhone", "Steps:", ":", " ",
    "  ", "\n", "\t", "\u3000",
]
# fmt: on
_SENTENCES = st.lists(st.sampled_from(_PIECES), max_size=30).map("".join)


@given(_SENTENCES)
@example("Steps: 1. Mix it. 2. Bake it. Done.")
@example("Ask Dr. Smith. He knows. e.g. this")
def test_a_text_cut_after_a_sentence_has_the_sentences_it_kept(text: str) -> None:
    # sentence_prefix hands the cut text's spans on to sentence_spans: the ones found anew.
    found_anew = importlib.import_module("sleuth.text")._spans
    for _, end in sentence_spans(text):
        prefix = sentence_prefix(text, end)
        assert prefix == text[:end]
        assert sentence_spans(prefix) == found_anew(prefix)
        sentence_spans.cache_clear()  # the next cut is split anew or handed on again
