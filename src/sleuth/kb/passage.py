"""Choosing the snippet: the passage of a section that best answers the query.

A passage is one to three consecutive whole sentences of one block (paragraph,
list item, code block) of the section's plain text, at most `MAX_CHARS` long; a
single sentence longer than that is a passage on its own, never cut. Headings are
not in the text (they are the result's title), so a heading never stands in for
the paragraph under it.

The best passage covers the most of the query (each distinct term found counts its
length, so particles and overlapping short words weigh little; in code, half of
that, so prose that answers beats an example that merely mentions the words; a
term of letters or digits is found where a word starts, so `os` is not found in
"macOS" nor `use` in "because", and a stem in the words it starts; in code, a term
the section's title holds is not looked for: an item asked by its name
(`SplitWhitespace`) is shown by its description, not by the declaration that
repeats the name, `pub struct SplitWhitespace<'a> { /* private fields */ }`), then
starts with a matching sentence, then fits the limit, then has the most term
occurrences, then is the longest (more context), then comes first (prose before
code). With no term found, the opening passage of the prose is used (of the code,
when the section has no prose), passing over blocks that are labels (a few words
that end no sentence: Node.js's "Added in: v0.3.3", Python's `set <= other`) when
another block follows: the entry's first sentence says what it is.

A passage that is a label (a table's `dense_rank () → bigint`, a definition's term)
is shown with the sentences of the block after it, which say what it names. A passage
that ends its block with a colon ("To rename a column:") promises what the
next block shows, most often a code example: as many of that block's lines (or
sentences) as fit in `MAX_CHARS` follow it, an ellipsis marking a cut; the passage's
first sentences give way only when not one line fits. A code block chosen on its
own is led by the sentence introducing it in the same way. The stored prose marks
where its code blocks stood (`sections.CODE_MARK`); in a section stored without the
marks, code is never joined to prose.

>>> best_passage("Intro here. Caches keep hot data. They expire.\\n\\nOther.", ("cache",))
'Caches keep hot data. They expire.'
>>> code = "ALTER TABLE t\\n  RENAME a TO b;"
>>> best_passage("To rename a column:\\n\\n\ufffc", ("renam", "column"), code)
'To rename a column: ALTER TABLE t RENAME a TO b;'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from sleuth.kb.sections import BLOCK_BREAK, CODE_MARK
from sleuth.text import sentence_spans

MAX_CHARS = 300
MAX_SENTENCES = 3
# How much a query term found in code counts against one found in prose.
CODE_FACTOR = 0.5

# What a passage ending with one introduces comes after it.
_COLONS = (":", "：")
# A block of fewer words than this that ends no sentence is a label (`_is_label`).
LABEL_WORDS = 6
_LABEL_MAX_CHARS = 120  # longer: not a label, without counting its words
# A sentence ends with one of these, maybe followed by closing quotes or brackets.
_STOPS = ".!?。！？"
_CLOSING = "\"'”’)]）」』"


@dataclass(frozen=True)
class _Sentence:
    start: int
    end: int
    found: frozenset[str]
    hits: int


def best_passage(body: str, terms: Sequence[str], code: str = "", title: str = "") -> str:
    """The best passage of the prose `body` and the `code` blocks for `terms`; the
    terms the section's `title` holds are not looked for in its code."""
    named = _found_in(title.lower(), terms) if title else []
    best_key: tuple[float, ...] | None = None
    best = (-1, 0, 0)  # the passage: its block's place in `blocks`, start and end
    order = 0
    blocks = _blocks(body, code)
    # Prose first, then code: of two passages as good, the prose's is chosen.
    chosen = [n for n, block in enumerate(blocks) if not block.code]
    chosen += [n for n, block in enumerate(blocks) if block.code]
    opening = True  # while the no-match passage may still come (`label` below)
    for place in chosen:
        text, factor = blocks[place].text, CODE_FACTOR if blocks[place].code else 1.0
        lowered = text.lower()
        present = _found_in(lowered, terms)
        if named and blocks[place].code:
            present = [term for term in present if term not in named]
        if not opening and not present:
            continue  # no term: only the opening can matter (the no-match fallback)
        sentences = _sentences(text, present)
        label = not present and _is_label(text)
        opening = opening and label  # past the opening, unless it was only a label
        for i, first in enumerate(sentences):
            # The windows of one to three sentences from this one, each the last grown
            # by a sentence: what they found and hit is summed as they grow.
            found: set[str] = set()
            hits = 0
            for j in range(i, min(i + MAX_SENTENCES, len(sentences))):
                end = sentences[j].end
                fits = end - first.start <= MAX_CHARS
                if j > i and not fits:
                    break
                found |= sentences[j].found
                hits += sentences[j].hits
                key = (
                    (
                        factor * sum(map(len, found)),
                        bool(first.found),
                        fits,
                        hits,
                        end - first.start,
                        -order,
                    )
                    if found
                    # No match: the opening, a label's block passed over when another
                    # follows ("Added in: v0.3.3" is not what an entry says).
                    else (0, False, not label, -order, fits, end - first.start)
                )
                if best_key is None or key > best_key:
                    best_key, best = key, (place, first.start, end)
            order += 1
    place, start, end = best
    if place < 0:
        return ""
    return _completed(blocks, place, start, end)


class _Block(NamedTuple):
    text: str  # its words, each run of spaces one space
    lines: tuple[str, ...]  # code: its lines, spaced as `text` is; prose: ()
    ordered: bool  # in its place among the others (see `_blocks`)

    @property
    def code(self) -> bool:
        return bool(self.lines)


def _blocks(body: str, code: str) -> list[_Block]:
    """The blocks of a section in the order of the document: each `CODE_MARK` of the
    prose stands for the next piece of the code. When the prose holds no marks for
    some of the code (a section stored before there were marks), that code comes
    after the prose and no block counts as in its place."""
    pieces = iter(BLOCK_BREAK.split(code) if code else ())
    blocks: list[_Block] = []
    for block in BLOCK_BREAK.split(body):
        if block and not block.strip(CODE_MARK):
            blocks += [_code_block(next(pieces, ""), True) for _ in block]
        else:
            blocks.append(_Block(" ".join(block.split()), (), True))
    unplaced = [_code_block(piece, False) for piece in pieces]
    if unplaced:
        blocks = [block._replace(ordered=False) for block in blocks] + unplaced
    return [block for block in blocks if block.text]


def _code_block(piece: str, ordered: bool) -> _Block:
    lines = tuple(" ".join(line.split()) for line in piece.splitlines() if line.strip())
    return _Block(" ".join(lines), lines, ordered)


def _completed(blocks: Sequence[_Block], place: int, start: int, end: int) -> str:
    """The passage `blocks[place].text[start:end]`, with what its colon introduces, or
    with what it names when it is a label (a table's `dense_rank () → bigint`, then
    "Returns the rank of the current row, without gaps; …"), or led by the sentence
    introducing it when it is code."""
    text = blocks[place].text
    ordered = blocks[place].ordered
    if ordered and end == len(text) and text.endswith(_COLONS) and place + 1 < len(blocks):
        spans = [span for span in sentence_spans(text) if span[0] >= start]
        return _joined(text, spans, blocks[place + 1]) or text[start:end]
    if ordered and start == 0 and end == len(text) and place + 1 < len(blocks):
        after = blocks[place + 1]
        named = not blocks[place].code and _is_label(text)
        if named and after.ordered and not after.code and _opens_with_a_sentence(after.text):
            return _joined(text, [(0, end)], after) or text
    if ordered and blocks[place].code and start == 0 and place > 0:
        before = blocks[place - 1]
        if not before.code and before.text.endswith(_COLONS):
            led = _joined(before.text, list(sentence_spans(before.text))[-1:], blocks[place])
            if led:
                return led
    return text[start:end]


def _joined(text: str, spans: Sequence[tuple[int, int]], after: _Block) -> str:
    """The sentences `spans` of `text` and the opening of `after` (lines of code,
    sentences of prose), at most `MAX_CHARS` in all, an ellipsis marking a cut: as
    many of the sentences as leave room for a part of `after` (they were chosen for the
    query). "" when not even the last sentence does."""
    parts = after.lines or [after.text[a:b] for a, b in sentence_spans(after.text)]
    for first in range(len(spans)):
        lead = text[spans[first][0] : spans[-1][1]]
        room = MAX_CHARS - len(lead)
        taken: list[str] = []
        for n, part in enumerate(parts):
            # Room for the part, and for an ellipsis unless it is the last.
            if room < len(part) + 1 + (len(" …") if n + 1 < len(parts) else 0):
                break
            room -= len(part) + 1
            taken.append(part)
        if taken:
            return " ".join([lead, *taken, *(["…"] if len(taken) < len(parts) else [])])
    return ""


def _sentences(text: str, terms: Sequence[str]) -> list[_Sentence]:
    """The sentences of a block, with the `terms` (those in the block) each holds."""
    out: list[_Sentence] = []
    for start, end in sentence_spans(text):
        lowered = text[start:end].lower()
        counts = {term: len(_pattern(term).findall(lowered)) for term in terms if term in lowered}
        found = frozenset(term for term, count in counts.items() if count)
        out.append(_Sentence(start, end, found, sum(counts.values())))
    return out


def _is_label(block: str) -> bool:
    """A block of a few words that ends no sentence: "Added in: v0.3.3", `set <= other`,
    "options {zlib options}"; not one that introduces the next ("Platform dependent:")."""
    if len(block) > _LABEL_MAX_CHARS:
        return False
    end = block.rstrip(_CLOSING)[-1:]
    return len(block.split()) < LABEL_WORDS and end not in _STOPS and end not in _COLONS


def _opens_with_a_sentence(block: str) -> bool:
    """Whether the block's first sentence ends with a stop: prose, not the next row's
    label ("Class 42 — Syntax Error or Access Rule Violation") or a colon's "pipe:"."""
    spans = sentence_spans(block)
    return bool(spans) and block[: spans[0][1]].rstrip(_CLOSING)[-1:] in _STOPS


def _found_in(lowered: str, terms: Sequence[str]) -> list[str]:
    return [term for term in terms if term in lowered and _pattern(term).search(lowered)]


@lru_cache(maxsize=1024)
def _pattern(term: str) -> re.Pattern[str]:
    """Where `term` occurs: anywhere for Chinese (no spaces between words) and
    punctuation, at a word's start for a term that starts with a letter or digit."""
    if term[:1].isascii() and term[:1].isalnum():
        return re.compile(r"(?<![a-z0-9])" + re.escape(term))
    return re.compile(re.escape(term))
