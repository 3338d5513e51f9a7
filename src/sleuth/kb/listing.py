"""Listing the knowledge base's documents by source, tag and modification time, with
their text: what a workflow's `documents` step reads (a listing, not a ranked search:
every document that meets the conditions, oldest change first, so a run that
processes "what changed since the last one" misses none).

`source`, `tags` (front matter and folder rules) and `modified_at` are what the index
keeps (`kb.index`); a document indexed without a modification time gets its file's,
read now. Names and tags are compared lower-cased, as the index compares them. Reads
the SQLite file only; never writes.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sleuth.kb.sections import prose
from sleuth.kb.store import unpack

__all__ = ["list_documents"]


def _columns(conn: sqlite3.Connection) -> set[str]:
    return {str(row[1]) for row in conn.execute("PRAGMA table_info(documents)")}


def _tags(raw: Any) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str):
        text = raw.strip()
        if text.startswith("["):
            loaded = json.loads(text)
            return [str(tag) for tag in loaded] if isinstance(loaded, list) else []
        # The index keeps them space-separated (`kb.index`); commas are read too.
        return [tag for tag in re.split(r"[\s,]+", text) if tag]
    return []


def _modified(stored: Any, path: str) -> datetime | None:
    if isinstance(stored, str) and stored:
        moment = datetime.fromisoformat(stored)
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if isinstance(stored, int | float):
        return datetime.fromtimestamp(stored, UTC)
    try:
        return datetime.fromtimestamp(os.stat(path).st_mtime, UTC)
    except OSError:  # indexed, since removed: it has no modification time any more
        return None


def list_documents(
    db_path: Path,
    *,
    sources: Sequence[str] = (),
    tags: Sequence[str] = (),
    modified_after: datetime | None = None,
    modified_before: datetime | None = None,
    text: bool = True,
    limit: int = 1000,
) -> list[dict[str, Any]]:
    """The documents that meet every condition given (`tags`: any of them), oldest
    modification first: `path`, `url`, `title`, `source`, `tags`, `modified_at`
    (ISO 8601), `published_at`, `sha256`, and `text` (the sections' text) when asked."""
    if not db_path.exists():
        return []
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        has = _columns(conn)
        if not has:
            return []
        extra = [name for name in ("source", "tags", "modified_at") if name in has]
        select = ", ".join(["id", "path", "url", "title", "published_at", "sha256", *extra])
        rows = conn.execute(f"SELECT {select} FROM documents ORDER BY id").fetchall()
        found = []
        for row in rows:
            record = dict(
                zip(
                    ["id", "path", "url", "title", "published_at", "sha256", *extra],
                    row,
                    strict=True,
                )
            )
            moment = _modified(record.get("modified_at"), record["path"])
            doc_tags = _tags(record.get("tags"))
            source = record.get("source") or None
            if sources and (source or "").lower() not in {name.lower() for name in sources}:
                continue
            if tags and not {t.lower() for t in tags} & {t.lower() for t in doc_tags}:
                continue
            if modified_after is not None and (moment is None or moment < modified_after):
                continue
            if modified_before is not None and (moment is None or moment >= modified_before):
                continue
            found.append(
                {
                    "id": record["id"],
                    "path": record["path"],
                    "url": record["url"],
                    "title": record["title"],
                    "source": source,
                    "tags": doc_tags,
                    "modified_at": moment.isoformat() if moment else None,
                    "published_at": record["published_at"] or None,
                    "sha256": record["sha256"],
                }
            )
        found.sort(key=lambda doc: (doc["modified_at"] or "", doc["path"]))
        found = found[:limit]
        if text:
            for doc in found:
                bodies = conn.execute(
                    "SELECT body FROM sections WHERE doc_id = ? ORDER BY position", (doc["id"],)
                ).fetchall()
                doc["text"] = "\n\n".join(prose(unpack(body)) for (body,) in bodies)
        for doc in found:
            del doc["id"]
        return found
    finally:
        conn.close()
