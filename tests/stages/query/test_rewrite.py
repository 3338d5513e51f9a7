"""Tests for sleuth.stages.query.rewrite: keyword distillation, context carry, time sensitivity."""

from __future__ import annotations

import sys
import unicodedata

import pytest
from pydantic import ValidationError

from sleuth.errors import InvalidRequest
from sleuth.stages.query.rewrite import RewriteSettings, Rewritten, is_time_sensitive, rewrite

DEFAULT = RewriteSettings()


def run(query: str, *context: str, settings: RewriteSettings = DEFAULT) -> Rewritten:
    return rewrite(query, list(context), settings)


def lowered(result: Rewritten) -> list[str]:
    return [term.lower() for term in result.terms]


# --- distillation, Chinese ---------------------------------------------------------


def test_chinese_filler_is_dropped_and_year_kept_with_its_unit() -> None:
    result = run("帮我找一下2024年诺贝尔物理学奖得主")
    assert result.terms[0] == "2024年"
    assert result.terms[-1] == "得主"
    assert "诺贝尔" in result.keywords
    assert "物理学奖" in result.keywords
    for filler in ("帮", "我", "找", "一下"):
        assert filler not in result.terms
    assert "帮我" not in result.keywords
    assert "一下" not in result.keywords
    assert result.language == "zh"
    assert result.carried == ()


def test_chinese_particles_and_question_filler_are_dropped() -> None:
    result = run("请问深圳到广州的高铁票价是多少")
    assert result.terms == ("深圳", "到", "广州", "高铁", "票价")


def test_chinese_numbers_with_units_and_latin_model_names_stay_intact() -> None:
    assert run("华为Mate 60价格5999元").terms == ("华为", "Mate", "60", "价格", "5999元")
    assert run("今年GDP增长3.5%").terms == ("今年", "GDP", "增长", "3.5%")
    assert "120Hz" in run("屏幕刷新率是120Hz吗").terms


def test_chinese_conjunction_between_entities_is_dropped() -> None:
    assert run("Python和Java的区别").terms == ("Python", "Java", "区别")


def test_time_word_is_split_off_a_longer_jieba_word() -> None:
    # jieba reads 今天天气 as one word; the time slot needs 今天 on its own.
    assert run("北京今天天气怎么样").terms == ("北京", "今天", "天气")
    assert run("帮我查一下最新的新闻").terms == ("最新", "新闻")


def test_full_width_digits_are_normalised() -> None:
    result = run("１２３元的耳机")
    assert result.terms == ("123元", "耳机")
    assert result.original == "１２３元的耳机"


def test_number_separated_by_a_space_is_not_glued_to_a_unit() -> None:
    assert run("123 元").terms == ("123", "元")


def test_zero_width_characters_inside_words_do_not_split_them() -> None:
    assert run("iPh\u200bone 16 价\u200b格").terms == ("iPhone", "16", "价格")


def test_emoji_are_not_terms() -> None:
    assert run("🔥最新iPhone价格🔥").terms == ("最新", "iPhone", "价格")


# --- distillation, English ---------------------------------------------------------


def test_english_request_filler_is_dropped_and_entities_kept() -> None:
    result = run("please find the latest iPhone 16 Pro price in USD")
    assert result.keywords == "latest iPhone 16 Pro price USD"
    assert lowered(result) == ["latest", "iphone", "16", "pro", "price", "usd"]
    assert result.language == "en"


def test_english_question_filler_and_stopwords_are_dropped() -> None:
    assert run("What is the capital of Australia?").keywords == "capital Australia"


def test_english_multi_word_filler() -> None:
    assert run("Could you look up the population of Tokyo for me").terms == (
        "population",
        "Tokyo",
    )
    assert run("I want to know about Rust async traits").terms == ("Rust", "async", "traits")


def test_question_words_that_carry_meaning_are_kept() -> None:
    assert run("why is the sky blue").terms == ("why", "sky", "blue")
    assert run("how do I install Python 3.12 on Windows?").terms == (
        "install",
        "Python",
        "3.12",
        "Windows",
    )


def test_versions_percentages_and_symbols_stay_intact() -> None:
    assert run("Python 3.12 release notes").terms == ("Python", "3.12", "release", "notes")
    assert run("C++ vs C# performance").terms == ("C++", "vs", "C#", "performance")
    assert run("GPT-4o price $20 3.5% off").terms == ("GPT-4o", "price", "$20", "3.5%", "off")
    assert run("Node.js 120Hz v1.2.3").terms == ("Node.js", "120Hz", "v1.2.3")


def test_acronyms_are_not_filler_unless_the_whole_query_shouts() -> None:
    assert run("IT jobs in the US").terms == ("IT", "jobs", "US")
    assert run("WHAT IS THE CAPITAL OF FRANCE").terms == ("CAPITAL", "FRANCE")


def test_terms_are_deduplicated_case_insensitively_in_order() -> None:
    assert run("iPhone price iphone PRICE 价格 价格").terms == ("iPhone", "price", "价格")


def test_conjunction_between_content_words_is_dropped() -> None:
    assert run("Python and Java differences").terms == ("Python", "Java", "differences")


def test_keywords_are_terms_joined_by_spaces() -> None:
    result = run("帮我搜一下下周上海的天气")
    assert result.keywords == " ".join(result.terms) == "下周 上海 天气"


def test_max_terms_caps_the_query() -> None:
    settings = RewriteSettings(max_terms=3)
    assert run("alpha beta gamma delta epsilon", settings=settings).terms == (
        "alpha",
        "beta",
        "gamma",
    )


# --- never empty ------------------------------------------------------------------


@pytest.mark.parametrize("query", ["what is it?", "吗", "请问一下", "  the  "])
def test_all_filler_falls_back_to_the_trimmed_original(query: str) -> None:
    result = run(query)
    assert result.keywords == query.strip()
    assert result.terms == (query.strip(),)
    assert result.carried == ()


@pytest.mark.parametrize("query", ["", "   ", "\u200b\u200b"])
def test_blank_query_is_invalid(query: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        run(query)
    assert caught.value.field == "query"


# --- context carry ----------------------------------------------------------------


def test_chinese_follow_up_replaces_the_time_slot() -> None:
    result = run("那明天呢", "北京今天天气怎么样")
    assert result.keywords == "北京 明天 天气"
    assert "今天" not in result.terms
    assert result.carried == ("北京", "天气")
    assert result.original == "那明天呢"
    assert result.language == "zh"


def test_english_follow_up_replaces_the_time_slot() -> None:
    result = run("and tomorrow?", "What's the weather in Paris today?")
    assert lowered(result) == ["weather", "paris", "tomorrow"]
    assert "today" not in lowered(result)
    assert result.carried == ("weather", "Paris")
    assert result.language == "en"


def test_year_counts_as_the_time_slot() -> None:
    result = run("那2024年呢", "2023年诺贝尔物理学奖得主是谁")
    assert result.terms[0] == "2024年"
    assert "2023年" not in result.terms
    assert "得主" in result.carried
    assert "谁" not in result.terms  # a question word is not carried


def test_what_about_carries_from_the_latest_turn_only() -> None:
    result = run("what about Rust?", "Go release notes", "Python 3.12 release notes")
    assert result.terms == ("Python", "3.12", "release", "notes", "Rust")
    assert result.carried == ("Python", "3.12", "release", "notes")


def test_pronoun_in_a_short_query_carries_the_entity() -> None:
    result = run("它的屏幕刷新率是120Hz吗", "iPhone 16 Pro多少钱")
    assert result.terms == ("iPhone", "16", "Pro", "屏幕", "刷新率", "120Hz")
    assert result.carried == ("iPhone", "16", "Pro")


def test_pronoun_next_to_filler_still_leans_on_context() -> None:
    result = run("how to install it on Ubuntu 22.04", "Docker Desktop")
    assert result.carried == ("Docker", "Desktop")
    assert result.terms[-3:] == ("install", "Ubuntu", "22.04")


def test_short_query_without_marker_carries() -> None:
    # Two content terms or fewer is elliptical even without 那/呢/it.
    result = run("明天", "北京今天天气怎么样")
    assert result.keywords == "北京 明天 天气"


def test_self_contained_query_carries_nothing() -> None:
    for context in (["北京今天天气怎么样"], ["What's the weather in Paris today?"]):
        result = rewrite("Python 3.12 release notes", context, DEFAULT)
        assert result.carried == ()
        assert result.keywords == "Python 3.12 release notes"


def test_conjunction_is_not_an_anaphora_marker() -> None:
    result = run("Python and Java differences", "Rust memory safety")
    assert result.carried == ()


def test_no_context_means_no_carry() -> None:
    result = run("那明天呢")
    assert result.terms == ("明天",)
    assert result.carried == ()


def test_all_filler_query_with_context_takes_the_context_terms() -> None:
    result = run("what about it?", "Python 3.12 release notes")
    assert result.keywords == "Python 3.12 release notes"
    assert result.carried == ("Python", "3.12", "release", "notes")


def test_context_turn_without_salient_terms_is_skipped() -> None:
    result = run("那明天呢", "上海今天天气怎么样", "好的谢谢")
    assert result.keywords == "上海 明天 天气"


def test_single_chinese_characters_are_not_carried() -> None:
    result = run("那上海呢", "北京怎么去")
    assert "去" not in result.terms
    assert "怎么" not in result.terms  # a question word stays with its own turn
    assert result.carried == ("北京",)


def test_term_shared_with_context_is_not_counted_as_carried() -> None:
    result = run("天气呢", "北京今天天气怎么样")
    assert result.terms == ("北京", "今天", "天气")
    assert result.carried == ("北京", "今天")


def test_configured_place_slot_swaps_the_city() -> None:
    slots = {**DEFAULT.slots, "place": ["北京", "上海", "Paris", "London"]}
    settings = RewriteSettings(slots=slots)
    assert run("那上海呢", "北京今天天气怎么样", settings=settings).keywords == "上海 今天 天气"
    assert run("and London?", "weather in Paris today", settings=settings).keywords == (
        "weather London today"
    )
    # Without the place slot, both cities stay.
    assert run("那上海呢", "北京今天天气怎么样").keywords == "北京 今天 天气 上海"


def test_carried_terms_are_dropped_first_when_over_max_terms() -> None:
    settings = RewriteSettings(max_terms=3)
    result = run("那明天呢", "北京今天天气预报风力", settings=settings)
    assert "明天" in result.terms
    assert len(result.terms) == 3
    assert result.carried == ("北京", "天气预报")


# --- settings ---------------------------------------------------------------------


def test_settings_defaults_and_strictness() -> None:
    assert DEFAULT.max_terms == 12
    assert DEFAULT.short_query_terms == 2
    assert "帮我找一下" in DEFAULT.filler_zh
    assert "please" in DEFAULT.filler_en
    assert "what about" in DEFAULT.anaphora_en
    assert "那" in DEFAULT.anaphora_zh
    assert "今天" in DEFAULT.slots["time"]
    with pytest.raises(ValidationError):
        RewriteSettings.model_validate({"max_term": 3})
    with pytest.raises(ValidationError):
        RewriteSettings(max_terms=0)
    with pytest.raises(ValidationError):
        DEFAULT.max_terms = 3


def test_custom_filler_is_honoured() -> None:
    settings = RewriteSettings(filler_en=[*DEFAULT.filler_en, "price"])
    assert run("iPhone 16 price", settings=settings).terms == ("iPhone", "16")


def test_rewritten_is_frozen() -> None:
    result = run("Python")
    with pytest.raises(AttributeError):
        result.keywords = "x"  # type: ignore[misc]


# --- is_time_sensitive ------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        "最新的Python版本",
        "今天的新闻",
        "现在几点",
        "本周票房",
        "latest iPhone price",
        "weather Today",
        "what happened this week",
        "current CEO of OpenAI",
        "recent earthquakes",
        "is it raining now",
    ],
)
def test_time_sensitive_queries(query: str) -> None:
    assert is_time_sensitive(query)


@pytest.mark.parametrize(
    "query",
    ["Python 3.12 release notes", "known issues", "nowhere to hide", "诺贝尔物理学奖历史"],
)
def test_timeless_queries(query: str) -> None:
    assert not is_time_sensitive(query)


def test_years_count_only_with_a_current_year() -> None:
    assert not is_time_sensitive("AI regulation 2026")
    assert is_time_sensitive("AI regulation 2026", current_year=2026)
    assert is_time_sensitive("2027年规划", current_year=2026)
    assert not is_time_sensitive("2024年诺贝尔物理学奖", current_year=2026)


@pytest.mark.parametrize(
    ("query", "keywords"),
    [
        ("what does the with statement do", "with statement"),
        ("what is the in operator for", "in operator"),
        ("how do I write an if clause in SQL", "write if clause SQL"),
    ],
)
def test_a_filler_word_named_after_an_article_is_kept(query: str, keywords: str) -> None:
    assert rewrite(query, [], RewriteSettings()).keywords == keywords


@pytest.mark.parametrize(
    ("query", "keywords"),
    [
        ("how do I stop a query with pg_cancel_backend", "stop query pg_cancel_backend"),
        ("GROUP_CONCAT in postgres", "GROUP_CONCAT postgres"),
        ("rank vs dense_rank", "rank vs dense_rank"),
        ("what does __init__ do in a class", "__init__ class"),
        ("self._cache attribute", "self._cache attribute"),
    ],
)
def test_an_identifier_is_one_keyword(query: str, keywords: str) -> None:
    # Sent split ("pg cancel backend"), a keyword back end searches for three words.
    assert rewrite(query, [], RewriteSettings()).keywords == keywords


def test_a_filler_word_after_an_article_without_a_content_word_after_it_stays_filler() -> None:
    assert rewrite("is it for the for", [], RewriteSettings()).terms == ("is it for the for",)


def test_every_control_or_format_character_is_unprintable() -> None:
    # The rewrite looks for characters to drop in unprintable queries only.
    dropped = [
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in ("Cc", "Cf")
    ]
    assert dropped and not any(char.isprintable() for char in dropped)
    hidden = rewrite("python\u200b 3.12\u00ad release notes", [], RewriteSettings())
    assert hidden.keywords == rewrite("python 3.12 release notes", [], RewriteSettings()).keywords
