"""`Sleuth`: runs one search through the stages. The only module that knows their order.

    guard → rewrite → fan-out (concurrent, one deadline) → normalize → scope
    → screen injections → clean → dedupe → verify (dates, trust) → rank
    → facts (over the results returned) → project → summarize → confidence

Each provider failure becomes a `SearchError` in `errors` while the others still
answer; each emulated filter and each failure is a `Degradation` with its reason.

>>> from sleuth import Sleuth
>>> sleuth = Sleuth.from_config()          # doctest: +SKIP
>>> sleuth.search_sync("how does sleuth de-duplicate results?").results[0].title  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from pydantic import ValidationError

from sleuth import providers as registry
from sleuth.config import Settings, load_settings
from sleuth.contract import (
    Degradation,
    ErrorInfo,
    ProviderReport,
    ProviderStatus,
    ResultItem,
    SearchRequest,
    SearchResponse,
    describe_validation_error,
)
from sleuth.errors import (
    DeadlineExceeded,
    InvalidRequest,
    MissingApiKey,
    NoResults,
    ProviderError,
    SearchError,
)
from sleuth.mapping_files import MappingFiles
from sleuth.providers.base import HttpRequest, Provider, ProviderQuery, ProviderSettings, RawHit
from sleuth.providers.mapping import FieldMapping
from sleuth.stages.clean import clean
from sleuth.stages.dedupe import dedupe
from sleuth.stages.facts import check_facts
from sleuth.stages.injection import screen
from sleuth.stages.guard import guard
from sleuth.stages.normalize import normalize
from sleuth.stages.project import check_include, project
from sleuth.stages.rank import rank
from sleuth.stages.rewrite import Rewritten, asks_for_sources, is_time_sensitive, rewrite
from sleuth.stages.scope import filter_domains, filter_time_range
from sleuth.stages.summarize import summarize
from sleuth.stages.trust import score_items
from sleuth.stages.verify import confidence, date_items
from sleuth.transport import (
    HttpTransport,
    RawResponse,
    RecordingTransport,
    ReplayTransport,
    Transport,
)

log = logging.getLogger(__name__)


def parse_request(data: SearchRequest | Mapping[str, Any]) -> SearchRequest:
    """A validated request, or `InvalidRequest` naming each bad field and its allowed values."""
    if isinstance(data, SearchRequest):
        return data
    try:
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
        )
    if settings.record is not None:
        transport = RecordingTransport(transport, settings.record)
    return transport


@dataclass
class _Outcome:
    """What one provider call produced."""

    provider: str
    hits: list[RawHit] = field(default_factory=list)
    error: SearchError | None = None
    latency_ms: float = 0.0
    status: ProviderStatus = "ok"


@dataclass
class _Merged:
    """The fan-out's hits as candidates, and the record of how each provider fared."""

    items: list[ResultItem] = field(default_factory=list)
    reports: dict[str, ProviderReport] = field(default_factory=dict)
    errors: list[ErrorInfo] = field(default_factory=list)
    degradations: list[Degradation] = field(default_factory=list)


class _Timer:
    def __init__(self) -> None:
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = round((time.perf_counter() - started) * 1000, 3)


class Sleuth:
    """The search service's core; the CLI, HTTP and MCP adapters are thin layers over it."""

    def __init__(
        self, settings: Settings | None = None, transport: Transport | None = None
    ) -> None:
        self.settings = settings or load_settings()
        self._transport = transport
        self._transport_given = transport is not None
        self.mappings = MappingFiles(self.settings.mappings_dir)
        #: Click-through prior per registrable domain (0..1), fed by feedback; empty until then.
        self.click_priors: dict[str, float] = {}

    @property
    def transport(self) -> Transport:
        """Built on first use, so that it belongs to the event loop that uses it."""
        if self._transport is None:
            self._transport = build_transport(self.settings)
        return self._transport

    @classmethod
    def from_config(cls, path: Path | str | None = None, **overrides: Any) -> Sleuth:
        return cls(load_settings(Path(path) if path else None, **overrides))

    async def __aenter__(self) -> Sleuth:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the transport's connections; a transport handed in is closed by its owner."""
        if self._transport is not None and not self._transport_given:
            await self._transport.aclose()
            self._transport = None

    def search_sync(self, request: SearchRequest | Mapping[str, Any] | str) -> SearchResponse:
        """`search` for callers without an event loop; closes the transport's connections."""

        async def run() -> SearchResponse:
            try:
                return await self.search(request)
            finally:
                # An httpx client belongs to the loop it first ran on; the next call gets its own.
                await self.aclose()

        return asyncio.run(run())

    async def search(self, request: SearchRequest | Mapping[str, Any] | str) -> SearchResponse:
        """Run one search. Raises only for the caller's own mistakes (`InvalidRequest`,
        `PolicyViolation`); back-end failures are reported inside the response."""
        req = parse_request({"query": request} if isinstance(request, str) else request)
        now = datetime.now(UTC)
        started = time.perf_counter()
        deadline = started + self.settings.deadline_s
        timer = _Timer()
        settings = self.settings

        with timer.stage("guard"):
            guarded = guard(req.query, settings.guard)
        with timer.stage("rewrite"):
            rewritten = rewrite(guarded.text, req.context, settings.rewrite)
        check_include(req.include, settings.projection)
        chosen = self._choose_providers(req)
        mappings = {provider.name: self.mappings.for_provider(provider) for provider in chosen}

        with timer.stage("fan_out"):
            outcomes = await self._fan_out(chosen, mappings, req, guarded.text, rewritten, deadline)

        with timer.stage("normalize"):
            merged = self._merge(outcomes, req, now)
        candidates = merged.items
        with timer.stage("clean"):
            # Injections are judged on the text as sent: clean would strip <system> tags.
            candidates = screen(candidates, settings.injection)
            candidates = clean(candidates, settings.clean)
        with timer.stage("dedupe"):
            candidates = dedupe(candidates, settings.dedupe)
        with timer.stage("verify"):
            candidates = date_items(candidates, now, settings.dates)
            candidates = score_items(candidates, settings.trust, self.click_priors)
        with timer.stage("rank"):
            candidates = rank(candidates, rewritten.terms, settings.rank)
        top = candidates[: min(req.max_results, settings.projection.max_items)]
        with timer.stage("facts"):
            checked = check_facts(top, rewritten.terms, settings.facts)
            top = checked.items
        with timer.stage("project"):
            include = self._include_for(req, guarded.text, now)
            results = project(top, include, len(top), settings.projection)
        with timer.stage("summarize"):
            summary = summarize(top, rewritten.terms, rewritten.language, settings.summary)
            score = confidence(top, checked.facts, summary, rewritten.terms, settings.confidence)

        errors = merged.errors
        if not results:
            errors.append(
                NoResults(
                    "no results; try broader keywords, or drop time_range or domain_filter",
                    action="report",
                ).info()
            )
        timer.timings["total"] = round((time.perf_counter() - started) * 1000, 3)
        return SearchResponse(
            task_id=f"srch_{uuid.uuid4().hex}",
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

    def _choose_providers(self, req: SearchRequest) -> list[Provider]:
        enabled = [name for name, conf in self.settings.providers.items() if conf.enabled]
        names = req.providers if req.providers is not None else self.settings.chain
        chosen = []
        for name in dict.fromkeys(names):
            provider = registry.get(name)  # unknown names raise InvalidRequest
            if name not in enabled:
                raise InvalidRequest(
                    f"providers: {name!r} is not enabled here; allowed: {', '.join(enabled)}",
                    field="providers",
                    allowed=enabled,
                )
            chosen.append(provider)
        if not chosen:
            raise InvalidRequest(
                f"providers: name at least one; allowed: {', '.join(enabled)}",
                field="providers",
                allowed=enabled,
            )
        return chosen

    async def _fan_out(
        self,
        chosen: list[Provider],
        mappings: Mapping[str, FieldMapping],
        req: SearchRequest,
        guarded_text: str,
        rewritten: Rewritten,
        deadline: float,
    ) -> list[_Outcome]:
        tasks = {
            provider.name: asyncio.create_task(
                self._call(
                    provider, mappings[provider.name], req, guarded_text, rewritten, deadline
                )
            )
            for provider in chosen
        }
        started = time.perf_counter()
        await asyncio.wait(tasks.values(), timeout=max(0.0, deadline - started))
        waited_ms = (time.perf_counter() - started) * 1000
        outcomes = []
        for name, task in tasks.items():
            if task.done():
                outcomes.append(task.result())
                continue
            task.cancel()
            error = DeadlineExceeded(
                f"{name} had not answered when the {self.settings.deadline_s:.1f}s deadline passed",
                provider=name,
            )
            outcomes.append(_Outcome(name, error=error, latency_ms=waited_ms, status="timeout"))
        await asyncio.gather(*tasks.values(), return_exceptions=True)
        return outcomes

    async def _call(
        self,
        provider: Provider,
        mapping: FieldMapping,
        req: SearchRequest,
        guarded_text: str,
        rewritten: Rewritten,
        deadline: float,
    ) -> _Outcome:
        conf = self.settings.providers[provider.name]
        started = time.perf_counter()
        try:
            http_request = self._request_for(provider, req, guarded_text, rewritten)
            timeout = max(0.05, min(conf.timeout_s, deadline - time.perf_counter()))
            response = await self.transport.send(provider.name, req.query, http_request, timeout)
            hits = provider.parse_response(
                response.status, response.headers, response.body, mapping
            )
        except SearchError as exc:  # a provider error, or this provider's configuration
            exc.provider = exc.provider or provider.name
            status: ProviderStatus = "skipped" if isinstance(exc, MissingApiKey) else "error"
            latency = (time.perf_counter() - started) * 1000
            return _Outcome(provider.name, error=exc, latency_ms=latency, status=status)
        except Exception as exc:  # a bug or a changed back end: one provider, not the search
            log.exception("provider %s failed unexpectedly", provider.name)
            latency = (time.perf_counter() - started) * 1000
            error = ProviderError(
                f"{provider.name} failed unexpectedly: {type(exc).__name__}: {exc}"[:500],
                provider=provider.name,
            )
            return _Outcome(provider.name, error=error, latency_ms=latency, status="error")
        latency = (time.perf_counter() - started) * 1000
        return _Outcome(
            provider.name, hits=hits, latency_ms=latency, status="ok" if hits else "empty"
        )

    def _request_for(
        self, provider: Provider, req: SearchRequest, guarded_text: str, rewritten: Rewritten
    ) -> HttpRequest:
        """The provider's description of its call; `MissingApiKey` when it has no key."""
        conf = self.settings.providers[provider.name]
        api_key = (os.environ.get(conf.api_key_env) or None) if conf.api_key_env else None
        if api_key is None and self.settings.replay is not None:
            api_key = "replay-needs-no-key"  # the cassette answers; nothing is sent anywhere
        if api_key is None and (provider.info.needs_key or conf.api_key_env):
            where = f"${conf.api_key_env}" if conf.api_key_env else "no api_key_env configured"
            raise MissingApiKey(
                f"{provider.name} needs an API key ({where}); skipped",
                provider=provider.name,
                action="fallback",
            )
        natural = provider.info.query_style == "natural"
        query = ProviderQuery(
            text=guarded_text if natural else rewritten.keywords,
            original=req.query,
            max_results=max(req.max_results, self.settings.per_provider_results),
            language=rewritten.language,
            time_range=req.time_range if provider.info.time_range else "any",
            domain_filter=tuple(req.domain_filter) if provider.info.domain_filter else (),
        )
        settings = ProviderSettings(
            base_url=conf.base_url, timeout_s=conf.timeout_s, api_key=api_key, options=conf.options
        )
        return provider.build_request(query, settings)

    async def fetch_raw(
        self, provider_name: str, request: SearchRequest | Mapping[str, Any] | str
    ) -> RawResponse:
        """One provider's answer exactly as it came back, unparsed (`sleuth fields profile`)."""
        req = parse_request({"query": request} if isinstance(request, str) else request)
        guarded = guard(req.query, self.settings.guard)
        rewritten = rewrite(guarded.text, req.context, self.settings.rewrite)
        (provider,) = self._choose_providers(req.model_copy(update={"providers": [provider_name]}))
        http_request = self._request_for(provider, req, guarded.text, rewritten)
        timeout = self.settings.providers[provider.name].timeout_s
        return await self.transport.send(provider.name, req.query, http_request, timeout)

    def _merge(self, outcomes: list[_Outcome], req: SearchRequest, now: datetime) -> _Merged:
        """All providers' hits as one candidate list, with what each provider did."""
        merged = _Merged()
        for outcome in outcomes:
            hits = outcome.hits[: self.settings.per_provider_results]
            provider = registry.get(outcome.provider)
            plain = provider.info.text_format == "text"
            items = normalize(outcome.provider, hits, now, plain_text=plain)
            merged.items.extend(
                self._emulate_filters(provider, req, items, now, merged.degradations)
            )
            merged.reports[outcome.provider] = ProviderReport(
                status=outcome.status,
                latency_ms=round(outcome.latency_ms, 1),
                results=len(outcome.hits),
            )
            if outcome.error is not None:
                merged.errors.append(outcome.error.info())
                merged.degradations.append(
                    Degradation(
                        kind="provider_failed",
                        provider=outcome.provider,
                        reason=f"{outcome.error.code}: {outcome.error.message}",
                    )
                )
        return merged

    def _emulate_filters(
        self,
        provider: Provider,
        req: SearchRequest,
        items: list[ResultItem],
        now: datetime,
        degradations: list[Degradation],
    ) -> list[ResultItem]:
        if req.domain_filter and provider.info.domain_filter:
            # Native filters are often operators (site:) that engines treat as hints:
            # a result from another domain never reaches the agent either way.
            items = filter_domains(items, req.domain_filter)
        elif req.domain_filter:
            kept = filter_domains(items, req.domain_filter)
            degradations.append(
                Degradation(
                    kind="emulated_domain_filter",
                    provider=provider.name,
                    reason=f"{provider.name} cannot filter by domain; sleuth kept "
                    f"{len(kept)} of {len(items)} results from {', '.join(req.domain_filter)}",
                )
            )
            items = kept
        if req.time_range != "any" and not provider.info.time_range:
            kept = filter_time_range(items, req.time_range, now)
            degradations.append(
                Degradation(
                    kind="emulated_time_range",
                    provider=provider.name,
                    reason=f"{provider.name} cannot filter by date; sleuth kept {len(kept)} of "
                    f"{len(items)} results dated within {req.time_range} (undated ones dropped)",
                )
            )
            items = kept
        return items
