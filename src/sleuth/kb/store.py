"""The knowledge base's SQLite file: schema, connections, the remembered tokenizer.

Tables:
    meta            key/value: `schema_version`, `tokenizer` (jieba | trigram)
    documents       one row per file, keyed by absolute path: root, path relative to
                    it, file:// URL, title, published_at, sha256 of its bytes
    sections        one row per section (or chunk of a long section) of a document:
                    its position, heading, anchor, headings (its own and those folded
                    into it) as plain text; prose and code compressed (`pack`)

The text is stored here once; the full-text index beside the file
(`sleuth.kb.engine`) holds only terms and ids. Prose and code are deflated (zlib, raw,
level 6): about half the bytes of documentation text, so the whole index stays within
1.5 times the text, for a few microseconds per shown section to inflate. `prepare`
keeps the two in step: it rebuilds the full-text index from the stored text when it
is missing, was built with another tokenizer, or does not hold one entry per stored
section (an indexer stopped between the two commits).

A database of another schema version (an older sleuth) is dropped and rebuilt empty
by `prepare`; the indexer then adds every file again. Until then `stored_tokenizer`
reports no index, so a search finds nothing rather than failing.

Callers open one connection per call with `connect()` and close it.
"""

from __future__ import annotations

import sqlite3
import zlib
from pathlib import Path
from typing import Any

from sleuth.kb import engine
from sleuth.kb.sections import unnumbered
from sleuth.kb.tokenize import TOKENIZERS, Tokenizer, index_form

SCHEMA_VERSION = "5"

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
        body BLOB NOT NULL,
        code BLOB NOT NULL
    )""",
    "CREATE INDEX sections_by_document ON sections (doc_id, position)",
)


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in WAL mode (readers do not block the indexer)."""
    conn = sqlite3.connect(db_path)
    # Sections of Chinese text run to several kilobytes: on 4 KiB pages most would
    # spill into half-empty overflow pages (a new database only; 16 % smaller).
    conn.execute("PRAGMA page_size=16384")
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def stored_tokenizer(conn: sqlite3.Connection) -> Tokenizer | None:
    """The tokenizer the index was built with; None when there is no index of this
    schema version (a new file, or one an older sleuth wrote)."""
    if _meta(conn, "schema_version") != SCHEMA_VERSION:
        return None
    stored = _meta(conn, "tokenizer")
    return next((tokenizer for tokenizer in TOKENIZERS if tokenizer == stored), None)


def prepare(conn: sqlite3.Connection, db_path: Path, tokenizer: Tokenizer) -> Any:
    """Create the schema (dropping one of another version) and return the full-text
    index, rebuilt from the stored text if it is not in step with it."""
    conn.execute("BEGIN IMMEDIATE")
    if _meta(conn, "schema_version") != SCHEMA_VERSION:
        for table in _TABLES:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
        for statement in _SCHEMA:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (SCHEMA_VERSION,)
        )
        engine.remove_index(db_path)
    index = engine.open_index(db_path, create=True)
    (sections,) = conn.execute("SELECT count(*) FROM sections").fetchone()
    if stored_tokenizer(conn) == tokenizer and engine.count(index) == sections:
        conn.commit()
        return index
    writer = engine.Writer(index)
    writer.clear()
    rows = conn.execute(
        "SELECT sections.id, doc_id, documents.title, sections.title, body, code"
        " FROM sections JOIN documents ON documents.id = sections.doc_id"
    )
    for section_id, doc_id, page, title, body, code in rows:
        texts = (unnumbered(page), unnumbered(title), unpack(body), unpack(code))
        writer.add(section_id, doc_id, *(index_form(text, tokenizer) for text in texts))
    writer.close()
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer,))
    conn.commit()
    return index


def pack(text: str) -> bytes:
    """Text as stored: UTF-8, deflated without a header (empty text is no bytes)."""
    return zlib.compress(text.encode("utf-8"), 6, wbits=-15) if text else b""


def unpack(stored: bytes) -> str:
    return zlib.decompress(stored, wbits=-15).decode("utf-8") if stored else ""


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    has_meta = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if not has_meta:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return str(row[0]) if row else None
