"""Searching the knowledge base: BM25 over FTS5, results in the local provider's shape.

Query terms are OR-joined and ranked with `bm25()`, the title weighted `TITLE_WEIGHT`
times the body. In trigram mode, terms under three characters are scored over the
stored text with a BM25-like tf-idf (no length normalisation) and added to the BM25
score. Each result is JSON-ready, as `sleuth.providers.local` documents:

    {"url": "file:///…/guide.md", "title": "…", "snippet": "…",
     "published_at": "2026-11-02T10:00:00+00:00", "path": "guide.md", "score": 4.21}

`score` is positive, higher is better, and comparable only within one answer.
"""

from __future__ import annotations

import math
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from sleuth.kb.passage import best_passage
from sleuth.kb.store import connect, stored_tokenizer
from sleuth.kb.tokenize import Query, build_query

TITLE_WEIGHT = 5.0
BODY_WEIGHT = 1.0
_K1 = 1.2  # term-frequency saturation of the short-term score, as in BM25


def search(db_path: Path, query: str, limit: int) -> list[dict[str, Any]]:
    """The `limit` best documents for `query`; empty when there is no index yet."""
    if limit <= 0 or not query.strip() or not db_path.is_file():
        return []
    with closing(connect(db_path)) as conn:
        tokenizer = stored_tokenizer(conn)
        if tokenizer is None:
            return []
        prepared = build_query(query, tokenizer)
        scores = _match_scores(conn, prepared, limit)
        for doc_id, score in _short_term_scores(conn, prepared.short_terms).items():
            scores[doc_id] = scores.get(doc_id, 0.0) + score
        top = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:limit]
        rows = _documents(conn, [doc_id for doc_id, _ in top])
    return [
        {
            "url": url,
            "title": title,
            "snippet": best_passage(body, prepared.terms),
            "published_at": published_at,
            "path": rel_path,
            "score": float(f"{score:.4g}"),
        }
        for doc_id, score in top
        if doc_id in rows  # a document removed by a concurrent indexer is skipped
        for url, title, body, published_at, rel_path in [rows[doc_id]]
    ]


def _match_scores(conn: sqlite3.Connection, query: Query, limit: int) -> dict[int, float]:
    if query.match is None:
        return {}
    sql = (
        "SELECT rowid, bm25(documents_fts, ?, ?) AS rank FROM documents_fts"
        " WHERE documents_fts MATCH ? ORDER BY rank"
    )
    params: tuple[object, ...] = (TITLE_WEIGHT, BODY_WEIGHT, query.match)
    if not query.short_terms:  # otherwise every match may still gain from a short term
        sql += " LIMIT ?"
        params += (limit,)
    return {doc_id: -rank for doc_id, rank in conn.execute(sql, params)}


def _short_term_scores(conn: sqlite3.Connection, terms: tuple[str, ...]) -> dict[int, float]:
    """Trigram mode: score terms too short for the trigram index by scanning the text."""
    if not terms:
        return {}
    (total,) = conn.execute("SELECT count(*) FROM documents").fetchone()
    scores: dict[int, float] = {}
    for term in terms:
        rows = conn.execute(
            "SELECT id,"
            " (length(lower(title)) - length(replace(lower(title), :t, ''))) / length(:t),"
            " (length(lower(body)) - length(replace(lower(body), :t, ''))) / length(:t)"
            " FROM documents WHERE instr(lower(title), :t) > 0 OR instr(lower(body), :t) > 0",
            {"t": term},
        ).fetchall()
        idf = math.log(1 + (total - len(rows) + 0.5) / (len(rows) + 0.5))
        for doc_id, in_title, in_body in rows:
            gain = TITLE_WEIGHT * _saturate(in_title) + BODY_WEIGHT * _saturate(in_body)
            scores[doc_id] = scores.get(doc_id, 0.0) + idf * gain
    return scores


def _saturate(count: int) -> float:
    return count * (_K1 + 1) / (count + _K1)


def _documents(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[str, ...]]:
    """url, title, body, published_at and rel_path of each of `ids`."""
    marks = ", ".join("?" * len(ids))
    rows = conn.execute(
        f"SELECT id, url, title, body, published_at, rel_path FROM documents WHERE id IN ({marks})",
        ids,
    )
    return {row[0]: tuple(row[1:]) for row in rows}
