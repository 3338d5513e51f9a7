"""Cron slots: each change falls in exactly one run's window, and a slot is one key."""

import itertools
from datetime import UTC, datetime, timedelta

from sleuth.workflows.schedule import due_slots, latest_slots, slot_key, window

T = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def test_due_slots_are_those_after_the_last_look_up_to_now() -> None:
    assert due_slots("* * * * *", after=T, now=T + timedelta(minutes=2, seconds=5)) == [
        T + timedelta(minutes=1),
        T + timedelta(minutes=2),
    ]
    assert due_slots("* * * * *", after=T, now=T + timedelta(seconds=59)) == []
    assert due_slots("0 2 * * *", after=T, now=T + timedelta(days=1)) == [
        datetime(2026, 12, 2, 2, 0, tzinfo=UTC)
    ]


def test_consecutive_windows_meet_without_gap_or_overlap() -> None:
    slots = [T + timedelta(minutes=n) for n in range(1, 5)]
    windows = [window("* * * * *", slot) for slot in slots]
    for (_, until), (since, _) in itertools.pairwise(windows):
        assert until == since
    assert window("0 2 * * *", datetime(2026, 12, 2, 2, 0, tzinfo=UTC)) == (
        datetime(2026, 12, 1, 2, 0, tzinfo=UTC),
        datetime(2026, 12, 2, 2, 0, tzinfo=UTC),
    )


def test_catching_up_takes_the_latest_slots_no_older_than_allowed() -> None:
    now = T + timedelta(minutes=3, seconds=30)
    assert latest_slots("* * * * *", now=now, count=2, not_before=T) == [
        T + timedelta(minutes=2),
        T + timedelta(minutes=3),
    ]
    assert latest_slots("* * * * *", now=now, count=10, not_before=T) == [
        T + timedelta(minutes=n) for n in (1, 2, 3)
    ]
    assert latest_slots("* * * * *", now=now, count=0, not_before=T) == []


def test_a_slot_key_names_the_workflow_and_the_slot() -> None:
    assert slot_key("steward", T) == "workflow:steward:2026-12-01T10:00:00+00:00"
    assert slot_key("steward", T) != slot_key("steward", T + timedelta(minutes=1))
