"""A file's title, plain text and date, as the knowledge base stores them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sleuth.kb.extract import parse_document

MTIME = datetime(2025, 6, 1, 12, 30, tzinfo=UTC).timestamp()


def parse(name: str, text: str) -> tuple[str, str, str]:
    doc = parse_document(Path(name), text.encode(), MTIME)
    return doc.title, doc.body, doc.published_at


def test_markdown_title_is_the_first_heading_and_markup_is_stripped() -> None:
    title, body, _ = parse(
        "notes.md",
        "Intro line.\n\n## 缓存策略 ##\n\n# Later heading\n\n"
        "Use **write-through** and *lazy* ~~old~~ caching, see [the guide](https://x.org/g) "
        "and ![diagram](d.png) or `cache.get()`.\n\n- first item\n- second item\n",
    )
    assert title == "缓存策略"
    assert "#" not in body
    assert (
        "Use write-through and lazy old caching, see the guide and diagram or cache.get()." in body
    )
    assert "https://x.org/g" not in body
    assert "\n\nfirst item\n\nsecond item" in body


def test_markdown_code_fence_is_kept_as_text_and_its_comments_are_not_titles() -> None:
    title, body, _ = parse("setup.md", "```bash\n# install it\npip install x\n```\n\nDone.\n")
    assert title == "setup"
    assert "# install it\npip install x" in body


def test_snake_case_words_keep_their_underscores() -> None:
    _, body, _ = parse("a.md", "Set max_cache_size and _private_ flags.")
    assert body == "Set max_cache_size and private flags."


@pytest.mark.parametrize(
    ("front_matter", "expected"),
    [
        ("date: 2024-03-01", "2024-03-01T00:00:00+00:00"),
        ("published: 2024-03-01 10:00:00", "2024-03-01T10:00:00+00:00"),
        ("published_at: 2024-03-01T10:00:00+08:00", "2024-03-01T02:00:00+00:00"),
        ("published_at: '2024-03-01T10:00:00Z'", "2024-03-01T10:00:00+00:00"),
    ],
)
def test_front_matter_date_becomes_utc_published_at(front_matter: str, expected: str) -> None:
    title, body, published_at = parse(
        "post.md", f"---\n{front_matter}\nauthor: me\n---\n# Post\n\nText."
    )
    assert published_at == expected
    assert title == "Post"
    assert "author" not in body
    assert "2024" not in body


@pytest.mark.parametrize(
    "front_matter",
    ["date: not a date", "date: 2024-13-45", "date: [unclosed", "title: only a title"],
)
def test_unusable_front_matter_date_falls_back_to_mtime(front_matter: str) -> None:
    _, body, published_at = parse("post.md", f"---\n{front_matter}\n---\nBody text.")
    assert published_at == "2025-06-01T12:30:00+00:00"
    assert body == "Body text."


def test_front_matter_title_is_used_when_there_is_no_heading() -> None:
    title, _, _ = parse("post.md", "---\ntitle: From the front matter\n---\nBody.")
    assert title == "From the front matter"


def test_text_file_title_is_its_stem_and_text_is_kept() -> None:
    title, body, published_at = parse(
        "raft-notes.txt", "Raft elects a leader.\n\nLogs replicate.\n"
    )
    assert title == "raft-notes"
    assert body == "Raft elects a leader.\n\nLogs replicate."
    assert published_at == "2025-06-01T12:30:00+00:00"


def test_html_title_scripts_styles_and_entities() -> None:
    title, body, _ = parse(
        "page.html",
        "<html><head><title>Search &amp; Retrieval</title><style>p { color: red }</style>"
        "<script>var secret = 'do not index';</script></head><body><h1>Heading</h1>"
        "<p>全文检索使用倒排索引。</p><p>Tom &amp; Jerry&nbsp;run.</p>"
        "<script>track('x')</script></body></html>",
    )
    assert title == "Search & Retrieval"
    assert body == "Heading\n\n全文检索使用倒排索引。\n\nTom & Jerry run."


def test_html_title_falls_back_to_h1_then_stem() -> None:
    assert parse("a.htm", "<body><h1>The <em>real</em> title</h1><p>x</p></body>")[0] == (
        "The real title"
    )
    assert parse("bare.html", "<p>just text</p>")[0] == "bare"
