"""Searching the knowledge base: BM25 over sections, one result per document.

Every section of every document is ranked on its own: query terms are OR-joined
and scored with `bm25()` over the section's title (document title and headings),
prose and code, weighted `TITLE_WEIGHT`, `BODY_WEIGHT` and `CODE_WEIGHT` (a command
or an example in a code block says less about what a section answers than its
prose). In trigram mode, terms under three
characters are scored over the stored text with a BM25-like tf-idf (no length
normalisation) and added to the BM25 score. A document is then ranked by its best
section, and only that section is shown: a second section of the same file would
crowd out other files, and the pipeline's dedupe, which ignores URL fragments,
would merge it into the first anyway.

Each result is JSON-ready, as `sleuth.providers.local` documents:

    {"url": "file:///…/guide.md#install", "title": "Guide — Install", "snippet": "…",
     "published_at": "2026-11-02T10:00:00+00:00", "path": "guide.md", "score": 4.21}

`url` points at the section (no fragment for text before the first heading);
`title` is the document title, followed by the section heading when they differ;
`snippet` comes from the section's text. `score` is positive, higher is better,
and comparable only within one answer.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sleuth.kb.passage import best_passage
from sleuth.kb.store import connect, stored_tokenizer
from sleuth.kb.tokenize import Query, build_query

TITLE_WEIGHT = 5.0
BODY_WEIGHT = 1.0
CODE_WEIGHT = 0.5
_K1 = 1.2  # term-frequency saturation of the short-term score, as in BM25


@dataclass
class _Hit:
    """A matching section (row of `sections`): its document, place in it, and score."""

    section_id: int
    doc_id: int
    position: int
    score: float = 0.0


def search(db_path: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """The `limit` best documents for `query`, each at its best section; empty when
    there is no index (of this schema version) yet."""
    if limit <= 0 or not query.strip() or not db_path.is_file():
        return []
    with closing(connect(db_path)) as conn:
        tokenizer = stored_tokenizer(conn)
        if tokenizer is None:
            return []
        prepared = build_query(query, tokenizer)
        hits = _match_hits(conn, prepared)
        _add_short_term_scores(conn, prepared.short_terms, hits)
        top = _best_per_document(hits.values())[:limit]
        rows = _sections(conn, [hit.section_id for hit in top])
    return [
        {
            "url": f"{url}#{anchor}" if anchor else url,
            "title": f"{title} — {heading}" if heading and heading != title else title,
            "snippet": best_passage(body, prepared.terms, code) or heading or title,
            "published_at": published_at,
            "path": rel_path,
            "score": float(f"{hit.score:.4g}"),
        }
        for hit in top
        if hit.section_id in rows  # a document removed by a concurrent indexer is skipped
        for url, title, heading, anchor, body, code, published_at, rel_path in [
            rows[hit.section_id]
        ]
    ]


def _best_per_document(hits: Iterable[_Hit]) -> list[_Hit]:
    """Each document's best section (the first one on a tie), best first; documents
    with equal scores in the order they were indexed."""
    best: dict[int, _Hit] = {}
    for hit in hits:
        current = best.get(hit.doc_id)
        if current is None or (hit.score, -hit.position) > (current.score, -current.position):
            best[hit.doc_id] = hit
    return sorted(best.values(), key=lambda hit: (-hit.score, hit.doc_id))


def _match_hits(conn: sqlite3.Connection, query: Query) -> dict[int, _Hit]:
    if query.match is None:
        return {}
    rows = conn.execute(
        "SELECT sections.id, doc_id, position, bm25(sections_fts, ?, ?, ?) FROM sections_fts"
        " JOIN sections ON sections.id = sections_fts.rowid WHERE sections_fts MATCH ?",
        (TITLE_WEIGHT, BODY_WEIGHT, CODE_WEIGHT, query.match),
    )
    return {
        section_id: _Hit(section_id, doc_id, position, -rank)
        for section_id, doc_id, position, rank in rows
    }


def _add_short_term_scores(
    conn: sqlite3.Connection, terms: tuple[str, ...], hits: dict[int, _Hit]
) -> None:
    """Trigram mode: score terms too short for the trigram index by scanning the text,
    adding to `hits` (by section id)."""
    if not terms:
        return
    (total,) = conn.execute("SELECT count(*) FROM sections").fetchone()
    for term in terms:
        rows = conn.execute(
            "SELECT id, doc_id, position,"
            " (length(lower(title)) - length(replace(lower(title), :t, ''))) / length(:t),"
            " (length(lower(body)) - length(replace(lower(body), :t, ''))) / length(:t),"
            " (length(lower(code)) - length(replace(lower(code), :t, ''))) / length(:t)"
            " FROM sections WHERE instr(lower(title), :t) > 0 OR instr(lower(body), :t) > 0"
            " OR instr(lower(code), :t) > 0",
            {"t": term},
        ).fetchall()
        idf = math.log(1 + (total - len(rows) + 0.5) / (len(rows) + 0.5))
        for section_id, doc_id, position, in_title, in_body, in_code in rows:
            gain = (
                TITLE_WEIGHT * _saturate(in_title)
                + BODY_WEIGHT * _saturate(in_body)
                + CODE_WEIGHT * _saturate(in_code)
            )
            hits.setdefault(section_id, _Hit(section_id, doc_id, position)).score += idf * gain


def _saturate(count: int) -> float:
    return count * (_K1 + 1) / (count + _K1)


def _sections(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    """url, title, heading, anchor, body, code, published_at, rel_path of each section."""
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        "SELECT sections.id, url, documents.title, heading, anchor, body, code, published_at,"
        " rel_path FROM sections JOIN documents ON documents.id = sections.doc_id"
        f" WHERE sections.id IN ({marks})",
        ids,
    )
    return {row[0]: tuple(row[1:]) for row in rows}
