"""clean: HTML out, ads out, snippets cut at a sentence end (Chinese and English)."""

from __future__ import annotations

import html
import importlib
import re
import sys

import nh3
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from pydantic import ValidationError

from sleuth.contract import ResultItem
from sleuth.stages.results.clean import AD_FLAG, CleanSettings, clean, cut_snippet, strip_html


def item(title: str, snippet: str = "", url: str | None = None) -> ResultItem:
    return ResultItem(id=title, url=url, title=title, snippet=snippet, providers=["bing"])


# --- strip_html -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("<em>Python</em> 3.13 <b>released</b>", "Python 3.13 released"),
        ('The <span class="searchmatch">GIL</span> is optional', "The GIL is optional"),
        ("Tom &amp; Jerry &quot;classic&quot;", 'Tom & Jerry "classic"'),
        ("北京<em>天气</em>预报 &amp; 空气质量", "北京天气预报 & 空气质量"),
        ("safe<script>alert('x')</script> text<style>.a{color:red}</style>", "safe text"),
        ("first<br>second</p><p>third", "first second third"),
        ("  lots \n\t of   space&nbsp;here\u3000全角  ", "lots of space here 全角"),
        ("if a &lt; b and c &gt; d", "if a < b and c > d"),
        ("plain text needs no parsing", "plain text needs no parsing"),
        ("\ufeffWhat's New\u200b In Python 3.13", "What's New In Python 3.13"),
        ("soft\u00adhyphen and word\u2060joiner", "softhyphen and wordjoiner"),
        ("", ""),
    ],
)
def test_strip_html_keeps_text_and_drops_markup(raw: str, plain: str) -> None:
    assert strip_html(raw) == plain


_BLOCK_TAG = re.compile(
    r"<\s*/?\s*(?:br|p|div|li|tr|td|th|h[1-6]|ul|ol|table|blockquote|section|article)\b[^>]*>",
    re.IGNORECASE,
)
_HIDDEN = re.compile("[\ufeff\u200b\u200c\u200d\u2060\u00ad\u180e]")


def parsed_by_nh3(text: str) -> str:
    """strip_html's rule with every text through the HTML parser, as it once was."""
    if "<" in text or "&" in text:
        text = html.unescape(nh3.clean(_BLOCK_TAG.sub(" ", text), tags=set()))
    return " ".join(_HIDDEN.sub("", text).split())


# Highlighting tags (the ones strip_html reads without the parser) and near misses,
# other markup, entities, comments, broken tags, characters HTML parsers change.
# fmt: off
_MARKUP = [
    "<em>", "</em>", "<b>", "</b>", "<strong>", "</strong>", "<i>", "</i>", "<mark>",
    "</mark>", "<span>", "</span>", '<span class="searchmatch">', "<EM>", "<em >", "</em",
    "<b", '<span class="other">', "<span class='searchmatch'>", "<br>", "<p>", "</p>",
    "<div>", "<script>", "</script>", "<style>", "<table>", "<td>", "<a href='x'>", "</a>",
    "<!--", "-->", "<!-- c -->", "<![CDATA[", "]]>", "<?x?>", "<!DOCTYPE html>", "<", ">",
    "</", "/>", "&", "&amp;", "&lt;", "&gt;", "&quot;", "&nbsp;", "&#60;", "&#x3c;", "&lt",
    "&amp", "&copy", ";", "=", '"', "'", "\u00a0", "\x00", "\r", "\r\n", "\n", "\t",
    "\u200b", "\ufeff", "\u00ad", "\u3000", "\ue000", "\ufffe", " ", "  ",
]
_WORDS = ["Python", "efficiency", "太阳能", "电池。", "3.5", "a", "é", "x.", "!", "?"]
# fmt: on
_TAG_SOUP = st.lists(st.sampled_from(_MARKUP + _WORDS), max_size=25).map("".join)
_HIGHLIGHTED = st.lists(st.sampled_from(_MARKUP[:13] + _WORDS + [" ", ">"]), max_size=25).map(
    "".join
)


@given(st.one_of(_TAG_SOUP, _HIGHLIGHTED, st.text(max_size=80)))
@example("<em>a</b></em>b<strong><i>c</strong>d</i> > e")
@example('<span class="searchmatch"><em>x</span>y</em>')
def test_strip_html_gives_what_the_html_parser_gives(text: str) -> None:
    # Highlighted snippets skip the parser; nothing else may tell the difference.
    assert strip_html(text) == parsed_by_nh3(text)


def test_clean_strips_title_and_snippet_and_leaves_input_alone() -> None:
    original = item("<b>Rust</b> &amp; WebAssembly", "Compile <em>Rust</em> to   wasm.")

    [cleaned] = clean([original], CleanSettings())

    assert (cleaned.title, cleaned.snippet) == ("Rust & WebAssembly", "Compile Rust to wasm.")
    assert original.title == "<b>Rust</b> &amp; WebAssembly"
    assert cleaned.providers == ["bing"]


# --- advertisements ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "snippet"),
    [
        ("广告 · 京东家电官方旗舰店", "全场满减，正品保障。"),
        ("推广：百度网盘超级会员", "限时优惠。"),
        ("【广告】双十一特惠", "低至五折。"),
        ("Ad · www.shoes.example", "Buy running shoes online."),
        ("[Sponsored] Best VPN of 2025", "Try it free for 30 days."),
        ("Cheap flights to Tokyo", "Ads - compare prices from 500 airlines."),
        ("<span class='label'>Sponsored</span>: CloudHost", "Hosting from $1 a month."),
        ("Promoted | Learn Python in 7 days", "Enrol now."),
    ],
)
def test_ads_are_dropped(title: str, snippet: str) -> None:
    kept = item("Python 3.13 发布", "Python 3.13 正式发布。")

    result = clean([item(title, snippet), kept], CleanSettings())

    assert [r.title for r in result] == ["Python 3.13 发布"]


@pytest.mark.parametrize(
    "title",
    [
        "Adobe Photoshop 2025 新功能",
        "Advanced Python: descriptors",
        "Ad hoc networks explained",
        "Ad-free browsing with uBlock Origin",
        "广告法修订草案公开征求意见",
        "赞助商名单公布",
        "Promoted to senior engineer: what changes",
    ],
)
def test_words_that_merely_start_like_a_marker_are_not_ads(title: str) -> None:
    assert [r.title for r in clean([item(title, "Some text.")], CleanSettings())] == [title]


def test_with_drop_ads_off_ads_stay_flagged() -> None:
    settings = CleanSettings(drop_ads=False)

    result = clean([item("Ad · shoes.example", "Shoes."), item("Shoe care guide")], settings)

    assert [(r.title, r.flags) for r in result] == [
        ("Ad · shoes.example", [AD_FLAG]),
        ("Shoe care guide", []),
    ]


def test_ad_markers_are_configurable() -> None:
    settings = CleanSettings(ad_markers=["Anzeige"])
    items = [item("Anzeige · Schuhe kaufen"), item("Ad · shoes.example")]

    assert [r.title for r in clean(items, settings)] == ["Ad · shoes.example"]


# --- cutting snippets -------------------------------------------------------------------

ZH = "北京今天晴，最高气温28度。夜间转多云，有小雨！明天会更冷吗？气象台说会降温五度。"
EN = "Python 3.13 is out. It adds a free-threaded build! Is the GIL gone? Not yet, it is optional."


def test_chinese_snippet_is_cut_after_the_last_whole_sentence_that_fits() -> None:
    # sentences end at 14, 24 and 31 characters
    assert cut_snippet(ZH, 23) == "北京今天晴，最高气温28度。"
    assert cut_snippet(ZH, 30) == "北京今天晴，最高气温28度。夜间转多云，有小雨！"
    assert cut_snippet(ZH, 31) == "北京今天晴，最高气温28度。夜间转多云，有小雨！明天会更冷吗？"


def test_english_snippet_is_cut_after_the_last_whole_sentence_that_fits() -> None:
    # "3.13" does not end a sentence; the first three end at 19, 50 and 67 characters
    assert cut_snippet(EN, 49) == "Python 3.13 is out."
    assert cut_snippet(EN, 66) == "Python 3.13 is out. It adds a free-threaded build!"
    assert (
        cut_snippet(EN, 67) == "Python 3.13 is out. It adds a free-threaded build! Is the GIL gone?"
    )


def test_a_first_sentence_longer_than_the_budget_is_kept_whole() -> None:
    long_first = "这是一个非常非常长的第一句话，它远远超过了设定的长度限制。第二句。"

    assert (
        cut_snippet(long_first, 10) == "这是一个非常非常长的第一句话，它远远超过了设定的长度限制。"
    )
    assert cut_snippet(EN, 5) == "Python 3.13 is out."


def test_decimals_and_e_g_do_not_end_a_sentence() -> None:
    text = "Use a container, e.g. a list or a tuple of 3.5 million rows. Then sort it."

    assert cut_snippet(text, 65) == "Use a container, e.g. a list or a tuple of 3.5 million rows."


def test_a_numbered_list_is_cut_before_a_marker_never_after_it() -> None:
    # The shape of a long Chinese answer: numbered points with no 。 between them.
    points = [
        "`threejs` 会操作 `DOM`,但是小程序里面没有 `DOM`",
        "小程序的 `canvas` 是自己实现的,和浏览器里的 `canvas` 接口不完全一样,需要适配",
        "可以使用官方适配过的 `threejs` 版本,它把 `DOM` 相关的调用替换成了小程序的接口",
        "纹理图片要先下载到本地再加载,网络图片直接加载会失败",
    ]
    text = " ".join(f"{n}. {point}" for n, point in enumerate(points * 4, start=1))

    cut = cut_snippet(text, 120)

    assert cut == f"1. {points[0]} 2. {points[1]}"
    assert not cut.rstrip().endswith((" 3.", " 2."))


def test_snippets_within_the_budget_are_untouched() -> None:
    text = "Short enough. No cut here"

    assert cut_snippet(text, len(text)) == text


def test_clean_cuts_snippets_with_the_configured_budget() -> None:
    [cleaned] = clean([item("Python 3.13", f"<p>{EN}</p>")], CleanSettings(max_snippet_chars=50))

    assert cleaned.snippet == "Python 3.13 is out. It adds a free-threaded build!"


# --- settings ---------------------------------------------------------------------------


def test_settings_defaults_and_strictness() -> None:
    settings = CleanSettings()

    assert settings.max_snippet_chars == 300
    assert settings.drop_ads is True
    assert settings.ad_markers == ["广告", "推广", "赞助", "Ad", "Ads", "Sponsored", "Promoted"]
    with pytest.raises(ValidationError):
        CleanSettings(max_snippet_chars=0)
    with pytest.raises(ValidationError):
        CleanSettings.model_validate({"drop_adverts": True})


def test_every_invisible_character_removed_is_unprintable() -> None:
    # strip_html looks for invisible characters only in unprintable texts.
    clean_module = importlib.import_module("sleuth.stages.results.clean")
    invisible = [chr(c) for c in range(sys.maxunicode + 1) if clean_module._INVISIBLE.match(chr(c))]
    assert invisible and not any(char.isprintable() for char in invisible)
    assert strip_html("zero\u200bwidth\ufeff and soft\u00adhyphen") == "zerowidth and softhyphen"


def test_every_white_space_but_the_space_is_unprintable() -> None:
    # strip_html leaves a printable text without "  " or an outer space as it is.
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    assert [char for char in spaces if char.isprintable()] == [" "]
    assert strip_html("already plain text, 已经干净") == "already plain text, 已经干净"
