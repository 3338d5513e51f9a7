"""The call log's record of one search: what happened (`CallRecord`), the event's
fields (`call_event`), and where the lines go (`LineSink`).

Owns the meaning of the fields; `sleuth.observe` decides when a record is made and
sends the event through structlog (with `sleuth.redaction`) to the sink. The fields
and an example event are in docs/observability.md.

>>> from sleuth.contract import SearchResponse
>>> answer = SearchResponse(task_id="t", query="q", rewritten_query="q", results=[])
>>> event = call_event(CallRecord("t", "acme", "cli", "q", 0.0, 0.25, 0.25, answer))
>>> event["status"], event["error_code"], event["duration_ms"], "query" in event
('failed', 'no_results', 250.0, False)
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import sys
import threading
import unicodedata
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, Literal

from sleuth.contract import SearchResponse
from sleuth.errors import ConfigError, SearchError
from sleuth.redaction import drop_secret_words

__all__ = [
    "CallRecord",
    "LineSink",
    "SearchStatus",
    "ToolName",
    "call_event",
    "iso_time",
    "query_hash",
    "search_status",
]

ToolName = Literal[
    "web_search", "http_search", "http_tool", "mcp_tool", "workflow", "task", "cli", "library"
]
SearchStatus = Literal["ok", "degraded", "failed", "cached"]


@functools.lru_cache(maxsize=1024)  # asked by the call log and the audit log of one search
def query_hash(query: str) -> str:
    """SHA-256 (hex) of the query, normalised as the cache key normalises it."""
    normal = " ".join(unicodedata.normalize("NFKC", query).split()).casefold()
    return hashlib.sha256(normal.encode()).hexdigest()


def search_status(response: SearchResponse) -> SearchStatus:
    """cached: a fresh cached answer; failed: no results (the ladder's fallback
    answer, nothing found); degraded: results, but a provider failed or a step was
    taken down the ladder (a stale cached answer included); else ok."""
    if response.cache == "hit":
        return "cached"
    if not response.results:
        return "failed"
    if response.degraded or response.errors or response.cache == "stale":
        return "degraded"
    return "ok"


def _error_code(exc: BaseException) -> str:
    if isinstance(exc, SearchError):
        return exc.code
    if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
        return "cancelled"
    return "internal_error"


@dataclass
class CallRecord:
    """One finished search, as the observer takes it (`Watch` builds it)."""

    task_id: str | None
    tenant: str
    tool_name: ToolName
    #: The query as asked (None when the request was too malformed to have one).
    query: str | None
    #: Wall-clock seconds since the epoch.
    started_at: float
    ended_at: float
    duration_s: float
    response: SearchResponse | None = None
    error: BaseException | None = None
    #: `source_trust_score` of the returned results before projection (which may drop it).
    trust: Sequence[float] | None = None
    #: The declared tool and the workflow the search ran for (`observe.call_context`).
    tool: str | None = None
    workflow: str | None = None

    @property
    def status(self) -> SearchStatus:
        return "failed" if self.response is None else search_status(self.response)

    @property
    def error_code(self) -> str | None:
        if self.error is not None or self.response is None:
            return _error_code(self.error or SearchError("no answer"))
        if self.response.errors:
            return self.response.errors[0].code
        return "no_results" if not self.response.results else None

    def avg_trust(self) -> float | None:
        scores = list(self.trust) if self.trust is not None else []
        if self.trust is None and self.response is not None:
            # A cached answer has no pre-projection items: its projected ones may say.
            scores = [
                item.source_trust_score
                for item in self.response.results
                if item.source_trust_score is not None
            ]
        return round(sum(scores) / len(scores), 4) if scores else None

    def called(self) -> dict[str, str]:
        """Each provider this search called and its outcome (none for a cache hit)."""
        if self.response is None or self.status == "cached":
            return {}
        return {name: report.status for name, report in self.response.providers.items()}


def iso_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds")


def call_event(
    record: CallRecord, *, raw_query: bool = False, secrets: Collection[str] = ()
) -> dict[str, Any]:
    """The call log's fields for one search (before redaction). `secrets` are the
    values whose pieces must not appear among the logged keywords."""
    response = record.response
    cached = record.status == "cached"
    event: dict[str, Any] = {
        "task_id": record.task_id,
        "tenant": record.tenant,
        "tool_name": record.tool_name,
        "tool": record.tool,
        "workflow": record.workflow,
        "query_hash": query_hash(record.query) if record.query is not None else None,
    }
    if raw_query:
        event["query"] = record.query
        keywords = response.rewritten_query.split() if response is not None else []
        # The query's secrets are redacted later; the pieces a rewrite cut them into
        # would not look like secrets any more.
        safe = drop_secret_words(keywords, record.query or "", secrets)
        event["keywords"] = " ".join(safe) if response is not None else None
    providers: list[dict[str, Any]] = []
    if response is not None and not cached:
        codes = {e.provider: e.code for e in reversed(response.errors) if e.provider}
        providers = [
            {
                "provider": name,
                "outcome": report.status,
                "latency_ms": round(report.latency_ms, 1),
                "results": report.results,
                "retries": report.retries,
                "error_code": codes.get(name),
            }
            for name, report in response.providers.items()
        ]
    if record.error is not None:
        errors = [{"code": record.error_code, "message": str(record.error)}]
    elif response is not None:
        errors = [
            {"code": e.code, "provider": e.provider, "message": e.message} for e in response.errors
        ]
    else:
        errors = []
    event.update(
        start_time=iso_time(record.started_at),
        end_time=iso_time(record.ended_at),
        duration_ms=round(record.duration_s * 1000, 1),
        status=record.status,
        error_code=record.error_code,
        retry_count=sum(p["retries"] for p in providers),
        final_result_count=len(response.results) if response is not None else 0,
        avg_source_trust_score=record.avg_trust(),
        confidence=response.confidence if response is not None else None,
        cache=response.cache if response is not None else None,
        providers=providers,
        degradations=[
            {"kind": d.kind, "provider": d.provider, "reason": d.reason}
            for d in (response.degradations if response is not None else [])
        ],
        errors=errors,
    )
    return event


class LineSink:
    """structlog's output for the call log: one line per event, to a stream or a file.

    The standard streams are looked up at each write, so a redirected `sys.stdout`
    (a test's capture, a daemon's log file) is followed. A file is opened for each
    line and closed again: a search costs far more than that, no handle outlives a
    `Sleuth` that nobody closed, and a rotated file is simply created again.
    """

    def __init__(self, target: str) -> None:
        self.target = target
        self._lock = threading.Lock()

    def check(self) -> None:
        """Fail now, not at the first search, when the file cannot be written."""
        if self.target in ("stdout", "stderr"):
            return
        try:
            with self._lock, self._open():
                pass
        except OSError as exc:
            raise ConfigError(
                f"observe.log_to: cannot write the call log to {self.target}: {exc.strerror}"
            ) from exc

    def _open(self) -> IO[str]:
        path = Path(self.target).expanduser()
        path.parent.mkdir(parents=True, exist_ok=True)
        return path.open("a", encoding="utf-8")

    def msg(self, message: str) -> None:
        with self._lock:
            if self.target in ("stdout", "stderr"):
                stream: IO[str] = sys.stdout if self.target == "stdout" else sys.stderr
                stream.write(message + "\n")
                stream.flush()
                return
            with self._open() as file:
                file.write(message + "\n")

    info = msg
    warning = msg
