"""Searching the knowledge base: BM25 over sections, one result per document.

The full-text index (`sleuth.kb.engine`) ranks sections on their title (document
title and headings), prose and code, weighted, with credit for query words found
next to each other, and hands back the best few hundred; a document is then ranked
by its best section, and only that section is shown: a second section of the same
file would crowd out other files, and the pipeline's dedupe, which ignores URL
fragments, would merge it into the first anyway. Nothing is scored in Python.

Each result is JSON-ready, as `sleuth.providers.local` documents:

    {"url": "file:///…/guide.md#install", "title": "Guide — Install", "snippet": "…",
     "published_at": "2026-11-02T10:00:00+00:00", "path": "guide.md", "score": 4.21,
     "source": "handbook", "tags": ["howto"], "modified_at": "2026-11-20T08:00:00+00:00"}

`url` points at the section (no fragment for text before the first heading);
`title` is the document title, followed by the section heading when they differ;
`snippet` comes from the section's text. `score` is positive, higher is better,
and comparable only within one answer. `source` is the name of the source the file
was indexed through ('' for none), `tags` its tags, `modified_at` the date of its last
change. A search may be scoped to sources, tags and a date (`sources`, `tags`,
`since`): the engine returns only sections that match them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

from sleuth.kb import engine
from sleuth.kb.passage import best_passage
from sleuth.kb.store import connect, stored_tokenizer, unpack
from sleuth.kb.tokenize import Query, build_query

# Sections fetched per result asked for, at first; four times as many again while
# fewer than `limit` distinct documents are among them, up to `MAX_SECTIONS`.
SECTIONS_PER_RESULT = 5
MAX_SECTIONS = 2000


def search(
    db_path: Path,
    query: str,
    limit: int,
    *,
    sources: Sequence[str] = (),
    tags: Sequence[str] = (),
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """The `limit` best documents for `query`, each at its best section; empty when
    there is no index (of this schema version) yet. With `sources`, only documents of
    those sources; with `tags`, only those carrying at least one of them; with `since`,
    only those modified then or later."""
    if limit <= 0 or not query.strip() or not db_path.is_file():
        return []
    with closing(connect(db_path)) as conn:
        tokenizer = stored_tokenizer(conn)
        index = engine.open_index(db_path, create=False) if tokenizer else None
        if tokenizer is None or index is None:
            return []
        prepared = build_query(query, tokenizer)
        scope = engine.Scope(
            tuple(name.lower() for name in sources),
            tuple(tag.lower() for tag in tags),
            None if since is None else int(since.timestamp()),
        )
        top = _best_per_document(index, prepared, limit, scope)
        rows = _sections(conn, [match.section_id for match in top])
    return [
        {
            "url": f"{url}#{anchor}" if anchor else url,
            "title": f"{title} — {heading}" if heading and heading != title else title,
            "snippet": best_passage(body, prepared.words, code) or heading or title,
            "published_at": published_at,
            "path": rel_path,
            "score": float(f"{match.score:.4g}"),
            "source": source,
            "tags": tags.split(),
            "modified_at": modified_at,
        }
        for match in top
        if match.section_id in rows  # a document removed by a concurrent indexer is skipped
        for url, title, heading, anchor, body, code, published_at, rel_path, source, tags, (
            modified_at
        ) in [rows[match.section_id]]
    ]


def _best_per_document(
    index: Any, query: Query, limit: int, scope: engine.Scope
) -> list[engine.Match]:
    """The `limit` best documents, each as its best section, best first."""
    wanted = limit * SECTIONS_PER_RESULT
    while True:
        matches = engine.search(index, query.terms, wanted, query.pairs, scope)
        best: dict[int, engine.Match] = {}
        for match in matches:
            best.setdefault(match.doc_id, match)  # best first: the first is the best
        if len(best) >= limit or len(matches) < wanted or wanted >= MAX_SECTIONS:
            return list(best.values())[:limit]
        wanted *= 4


def document_count(db_path: Path) -> int:
    """How many files the knowledge base holds (0 for a missing or old-schema one)."""
    if not db_path.is_file():
        return 0
    with closing(connect(db_path)) as conn:
        if stored_tokenizer(conn) is None:
            return 0
        (count,) = conn.execute("SELECT count(*) FROM documents").fetchone()
    return int(count)


def _sections(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """url, title, heading, anchor, body, code, published_at, rel_path, source, tags,
    modified_at of each section."""
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        "SELECT sections.id, url, documents.title, heading, anchor, body, code, published_at,"
        " rel_path, source, tags, modified_at"
        " FROM sections JOIN documents ON documents.id = sections.doc_id"
        f" WHERE sections.id IN ({marks})",
        ids,
    )
    return {
        section_id: (url, title, heading, anchor, unpack(body), unpack(code), *rest)
        for section_id, url, title, heading, anchor, body, code, *rest in rows
    }
