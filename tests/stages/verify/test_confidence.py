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


FIRST = ("Recovering Disk Space", "VACUUM FULL returns disk space to the system.")
SECOND = ("Routine Vacuuming", "Plain vacuum marks space reusable.")


def scored(title: str, snippet: str, score: float, provider: str = "local") -> ResultItem:
    return item(title, snippet).model_copy(
        update={"providers": [provider], "fields": {"score": score}}
    )


def test_a_knowledge_base_answer_whose_first_page_stands_out_is_more_confident() -> None:
    settings = ConfidenceSettings()
    clear = confidence([scored(*FIRST, 9.0), scored(*SECOND, 3.0)], [], [], QUERY, settings)
    close = confidence([scored(*FIRST, 9.0), scored(*SECOND, 8.8)], [], [], QUERY, settings)
    assert close < 0.5 < 0.7 < clear <= 1.0


def test_a_first_page_the_knowledge_base_scored_below_another_is_not_confident() -> None:
    settings = ConfidenceSettings()
    reordered = confidence([scored(*FIRST, 5.0), scored(*SECOND, 9.0)], [], [], QUERY, settings)
    leading = confidence([scored(*FIRST, 9.0), scored(*SECOND, 5.0)], [], [], QUERY, settings)
    assert 0.0 < reordered < leading


def test_web_answers_ignore_their_back_ends_scores() -> None:
    settings = ConfidenceSettings()
    plain = confidence([item(*FIRST), item(*SECOND)], [], [], QUERY, settings)
    for scores in ((9.0, 3.0), (9.0, 8.8)):
        web = [scored(*FIRST, scores[0], "tavily"), scored(*SECOND, scores[1], "tavily")]
        assert confidence(web, [], [], QUERY, settings) == plain


def test_one_knowledge_base_result_is_as_confident_as_the_same_answer_with_more() -> None:
    settings = ConfidenceSettings()
    alone = scored(*FIRST, 9.0).model_copy(update={"fields": {"score": 9.0, "next_score": 8.8}})
    both = confidence([alone, scored(*SECOND, 8.8)], [], [], QUERY, settings)
    assert confidence([alone], [], [], QUERY, settings) == both
