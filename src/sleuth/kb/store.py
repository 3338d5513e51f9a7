"""The knowledge base's SQLite file: schema, connections, the remembered tokenizer.

Tables:
    meta            key/value: `schema_version`, `tokenizer` (jieba | trigram)
    documents       one row per file, keyed by absolute path: root, path relative to
                    it, file:// URL, title, published_at, sha256 of its bytes
    sections        one row per section (or chunk of a long section) of a document:
                    its position, heading, anchor, the indexed title (document title
                    and headings), prose and code, as plain text
    sections_fts    FTS5 over (title, body, code) of `sections` in the tokenizer's
                    index form; rowid = sections.id

A database of another schema version (an older sleuth) is dropped and rebuilt empty
by `prepare`; the indexer then adds every file again. Until then `stored_tokenizer`
reports no index, so a search finds nothing rather than failing.

Callers open one connection per call with `connect()` and close it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sleuth.kb.tokenize import FTS5_TOKENIZE, TOKENIZERS, Tokenizer, index_form

SCHEMA_VERSION = "2"

_TABLES = ("sections_fts", "sections", "documents_fts", "documents", "meta")
_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        root TEXT NOT NULL,
        rel_path TEXT NOT NULL,
        url TEXT NOT NULL,
        title TEXT NOT NULL,
        published_at TEXT NOT NULL,
        sha256 TEXT NOT NULL
    )""",
    """CREATE TABLE sections (
        id INTEGER PRIMARY KEY,
        doc_id INTEGER NOT NULL REFERENCES documents (id),
        position INTEGER NOT NULL,
        heading TEXT,
        anchor TEXT,
        title TEXT NOT NULL,
        body TEXT NOT NULL,
        code TEXT NOT NULL
    )""",
    "CREATE INDEX sections_by_document ON sections (doc_id, position)",
)


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in WAL mode (readers do not block the indexer)."""
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def stored_tokenizer(conn: sqlite3.Connection) -> Tokenizer | None:
    """The tokenizer the index was built with; None when there is no index of this
    schema version (a new file, or one an older sleuth wrote)."""
    if _meta(conn, "schema_version") != SCHEMA_VERSION:
        return None
    stored = _meta(conn, "tokenizer")
    return next((tokenizer for tokenizer in TOKENIZERS if tokenizer == stored), None)


def prepare(conn: sqlite3.Connection, tokenizer: Tokenizer) -> None:
    """Create the schema (dropping one of another version); if the index used another
    tokenizer, rebuild the full-text index from the stored text. One transaction."""
    conn.execute("BEGIN IMMEDIATE")
    if _meta(conn, "schema_version") != SCHEMA_VERSION:
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
        )
    if stored_tokenizer(conn) == tokenizer:
        conn.commit()
        return
    conn.execute("DROP TABLE IF EXISTS sections_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE sections_fts USING fts5(title, body, code, "
        f"tokenize = '{FTS5_TOKENIZE[tokenizer]}')"
    )
    rows = conn.execute("SELECT id, title, body, code FROM sections").fetchall()
    conn.executemany(
        "INSERT INTO sections_fts (rowid, title, body, code) VALUES (?, ?, ?, ?)",
        [(id_, *(index_form(text, tokenizer) for text in texts)) for id_, *texts in rows],
    )
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer,))
    conn.commit()


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None
