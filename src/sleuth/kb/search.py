"""Searching the knowledge base: BM25 over sections, one result per document.

The full-text index (`sleuth.kb.engine`) ranks sections on their title (document
title and headings), prose and code, weighted, with credit for the query's
neighbouring words found side by side, and hands back the best few dozen; for a
question of many word pairs that credit is computed afterwards, for the best of
them, from their stored text (`PAIRS_IN_ENGINE`, `sleuth.kb.phrases`). A document is
ranked by its best section, and only that section is shown: a second section of the
same file would crowd out other files, and the pipeline's dedupe, which ignores URL
fragments, would merge it into the first anyway.

Each result is JSON-ready, as `sleuth.providers.local` documents:

    {"url": "file:///…/guide.md#install", "title": "Guide — Install", "snippet": "…",
     "published_at": "2026-11-02T10:00:00+00:00", "path": "guide.md", "score": 4.21,
     "source": "handbook", "tags": ["howto"], "modified_at": "2026-11-20T08:00:00+00:00",
     "next_score": 3.87}

`url` points at the section (no fragment for text before the first heading);
`title` is the document title, followed by the section heading when they differ;
`snippet` comes from the section's text. `score` is positive, higher is better,
and comparable only within one answer. `source` is the name of the source the file
was indexed through ('' for none), `tags` its tags, `modified_at` the date of its last
change. `next_score` is the score of the next best document, the next result's or,
for the last, that of the first left out (null when the sections the engine handed
back held no other): how far a result leads the rest, whatever `limit` was asked.
A section that is a copy of another's in a page of far fewer sections (a whole-book
page beside its chapters: `_Stored.copies`) is passed over for that page's own.
A search may be scoped to sources, tags and a date (`sources`, `tags`,
`since`): the engine returns only sections that match them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from sleuth.kb import engine
from sleuth.kb.passage import best_passage
from sleuth.kb.phrases import phrase_credit
from sleuth.kb.sections import unnumbered
from sleuth.kb.store import connect, stored_tokenizer, unpack
from sleuth.kb.tokenize import Query, Tokenizer, build_query, phrase_terms, whole_names

# Sections fetched per result asked for, at first; four times as many again while
# fewer than `limit` distinct documents are among them, up to `MAX_SECTIONS`.
SECTIONS_PER_RESULT = 5
MAX_SECTIONS = 2000
# A question of more neighbouring word pairs than this gets its phrase credit after
# the engine's search, for its best `PHRASE_SECTIONS` sections (at least as many as
# the results asked for), instead of phrase clauses in the engine's query: each clause
# is evaluated in every section holding both words (a pasted error message's 17
# pairs took 10 of its 15 ms at 180,000 sections), while reading and splitting 20
# sections costs about 2 ms whatever the question. Crediting 20 ranked the
# development questions as the clauses did; crediting only the 5 or 10 the results
# come from changed the order below the first (for a search of 5, as the pipeline
# asks, it put one question's right page out of them).
PAIRS_IN_ENGINE = 5
PHRASE_SECTIONS = 20
# Stored bytes (prose and code, deflated) below which two equal sections are not taken
# for copies of each other: a heading with a line under it ("Returns: <boolean>") is
# the same in many pages without one holding the other.
COPY_MIN_BYTES = 32
# A page holding another's section holds at least this many times its sections: a whole
# book beside its chapters. Pages of about one size that share a section (seven
# systemd `*.conf` pages' 配置目录及其优先级) each keep it: none holds the others.
HOLDER_SECTIONS = 2


def warm_up() -> None:
    """Load what the first query would otherwise load inside its deadline: the Chinese
    segmenter (imported on first use, about 0.2 s) and the stemmer."""
    build_query("预热 warming", "jieba")


class NotSearchable(RuntimeError):
    """The knowledge base holds documents that cannot be searched until it is indexed
    again: another sleuth version wrote it, or its full-text index is missing."""


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
    the knowledge base holds nothing yet. With `sources`, only documents of those
    sources; with `tags`, only those carrying at least one of them; with `since`, only
    those modified then or later.

    Raises `NotSearchable` when it holds documents that only the next `sleuth index`
    makes searchable (silence would read as "nothing matched")."""
    if limit <= 0 or not query.strip() or not db_path.is_file():
        return []
    with closing(connect(db_path)) as conn:
        tokenizer = stored_tokenizer(conn)
        if tokenizer is None:
            if _holds_documents(conn):
                raise NotSearchable(
                    f"the knowledge base {db_path} was written by another sleuth version: "
                    "run `sleuth index PATH` to upgrade it (the stored text is kept)"
                )
            return []
        index = engine.open_index(db_path, create=False)
        if index is None:
            raise NotSearchable(
                f"the full-text index of the knowledge base {db_path} is missing or from "
                "another sleuth version: run `sleuth index PATH` to rebuild it from the "
                "stored text (no file is read again)"
            )
        prepared = build_query(query, tokenizer)
        scope = engine.Scope(
            tuple(name.lower() for name in sources),
            tuple(tag.lower() for tag in tags),
            None if since is None else int(since.timestamp()),
        )
        stored = _Stored(conn)
        ranked = _best_per_document(index, stored, tokenizer, prepared, limit, scope)
        top = ranked[:limit]
        rows = stored.read([match.section_id for match in top])
    after = [match.score for match in ranked[1:]] + [None]
    return [
        {
            "url": f"{row.url}#{row.anchor}" if row.anchor else row.url,
            "title": (
                f"{row.page} — {row.heading}"
                if row.heading and row.heading != row.page
                else row.page
            ),
            "snippet": best_passage(
                row.body, prepared.words, row.code, f"{row.page} {row.headings}"
            )
            or row.heading
            or row.page,
            "published_at": row.published_at,
            "path": row.rel_path,
            "score": float(f"{match.score:.4g}"),
            "source": row.source,
            "tags": row.tags.split(),
            "modified_at": row.modified_at,
            "next_score": None if next_score is None else float(f"{next_score:.4g}"),
        }
        for match, next_score in zip(top, after, strict=False)
        if (row := rows.get(match.section_id)) is not None  # removed by a concurrent indexer
    ]


def _best_per_document(
    index: Any,
    stored: _Stored,
    tokenizer: Tokenizer,
    query: Query,
    limit: int,
    scope: engine.Scope,
) -> list[engine.Match]:
    """The `limit` best documents, each as its best section, best first, and the
    next best document when the sections fetched hold one (the answer's confidence
    reads how far the first leads it; nothing more is fetched for it)."""
    wanted = limit * SECTIONS_PER_RESULT
    while True:
        in_engine = query.pairs if len(query.pairs) <= PAIRS_IN_ENGINE else ()
        matches = engine.search(index, query.terms, wanted, in_engine, scope)
        if query.pairs and not in_engine:
            matches = _with_phrases(index, stored, tokenizer, query, matches, limit)
        copies = stored.copies(matches)
        best: dict[int, engine.Match] = {}
        for match in matches:
            if match.section_id not in copies:
                best.setdefault(match.doc_id, match)  # best first: the first is the best
        if len(best) >= limit or len(matches) < wanted or wanted >= MAX_SECTIONS:
            return list(best.values())[: limit + 1]
        wanted *= 4


def _with_phrases(
    index: Any,
    stored: _Stored,
    tokenizer: Tokenizer,
    query: Query,
    matches: list[engine.Match],
    limit: int,
) -> list[engine.Match]:
    """`matches` with the phrase credit of the best of them added, best first."""
    credited = matches[: max(limit, PHRASE_SECTIONS)]
    statistics = engine.statistics(index, sorted({term for pair in query.pairs for term in pair}))
    rows = stored.read([match.section_id for match in credited])
    fields = _fields(rows, tokenizer)
    scored = [
        engine.Match(
            match.section_id,
            match.doc_id,
            match.score + _credit(fields.get(match.section_id), query.pairs, statistics),
        )
        for match in credited
    ]
    return sorted(scored + matches[len(credited) :], key=lambda match: -match.score)


class _Fields(NamedTuple):
    terms: dict[str, list[str]]  # by field, in order (`phrase_terms`)
    lengths: dict[str, int]  # by field, as indexed: the terms and the whole names after


def _credit(
    fields: _Fields | None, pairs: Sequence[tuple[str, str]], statistics: engine.Statistics
) -> float:
    if fields is None:  # removed by a concurrent indexer
        return 0.0
    return phrase_credit(fields.terms, pairs, statistics, fields.lengths)


def _fields(rows: dict[int, _Section], tokenizer: Tokenizer) -> dict[int, _Fields]:
    """The terms and lengths of each field of the sections `rows`, as the engine holds
    them, for finding the query's pairs. (A Chinese run counts as one term, not as
    its words: only the length of a field with Chinese text is approximate.)"""
    pages: dict[str, tuple[list[str], int]] = {}  # a document's title, once for all
    fields = {}
    for section_id, row in rows.items():
        if row.page not in pages:
            pages[row.page] = _field(unnumbered(row.page), tokenizer)
        page, page_length = pages[row.page]
        headings, headings_length = _field(unnumbered(row.headings), tokenizer)
        text, text_length = _field(row.body, tokenizer)
        code, code_length = _field(row.code, tokenizer)
        fields[section_id] = _Fields(
            {"title": page + headings, "text": text, "code": code},
            {"title": page_length + headings_length, "text": text_length, "code": code_length},
        )
    return fields


def _field(text: str, tokenizer: Tokenizer) -> tuple[list[str], int]:
    terms = phrase_terms(text, tokenizer)
    return terms, len(terms) + len(whole_names(text))


def _holds_documents(conn: sqlite3.Connection) -> bool:
    try:
        return conn.execute("SELECT 1 FROM documents LIMIT 1").fetchone() is not None
    except sqlite3.OperationalError:  # no such table: not a knowledge base sleuth wrote
        return False


def document_count(db_path: Path) -> int:
    """How many files the knowledge base holds (0 for a missing or old-schema one)."""
    if not db_path.is_file():
        return 0
    with closing(connect(db_path)) as conn:
        if stored_tokenizer(conn) is None:
            return 0
        (count,) = conn.execute("SELECT count(*) FROM documents").fetchone()
    return int(count)


class _Section(NamedTuple):
    url: str
    page: str  # the document's title
    heading: str | None
    anchor: str | None
    headings: str  # the section's title: folded empty headings, then its own
    body: str
    code: str
    published_at: str
    rel_path: str
    source: str
    tags: str
    modified_at: str


class _Stored:
    """The stored sections one search reads, each read once: phrase credit reads the
    engine's best few dozen, the results then the best ten, mostly the same ones."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._rows: dict[int, _Section] = {}

    def copies(self, matches: Sequence[engine.Match]) -> set[int]:
        """The sections of `matches` that are copies of another of them in a page of
        far fewer sections (`HOLDER_SECTIONS` times): a page that holds the whole book
        (Node.js's `all.html`, mdBook's `print.html`, a single-page build) scored its
        copy of a section as high as the section's own page, and came first for 299 of
        300 Node.js API names asked by name. The other page's section stands for both.
        A section of fewer than `COPY_MIN_BYTES` stored is never taken for a copy.
        Costs a search about 0.2 ms (25 sections' sizes read; their text only when two
        of one size are in pages of unlike sizes)."""
        if len(matches) < 2:
            return set()
        marks = ", ".join("?" * len(matches))
        sized: dict[tuple[int, int], list[tuple[int, int]]] = {}  # by stored size
        for section_id, doc_id, body, code in self._conn.execute(
            f"SELECT id, doc_id, length(body), length(code) FROM sections WHERE id IN ({marks})",
            [match.section_id for match in matches],
        ):
            if body + code >= COPY_MIN_BYTES:
                sized.setdefault((body, code), []).append((section_id, doc_id))
        alike = [group for group in sized.values() if len({doc for _, doc in group}) > 1]
        if not alike:
            return set()  # most searches: no two sections of one size in two pages
        docs = sorted({doc for group in alike for _, doc in group})
        marks = ", ".join("?" * len(docs))
        sections_of = {  # positions count from 0
            doc_id: last + 1
            for doc_id, last in self._conn.execute(
                f"SELECT doc_id, max(position) FROM sections WHERE doc_id IN ({marks})"
                " GROUP BY doc_id",
                docs,
            )
        }
        order = {match.section_id: n for n, match in enumerate(matches)}
        dropped: set[int] = set()
        for group in alike:
            group.sort(key=lambda entry: (sections_of[entry[1]], order[entry[0]]))
            fewest = sections_of[group[0][1]]
            if sections_of[group[-1][1]] < HOLDER_SECTIONS * fewest:
                continue  # pages of about one size: none holds another
            ids = [section_id for section_id, _ in group]
            marks = ", ".join("?" * len(ids))
            stored = {
                section_id: (body, code)
                for section_id, body, code in self._conn.execute(
                    f"SELECT id, body, code FROM sections WHERE id IN ({marks})", ids
                )
            }
            kept: list[tuple[int, int]] = []  # (section, its page's sections), fewest first
            for section_id, doc_id in group:
                size = sections_of[doc_id]
                if any(
                    stored.get(section_id) == stored.get(first) and size >= HOLDER_SECTIONS * fewer
                    for first, fewer in kept
                ):
                    dropped.add(section_id)
                else:
                    kept.append((section_id, size))
        return dropped

    def read(self, ids: list[int]) -> dict[int, _Section]:
        """The sections `ids` that are stored (one removed meanwhile is left out)."""
        missing = [section_id for section_id in ids if section_id not in self._rows]
        if missing:
            marks = ", ".join("?" * len(missing))
            found = self._conn.execute(
                "SELECT sections.id, url, documents.title, heading, anchor, sections.title,"
                " body, code, published_at, rel_path, source, tags, modified_at"
                " FROM sections JOIN documents ON documents.id = sections.doc_id"
                f" WHERE sections.id IN ({marks})",
                missing,
            )
            for section_id, url, page, heading, anchor, headings, body, code, *rest in found:
                self._rows[section_id] = _Section(
                    url, page, heading, anchor, headings, unpack(body), unpack(code), *rest
                )
        return {
            section_id: self._rows[section_id] for section_id in ids if section_id in self._rows
        }
