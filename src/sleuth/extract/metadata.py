"""What a page states about itself: title, author, site name, language, and when it
was published and last modified.

Dates come only from where a page states them, in this order: `<meta>` tags
(`article:published_time`, `og:updated_time`, `datePublished` microdata, Dublin
Core, parse.ly, sailthru), JSON-LD (`datePublished`, `dateModified`), a `<time>`
element marked as the publication (`itemprop`, `pubdate`, a class naming
"published" or "updated"), and a visible byline that says what the date is
("Published March 3, 2025", "Updated: ...", "发布时间：2025年3月3日", "更新于 ...").
A date that is merely somewhere on the page is never taken: a page with no stated
date has none.

>>> from sleuth.extract.main_text import parse_html
>>> facts = page_facts(parse_html('<html lang="zh-CN"><head><title>天气</title></head>'
...     '<body><p class="byline">发布时间：2025年3月3日 10:00</p><p>今天晴。</p></body></html>'))
>>> facts.published_at.date(), facts.language
(datetime.date(2025, 3, 3), 'zh-CN')
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from lxml.html import HtmlElement

from sleuth.stages.verify.dates import DateSettings, find_date

__all__ = ["PageFacts", "page_facts", "parse_stamp"]

_PUBLISHED_META = (
    "article:published_time", "og:published_time", "published_time", "datepublished",
    "dc.date", "dc.date.issued", "dcterms.created", "dcterms.issued", "parsely-pub-date",
    "sailthru.date", "publish-date", "publishdate", "pubdate", "date", "article.published",
)  # fmt: skip
_MODIFIED_META = (
    "article:modified_time", "og:updated_time", "datemodified", "dcterms.modified",
    "last-modified", "article.updated", "modified_time",
)  # fmt: skip
_AUTHOR_META = ("author", "article:author", "dc.creator", "parsely-author", "sailthru.author")
_SITE_META = ("og:site_name", "application-name", "publisher")
_BYLINE = re.compile(
    r"(?P<cue>first published|published|posted|last updated|updated|modified|"
    r"发布时间|发布于|发表于|发表时间|发布日期|更新时间|更新于|最后更新|修改时间)"
    r"\s*(?:on|at)?\s*[:：]?\s*",
    re.IGNORECASE,
)
_STAMP_CHARS = 40  # what follows a cue that can be its date
_MODIFIED_CUES = ("updated", "modified", "更新", "修改")
_BYLINE_AUTHOR = re.compile(
    r"(?:作者|记者|文)\s*[:：/]\s*([\w·]{2,12})|^By\s+([A-Z][\w.'-]+(?: [A-Z][\w.'-]+){0,3})"
)
_BYLINE_PLACES = (
    "//*[contains(@class,'byline') or contains(@class,'date') or contains(@class,'time')"
    " or contains(@class,'meta') or contains(@class,'info')][string-length(normalize-space())<200]"
)
# A bare date at noon UTC: a date with no time must not move a day in another zone.
_DAY_ONLY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True)
class PageFacts:
    title: str | None = None
    published_at: datetime | None = None
    modified_at: datetime | None = None
    author: str | None = None
    site_name: str | None = None
    language: str | None = None


def parse_stamp(value: str) -> datetime | None:
    """An ISO 8601 stamp as a timezone-aware datetime (UTC when it names no zone).

    >>> parse_stamp("2025-03-03T10:00:00Z").isoformat()
    '2025-03-03T10:00:00+00:00'
    >>> parse_stamp("yesterday") is None
    True
    """
    text = value.strip()
    if not text or not text[:4].isdigit():
        return None
    try:
        if _DAY_ONLY.match(text[:10]) and len(text) == 10:
            return datetime.fromisoformat(text).replace(hour=12, tzinfo=UTC)
        found = datetime.fromisoformat(text.replace(" ", "T", 1))
    except ValueError:
        return None
    return found if found.tzinfo else found.replace(tzinfo=UTC)


def _clean(value: str | None) -> str | None:
    text = " ".join((value or "").split())
    return text or None


def _meta(tree: HtmlElement, names: tuple[str, ...]) -> Iterator[str]:
    wanted = set(names)
    for element in tree.iter("meta"):
        key = (
            element.get("property") or element.get("name") or element.get("itemprop") or ""
        ).lower()
        if key in wanted and (content := element.get("content")):
            yield content


def _json_ld(tree: HtmlElement) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for script in tree.xpath("//script[@type='application/ld+json']"):
        try:
            data = json.loads(script.text or "")
        except (json.JSONDecodeError, TypeError):
            continue
        stack = [data]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                objects.append(node)
                stack.extend(node.get("@graph", []))
    return objects


def _name(value: Any) -> str | None:
    if isinstance(value, list):
        names = [name for item in value if (name := _name(item))]
        return ", ".join(names) or None
    if isinstance(value, dict):
        value = value.get("name")
    return _clean(value) if isinstance(value, str) else None


def _first_stamp(values: Iterator[str]) -> datetime | None:
    for value in values:
        if found := parse_stamp(value):
            return found
    return None


def _time_elements(tree: HtmlElement, kind: str) -> Iterator[str]:
    prop = "datePublished" if kind == "published" else "dateModified"
    for element in tree.iter("time"):
        marked = (
            element.get("itemprop") == prop
            or (kind == "published" and element.get("pubdate") is not None)
            or kind in (element.get("class") or "").lower()
        )
        if marked and (stamp := element.get("datetime") or element.text_content()):
            yield stamp


def _byline_texts(tree: HtmlElement) -> list[str]:
    return [" ".join(element.text_content().split()) for element in tree.xpath(_BYLINE_PLACES)[:50]]


def _byline_author(lines: list[str]) -> str | None:
    for line in lines:
        if match := _BYLINE_AUTHOR.search(line):
            return match.group(1) or match.group(2)
    return None


def _headline(tree: HtmlElement) -> str | None:
    """The page's one `<h1>` when the `<title>` holds it ("Headline | Site" titles),
    else the `<title>`."""
    title = _clean(tree.findtext(".//title"))
    headings = tree.xpath("//h1")
    if len(headings) == 1 and title:
        heading = _clean(headings[0].text_content())
        if heading and heading in title:
            return heading
    return title


def _bylines(lines: list[str]) -> tuple[datetime | None, datetime | None]:
    published = modified = None
    now = datetime.now(UTC)
    settings = DateSettings()
    for line in lines:
        cues = list(_BYLINE.finditer(line))
        if not cues:
            continue
        # each cue's date runs to the next cue ("Published ... · Updated ...")
        ends = [later.start() for later in cues[1:]] + [len(line)]
        for match, end in zip(cues, ends, strict=True):
            stamp = line[match.end() : min(end, match.end() + _STAMP_CHARS)]
            if len(stamp) < 6:
                continue
            found = parse_stamp(stamp.split()[0]) if stamp[:4].isdigit() else None
            if found is None:
                date = find_date("", stamp, None, now, settings)
                found = date.at if date is not None else None
            if found is None:
                continue
            if any(cue in match.group("cue").lower() for cue in _MODIFIED_CUES):
                modified = modified or found
            else:
                published = published or found
    return published, modified


def page_facts(tree: HtmlElement) -> PageFacts:
    """Read the page's own statements; parse before pruning (see `main_text`)."""
    ld = _json_ld(tree)
    keys = ("headline", "datePublished", "dateModified", "author", "publisher", "inLanguage")
    ld_value = {key: next((o[key] for o in ld if key in o), None) for key in keys}
    title = next(_meta(tree, ("og:title", "twitter:title")), None) or _name(ld_value["headline"])
    if not title:
        title = _headline(tree)
    published = (
        _first_stamp(_meta(tree, _PUBLISHED_META))
        or _first_stamp(iter([str(ld_value["datePublished"] or "")]))
        or _first_stamp(_time_elements(tree, "published"))
    )
    modified = (
        _first_stamp(_meta(tree, _MODIFIED_META))
        or _first_stamp(iter([str(ld_value["dateModified"] or "")]))
        or _first_stamp(_time_elements(tree, "updated"))
    )
    bylines: list[str] | None = None  # read only when the markup did not say
    if published is None or modified is None:
        bylines = _byline_texts(tree)
        from_byline = _bylines(bylines)
        published = published or from_byline[0]
        modified = modified or from_byline[1]
    author = next((a for a in _meta(tree, _AUTHOR_META) if not a.startswith("http")), None)
    author = _clean(author) or _name(ld_value["author"])
    if author is None:
        author = _byline_author(_byline_texts(tree) if bylines is None else bylines)
    site = next(_meta(tree, _SITE_META), None) or _name(ld_value["publisher"])
    language = tree.get("lang") or next(_meta(tree, ("content-language", "og:locale")), None)
    return PageFacts(
        title=_clean(title),
        published_at=published,
        modified_at=modified,
        author=author,
        site_name=_clean(site),
        language=_clean(language) or _clean(str(ld_value["inLanguage"] or "")),
    )
