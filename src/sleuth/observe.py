"""What every search leaves behind: one call-log event, metrics, the dashboard's figures.

    adapter: call_context(tenant=..., tool_name=...)          (HTTP, MCP, task, CLI)
       └─► Sleuth.search: with observer.watch(...) as watch     (the gateway's one hook)
             └─► Observer.record(CallRecord)
                   ├─ the call log: one JSON line (structlog), secrets redacted,
                   │  to stdout, stderr, a file, or nowhere (`observe.log_to`)
                   ├─ Prometheus metrics (`sleuth.metrics.Metrics`, one registry each)
                   ├─ the dashboard's window, recent errors and hot keywords
                   └─ an OpenTelemetry span (`observe.traces`; needs opentelemetry)

The tenant and the tool that asked reach the gateway through context variables, so
the core's signature does not grow adapter arguments; tasks created inside a
`call_context` inherit it (asyncio copies the context into each new task). The
declared tool and the workflow a search runs for (`call_context(tool=...,
workflow=...)`, set by `sleuth.workflows`) reach the record's `tool` and `workflow`.

The call log never holds the raw query unless `observe.log_raw_query` says so: it
holds `query_hash`, the SHA-256 of the normalised query (NFKC, whitespace collapsed,
case-folded). Every value passes `RedactSecrets`: API keys from the environment
(each provider's `api_key_env` and any variable named like ``*_API_KEY``,
``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``), Authorization values, ``sk_...`` keys and
``key=`` URL parameters become ``[REDACTED]`` (`sleuth.redaction`). The record and its
fields are `sleuth.call_log`; the counters, the dashboard's window and the hot
keywords are `sleuth.metrics`.

Nothing here may fail a search: a broken log file or metric is logged and skipped.

>>> query_hash("  Rust   LANGUAGE ") == query_hash("rust language")
True
"""

from __future__ import annotations

import logging
import operator
import time
from collections.abc import Callable, Collection, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from sleuth.call_log import (
    CallRecord,
    LineSink,
    SearchStatus,
    ToolName,
    call_event,
    iso_time,
    query_hash,
    search_status,
)
from sleuth.contract import ResultItem, SearchResponse
from sleuth.dashboard_figures import Figures, TenantFigures
from sleuth.metrics import (
    BREAKER_STATES,
    DEFAULT_LATENCY_BUCKETS_S,
    HotKeywords,
    Metrics,
    ObservedQuota,
    SearchSample,
    SearchWindow,
)
from sleuth.redaction import RedactSecrets, drop_secret_words, redact_text, secret_values
from sleuth.resilience.quota import Quota, QuotaSettings
from sleuth.store.base import BreakerStore, CounterStore, TaskState, TaskStore

__all__ = [
    "CallContext",
    "CallRecord",
    "ObserveSettings",
    "Observer",
    "SearchStatus",
    "ToolName",
    "Watch",
    "call_context",
    "current_call",
    "current_context",
    "query_hash",
    "search_status",
]

log = logging.getLogger(__name__)

LogTarget = Literal["stdout", "stderr", "off"]

_TASK_STATES: tuple[TaskState, ...] = ("pending", "running", "success", "failed")

#: The tenant of a search nobody named (the library, the CLI, auth off): the same
#: name as `sleuth.tasks.DEFAULT_TENANT`, which cannot be imported here (tasks
#: imports the gateway, which imports this module).
_DEFAULT_TENANT = "default"


class ObserveSettings(BaseModel):
    """The `observe:` section of sleuth.yaml: the call log, metrics and dashboard."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    log_to: str = Field(
        "auto",
        description="Where the call log goes: stdout, stderr, off, or a file path "
        "(appended to). auto: stdout for the HTTP service, stderr for `sleuth mcp` "
        "(its stdout is the protocol), off for the library and the CLI (whose stdout "
        "is the answer).",
    )
    log_raw_query: bool = Field(
        False, description="Also log the query and its keywords, not only query_hash."
    )
    metrics: bool = Field(True, description="Count metrics and serve them at /metrics.")
    dashboard: bool = Field(True, description="Serve the dashboard at /dashboard.")
    traces: bool = Field(
        False,
        description="Record an OpenTelemetry span per search (needs opentelemetry; "
        "exported by whatever tracer provider the process configures).",
    )
    hot_keywords_raw: bool = Field(
        False,
        description="Count whole raw queries as hot keywords instead of the rewritten "
        "keywords (raw queries may hold personal data).",
    )
    hot_keywords_top: int = Field(20, ge=1, le=200, description="Hot keywords shown.")
    hot_keywords_capacity: int = Field(
        5000, ge=10, description="Distinct keywords remembered per process (memory bound)."
    )
    window_s: int = Field(
        3600, ge=60, le=86400, description="How far back the dashboard's figures reach."
    )
    bucket_s: int = Field(10, ge=1, le=3600, description="The p95 chart's time step.")
    recent_errors: int = Field(20, ge=0, le=500, description="Errors listed on the dashboard.")
    latency_buckets_s: list[float] = Field(
        default_factory=lambda: list(DEFAULT_LATENCY_BUCKETS_S),
        min_length=1,
        description="Bucket bounds (seconds) of the latency histograms.",
    )
    secret_env: list[str] = Field(
        default_factory=list,
        description="More environment variables whose values are secrets, redacted "
        "from every log line (provider api_key_env variables and names ending in "
        "_KEY, _TOKEN, _SECRET or _PASSWORD always are).",
    )


# --- the call context ---------------------------------------------------------------

_TENANT: ContextVar[str] = ContextVar("sleuth_tenant", default=_DEFAULT_TENANT)
_TOOL: ContextVar[ToolName] = ContextVar("sleuth_tool_name", default="library")
#: For the usage ledger and the audit log: the API key's prefix, and the declarative
#: tool and workflow whose call this search is.
_KEY: ContextVar[str | None] = ContextVar("sleuth_key", default=None)
_NAMED_TOOL: ContextVar[str | None] = ContextVar("sleuth_tool", default=None)
_WORKFLOW: ContextVar[str | None] = ContextVar("sleuth_workflow", default=None)


@dataclass(frozen=True)
class CallContext:
    """Who is searching, through which adapter, with which key, for which tool and
    workflow (`call_context`)."""

    tenant: str
    adapter: ToolName
    key: str | None = None
    tool: str | None = None
    workflow: str | None = None


@contextmanager
def call_context(
    *,
    tenant: str | None = None,
    tool_name: ToolName | None = None,
    key: str | None = None,
    tool: str | None = None,
    workflow: str | None = None,
) -> Iterator[None]:
    """Name who is searching and through which adapter (`tool_name`), for every search
    started in the block (tasks created in it included). Unnamed parts keep their
    outer value. `key` is the API key's prefix (never the key); `tool` and `workflow`
    name the declarative tool and the workflow the searches serve, for usage and audit.

    >>> with call_context(tenant="acme", tool_name="cli"):
    ...     current_call()
    ('acme', 'cli')
    >>> current_call()
    ('default', 'library')
    >>> with call_context(tool="internal_search"), call_context(workflow="steward"):
    ...     (current_context().tool, current_context().workflow)
    ('internal_search', 'steward')
    """
    tokens: list[Token[Any]] = []
    if tenant is not None:
        tokens.append(_TENANT.set(tenant))
    if tool_name is not None:
        tokens.append(_TOOL.set(tool_name))
    for var, value in ((_KEY, key), (_NAMED_TOOL, tool), (_WORKFLOW, workflow)):
        if value is not None:
            tokens.append(var.set(value))
    try:
        yield
    finally:
        for token in reversed(tokens):
            token.var.reset(token)


def current_call() -> tuple[str, ToolName]:
    """(tenant, tool_name) of the search being run here."""
    return _TENANT.get(), _TOOL.get()


def current_context() -> CallContext:
    """Everything `call_context` named for the search being run here."""
    return CallContext(_TENANT.get(), _TOOL.get(), _KEY.get(), _NAMED_TOOL.get(), _WORKFLOW.get())


# --- the observer -------------------------------------------------------------------


@dataclass(frozen=True)
class States:
    """What the store says now: each provider's breaker and the tasks by status."""

    breakers: dict[str, tuple[str, str]] = field(default_factory=dict)
    tasks: dict[str, int] = field(default_factory=dict)


class Observer:
    """The call log, metrics and dashboard figures of one `Sleuth` (its `observer`).

    >>> from sleuth.contract import SearchResponse
    >>> observer = Observer(ObserveSettings(log_to="off"))
    >>> answer = SearchResponse(task_id="t", query="q", rewritten_query="q", results=[])
    >>> observer.record(CallRecord("t", "default", "library", "q", 0.0, 0.5, 0.5, answer))
    >>> observer.dashboard_figures(now=1.0)["statuses"]["failed"]
    1
    """

    def __init__(
        self,
        settings: ObserveSettings | None = None,
        *,
        secret_env: Collection[str] = (),
        watched: Sequence[str] = (),
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings or ObserveSettings()
        self._clock = clock
        #: Providers whose breakers the dashboard and /metrics report, besides those seen.
        self.watched = list(dict.fromkeys(watched))
        self._seen: dict[str, None] = {}
        self.redactor = RedactSecrets([*secret_env, *self.settings.secret_env])
        self.metrics = Metrics(self.settings.latency_buckets_s) if self.settings.metrics else None
        self.figures = TenantFigures(self._new_figures)
        self._auto: LogTarget = "off"
        self._lines: LineSink | None = None
        self._logger: Any = None

    def _new_figures(self) -> Figures:
        window = SearchWindow(bucket_s=self.settings.bucket_s, window_s=self.settings.window_s)
        keywords = HotKeywords(self.settings.hot_keywords_capacity)
        return Figures(window, keywords, self.settings.recent_errors)

    # --- life -----------------------------------------------------------------------

    def start(self, *, auto: LogTarget = "off") -> None:
        """Start the call log of a service; `auto` is where `log_to: auto` sends it in
        this process (the HTTP service: stdout). A file that cannot be written fails
        here, loudly, rather than at the first search."""
        self._auto = auto
        lines = self._sink()
        if lines is not None:
            lines.check()

    def close(self) -> None:
        """Back to the default of an unstarted observer (`log_to: auto` logs nowhere)."""
        self._auto = "off"

    def _target(self) -> str:
        target = self.settings.log_to
        return self._auto if target == "auto" else target

    def _sink(self) -> LineSink | None:
        target = self._target()
        if target == "off":
            return None
        if self._lines is None or self._lines.target != target:
            # Imported with the first sink: a process that logs no call (the CLI's
            # default) does not load structlog (about 0.1 s with its structlog.dev);
            # a service does, when `start` opens its log, before any search.
            import structlog

            self._lines = LineSink(target)
            self._logger = structlog.wrap_logger(
                self._lines,
                processors=[
                    structlog.processors.add_log_level,
                    _event_first,
                    self.redactor,
                    structlog.processors.JSONRenderer(ensure_ascii=False),
                ],
                wrapper_class=structlog.BoundLogger,
            ).bind()  # bound once: the lazy proxy built a new logger for each line (~25 us)
        return self._lines

    # --- searches -------------------------------------------------------------------

    @contextmanager
    def watch(self, request: object, task_id: str | None = None) -> Iterator[Watch]:
        """Around one search: a failed event if the block raises, else the answered one."""
        watch = Watch(self, request, task_id, self._clock)
        try:
            yield watch
        except BaseException as exc:
            watch.finish(error=exc)
            raise
        watch.finish()

    def record(self, record: CallRecord) -> None:
        """Log, count and remember one search. Never raises."""
        try:
            self._log(record)
        except Exception:
            log.exception("the call log could not be written")
        try:
            self._count(record)
        except Exception:
            log.exception("the search's metrics could not be counted")
        if self.settings.traces:
            _trace(record)

    def _log(self, record: CallRecord) -> None:
        if self._sink() is None:
            return
        secrets = secret_values(self.redactor.names)
        event = call_event(record, raw_query=self.settings.log_raw_query, secrets=secrets)
        if record.status == "failed":
            self._logger.warning("search", **event)
        else:
            self._logger.info("search", **event)

    def _count(self, record: CallRecord) -> None:
        response, status = record.response, record.status
        called = record.called()
        for name in called:
            self._seen.setdefault(name, None)
        codes = (
            tuple(e.code for e in response.errors)
            if response is not None and status != "cached"
            else ((record.error_code or "internal_error",) if record.error is not None else ())
        )
        sample = SearchSample(
            at=record.ended_at,
            latency_ms=record.duration_s * 1000,
            status=status,
            error_codes=codes,
            providers=called,
        )
        secrets = secret_values(self.redactor.names)
        errors: list[dict[str, Any]] = []
        if response is not None and status != "cached":
            errors.extend(
                {
                    "at": iso_time(record.ended_at),
                    "provider": e.provider,
                    "code": e.code,
                    "message": redact_text(e.message, secrets),
                }
                for e in response.errors
            )
        elif record.error is not None:
            errors.append(
                {
                    "at": iso_time(record.ended_at),
                    "provider": None,
                    "code": record.error_code,
                    "message": redact_text(str(record.error), secrets),
                }
            )
        words = self._keywords(record, response, secrets) if response is not None else []
        self.figures.add(record.tenant, sample, errors, words)
        metrics = self.metrics
        if metrics is None:
            return
        child = metrics.child
        child(metrics.searches, record.tool_name, status).inc()
        child(metrics.search_seconds, record.tool_name, status).observe(record.duration_s)
        if response is None:
            child(metrics.errors, record.error_code or "internal_error", "").inc()
            return
        child(metrics.cache, response.cache).inc()
        if status == "cached":
            return  # what the cached answer reports happened when it was stored
        for name, report in response.providers.items():
            child(metrics.provider_calls, name, report.status).inc()
            child(metrics.provider_seconds, name).observe(report.latency_ms / 1000)
            if report.retries:
                child(metrics.retries, name).inc(report.retries)
        for error in response.errors:
            child(metrics.errors, error.code, error.provider or "").inc()
        for degradation in response.degradations:
            child(metrics.degradations, degradation.kind).inc()

    def _keywords(
        self, record: CallRecord, response: SearchResponse, secrets: Collection[str]
    ) -> list[str]:
        if self.settings.hot_keywords_raw:
            words = [record.query] if record.query else []
        else:
            words = response.rewritten_query.split()
        # A pasted key is not a topic: neither it nor the pieces the rewrite cut it into
        # are ever shown.
        words = drop_secret_words(words, record.query or "", secrets)
        return [w for w in words if len(w) <= 80 and redact_text(w, secrets) == w]

    def redact_response(self, response: SearchResponse) -> SearchResponse:
        """The response with secrets taken out of its error messages and degradation
        reasons, where a back end's error body can echo a key (the same one when
        nothing matched)."""
        secrets = secret_values(self.redactor.names)
        # Copied only where a text changes: most answers have nothing to hide.
        errors = [
            e
            if (message := redact_text(e.message, secrets)) == e.message
            else e.model_copy(update={"message": message})
            for e in response.errors
        ]
        degradations = [
            d
            if (reason := redact_text(d.reason, secrets)) == d.reason
            else d.model_copy(update={"reason": reason})
            for d in response.degradations
        ]
        if all(map(operator.is_, errors, response.errors)) and all(
            map(operator.is_, degradations, response.degradations)
        ):
            return response
        return response.model_copy(update={"errors": errors, "degradations": degradations})

    # --- quota, store states --------------------------------------------------------

    def quota(self, store: CounterStore, settings: QuotaSettings) -> Quota:
        """The search's quota pools, counting waits and refusals."""
        return ObservedQuota(store, settings, metrics=self.metrics)

    def providers(self) -> list[str]:
        """The providers whose breakers are reported: the configured chain and backups,
        then any other seen in a search."""
        return list(dict.fromkeys([*self.watched, *self._seen]))

    async def states(self, breakers: BreakerStore, tasks: TaskStore | None = None) -> States:
        """Each provider's breaker and the task counts, read from the store now (and
        set on the gauges); a store that does not answer leaves them out."""
        found = States()
        for name in self.providers():
            try:
                record = await breakers.get_breaker(name)
            except Exception:
                log.exception("breaker of %s could not be read", name)
                continue
            found.breakers[name] = (record.state, record.reason)
            if self.metrics is not None:
                self.metrics.breaker_state.labels(name).set(BREAKER_STATES[record.state])
        if tasks is not None:
            try:
                for status in _TASK_STATES:
                    found.tasks[status] = await tasks.count_tasks(status)
            except Exception:
                log.exception("task counts could not be read")
            if self.metrics is not None and found.tasks:
                self.metrics.queue_depth.set(found.tasks.get("pending", 0))
                for state, count in found.tasks.items():
                    self.metrics.tasks.labels(state).set(count)
        return found

    # --- the dashboard --------------------------------------------------------------

    def dashboard_figures(
        self, now: float | None = None, *, tenant: str | None = None
    ) -> dict[str, Any]:
        """The in-process part of `/dashboard/data` (the store's part is `states`):
        `tenant`'s searches only, or everyone's when None."""
        now = self._clock() if now is None else now
        view = self.figures.of(tenant)
        figures = view.window.snapshot(now)
        top = view.keywords.top(self.settings.hot_keywords_top)
        figures.update(
            generated_at=iso_time(now),
            scope="global" if tenant is None else "tenant",
            tenant=tenant,
            window_s=view.window.window_s,
            bucket_s=view.window.bucket_s,
            hot_keywords=[{"keyword": word, "count": n} for word, n in top],
            hot_keywords_source="raw_queries" if self.settings.hot_keywords_raw else "keywords",
            recent_errors=list(reversed(view.recent_errors)),
        )
        return figures

    async def dashboard_data(
        self, breakers: BreakerStore, tasks: TaskStore | None = None, *, tenant: str | None = None
    ) -> dict[str, Any]:
        """Everything `/dashboard/data` answers (shape: docs/observability.md). For a
        `tenant`, only its own figures: the breakers and the task counts are the whole
        service's, so they are left out (null) of a tenant's view."""
        if tenant is not None:
            data = self.dashboard_figures(tenant=tenant)
            data["breakers"] = None
            data["tasks"] = None
            return data
        states = await self.states(breakers, tasks)
        data = self.dashboard_figures()
        data["breakers"] = [
            {"provider": name, "state": state, "reason": reason}
            for name, (state, reason) in states.breakers.items()
        ]
        data["tasks"] = states.tasks
        return data


class Watch:
    """One search under way: `scored` hears the returned results before projection,
    `answered` the response; the `Observer.watch` block records it when it ends."""

    def __init__(
        self,
        observer: Observer,
        request: object,
        task_id: str | None,
        clock: Callable[[], float],
    ) -> None:
        self.observer = observer
        self.task_id = task_id
        self.query = _query_of(request)
        self.tenant, self.tool_name = current_call()
        context = current_context()
        self.tool, self.workflow = context.tool, context.workflow
        self._clock = clock
        self.started_at = clock()
        self._started = time.perf_counter()
        self.response: SearchResponse | None = None
        self.trust: list[float] | None = None

    def scored(self, items: Sequence[ResultItem]) -> None:
        self.trust = [i.source_trust_score for i in items if i.source_trust_score is not None]

    def answered(self, response: SearchResponse) -> None:
        self.response = response

    def finish(self, *, error: BaseException | None = None) -> None:
        response = None if error is not None else self.response
        if response is None and error is None:
            return  # the block ended without an answer to record (never in the gateway)
        self.observer.record(
            CallRecord(
                task_id=response.task_id if response is not None else self.task_id,
                tenant=self.tenant,
                tool_name=self.tool_name,
                query=response.query if response is not None else self.query,
                started_at=self.started_at,
                ended_at=self._clock(),
                duration_s=time.perf_counter() - self._started,
                response=response,
                error=error,
                trust=self.trust,
                tool=self.tool,
                workflow=self.workflow,
            )
        )


def _event_first(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """A structlog processor: "event" and "level" lead the line, for people reading it."""
    head = {key: event_dict[key] for key in ("event", "level") if key in event_dict}
    return {**head, **{k: v for k, v in event_dict.items() if k not in head}}


def _query_of(request: object) -> str | None:
    if isinstance(request, str):
        return request
    if isinstance(request, Mapping):
        found = request.get("query")
        return found if isinstance(found, str) else None
    found = getattr(request, "query", None)
    return found if isinstance(found, str) else None


def _trace(record: CallRecord) -> None:
    """One OpenTelemetry span for the search, recorded when it ends (with its real
    start and end). A no-op unless the process configured a tracer provider; skipped
    when opentelemetry is not installed."""
    try:
        from opentelemetry import trace
    except ImportError:
        return
    try:
        tracer = trace.get_tracer("sleuth")
        attributes: dict[str, str | int | float] = {
            "sleuth.status": record.status,
            "sleuth.tool_name": record.tool_name,
            "sleuth.tenant": record.tenant,
            "sleuth.result_count": len(record.response.results) if record.response else 0,
        }
        if record.task_id:
            attributes["sleuth.task_id"] = record.task_id
        if record.error_code:
            attributes["sleuth.error_code"] = record.error_code
        span = tracer.start_span(
            "sleuth.search", start_time=int(record.started_at * 1e9), attributes=attributes
        )
        if record.response is not None:
            for name, outcome in record.called().items():
                span.add_event("provider", {"provider": name, "outcome": outcome})
            for degradation in record.response.degradations:
                span.add_event("degradation", {"kind": degradation.kind})
        if record.status == "failed":
            span.set_status(trace.Status(trace.StatusCode.ERROR, record.error_code or ""))
        span.end(end_time=int(record.ended_at * 1e9))
    except Exception:
        log.exception("the search's span could not be recorded")
