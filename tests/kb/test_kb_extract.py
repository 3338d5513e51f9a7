"""A file's title, plain text and date, as the knowledge base stores them."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from sleuth.kb.extract import kind_of, parse_document

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


def sections(name: str, text: str) -> list[tuple[str | None, str | None, str]]:
    doc = parse_document(Path(name), text.encode(), MTIME)
    return [(section.heading, section.anchor, section.text) for section in doc.sections]


def test_markdown_is_split_into_sections_at_its_headings() -> None:
    text = (
        "Preface line.\n\n# Guide\n\nIntro.\n\n## Install it {#setup}\n\nRun `pip`.\n\n"
        "Chinese heading\n---------------\n\n中文内容。\n\n"
        "### 本地知识库如何支持中文检索？\n\n默认使用 jieba。\n"
    )
    assert parse_document(Path("g.md"), text.encode(), MTIME).title == "Guide"
    assert sections("g.md", text) == [
        (None, None, "Preface line."),
        ("Guide", "guide", "Intro."),
        ("Install it", "setup", "Run pip."),
        ("Chinese heading", "chinese-heading", "中文内容。"),
        ("本地知识库如何支持中文检索？", "本地知识库如何支持中文检索", "默认使用 jieba。"),
    ]


def test_html_is_split_at_h1_to_h6_and_links_only_to_ids_the_page_has() -> None:
    page = (
        "<html><head><title>Manual</title><script>x = '<h2>not a heading</h2>'</script></head>"
        "<body><p>Before.</p><h1>Manual</h1><p>Opening.</p><h2 id='cfg'>Config</h2>"
        "<p>Set keys.</p><pre>key = 1\nother = 2</pre>"
        "<h3 data-id='x'>缓存 <em>策略</em></h3><p>淘汰。</p></body></html>"
    )
    doc = parse_document(Path("m.html"), page.encode(), MTIME)
    assert doc.title == "Manual"
    assert [(s.heading, s.anchor, s.text, s.code) for s in doc.sections] == [
        (None, None, "Before.", ""),
        ("Manual", None, "Opening.", ""),  # no id in the page: the link opens the page
        ("Config", "cfg", "Set keys.", "key = 1\nother = 2"),
        ("缓存 策略", None, "淘汰。", ""),
    ]


def test_a_text_file_is_one_section_without_anchor() -> None:
    assert sections("n.txt", "# not a heading\n\nText.") == [
        (None, None, "# not a heading\n\nText.")
    ]


def test_code_blocks_fenced_and_indented_are_code_but_list_continuations_are_not() -> None:
    text = (
        "# Run\n\nStart it:\n\n    sleuth index ./docs\n    sleuth search x\n\nThen:\n\n"
        "```bash\nmake run\n```\n\n- item one\n\n    still item one\n\nAfter the list.\n"
    )
    (section,) = parse_document(Path("r.md"), text.encode(), MTIME).sections
    assert section.text == "Start it:\n\nThen:\n\nitem one\n\nstill item one\n\nAfter the list."
    assert section.code == "sleuth index ./docs\nsleuth search x\n\nmake run"


@pytest.mark.parametrize(
    ("markdown", "plain"),
    [
        ("Set `SLEUTH_<KEY>` per key.", "Set SLEUTH_<KEY> per key."),
        (
            "Use `SLEUTH_PROVIDERS__SEARXNG__ENABLED=true`.",
            "Use SLEUTH_PROVIDERS__SEARXNG__ENABLED=true.",
        ),
        (
            "Code ``a `b` c`` and `**not bold**` and `&amp;`.",
            "Code a `b` c and **not bold** and &amp;.",
        ),
        ("[`kb.path`](configuration.md) is a path.", "kb.path is a path."),
        # outside code: no emphasis inside words, tags only when they are HTML elements
        ("FOO__BAR__BAZ and max_cache_size stay.", "FOO__BAR__BAZ and max_cache_size stay."),
        ("A __strong__ and _em_ word, **bold**, *it*.", "A strong and em word, bold, it."),
        ("Plain <em>tag</em>, <b>bold</b><br> and Option<T>.", "Plain tag, bold and Option<T>."),
        ("Escaped \\*stars\\* and \\_under\\_ <!-- note -->.", "Escaped *stars* and _under_ ."),
    ],
)
def test_inline_code_is_verbatim_and_markup_outside_it_is_stripped(
    markdown: str, plain: str
) -> None:
    assert parse("a.md", markdown)[1] == plain


def test_chinese_lines_of_a_paragraph_join_without_a_space() -> None:
    _, body, _ = parse(
        "zh.md", "中文词与词之间没有空格，\n所以分词方式决定检索效果。\nUses jieba\nfor it."
    )
    assert body == "中文词与词之间没有空格，所以分词方式决定检索效果。 Uses jieba for it."


def test_documents_named_by_convention_are_text() -> None:
    names = ["README", "NEWS.Debian.gz", "README.Debian", "README.source", "FAQ", "TODO.gz"]
    assert [kind_of(Path(name)) for name in names] == ["text"] * 6
    assert [kind_of(Path(name)) for name in ["INSTALL.sh", "readme", "README.py"]] == [None] * 3
