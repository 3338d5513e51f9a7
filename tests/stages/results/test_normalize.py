"""Provider hits become ResultItems; dates are parsed as sent and never guessed."""

from datetime import UTC, datetime

import pytest

from sleuth.providers.base import RawHit
from sleuth.stages.results.normalize import normalize, parse_date

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("sent", "parsed"),
    [
        ("2026-11-01T08:30:00Z", datetime(2026, 11, 1, 8, 30, tzinfo=UTC)),
        ("2026-11-01 08:30:00", datetime(2026, 11, 1, 8, 30, tzinfo=UTC)),
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
        ("Sun, 01 Nov 2026 08:30:00 GMT", datetime(2026, 11, 1, 8, 30, tzinfo=UTC)),
        ("3 days ago", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_date(sent: str | None, parsed: datetime | None) -> None:
    assert parse_date(sent) == parsed


def test_normalize_keeps_what_was_sent_and_records_positions() -> None:
    hits = [
        RawHit(
            "https://www.Example.com/a",
            " Title A ",
            "Snippet A",
            "2026-11-29T12:00:00Z",
            {"engine": "x"},
        ),
        RawHit(None, "No link", None, "2027-01-01T00:00:00Z"),
    ]
    first, second = normalize("searxng", hits, NOW)
    assert first.url == "https://www.Example.com/a"
    assert first.domain == "example.com"
    assert first.title == "Title A"
    assert first.ranks == {"searxng": 1} and second.ranks == {"searxng": 2}
    assert first.freshness == "past_week"
    assert first.fields == {"engine": "x"}
    assert second.url is None and second.domain is None
    assert second.snippet == ""
    assert second.published_at is None  # a future date is not a fact
    assert first.id != second.id


def test_a_fallback_in_the_mapping_marks_the_item() -> None:
    (item,) = normalize(
        "brave", [RawHit("https://a.example/", "A", "extra", fell_back=("snippet",))], NOW
    )
    assert item.degraded is True and item.missing == ["snippet"]
