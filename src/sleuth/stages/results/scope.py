"""Emulated filters: `time_range` and `domain_filter` for back ends that lack them.

The gateway applies these only to the hits of providers that could not honour the
filter natively, and records an `emulated_*` degradation saying so.
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


def refusal(domain_filter: Sequence[str], providers: Sequence[ProviderInfo]) -> str | None:
    """Why no chosen provider can honour the request, or None when one can.

    Emulation honours most filters after the fact; a domain filter over providers that
    return no web pages (the local knowledge base) would silently return nothing.
    """
    if domain_filter and not any(info.remote for info in providers):
        names = ", ".join(info.name for info in providers)
        return (
            f"domain_filter: {names} return no web pages, so no result can come from "
            f"{', '.join(domain_filter)}; add a web provider or drop domain_filter"
        )
    return None
