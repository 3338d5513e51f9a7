"""The freshness label of a result, by the date it was published."""

from datetime import UTC, datetime, timedelta

import pytest

from sleuth.stages.freshness import freshness_of

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("age", "label"),
    [
        (timedelta(hours=2), "realtime"),
        (timedelta(days=3), "past_week"),
        (timedelta(days=20), "past_month"),
        (timedelta(days=400), "archive"),
        (timedelta(days=-1), "unknown"),
    ],
)
def test_freshness_from_the_providers_date(age: timedelta, label: str) -> None:
    assert freshness_of(NOW - age, NOW) == label
    assert freshness_of(None, NOW) == "unknown"
