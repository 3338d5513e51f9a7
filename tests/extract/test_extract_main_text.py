"""The main-text rules sleuth adds to trafilatura, each on a page built to need it."""

import logging

import pytest

from sleuth.extract.main_text import main_text, parse_html

_BODY = (
    "<p>The council approved the new cycle lanes on Tuesday after a two-hour debate, "
    "with nine votes in favour and four against the plan.</p>"
    "<p>Work on the first section, along the river, starts in March and should take "
    "about six weeks, the transport department said.</p>"
)


def text_of(html: str) -> str:
    tree = parse_html(html)
    assert tree is not None
    return main_text(tree, url=None)


def test_the_headline_and_standfirst_are_not_body() -> None:
    text = text_of(
        "<html><head><title>Cycle lanes approved | City News</title>"
        '<meta name="description" content="Nine councillors backed the plan."></head>'
        "<body><article><h1>Cycle lanes approved</h1><p>Nine councillors backed the plan.</p>"
        f"{_BODY}</article></body></html>"
    )
    assert text.startswith("The council approved the new cycle lanes")


def test_a_description_that_opens_the_article_stays() -> None:
    # without a headline above it, the description line is the article's first paragraph
    text = text_of(
        "<html><head><title>City News</title><meta name='description' content='The council "
        "approved the new cycle lanes on Tuesday after a two-hour debate, with nine votes in "
        f"favour and four against the plan.'></head><body><article>{_BODY}</article></body></html>"
    )
    assert text.startswith("The council approved the new cycle lanes")


def test_link_lists_are_dropped_and_lists_of_text_kept() -> None:
    text = text_of(
        "<html><body><article>"
        f"{_BODY}<ul><li>Nine votes in favour of the plan</li><li>Four votes against it</li></ul>"
        "<ul><li><a href='/a'>Bus fares rise in May</a></li>"
        "<li><a href='/b'>New bridge opens to walkers</a></li></ul></article></body></html>"
    )
    assert "- Nine votes in favour of the plan" in text
    assert "Bus fares" not in text and "New bridge" not in text


def test_menus_before_the_headline_are_cut() -> None:
    menu = "".join(f"<div>{word}</div>" for word in ("Home", "News", "Sport", "Weather", "Tags"))
    text = text_of(
        f"<html><head><title>Cycle lanes approved</title></head><body>{menu}"
        f"<div><div>Cycle lanes approved</div>{_BODY}</div></body></html>"
    )
    assert "Sport" not in text and "Weather" not in text
    assert "The council approved" in text


def test_headings_code_and_tables_keep_their_shape() -> None:
    text = text_of(
        "<html><body><article>"
        f"{_BODY}<h2>How to apply</h2><p>Send the form below to the council office before "
        "the end of the month, with a copy of your permit.</p>"
        "<pre><code>apply --permit 1234\napply --status</code></pre>"
        "<table><tr><th>Street</th><th>Start</th></tr><tr><td>River Road</td><td>March</td>"
        "</tr></table></article></body></html>"
    )
    assert "## How to apply" in text
    assert "```\napply --permit 1234\napply --status\n```" in text
    assert "| River Road | March |" in text


def test_a_body_that_is_not_html_is_none_and_logs_no_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.DEBUG):
        for body in ("just a line of plain text", '{"results": []}', "", b"%PDF-1.4 \x00\x01"):
            assert parse_html(body) is None
    assert [
        record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR
    ] == []
