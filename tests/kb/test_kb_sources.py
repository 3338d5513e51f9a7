"""Named sources: folder tag rules, front matter tags, schedules and which are due."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from sleuth.kb.sources import (
    SourceConfig,
    check_source_name,
    due_sources,
    front_matter_tags,
    rule_tags,
)

RULES = {"urgent": ["urgent"], "*.md": ["ticket"], "2026/q4/*": ["q4"]}


def test_a_rule_without_a_slash_matches_any_name_on_the_path() -> None:
    assert rule_tags("urgent/disk-full.md", RULES) == ("urgent", "ticket")
    assert rule_tags("archive/urgent/old.txt", RULES) == ("urgent",)
    assert rule_tags("notes/urgently.txt", RULES) == ()


def test_a_rule_with_a_slash_matches_the_path_from_the_source_folder() -> None:
    assert rule_tags("2026/q4/oct.txt", RULES) == ("q4",)
    assert rule_tags("2026/q4/week1/mon.txt", RULES) == ("q4",)  # a folder below matches
    assert rule_tags("old/2026/q4/oct.txt", RULES) == ()


@pytest.mark.parametrize(
    ("value", "tags"),
    [
        (["Policy", "procedure", "policy"], ("policy", "procedure")),
        ("policy, procedure", ("policy", "procedure")),
        ("policy procedure", ("policy", "procedure")),
        (["release notes", 2026], ("release-notes", "2026")),
        ({"not": "a list"}, ()),
        (None, ()),
    ],
)
def test_front_matter_tags_as_lists_or_strings(value: object, tags: tuple[str, ...]) -> None:
    assert front_matter_tags(value) == tags


def test_source_names_hold_no_dot_or_space() -> None:
    assert check_source_name("Support_Tickets") == "support_tickets"
    assert check_source_name("客户反馈") == "客户反馈"
    for bad in ("python.org", "two words", "", "_x"):
        with pytest.raises(ValueError, match="not a source name"):
            check_source_name(bad)


def test_a_schedule_must_be_cron_syntax() -> None:
    assert SourceConfig(paths=["/srv/x"], schedule="*/30 * * * *").schedule == "*/30 * * * *"
    with pytest.raises(ValidationError, match="not a cron schedule"):
        SourceConfig(paths=["/srv/x"], schedule="every night")
    with pytest.raises(ValidationError, match="paths"):
        SourceConfig(paths=[])


def test_rule_tags_are_checked_and_lower_cased() -> None:
    assert SourceConfig(paths=["/x"], tags={"*": ["Policy"]}).tags == {"*": ["policy"]}
    with pytest.raises(ValidationError, match="not a tag"):
        SourceConfig(paths=["/x"], tags={"*": ["two words"]})


def test_due_sources_follow_each_schedule_from_the_last_run() -> None:
    sources = {
        "hourly": SourceConfig(paths=["/a"], schedule="0 * * * *"),
        "nightly": SourceConfig(paths=["/b"], schedule="0 3 * * *"),
        "manual": SourceConfig(paths=["/c"]),
        "new": SourceConfig(paths=["/d"], schedule="0 3 * * *"),
    }
    last = {
        "hourly": datetime(2026, 12, 1, 9, 10, tzinfo=UTC),
        "nightly": datetime(2026, 12, 1, 3, 0, 5, tzinfo=UTC),
        "manual": datetime(2020, 1, 1, tzinfo=UTC),
    }
    at_9_59 = datetime(2026, 12, 1, 9, 59, tzinfo=UTC)
    at_10 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
    next_night = datetime(2026, 12, 2, 3, 0, tzinfo=UTC)
    assert due_sources(sources, last, at_9_59) == ["new"]  # never indexed: due at once
    assert due_sources(sources, last, at_10) == ["hourly", "new"]
    assert due_sources(sources, last, next_night) == ["hourly", "nightly", "new"]
