"""Where a workflow's records go: a JSON Lines file, a SQLite table, a folder of the
knowledge base (one Markdown file per record), or a webhook. The workflows' only I/O
besides searching.

Every write is idempotent by the record's key (`SinkSpec.key`): a record whose key
was written before is not written again, and `write` says so (False). That is what
lets a resumed run redo the item it was killed in without writing it twice:

    jsonl      the keys already in the file are read once per run, then kept
    sqlite     the table has a UNIQUE index on the key columns; INSERT OR IGNORE; one
               connection per file for the run, in WAL mode with synchronous=NORMAL:
               a committed record survives the process being killed (not a power
               cut), without an fsync per record
    kb_folder  the file is named by the key's hash; an existing file is kept; the
               folders written to are indexed into the knowledge base when the run
               ends, so what a run filed is searchable after it
    webhook    POSTed through the egress rules (`sleuth.transport.HttpTransport`) with
               an Idempotency-Key header, the key's hash, for the receiver to honour

Relative paths are taken from the workflow file's folder.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sqlite3
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sleuth.config import Settings
from sleuth.egress import EgressPolicy
from sleuth.errors import ConfigError, SearchError
from sleuth.kb import index_folder
from sleuth.providers.base import HttpRequest
from sleuth.transport import HttpTransport
from sleuth.workflows.workflow_models import SinkSpec

__all__ = ["Sinks", "record_key"]

_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
_WEBHOOK_TIMEOUT_S = 10.0


def record_key(spec: SinkSpec, record: Mapping[str, Any]) -> str:
    """The record's identity: its key fields as canonical JSON."""
    return json.dumps([record.get(name) for name in spec.key], ensure_ascii=False, default=str)


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class Sinks:
    """The sinks of one run (their file handles and key sets live as long as it)."""

    def __init__(self, settings: Settings, base_dir: Path) -> None:
        self.settings = settings
        self.base_dir = base_dir
        self._jsonl_keys: dict[Path, set[str]] = {}
        self._transport: HttpTransport | None = None
        self._kb_folders: set[Path] = set()
        self._tables = _Tables()

    def _path(self, text: str) -> Path:
        path = Path(text).expanduser()
        return path if path.is_absolute() else self.base_dir / path

    async def write(self, spec: SinkSpec, record: Mapping[str, Any]) -> bool:
        """Write `record`; False when its key was written before."""
        key = record_key(spec, record)
        if spec.jsonl is not None:
            return await asyncio.to_thread(self._jsonl, self._path(spec.jsonl), spec, key, record)
        if spec.sqlite is not None and spec.table is not None:
            path = self._path(spec.sqlite)
            return await asyncio.to_thread(self._tables.insert, path, spec.table, spec, record)
        if spec.kb_folder is not None:
            folder = self._path(spec.kb_folder)
            written = await asyncio.to_thread(_markdown, folder, key, record)
            if written:
                self._kb_folders.add(folder)
            return written
        if spec.webhook is not None:
            return await self._webhook(spec.webhook, key, record)
        raise ConfigError("a sink names no destination")  # SinkSpec refuses this

    def _jsonl(self, path: Path, spec: SinkSpec, key: str, record: Mapping[str, Any]) -> bool:
        keys = self._jsonl_keys.get(path)
        if keys is None:
            keys = set()
            if path.exists():
                for line in path.read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        keys.add(record_key(spec, json.loads(line)))
            self._jsonl_keys[path] = keys
        if key in keys:
            return False
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as file:
            file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
            file.flush()
        keys.add(key)
        return True

    async def _webhook(self, url: str, key: str, record: Mapping[str, Any]) -> bool:
        if self._transport is None:
            self._transport = HttpTransport(
                kb_path=self.settings.kb.path,
                egress_proxy=self.settings.egress_proxy,
                max_body_bytes=self.settings.max_body_bytes,
                egress=EgressPolicy.from_settings(self.settings.egress),
            )
        request = HttpRequest(
            "POST",
            url,
            headers={"Idempotency-Key": _digest(key), "Content-Type": "application/json"},
            json=dict(record),
        )
        response = await self._transport.send("webhook", "", request, _WEBHOOK_TIMEOUT_S)
        if not 200 <= response.status < 300:
            raise SearchError(
                f"webhook {url} answered {response.status}", http_status=response.status
            )
        return True

    async def aclose(self) -> None:
        """Index the knowledge-base folders written to; close the webhook client."""
        try:
            for folder in sorted(self._kb_folders):
                await asyncio.to_thread(
                    index_folder,
                    self.settings.kb.path,
                    folder,
                    tokenizer=self.settings.kb.tokenizer,
                    exclude=self.settings.kb.exclude,
                )
        finally:
            self._kb_folders.clear()
            await asyncio.to_thread(self._tables.close)
            if self._transport is not None:
                await self._transport.aclose()
                self._transport = None


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


class _Tables:
    """The SQLite sinks' connections, one per file, used from worker threads in turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._conns: dict[Path, sqlite3.Connection] = {}
        self._shaped: set[tuple[Path, str, tuple[str, ...], tuple[str, ...]]] = set()

    def _conn(self, path: Path) -> sqlite3.Connection:
        conn = self._conns.get(path)
        if conn is None:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            self._conns[path] = conn
        return conn

    def insert(self, path: Path, table: str, spec: SinkSpec, record: Mapping[str, Any]) -> bool:
        columns = list(record)
        bad = [name for name in columns if not _COLUMN.fullmatch(name)]
        if bad:
            raise ConfigError(
                f"sink record fields must be identifiers for SQLite: {', '.join(bad)}"
            )
        quoted = ", ".join(f'"{name}"' for name in columns)
        with self._lock:
            conn = self._conn(path)
            shape = (path, table, tuple(columns), tuple(spec.key))
            if shape not in self._shaped:
                conn.execute(f'CREATE TABLE IF NOT EXISTS "{table}" ({quoted})')
                have = {str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")')}
                for name in columns:
                    if name not in have:  # a field added to the workflow later
                        conn.execute(f'ALTER TABLE "{table}" ADD COLUMN "{name}"')
                keys = ", ".join(f'"{name}"' for name in spec.key)
                index = f"{table}_key_{_digest(keys)[:8]}"
                conn.execute(f'CREATE UNIQUE INDEX IF NOT EXISTS "{index}" ON "{table}" ({keys})')
                self._shaped.add(shape)
            marks = ", ".join("?" for _ in columns)
            cursor = conn.execute(
                f'INSERT OR IGNORE INTO "{table}" ({quoted}) VALUES ({marks})',
                [_cell(record[name]) for name in columns],
            )
            conn.commit()
            return cursor.rowcount == 1

    def close(self) -> None:
        with self._lock:
            for conn in self._conns.values():
                conn.close()
            self._conns.clear()
            self._shaped.clear()


def _markdown(folder: Path, key: str, record: Mapping[str, Any]) -> bool:
    """One Markdown file: the record's fields as front matter, `summary` (or `text`)
    as the body, under a title from `title`; named by the key's hash."""
    path = folder / f"{_digest(key)[:16]}.md"
    if path.exists():
        return False
    folder.mkdir(parents=True, exist_ok=True)
    meta = {name: value for name, value in record.items() if name not in ("summary", "text")}
    lines = [
        "---",
        *(f"{name}: {json.dumps(_cell(v), ensure_ascii=False)}" for name, v in meta.items()),
        "---",
        "",
    ]
    title = record.get("title")
    if title:
        lines += [f"# {title}", ""]
    lines.append(str(record.get("summary") or record.get("text") or ""))
    temporary = path.with_suffix(".tmp")
    temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temporary.replace(path)  # a reader never sees half a file
    return True
