"""The knowledge base's SQLite file: schema, connections, the remembered tokenizer.

Tables:
    meta            key/value: `schema_version`, `tokenizer` (jieba | trigram),
                    `analysis` (`tokenize.ANALYSIS_VERSION` of the full-text index)
    documents       one row per file, keyed by absolute path: root, path relative to
                    it, file:// URL, title, published_at, sha256 of its bytes, the
                    source it was indexed through ('' for none), its own tags (front
                    matter) and all its tags (with its source's folder rules), space-
                    separated, modified_at (front matter, else the file's mtime) and
                    parsed_by (`rows.READER_VERSION` of the reading that cut it)
    sections        one row per section (or chunk of a long section) of a document:
                    its position, heading, anchor, headings (its own and those folded
                    into it) as plain text; prose and code compressed (`pack`)
    source_runs     when each named source was last indexed (for `due_sources`)

The text is stored here once; the full-text index beside the file
(`sleuth.kb.engine`) holds only terms and ids. Prose and code are deflated (raw
deflate, written by ISA-L, read by zlib): about half the bytes of documentation
text, so the whole index stays within 1.5 times the text, for a few microseconds per
shown section to inflate. `prepare` keeps the two in step: it rebuilds the full-text
index from the stored text when it is missing, was built with another tokenizer or
another version of the analysis, or does not hold one entry per stored section (an
indexer stopped between the two commits).

A database of another schema version (an older sleuth) is dropped and rebuilt empty
by `prepare`; the indexer then adds every file again. Versions 5 (before sources and
tags) and 6 (before parsed_by) are upgraded in place instead: their documents get no
source, no tags and their date as modified_at (5), and no parsed_by, so the next run
reads each file again as the indexer does any file an older reading cut (6). Until
then version 6 is searched as it is, and for an older one `stored_tokenizer`
reports no index, so a search finds nothing rather than failing.

Callers open one connection per call with `connect()` and close it.
"""

from __future__ import annotations

import sqlite3
import zlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from isal import isal_zlib

from sleuth.kb import engine
from sleuth.kb.sections import unnumbered
from sleuth.kb.tokenize import ANALYSIS_VERSION, TOKENIZERS, Tokenizer, index_form

SCHEMA_VERSION = "7"
# Version 6 lacks only `parsed_by`, which a search does not read: it is searched as it
# is until the next `sleuth index` upgrades it.
_SEARCHABLE = (SCHEMA_VERSION, "6")

_SOURCE_RUNS = "CREATE TABLE source_runs (name TEXT PRIMARY KEY, indexed_at TEXT NOT NULL)"
_TABLES = ("sections_fts", "sections", "documents_fts", "documents", "source_runs", "meta")
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
        sha256 TEXT NOT NULL,
        source TEXT NOT NULL DEFAULT '',
        own_tags TEXT NOT NULL DEFAULT '',
        tags TEXT NOT NULL DEFAULT '',
        modified_at TEXT NOT NULL DEFAULT '',
        parsed_by TEXT NOT NULL DEFAULT ''
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
    _SOURCE_RUNS,
)
# Version 5 to 6: sources, tags and modified_at.
_UPGRADE_5 = (
    "ALTER TABLE documents ADD COLUMN source TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE documents ADD COLUMN own_tags TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE documents ADD COLUMN tags TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE documents ADD COLUMN modified_at TEXT NOT NULL DEFAULT ''",
    "UPDATE documents SET modified_at = published_at",
    _SOURCE_RUNS,
)
# Version 6 to 7: which reading cut each document into sections.
_UPGRADE_6 = ("ALTER TABLE documents ADD COLUMN parsed_by TEXT NOT NULL DEFAULT ''",)


def connect(db_path: Path) -> sqlite3.Connection:
    """A connection in WAL mode (readers do not block the indexer)."""
    conn = sqlite3.connect(db_path)
    # Sections of Chinese text run to several kilobytes: on 4 KiB pages most would
    # spill into half-empty overflow pages (a new database only; 16 % smaller).
    conn.execute("PRAGMA page_size=16384")
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


def stored_tokenizer(conn: sqlite3.Connection) -> Tokenizer | None:
    """The tokenizer the index was built with; None when there is no index of a
    schema version a search reads (a new file, or one an older sleuth wrote)."""
    if _meta(conn, "schema_version") not in _SEARCHABLE:
        return None
    stored = _meta(conn, "tokenizer")
    return next((tokenizer for tokenizer in TOKENIZERS if tokenizer == stored), None)


def prepare(conn: sqlite3.Connection, db_path: Path, tokenizer: Tokenizer) -> Any:
    """Create the schema (dropping one of another version) and return the full-text
    index, rebuilt from the stored text if it is not in step with it."""
    conn.execute("BEGIN IMMEDIATE")
    upgrades = {"5": (*_UPGRADE_5, *_UPGRADE_6), "6": _UPGRADE_6}
    if (upgrade := upgrades.get(_meta(conn, "schema_version") or "")) is not None:
        for statement in upgrade:
            conn.execute(statement)
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (SCHEMA_VERSION,))
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
    if (
        stored_tokenizer(conn) == tokenizer
        and _meta(conn, "analysis") == ANALYSIS_VERSION
        and engine.count(index) == sections
    ):
        conn.commit()
        return index
    if sections or engine.count(index):
        # A new database has nothing to rebuild: no writer then, and no commit of an
        # empty index (two files written and synced before the first file is parsed).
        writer = engine.Writer(index)
        writer.clear()
        add_stored(conn, writer, tokenizer)
        writer.close()
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('tokenizer', ?)", (tokenizer,))
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('analysis', ?)", (ANALYSIS_VERSION,)
    )
    conn.commit()
    return index


def add_stored(
    conn: sqlite3.Connection, writer: engine.Writer, tokenizer: Tokenizer, doc_id: int | None = None
) -> None:
    """Add the stored sections (of one document, or all) to the full-text index, with
    their document's source, tags and date as they are stored now."""
    where = "" if doc_id is None else " WHERE doc_id = ?"
    rows = conn.execute(
        "SELECT sections.id, doc_id, documents.title, sections.title, body, code, source, tags,"
        " modified_at FROM sections JOIN documents ON documents.id = sections.doc_id" + where,
        () if doc_id is None else (doc_id,),
    )
    for section_id, doc, page, title, body, code, source, tags, modified_at in rows:
        texts = (unnumbered(page), unnumbered(title), unpack(body), unpack(code))
        writer.add(
            section_id,
            doc,
            *(index_form(text, tokenizer) for text in texts),
            scope=engine.Tagged(source, tuple(tags.split()), timestamp(modified_at)),
        )


def timestamp(iso: str) -> int:
    """Seconds since the epoch of an ISO 8601 time (0 for none, or one unreadable)."""
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return 0
    return int((moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp())


def source_runs(conn: sqlite3.Connection) -> dict[str, datetime]:
    """When each named source was last indexed."""
    if stored_tokenizer(conn) is None:
        return {}
    rows = conn.execute("SELECT name, indexed_at FROM source_runs")
    return {name: datetime.fromisoformat(indexed_at) for name, indexed_at in rows}


def record_source_run(conn: sqlite3.Connection, name: str, at: datetime) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO source_runs (name, indexed_at) VALUES (?, ?)",
        (name, at.isoformat(timespec="seconds")),
    )


def pack(text: str) -> bytes:
    """Text as stored: UTF-8, deflated without a header (empty text is no bytes)."""
    # ISA-L's deflate at its default level (2): on the corpus's 29,646 texts 0.21 s
    # against zlib's 0.44 at any level (median of nine), for 2.6 % more bytes (0.549
    # of the text's against 0.535 at zlib's level 6). The same format: zlib reads it.
    return isal_zlib.compress(text.encode("utf-8"), wbits=-15) if text else b""


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
