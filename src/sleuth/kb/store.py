"""The knowledge base's SQLite file: schema, connections, the remembered tokenizer.

Tables:
    meta            key/value: `schema_version`, `tokenizer` (jieba | trigram)
    documents       one row per file, keyed by absolute path: root, path relative to
                    it, file:// URL, title, plain text, published_at, sha256 of bytes
    documents_fts   FTS5 over (title, body) in the tokenizer's index form;
                    rowid = documents.id

Callers open one connection per call with `connect()` and close it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from sleuth.kb.tokenize import FTS5_TOKENIZE, TOKENIZERS, Tokenizer, index_form

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    root TEXT NOT NULL,
    rel_path TEXT NOT NULL,
    url TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    published_at TEXT NOT NULL,
    sha256 TEXT NOT NULL
);
"""


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in WAL mode (readers do not block the indexer)."""
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def stored_tokenizer(conn: sqlite3.Connection) -> Tokenizer | None:
    """The tokenizer the index was built with; None for a database with no index."""
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'tokenizer'").fetchone()
    for tokenizer in TOKENIZERS:
        if row and row[0] == tokenizer:
            return tokenizer
    return None


def prepare(conn: sqlite3.Connection, tokenizer: Tokenizer) -> None:
    """Create the schema; if the index used another tokenizer, rebuild it from the text."""
    conn.executescript(_SCHEMA)
    previous = stored_tokenizer(conn)
    if previous == tokenizer:
        return
    conn.execute("DROP TABLE IF EXISTS documents_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE documents_fts USING fts5(title, body, "
        f"tokenize = '{FTS5_TOKENIZE[tokenizer]}')"
    )
    rows = conn.execute("SELECT id, title, body FROM documents").fetchall()
    conn.executemany(
        "INSERT INTO documents_fts (rowid, title, body) VALUES (?, ?, ?)",
        [
            (id_, index_form(title, tokenizer), index_form(body, tokenizer))
            for id_, title, body in rows
        ],
    )
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [("schema_version", SCHEMA_VERSION), ("tokenizer", tokenizer)],
    )
    conn.commit()
