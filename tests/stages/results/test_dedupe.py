"""dedupe: canonical URLs, the three levels of sameness, and how duplicates merge."""

from __future__ import annotations

import itertools
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlunsplit

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from sleuth.contract import ResultItem
from sleuth.extract.models import ExtractedPage
from sleuth.stages.results import dedupe_details as details
from sleuth.stages.results.dedupe import (
    DedupeSettings,
    canonical_url,
    dedupe,
    dedupe_pages,
    hamming,
    simhash,
)
from sleuth.stages.results.dedupe import _joined as joined
from sleuth.stages.results.dedupe import _opening as opening_of

SETTINGS = DedupeSettings()
DATA = Path(__file__).parents[2] / "data"


def item(
    url: str | None,
    title: str = "Python 3.13 release notes",
    snippet: str = "Python 3.13 is the newest major release of the Python programming language.",
    provider: str = "bing",
    rank: int = 1,
    **extra: Any,
) -> ResultItem:
    return ResultItem(
        id=f"{provider}-{rank}",
        url=url,
        title=title,
        snippet=snippet,
        providers=[provider],
        ranks={provider: rank},
        **extra,
    )


# --- canonical_url ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTP://WWW.Python.ORG/Downloads/", "https://python.org/Downloads"),
        ("https://python.org:443/downloads", "https://python.org/downloads"),
        ("http://python.org:80/downloads", "https://python.org/downloads"),
        ("https://python.org:8443/downloads", "https://python.org:8443/downloads"),
        ("https://python.org/downloads#latest", "https://python.org/downloads"),
        (
            "https://python.org/downloads?utm_source=news&utm_medium=email&fbclid=x1&gclid=y2",
            "https://python.org/downloads",
        ),
        ("https://shop.example/item?id=7&sid=abc&PHPSESSID=f00", "https://shop.example/item?id=7"),
        ("https://shop.example/cart;jsessionid=0A1B2C?id=7", "https://shop.example/cart?id=7"),
        (
            "https://news.example/a?b=2&a=1&spm=a2c.1&from=timeline",
            "https://news.example/a?a=1&b=2",
        ),
        ("https://example.com/Path/To/Page", "https://example.com/Path/To/Page"),
        ("https://example.com/a%2fb", "https://example.com/a%2Fb"),
        ("https://app.example/#!/inbox", "https://app.example#!/inbox"),
        ("http://[::1", "http://[::1"),
    ],
)
def test_canonical_url(url: str, canonical: str) -> None:
    assert canonical_url(url, SETTINGS) == canonical


def test_tracking_parameters_are_configurable_with_prefixes() -> None:
    settings = DedupeSettings(tracking_params=["mkt_*"], session_params=[])

    assert (
        canonical_url("https://a.example/p?mkt_tok=1&utm_source=x&sid=2", settings)
        == "https://a.example/p?sid=2&utm_source=x"
    )


# --- level 1: the same page behind different URLs ---------------------------------------


def test_same_page_behind_tracking_session_scheme_and_slash_is_one_item() -> None:
    items = [
        item("http://www.python.org/downloads/?utm_source=twitter", provider="bing", rank=3),
        item("https://python.org/downloads", provider="brave", rank=1),
        item(
            "https://python.org/downloads/;jsessionid=9F?sessionid=42", provider="searxng", rank=2
        ),
        item("https://python.org/downloads#release", provider="bing", rank=5),
    ]

    [merged] = dedupe(items, SETTINGS)

    assert merged.providers == ["bing", "brave", "searxng"]
    assert merged.ranks == {"bing": 3, "brave": 1, "searxng": 2}
    # the cleanest link sent for the page: https, no tracking or session parameters
    assert merged.url == "https://python.org/downloads"
    assert merged.id == "bing-3"


def test_shown_link_is_the_cleanest_one_a_back_end_sent() -> None:
    first = item("https://python.org/downloads?utm_source=feed&utm_medium=rss", provider="bing")
    tracked = item("https://python.org/downloads?fbclid=IwAR0x", provider="brave")

    [merged] = dedupe([first, tracked], SETTINGS)

    # both carry tracking: the shorter is shown, and never one nobody sent
    assert merged.url == "https://python.org/downloads?fbclid=IwAR0x"


def test_https_is_not_taken_from_a_different_page() -> None:
    first = item("http://mirror.example/python-3.13", provider="bing")
    other = item("https://python.org/downloads/release/python-3130/", provider="brave")

    [merged] = dedupe([first, other], SETTINGS)  # same title and opening: level 2

    assert merged.url == "http://mirror.example/python-3.13"


def test_merge_keeps_first_text_and_fills_what_it_lacked() -> None:
    date = datetime(2024, 10, 7, tzinfo=UTC)
    first = item(
        "https://python.org/news",
        snippet="First wording.",
        fields={"lang": "en"},
        flags=["x"],
        missing=["published_at"],
        degraded=True,
    )
    second = item(
        "https://python.org/news/",
        snippet="Second wording.",
        provider="brave",
        published_at=date,
        freshness="archive",
        fields={"lang": "de", "price": 0},
        flags=["x", "suspected_injection"],
    )

    [merged] = dedupe([first, second], SETTINGS)

    assert merged.snippet == "First wording."
    assert merged.published_at == date
    assert merged.freshness == "archive"
    assert merged.fields == {"lang": "en", "price": 0}
    assert merged.flags == ["x", "suspected_injection"]
    assert (merged.missing, merged.degraded) == ([], False)
    assert first.providers == ["bing"]
    assert first.published_at is None


# --- level 2: same title and opening ----------------------------------------------------


def test_same_title_and_opening_under_two_urls_is_one_item() -> None:
    items = [
        item("https://docs.python.org/3.13/whatsnew/3.13.html", provider="bing", rank=2),
        item("https://mirror.example/whatsnew-313", provider="brave", rank=4),
    ]

    [merged] = dedupe(items, SETTINGS)

    assert merged.url == "https://docs.python.org/3.13/whatsnew/3.13.html"
    assert merged.providers == ["bing", "brave"]


def test_title_comparison_ignores_case_and_spacing() -> None:
    items = [
        item("https://a.example/1"),
        item("https://b.example/2", title="PYTHON  3.13 Release notes"),
    ]

    assert len(dedupe(items, SETTINGS)) == 1


def test_items_without_url_merge_by_title_and_opening_and_gain_a_url() -> None:
    no_url = item(None, provider="kb", domain=None, missing=["url"], degraded=True)
    with_url = item("https://python.org/3.13", provider="brave", domain="python.org")

    [merged] = dedupe([no_url, with_url], SETTINGS)

    assert merged.providers == ["kb", "brave"]
    assert (merged.url, merged.domain, merged.id) == (
        "https://python.org/3.13",
        "python.org",
        "brave-1",
    )
    assert (merged.missing, merged.degraded) == ([], False)


def test_the_opening_compared_is_snippet_prefix_chars_long() -> None:
    shared = "Node.js 20.11.0 is the latest LTS release. " * 5  # 215 characters
    items = [
        item("https://nodejs.org/a", title="Node.js 20.11.0", snippet=shared + "It updates npm."),
        item(
            "https://nodejs.org/b", title="Node.js 20.11.0", snippet=shared + "It fixes fs.watch."
        ),
    ]

    # by design of level 2: equal in title and the first 200 characters is one page
    assert len(dedupe(items, SETTINGS)) == 1
    assert len(dedupe(items, DedupeSettings(snippet_prefix_chars=230, simhash_max_distance=0))) == 2


# --- pages that only look alike stay apart ----------------------------------------------


def test_release_notes_of_different_versions_stay_two() -> None:
    first = item(
        "https://docs.djangoproject.com/en/5.0/releases/5.0.1/",
        title="Django 5.0.1 release notes",
        snippet=(
            "Django 5.0.1 fixes several bugs in 5.0. Fixed a regression in Django 5.0 where "
            "querysets with GeneratedField crashed on SQLite, and a crash of the admin "
            "changelist when sorting by an annotation."
        ),
    )
    second = item(
        "https://docs.djangoproject.com/en/5.0/releases/5.0.2/",
        title="Django 5.0.2 release notes",
        snippet=(
            'Django 5.0.2 fixes a security issue with severity "moderate" and several bugs in '
            "5.0. Fixed a denial-of-service possibility in intcomma with very long strings, "
            "and a crash of migrations on PostgreSQL."
        ),
        provider="brave",
    )

    result = dedupe([first, second], SETTINGS)

    assert [r.title for r in result] == ["Django 5.0.1 release notes", "Django 5.0.2 release notes"]
    assert (
        hamming(
            simhash(f"{first.title} {first.snippet}"), simhash(f"{second.title} {second.snippet}")
        )
        == 20
    )


def test_same_title_and_first_sentence_but_different_content_stay_two() -> None:
    opening = "Node.js 20.11.0 is the latest LTS release. This release "
    first = item(
        "https://nodejs.org/en/blog/release/v20.11.0",
        title="Release notes — Node.js",
        snippet=opening + "updates npm to 10.2.4, adds the --experimental-detect-module flag, "
        "and fixes a memory leak in the fs.watch implementation on macOS.",
    )
    second = item(
        "https://github.com/nodejs/node/releases/tag/v20.11.0-security",
        title="Release notes — Node.js",
        snippet=opening + "upgrades OpenSSL to 3.0.13 for security, removes the deprecated "
        "punycode warning, and speeds up Buffer.toString on large inputs.",
        provider="brave",
    )

    assert len(dedupe([first, second], SETTINGS)) == 2
    assert (
        hamming(
            simhash(f"{first.title} {first.snippet}"), simhash(f"{second.title} {second.snippet}")
        )
        == 20
    )


# --- level 3: SimHash -------------------------------------------------------------------

WHATSNEW = (
    "Python 3.12 is the newest major release of the Python programming language, and it "
    "contains many new features and optimizations. Error messages are more helpful, "
    "f-strings are more flexible, and the interpreter is faster in common workloads."
)


def test_simhash_merges_a_near_copy_one_word_apart() -> None:
    # "newest" -> "latest" at character 19: level 2 cannot see it, SimHash does.
    copy = WHATSNEW.replace("newest", "latest")
    items = [
        item("https://docs.python.org/3/whatsnew/3.12.html", "Python 3.12 release notes", WHATSNEW),
        item("https://blog.example/py312", "Python 3.12 release notes", copy, provider="brave"),
    ]
    distance = hamming(simhash(f"{items[0].title} {WHATSNEW}"), simhash(f"{items[1].title} {copy}"))

    [merged] = dedupe(items, SETTINGS)

    assert distance == 2
    assert merged.providers == ["bing", "brave"]
    assert merged.snippet == WHATSNEW


def test_a_one_word_edit_further_apart_than_simhash_merges_word_by_word() -> None:
    # SimHash on ~45 tokens is coarse: this one-word edit lands 4 bits away, which the
    # SimHash threshold (< 3) does not merge; word by word it is the same text.
    text = (
        "Start with freshly roasted beans and grind them medium-fine just before brewing. "
        "Rinse the paper filter with hot water, add twenty grams of coffee, and pour slowly "
        "in circles for about three minutes until the cup is full."
    )
    edited = text.replace("paper", "cloth")
    title = "How to brew pour-over coffee at home"
    items = [
        item("https://a.example/coffee", title, text),
        item("https://b.example/c", title, edited),
    ]

    assert hamming(simhash(f"{title} {text}"), simhash(f"{title} {edited}")) == 4
    assert len(dedupe(items, SETTINGS)) == 1
    assert len(dedupe(items, DedupeSettings(content_max_edited_words=0))) == 2
    assert len(dedupe(items, DedupeSettings(content_match_distance=0))) == 2
    assert len(dedupe(items, DedupeSettings(simhash_max_distance=5, content_match_distance=0))) == 1


def test_texts_below_simhash_min_tokens_never_merge_by_simhash() -> None:
    # the same six tokens in another arrangement: distance 0, but too short to judge
    items = [
        item("https://a.example/1", title="Python 3.13", snippet="Released today in October."),
        item("https://b.example/2", title="Released today", snippet="Python 3.13 in October."),
    ]
    assert (
        hamming(
            simhash("Python 3.13 Released today in October."),
            simhash("Released today Python 3.13 in October."),
        )
        == 0
    )

    assert len(dedupe(items, SETTINGS)) == 2
    # judged at six tokens, SimHash alone merges them (the titles' details still differ)
    judged = DedupeSettings(simhash_min_tokens=6, keep_apart_on_details=False)
    assert len(dedupe(items, judged)) == 1
    assert len(dedupe(items, DedupeSettings(simhash_min_tokens=6))) == 2


def test_simhash_is_stable_across_processes() -> None:
    # blake2b, not the per-process salted hash(): these values never change
    assert simhash("Python 3.13 release notes") == 0xB842A09A8810C288
    assert simhash("北京天气") == 0x66A0B50F1806F39C
    assert simhash("") == 0


def test_hamming() -> None:
    assert hamming(0, 0) == 0
    assert hamming(0b1011, 0b0001) == 2
    assert hamming(0, (1 << 64) - 1) == 64


# --- order ------------------------------------------------------------------------------


def test_result_keeps_first_seen_order_and_merges_transitively() -> None:
    a = item("https://a.example/1", title="Alpha", snippet="Alpha page text.", rank=1)
    b = item("https://b.example/2", title="Beta", snippet="Beta page text.", rank=2)
    # c shares a's URL; d shares c's title and opening: a, c and d are one page
    c = item("http://a.example/1/", title="Gamma", snippet="Gamma page.", provider="brave", rank=1)
    d = item("https://d.example/4", title="Gamma", snippet="Gamma page.", provider="kb", rank=1)

    result = dedupe([a, b, c, d], SETTINGS)

    assert [(r.title, r.providers) for r in result] == [
        ("Alpha", ["bing", "brave", "kb"]),
        ("Beta", ["bing"]),
    ]


def test_empty_input() -> None:
    assert dedupe([], SETTINGS) == []


def test_settings_defaults_and_strictness() -> None:
    assert (SETTINGS.snippet_prefix_chars, SETTINGS.simhash_max_distance) == (200, 3)
    assert SETTINGS.simhash_min_tokens == 8
    assert "utm_*" in SETTINGS.tracking_params
    assert "jsessionid" in SETTINGS.session_params
    with pytest.raises(ValidationError):
        DedupeSettings.model_validate({"simhash_distance": 4})


def test_a_merged_item_lists_every_url_it_was_found_at() -> None:
    first = item(
        "https://docs.python.org/3/whatsnew/3.13.html",
        sources=["https://docs.python.org/3/whatsnew/3.13.html"],
    )
    mirror = item(
        "https://mirror.example/whatsnew-313",
        provider="brave",
        sources=["https://mirror.example/whatsnew-313"],
    )
    [merged] = dedupe([first, mirror], SETTINGS)
    assert merged.sources == [
        "https://docs.python.org/3/whatsnew/3.13.html",
        "https://mirror.example/whatsnew-313",
    ]


# --- templated pages: details keep them apart, copies still merge ------------------------

PHONE = (
    "Apple iPhone 15（128GB）黑色，商城价 5999 元。支持 5G 双卡双待，6.1 英寸超视网膜 XDR "
    "显示屏，正品行货，全国联保，顺丰包邮，支持七天无理由退货。"
)


@pytest.mark.parametrize(
    ("title", "snippet"),
    [
        ("iPhone 15 Pro 256GB 8999 元", PHONE.replace("128GB", "256GB").replace("5999", "8999")),
        ("iPhone 15 128GB 5999 元", PHONE.replace("5999", "6299")),
        ("iPhone 15 128GB 5999 元", PHONE.replace("黑色", "粉色")),
    ],
)
def test_pages_that_differ_in_a_number_model_or_name_stay_apart(title: str, snippet: str) -> None:
    items = [
        item("https://shop.example/1.html", "iPhone 15 128GB 5999 元", PHONE),
        item("https://shop.example/2.html", title, snippet, provider="brave"),
    ]

    assert len(dedupe(items, SETTINGS)) == 2


def test_same_title_and_opening_with_another_price_later_stay_apart() -> None:
    opening = "Node.js 20.11.0 is the latest LTS release. " * 5  # level 2 compares 200
    items = [
        item("https://a.example/1", "Node.js 20.11.0", opening + "Support costs $10 a month."),
        item("https://b.example/2", "Node.js 20.11.0", opening + "Support costs $12 a month."),
    ]

    assert len(dedupe(items, SETTINGS)) == 2


@pytest.mark.parametrize(
    ("title", "snippet"),
    [
        ("iPhone 15 128GB 5999 元 - 商城手机版", PHONE),  # a mirror with its own site name
        ("iPhone 15 128GB 5999 元 - 商城", "2025年3月3日 — " + PHONE),  # a date in front
        ("iPhone 15 128GB 5999 元 - 商城", PHONE[:60] + " ..."),  # a cut
        ("iPhone 15 128GB 5999 元 － 商城", PHONE.replace("，", ", ")),  # widths and commas
    ],
)
def test_copies_of_one_page_merge(title: str, snippet: str) -> None:
    items = [
        item("https://shop.example/1.html", "iPhone 15 128GB 5999 元 - 商城", PHONE),
        item("https://m.shop.example/1.html", title, snippet, provider="brave"),
    ]

    assert len(dedupe(items, SETTINGS)) == 1


def test_the_labelled_templated_set_has_no_false_and_no_missed_merge() -> None:
    """tests/data/dedupe/templated.jsonl (scripts/make_dedupe_set.py): 56 pages from ten
    templates in Chinese and English, each differing in one detail, and 25 copies."""
    rows = [
        json.loads(line)
        for line in (DATA / "dedupe" / "templated.jsonl").read_text("utf-8").splitlines()
    ]
    assert len({row["page"] for row in rows}) >= 50
    false, missed = [], []
    for group in {row["group"] for row in rows}:
        members = [row for row in rows if row["group"] == group]
        items = [
            item(row["url"], row["title"], row["snippet"], provider=f"row{n}")
            for n, row in enumerate(members)
        ]
        where = {p: k for k, merged in enumerate(dedupe(items, SETTINGS)) for p in merged.providers}
        for a, b in itertools.combinations(range(len(members)), 2):
            same_page = members[a]["page"] == members[b]["page"]
            together = where[f"row{a}"] == where[f"row{b}"]
            if together and not same_page:
                false.append((members[a]["page"], members[b]["page"]))
            if same_page and not together:
                missed.append((members[a]["page"], members[b]["kind"]))

    assert false == []
    assert missed == []


def test_job_ads_simhash_calls_near_copies_that_name_another_job_stay_apart() -> None:
    rows = {
        row["page"]: row
        for row in map(
            json.loads, (DATA / "dedupe" / "templated.jsonl").read_text("utf-8").split("\n")[:-1]
        )
        if row["kind"] == "page"
    }
    java, go = (
        item(rows[page]["url"], rows[page]["title"], rows[page]["snippet"], provider=page)
        for page in ("zh-job-0", "zh-job-1")
    )
    assert "Java开发工程师" in java.title
    assert "Go开发工程师" in go.title

    assert len(dedupe([java, go], DedupeSettings(keep_apart_on_details=False))) == 1
    assert len(dedupe([java, go], SETTINGS)) == 2


def test_one_word_filled_in_twice_is_a_template_slot_not_an_edit() -> None:
    items = [
        item(
            f"https://example.com/{author}/1",
            f"solar panels guide 1 by {author}",
            f"{author} explains solar panels in part 1 of its guide, with the costs and the "
            "savings of a rooftop system over twenty years.",
            provider=author,
        )
        for author in ("alpha", "beta")
    ]

    assert len(dedupe(items, SETTINGS)) == 2


# --- level 3 on the pages' full text (include content) ---------------------------------

ARTICLE_TEXT = (
    "Sleeper trains are coming back to the Alpine routes that lost them a decade ago. "
    "From 14 December, three operators will run nightly services linking Zurich, Vienna "
    "and Milan. The first departure leaves Zurich at 21:40 and reaches Vienna at 07:05 the "
    "next morning. Fares start at 59 euros for a seat and 149 euros for a private cabin. "
    "Each train carries sleeping cars with private cabins, couchettes and a small number "
    "of seats for shorter journeys. Operators say the cabins now have their own showers, "
    "a first on these routes. Rail passes are accepted with a reservation supplement, and "
    "campaigners welcomed the return of the trains."
)


def read(
    url: str, rank: int, title: str, text: str, provider: str = "bing"
) -> tuple[ResultItem, ExtractedPage]:
    snippet = f"{title}: a summary."
    found = item(url, title, snippet, provider=provider, rank=rank, content="...")
    return found, ExtractedPage(url=url, text=text)


def test_pages_with_nearly_the_same_text_merge_whatever_their_headlines() -> None:
    first, first_page = read("https://rail.example/a", 1, "Night trains return", ARTICLE_TEXT)
    copy, copy_page = read(
        "https://digest.example/b",
        2,
        "Sleepers are back",
        ARTICLE_TEXT.replace("The first", "A first"),
        provider="brave",
    )
    pages = {first.id: first_page, copy.id: copy_page}
    (merged,) = dedupe_pages([first, copy], pages, SETTINGS)
    assert merged.url == first.url and merged.title == "Night trains return"
    assert merged.providers == ["bing", "brave"] and merged.ranks == {"bing": 1, "brave": 2}


def test_pages_of_one_template_that_state_other_numbers_stay_apart() -> None:
    small, small_page = read("https://shop.example/128", 1, "Phone X", ARTICLE_TEXT)
    large, large_page = read(
        "https://shop.example/256", 2, "Phone X", ARTICLE_TEXT.replace("149 euros", "199 euros")
    )
    pages = {small.id: small_page, large.id: large_page}
    assert len(dedupe_pages([small, large], pages, SETTINGS)) == 2
    loose = DedupeSettings(keep_apart_on_details=False)
    assert len(dedupe_pages([small, large], pages, loose)) == 1


def test_a_result_without_content_is_not_judged_by_its_page() -> None:
    first, first_page = read("https://rail.example/a", 1, "Night trains return", ARTICLE_TEXT)
    withheld, withheld_page = read("https://digest.example/b", 2, "Sleepers", ARTICLE_TEXT)
    withheld = withheld.model_copy(update={"content": None})  # withheld, or not read
    pages = {first.id: first_page, withheld.id: withheld_page}
    assert dedupe_pages([first, withheld], pages, SETTINGS) == [first, withheld]
    off = DedupeSettings(page_simhash_max_distance=0)
    assert len(dedupe_pages([first, first.model_copy(update={"id": "x"})], pages, off)) == 2


def _labelled_texts() -> list[tuple[str, str]]:
    """The labelled templated set's titles and snippets: pages of one template and
    copies of one page, Chinese and English, every pair of them compared below."""
    lines = (DATA / "dedupe" / "templated.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    return [(row["title"], row["snippet"]) for row in rows]


def test_titles_told_apart_without_aligning_them_are_told_apart_by_the_alignment() -> None:
    texts = _labelled_texts()
    assert len(texts) > 50
    shortcuts = 0
    for (title_a, _), (title_b, _) in itertools.combinations(texts, 2):
        quick = details.compare(title_a, title_b, ends_may_differ=False)
        aligned = details._aligned(title_a, title_b, ends_may_differ=False)
        assert quick.distinct == aligned.distinct, (title_a, title_b)
        shortcuts += quick.shared == 0 and aligned.shared > 0
    assert shortcuts > 0  # the shortcut was taken, and agreed each time


def test_coverage_bound_is_never_below_the_aligned_coverage() -> None:
    texts = _labelled_texts()
    for (title_a, snippet_a), (title_b, snippet_b) in itertools.combinations(texts, 2):
        aligned = details.compare_items(title_a, snippet_a, title_b, snippet_b)
        if not aligned.distinct:
            bound = details.coverage_at_most(title_a, snippet_a, title_b, snippet_b)
            assert bound >= aligned.coverage, (title_a, title_b)


# Words and runs of white space (Unicode ones too), and a letter casefold lengthens.
_SNIPPET_PIECES = st.sampled_from(
    ["solar", "Straße", "太阳能", "x", " ", "  ", "\n\t", "\u3000", "\x1f", " " * 40, "ǅ"]
)


@given(
    snippet=st.lists(_SNIPPET_PIECES, max_size=80).map("".join),
    length=st.sampled_from([1, 2, 5, 16, 17, 40, 200]),
)
@hypothesis.settings(max_examples=1500, deadline=None)
def test_the_opening_compared_is_the_collapsed_snippet_cut(snippet: str, length: int) -> None:
    """Level 2 reads a snippet's start only: the same opening as the whole text gives."""
    assert opening_of(snippet, length) == " ".join(snippet.split())[:length].casefold()


def _groups_by_link_and_opening(
    items: list[ResultItem], settings: DedupeSettings
) -> list[set[str]]:
    """Levels 1 and 2 as stated: every item keyed by its canonical link and by its
    title and opening, an item joining the first with its key (unless a detail keeps
    the texts apart at level 2)."""
    group_of = {entry.id: {entry.id} for entry in items}
    first: dict[tuple[str, ...], ResultItem] = {}

    def join(a: str, b: str) -> None:
        if group_of[a] is not group_of[b]:
            merged = group_of[a] | group_of[b]
            for member in merged:
                group_of[member] = merged

    for entry in items:
        if entry.url:
            join(first.setdefault(("url", canonical_url(entry.url, settings)), entry).id, entry.id)
        title = " ".join(entry.title.split()).casefold()
        opening = " ".join(entry.snippet.split())[: settings.snippet_prefix_chars].casefold()
        if title and opening:
            holder = first.setdefault(("text", title, opening), entry)
            if group_of[holder.id] is group_of[entry.id]:
                continue
            if not details.compare_items(
                holder.title, holder.snippet, entry.title, entry.snippet
            ).distinct:
                join(holder.id, entry.id)
    return list({id(group): group for group in group_of.values()}.values())


_LEVEL_TWO_ITEMS = st.lists(
    st.tuples(
        st.sampled_from(
            [None, "https://a.example/x", "http://www.a.example/x/", "https://b.example/"]
        ),
        st.sampled_from(["Python 3.13", "python  3.13", "Python 3.12", "", "Rust 1.80 - Blog"]),
        st.sampled_from(
            ["", "Notes.", "The newest  release.", "The newest release. More", "3 new"]
        ),
    ),
    max_size=12,
)


@given(_LEVEL_TWO_ITEMS)
@hypothesis.settings(max_examples=500, deadline=None)
def test_levels_one_and_two_group_as_stated(rows: list[tuple[str | None, str, str]]) -> None:
    """Only titles another item shares have their openings read: the same groups."""
    settings = DedupeSettings(simhash_max_distance=0)
    items = [
        item(url, title=title, snippet=snippet, provider=f"p{rank}", rank=rank)
        for rank, (url, title, snippet) in enumerate(rows, start=1)
    ]
    merged = dedupe(items, settings)
    groups = [set(result.providers) for result in merged]
    expected = _groups_by_link_and_opening(items, settings)
    assert sorted(map(sorted, groups)) == sorted(
        sorted(entry.providers[0] for entry in items if entry.id in group) for group in expected
    )


_PARTS = st.sampled_from(["", "a", "/", "//", "/a/b", "a/b", "?", "#", ":", "x:y", "[::1]", "例"])


@given(st.tuples(st.sampled_from(["", "https", "file", "mailto", "x"]), *[_PARTS] * 4))
@hypothesis.settings(max_examples=1000, deadline=None)
def test_a_canonical_link_is_joined_as_urlunsplit_joins_it(
    parts: tuple[str, str, str, str, str],
) -> None:
    assert joined(*parts) == urlunsplit(parts)
