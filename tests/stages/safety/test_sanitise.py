"""Output safety: no markup, no script link, no event handler reaches the caller, and
what the text says (Chinese included) survives."""

from __future__ import annotations

import html
import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nh3
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sleuth.contract import (
    Citation,
    Degradation,
    ErrorInfo,
    Fact,
    FactValue,
    ProjectedItem,
    ResultItem,
    SearchResponse,
    SummarySentence,
)
from sleuth.providers.base import RawHit
from sleuth.stages.results.clean import CleanSettings, clean
from sleuth.stages.results.dedupe import DedupeSettings, dedupe
from sleuth.stages.results.normalize import normalize
from sleuth.stages.results.project import ProjectionSettings, project
from sleuth.stages.safety import sanitise
from sleuth.stages.safety.sanitise import (
    UNSAFE_URL_FLAG,
    safe_text,
    safe_url,
    sanitise_extras,
    sanitise_item,
    sanitise_items,
    sanitise_projected,
    sanitise_response,
)

CORPUS = Path(__file__).parents[2] / "data" / "safety" / "output_snippets.jsonl"
CASES: list[dict[str, Any]] = [
    json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line
]
NOW = datetime(2025, 3, 1, tzinfo=UTC)

_TAG_OPEN = re.compile(r"<[A-Za-z/!?]")
_SCRIPT_SCHEME = re.compile(
    r"(?:j\s*a\s*v\s*a|v\s*b|l\s*i\s*v\s*e)\s*s\s*c\s*r\s*i\s*p\s*t\s*:|d\s*a\s*t\s*a\s*:\s*[a-z]+/",
    re.IGNORECASE,
)
_HANDLER = re.compile(r"\bon[a-z]{3,}\s*=(?!=)", re.IGNORECASE)


def assert_inert(text: str) -> None:
    """What every returned text must satisfy, as it is and after one more unescape."""
    for view in (text, html.unescape(text)):
        assert not _TAG_OPEN.search(view), view
        assert not _SCRIPT_SCHEME.search(view), view
        assert not _HANDLER.search(view), view
        assert not nh3.is_html(view), view
    assert html.unescape(text) == text, "an entity is left that a renderer would decode"
    assert safe_text(text) == text, "not idempotent"


def hit(text: str, url: str | None = "https://example.org/a") -> RawHit:
    return RawHit(title=text, snippet=text, url=url)


# --- the corpus, through the stages as the gateway runs them ----------------------------


@pytest.mark.parametrize("plain_text", [False, True], ids=["html_provider", "text_provider"])
@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_corpus_leaves_no_markup_and_keeps_the_words(
    case: dict[str, Any], plain_text: bool
) -> None:
    items = normalize("p", [hit(case["html"])], NOW, plain_text=plain_text)
    settings = CleanSettings(drop_ads=False, max_snippet_chars=1000)
    (item,) = sanitise_items(clean(items, settings))
    for text in (item.title, item.snippet):
        assert_inert(text)
        if not plain_text:  # a text provider's "<b>" was text, so more of it stays
            for words in case["keep"]:
                assert words in text, (words, text)


@pytest.mark.parametrize("case", CASES, ids=[case["id"] for case in CASES])
def test_safe_text_alone_makes_raw_input_inert(case: dict[str, Any]) -> None:
    # Cached answers and model-written sentences reach the gate without the clean stage.
    assert_inert(safe_text(case["html"]))


@pytest.mark.parametrize(
    "benign",
    [
        "北京今日天气：晴，气温 3~12℃，空气质量良。",
        "iPhone 16 价格：5999元起（128GB）",
        "Python 3.13 发布：新的交互式解释器与实验性 JIT。",
        "if a < b and c > d then swap; latency <5 ms",
        "AT&T 5G coverage map",
        "https://example.org/?a=1&b=2 is the page",
        "Use the onclick attribute sparingly.",
        "Data: 5 rows returned.",
        "x == y and online == true",
        "",
    ],
)
def test_benign_text_is_unchanged(benign: str) -> None:
    assert safe_text(benign) == benign


def test_escaped_markup_becomes_readable_text_not_nothing() -> None:
    # A programming answer keeps its meaning; only the "<" that would open a tag changes.
    assert safe_text("std::vector<int> and <div> layouts") == "std::vector‹int> and ‹div> layouts"
    assert safe_text("&lt;script&gt;alert(1)&lt;/script&gt;") == "‹script>alert(1)‹/script>"


def test_look_alike_stand_ins_survive_nfkc() -> None:
    import unicodedata

    text = safe_text("<b onclick=x()>javascript:alert(1)")
    assert unicodedata.normalize("NFKC", text) == text
    assert "<" not in text and "javascript:" not in text.lower()


def test_a_book_title_with_javascript_colon_reads_the_same() -> None:
    # The price of catching "javascript:" anywhere: a look-alike colon, same reading.
    assert safe_text("JavaScript: The Good Parts") == "JavaScript\u2236 The Good Parts"


# Pieces of markup, entities, schemes and handlers, and the stand-ins themselves.
# fmt: off
_PIECES = [
    "<", ">", "&", ";", "&lt;", "&gt;", "&amp;", "&#60;", "&#x3c;", "&lt", "#", "x", "script",
    "img", "/", "!", "?", "-", "on", "error", "=", "==", "java", ":", "data", "text/html",
    "北京", "。", "\u2039", "\u2236", "\ua78a", "\t", "\n", " ", "\x00", "\u200b",
]
# fmt: on
_FRAGMENTS = st.sampled_from(_PIECES)


@given(st.lists(_FRAGMENTS, max_size=30).map("".join))
def test_any_mix_of_dangerous_fragments_comes_out_inert(text: str) -> None:
    assert_inert(safe_text(text))


@given(st.text(max_size=200))
def test_any_text_comes_out_inert(text: str) -> None:
    assert_inert(safe_text(text))


# --- links ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        " javascript:alert(1)",
        "JAVASCRIPT:alert(1)",
        "java\nscript:alert(1)",
        "java\tscript:alert(1)",
        "\x01javascript:alert(1)",
        "javascript&colon;alert(1)",
        "&#106;avascript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html;base64,PHNjcmlwdD4=",
        "file:///etc/passwd",
        "ftp://files.example.org/x",
        "//evil.example/x",
        "/relative/path",
        "example.org/page",
        "http://",
        "https:///path",
        "http:alert(1)",
        "https://[::1",
        "http://example.org:99999/",
        "https://good.example\\@evil.example/",
        'https://exa"mple.org/',
        "https://exa\x00mple.org/",
        "",
    ],
)
def test_only_absolute_http_links_with_a_host_pass(url: str) -> None:
    assert safe_url(url) is None


@pytest.mark.parametrize(
    ("url", "safe"),
    [
        ("https://example.org/a?b=1&c=2#frag", "https://example.org/a?b=1&c=2#frag"),
        ("HTTP://EXAMPLE.ORG/", "HTTP://EXAMPLE.ORG/"),
        ("https://zh.wikipedia.org/wiki/北京", "https://zh.wikipedia.org/wiki/北京"),
        ("https://example.org/?a=1&copy=2", "https://example.org/?a=1&copy=2"),
        ("  https://example.org/x\n", "https://example.org/x"),
        ("https://exa\nmple.org/", "https://example.org/"),
        ('https://example.org/a"onmouseover="alert(1)', "https://example.org/a%22onmouseover=%22alert(1)"),
        ("https://example.org/<script>", "https://example.org/%3Cscript%3E"),
        ("https://example.org/it's `x`", "https://example.org/it%27s%20%60x%60"),
        ("https://user@example.org:8443/p", "https://user@example.org:8443/p"),
    ],
)  # fmt: skip
def test_safe_links_keep_their_meaning_with_attribute_breakers_encoded(url: str, safe: str) -> None:
    assert safe_url(url) == safe
    assert safe_url(safe) == safe


def test_none_stays_none() -> None:
    assert safe_url(None) is None


# --- items, projections, responses ----------------------------------------------------


def test_an_unsafe_link_is_dropped_and_the_item_says_so_once() -> None:
    item = ResultItem(
        id="1",
        url="javascript:alert(1)",
        title="t",
        providers=["p"],
        sources=["javascript:alert(1)", "https://ok.example/"],
        missing=["published_at"],
        flags=["suspected_injection"],
    )
    once = sanitise_item(item)
    assert once.url is None
    assert once.degraded is True
    assert once.missing == ["published_at", "url"]
    assert once.flags == ["suspected_injection", UNSAFE_URL_FLAG]
    assert once.sources == ["https://ok.example/"]
    assert sanitise_item(once) == once


def test_an_item_with_no_link_is_not_degraded() -> None:
    item = ResultItem(id="1", url=None, title="t", providers=["p"])
    assert sanitise_item(item) == item


def test_provider_extras_and_domain_are_made_safe_too() -> None:
    item = ResultItem(
        id="1",
        url="https://shop.example/x",
        domain="shop.example",
        providers=["p"],
        fields={"price": "<b onclick=x>5</b>", "tags": ["&lt;script&gt;", 3], "n": 1.5},
    )
    fields = sanitise_item(item).fields
    assert fields == {"price": "‹b onclick꞊x>5‹/b>", "tags": ["‹script>", 3], "n": 1.5}


# Extras as back ends send them: plain names, nested objects, and names that are not safe
# text ("a<b" becomes "a‹b", which another back end may send as it is).
_EXTRAS = st.dictionaries(
    st.sampled_from(["engine", "price", "a<b", "a‹b", "x&amp;", "x&", "7", "on=", "u\x07"]),
    st.recursive(
        st.sampled_from(["ok", "<b onclick=x>5</b>", "&lt;script&gt;", "java\tscript:x", 3, None]),
        lambda inner: (
            st.lists(inner, max_size=2)
            | st.dictionaries(st.sampled_from(["k", "<k"]), inner, max_size=2)
        ),
        max_leaves=4,
    ),
    max_size=4,
)


@given(st.lists(_EXTRAS, min_size=1, max_size=4))
def test_extras_made_safe_after_the_merge_are_the_extras_made_safe_before(
    extras: list[dict[Any, Any]],
) -> None:
    # One page under the same link from each back end: dedupe merges them all.
    items = [
        ResultItem(id=str(n), url="https://example.org/a", title="t", providers=[f"p{n}"],
                   ranks={f"p{n}": 1}, fields=fields)
        for n, fields in enumerate(extras)
    ]  # fmt: skip
    before = dedupe(sanitise_items(items), DedupeSettings())
    after = sanitise_extras(dedupe(sanitise_items(items, extras=False), DedupeSettings()))
    assert after == before
    assert [item.fields for item in after] == [item.fields for item in before]  # and in order
    assert [list(item.fields) for item in after] == [list(item.fields) for item in before]


def test_extras_left_for_later_are_made_safe_for_the_shown_results() -> None:
    item = ResultItem(
        id="1", url="https://shop.example/x", providers=["p"], fields={"price": "<b>5</b>"}
    )
    (left,) = sanitise_items([item], extras=False)
    assert left.fields == {"price": "<b>5</b>"}
    (shown,) = sanitise_extras([left])
    assert shown.fields == {"price": "‹b>5‹/b>"} == sanitise_item(item).fields
    assert sanitise_extras([shown]) == [shown]


def test_the_unsafe_link_reaches_the_projection_as_missing() -> None:
    item = sanitise_item(ResultItem(id="1", url="javascript:x", title="t", providers=["p"]))
    (projected,) = project([item], ["url"], 1, ProjectionSettings())
    assert projected.model_dump() == {
        "title": "t", "snippet": "t", "url": None, "degraded": True, "missing": ["url", "snippet"],
    }  # fmt: skip


def test_a_projected_item_keeps_its_projection() -> None:
    projected = ProjectedItem(title="&lt;script&gt;x", snippet="<img onerror=y>")
    safe = sanitise_projected(projected)
    assert safe.model_dump() == {"title": "‹script>x", "snippet": "‹img onerror꞊y>"}


def test_a_projected_unsafe_link_adds_degraded_and_missing_but_not_flags() -> None:
    projected = ProjectedItem(title="t", snippet="s", url="javascript:alert(1)")
    assert sanitise_projected(projected).model_dump() == {
        "title": "t", "snippet": "s", "url": None, "degraded": True, "missing": ["url"],
    }  # fmt: skip
    with_flags = ProjectedItem(title="t", snippet="s", url="vbscript:x", flags=[])
    assert sanitise_projected(with_flags).flags == [UNSAFE_URL_FLAG]


def test_a_safe_projection_is_returned_as_it_is() -> None:
    projected = ProjectedItem(title="北京", snippet="天气晴。", url="https://example.org/")
    assert sanitise_projected(projected) == projected


def test_the_whole_response_goes_through_the_gate() -> None:
    response = SearchResponse(
        task_id="t",
        query="q <b>",
        rewritten_query="q",
        results=[ProjectedItem(title="<svg onload=x>", snippet="ok", url="data:text/html,x")],
        summary=[
            SummarySentence(
                text="Model says &lt;script&gt;", citations=[Citation(result=0, start=0, end=2)]
            )
        ],
        facts=[
            Fact(
                attribute="<b>price",
                unit="&lt;i&gt;",
                status="single_source",
                value=1.0,
                values=[FactValue(value=1.0, sources=[0], domains=["a.example"])],
            )
        ],
        degradations=[Degradation(kind="summary_sentence_dropped", reason="'<img onerror=x>'")],
        errors=[
            ErrorInfo(
                code="bad_response", category="unexpected", message="HTTP 500: <html>oops</html>"
            )
        ],
    )
    safe = sanitise_response(response)
    dumped = safe.model_dump_json()
    assert_inert(safe.results[0].title)
    assert safe.results[0].url is None and safe.results[0].missing == ["url"]
    assert safe.summary[0].text == "Model says ‹script>"
    assert safe.summary[0].citations == response.summary[0].citations
    assert (safe.facts[0].attribute, safe.facts[0].unit) == ("‹b>price", "‹i>")
    assert safe.degradations[0].reason == "'‹img onerror꞊x>'"
    assert safe.errors[0].message == "HTTP 500: ‹html>oops‹/html>"
    assert safe.query == "q <b>"  # the caller's own words, cleaned by the guard
    for tag in ("<svg", "<script", "<img", "<html", "<b>price"):
        assert tag not in dumped


def test_file_links_are_kept_only_on_the_local_knowledge_bases_own_results() -> None:
    local = ResultItem(
        id="1",
        url="file:///srv/docs/caching.md#ttl",
        providers=["local"],
        sources=["file:///srv/docs/caching.md#ttl", "file:///srv/docs/cache.md"],
        title="Caching",
    )
    web = local.model_copy(update={"id": "2", "providers": ["brave"]})
    mixed = local.model_copy(update={"id": "3", "providers": ["local", "brave"]})

    kept, dropped, merged = sanitise_items([local, web, mixed], local_providers=["local"])

    assert kept.url == local.url and kept.sources == local.sources and not kept.degraded
    for item in (dropped, merged):
        assert item.url is None and item.sources == []
        assert item.degraded and item.missing == ["url"]


def test_every_control_character_removed_is_unprintable() -> None:
    # safe_text and safe_url look for control characters only in unprintable texts.
    removed = [chr(c) for c in range(sys.maxunicode + 1) if sanitise._CONTROL.fullmatch(chr(c))]
    assert len(removed) == 32 - 3 + 1 + 32  # C0 but tab, LF and CR; DEL; C1
    assert not any(char.isprintable() for char in removed)
    assert safe_text("a\x00b\x85c\tz") == "abc\tz"
