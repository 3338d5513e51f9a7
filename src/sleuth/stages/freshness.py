"""How fresh a result is, by the date it was published: one labelling for the stages
that date results (`results.normalize` from the provider's date, `verify.dates` from
the result's own text or page), in a module of its own so that neither imports the
other (normalize reads provider hits; a provider reads dates)."""

from __future__ import annotations

from datetime import datetime, timedelta

from sleuth.contract import Freshness

__all__ = ["freshness_of"]

_NO_AGE = timedelta(0)
_DAY = timedelta(hours=24)
_WEEK = timedelta(days=7)
_MONTH = timedelta(days=31)


def freshness_of(published_at: datetime | None, now: datetime) -> Freshness:
    """realtime (<24 h), past_week, past_month (31 days), archive; unknown if undated or future."""
    if published_at is None:
        return "unknown"
    age = now - published_at
    if age < _NO_AGE:
        return "unknown"
    if age < _DAY:
        return "realtime"
    if age < _WEEK:
        return "past_week"
    if age < _MONTH:
        return "past_month"
    return "archive"
