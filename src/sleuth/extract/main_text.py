"""A page's main text: trafilatura on a tree sleuth has pruned, then the headline cut.

trafilatura (pinned in pyproject.toml) is the best open-source extractor measured on
the article benchmark (`bench/extract.py`); sleuth runs it without its fallbacks
(`fast`: twice the speed, the same F1) and adds two rules that generalise:

- a list whose text is mostly link text (`LINK_DENSITY`, the share readability-style
  extractors use) is a list of pointers (related articles, "more from", tag clouds,
  share bars), never the article: dropped before extraction, which also speeds it up;
- the page's headline and the standfirst right after it are the page's `title` and
  description, not its body: leading lines that repeat the title (`<title>`,
  `og:title`, `twitter:title`, `<h1>`) are cut, and after them a line that repeats
  the page's description; and when the headline comes later, after lines that hold
  no sentence (`SENTENCE_WORDS`), those lines are the menus and tag lists the
  extractor took along, and are cut too.

The text is Markdown-light: paragraphs, `#` headings, `- ` lists, `|` tables and
fenced code blocks, one block a line.

>>> tree = parse_html("<html><head><title>Rain in Spain</title></head><body><article>"
...     "<h1>Rain in Spain</h1><p>It falls mainly on the plain, the old song says, and "
...     "the records agree with it for most years since the survey began.</p>"
...     "<ul><li><a href='/a'>Other story one</a></li><li><a href='/b'>Other story two"
...     "</a></li></ul></article></body></html>")
>>> text = main_text(tree, url=None)
>>> text.startswith("It falls mainly on the plain"), "Other story" in text
(True, False)
"""

from __future__ import annotations

import logging
import re

import trafilatura
from lxml.html import HtmlElement

__all__ = ["LINK_DENSITY", "SENTENCE_WORDS", "main_text", "parse_html", "title_lines"]

#: Share of a list's visible characters inside links above which it is navigation.
LINK_DENSITY = 0.5
#: A line of this many words or more is a sentence, not a menu entry.
SENTENCE_WORDS = 10
_WORDS = re.compile(r"\w+")


class _NotHtml(logging.Filter):
    """trafilatura logs an ERROR for every body that is not HTML ("parsed tree length:
    0, wrong data type or not valid HTML", "Document is empty"); for sleuth that is an
    answer (`parse_html` returns None and the caller says so), not an error."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "trafilatura.utils" and record.levelno == logging.ERROR)


logging.getLogger("trafilatura.utils").addFilter(_NotHtml())


def parse_html(html: str | bytes) -> HtmlElement | None:
    """The page as trafilatura parses it (comments and processing instructions out),
    or None when it is not HTML."""
    tree: HtmlElement | None = trafilatura.load_html(html)
    return tree


def _words(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def title_lines(tree: HtmlElement) -> tuple[set[str], set[str]]:
    """The page's headline forms and its descriptions, as lower-case word runs."""
    titles: set[str] = set()
    for path in (
        "//title/text()",
        "//meta[@property='og:title']/@content",
        "//meta[@name='twitter:title']/@content",
        "//h1",
    ):
        for value in tree.xpath(path):
            text = _words(value if isinstance(value, str) else value.text_content())
            if text:
                titles.add(text)
    descriptions = {
        _words(value)
        for value in tree.xpath(
            "//meta[@name='description']/@content|//meta[@property='og:description']/@content"
        )
    } - {""}
    return titles, descriptions


def _visible_length(text: str) -> int:
    return len(text) - text.count(" ") - text.count("\n") - text.count("\t")


def _drop_link_lists(tree: HtmlElement) -> None:
    for element in tree.xpath("//ul[li/a]|//ol[li/a]"):
        if len(element.findall("li")) < 2:
            continue
        total = _visible_length(element.text_content())
        linked = sum(_visible_length(link.text_content()) for link in element.iter("a"))
        if total and linked / total > LINK_DENSITY:
            element.drop_tree()


def _is_title(line: str, titles: set[str]) -> bool:
    # "Headline | Site" titles contain the headline; a short line ("News") is not one.
    return any(line == title or (len(line) > 20 and line in title) for title in titles)


def _after_navigation(lines: list[str], titles: set[str]) -> list[str]:
    """From the headline on, when what comes before it holds no sentence: menus and
    tag lists that the extractor took along."""
    for at, line in enumerate(lines):
        words = _words(line.lstrip("#"))
        if words and _is_title(words, titles):
            return lines[at:]
        if len(line.split()) >= SENTENCE_WORDS:
            break  # a sentence before any headline: the text starts here
    return lines


def _without_headline(text: str, titles: set[str], descriptions: set[str]) -> str:
    lines = _after_navigation(text.split("\n"), titles)
    cut_title = False
    while lines:
        words = _words(lines[0].lstrip("#"))
        if not words:
            lines.pop(0)
        elif _is_title(words, titles):
            cut_title = True
            lines.pop(0)
        elif cut_title and words in descriptions:
            # a description line is a standfirst only right under the headline; on
            # its own it is often the article's first paragraph
            lines.pop(0)
            break
        else:
            break
    return "\n".join(lines)


def main_text(tree: HtmlElement, url: str | None) -> str:
    """The main content of a parsed page as Markdown-light text ("" when there is
    none). Prunes `tree` in place: read metadata before."""
    titles, descriptions = title_lines(tree)
    _drop_link_lists(tree)
    text = trafilatura.extract(
        tree,
        url=url,
        fast=True,
        include_comments=False,
        include_tables=True,
        include_formatting=True,
        output_format="markdown",
    )
    return _without_headline(text or "", titles, descriptions).strip()
