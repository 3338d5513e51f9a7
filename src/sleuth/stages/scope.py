"""Emulated filters: `time_range` and `domain_filter` for back ends that lack them.

The gateway applies these only to the hits of providers that could not honour the
filter natively, and records an `emulated_*` degradation saying so.

A `domain_filter` entry is a domain (it has a dot) or the name of a knowledge-base
source (`split_scope`): web results are kept by domain, the knowledge base's by source;
`tags` keep only knowledge-base documents that carry one of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sleuth.contract import ResultItem, TimeRange
from sleuth.providers.base import ProviderInfo

RANGE_SPAN: dict[TimeRange, timedelta | None] = {
    "any": None,
    "past_week": timedelta(days=7),
    "past_month": timedelta(days=31),
    "past_year": timedelta(days=366),
}


def split_scope(domain_filter: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The domains and the source names of a (normalised) `domain_filter`."""
    domains = tuple(entry for entry in domain_filter if "." in entry)
    return domains, tuple(entry for entry in domain_filter if "." not in entry)


def only_sources(domain_filter: Sequence[str], tags: Sequence[str]) -> bool:
    """Whether only providers that hold sources can answer: the request names no domain,
    and asks for tags or sources. (With domains too, web results are kept by domain
    and the knowledge base's by source and tag.)"""
    domains, sources = split_scope(domain_filter)
    return not domains and bool(tags or sources)


def in_sources(
    item: ResultItem, sources: Sequence[str], tags: Sequence[str], *, any_source: bool
) -> bool:
    """Whether a knowledge-base result is within the request's sources and tags
    (`any_source`: the request names none)."""
    source = item.fields.get("source")
    carried = item.fields.get("tags") or []
    return (any_source or source in sources) and (not tags or any(tag in carried for tag in tags))


def in_domains(domain: str | None, domains: Sequence[str]) -> bool:
    """True when `domain` is one of `domains` or a subdomain of one."""
    if domain is None:
        return False
    return any(domain == d or domain.endswith("." + d) for d in domains)


def filter_domains(items: Sequence[ResultItem], domains: Sequence[str]) -> list[ResultItem]:
    if not domains:
        return list(items)
    return [item for item in items if in_domains(item.domain, domains)]


def filter_time_range(
    items: Sequence[ResultItem], time_range: TimeRange, now: datetime
) -> list[ResultItem]:
    """Keep items dated within the range. Undated items are dropped: their age is unknown."""
    span = RANGE_SPAN[time_range]
    if span is None:
        return list(items)
    oldest = now - span
    return [item for item in items if item.published_at is not None and item.published_at >= oldest]


def refusal(
    domain_filter: Sequence[str], providers: Sequence[ProviderInfo], tags: Sequence[str] = ()
) -> tuple[str, str] | None:
    """The field and the reason no chosen provider can honour the request, or None
    when they can.

    Emulation honours most filters after the fact; but a domain over providers that
    return no web pages (the local knowledge base), or a source name or a tag over
    providers that hold no sources, would silently return nothing.
    """
    domains, sources = split_scope(domain_filter)
    names = ", ".join(info.name for info in providers)
    if domains and not any(info.remote for info in providers):
        return "domain_filter", (
            f"domain_filter: {names} return no web pages, so no result can come from "
            f"{', '.join(domains)}; add a web provider or drop the domains"
        )
    holds_sources = any(info.sources for info in providers)
    if sources and not holds_sources:
        return "domain_filter", (
            f"domain_filter: {names} hold no knowledge-base sources, so no result can come "
            f"from {', '.join(sources)}; add the local provider or drop the source names"
        )
    if tags and not holds_sources:
        return "tags", (
            f"tags: only the local knowledge base holds tagged documents, and {names} are "
            "web back ends; add local to providers or drop tags"
        )
    return None
