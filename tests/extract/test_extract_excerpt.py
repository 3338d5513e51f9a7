"""Excerpts: the passages nearest the query, within the budget, in page order."""

from pathlib import Path

from sleuth.extract.document import read_document
from sleuth.extract.excerpt import excerpt, passages

DATA = Path(__file__).resolve().parents[1] / "data" / "extract"


def test_the_answer_passage_is_chosen_within_the_budget() -> None:
    text = read_document((DATA / "article.html").read_bytes(), "text/html", None).text
    chosen = excerpt(text, ["fares", "cabin", "euros"], 300)
    assert chosen == (
        "Fares start at 59 euros for a seat and 149 euros for a private cabin, booked in "
        "advance. Rail passes are accepted with a reservation supplement."
    )


def test_chinese_queries_match_by_characters() -> None:
    body = (DATA / "article_zh.gb2312.html").read_bytes()
    text = read_document(body, "text/html", None).text
    chosen = excerpt(text, ["首班车", "时间"], 120)
    assert "## 首末班车时间\n工作日首班车为早上5时30分" in chosen
    assert "记者从北京市" not in chosen  # the opening holds neither word


def test_a_page_without_the_query_words_gives_its_opening() -> None:
    text = "First paragraph here.\n\nSecond paragraph here.\n\nThird."
    assert excerpt(text, ["zebra"], 50) == "First paragraph here.\n\nSecond paragraph here."


def test_a_passage_longer_than_the_budget_is_cut_at_a_word() -> None:
    text = "Vienna " + "word " * 100
    chosen = excerpt(text, ["vienna"], 40)
    assert len(chosen) <= 40 and chosen.startswith("Vienna word") and not chosen.endswith(" ")


def test_headings_travel_with_their_block() -> None:
    assert passages("# Title\n\nBody one.\n\n## Part\n\nBody two.") == [
        "# Title\nBody one.",
        "## Part\nBody two.",
    ]
