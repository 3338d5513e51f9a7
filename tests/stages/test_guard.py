"""Tests for sleuth.stages.guard: cleaning, limits and the block list."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sleuth.errors import InvalidRequest, PolicyViolation
from sleuth.stages.guard import GuardedQuery, GuardSettings, guard

DEFAULT = GuardSettings()


def test_plain_query_passes_unchanged() -> None:
    assert guard("北京今天天气怎么样", DEFAULT) == GuardedQuery("北京今天天气怎么样", 0, ())


def test_full_width_ascii_becomes_half_width_and_chinese_stays() -> None:
    result = guard("ｉＰｈｏｎｅ　１６ Ｐｒｏ 价格１２３元", DEFAULT)
    assert result.text == "iPhone 16 Pro 价格123元"
    assert result.removed == 0
    assert any("NFKC" in note for note in result.notes)


def test_full_width_digits() -> None:
    assert guard("１２３", DEFAULT).text == "123"


def test_zero_width_characters_inside_words_are_removed() -> None:
    result = guard("Py\u200bth\u200con\u200d 3.12\ufeff", DEFAULT)
    assert result.text == "Python 3.12"
    assert result.removed == 4
    assert result.notes[0].startswith("removed 4 control or invisible characters: U+200B")


def test_bidi_overrides_and_isolates_are_removed() -> None:
    query = "abc\u202edef\u202c \u2066ghi\u2069 \u202a\u202b\u202d"
    result = guard(query, DEFAULT)
    assert result.text == "abcdef ghi"
    assert result.removed == 7


def test_soft_hyphen_tags_and_blank_lookalikes_are_removed() -> None:
    result = guard("ex\u00adample\U000e0041 \u3164\u2800 word", DEFAULT)
    assert result.text == "example word"
    assert result.removed == 4


def test_tabs_and_newlines_become_spaces_and_whitespace_collapses() -> None:
    result = guard("  first\tsecond\n\nthird\r\n  ", DEFAULT)
    assert result.text == "first second third"
    assert result.removed == 0
    assert "turned 5 tab or line breaks into spaces" in result.notes
    assert "collapsed and trimmed whitespace" in result.notes


def test_other_control_characters_are_removed() -> None:
    result = guard("ab\x00c\x07d\x1b[31m", DEFAULT)
    assert result.text == "abcd[31m"
    assert result.removed == 3


def test_emoji_are_kept() -> None:
    assert guard("🔥 latest news 🚀", DEFAULT).text == "🔥 latest news 🚀"


def test_emoji_only_query_is_searchable() -> None:
    assert guard("🐼", DEFAULT).text == "🐼"


def test_zero_width_joiner_inside_an_emoji_sequence_is_removed() -> None:
    assert guard("👨\u200d💻 jobs", DEFAULT).text == "👨💻 jobs"


@pytest.mark.parametrize("query", ["\x00\x01\x02", "\u200b\u200c\u200d\ufeff", " \t\n ", ""])
def test_nothing_searchable_is_invalid(query: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        guard(query, DEFAULT)
    error = caught.value
    assert error.field == "query"
    assert error.allowed == ["1..400 characters"]
    assert error.message == (
        "query: nothing searchable remains after removing control and invisible characters; "
        "expected 1..400 visible characters"
    )
    assert error.info().code == "invalid_request"


def test_punctuation_only_is_invalid() -> None:
    with pytest.raises(InvalidRequest, match=r"^query: only punctuation remains") as caught:
        guard("？？ ...", DEFAULT)
    assert caught.value.field == "query"


def test_exactly_max_chars_is_accepted() -> None:
    settings = GuardSettings(max_chars=10)
    assert guard("a" * 10, settings).text == "a" * 10
    assert len(guard("中" * 400, DEFAULT).text) == 400


def test_one_over_max_chars_is_rejected_with_limit_and_length() -> None:
    settings = GuardSettings(max_chars=10)
    with pytest.raises(InvalidRequest) as caught:
        guard("a" * 11, settings)
    error = caught.value
    assert error.field == "query"
    assert error.allowed == ["1..10 characters"]
    assert "11 characters" in error.message
    assert "limit is 10" in error.message
    assert error.message.startswith("query:")


def test_length_is_counted_after_cleaning() -> None:
    settings = GuardSettings(max_chars=5)
    assert guard("\u200b" * 50 + "abcde" + "   ", settings).text == "abcde"


def test_block_list_hit_latin_is_a_policy_violation_without_echo() -> None:
    settings = GuardSettings(block_list=["weapon", "bomb"])
    query = "how to build a BOMB at home secretly"
    with pytest.raises(PolicyViolation) as caught:
        guard(query, settings)
    error = caught.value
    assert error.code == "policy_violation"
    assert error.category == "non_recoverable"
    assert error.field == "query"
    assert "#2" in error.message
    assert "Latin-script word" in error.message
    assert query not in error.message
    assert "BOMB" not in error.message
    assert "secretly" not in error.message


def test_block_list_hit_chinese_matches_as_substring() -> None:
    settings = GuardSettings(block_list=["炸弹"])
    with pytest.raises(PolicyViolation, match="Chinese term") as caught:
        guard("怎么制作炸弹教程", settings)
    assert "制作" not in caught.value.message


def test_block_list_latin_term_does_not_match_inside_a_longer_word() -> None:
    settings = GuardSettings(block_list=["ass"])
    assert guard("Python class attributes", settings).text == "Python class attributes"
    assert guard("passage assessment", settings).text == "passage assessment"


def test_block_list_latin_term_matches_next_to_chinese_and_punctuation() -> None:
    settings = GuardSettings(block_list=["ass"])
    for query in ["ass", "Ass!", "买ass的", "(ass)"]:
        with pytest.raises(PolicyViolation):
            guard(query, settings)


def test_block_list_multi_word_term() -> None:
    settings = GuardSettings(block_list=["credit card dump"])
    with pytest.raises(PolicyViolation):
        guard("buy   Credit\tCard dump now", settings)
    assert guard("credit card dumpling", settings).text == "credit card dumpling"


def test_block_list_is_not_evaded_by_invisible_or_full_width_characters() -> None:
    settings = GuardSettings(block_list=["bomb", "炸弹"])
    with pytest.raises(PolicyViolation):
        guard("b\u200bo\u200dmb", settings)
    with pytest.raises(PolicyViolation):
        guard("ｂｏｍｂ", settings)
    with pytest.raises(PolicyViolation):
        guard("炸\u200b弹", settings)


def test_block_list_miss_passes() -> None:
    settings = GuardSettings(block_list=["bomb", "炸弹"])
    assert guard("bombay weather", settings).text == "bombay weather"


def test_empty_block_list_entries_are_ignored() -> None:
    assert guard("anything", GuardSettings(block_list=["", "  "])).text == "anything"


def test_settings_are_strict_and_frozen() -> None:
    with pytest.raises(ValidationError):
        GuardSettings(max_chars=0)
    with pytest.raises(ValidationError):
        GuardSettings.model_validate({"max_char": 10})
    with pytest.raises(ValidationError):
        DEFAULT.max_chars = 5
    assert DEFAULT.max_chars == 400
    assert DEFAULT.block_list == []


def test_guarded_query_is_frozen() -> None:
    result = guard("x", DEFAULT)
    with pytest.raises(AttributeError):
        result.text = "y"  # type: ignore[misc]
