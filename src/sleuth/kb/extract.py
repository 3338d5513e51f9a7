"""Turn one file's bytes into what the knowledge base stores: title, plain text, date.

Markdown (.md, .markdown), plain text (.txt) and HTML (.html, .htm) are understood.
YAML front matter is read for the date (`published_at`, `published` or `date`) and a
fallback title, and never reaches the text. The plain text keeps its blocks (heading,
paragraph, list item, code block) separated by a blank line, so passages never run
across them. No I/O here: the indexer reads the file and passes bytes and mtime in.

>>> doc = parse_document(Path("a.md"), b"# Caching\\n\\nKeep **hot** data [close](x).", 0.0)
>>> doc.title, doc.body, doc.published_at
('Caching', 'Caching\\n\\nKeep hot data close.', '1970-01-01T00:00:00+00:00')
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

import nh3
import yaml

Kind = Literal["markdown", "text", "html"]

KINDS: dict[str, Kind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
}
# Front matter keys for the publication date, most specific first.
_DATE_KEYS = ("published_at", "published", "date")

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_BLANK_LINES = re.compile(r"\n\s*\n")

# Markdown, line level.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+.*$")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")

# Markdown, inline.
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_INLINE_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_STAR_EM = re.compile(r"\*(?=[^\s*])(.+?)(?<=[^\s*])\*")
_UNDERSCORE_EM = re.compile(r"(?<![^\W_])_(?=\S)(.+?)(?<=\S)_(?![^\W_])")
_STRIKE = re.compile(r"~~(.+?)~~")

# HTML.
_HTML_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_HTML_H1 = re.compile(r"<h1\b[^>]*>(.*?)</h1\s*>", re.IGNORECASE | re.DOTALL)
_HTML_BREAK = re.compile(
    r"<(/?)(address|article|aside|blockquote|br|dd|div|dl|dt|figcaption|figure|footer|"
    r"form|h[1-6]|header|hr|li|main|nav|ol|p|pre|section|table|td|th|tr|ul)\b[^>]*>",
    re.IGNORECASE,
)
# Tags whose content is not text a reader sees; nh3 drops them with their content.
_HTML_DROP = {"script", "style", "title", "template", "head"}


@dataclass(frozen=True)
class Document:
    """What the index stores about one file (besides where it is)."""

    title: str
    body: str
    published_at: str


def kind_of(path: Path) -> Kind | None:
    return KINDS.get(path.suffix.lower())


def parse_document(path: Path, data: bytes, mtime: float) -> Document:
    """Title, plain text and ISO 8601 UTC date of one file; `mtime` is the date fallback."""
    text = data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    kind = kind_of(path) or "text"
    meta: dict[str, object] = {}
    if kind != "html":
        meta, text = _split_front_matter(text)
    if kind == "html":
        title, blocks = _html_title(text), _html_blocks(text)
    elif kind == "markdown":
        title, blocks = _markdown(text)
    else:
        title, blocks = None, _text_blocks(text)
    front_title = meta.get("title")
    if not title and isinstance(front_title, str) and front_title.strip():
        title = " ".join(front_title.split())
    published = _front_matter_date(meta) or datetime.fromtimestamp(mtime, tz=UTC)
    return Document(
        title=title or path.stem,
        body="\n\n".join(blocks),
        published_at=published.isoformat(timespec="seconds"),
    )


def _split_front_matter(text: str) -> tuple[dict[str, object], str]:
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    rest = text[match.end() :]
    try:
        loaded = yaml.safe_load(match.group(1) or "")
    except (yaml.YAMLError, ValueError):  # ValueError: a date like 2024-13-45
        return {}, rest
    if not isinstance(loaded, dict):
        return {}, rest
    return {str(key): value for key, value in loaded.items()}, rest


def _front_matter_date(meta: dict[str, object]) -> datetime | None:
    for key in _DATE_KEYS:
        value = meta.get(key)
        if isinstance(value, datetime):
            moment = value
        elif isinstance(value, date):
            moment = datetime(value.year, value.month, value.day)
        elif isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value.strip())
            except ValueError:
                continue
        else:
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.astimezone(UTC)
    return None


def _text_blocks(text: str) -> list[str]:
    return [block.strip() for block in _BLANK_LINES.split(text) if block.strip()]


def _markdown(text: str) -> tuple[str | None, list[str]]:
    """The first heading and the blocks of a Markdown text, markup removed."""
    title: str | None = None
    blocks: list[str] = []
    paragraph: list[str] = []
    fence: str | None = None
    code: list[str] = []

    def flush() -> None:
        if paragraph:
            blocks.append(_inline(" ".join(paragraph)))
            paragraph.clear()

    for line in text.split("\n"):
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                blocks.append("\n".join(code).strip())
                fence = None
            else:
                code.append(line)
            continue
        heading = _ATX.match(line)
        if (opening := _FENCE.match(line)) is not None:
            flush()
            fence, code = opening.group(1), []
        elif not line.strip() or _REF_DEF.match(line) or _TABLE_RULE.match(line):
            flush()
        elif paragraph and _SETEXT.match(line):
            text_of_heading = _inline(" ".join(paragraph))
            paragraph.clear()
            title = title or text_of_heading
            blocks.append(text_of_heading)
        elif _RULE.match(line):
            flush()
        elif heading is not None:
            flush()
            text_of_heading = _inline(heading.group(1) or "")
            title = title or text_of_heading
            blocks.append(text_of_heading)
        else:
            line = _QUOTE.sub("", line)
            if _LIST_ITEM.match(line) or line.lstrip().startswith("|"):
                flush()  # every list item and table row is a block of its own
                line = _LIST_ITEM.sub("", line).replace("|", " ")
            paragraph.append(line.strip())
    flush()
    if fence is not None:
        blocks.append("\n".join(code).strip())
    return title, [block for block in blocks if block]


def _inline(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _INLINE_TAG.sub("", text)
    text = _CODE_SPAN.sub(r"\2", text)
    text = _STRONG.sub(r"\2", text)
    text = _STAR_EM.sub(r"\1", text)
    text = _UNDERSCORE_EM.sub(r"\1", text)
    text = _STRIKE.sub(r"\1", text)
    return " ".join(html.unescape(text).split())


def _html_text(fragment: str) -> str:
    cleaned = nh3.clean(fragment, tags=set(), clean_content_tags=_HTML_DROP)
    return html.unescape(cleaned)


def _html_title(text: str) -> str | None:
    for pattern in (_HTML_TITLE, _HTML_H1):
        match = pattern.search(text)
        if match:
            title = " ".join(_html_text(match.group(1)).split())
            if title:
                return title
    return None


def _html_blocks(text: str) -> list[str]:
    def separate(match: re.Match[str]) -> str:
        gap = " " if match.group(2).lower() in {"td", "th"} else "\n\n"
        return gap + match.group(0)

    plain = _html_text(_HTML_BREAK.sub(separate, text))
    return [" ".join(block.split()) for block in _BLANK_LINES.split(plain) if block.strip()]
