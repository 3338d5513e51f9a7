"""From the fan-out's provider outcomes to one candidate list and the record of how
each provider fared: normalized items, per-provider reports, errors, degradations.

Each provider's hits are normalized into `ResultItem`s, and the filters a provider
cannot apply itself are emulated here (and reported as degradations); a native domain
filter is re-enforced, because engines treat `site:` operators as hints. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sleuth import providers as registry
from sleuth.contract import Degradation, ErrorInfo, ProviderReport, ResultItem, SearchRequest
from sleuth.providers.base import Provider
from sleuth.resilience.call import ProviderOutcome
from sleuth.stages.normalize import normalize
from sleuth.stages.scope import filter_domains, filter_time_range, in_sources, split_scope

__all__ = ["Merged", "merge_outcomes"]


@dataclass
class Merged:
    """The fan-out's hits as candidates, and the record of how each provider fared."""

    items: list[ResultItem] = field(default_factory=list)
    reports: dict[str, ProviderReport] = field(default_factory=dict)
    errors: list[ErrorInfo] = field(default_factory=list)
    degradations: list[Degradation] = field(default_factory=list)


def merge_outcomes(
    outcomes: Sequence[ProviderOutcome],
    req: SearchRequest,
    now: datetime,
    *,
    per_provider_results: int,
) -> Merged:
    """All providers' hits as one candidate list, with what each provider did."""
    merged = Merged()
    # The request was sent asking for this many (dispatch.request_for): keep them all,
    # or a request for 20 answers with `per_provider_results` (10) from one back end.
    keep = max(req.max_results, per_provider_results)
    for outcome in outcomes:
        hits = outcome.hits[:keep]
        provider = registry.get(outcome.provider)
        plain = provider.info.text_format == "text"
        items = normalize(outcome.provider, hits, now, plain_text=plain)
        merged.items.extend(_emulate_filters(provider, req, items, now, merged.degradations))
        merged.reports[outcome.provider] = ProviderReport(
            status=outcome.status,
            latency_ms=round(outcome.latency_ms, 1),
            results=len(outcome.hits),
            retries=outcome.retries,
        )
        merged.degradations.extend(outcome.degradations)
        if outcome.error is not None:
            merged.errors.append(outcome.error.info())
        if outcome.error is not None and outcome.status != "empty":
            merged.degradations.append(
                Degradation(
                    kind="provider_failed",
                    provider=outcome.provider,
                    reason=f"{outcome.error.code}: {outcome.error.message}",
                )
            )
    return merged


def _emulate_filters(
    provider: Provider,
    req: SearchRequest,
    items: list[ResultItem],
    now: datetime,
    degradations: list[Degradation],
) -> list[ResultItem]:
    domains, sources = split_scope(req.domain_filter)
    if provider.info.sources and (sources or req.tags):
        # Filtered by the back end itself; held to it here too, as native domain filters are.
        items = [
            item for item in items if in_sources(item, sources, req.tags, any_source=not sources)
        ]
    elif domains and provider.info.domain_filter:
        # Native filters are often operators (site:) that engines treat as hints:
        # a result from another domain never reaches the agent either way.
        items = filter_domains(items, domains)
    elif domains:
        kept = filter_domains(items, domains)
        degradations.append(
            Degradation(
                kind="emulated_domain_filter",
                provider=provider.name,
                reason=f"{provider.name} cannot filter by domain; sleuth kept "
                f"{len(kept)} of {len(items)} results from {', '.join(domains)}",
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
