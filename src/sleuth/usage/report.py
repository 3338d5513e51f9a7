"""Usage rows summed per period (UTC day or month), optionally per group. Pure.

Every sum is an integer sum of micro-units, shown as an exact decimal string per
currency: the periods' costs add up to the total's, and the total to the rows'.

>>> from sleuth.store.usage_records import UsageRow
>>> rows = [UsageRow(0.0, "acme", "kagi", "ok", 25000, currency="USD"),
...         UsageRow(60.0, "acme", "brave", "error", 0, currency=None),
...         UsageRow(90.0, "acme", "kagi", "cached", 0, 25000, "USD")]
>>> day = summarise(rows, "day")[0]
>>> day["period"], day["calls"], day["failures"], day["cache_hits"], day["cost"]
('1970-01-01', 2, 1, 1, {'USD': '0.025000'})
>>> day["cache_savings"]
{'USD': '0.025000'}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any

from sleuth.errors import InvalidRequest
from sleuth.store.usage_records import UsageRow, period_starts
from sleuth.usage.groups import GROUPS, Group
from sleuth.usage.prices import format_micros
from sleuth.usage.settings import Period

__all__ = [
    "GROUPS",
    "Group",
    "Totals",
    "day_start",
    "default_range",
    "period_label",
    "period_range",
    "requested_groups",
    "requested_range",
    "summarise",
    "total",
]

_FAILED = frozenset({"error", "timeout"})
#: 9999-12-31T23:59:59Z, the last second a `datetime` can show.
_LAST_SECOND = 253_402_300_799.0


@dataclass
class Totals:
    """The sums of some rows."""

    calls: int = 0
    failures: int = 0
    cache_hits: int = 0
    unpriced_calls: int = 0
    cost_micros: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    saved_micros: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, row: UsageRow) -> None:
        if row.outcome == "cached":
            self.cache_hits += 1
            if row.saved_micros and row.currency:
                self.saved_micros[row.currency] += row.saved_micros
            return
        self.calls += 1
        self.failures += row.outcome in _FAILED
        if row.cost_micros is None:
            self.unpriced_calls += 1
        elif row.cost_micros and row.currency:
            self.cost_micros[row.currency] += row.cost_micros

    def as_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "failures": self.failures,
            "cache_hits": self.cache_hits,
            "unpriced_calls": self.unpriced_calls,
            "cost": {c: format_micros(n) for c, n in sorted(self.cost_micros.items())},
            "cost_micros": dict(sorted(self.cost_micros.items())),
            "cache_savings": {c: format_micros(n) for c, n in sorted(self.saved_micros.items())},
            "cache_savings_micros": dict(sorted(self.saved_micros.items())),
        }


def period_label(at: float, period: Period) -> str:
    """ "YYYY-MM-DD" or "YYYY-MM" (UTC) of the time `at`."""
    return _day_label(int(at // 86400), period)


@lru_cache(maxsize=4096)
def _day_label(day: int, period: Period) -> str:
    # By day number: a month of rows formats some 31 labels, not one per row.
    moment = datetime.fromtimestamp(day * 86400, UTC)
    return moment.strftime("%Y-%m-%d" if period == "day" else "%Y-%m")


def period_range(label: str) -> tuple[float, float]:
    """The [start, end) epoch seconds of a "YYYY-MM-DD" day or "YYYY-MM" month.

    >>> period_range("2026-12")[1] - period_range("2026-12")[0] == 31 * 86400
    True
    """
    if len(label) == 7:
        start = datetime.strptime(label, "%Y-%m").replace(tzinfo=UTC)
        end = start.replace(year=start.year + start.month // 12, month=start.month % 12 + 1)
    else:
        start = datetime.strptime(label, "%Y-%m-%d").replace(tzinfo=UTC)
        end = datetime.fromtimestamp(start.timestamp() + 86400, UTC)
    return start.timestamp(), end.timestamp()


def summarise(
    rows: Iterable[UsageRow], period: Period, by: Sequence[Group] = ()
) -> list[dict[str, Any]]:
    """One entry per period that has rows, oldest first: its totals, and with `by`
    the totals of each value of each group (`"none"` for rows without one)."""
    totals: dict[str, Totals] = {}
    groups: dict[str, dict[str, dict[str, Totals]]] = {}
    for row in rows:
        label = period_label(row.at, period)
        if label not in totals:
            totals[label] = Totals()
            groups[label] = {group: {} for group in by}
        totals[label].add(row)
        for group in by:
            value = str(getattr(row, group) or "none")
            per = groups[label][group]
            if value not in per:
                per[value] = Totals()
            per[value].add(row)
    found = []
    for label in sorted(totals):
        entry = {"period": label, **totals[label].as_json()}
        for group in by:
            entry[f"by_{group}"] = {
                value: sums.as_json() for value, sums in sorted(groups[label][group].items())
            }
        found.append(entry)
    return found


def total(rows: Iterable[UsageRow]) -> dict[str, Any]:
    """The totals of all `rows`."""
    sums = Totals()
    for row in rows:
        sums.add(row)
    return sums.as_json()


def day_start(text: str, field: str) -> float:
    """The start (UTC) of the day "YYYY-MM-DD" or the month "YYYY-MM"; `InvalidRequest`
    naming `field` otherwise.

    >>> day_start("2026-12", "since") == day_start("2026-12-01", "since")
    True
    """
    try:
        return period_range(text.strip())[0]
    except ValueError:
        raise InvalidRequest(
            f"{field}: {text!r} is not a date; allowed: YYYY-MM-DD or YYYY-MM (UTC)",
            field=field,
            allowed=["YYYY-MM-DD", "YYYY-MM"],
        ) from None


def default_range(period: Period, now: float) -> tuple[float, float]:
    """[since, until) when a report names neither: the last 30 days for `day`, the
    last 12 months for `month`, to now."""
    day, month = period_starts(now)
    if period == "day":
        return day - 29 * 86400, now
    moment = datetime.fromtimestamp(month, UTC)
    year, index = divmod(moment.year * 12 + moment.month - 1 - 11, 12)
    return datetime(year, index + 1, 1, tzinfo=UTC).timestamp(), now


def requested_range(
    period: Period,
    since: str | date | None,
    until: str | date | None,
    now: float,
    *,
    fields: tuple[str, str] = ("since", "until"),
) -> tuple[float, float]:
    """[since, until) of a report asked for by dates (a `date`, or "YYYY-MM-DD" or
    "YYYY-MM"; `until` is the last day or month included), else `default_range`; the
    errors name `fields`. An `until` before `since` is an empty range: nothing to
    report, not an error."""
    start, end = default_range(period, now)
    if since is not None:
        start = _bounds(since, fields[0])[0]
    if until is not None:
        end = min(_bounds(until, fields[1])[1], _LAST_SECOND)
    return start, max(start, end)


def _bounds(value: str | date, field: str) -> tuple[float, float]:
    if isinstance(value, date):
        # Arithmetic on the timestamp: the day after 9999-12-31 is no `datetime`.
        start = datetime(value.year, value.month, value.day, tzinfo=UTC).timestamp()
        return start, start + 86400
    day_start(value, field)
    return period_range(value.strip())


def requested_groups(by: str | None, field: str = "by") -> list[Group]:
    """The groups named in a comma-separated `by`, in `GROUPS` order."""
    chosen = [part.strip() for part in (by or "").split(",") if part.strip()]
    unknown = [part for part in chosen if part not in GROUPS]
    if unknown:
        raise InvalidRequest(
            f"{field}: {', '.join(unknown)} is not a group; allowed: {', '.join(GROUPS)}",
            field=field.lstrip("-"),
            allowed=list(GROUPS),
        )
    return [group for group in GROUPS if group in chosen]
