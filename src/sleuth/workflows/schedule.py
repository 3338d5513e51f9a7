"""Cron slots: when a scheduled workflow is due, the window each run covers, and the
key that makes each slot one run. Pure (the clock is the caller's).

A run for slot S covers [previous slot, S): a document changed at 10:00:30 is in the
run of the 10:01 slot of an every-minute schedule, and in no other, so runs that
follow each other process each change once. The idempotency key names the workflow
and the slot, so every worker and replica that sees the slot come submits the same
task, and the store keeps one.

>>> from datetime import datetime, UTC
>>> at = datetime(2026, 12, 1, 10, 2, 30, tzinfo=UTC)
>>> [s.strftime("%H:%M") for s in due_slots("* * * * *", after=at.replace(minute=0), now=at)]
['10:01', '10:02']
>>> [t.strftime("%H:%M") for t in window("* * * * *", at.replace(second=0))]
['10:01', '10:02']
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

__all__ = ["due_slots", "latest_slots", "slot_key", "window"]


def _utc(moment: datetime) -> datetime:
    return moment.astimezone(UTC) if moment.tzinfo else moment.replace(tzinfo=UTC)


def due_slots(
    expression: str, *, after: datetime, now: datetime, limit: int = 1000
) -> list[datetime]:
    """The slots in (after, now], oldest first (at most `limit`, the newest kept)."""
    from croniter import croniter  # here: a search that runs no schedule never needs it

    found: list[datetime] = []
    cursor = croniter(expression, _utc(after))
    while True:
        slot = cursor.get_next(datetime)
        if slot > _utc(now):
            break
        found.append(slot)
    return found[-limit:] if limit else []


def latest_slots(
    expression: str, *, now: datetime, count: int, not_before: datetime
) -> list[datetime]:
    """The `count` most recent slots at or before `now` and after `not_before`,
    oldest first: what a scheduler starting now catches up on."""
    from croniter import croniter  # here: a search that runs no schedule never needs it

    found: list[datetime] = []
    cursor = croniter(expression, _utc(now) + timedelta(microseconds=1))
    while len(found) < count:
        slot = cursor.get_prev(datetime)
        if slot <= _utc(not_before):
            break
        found.append(slot)
    return sorted(found)


def window(expression: str, slot: datetime) -> tuple[datetime, datetime]:
    """(since, until) of the run of `slot`: since the previous slot, until this one."""
    from croniter import croniter  # here: a search that runs no schedule never needs it

    previous = croniter(expression, _utc(slot)).get_prev(datetime)
    return previous, _utc(slot)


def slot_key(workflow: str, slot: datetime) -> str:
    return f"workflow:{workflow}:{_utc(slot).isoformat()}"
