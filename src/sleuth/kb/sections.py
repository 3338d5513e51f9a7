"""Cutting a document into sections at its headings, with the anchors that link to them.

The extractor hands over a document as a flat run of items: plain-text blocks and
`Heading`s. Each heading starts a section that runs to the next heading of any
level; text before the first heading is a section with no heading and no anchor.
A heading with no text under it (a chapter heading directly followed by a
sub-heading) is not a section of its own: it is folded into the next section, whose
`above` keeps it so its words stay searchable. Only a document with no text at all
keeps an empty section, so it can still be found by its title.

Anchors follow GitHub: the heading lower-cased, characters other than letters,
digits, marks, spaces, `-` and `_` dropped (Chinese is kept), spaces turned into
hyphens, and `-1`, `-2`… added to repeats. An explicit id (`{#id}` after a Markdown
heading, `id="…"` on an HTML heading) wins. Long sections are indexed in chunks
(`Section.chunks`), cut between blocks.

>>> [s.anchor for s in split_sections(["Intro.", Heading("Set up"), "Text.", Heading("Set up")])]
[None, 'set-up', 'set-up-1']
>>> slug("本地知识库如何支持中文检索？")
'本地知识库如何支持中文检索'
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Target size of an indexed chunk of a long section, in characters.
CHUNK_CHARS = 1500
# Stands in the stored prose where a code block was, one for each of its blank-line
# separated pieces (`Chunk.stored`): the snippet can then show the example a sentence
# ending in a colon introduces. The tokenizers read no term from it.
CODE_MARK = "\ufffc"
# A heading's number: "8.3.", "E.21.3.2.1.", "Chapter 31.", "Appendix M.", "F.38.".
_NUMBERING = re.compile(
    r"(?:^|(?<=\s))(?:(?:Chapter|Appendix|Part|Section)\s+)?"
    r"(?:[A-Z]|\d+)(?:\.\d+)*\.(?=\s)"
)
#: What separates the blocks of a text and of a stored field (a code block may hold
#: some itself: it counts one `CODE_MARK` for each piece they cut it into).
BLOCK_BREAK = re.compile(r"\n\s*\n")
# Chinese characters and full-width punctuation, between which a line break is no space.
_CJK_WIDE = re.compile("[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass(frozen=True)
class Heading:
    """A heading's plain text and, when the source gives one, its explicit id. With
    `slug` false and no id (an HTML heading the page gives no id), the section gets no
    anchor rather than a made-up one."""

    text: str
    id: str | None = None
    slug: bool = True


class Code(str):
    """A block of source code (fenced, indented or `<pre>`), kept apart from prose: it is
    indexed with a lower weight, and shown after the sentence that introduces it or
    when no prose answers."""

    __slots__ = ()


@dataclass(frozen=True)
class Chunk:
    """What one row of the index holds: prose and code, blocks separated by a blank line;
    `marked`, when there is code, the prose with a block of `CODE_MARK`s where each code
    block stood."""

    text: str
    code: str
    marked: str = ""

    @property
    def stored(self) -> str:
        """The prose as stored: `marked`, or `text` when no code marks a place in it."""
        return self.marked or self.text


@dataclass(frozen=True)
class Section:
    """A heading and the blocks under it, up to the next heading."""

    heading: str | None  # None: the text before the first heading
    anchor: str | None  # the URL fragment of the heading; None links to the file itself
    blocks: tuple[str, ...]  # prose, and `Code`
    above: tuple[str, ...] = ()  # headings with no text of their own, folded into this one

    @property
    def text(self) -> str:
        """The prose blocks."""
        return _chunk(self.blocks).text

    @property
    def code(self) -> str:
        """The code blocks."""
        return _chunk(self.blocks).code

    def chunks(self, size: int = CHUNK_CHARS) -> list[Chunk]:
        """The section in about equal pieces of about `size` characters at most, cut
        between blocks: each block goes to the piece its middle falls in. A block is
        never cut, and a short section is one piece."""
        total = sum(len(block) + 2 for block in self.blocks)
        count = max(1, math.ceil(total / size))
        if count == 1:
            return [_chunk(self.blocks)]  # most sections: no block to place
        pieces: list[list[str]] = [[] for _ in range(count)]
        offset = 0
        for block in self.blocks:
            pieces[min(count - 1, int((offset + len(block) / 2) * count / total))].append(block)
            offset += len(block) + 2
        return [_chunk(piece) for piece in pieces if piece] or [Chunk("", "")]


def split_sections(items: Iterable[Heading | str]) -> tuple[Section, ...]:
    """Sections of a document given as blocks and headings in reading order."""
    slugs = _Slugger()
    sections: list[Section] = []
    above: list[str] = []  # headings with no text yet, waiting for a section
    heading: str | None = None
    anchor: str | None = None
    blocks: list[str] = []

    def close() -> None:
        if blocks:
            sections.append(Section(heading, anchor, tuple(blocks), tuple(above)))
            above.clear()
        elif heading is not None:
            above.append(heading)

    anchors: dict[int, str | None] = {}  # a heading given again resumes its section
    for item in items:
        if isinstance(item, Heading):
            close()
            if id(item) not in anchors:
                anchors[id(item)] = slugs.anchor(item)
            heading, anchor, blocks = item.text, anchors[id(item)], []
        elif item:
            blocks.append(item)
    close()
    if above:  # headings after the last text (or a document of headings only)
        sections.append(Section(above[-1], anchor, (), tuple(above[:-1])))
    return tuple(sections) or (Section(None, None, ()),)


def _chunk(blocks: Sequence[str]) -> Chunk:
    prose = [block for block in blocks if not isinstance(block, Code)]
    code = [block for block in blocks if isinstance(block, Code)]
    if not code:
        return Chunk("\n\n".join(prose), "")
    body = [
        CODE_MARK * len(BLOCK_BREAK.split(block)) if isinstance(block, Code) else block
        for block in blocks
    ]
    return Chunk("\n\n".join(prose), "\n\n".join(code), "\n\n".join(body))


def prose(body: str) -> str:
    """A stored `Chunk.stored` without the `CODE_MARK` blocks: the prose alone, as `text`.

    >>> prose("To install:\\n\\n\ufffc\\n\\nDone.")
    'To install:\\n\\nDone.'
    """
    if CODE_MARK not in body:
        return body
    return "\n\n".join(block for block in body.split("\n\n") if block.strip(CODE_MARK))


def join_lines(lines: Sequence[str]) -> str:
    """A paragraph's lines as one: with a space, but none between two Chinese characters."""
    joined = lines[0]
    for line in lines[1:]:
        joined += "" if _CJK_WIDE.match(joined[-1:]) and _CJK_WIDE.match(line) else " "
        joined += line
    return joined


def unnumbered(headings: str) -> str:
    """Headings without their numbering ("8.3. Character Types", "Chapter 31.",
    "Appendix M.", "E.21.3.2."): numbers that place a heading in a book say nothing of
    its subject, and matched the numbers of questions ("at 14:05" found "14.4.")."""
    return _NUMBERING.sub(" ", headings)


def slug(text: str) -> str:
    """GitHub's anchor for a heading's text (without the numbering of repeats)."""
    kept = (
        char for char in text.lower() if char in " -_" or unicodedata.category(char)[0] in "LNM"
    )
    return "".join(kept).replace(" ", "-")


class _Slugger:
    """Anchors for the headings of one document, repeats numbered as GitHub does."""

    def __init__(self) -> None:
        self._seen: dict[str, int] = {}

    def anchor(self, heading: Heading) -> str | None:
        if heading.id:
            self._seen.setdefault(heading.id, 0)
            return heading.id
        if not heading.slug:
            return None
        base = slug(heading.text)
        if not base:
            return None
        result = base
        while result in self._seen:
            self._seen[base] += 1
            result = f"{base}-{self._seen[base]}"
        self._seen[result] = 0
        return result
