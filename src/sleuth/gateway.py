"""`Sleuth`: runs one search through the stages. The only module that knows their order.

    guard → rewrite → cache (a fresh hit returns here) → fan-out (concurrent, one
    deadline; per provider: breaker, quota, retry, hedging to backups) → normalize
    → scope → screen injections → clean → dedupe → rank → the shown results'
      provider extras made safe → verify (dates, trust; of the results shown only:
      rank reads neither)
    → with include content, the top results' pages read, then judged by what they
      say (content policy, dedupe on full text, the page's dates, its TLS in trust)
    → facts (over the results returned) → project → summarize → confidence
    → cache the answer, or, when no provider answered, the ladder's last steps
      (a stale cached answer, else the structured fallback answer)

Each provider failure becomes a `SearchError` in `errors`, classified by the error
rules, while the others still answer; each emulated filter, failure and step down
the ladder is a `Degradation` with its reason. The per-provider resilience sequence
is `resilience.call`; the ladder is `resilience.ladder`.

>>> from sleuth import Sleuth
>>> sleuth = Sleuth.from_config()          # doctest: +SKIP
>>> sleuth.search_sync("how does sleuth de-duplicate results?").results[0].title  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from sleuth import providers as registry
from sleuth.admission import FinishingTime, Gate
from sleuth.config import Settings, load_settings
from sleuth.contract import (
    Degradation,
    ResultItem,
    SearchRequest,
    SearchResponse,
    SummarySentence,
    describe_validation_error,
)
from sleuth.dispatch import backups_for, call_for, choose_providers, request_for
from sleuth.egress import EgressPolicy
from sleuth.errors import BudgetExceeded, InvalidRequest, NoResults, SearchError
from sleuth.extract.in_search import with_content
from sleuth.extract.models import ExtractRequest, ExtractResponse, parse_extract_request
from sleuth.extract.reader import PageReader, build_page_source
from sleuth.feedback import FeedbackTally
from sleuth.kb.search import warm_up as warm_up_kb
from sleuth.mapping_files import MappingFiles
from sleuth.model_summary import summarize_with_model
from sleuth.observe import CallContext, Observer, Watch, current_context
from sleuth.outcomes import Merged, merge_outcomes
from sleuth.providers.base import HttpRequest, Provider
from sleuth.providers.mapping import FieldMapping
from sleuth.resilience import ladder
from sleuth.resilience.breaker import Breaker
from sleuth.resilience.call import Exchange, Policies, ProviderOutcome, ask_chain
from sleuth.resilience.hedge import LatencyTracker
from sleuth.resilience.quota import Quota
from sleuth.resilience.rules import RuleBook
from sleuth.stages.facts import check_facts
from sleuth.stages.query import Rewritten, asks_for_sources, is_time_sensitive, rewrite
from sleuth.stages.query.rewrite import warm_up as warm_up_rewrite
from sleuth.stages.results import (
    check_include,
    clean,
    dedupe,
    dedupe_pages,
    project,
    rank,
    refusal,
    served_include,
)
from sleuth.stages.safety import (
    apply_content_policy,
    compile_screens,
    guard,
    sanitise_extras,
    sanitise_items,
    sanitise_response,
    screen,
)
from sleuth.stages.summary import summarize
from sleuth.stages.verify import confidence, date_from_pages, date_items, score_items
from sleuth.stages.verify.trust import warm_up as warm_up_trust
from sleuth.store import (
    CacheEntry,
    MemoryStore,
    Store,
    StoreSettings,
    cache_key,
    entry_for,
    open_store,
)
from sleuth.text import CJK_RUN
from sleuth.transport import (
    HttpTransport,
    RawResponse,
    RecordingTransport,
    ReplayTransport,
    Transport,
)
from sleuth.transport import warm_up as warm_up_transport
from sleuth.usage import Finished, Ledger
from sleuth.workflows.tool_book import ToolBook
from sleuth.workflows.workflow_book import WorkflowBook

log = logging.getLogger(__name__)

#: Told of each step of a search as it happens: `(kind, detail)`, e.g.
#: ("provider_finished", {"provider": "brave", "status": "ok", "results": 10}).
#: Called on the event loop; it must be quick and must not raise.
Progress = Callable[[str, dict[str, Any]], None]


def parse_request(
    data: SearchRequest | Mapping[str, Any], *, strict: bool = False
) -> SearchRequest:
    """A validated request, or `InvalidRequest` naming each bad field and its allowed values.

    `strict`: `data` is decoded JSON held to the JSON Schema's types, as a tool's
    schema promises (`true`, `"5"` or `5.0` are not an integer, `"yes"` is not a
    boolean); otherwise pydantic's coercions apply, as for Python callers.
    """
    if isinstance(data, SearchRequest):
        return data
    try:
        if strict:
            return SearchRequest.model_validate_json(json.dumps(data), strict=True)
        return SearchRequest.model_validate(data)
    except ValidationError as exc:
        raise InvalidRequest.from_details(describe_validation_error(exc)) from None


def build_transport(settings: Settings) -> Transport:
    transport: Transport
    if settings.replay is not None:
        transport = ReplayTransport.from_file(settings.replay)
    else:
        transport = HttpTransport(
            kb_path=settings.kb.path,
            egress_proxy=settings.egress_proxy,
            max_body_bytes=settings.max_body_bytes,
            egress=EgressPolicy.from_settings(settings.egress),
        )
    if settings.record is not None:
        transport = RecordingTransport(transport, settings.record, settings.secret_env())
    return transport


class _Timer:
    def __init__(self, progress: Progress | None = None) -> None:
        self.timings: dict[str, float] = {}
        self._progress = progress

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round((time.perf_counter() - started) * 1000, 3)
            if self._progress is not None:
                self._progress("stage", {"stage": name, "ms": self.timings[name]})


class Sleuth:
    """The search service's core; the CLI, HTTP and MCP adapters are thin layers over it.

    A transport or store handed in is its owner's to close; those sleuth opens itself
    (from settings, on first use) are closed by `aclose`.
    """

    def __init__(
        self,
        settings: Settings | None = None,
        transport: Transport | None = None,
        store: Store | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.settings = settings or load_settings()
        #: "Now" for the stages that read dates (freshness, relative dates, trust).
        self.clock = clock or _utc_now
        self._transport = transport
        self._transport_given = transport is not None
        self._store = store
        self._store_given = store is not None
        # One per store, so what it read and the successes it holds outlive a search.
        self._breaker: Breaker | None = None
        self._quota: Quota | None = None
        self._quota_store: Store | None = None
        self.mappings = MappingFiles(self.settings.mappings_dir)
        #: The error rules, re-read when their file changes.
        self.rules = RuleBook.from_settings(self.settings.rules)
        #: The declared tools (`tools:`, `tools_dir`), re-read when a file changes;
        #: run by `sleuth.workflows.toolbox.ToolBox`.
        self.tools = ToolBook(self.settings.tools, self.settings.tools_dir, validate=self.validate)
        #: The workflows of `workflows_dir` (run by `sleuth.tasks.TaskRunner`).
        self.workflows = WorkflowBook(self.settings.workflows_dir)
        #: Each provider's recent latencies, from which hedge delays are learned.
        self.latency = LatencyTracker(window=self.settings.hedge.window)
        #: Click-through prior per registrable domain (0..1), fed by feedback; empty until then.
        self.click_priors: dict[str, float] = {}
        #: Which domains' results were shown, for the click-through prior (`feedback.py`).
        self.feedback = FeedbackTally()
        #: The call log, metrics and dashboard figures of this instance's searches.
        self.observer = Observer(
            self.settings.observe,
            secret_env=self.settings.secret_env(),
            watched=[*self.settings.chain, *self.settings.backups],
        )
        #: How many searches run at once; the rest wait their turn (admission.py).
        self.gate = Gate(self.settings.admission, self.settings.deadline_s)
        #: How long the stages after the fan-out take, kept clear of the deadline.
        self.finishing = FinishingTime()
        #: Prices, budgets, usage rows and the audit log (kept in the store).
        self.ledger = Ledger(self.settings.usage, self.settings.audit)
        self._pages: PageReader | None = None

    @property
    def transport(self) -> Transport:
        """Built on first use, so that it belongs to the event loop that uses it."""
        if self._transport is None:
            self._transport = build_transport(self.settings)
        return self._transport

    @property
    def store(self) -> Store:
        """Breakers, quotas and the response cache; opened on first use. A replayed run
        keeps them in memory: it neither answers from nor writes to the real cache,
        and a cassette's failures never open a real provider's breaker."""
        if self._store is None:
            chosen = self.settings.store
            if self.settings.replay is not None:
                chosen = StoreSettings(backend="memory")
            self._store = open_store(chosen)
        return self._store

    @property
    def pages(self) -> PageReader:
        """Reads pages (`extract`); its client is built on first use, like the transport's."""
        if self._pages is None:
            settings = self.settings
            source = build_page_source(
                settings.extract,
                replay=settings.replay,
                record=settings.record,
                egress_proxy=settings.egress_proxy,
                egress=EgressPolicy.from_settings(settings.egress),
            )
            self._pages = PageReader(
                settings.extract, source, injection=settings.injection, cache=self.store
            )
        return self._pages

    async def extract(self, request: ExtractRequest | Mapping[str, Any]) -> ExtractResponse:
        """Fetch and read pages: one `ExtractedPage` per URL, in order, each failure in
        its page's `error`. Raises only `InvalidRequest` for a malformed request."""
        started = time.perf_counter()
        req = parse_extract_request(request)
        if len(req.urls) > self.settings.extract.max_pages:
            raise InvalidRequest(
                f"urls: {len(req.urls)} URLs, more than extract.max_pages allows; "
                f"allowed: 1..{self.settings.extract.max_pages}",
                field="urls",
                allowed=[f"1..{self.settings.extract.max_pages}"],
            )
        pages = await self.pages.read_all(req)
        took = round((time.perf_counter() - started) * 1000, 3)
        return ExtractResponse(pages=pages, took_ms=took)

    def extract_sync(self, request: ExtractRequest | Mapping[str, Any]) -> ExtractResponse:
        """`extract` for callers without an event loop (closes connections after)."""

        async def run() -> ExtractResponse:
            try:
                return await self.extract(request)
            finally:
                await self.aclose()

        return asyncio.run(run())

    @classmethod
    def from_config(cls, path: Path | str | None = None, **overrides: Any) -> Sleuth:
        return cls(load_settings(Path(path) if path else None, **overrides))

    async def __aenter__(self) -> Sleuth:
        await self.warm_up()
        return self

    async def warm_up(self) -> None:
        """Load, off the event loop, what the first search would otherwise load inside
        its deadline (the Chinese segmenter's dictionary, about a second; aiohttp and
        the TLS certificate bundle; the injection screens' default patterns; the
        public suffix list; the knowledge base's segmenter)."""
        await asyncio.gather(
            asyncio.to_thread(warm_up_rewrite),
            asyncio.to_thread(warm_up_trust),
            asyncio.to_thread(warm_up_kb),
            asyncio.to_thread(warm_up_transport),
            asyncio.to_thread(compile_screens, self.settings.guard, self.settings.injection),
        )

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Write the breakers' waiting successes and the usage still being recorded;
        close the transport's connections and the store sleuth opened."""
        await self.ledger.flush()
        if self._breaker is not None:
            await self._breaker.aclose()
            self._breaker = None
        if self._quota is not None:
            await self._quota.aclose()
            self._quota = None
        if self._transport is not None and not self._transport_given:
            await self._transport.aclose()
            self._transport = None
        if self._pages is not None:
            await self._pages.aclose()
            self._pages = None
        if self._store is not None and not self._store_given:
            await self._store.aclose()
            if not isinstance(self._store, MemoryStore):  # a memory store is its own state
                self._store = None

    def search_sync(self, request: SearchRequest | Mapping[str, Any] | str) -> SearchResponse:
        """`search` for callers without an event loop; closes the transport's connections
        and the store's (the next call opens its own)."""

        async def run() -> SearchResponse:
            try:
                if CJK_RUN.search(_query_of(request)):
                    # A one-off caller (the CLI) has not warmed up: the segmenter's
                    # dictionary loads here, not inside the search's deadline.
                    await self.warm_up()
                return await self.search(request)
            finally:
                # An aiohttp session belongs to the loop it first ran on: the next makes its own.
                await self.aclose()

        return asyncio.run(run())

    async def search(
        self,
        request: SearchRequest | Mapping[str, Any] | str,
        *,
        progress: Progress | None = None,
        task_id: str | None = None,
        patient: bool = False,
        arrived: float | None = None,
    ) -> SearchResponse:
        """Run one search. Raises only for the caller's own mistakes (`InvalidRequest`,
        `PolicyViolation`) and for `TooManyRequests` when the process is too busy to
        start it in time (`admission.py`; a `patient` caller, a task, waits instead);
        back-end failures are reported inside the response.

        `progress` hears each stage and each provider start and finish; `task_id`
        names the response (a fresh one when not given); `arrived` is when the request
        came in (`time.perf_counter`; default now), where its deadline starts. Every
        way out (fresh, cached,
        the ladder's fallback) passes the output-safety gate and has secrets redacted
        from its errors, and leaves one call-log event (a failed one when it raises)."""
        task_id = task_id or f"srch_{uuid.uuid4().hex}"
        arrived = time.perf_counter() if arrived is None else arrived
        context = current_context()
        try:
            with self.observer.watch(request, task_id) as watch:
                async with self.gate.admit(patient=patient):
                    # A task's deadline starts when it runs; an answer's when it was asked.
                    started = time.perf_counter() if patient else arrived
                    response = await self._search(request, progress, task_id, watch, started)
                # file: links in results passed `sanitise_items`, which keeps them only for
                # the local knowledge base's own results.
                response = sanitise_response(response, allow_file=True)
                response = self.observer.redact_response(response)
                watch.answered(response)
        except BudgetExceeded as exc:  # the refusal is audited too
            self._account(context, task_id, _query_of(request), error_code=exc.code)
            raise
        self._account(context, task_id, response.query, response=response)
        return response

    def _account(
        self,
        context: CallContext,
        task_id: str,
        query: str,
        *,
        response: SearchResponse | None = None,
        error_code: str | None = None,
    ) -> None:
        """Record the search's usage rows and audit entry, by who asked
        (`call_context`); written in the background (`Ledger.flush`)."""
        done = Finished(
            at=time.time(),
            tenant=context.tenant,
            response=response,
            error_code=error_code,
            key=context.key,
            tool=context.tool,
            workflow=context.workflow,
            adapter=context.adapter,
            task_id=task_id,
            query=query,
        )
        self.ledger.record(self.store, done)

    def validate(self, request: SearchRequest | Mapping[str, Any] | str) -> SearchRequest:
        """The request as `search` would take it, or the `InvalidRequest` (or
        `PolicyViolation`) `search` would raise, without running it: what every entry
        point checks before it accepts a task, so a task never fails for its input."""
        req = self._parsed(request)
        guard(req.query, self.settings.guard)
        self._chosen(req)
        return req

    def _parsed(self, request: SearchRequest | Mapping[str, Any] | str) -> SearchRequest:
        try:
            return parse_request({"query": request} if isinstance(request, str) else request)
        except InvalidRequest as exc:
            raise served_include(exc, self.settings.projection.optional) from None

    def _chosen(self, req: SearchRequest) -> list[Provider]:
        """The providers `req` goes to, once its include fields and domain filter are
        known to be served (`InvalidRequest` naming the allowed values otherwise)."""
        check_include(req.include, self.settings.projection)
        chosen = choose_providers(req, self.settings)
        refused = refusal(req.domain_filter, [provider.info for provider in chosen], req.tags)
        if refused is not None:
            field, reason = refused
            raise InvalidRequest(reason, field=field)
        return chosen

    async def _search(
        self,
        request: SearchRequest | Mapping[str, Any] | str,
        progress: Progress | None,
        task_id: str | None,
        watch: Watch | None = None,
        started: float | None = None,
    ) -> SearchResponse:
        req = self._parsed(request)
        now = self.clock()
        started = time.perf_counter() if started is None else started
        deadline = started + self.settings.deadline_s
        timer = _Timer(progress)
        settings = self.settings
        task_id = task_id or f"srch_{uuid.uuid4().hex}"

        with timer.stage("guard"):
            guarded = guard(req.query, settings.guard)
        with timer.stage("rewrite"):
            rewritten = rewrite(guarded.text, req.context, settings.rewrite)
        chosen = self._chosen(req)
        backups = backups_for(req, chosen, self.settings)
        mappings = {
            provider.name: self.mappings.for_provider(provider)
            for provider in [*chosen, *map(registry.get, backups)]
        }

        stale: CacheEntry | None = None
        use_cache = self._reads_cache(req, chosen)
        if use_cache:
            with timer.stage("cache"):
                stale = await self._cached(req)
            if stale is not None and time.time() < stale.expires_at:
                timer.timings["total"] = round((time.perf_counter() - started) * 1000, 3)
                hit = ladder.from_cache(
                    stale, task_id=task_id, query=req.query, timings=timer.timings
                )
                if hit is not None:
                    return hit

        spending = await self.ledger.spending(
            self.store,
            current_context().tenant,
            [provider.name for provider in chosen],
            backups,
            [name for name, conf in settings.providers.items() if conf.enabled],
        )
        if spending.degradation is not None:  # the budget is spent: the free ones only
            chosen = [registry.get(name) for name in spending.providers]
            backups = spending.backups
            for provider in chosen:
                mappings.setdefault(provider.name, self.mappings.for_provider(provider))

        with timer.stage("fan_out"):
            outcomes, fallbacks = await ask_chain(
                [provider.name for provider in chosen],
                backups,
                lambda name: self._exchange(
                    name, mappings[name], req, guarded.text, rewritten, progress
                ),
                self._policies(progress),
                priority=req.priority,
                # What comes after the fan-out needs its time before the deadline too.
                deadline=deadline - self.finishing.reserve_s(settings.deadline_s),
                deadline_s=settings.deadline_s,
                want_results=req.max_results,
            )
        fanned_out = time.perf_counter()

        with timer.stage("normalize"):
            merged = merge_outcomes(
                outcomes, req, now, per_provider_results=settings.per_provider_results
            )
            if guarded.injection:
                # A cached answer to the same query carries this too: it was stored with it.
                merged.degradations.insert(
                    0,
                    Degradation(
                        kind="query_injection_neutralised",
                        reason=f"{guarded.injection_reason}; searched for the information "
                        "need only",
                    ),
                )
            merged.degradations.extend(fallbacks)
            if spending.degradation is not None:
                merged.degradations.insert(0, spending.degradation)
        candidates = merged.items
        with timer.stage("clean"):
            # Injections are judged on the text as sent: clean would strip <system> tags.
            candidates = screen(candidates, settings.injection)
            local = [provider.name for provider in chosen if not provider.info.remote]
            # The extras' values wait for the shown results (`sanitise_extras` after rank).
            candidates = sanitise_items(clean(candidates, settings.clean), local, extras=False)
            # Judged per provider's wording, before merging, so a withheld page's text
            # and URL cannot ride along in a merged item.
            candidates, withheld = apply_content_policy(
                candidates, settings.content_policy, rewritten.language
            )
            merged.degradations.extend(withheld)
        with timer.stage("dedupe"):
            candidates = dedupe(candidates, settings.dedupe)
        shown = min(req.max_results, settings.projection.max_items)
        with timer.stage("rank"):
            top = rank(candidates, rewritten.terms, settings.rank, limit=shown, full_text=local)
            # Until here only dedupe's merge touched the extras, copying them by name:
            # made safe now, for the shown results alone, they are what they were.
            top = sanitise_extras(top)
        with timer.stage("verify"):
            # Dates and trust are judged result by result and rank reads neither: only
            # the results that reach the answer are judged, with the same outcome.
            top = date_items(top, now, settings.dates)
            top = score_items(top, settings.trust, self.click_priors)
        # Intent is read from the query as typed: a query the guard neutralised keeps
        # what it asked of the answer ("..., cite your sources" still brings url).
        include = self._include_for(req, req.query, now)
        if "content" in include and top:
            with timer.stage("content"):
                reserve = self.finishing.reserve_s(settings.deadline_s)
                read = await with_content(
                    top, self.pages, rewritten.topic_terms, deadline=deadline - reserve
                )
                merged.degradations.extend(read.notes)
                # What only the pages tell, through the stages that judged the snippets.
                top, withheld = apply_content_policy(
                    read.items, settings.content_policy, rewritten.language, read.pages
                )
                merged.degradations.extend(withheld)
                top = dedupe_pages(top, read.pages, settings.dedupe)
                top = date_from_pages(top, read.pages, now, settings.dates)
                top = score_items(top, settings.trust, self.click_priors, read.pages)
        self.feedback.shown(item.url for item in top)
        with timer.stage("facts"):
            checked = check_facts(top, rewritten.terms, settings.facts)
            top = checked.items
        if watch is not None:  # projection may drop source_trust_score; the log wants it
            watch.scored(top)
        with timer.stage("project"):
            results = project(top, include, len(top), settings.projection)
        with timer.stage("summarize"):
            summary = summarize(
                top, rewritten.topic_terms, rewritten.language, settings.summary, uncut=local
            )
        if settings.llm_summary.enabled and top:
            with timer.stage("model_summary"):
                summary = await self._model_summary(req, top, summary, deadline, merged)
        score = confidence(top, checked.facts, summary, rewritten.terms, settings.confidence)

        errors = merged.errors
        rescue = not results and ladder.nothing_answered(merged.reports)
        if not results and not rescue:
            errors.append(
                NoResults(
                    "no results; try broader keywords, or drop time_range or domain_filter",
                    action="report",
                ).info()
            )
        timer.timings["total"] = round((time.perf_counter() - started) * 1000, 3)
        response = SearchResponse(
            task_id=task_id,
            query=req.query,
            rewritten_query=rewritten.keywords,
            results=results,
            summary=summary,
            facts=checked.facts,
            confidence=score,
            degraded=bool(merged.degradations),
            degradations=merged.degradations,
            errors=errors,
            providers=merged.reports,
            cache="miss",
            timings=timer.timings,
        )
        if rescue:
            return ladder.rescue(
                response,
                stale=stale,
                language=rewritten.language,
                now=time.time(),
                settings=settings.ladder,
                cache_skipped=req.no_cache,
            )
        if results and settings.cache.enabled and any(p.info.remote for p in chosen):
            await self._remember(req, response)
        self.finishing.record(time.perf_counter() - fanned_out)
        return response

    async def _model_summary(
        self,
        req: SearchRequest,
        top: list[ResultItem],
        extractive: list[SummarySentence],
        deadline: float,
        merged: Merged,
    ) -> list[SummarySentence]:
        """The model's grounded sentences, or the extractive summary when it fails or
        none of its sentences is supported; what was dropped is recorded."""
        remaining = max(0.05, deadline - time.perf_counter())
        try:
            answer = await summarize_with_model(
                self.transport,
                req.query,
                top,
                self.settings.llm_summary,
                self.settings.grounding,
                remaining,
            )
        except SearchError as exc:
            merged.degradations.append(
                Degradation(
                    kind="model_summary_failed",
                    provider=exc.provider,
                    reason=f"{exc.code}: {exc.message}; the extractive summary is shown",
                )
            )
            return extractive
        merged.degradations.extend(answer.degradations)
        return answer.sentences or extractive

    def _reads_cache(self, req: SearchRequest, chosen: list[Provider]) -> bool:
        """Whether a search may answer from the cache: not when the request says
        `no_cache`, nor while recording (a cached answer records no exchange), nor when
        every provider is on this machine (the knowledge base answers fresher and fast)."""
        return (
            self.settings.cache.enabled
            and not req.no_cache
            and self.settings.record is None
            and any(provider.info.remote for provider in chosen)
        )

    async def _cached(self, req: SearchRequest) -> CacheEntry | None:
        """The query's cached answer, fresh or stale (a read counts a hit)."""
        try:
            read = await self.store.get_cached(cache_key(req, self.settings.chain), time.time())
        except Exception:  # the cache is an optimisation: a broken store never fails a search
            log.exception("the response cache could not be read; asking the providers")
            return None
        return read.entry if read is not None else None

    async def _remember(self, req: SearchRequest, response: SearchResponse) -> None:
        """Cache an answer: complete for the full TTL, partial (a provider failed) briefly."""
        whole = ladder.complete(response.errors, response.degradations)
        entry = entry_for(
            req,
            self.observer.redact_response(response),  # a key echoed in an error stays out
            complete=whole,
            now=time.time(),
            settings=self.settings.cache,
            chain=self.settings.chain,
        )
        try:
            await self.store.put_cached(entry)
        except Exception:
            log.exception("the answer could not be cached")

    def _policies(self, progress: Progress | None = None) -> Policies:
        settings = self.settings

        def finished(outcome: ProviderOutcome) -> None:
            if progress is not None:
                detail: dict[str, Any] = {
                    "provider": outcome.provider,
                    "status": outcome.status,
                    "results": len(outcome.hits),
                    "latency_ms": round(outcome.latency_ms, 1),
                    "retries": outcome.retries,
                }
                if outcome.error is not None:
                    detail["error"] = outcome.error.code
                progress("provider_finished", detail)

        return Policies(
            rules=self.rules,
            breaker=self._breaker_for(settings),
            quota=self._quota_for(settings),
            latency=self.latency,
            retry=settings.retry,
            hedge=settings.hedge,
            stragglers=settings.stragglers,
            body_preview_bytes=settings.rules.body_preview_bytes,
            on_outcome=finished,
        )

    def _breaker_for(self, settings: Settings) -> Breaker:
        """The breakers of this instance's store, shared by its searches (their read
        cache and waiting successes are per process); a new store gets new ones."""
        store = self.store
        if self._breaker is None or self._breaker.store is not store:
            self._breaker = Breaker(store, settings.breaker)
        self._breaker.settings = settings.breaker  # `settings` may have been replaced
        return self._breaker

    def _quota_for(self, settings: Settings) -> Quota:
        """The quota pools of this instance's store, shared by its searches (their
        leased tokens are per process); a new store gets new ones."""
        store = self.store
        if self._quota is None or self._quota_store is not store:
            self._quota = self.observer.quota(store, settings.quota)
            self._quota_store = store
        self._quota.settings = settings.quota  # `settings` may have been replaced
        return self._quota

    def _include_for(self, req: SearchRequest, query: str, now: datetime) -> list[str]:
        """The request's `include`, plus what the query's intent asks for."""
        include: list[str] = list(req.include)
        projection = self.settings.projection
        if projection.by_intent:
            if is_time_sensitive(query, current_year=now.year):
                include.append("published_at")
            if asks_for_sources(query):
                include.append("url")
        return [name for name in dict.fromkeys(include) if name in projection.optional]

    def _exchange(
        self,
        name: str,
        mapping: FieldMapping,
        req: SearchRequest,
        guarded_text: str,
        rewritten: Rewritten,
        progress: Progress | None = None,
    ) -> Exchange:
        """How `resilience.call` talks to one provider for this request."""
        provider = registry.get(name)
        attempts = 0

        async def send(request: HttpRequest, timeout_s: float) -> RawResponse:
            nonlocal attempts
            attempts += 1
            if progress is not None:
                progress("provider_started", {"provider": name, "attempt": attempts})
            return await self.transport.send(name, req.query, request, timeout_s)

        next_page = None
        if provider.next_page is not None:
            paged = provider.next_page

            def next_page(first: HttpRequest, done: int, got: int) -> HttpRequest | None:
                query, call = call_for(
                    provider, req, guarded_text, rewritten, self.settings, self.clock()
                )
                return paged(query, first, call, done, got)

        return Exchange(
            build=lambda: request_for(
                provider, req, guarded_text, rewritten, self.settings, self.clock()
            ),
            send=send,
            parse=lambda response: provider.parse_response(
                response.status, response.headers, response.body, mapping
            ),
            timeout_s=self.settings.providers[name].timeout_s,
            next_page=next_page,
        )

    async def fetch_raw(
        self, provider_name: str, request: SearchRequest | Mapping[str, Any] | str
    ) -> RawResponse:
        """One provider's answer exactly as it came back, unparsed (`sleuth fields profile`)."""
        req = parse_request({"query": request} if isinstance(request, str) else request)
        guarded = guard(req.query, self.settings.guard)
        rewritten = rewrite(guarded.text, req.context, self.settings.rewrite)
        (provider,) = choose_providers(
            req.model_copy(update={"providers": [provider_name]}), self.settings
        )
        http_request = request_for(
            provider, req, guarded.text, rewritten, self.settings, self.clock()
        )
        timeout = self.settings.providers[provider.name].timeout_s
        return await self.transport.send(provider.name, req.query, http_request, timeout)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _query_of(request: SearchRequest | Mapping[str, Any] | str) -> str:
    if isinstance(request, str):
        return request
    query = request.query if isinstance(request, SearchRequest) else request.get("query")
    return query if isinstance(query, str) else ""
