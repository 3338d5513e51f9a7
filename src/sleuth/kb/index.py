"""Indexing a folder into the knowledge base, incrementally and by section.

Every supported file under the root (hidden files and folders skipped) is hashed;
a file whose sha256 matches the stored one is left alone, a changed one re-indexed
(all its sections replaced), and a file indexed earlier under this root but gone
from disk is removed with its sections. Several roots can share one database:
documents are keyed by absolute path, and removal only looks under the root being
indexed.

Each section of a file (`sleuth.kb.sections`; a long one in chunks of about
`CHUNK_CHARS`) is a row of the full-text index, titled with the document title and
the section's headings, so it is ranked on its own.

Asking for another tokenizer than the database was built with rebuilds the whole
full-text index (every root) from the stored text, then indexes as usual.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sleuth.kb import engine
from sleuth.kb.extract import Document, kind_of, parse_document
from sleuth.kb.store import connect, prepare
from sleuth.kb.tokenize import TOKENIZERS, Tokenizer, index_form

Progress = Callable[[int, int, Path], None]
Outcome = Literal["added", "updated", "unchanged", "skipped"]

# Commit every so many files, so an interrupted run on a large folder keeps its work.
_COMMIT_EVERY = 200


@dataclass(frozen=True)
class IndexReport:
    """What one `index_folder` run did. `files` is how many supported files it saw;
    `skipped` counts those it could not read (their earlier entry, if any, is kept)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    files: int = 0
    skipped: int = 0


@dataclass(frozen=True)
class _Known:
    id: int
    sha256: str
    root: str


def index_folder(
    db_path: Path,
    root: Path,
    *,
    tokenizer: Tokenizer = "jieba",
    progress: Progress | None = None,
) -> IndexReport:
    """Index the Markdown, text and HTML files under `root` into the database at `db_path`.

    `progress(done, total, path)` is called after each file.
    """
    if tokenizer not in TOKENIZERS:
        raise ValueError(f"tokenizer must be one of {', '.join(TOKENIZERS)}, not {tokenizer!r}")
    root = root.resolve()
    if not root.is_dir():
        raise NotADirectoryError(f"not a folder: {root}")
    files = sorted(_walk(root))
    db_path.parent.mkdir(parents=True, exist_ok=True)
    counts = dict.fromkeys(("added", "updated", "unchanged", "skipped"), 0)
    with closing(connect(db_path)) as conn:
        writer = engine.Writer(prepare(conn, db_path, tokenizer))
        known = _known_under(conn, root)
        for done, path in enumerate(files, start=1):
            outcome = _index_file(conn, writer, root, path, known.pop(str(path), None), tokenizer)
            counts[outcome] += 1
            if done % _COMMIT_EVERY == 0:
                _commit(conn, writer)
            if progress is not None:
                progress(done, len(files), path)
        # What is left in `known` was indexed under this root and is no longer on disk.
        gone = [(entry.id,) for entry in known.values()]
        for (doc_id,) in gone:
            writer.delete_document(doc_id)
        conn.executemany("DELETE FROM sections WHERE doc_id = ?", gone)
        conn.executemany("DELETE FROM documents WHERE id = ?", gone)
        _commit(conn, writer)
        writer.close()
    return IndexReport(removed=len(gone), files=len(files), **counts)


def _commit(conn: sqlite3.Connection, writer: engine.Writer) -> None:
    # The full-text index first: should the second commit not happen, the counts
    # differ and the next run rebuilds the index from the stored text.
    writer.commit()
    conn.commit()


def _walk(root: Path) -> Iterator[Path]:
    for folder, dirs, names in os.walk(root):
        dirs[:] = [name for name in dirs if not name.startswith(".")]
        for name in names:
            path = Path(folder, name)
            if not name.startswith(".") and kind_of(path) is not None and path.is_file():
                yield path


def _known_under(conn: sqlite3.Connection, root: Path) -> dict[str, _Known]:
    """Indexed documents whose path lies under `root` (a range scan on the path key)."""
    prefix = str(root).rstrip(os.sep) + os.sep
    upper = prefix[:-1] + chr(ord(os.sep) + 1)
    rows = conn.execute(
        "SELECT path, id, sha256, root FROM documents WHERE path >= ? AND path < ?",
        (prefix, upper),
    )
    return {path: _Known(id_, sha256, stored_root) for path, id_, sha256, stored_root in rows}


def _index_file(
    conn: sqlite3.Connection,
    writer: engine.Writer,
    root: Path,
    path: Path,
    known: _Known | None,
    tokenizer: Tokenizer,
) -> Outcome:
    try:
        data = path.read_bytes()
        mtime = path.stat().st_mtime
    except OSError:
        return "skipped"
    digest = hashlib.sha256(data).hexdigest()
    rel_path = path.relative_to(root).as_posix()
    if known is not None and known.sha256 == digest:
        if known.root != str(root):  # now indexed from another root: paths are relative to it
            conn.execute(
                "UPDATE documents SET root = ?, rel_path = ? WHERE id = ?",
                (str(root), rel_path, known.id),
            )
        return "unchanged"
    doc = parse_document(path, data, mtime)
    values = (
        str(path),
        str(root),
        rel_path,
        path.resolve().as_uri(),
        doc.title,
        doc.published_at,
        digest,
    )
    if known is None:
        cursor = conn.execute(
            "INSERT INTO documents (path, root, rel_path, url, title, published_at, sha256)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            values,
        )
        doc_id = cursor.lastrowid
        assert doc_id is not None  # noqa: S101 - an INSERT sets it
    else:
        doc_id = known.id
        conn.execute(
            "UPDATE documents SET path = ?, root = ?, rel_path = ?, url = ?, title = ?,"
            " published_at = ?, sha256 = ? WHERE id = ?",
            (*values, doc_id),
        )
        writer.delete_document(doc_id)
        conn.execute("DELETE FROM sections WHERE doc_id = ?", (doc_id,))
    _insert_sections(conn, writer, doc_id, doc, tokenizer)
    return "added" if known is None else "updated"


def _insert_sections(
    conn: sqlite3.Connection,
    writer: engine.Writer,
    doc_id: int,
    doc: Document,
    tokenizer: Tokenizer,
) -> None:
    position = 0
    for section in doc.sections:
        # The indexed title: document title, folded empty headings, the heading; no repeats.
        headings = [doc.title, *section.above, *filter(None, [section.heading])]
        title = " ".join(dict.fromkeys(headings))
        for chunk in section.chunks():
            cursor = conn.execute(
                "INSERT INTO sections (doc_id, position, heading, anchor, title, body, code)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (doc_id, position, section.heading, section.anchor, title, chunk.text, chunk.code),
            )
            assert cursor.lastrowid is not None  # noqa: S101 - an INSERT sets it
            writer.add(
                cursor.lastrowid,
                doc_id,
                *(index_form(text, tokenizer) for text in (title, chunk.text, chunk.code)),
            )
            position += 1
