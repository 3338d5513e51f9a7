"""Emulated filters: `time_range` and `domain_filter` for back ends that lack them.

The gateway applies these only to the hits of providers that could not honour the
filter natively, and records an `emulated_*` degradation saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from sleuth.contract import ResultItem, TimeRange

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
