"""Searching the knowledge base in Chinese and English, with either tokenizer."""

from __future__ import annotations

import importlib
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from sleuth.kb import NotSearchable, Tokenizer, index_folder, phrases, search
from sleuth.kb.engine import index_dir, remove_index
from sleuth.kb.passage import MAX_CHARS
from sleuth.kb.tokenize import build_query
from sleuth.text import split_sentences

# The module, which `sleuth.kb.search` (the function) hides.
kb_search = importlib.import_module("sleuth.kb.search")

TOKENIZERS: list[Tokenizer] = ["jieba", "trigram"]

DOCS = {
    "zh/cache.md": (
        "---\ndate: 2024-03-01\nsecret: front-matter-only\n---\n# 缓存策略\n\n"
        "系统设计里有很多取舍。缓存可以显著降低数据库的读取压力。"
        "常见的缓存淘汰算法包括 LRU 和 LFU。写回缓存需要注意一致性。\n\n"
        "下一节讨论监控。"
    ),
    "zh/search.md": (
        "# 全文检索\n\n倒排索引是检索系统的核心。BM25 是常用的检索排序函数。中文检索需要先分词。"
    ),
    "en/caching.txt": (
        "Caching keeps hot data close to the reader. A cache hit avoids a database round trip. "
        "Stale entries need invalidation."
    ),
    "en/retrieval.html": (
        "<html><head><title>Retrieval basics</title><script>var cache = 1;</script></head>"
        "<body><p>An inverted index maps terms to documents. Retrieval ranks them with BM25.</p>"
        "</body></html>"
    ),
    "en/unrelated.md": "# Gardening\n\nTomatoes need sun. Water them in the morning.",
}


@pytest.fixture(scope="module", params=TOKENIZERS)
def db(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("notes")
    for name, text in DOCS.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    path = root / "kb.db"  # not a note: the indexer ignores it
    index_folder(path, root, tokenizer=request.param)
    return path


def paths(hits: list[dict[str, Any]]) -> list[str]:
    return [hit["path"] for hit in hits]


@pytest.mark.parametrize(
    ("query", "first"),
    [
        ("缓存", "zh/cache.md"),  # two characters
        ("缓存策略", "zh/cache.md"),
        ("检索", "zh/search.md"),
        ("全文检索", "zh/search.md"),
        ("如何设计缓存淘汰算法", "zh/cache.md"),
        ("cache", "en/caching.txt"),
        ("inverted index", "en/retrieval.html"),
        ("BM25 检索", "zh/search.md"),
        ("LRU 缓存", "zh/cache.md"),
    ],
)
def test_best_hit_for_chinese_english_and_mixed_queries(db: Path, query: str, first: str) -> None:
    assert paths(search(db, query, 5))[0] == first


def test_two_character_chinese_query_finds_only_documents_containing_it(db: Path) -> None:
    assert paths(search(db, "缓存", 5)) == ["zh/cache.md"]
    assert set(paths(search(db, "检索", 5))) == {"zh/search.md"}


def test_an_english_query_does_not_match_unrelated_documents(db: Path) -> None:
    assert "en/unrelated.md" not in paths(search(db, "retrieval", 5))
    assert paths(search(db, "tomatoes", 5)) == ["en/unrelated.md"]


def test_result_is_json_ready_in_the_local_provider_shape(db: Path) -> None:
    (hit,) = search(db, "缓存策略", 1)
    assert set(hit) == {
        "url",
        "title",
        "snippet",
        "published_at",
        "path",
        "score",
        "source",
        "tags",
        "modified_at",
        "next_score",
    }
    assert (hit["source"], hit["tags"]) == ("", [])  # indexed as a folder, not a source
    # The section's anchor: the heading is the document title, so the title is plain.
    assert hit["url"] == (db.parent / "zh/cache.md").resolve().as_uri() + "#缓存策略"
    assert hit["title"] == "缓存策略"
    assert hit["path"] == "zh/cache.md"
    assert hit["published_at"] == "2024-03-01T00:00:00+00:00"
    assert isinstance(hit["score"], float)
    assert hit["score"] > 0
    assert json.loads(json.dumps(hit)) == hit


def test_each_result_tells_the_next_best_documents_score(db: Path) -> None:
    hits = search(db, "cache 缓存 retrieval 检索", 10)
    assert [hit["next_score"] for hit in hits[:-1]] == [hit["score"] for hit in hits[1:]]
    assert hits[-1]["next_score"] is None  # every matching document is among them
    # Asked for one, the first still tells the second's score.
    (first,) = search(db, "cache 缓存 retrieval 检索", 1)
    assert first["next_score"] == hits[0]["next_score"]


def test_mtime_date_is_iso_8601_with_utc(db: Path) -> None:
    (hit,) = search(db, "tomatoes", 1)
    assert datetime.fromisoformat(hit["published_at"]).utcoffset() is not None
    assert hit["published_at"].endswith("+00:00")


def test_scores_are_positive_and_descending(db: Path) -> None:
    hits = search(db, "cache 缓存 retrieval 检索", 10)
    assert len(hits) >= 4
    scores = [hit["score"] for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)


def test_limit_is_respected(db: Path) -> None:
    assert len(search(db, "cache 缓存 retrieval 检索", 2)) == 2


@pytest.mark.parametrize(
    "query", ['"foo" AND (bar', "NEAR", "*", "-x", "a OR", "(", '"', "NOT cache", "^title:x", "{}"]
)
def test_fts5_syntax_in_the_query_never_raises(db: Path, query: str) -> None:
    assert isinstance(search(db, query, 5), list)


@pytest.mark.parametrize(
    "query", ['"cache" AND (', "cache*", "-cache", "NEAR(cache", "title:cache"]
)
def test_words_inside_fts5_syntax_are_still_searched(db: Path, query: str) -> None:
    assert "en/caching.txt" in paths(search(db, query, 5))


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_gives_nothing(db: Path, query: str) -> None:
    assert search(db, query, 5) == []


def test_missing_database_gives_nothing_and_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "none.db"
    assert search(db, "cache", 5) == []
    assert not db.exists()


def test_a_lost_or_outdated_full_text_index_says_to_index_again(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "caching.md").write_text(DOCS["en/caching.txt"], encoding="utf-8")
    db = tmp_path / "kb.db"
    index_folder(db, notes)
    remove_index(db)  # as a sleuth with another index layout leaves it: unreadable here
    with pytest.raises(NotSearchable, match=r"run `sleuth index PATH` to rebuild it"):
        search(db, "cache hit", 5)
    report = index_folder(db, notes)  # nothing changed on disk: rebuilt from stored text
    assert index_dir(db).is_dir() and report.added == 0
    assert paths(search(db, "cache hit", 5)) == ["caching.md"]


def test_snippet_is_whole_sentences_containing_the_term(db: Path) -> None:
    (hit,) = search(db, "缓存", 1)
    snippet = hit["snippet"]
    assert snippet.startswith("缓存可以显著降低")
    assert "缓存" in snippet
    assert len(snippet) <= MAX_CHARS
    body_sentences = split_sentences(
        "系统设计里有很多取舍。缓存可以显著降低数据库的读取压力。"
        "常见的缓存淘汰算法包括 LRU 和 LFU。写回缓存需要注意一致性。"
    )
    assert split_sentences(snippet) == body_sentences[1:4]


def test_snippet_never_shows_front_matter_or_script(db: Path) -> None:
    for hit in search(db, "cache 缓存 retrieval 检索 secret var", 10):
        assert "front-matter-only" not in hit["snippet"]
        assert "var cache" not in hit["snippet"]


def test_english_snippet_is_the_matching_passage(db: Path) -> None:
    (hit,) = search(db, "invalidation", 1)
    assert hit["snippet"] == "Stale entries need invalidation."


def test_jieba_matches_english_inflections_and_shows_them_in_the_snippet(tmp_path: Path) -> None:
    (tmp_path / "n").mkdir()
    (tmp_path / "n/a.txt").write_text("Intro. Two caches were warmed. The end.")
    index_folder(tmp_path / "kb.db", tmp_path / "n", tokenizer="jieba")
    (hit,) = search(tmp_path / "kb.db", "caching", 5)
    assert hit["snippet"].startswith("Two caches were warmed.")


@pytest.mark.parametrize(("tokenizer", "found"), [("jieba", []), ("trigram", ["trap.txt"])])
def test_substring_across_chinese_words_matches_only_with_trigram(
    tmp_path: Path, tokenizer: Tokenizer, found: list[str]
) -> None:
    # 排队列表 is 排队 + 列表: it holds the characters 队列 but not the word (queue).
    (tmp_path / "n").mkdir()
    (tmp_path / "n/trap.txt").write_text("排队列表很长。", encoding="utf-8")
    index_folder(tmp_path / "kb.db", tmp_path / "n", tokenizer=tokenizer)
    assert paths(search(tmp_path / "kb.db", "队列", 5)) == found


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_title_weighs_more_than_body(tmp_path: Path, tokenizer: Tokenizer) -> None:
    # As in real documentation, the page about a thing is one, passing mentions many.
    body = " ".join(f"Filler sentence number {n}." for n in range(5))
    (tmp_path / "n").mkdir()
    for n in range(3):
        (tmp_path / f"n/in-body-{n}.md").write_text(f"# Notes {n}\n\n{body} Mentions kumquat once.")
    (tmp_path / "n/in-title.md").write_text(f"# Kumquat\n\n{body} Nothing else.")
    index_folder(tmp_path / "kb.db", tmp_path / "n", tokenizer=tokenizer)
    assert paths(search(tmp_path / "kb.db", "kumquat", 5))[0] == "in-title.md"


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_more_mentions_rank_higher(tmp_path: Path, tokenizer: Tokenizer) -> None:
    (tmp_path / "n").mkdir()
    (tmp_path / "n/once.txt").write_text("消息队列。其他内容。更多内容。", encoding="utf-8")
    (tmp_path / "n/often.txt").write_text("消息队列。队列很长。队列满了。", encoding="utf-8")
    (tmp_path / "n/none.txt").write_text("完全无关的内容。", encoding="utf-8")
    index_folder(tmp_path / "kb.db", tmp_path / "n", tokenizer=tokenizer)
    assert paths(search(tmp_path / "kb.db", "队列", 5)) == ["often.txt", "once.txt"]


def test_the_query_words_side_by_side_rank_first(tmp_path: Path) -> None:
    # The same words as often in pages of the same length: only their order differs.
    (tmp_path / "n").mkdir()
    (tmp_path / "n/apart.md").write_text("# Notes\n\nRebuild the index. Create tables first.")
    (tmp_path / "n/together.md").write_text("# Notes\n\nRebuild the table. Create indexes first.")
    index_folder(tmp_path / "kb.db", tmp_path / "n")
    found = search(tmp_path / "kb.db", "create index", 5)
    assert paths(found) == ["together.md", "apart.md"]
    assert found[0]["score"] > found[1]["score"]
    # In the other order, the words meet across the other page's full stop.
    assert paths(search(tmp_path / "kb.db", "index create", 5)) == ["apart.md", "together.md"]


def test_a_long_question_gets_the_same_phrase_credit_after_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its pairs are credited on the best sections' stored text, not by the engine's
    # phrase clauses: the same scores, so the same order.
    (tmp_path / "n").mkdir()
    for n, text in enumerate(
        [
            "Create an index concurrently without locking the table for writes.",
            "Locking the table: create index blocks writes; concurrently it does not.",
            "Writes to the table wait while an index is created without concurrently.",
            "The table, its index and its lock: concurrently creating one is slower.",
        ]
    ):
        (tmp_path / f"n/page{n}.md").write_text(f"# Index builds {n}\n\n{text} " * (n + 1))
    index_folder(tmp_path / "kb.db", tmp_path / "n")
    question = "create index concurrently without locking the table writes so reads go on"

    def ranked() -> list[tuple[str, float]]:
        return [(hit["path"], hit["score"]) for hit in search(tmp_path / "kb.db", question, 5)]

    assert len(build_query(question, "jieba").pairs) > kb_search.PAIRS_IN_ENGINE
    after = ranked()
    monkeypatch.setattr(kb_search, "PAIRS_IN_ENGINE", 100)
    assert ranked() == after
    monkeypatch.setattr(kb_search, "PAIRS_IN_ENGINE", 0)
    monkeypatch.setattr(phrases, "PHRASE_WEIGHT", 0.0)
    assert ranked() != after  # the credit does move them


def test_an_identifier_finds_the_section_that_names_it(tmp_path: Path) -> None:
    # Pages about its parts ("auto" this, "increment" that) mention them more often. (The
    # trigram tokenizer indexes identifiers whole too, but there the parts' trigrams,
    # matched in every "auto…" word, outweigh them on pages this small.)
    (tmp_path / "n").mkdir()
    (tmp_path / "n/serial.md").write_text(
        "# Serial types\n\nA serial column is like MySQL's AUTO_INCREMENT: each row gets "
        "the next value of a sequence, and rows inserted later get larger numbers."
    )
    (tmp_path / "n/auto-explain.md").write_text(
        "# Auto explain\n\nThe auto explain module logs plans of slow queries auto"
        "matically. Auto mode increments a counter; the increment is one per plan."
    )
    (tmp_path / "n/increments.md").write_text(
        "# Increment and auto vacuum\n\nEach increment of the counter starts an auto "
        "vacuum. A larger increment means fewer auto vacuums."
    )
    index_folder(tmp_path / "kb.db", tmp_path / "n")
    assert paths(search(tmp_path / "kb.db", "mysql auto_increment equivalent", 5))[0] == (
        "serial.md"
    )


def test_the_entry_an_identifier_heads_comes_before_pages_that_mention_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "n").mkdir()
    (tmp_path / "n/whatsnew.md").write_text(
        "# What's new in 3.7\n\n## gc\n\nNew gc.freeze() moves every object to a permanent "
        "generation; gc.unfreeze() and gc.get_freeze_count() go with it."
    )
    (tmp_path / "n/gc.md").write_text(
        "# gc: the garbage collector interface\n\n## gc.collect(generation=2)\n\nRun a "
        "full collection; without an argument, every generation.\n\n"
        "## gc.get_freeze_count()\n\nReturn the number of objects in the permanent generation."
    )
    index_folder(tmp_path / "kb.db", tmp_path / "n")
    for asked in ("gc.get_freeze_count", "get_freeze_count"):
        first = search(tmp_path / "kb.db", asked, 5)[0]
        assert first["url"].endswith("gc.md#gcget_freeze_count"), (asked, first["url"])


def indexed(tmp_path: Path, files: dict[str, str], tokenizer: Tokenizer) -> Path:
    for name, text in files.items():
        (tmp_path / "n" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "n" / name).write_text(text, encoding="utf-8")
    index_folder(tmp_path / "kb.db", tmp_path / "n", tokenizer=tokenizer)
    return tmp_path / "kb.db"


FILLER = " ".join(f"Unrelated sentence number {n} about the weather." for n in range(12))
GUIDE = {
    "pipeline.md": (
        "# How one search runs\n\nEvery search goes through the same stages.\n\n"
        f"## Guard\n\n{FILLER}\n\n## Fan-out\n\n{FILLER}\n\n"
        "## Dedupe\n\n"
        "Dedupe removes duplicate results in three levels. First, sleuth compares canonical"
        " URLs. Second, it compares titles.\n\n"
        f"## Rank\n\n{FILLER} Rank fuses the orders of the results.\n"
    ),
    "kb.md": (
        "# The local knowledge base\n\nThe local provider searches your own documents.\n\n"
        '    sleuth index ./docs\n    sleuth search "how are duplicates removed"\n\n'
        "Indexing is incremental.\n"
    ),
    "zh/README.md": (
        "# sleuth 中文说明\n\nsleuth 是给 AI 智能体用的搜索服务。\n\n"
        "## 快速开始\n\n运行 make run。\n\n"
        "## 本地知识库如何支持中文检索\n\n中文词与词之间没有空格，所以分词方式决定检索效果。"
        "本地知识库默认使用 jieba 分词，\n再写入 SQLite FTS5 全文索引。\n\n"
        "## 去重\n\n先比较网址。\n"
    ),
}


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_the_answering_section_wins_and_is_linked_with_its_anchor(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    db = indexed(tmp_path, GUIDE, tokenizer)
    hit = search(db, "How sleuth remove duplicate results", 5)[0]
    assert hit["path"] == "pipeline.md"
    assert hit["url"] == (tmp_path / "n/pipeline.md").resolve().as_uri() + "#dedupe"
    assert hit["title"] == "How one search runs — Dedupe"
    assert hit["snippet"].startswith("Dedupe removes duplicate results in three levels.")


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_chinese_section_is_linked_and_its_paragraph_not_its_heading_is_the_snippet(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    db = indexed(tmp_path, GUIDE, tokenizer)
    hit = search(db, "本地知识库怎么支持中文检索？", 5)[0]
    assert hit["path"] == "zh/README.md"
    assert hit["url"].endswith("zh/README.md#本地知识库如何支持中文检索")
    assert hit["title"] == "sleuth 中文说明 — 本地知识库如何支持中文检索"
    paragraph = (
        "中文词与词之间没有空格，所以分词方式决定检索效果。"
        "本地知识库默认使用 jieba 分词，再写入 SQLite FTS5 全文索引。"
    )
    # Whole sentences of the paragraph, from the one that matches (trigram finds no
    # query trigram in the first sentence); never the bare heading.
    assert hit["snippet"].endswith("本地知识库默认使用 jieba 分词，再写入 SQLite FTS5 全文索引。")
    assert hit["snippet"] in paragraph
    if tokenizer == "jieba":
        assert hit["snippet"] == paragraph


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_one_result_per_document_at_its_best_section(tmp_path: Path, tokenizer: Tokenizer) -> None:
    db = indexed(
        tmp_path,
        {
            "fruit.md": (
                "# Fruit\n\nKumquat trees are small.\n\n## Kumquat harvest\n\n"
                "Pick each kumquat when orange. A ripe kumquat is sweet.\n\n"
                "## Storage\n\nKeep a kumquat cool.\n"
            ),
            "other.txt": "Nothing about that fruit here. Just one kumquat.",
        },
        tokenizer,
    )
    hits = search(db, "kumquat harvest", 10)
    assert paths(hits) == ["fruit.md", "other.txt"]
    assert hits[0]["url"].endswith("fruit.md#kumquat-harvest")
    assert hits[0]["snippet"] == "Pick each kumquat when orange. A ripe kumquat is sweet."
    assert "#" not in hits[1]["url"]  # a text file is one section, with no heading
    assert hits[1]["title"] == "other"


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_section_of_a_long_document_competes_with_short_notes(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    long_doc = "# Handbook\n\n" + "".join(f"## Part {n}\n\n{FILLER}\n\n" for n in range(10))
    long_doc += "## Quince\n\nQuince jam sets well. Quince trees need sun. Pick quince late.\n"
    note = f"{FILLER} Someone mentioned quince once."
    db = indexed(tmp_path, {"handbook.md": long_doc, "note.txt": note}, tokenizer)
    hits = search(db, "quince", 5)
    assert paths(hits) == ["handbook.md", "note.txt"]
    assert hits[0]["url"].endswith("#quince")
    assert hits[0]["title"] == "Handbook — Quince"


@pytest.mark.parametrize("tokenizer", TOKENIZERS)
def test_a_section_with_only_a_heading_shows_the_heading(
    tmp_path: Path, tokenizer: Tokenizer
) -> None:
    db = indexed(tmp_path, {"todo.md": "# Plans\n\n## Persimmon ideas\n"}, tokenizer)
    (hit,) = search(db, "persimmon", 5)
    assert hit["title"] == "Plans — Persimmon ideas"
    assert hit["snippet"] == "Persimmon ideas"
    assert hit["url"].endswith("todo.md#persimmon-ideas")


def test_a_how_to_sentence_is_shown_with_its_code_example(tmp_path: Path) -> None:
    page = (
        "# Tables\n\nTables hold rows.\n\n## Renaming a column\n\nTo rename a column:\n\n"
        "```sql\nALTER TABLE products\n  RENAME COLUMN product_no TO product_number;\n```\n\n"
        "Nothing else changes.\n"
    )
    db = indexed(tmp_path, {"tables.md": page}, "jieba")
    (hit,) = search(db, "how do I rename a column", 5)
    assert hit["snippet"] == (
        "To rename a column: ALTER TABLE products RENAME COLUMN product_no TO product_number;"
    )
    assert hit["url"].endswith("tables.md#renaming-a-column")


def _chapter(name: str, topic: str) -> str:
    return (
        f"<h2 id='{name}-intro'>{topic} overview</h2><p>What {topic} is for, and when a "
        f"program reaches for {topic} at all, in a few plain sentences.</p>"
        f"<h2 id='{name}-api'>{name}.open(path)</h2><p>Opens the {topic} at path and "
        f"returns a handle; the handle closes when the program ends.</p>"
    )


def test_a_page_holding_the_whole_book_does_not_stand_for_its_chapters(tmp_path: Path) -> None:
    # Node.js's all.html and mdBook's print.html hold every chapter's sections again.
    topics = {"fs": "file system", "net": "network socket", "zlib": "compression stream"}
    root = tmp_path / "api"
    root.mkdir()
    for name, topic in topics.items():
        (root / f"{name}.html").write_text(f"<title>{topic}</title>{_chapter(name, topic)}")
    book = "".join(_chapter(name, topic) for name, topic in topics.items())
    (root / "all.html").write_text(f"<title>All of it</title>{book}")
    db = tmp_path / "kb.db"
    index_folder(db, root)

    for name, topic in topics.items():
        hits = search(db, f"{name}.open {topic} handle", 5)
        assert hits[0]["url"].endswith(f"/api/{name}.html#{name}-api")
        assert not any(hit["url"].endswith(f"/api/all.html#{name}-api") for hit in hits)


def test_pages_of_one_size_that_share_a_section_each_keep_it(tmp_path: Path) -> None:
    shared = (
        "<h2>Configuration directories</h2><p>Files in the drop-in directories are read "
        "in lexicographic order, and later files override earlier ones.</p>"
    )
    (tmp_path / "conf").mkdir()
    for name in ("journald", "logind"):
        page = f"<title>{name}.conf</title><h2>{name}</h2><p>The {name} settings.</p>{shared}"
        (tmp_path / "conf" / f"{name}.conf.html").write_text(page)
    db = tmp_path / "kb.db"
    index_folder(db, tmp_path / "conf")

    hits = search(db, "drop-in directories lexicographic order", 5)
    assert sorted(hit["path"] for hit in hits) == ["journald.conf.html", "logind.conf.html"]
