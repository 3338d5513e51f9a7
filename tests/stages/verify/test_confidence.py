"""The answer's confidence: a first result that answers the question counts."""

from __future__ import annotations

from sleuth.contract import ResultItem
from sleuth.stages.verify.confidence import ConfidenceSettings, confidence


def item(title: str, snippet: str) -> ResultItem:
    return ResultItem(
        id=title, url=None, title=title, snippet=snippet, providers=["local"], ranks={"local": 1}
    )


QUERY = ["vacuum", "full", "disk", "space"]


def test_a_first_result_that_covers_the_question_is_more_confident() -> None:
    answering = [
        item("Recovering Disk Space", "VACUUM FULL returns disk space to the system."),
        item("Routine Vacuuming", "Plain vacuum marks space reusable."),
    ]
    scattered = [
        item("Full Text Search", "Searching documents."),
        item("Disk Usage", "Determining disk usage of tables."),
        item("Routine Vacuuming", "Plain vacuum marks space reusable."),
    ]
    settings = ConfidenceSettings()
    # Both lists hold every query word somewhere; only the first answers with its first.
    assert confidence(answering, [], [], QUERY, settings) > confidence(
        scattered, [], [], QUERY, settings
    )


def test_no_results_no_confidence() -> None:
    assert confidence([], [], [], QUERY, ConfidenceSettings()) == 0.0
