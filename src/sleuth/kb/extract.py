"""Turn one file's bytes into what the knowledge base stores: title, sections, date.

Markdown (.md, .markdown), plain text (.txt; a rendered man page by `sleuth.kb.manpage`),
HTML (.html, .htm, read by `sleuth.kb.html`: content only, real element ids), PDF
(.pdf, its text layer, `sleuth.kb.pdf`), Word (.docx, `sleuth.kb.word`) and man
pages' roff source (.1 to .9 and their kin, `sleuth.kb.roff`) are understood, each
also compressed (`.gz`, decompressed by the caller: `sleuth.kb.rows`); `README`,
`NEWS`, `FAQ`, `TODO` and `INSTALL` without a suffix (and Debian's `README.Debian`)
are plain text.
YAML front matter is read for the date (`published_at`, `published` or `date`), the
date of the last change (`modified_at`, `modified`, `updated`, `last_modified` or
`lastmod`; else the file's mtime), the `tags` and a fallback title, and never reaches
the text. The text is cut into sections at the
headings (Markdown ATX and setext headings, HTML h1-h6; see `sleuth.kb.sections`);
a plain-text file is one section. Within a section the blocks (paragraph, list item,
code block) are separated by a blank line, so passages never run across them.
Inline code keeps its content verbatim; elsewhere Markdown emphasis, links and HTML
tags are stripped. No I/O here: the indexer reads the file and passes bytes and
mtime in.

>>> doc = parse_document(Path("a.md"), b"# Caching\\n\\nKeep **hot** `__key__` [close](x).", 0.0)
>>> doc.title, doc.sections[0].heading, doc.sections[0].text, doc.published_at
('Caching', 'Caching', 'Keep hot __key__ close.', '1970-01-01T00:00:00+00:00')
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

import yaml

from sleuth.kb.html import read_page
from sleuth.kb.manpage import read_manpage
from sleuth.kb.pdf import read_pdf
from sleuth.kb.roff import is_roff, read_roff
from sleuth.kb.sections import (
    BLOCK_BREAK,
    Code,
    Heading,
    Section,
    join_lines,
    split_sections,
)
from sleuth.kb.sources import front_matter_tags
from sleuth.kb.word import read_docx

Kind = Literal["markdown", "text", "html", "pdf", "docx", "roff"]

KINDS: dict[str, Kind] = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".pdf": "pdf",
    ".docx": "docx",
}
#: Kinds whose files are not text themselves: read by their own parser, not decoded.
BINARY_KINDS: frozenset[Kind] = frozenset({"pdf", "docx"})
#: A man page's source is named for its section: `ls.1`, `tclsh.1tcl`, `ssl.7ssl`,
#: `Tcl_Eval.3`, `glob.n` (Tcl's); not archives and videos named alike (`.7z`, `.3gp`).
_MAN_SECTION = re.compile(r"\.(?!7z$|3gp$|3g2$)(?:[1-9][a-z]{0,6}|n)")
#: Compressed as Debian installs man pages and long documents (`README.md.gz`).
GZIP_SUFFIX = ".gz"
#: Plain-text documents named by convention, without a suffix (`README`, `NEWS`, and
#: Debian's `README.Debian`, `NEWS.Debian.gz`); not `copyright` or changelogs, which are
#: in every package's folder and answer nothing a person asks of its documentation.
_TEXT_NAMES = re.compile(r"(?:README|NEWS|FAQ|TODO|INSTALL)(?:\.(?:[A-Z][A-Za-z]*|source))?")
# Front matter keys for the publication date, most specific first.
_DATE_KEYS = ("published_at", "published", "date")
# Front matter keys for the date of the last change (Hugo's `lastmod` among them).
_MODIFIED_KEYS = ("modified_at", "modified", "updated_at", "updated", "last_modified", "lastmod")

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_BOM = "\ufeff".encode()

# Markdown, line level.
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)+\|?[ \t]*$")
_REF_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:[ \t]*\S+.*$")
_QUOTE = re.compile(r"^[ \t]*(?:>[ \t]?)+")
_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+")
_INDENTED = re.compile(r"^(?: {4}|\t)")
# An explicit id after a heading's text: `## Install {#setup}` (Pandoc, kramdown, MkDocs).
_HEADING_ID = re.compile(r"[ \t]*\{#([^\s{}]+)[^{}]*\}$")

# Markdown, inline. Code spans and backslash escapes are set aside first (as
# placeholders), so nothing below touches them.
_PROTECTED = re.compile(r"\\([!-/:-@\[-`{-~])|(?<!`)(`+)(?!`)(.+?)(?<!`)\2(?!`)")
_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_INLINE_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]*)(?:\s[^<>]*)?/?>")
# Only HTML elements are tags: `Option<T>` or `SLEUTH_<KEY>` in prose are text.
_HTML_ELEMENTS = frozenset(
    {
        "a", "abbr", "b", "bdi", "bdo", "big", "br", "center", "cite", "code", "data", "del",
        "details", "dfn", "div", "em", "font", "i", "img", "input", "ins", "kbd", "mark", "p",
        "picture", "q", "rp", "rt", "ruby", "s", "samp", "small", "source", "span", "strike",
        "strong", "sub", "summary", "sup", "time", "tt", "u", "var", "video", "wbr",
    }
)  # fmt: skip
_STAR_STRONG = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_STAR_EM = re.compile(r"\*(?=[^\s*])(.+?)(?<=[^\s*])\*")
# Underscores only emphasise at word edges: snake_case and FOO__BAR stay as they are.
_UNDERSCORE_STRONG = re.compile(r"(?<!\w)__(?=[^\s_])(.+?)(?<=[^\s_])__(?!\w)")
_UNDERSCORE_EM = re.compile(r"(?<!\w)_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)")
_STRIKE = re.compile(r"~~(.+?)~~")

Items = list[Heading | str]


@dataclass(frozen=True)
class Document:
    """What the index stores about one file (besides where it is)."""

    title: str
    sections: tuple[Section, ...]
    published_at: str
    modified_at: str = ""
    tags: tuple[str, ...] = ()

    @property
    def body(self) -> str:
        """The whole plain text, headings included, blocks separated by a blank line."""
        blocks = [
            block
            for section in self.sections
            for block in (*section.above, section.heading or "", *section.blocks)
            if block
        ]
        return "\n\n".join(blocks)


def kind_of(path: Path) -> Kind | None:
    """The kind of file `path` names (a `.gz` one: the kind of the file it holds)."""
    name = path.name.removesuffix(GZIP_SUFFIX)
    suffix = Path(name).suffix.lower()
    if _MAN_SECTION.fullmatch(suffix):
        return "roff"
    return KINDS.get(suffix) or ("text" if _TEXT_NAMES.fullmatch(name) else None)


def parse_document(path: Path, data: bytes, mtime: float, *, text: str | None = None) -> Document:
    """Title, sections and ISO 8601 UTC date of one file; `mtime` is the date fallback.
    `text` is `data` decoded as UTF-8 (a byte order mark dropped) when the caller has
    decoded it already (`rows.decoded`): it is then not decoded again, and an HTML
    page's bytes go to the parser as they are. Raises Unreadable for a PDF or Word
    document that cannot be read."""
    kind = kind_of(path) or "text"
    meta: dict[str, object] = {}
    title: str | None
    if kind in BINARY_KINDS:
        title, items = read_pdf(data) if kind == "pdf" else read_docx(data)
        return _document(path, title, items, meta, mtime)
    if kind == "html":
        title, items = read_page(_html_source(data, text))
        return _document(path, title, items, meta, mtime)
    meta, text = split_front_matter(_normalized(data, text))
    if kind == "markdown":
        items = _markdown(text)
        title = next((item.text for item in items if isinstance(item, Heading)), None)
    elif kind == "roff" and is_roff(text):
        title, items = read_roff(text)
    else:
        title, items = read_manpage(text) or (None, list(_text_blocks(text)))
    return _document(path, title, items, meta, mtime)


def _normalized(data: bytes, text: str | None) -> str:
    """The file's text with line feeds only (invalid UTF-8 replaced)."""
    if text is None:
        text = data.decode("utf-8-sig", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _html_source(data: bytes, text: str | None) -> str | bytes:
    """What the HTML parser reads. The parser reads UTF-8 bytes, and given a `str` it
    encodes it first: when `data` is valid UTF-8 (`text` was decoded from it) and holds
    no carriage return, its own bytes (without the byte order mark) are exactly what the
    normalised text encodes to, so the decode, the replacements and the encode are
    skipped (2 % of the instructions of indexing the development corpus)."""
    if text is None or b"\r" in data:
        return _normalized(data, text)
    return data[len(_BOM) :] if data.startswith(_BOM) else data


def _document(
    path: Path, title: str | None, items: Items, meta: dict[str, object], mtime: float
) -> Document:
    front_title = meta.get("title")
    if not title and isinstance(front_title, str) and front_title.strip():
        title = " ".join(front_title.split())
    changed = datetime.fromtimestamp(mtime, tz=UTC)
    published = _front_matter_date(meta, _DATE_KEYS) or changed
    modified = _front_matter_date(meta, _MODIFIED_KEYS) or changed
    return Document(
        title=title or Path(path.name.removesuffix(GZIP_SUFFIX)).stem,
        sections=split_sections(items),
        published_at=published.isoformat(timespec="seconds"),
        modified_at=modified.isoformat(timespec="seconds"),
        tags=front_matter_tags(meta.get("tags")),
    )


def split_front_matter(text: str) -> tuple[dict[str, object], str]:
    """A Markdown file's YAML front matter (empty when it has none or it does not
    parse) and the text after it."""
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


def _front_matter_date(meta: dict[str, object], keys: tuple[str, ...]) -> datetime | None:
    for key in keys:
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
    return [block.strip() for block in BLOCK_BREAK.split(text) if block.strip()]


def _markdown(text: str) -> Items:
    """The headings and blocks of a Markdown text, in order, markup removed."""
    items: Items = []
    paragraph: list[str] = []
    fence: str | None = None
    code: list[str] = []
    indented = False  # inside an indented code block (then `code` holds its lines)
    in_list = False  # indented lines after a list item continue it, they are not code
    after_blank = True

    def flush() -> None:
        if paragraph:
            items.append(_inline(join_lines(paragraph)))
            paragraph.clear()

    for line in text.split("\n"):
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                items.append(Code("\n".join(code).strip()))
                fence = None
            else:
                code.append(line)
            continue
        if indented:
            if not line.strip() or _INDENTED.match(line):
                code.append(_INDENTED.sub("", line))
                continue
            items.append(Code("\n".join(code).strip()))
            indented = False
        heading = _ATX.match(line)
        if line.strip() and after_blank and not line[0].isspace() and not _LIST_ITEM.match(line):
            in_list = False
        after_blank = not line.strip()
        if (opening := _FENCE.match(line)) is not None:
            flush()
            fence, code = opening.group(1), []
        elif not line.strip() or _REF_DEF.match(line) or _TABLE_RULE.match(line):
            flush()
        elif not paragraph and not in_list and _INDENTED.match(line):
            indented, code = True, [_INDENTED.sub("", line)]
        elif paragraph and _SETEXT.match(line):
            items.append(_heading(join_lines(paragraph)))
            paragraph.clear()
        elif _RULE.match(line):
            flush()
        elif heading is not None:
            flush()
            items.append(_heading(heading.group(1) or ""))
        else:
            line = _QUOTE.sub("", line)
            if _LIST_ITEM.match(line) or line.lstrip().startswith("|"):
                flush()  # every list item and table row is a block of its own
                in_list = in_list or _LIST_ITEM.match(line) is not None
                line = _LIST_ITEM.sub("", line).replace("|", " ")
            paragraph.append(line.strip())
    flush()
    if fence is not None or indented:
        items.append(Code("\n".join(code).strip()))
    return [item for item in items if item]


def _heading(source: str) -> Heading | str:
    """A Markdown heading's text and explicit id; an empty heading is no heading."""
    explicit = _HEADING_ID.search(source)
    if explicit is not None:
        source = source[: explicit.start()]
    text = _inline(source)
    if not text:
        return ""
    return Heading(text, explicit.group(1) if explicit is not None else None)


def _inline(text: str) -> str:
    """Plain text of a Markdown paragraph: markup gone, code spans verbatim."""
    kept: list[str] = []

    def set_aside(match: re.Match[str]) -> str:
        escaped, code = match.group(1), match.group(3)
        if escaped is None and len(code) > 2 and code[0] == code[-1] == " " and code.strip():
            code = code[1:-1]  # CommonMark: one space of padding on each side is dropped
        kept.append(escaped if escaped is not None else code)
        return f"\ue000{len(kept) - 1}\ue001"

    text = _PROTECTED.sub(set_aside, text.replace("\ue000", "").replace("\ue001", ""))
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _COMMENT.sub("", text)
    text = _INLINE_TAG.sub(_drop_html_element, text)
    for pattern in (_STAR_STRONG, _UNDERSCORE_STRONG, _STAR_EM, _UNDERSCORE_EM, _STRIKE):
        text = pattern.sub(r"\1", text)
    text = " ".join(html.unescape(text).split())
    return _PLACEHOLDER.sub(lambda match: kept[int(match.group(1))], text)


def _drop_html_element(match: re.Match[str]) -> str:
    return "" if match.group(1).lower() in _HTML_ELEMENTS else match.group(0)
